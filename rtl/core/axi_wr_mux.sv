// AXI4 write multiplexer: NumPorts write masters (AW/W/B, flattened vector
// ports, port i at [i*W +: W]) onto one AXI4 master port.
// AW: round-robin among the ports with AWVALID, one AW per grant; the granted
// request moves into an output register that holds it until
// m_axi_awready, and its port joins a FIFO of grants (GrantDepth entries;
// no AW is granted while it is full).
// W: forwarded with zero added latency from the port at the head of the grant
// FIFO (kept in a register) until its WLAST, so W beats follow the order of
// the granted AWs (they may reach the master port before their AW, which
// AXI allows). A port must present W beats only for bursts whose AW it has
// had accepted.
// B: routed by BID with zero added latency; port i must use AWID = i, so BID
// names the port. A BID naming no port is discarded (and asserted against).
// Latency: AW 1 cycle; W and B 0 cycles. Throughput: one AW, one W beat and
// one B per cycle.
`default_nettype none

module axi_wr_mux #(
  parameter int unsigned NumPorts   = 2,
  parameter int unsigned IdWidth    = 4,
  parameter int unsigned GrantDepth = 8
) (
  input  logic                        clk_i,
  input  logic                        rst_i,
  input  logic [NumPorts*IdWidth-1:0] s_awid_i,
  input  logic [NumPorts*64-1:0]      s_awaddr_i,
  input  logic [NumPorts*8-1:0]       s_awlen_i,
  input  logic [NumPorts*3-1:0]       s_awsize_i,
  input  logic [NumPorts*2-1:0]       s_awburst_i,
  input  logic [NumPorts-1:0]         s_awvalid_i,
  output logic [NumPorts-1:0]         s_awready_o,
  input  logic [NumPorts*512-1:0]     s_wdata_i,
  input  logic [NumPorts*64-1:0]      s_wstrb_i,
  input  logic [NumPorts-1:0]         s_wlast_i,
  input  logic [NumPorts-1:0]         s_wvalid_i,
  output logic [NumPorts-1:0]         s_wready_o,
  output logic [NumPorts*IdWidth-1:0] s_bid_o,
  output logic [NumPorts*2-1:0]       s_bresp_o,
  output logic [NumPorts-1:0]         s_bvalid_o,
  input  logic [NumPorts-1:0]         s_bready_i,
  output logic [IdWidth-1:0]          m_axi_awid,
  output logic [63:0]                 m_axi_awaddr,
  output logic [7:0]                  m_axi_awlen,
  output logic [2:0]                  m_axi_awsize,
  output logic [1:0]                  m_axi_awburst,
  output logic                        m_axi_awvalid,
  input  logic                        m_axi_awready,
  output logic [511:0]                m_axi_wdata,
  output logic [63:0]                 m_axi_wstrb,
  output logic                        m_axi_wlast,
  output logic                        m_axi_wvalid,
  input  logic                        m_axi_wready,
  input  logic [IdWidth-1:0]          m_axi_bid,
  input  logic [1:0]                  m_axi_bresp,
  input  logic                        m_axi_bvalid,
  output logic                        m_axi_bready
);

  localparam int unsigned PortWidth = (NumPorts > 1) ? $clog2(NumPorts) : 1;
  localparam int unsigned AwWidth   = IdWidth + 64 + 8 + 3 + 2;
  localparam int unsigned PtrWidth  = (GrantDepth > 1) ? $clog2(GrantDepth) : 1;
  localparam int unsigned CntWidth  = $clog2(GrantDepth + 1);

  function automatic logic [PtrWidth-1:0] next_ptr(input logic [PtrWidth-1:0] p);
    next_ptr = (32'(p) == GrantDepth - 1) ? '0 : p + 1'b1;
  endfunction

  logic [PortWidth-1:0] last_q, last_d;  // port granted last
  logic [PortWidth-1:0] grant;
  logic                 any_req, load;
  logic                 awvalid_q, awvalid_d;
  logic [AwWidth-1:0]   aw_q, aw_d;

  logic [PortWidth-1:0] gnt_mem [GrantDepth];
  logic [PtrWidth-1:0]  gnt_wptr_q, gnt_wptr_d, gnt_rptr_q, gnt_rptr_d;
  logic [CntWidth-1:0]  gnt_count_q, gnt_count_d;
  // The grant FIFO's head, kept in registers (a LUT-RAM read on the W path
  // would reach the writers' FIFOs through their WREADY).
  logic [PortWidth-1:0] head_q, head_d, w_port;
  logic                 head_valid_q, head_valid_d, w_active, w_end;

  // Round robin: the first requesting port after the last granted one, else
  // the first requesting port.
  prim_rr_pick #(.N(NumPorts)) u_pick (
    .req_i  (s_awvalid_i),
    .last_i (last_q),
    .any_o  (any_req),
    .grant_o(grant)
  );

  assign load = any_req && (!awvalid_q || m_axi_awready) && (32'(gnt_count_q) < GrantDepth);
  always_comb begin
    s_awready_o = '0;
    s_awready_o[grant] = load;
  end

  always_comb begin
    awvalid_d = load || (awvalid_q && !m_axi_awready);
    aw_d = aw_q;
    last_d = last_q;
    if (load) begin
      aw_d = {s_awid_i[grant*IdWidth +: IdWidth], s_awaddr_i[grant*64 +: 64], s_awlen_i[grant*8 +: 8],
              s_awsize_i[grant*3 +: 3], s_awburst_i[grant*2 +: 2]};
      last_d = grant;
    end
  end

  assign {m_axi_awid, m_axi_awaddr, m_axi_awlen, m_axi_awsize, m_axi_awburst} = aw_q;
  assign m_axi_awvalid = awvalid_q;

  // W from the port at the head of the grant FIFO.
  always_ff @(posedge clk_i) begin
    if (load) gnt_mem[gnt_wptr_q] <= grant;
  end
  assign w_port = head_q;
  assign w_active = head_valid_q;
  always_comb begin
    head_d = head_q;
    head_valid_d = head_valid_q;
    if (w_end) begin
      // The next grant: in the FIFO, or the one loaded in this cycle.
      head_valid_d = (32'(gnt_count_q) >= 2) || load;
      head_d = (32'(gnt_count_q) >= 2) ? gnt_mem[next_ptr(gnt_rptr_q)] : grant;
    end else if (!w_active && load) begin
      head_valid_d = 1'b1;
      head_d = grant;
    end
  end
  assign m_axi_wvalid = w_active && s_wvalid_i[w_port];
  assign m_axi_wdata = s_wdata_i[w_port*512 +: 512];
  assign m_axi_wstrb = s_wstrb_i[w_port*64 +: 64];
  assign m_axi_wlast = s_wlast_i[w_port];
  assign w_end = m_axi_wvalid && m_axi_wready && m_axi_wlast;
  always_comb begin
    s_wready_o = '0;
    s_wready_o[w_port] = w_active && m_axi_wready;
  end
  assign gnt_wptr_d = load ? next_ptr(gnt_wptr_q) : gnt_wptr_q;
  assign gnt_rptr_d = w_end ? next_ptr(gnt_rptr_q) : gnt_rptr_q;
  assign gnt_count_d = gnt_count_q + CntWidth'(load) - CntWidth'(w_end);

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      awvalid_q <= 1'b0;
      last_q <= '0;
      head_q <= '0;
      head_valid_q <= 1'b0;
      gnt_wptr_q <= '0;
      gnt_rptr_q <= '0;
      gnt_count_q <= '0;
    end else begin
      awvalid_q <= awvalid_d;
      last_q <= last_d;
      head_q <= head_d;
      head_valid_q <= head_valid_d;
      gnt_wptr_q <= gnt_wptr_d;
      gnt_rptr_q <= gnt_rptr_d;
      gnt_count_q <= gnt_count_d;
    end
  end

  always_ff @(posedge clk_i) begin
    aw_q <= aw_d;
  end

  // B: steer BVALID and take BREADY from the port BID names.
  always_comb begin
    m_axi_bready = 1'b1;
    for (int i = 0; i < NumPorts; i++) begin
      s_bvalid_o[i] = m_axi_bvalid && (32'(m_axi_bid) == i);
      if (32'(m_axi_bid) == i) m_axi_bready = s_bready_i[i];
    end
  end
  for (genvar i = 0; i < NumPorts; i++) begin : g_b
    assign s_bid_o[i*IdWidth +: IdWidth] = m_axi_bid;
    assign s_bresp_o[i*2 +: 2] = m_axi_bresp;
  end

`ifndef SYNTHESIS
  initial begin
    if (NumPorts < 1) $error("axi_wr_mux: NumPorts must be at least 1");
    if (IdWidth < 1 || IdWidth > 31 || NumPorts > (1 << IdWidth)) $error("axi_wr_mux: IdWidth cannot name every port");
    if (GrantDepth < 1) $error("axi_wr_mux: GrantDepth must be at least 1");
  end

  logic               aw_stalled_q, w_stalled_q;
  logic [AwWidth-1:0] aw_held_q;
  logic [576:0]       w_held_q;
  always_ff @(posedge clk_i) begin
    aw_stalled_q <= !rst_i && m_axi_awvalid && !m_axi_awready;
    aw_held_q <= aw_q;
    w_stalled_q <= !rst_i && m_axi_wvalid && !m_axi_wready;
    w_held_q <= {m_axi_wlast, m_axi_wstrb, m_axi_wdata};
    if (!rst_i) begin
      for (int i = 0; i < NumPorts; i++) begin
        if (s_awvalid_i[i]) begin
          assert (32'(s_awid_i[i*IdWidth +: IdWidth]) == i) else $error("axi_wr_mux: port %0d AWID is not %0d", i, i);
        end
      end
      if (m_axi_bvalid) begin
        assert (32'(m_axi_bid) < NumPorts) else $error("axi_wr_mux: BID %0d names no port", m_axi_bid);
      end
      assert (32'(gnt_count_q) <= GrantDepth) else $error("axi_wr_mux: grant FIFO overflow");
      assert (w_active == (gnt_count_q != '0)) else $error("axi_wr_mux: head valid out of step with the FIFO");
      assert (!w_active || w_port == gnt_mem[gnt_rptr_q]) else $error("axi_wr_mux: head out of step with the FIFO");
      assert (!aw_stalled_q || (m_axi_awvalid && aw_q == aw_held_q)) else $error("axi_wr_mux: AW dropped or changed while stalled");
      assert (!w_stalled_q || (m_axi_wvalid && {m_axi_wlast, m_axi_wstrb, m_axi_wdata} == w_held_q))
      else $error("axi_wr_mux: W dropped or changed while stalled");
    end
  end
`endif

endmodule

`default_nettype wire
