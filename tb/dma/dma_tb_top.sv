// Test top for the DMA movers: reader 0 (OutWords = 4, WordAligned: commands
// at any 4-byte address, as farnn_core's per-step reader; ID 0), reader 1
// (OutWords = 16, ID 1), writer 0 (ID 0) and writer 1 (InWords = 4, ID 1), through
// axi_rd_mux and axi_wr_mux onto one AXI4 master port (served by the C++
// memory model). Each mover's command, data, abort, idle and error ports are
// brought out with an r0_/r1_/w0_/w1_ prefix, and each mover's AR/AW
// handshake with its mux and WVALID (so the testbench can tell when a mover
// still has a request on its way, and check the arbitration). Latency and throughput are the movers' and
// muxes' own; the top adds none.
`default_nettype none

module dma_tb_top #(
  parameter int unsigned RdFifoBeats      = 32,
  parameter int unsigned RdMaxOutstanding = 8,
  parameter int unsigned WrFifoBeats      = 32,
  parameter int unsigned WrMaxOutstanding = 8,
  parameter int unsigned MaxBurstBeats    = 64
) (
  input  logic         clk_i,
  input  logic         rst_i,
  // reader 0
  input  logic         r0_abort_i,
  output logic         r0_idle_o,
  input  logic         r0_cmd_valid_i,
  output logic         r0_cmd_ready_o,
  input  logic [63:0]  r0_cmd_addr_i,
  input  logic [31:0]  r0_cmd_bytes_i,
  input  logic         r0_cmd_last_i,
  output logic         r0_out_valid_o,
  input  logic         r0_out_ready_i,
  output logic [127:0] r0_out_data_o,
  output logic         r0_out_last_o,
  output logic [3:0]   r0_out_lo_o,
  output logic [3:0]   r0_out_hi_o,
  output logic         r0_err_o,
  output logic [63:0]  r0_err_addr_o,
  output logic [1:0]   r0_err_resp_o,
  // reader 1
  input  logic         r1_abort_i,
  output logic         r1_idle_o,
  input  logic         r1_cmd_valid_i,
  output logic         r1_cmd_ready_o,
  input  logic [63:0]  r1_cmd_addr_i,
  input  logic [31:0]  r1_cmd_bytes_i,
  input  logic         r1_cmd_last_i,
  output logic         r1_out_valid_o,
  input  logic         r1_out_ready_i,
  output logic [511:0] r1_out_data_o,
  output logic         r1_out_last_o,
  output logic [3:0]   r1_out_lo_o,
  output logic [3:0]   r1_out_hi_o,
  output logic         r1_err_o,
  output logic [63:0]  r1_err_addr_o,
  output logic [1:0]   r1_err_resp_o,
  // writer 0
  input  logic         w0_abort_i,
  output logic         w0_idle_o,
  input  logic         w0_cmd_valid_i,
  output logic         w0_cmd_ready_o,
  input  logic [63:0]  w0_cmd_addr_i,
  input  logic [31:0]  w0_cmd_bytes_i,
  input  logic         w0_cmd_wide_i,
  input  logic         w0_in_valid_i,
  output logic         w0_in_ready_o,
  input  logic [31:0]  w0_in_data_i,
  output logic         w0_done_o,
  output logic         w0_err_o,
  output logic [63:0]  w0_err_addr_o,
  output logic [1:0]   w0_err_resp_o,
  // writer 1
  input  logic         w1_abort_i,
  output logic         w1_idle_o,
  input  logic         w1_cmd_valid_i,
  output logic         w1_cmd_ready_o,
  input  logic [63:0]  w1_cmd_addr_i,
  input  logic [31:0]  w1_cmd_bytes_i,
  input  logic         w1_cmd_wide_i,
  input  logic         w1_in_valid_i,
  output logic         w1_in_ready_o,
  input  logic [127:0] w1_in_data_i,
  output logic         w1_done_o,
  output logic         w1_err_o,
  output logic [63:0]  w1_err_addr_o,
  output logic [1:0]   w1_err_resp_o,
  // requests on their way to the muxes: bit i = reader i / writer i
  output logic [1:0]   rd_arvalid_o,
  output logic [1:0]   rd_arready_o,
  output logic [1:0]   wr_awvalid_o,
  output logic [1:0]   wr_awready_o,
  output logic [1:0]   wr_wvalid_o,
  // the one AXI4 master port
  output logic [3:0]   m_axi_arid,
  output logic [63:0]  m_axi_araddr,
  output logic [7:0]   m_axi_arlen,
  output logic [2:0]   m_axi_arsize,
  output logic [1:0]   m_axi_arburst,
  output logic         m_axi_arvalid,
  input  logic         m_axi_arready,
  input  logic [3:0]   m_axi_rid,
  input  logic [511:0] m_axi_rdata,
  input  logic [1:0]   m_axi_rresp,
  input  logic         m_axi_rlast,
  input  logic         m_axi_rvalid,
  output logic         m_axi_rready,
  output logic [3:0]   m_axi_awid,
  output logic [63:0]  m_axi_awaddr,
  output logic [7:0]   m_axi_awlen,
  output logic [2:0]   m_axi_awsize,
  output logic [1:0]   m_axi_awburst,
  output logic         m_axi_awvalid,
  input  logic         m_axi_awready,
  output logic [511:0] m_axi_wdata,
  output logic [63:0]  m_axi_wstrb,
  output logic         m_axi_wlast,
  output logic         m_axi_wvalid,
  input  logic         m_axi_wready,
  input  logic [3:0]   m_axi_bid,
  input  logic [1:0]   m_axi_bresp,
  input  logic         m_axi_bvalid,
  output logic         m_axi_bready
);

  localparam int unsigned IdWidth = 4;

  // Reader and writer sides of the muxes, port i at [i*W +: W].
  logic [2*IdWidth-1:0] ar_id, r_id, aw_id, b_id;
  logic [2*64-1:0]      ar_addr, aw_addr, w_strb;
  logic [2*8-1:0]       ar_len, aw_len;
  logic [2*3-1:0]       ar_size, aw_size;
  logic [2*2-1:0]       ar_burst, aw_burst, r_resp, b_resp;
  logic [1:0]           ar_valid, ar_ready, r_last, r_valid, r_ready;
  logic [1:0]           aw_valid, aw_ready, w_last, w_valid, w_ready, b_valid, b_ready;
  logic [2*512-1:0]     r_data, w_data;

  assign rd_arvalid_o = ar_valid;
  assign rd_arready_o = ar_ready;
  assign wr_awvalid_o = aw_valid;
  assign wr_awready_o = aw_ready;
  assign wr_wvalid_o = w_valid;

  dma_reader #(
    .IdWidth       (IdWidth),
    .Id            (0),
    .OutWords      (4),
    .FifoBeats     (RdFifoBeats),
    .MaxBurstBeats (MaxBurstBeats),
    .MaxOutstanding(RdMaxOutstanding),
    .WordAligned   (1'b1)
  ) u_r0 (
    .clk_i,
    .rst_i,
    .abort_i        (r0_abort_i),
    .idle_o         (r0_idle_o),
    .cmd_valid_i    (r0_cmd_valid_i),
    .cmd_ready_o    (r0_cmd_ready_o),
    .cmd_addr_i     (r0_cmd_addr_i),
    .cmd_bytes_i    (r0_cmd_bytes_i),
    .cmd_last_i     (r0_cmd_last_i),
    .out_valid_o    (r0_out_valid_o),
    .out_ready_i    (r0_out_ready_i),
    .out_data_o     (r0_out_data_o),
    .out_last_o     (r0_out_last_o),
    .out_lo_o       (r0_out_lo_o),
    .out_hi_o       (r0_out_hi_o),
    .err_o          (r0_err_o),
    .err_addr_o     (r0_err_addr_o),
    .err_resp_o     (r0_err_resp_o),
    .m_axi_arid   (ar_id[0 +: IdWidth]),
    .m_axi_araddr (ar_addr[0 +: 64]),
    .m_axi_arlen  (ar_len[0 +: 8]),
    .m_axi_arsize (ar_size[0 +: 3]),
    .m_axi_arburst(ar_burst[0 +: 2]),
    .m_axi_arvalid(ar_valid[0]),
    .m_axi_arready(ar_ready[0]),
    .m_axi_rid    (r_id[0 +: IdWidth]),
    .m_axi_rdata  (r_data[0 +: 512]),
    .m_axi_rresp  (r_resp[0 +: 2]),
    .m_axi_rlast  (r_last[0]),
    .m_axi_rvalid (r_valid[0]),
    .m_axi_rready (r_ready[0])
  );

  dma_reader #(
    .IdWidth       (IdWidth),
    .Id            (1),
    .OutWords      (16),
    .FifoBeats     (RdFifoBeats),
    .MaxBurstBeats (MaxBurstBeats),
    .MaxOutstanding(RdMaxOutstanding)
  ) u_r1 (
    .clk_i,
    .rst_i,
    .abort_i        (r1_abort_i),
    .idle_o         (r1_idle_o),
    .cmd_valid_i    (r1_cmd_valid_i),
    .cmd_ready_o    (r1_cmd_ready_o),
    .cmd_addr_i     (r1_cmd_addr_i),
    .cmd_bytes_i    (r1_cmd_bytes_i),
    .cmd_last_i     (r1_cmd_last_i),
    .out_valid_o    (r1_out_valid_o),
    .out_ready_i    (r1_out_ready_i),
    .out_data_o     (r1_out_data_o),
    .out_last_o     (r1_out_last_o),
    .out_lo_o       (r1_out_lo_o),
    .out_hi_o       (r1_out_hi_o),
    .err_o          (r1_err_o),
    .err_addr_o     (r1_err_addr_o),
    .err_resp_o     (r1_err_resp_o),
    .m_axi_arid   (ar_id[IdWidth +: IdWidth]),
    .m_axi_araddr (ar_addr[64 +: 64]),
    .m_axi_arlen  (ar_len[8 +: 8]),
    .m_axi_arsize (ar_size[3 +: 3]),
    .m_axi_arburst(ar_burst[2 +: 2]),
    .m_axi_arvalid(ar_valid[1]),
    .m_axi_arready(ar_ready[1]),
    .m_axi_rid    (r_id[IdWidth +: IdWidth]),
    .m_axi_rdata  (r_data[512 +: 512]),
    .m_axi_rresp  (r_resp[2 +: 2]),
    .m_axi_rlast  (r_last[1]),
    .m_axi_rvalid (r_valid[1]),
    .m_axi_rready (r_ready[1])
  );

  dma_writer #(
    .IdWidth       (IdWidth),
    .Id            (0),
    .FifoBeats     (WrFifoBeats),
    .MaxBurstBeats (MaxBurstBeats),
    .MaxOutstanding(WrMaxOutstanding)
  ) u_w0 (
    .clk_i,
    .rst_i,
    .abort_i        (w0_abort_i),
    .idle_o         (w0_idle_o),
    .cmd_valid_i    (w0_cmd_valid_i),
    .cmd_ready_o    (w0_cmd_ready_o),
    .cmd_addr_i     (w0_cmd_addr_i),
    .cmd_bytes_i    (w0_cmd_bytes_i),
    .cmd_wide_i     (w0_cmd_wide_i),
    .in_valid_i     (w0_in_valid_i),
    .in_ready_o     (w0_in_ready_o),
    .in_data_i      (w0_in_data_i),
    .done_o         (w0_done_o),
    .err_o          (w0_err_o),
    .err_addr_o     (w0_err_addr_o),
    .err_resp_o     (w0_err_resp_o),
    .m_axi_awid   (aw_id[0 +: IdWidth]),
    .m_axi_awaddr (aw_addr[0 +: 64]),
    .m_axi_awlen  (aw_len[0 +: 8]),
    .m_axi_awsize (aw_size[0 +: 3]),
    .m_axi_awburst(aw_burst[0 +: 2]),
    .m_axi_awvalid(aw_valid[0]),
    .m_axi_awready(aw_ready[0]),
    .m_axi_wdata  (w_data[0 +: 512]),
    .m_axi_wstrb  (w_strb[0 +: 64]),
    .m_axi_wlast  (w_last[0]),
    .m_axi_wvalid (w_valid[0]),
    .m_axi_wready (w_ready[0]),
    .m_axi_bid    (b_id[0 +: IdWidth]),
    .m_axi_bresp  (b_resp[0 +: 2]),
    .m_axi_bvalid (b_valid[0]),
    .m_axi_bready (b_ready[0])
  );

  dma_writer #(
    .IdWidth       (IdWidth),
    .Id            (1),
    .InWords       (4),
    .FifoBeats     (WrFifoBeats),
    .MaxBurstBeats (MaxBurstBeats),
    .MaxOutstanding(WrMaxOutstanding)
  ) u_w1 (
    .clk_i,
    .rst_i,
    .abort_i        (w1_abort_i),
    .idle_o         (w1_idle_o),
    .cmd_valid_i    (w1_cmd_valid_i),
    .cmd_ready_o    (w1_cmd_ready_o),
    .cmd_addr_i     (w1_cmd_addr_i),
    .cmd_bytes_i    (w1_cmd_bytes_i),
    .cmd_wide_i     (w1_cmd_wide_i),
    .in_valid_i     (w1_in_valid_i),
    .in_ready_o     (w1_in_ready_o),
    .in_data_i      (w1_in_data_i),
    .done_o         (w1_done_o),
    .err_o          (w1_err_o),
    .err_addr_o     (w1_err_addr_o),
    .err_resp_o     (w1_err_resp_o),
    .m_axi_awid   (aw_id[IdWidth +: IdWidth]),
    .m_axi_awaddr (aw_addr[64 +: 64]),
    .m_axi_awlen  (aw_len[8 +: 8]),
    .m_axi_awsize (aw_size[3 +: 3]),
    .m_axi_awburst(aw_burst[2 +: 2]),
    .m_axi_awvalid(aw_valid[1]),
    .m_axi_awready(aw_ready[1]),
    .m_axi_wdata  (w_data[512 +: 512]),
    .m_axi_wstrb  (w_strb[64 +: 64]),
    .m_axi_wlast  (w_last[1]),
    .m_axi_wvalid (w_valid[1]),
    .m_axi_wready (w_ready[1]),
    .m_axi_bid    (b_id[IdWidth +: IdWidth]),
    .m_axi_bresp  (b_resp[2 +: 2]),
    .m_axi_bvalid (b_valid[1]),
    .m_axi_bready (b_ready[1])
  );

  axi_rd_mux #(
    .NumPorts(2),
    .IdWidth (IdWidth)
  ) u_rd_mux (
    .clk_i,
    .rst_i,
    .s_arid_i   (ar_id),
    .s_araddr_i (ar_addr),
    .s_arlen_i  (ar_len),
    .s_arsize_i (ar_size),
    .s_arburst_i(ar_burst),
    .s_arvalid_i(ar_valid),
    .s_arready_o(ar_ready),
    .s_rid_o    (r_id),
    .s_rdata_o  (r_data),
    .s_rresp_o  (r_resp),
    .s_rlast_o  (r_last),
    .s_rvalid_o (r_valid),
    .s_rready_i (r_ready),
    .m_axi_arid,
    .m_axi_araddr,
    .m_axi_arlen,
    .m_axi_arsize,
    .m_axi_arburst,
    .m_axi_arvalid,
    .m_axi_arready,
    .m_axi_rid,
    .m_axi_rdata,
    .m_axi_rresp,
    .m_axi_rlast,
    .m_axi_rvalid,
    .m_axi_rready
  );

  axi_wr_mux #(
    .NumPorts(2),
    .IdWidth (IdWidth)
  ) u_wr_mux (
    .clk_i,
    .rst_i,
    .s_awid_i   (aw_id),
    .s_awaddr_i (aw_addr),
    .s_awlen_i  (aw_len),
    .s_awsize_i (aw_size),
    .s_awburst_i(aw_burst),
    .s_awvalid_i(aw_valid),
    .s_awready_o(aw_ready),
    .s_wdata_i  (w_data),
    .s_wstrb_i  (w_strb),
    .s_wlast_i  (w_last),
    .s_wvalid_i (w_valid),
    .s_wready_o (w_ready),
    .s_bid_o    (b_id),
    .s_bresp_o  (b_resp),
    .s_bvalid_o (b_valid),
    .s_bready_i (b_ready),
    .m_axi_awid,
    .m_axi_awaddr,
    .m_axi_awlen,
    .m_axi_awsize,
    .m_axi_awburst,
    .m_axi_awvalid,
    .m_axi_awready,
    .m_axi_wdata,
    .m_axi_wstrb,
    .m_axi_wlast,
    .m_axi_wvalid,
    .m_axi_wready,
    .m_axi_bid,
    .m_axi_bresp,
    .m_axi_bvalid,
    .m_axi_bready
  );

endmodule

`default_nettype wire
