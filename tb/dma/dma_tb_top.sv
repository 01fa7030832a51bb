// Test top for the DMA movers: reader 0 (OutWords = 1, ID 0), reader 1
// (OutWords = 16, ID 1), writer 0 (ID 0) and writer 1 (ID 1), through
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
  output logic [31:0]  r0_out_data_o,
  output logic         r0_out_last_o,
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
  input  logic         w1_in_valid_i,
  output logic         w1_in_ready_o,
  input  logic [31:0]  w1_in_data_i,
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
  output logic [3:0]   m_axi_arid_o,
  output logic [63:0]  m_axi_araddr_o,
  output logic [7:0]   m_axi_arlen_o,
  output logic [2:0]   m_axi_arsize_o,
  output logic [1:0]   m_axi_arburst_o,
  output logic         m_axi_arvalid_o,
  input  logic         m_axi_arready_i,
  input  logic [3:0]   m_axi_rid_i,
  input  logic [511:0] m_axi_rdata_i,
  input  logic [1:0]   m_axi_rresp_i,
  input  logic         m_axi_rlast_i,
  input  logic         m_axi_rvalid_i,
  output logic         m_axi_rready_o,
  output logic [3:0]   m_axi_awid_o,
  output logic [63:0]  m_axi_awaddr_o,
  output logic [7:0]   m_axi_awlen_o,
  output logic [2:0]   m_axi_awsize_o,
  output logic [1:0]   m_axi_awburst_o,
  output logic         m_axi_awvalid_o,
  input  logic         m_axi_awready_i,
  output logic [511:0] m_axi_wdata_o,
  output logic [63:0]  m_axi_wstrb_o,
  output logic         m_axi_wlast_o,
  output logic         m_axi_wvalid_o,
  input  logic         m_axi_wready_i,
  input  logic [3:0]   m_axi_bid_i,
  input  logic [1:0]   m_axi_bresp_i,
  input  logic         m_axi_bvalid_i,
  output logic         m_axi_bready_o
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
    .OutWords      (1),
    .FifoBeats     (RdFifoBeats),
    .MaxBurstBeats (MaxBurstBeats),
    .MaxOutstanding(RdMaxOutstanding)
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
    .err_o          (r0_err_o),
    .err_addr_o     (r0_err_addr_o),
    .err_resp_o     (r0_err_resp_o),
    .m_axi_arid_o   (ar_id[0 +: IdWidth]),
    .m_axi_araddr_o (ar_addr[0 +: 64]),
    .m_axi_arlen_o  (ar_len[0 +: 8]),
    .m_axi_arsize_o (ar_size[0 +: 3]),
    .m_axi_arburst_o(ar_burst[0 +: 2]),
    .m_axi_arvalid_o(ar_valid[0]),
    .m_axi_arready_i(ar_ready[0]),
    .m_axi_rid_i    (r_id[0 +: IdWidth]),
    .m_axi_rdata_i  (r_data[0 +: 512]),
    .m_axi_rresp_i  (r_resp[0 +: 2]),
    .m_axi_rlast_i  (r_last[0]),
    .m_axi_rvalid_i (r_valid[0]),
    .m_axi_rready_o (r_ready[0])
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
    .err_o          (r1_err_o),
    .err_addr_o     (r1_err_addr_o),
    .err_resp_o     (r1_err_resp_o),
    .m_axi_arid_o   (ar_id[IdWidth +: IdWidth]),
    .m_axi_araddr_o (ar_addr[64 +: 64]),
    .m_axi_arlen_o  (ar_len[8 +: 8]),
    .m_axi_arsize_o (ar_size[3 +: 3]),
    .m_axi_arburst_o(ar_burst[2 +: 2]),
    .m_axi_arvalid_o(ar_valid[1]),
    .m_axi_arready_i(ar_ready[1]),
    .m_axi_rid_i    (r_id[IdWidth +: IdWidth]),
    .m_axi_rdata_i  (r_data[512 +: 512]),
    .m_axi_rresp_i  (r_resp[2 +: 2]),
    .m_axi_rlast_i  (r_last[1]),
    .m_axi_rvalid_i (r_valid[1]),
    .m_axi_rready_o (r_ready[1])
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
    .in_valid_i     (w0_in_valid_i),
    .in_ready_o     (w0_in_ready_o),
    .in_data_i      (w0_in_data_i),
    .done_o         (w0_done_o),
    .err_o          (w0_err_o),
    .err_addr_o     (w0_err_addr_o),
    .err_resp_o     (w0_err_resp_o),
    .m_axi_awid_o   (aw_id[0 +: IdWidth]),
    .m_axi_awaddr_o (aw_addr[0 +: 64]),
    .m_axi_awlen_o  (aw_len[0 +: 8]),
    .m_axi_awsize_o (aw_size[0 +: 3]),
    .m_axi_awburst_o(aw_burst[0 +: 2]),
    .m_axi_awvalid_o(aw_valid[0]),
    .m_axi_awready_i(aw_ready[0]),
    .m_axi_wdata_o  (w_data[0 +: 512]),
    .m_axi_wstrb_o  (w_strb[0 +: 64]),
    .m_axi_wlast_o  (w_last[0]),
    .m_axi_wvalid_o (w_valid[0]),
    .m_axi_wready_i (w_ready[0]),
    .m_axi_bid_i    (b_id[0 +: IdWidth]),
    .m_axi_bresp_i  (b_resp[0 +: 2]),
    .m_axi_bvalid_i (b_valid[0]),
    .m_axi_bready_o (b_ready[0])
  );

  dma_writer #(
    .IdWidth       (IdWidth),
    .Id            (1),
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
    .in_valid_i     (w1_in_valid_i),
    .in_ready_o     (w1_in_ready_o),
    .in_data_i      (w1_in_data_i),
    .done_o         (w1_done_o),
    .err_o          (w1_err_o),
    .err_addr_o     (w1_err_addr_o),
    .err_resp_o     (w1_err_resp_o),
    .m_axi_awid_o   (aw_id[IdWidth +: IdWidth]),
    .m_axi_awaddr_o (aw_addr[64 +: 64]),
    .m_axi_awlen_o  (aw_len[8 +: 8]),
    .m_axi_awsize_o (aw_size[3 +: 3]),
    .m_axi_awburst_o(aw_burst[2 +: 2]),
    .m_axi_awvalid_o(aw_valid[1]),
    .m_axi_awready_i(aw_ready[1]),
    .m_axi_wdata_o  (w_data[512 +: 512]),
    .m_axi_wstrb_o  (w_strb[64 +: 64]),
    .m_axi_wlast_o  (w_last[1]),
    .m_axi_wvalid_o (w_valid[1]),
    .m_axi_wready_i (w_ready[1]),
    .m_axi_bid_i    (b_id[IdWidth +: IdWidth]),
    .m_axi_bresp_i  (b_resp[2 +: 2]),
    .m_axi_bvalid_i (b_valid[1]),
    .m_axi_bready_o (b_ready[1])
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
    .m_axi_arid_o,
    .m_axi_araddr_o,
    .m_axi_arlen_o,
    .m_axi_arsize_o,
    .m_axi_arburst_o,
    .m_axi_arvalid_o,
    .m_axi_arready_i,
    .m_axi_rid_i,
    .m_axi_rdata_i,
    .m_axi_rresp_i,
    .m_axi_rlast_i,
    .m_axi_rvalid_i,
    .m_axi_rready_o
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
    .m_axi_awid_o,
    .m_axi_awaddr_o,
    .m_axi_awlen_o,
    .m_axi_awsize_o,
    .m_axi_awburst_o,
    .m_axi_awvalid_o,
    .m_axi_awready_i,
    .m_axi_wdata_o,
    .m_axi_wstrb_o,
    .m_axi_wlast_o,
    .m_axi_wvalid_o,
    .m_axi_wready_i,
    .m_axi_bid_i,
    .m_axi_bresp_i,
    .m_axi_bvalid_i,
    .m_axi_bready_o
  );

endmodule

`default_nettype wire
