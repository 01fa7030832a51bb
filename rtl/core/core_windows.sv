// Address-window check: is the byte range [addr, addr + bytes) inside one of
// the NumWindows windows the driver registered, with the permission the
// access needs (read, or write)? A window i allows the range when its
// permission bit is set and base_i <= addr and addr + bytes <= base_i + size_i
// (computed on 65 bits: a range or window that wraps the address space allows
// nothing). An empty range (bytes = 0) is refused: every range a descriptor
// names moves data.
// One check at a time: start_i takes the range; NumWindows + 1 cycles later
// done_o pulses with ok_o (windows are compared one per cycle, so the compare
// logic is one 65-bit comparator pair whatever NumWindows is). The window a
// cycle compares is picked and its end (base + size) added a cycle ahead,
// into registers, so that the pick, the 65-bit add and the compares are not
// one path: window i is read from the window registers in the cycle before
// it is compared (window 0 in every idle cycle, so in the start's), picked
// by a register of its own (pick_q, loaded with the next cycle's pick), so
// the window multiplexer's select is a register, not an increment.
`default_nettype none

module core_windows #(
  parameter int unsigned NumWindows = 8
) (
  input  logic                    clk_i,
  input  logic                    rst_i,
  input  logic [NumWindows*64-1:0] win_base_i,
  input  logic [NumWindows*64-1:0] win_size_i,
  input  logic [NumWindows-1:0]   win_read_i,
  input  logic [NumWindows-1:0]   win_write_i,
  input  logic                    start_i,
  input  logic [63:0]             addr_i,
  input  logic [63:0]             bytes_i,
  input  logic                    write_i,
  output logic                    busy_o,
  output logic                    done_o,
  output logic                    ok_o
);

  localparam int unsigned IW = $clog2(NumWindows + 1);

  logic          busy_q, busy_d, ok_q, ok_d, done_q, done_d, write_q;
  logic [IW-1:0] idx_q, idx_d;
  logic [64:0]   lo_q, hi_q;   // the range, hi exclusive, on 65 bits
  logic [IW-1:0] pick_q, pick_d; // the window the next cycle compares: 0 idle, idx + 1 busy
  logic [63:0]   base, size;
  logic          perm_r, perm_w, fits;
  logic [64:0]   base_q, end_q; // window idx_q: its base and base + size, on 65 bits
  logic          perm_r_q, perm_w_q;  // and its read and write permissions

  always_comb begin
    base   = '0;
    size   = '0;
    perm_r = 1'b0;
    perm_w = 1'b0;
    for (int unsigned i = 0; i < NumWindows; i++) begin
      if (pick_q == IW'(i)) begin
        base   = win_base_i[i*64 +: 64];
        size   = win_size_i[i*64 +: 64];
        perm_r = win_read_i[i];
        perm_w = win_write_i[i];
      end
    end
  end
  assign fits = (write_q ? perm_w_q : perm_r_q) && (lo_q >= base_q) && (hi_q <= end_q) &&
                (hi_q[64] == 1'b0) && (end_q <= 65'h1_0000_0000_0000_0000);

  always_comb begin
    busy_d = busy_q;
    idx_d  = idx_q;
    ok_d   = ok_q;
    done_d = 1'b0;
    if (start_i && !busy_q) begin
      busy_d = 1'b1;
      idx_d  = '0;
      ok_d   = 1'b0;
    end else if (busy_q) begin
      if (lo_q != hi_q && fits) ok_d = 1'b1;
      if (idx_q == IW'(NumWindows - 1)) begin
        busy_d = 1'b0;
        done_d = 1'b1;
      end
      idx_d = idx_q + 1'b1;
    end
    pick_d = busy_d ? idx_d + 1'b1 : '0;
  end

  assign busy_o = busy_q;
  assign done_o = done_q;
  assign ok_o   = ok_q;

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      busy_q <= 1'b0;
      pick_q <= '0;
      done_q <= 1'b0;
      ok_q   <= 1'b0;
    end else begin
      busy_q <= busy_d;
      pick_q <= pick_d;
      done_q <= done_d;
      ok_q   <= ok_d;
    end
    idx_q  <= idx_d;
    base_q   <= {1'b0, base};
    end_q    <= {1'b0, base} + {1'b0, size};
    perm_r_q <= perm_r;
    perm_w_q <= perm_w;
    if (start_i && !busy_q) begin
      lo_q    <= {1'b0, addr_i};
      hi_q    <= {1'b0, addr_i} + {1'b0, bytes_i};
      write_q <= write_i;
    end
  end

`ifndef SYNTHESIS
  initial if (NumWindows < 1) $error("core_windows: NumWindows must be >= 1");
  always_ff @(posedge clk_i) begin
    if (!rst_i) begin
      assert (pick_q == (busy_q ? idx_q + 1'b1 : '0))
      else $error("core_windows: pick_q differs from busy ? idx + 1 : 0");
    end
  end
`endif

endmodule

`default_nettype wire
