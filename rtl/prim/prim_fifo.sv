// Synchronous first-word-fall-through FIFO on a RAM whose registered read
// port is the output register (maps onto block or distributed RAM).
// Valid/ready on both sides (AXI-Stream rules); count_o is the number of
// entries held, output register included (at most Depth + 1), from a
// register of its own (push - pop a cycle), so a user's compare starts at a
// register.
// Latency: an item written into an empty FIFO is visible 2 cycles later.
// Throughput: one write and one read per cycle.
`default_nettype none

module prim_fifo #(
  parameter int unsigned Width = 32,
  parameter int unsigned Depth = 16,
  localparam int unsigned CountWidth = $clog2(Depth + 2)
) (
  input  logic                  clk_i,
  input  logic                  rst_i,
  input  logic                  in_valid_i,
  output logic                  in_ready_o,
  input  logic [Width-1:0]      in_data_i,
  output logic                  out_valid_o,
  input  logic                  out_ready_i,
  output logic [Width-1:0]      out_data_o,
  output logic [CountWidth-1:0] count_o
);

  localparam int unsigned AddrWidth = $clog2(Depth);

  logic [AddrWidth-1:0] wptr_q, wptr_d, rptr_q, rptr_d;
  logic [CountWidth-1:0] ram_count_q, ram_count_d;  // entries in the RAM, not yet read out
  logic out_valid_q, out_valid_d;                   // the RAM read register holds an entry
  logic [CountWidth-1:0] count_q;                   // ram_count_q + out_valid_q
  logic push, pop, ram_re;

  assign in_ready_o = (32'(ram_count_q) < Depth);
  assign push = in_valid_i && in_ready_o;
  assign pop = out_valid_q && out_ready_i;
  assign ram_re = (ram_count_q != '0) && (!out_valid_q || pop);

  prim_ram_1r1w #(
    .Width(Width),
    .Depth(Depth)
  ) u_ram (
    .clk_i,
    .we_i   (push),
    .waddr_i(wptr_q),
    .wdata_i(in_data_i),
    .re_i   (ram_re),
    .rclr_i (1'b0),
    .raddr_i(rptr_q),
    .rdata_o(out_data_o)
  );

  always_comb begin
    wptr_d = push ? wptr_q + 1'b1 : wptr_q;
    rptr_d = ram_re ? rptr_q + 1'b1 : rptr_q;
    ram_count_d = ram_count_q + CountWidth'(push) - CountWidth'(ram_re);
    out_valid_d = ram_re || (out_valid_q && !pop);
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      wptr_q <= '0;
      rptr_q <= '0;
      ram_count_q <= '0;
      out_valid_q <= 1'b0;
      count_q <= '0;
    end else begin
      wptr_q <= wptr_d;
      rptr_q <= rptr_d;
      ram_count_q <= ram_count_d;
      out_valid_q <= out_valid_d;
      count_q <= count_q + CountWidth'(push) - CountWidth'(pop);
    end
  end

  assign out_valid_o = out_valid_q;
  assign count_o = count_q;

`ifndef SYNTHESIS
  initial begin
    if (Depth < 2 || (Depth & (Depth - 1)) != 0) $error("prim_fifo: Depth must be a power of two >= 2");
  end
  logic             stalled_q;
  logic [Width-1:0] held_q;
  always_ff @(posedge clk_i) begin
    stalled_q <= !rst_i && out_valid_o && !out_ready_i;
    held_q    <= out_data_o;
    if (!rst_i) begin
      assert (32'(ram_count_q) <= Depth) else $error("prim_fifo: overflow");
      assert (count_q == ram_count_q + CountWidth'(out_valid_q))
      else $error("prim_fifo: the count register differs from the RAM's entries and the output's");
      assert (!stalled_q || (out_valid_o && out_data_o == held_q))
      else $error("prim_fifo: output changed while stalled");
    end
  end
`endif

endmodule

`default_nettype wire
