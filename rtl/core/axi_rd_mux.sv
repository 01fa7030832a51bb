// AXI4 read multiplexer: NumPorts read masters (AR/R, flattened vector ports,
// port i at [i*W +: W]) onto one AXI4 master port.
// AR: round-robin among the ports with ARVALID, one AR per grant; the granted
// request moves into an output register (s_arready_o pulses for it) that holds
// it until m_axi_arready.
// R: routed by RID with zero added latency; port i must use ARID = i (the
// shell gives each reader Id = its port index), so RID names the port. An RID
// naming no port is discarded (and asserted against). RDATA/RRESP/RLAST/RID
// are broadcast to every port; only RVALID is steered.
// Latency: AR 1 cycle; R 0 cycles. Throughput: one AR per cycle, one R beat
// per cycle.
`default_nettype none

module axi_rd_mux #(
  parameter int unsigned NumPorts = 2,
  parameter int unsigned IdWidth  = 4
) (
  input  logic                        clk_i,
  input  logic                        rst_i,
  input  logic [NumPorts*IdWidth-1:0] s_arid_i,
  input  logic [NumPorts*64-1:0]      s_araddr_i,
  input  logic [NumPorts*8-1:0]       s_arlen_i,
  input  logic [NumPorts*3-1:0]       s_arsize_i,
  input  logic [NumPorts*2-1:0]       s_arburst_i,
  input  logic [NumPorts-1:0]         s_arvalid_i,
  output logic [NumPorts-1:0]         s_arready_o,
  output logic [NumPorts*IdWidth-1:0] s_rid_o,
  output logic [NumPorts*512-1:0]     s_rdata_o,
  output logic [NumPorts*2-1:0]       s_rresp_o,
  output logic [NumPorts-1:0]         s_rlast_o,
  output logic [NumPorts-1:0]         s_rvalid_o,
  input  logic [NumPorts-1:0]         s_rready_i,
  output logic [IdWidth-1:0]          m_axi_arid,
  output logic [63:0]                 m_axi_araddr,
  output logic [7:0]                  m_axi_arlen,
  output logic [2:0]                  m_axi_arsize,
  output logic [1:0]                  m_axi_arburst,
  output logic                        m_axi_arvalid,
  input  logic                        m_axi_arready,
  input  logic [IdWidth-1:0]          m_axi_rid,
  input  logic [511:0]                m_axi_rdata,
  input  logic [1:0]                  m_axi_rresp,
  input  logic                        m_axi_rlast,
  input  logic                        m_axi_rvalid,
  output logic                        m_axi_rready
);

  localparam int unsigned PortWidth = (NumPorts > 1) ? $clog2(NumPorts) : 1;
  localparam int unsigned ArWidth   = IdWidth + 64 + 8 + 3 + 2;

  logic [PortWidth-1:0] last_q, last_d;  // port granted last
  logic [PortWidth-1:0] grant;
  logic                 any_req, load;
  logic                 arvalid_q, arvalid_d;
  logic [ArWidth-1:0]   ar_q, ar_d;

  // Round robin: the first requesting port after the last granted one, else
  // the first requesting port.
  prim_rr_pick #(.N(NumPorts)) u_pick (
    .req_i  (s_arvalid_i),
    .last_i (last_q),
    .any_o  (any_req),
    .grant_o(grant)
  );

  assign load = any_req && (!arvalid_q || m_axi_arready);
  always_comb begin
    s_arready_o = '0;
    s_arready_o[grant] = load;
  end

  always_comb begin
    arvalid_d = load || (arvalid_q && !m_axi_arready);
    ar_d = ar_q;
    last_d = last_q;
    if (load) begin
      ar_d = {s_arid_i[grant*IdWidth +: IdWidth], s_araddr_i[grant*64 +: 64], s_arlen_i[grant*8 +: 8],
              s_arsize_i[grant*3 +: 3], s_arburst_i[grant*2 +: 2]};
      last_d = grant;
    end
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      arvalid_q <= 1'b0;
      last_q <= '0;
    end else begin
      arvalid_q <= arvalid_d;
      last_q <= last_d;
    end
  end

  always_ff @(posedge clk_i) begin
    ar_q <= ar_d;
  end

  assign {m_axi_arid, m_axi_araddr, m_axi_arlen, m_axi_arsize, m_axi_arburst} = ar_q;
  assign m_axi_arvalid = arvalid_q;

  // R: steer RVALID and take RREADY from the port RID names.
  always_comb begin
    m_axi_rready = 1'b1;
    for (int i = 0; i < NumPorts; i++) begin
      s_rvalid_o[i] = m_axi_rvalid && (32'(m_axi_rid) == i);
      if (32'(m_axi_rid) == i) m_axi_rready = s_rready_i[i];
    end
  end
  for (genvar i = 0; i < NumPorts; i++) begin : g_r
    assign s_rid_o[i*IdWidth +: IdWidth] = m_axi_rid;
    assign s_rdata_o[i*512 +: 512] = m_axi_rdata;
    assign s_rresp_o[i*2 +: 2] = m_axi_rresp;
    assign s_rlast_o[i] = m_axi_rlast;
  end

`ifndef SYNTHESIS
  initial begin
    if (NumPorts < 1) $error("axi_rd_mux: NumPorts must be at least 1");
    if (IdWidth < 1 || IdWidth > 31 || NumPorts > (1 << IdWidth)) $error("axi_rd_mux: IdWidth cannot name every port");
  end

  logic               stalled_q;
  logic [ArWidth-1:0] held_q;
  always_ff @(posedge clk_i) begin
    stalled_q <= !rst_i && m_axi_arvalid && !m_axi_arready;
    held_q <= ar_q;
    if (!rst_i) begin
      for (int i = 0; i < NumPorts; i++) begin
        if (s_arvalid_i[i]) begin
          assert (32'(s_arid_i[i*IdWidth +: IdWidth]) == i) else $error("axi_rd_mux: port %0d ARID is not %0d", i, i);
        end
      end
      if (m_axi_rvalid) begin
        assert (32'(m_axi_rid) < NumPorts) else $error("axi_rd_mux: RID %0d names no port", m_axi_rid);
      end
      assert (!stalled_q || (m_axi_arvalid && ar_q == held_q)) else $error("axi_rd_mux: AR dropped or changed while stalled");
    end
  end
`endif

endmodule

`default_nettype wire
