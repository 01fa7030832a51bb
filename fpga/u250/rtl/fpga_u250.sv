// fpga_u250: the Alveo U250 board top. It wraps the vendor-neutral farnn_core
// with the card's PCIe bridge, DDR4 channel C0, clocking and clock-domain
// crossings; every vendor block is an IP generated from fpga/u250/ip/*.tcl at
// build time (black-box stubs for lint: fpga/u250/ip/stubs/, fpga/common/stubs/).
//
//   PCIe Gen3 x16 ── xdma_0 (AXI Bridge mode, 512 bits, axi_aclk 250 MHz)
//     m_axib_* (BAR0, 4 KiB) ─ axi_dwc_csr (512 -> 32) ─ axi_pc_csr (AXI4 -> AXI4-Lite)
//                            ─ axi_cc_csr (250 MHz -> core clock) ─ farnn_core s_axil_*
//     s_axib_* (identity translation of 64-bit addresses to PCIe) ─ axi_cc_host ─ m_axi_host_*
//     usr_irq_req[1:0] / usr_irq_ack[1:0] ─ XPM synchronizers ─ irq_req_o / irq_ack_i
//   DDR4 C0 (16 GiB RDIMM, ECC) ── ddr4_0 (AXI4 512 bits, ui_clk 300 MHz) ─ axi_cc_card ─ m_axi_card_*
//   300 MHz default_300mhz_clk1 ── clk_core (MMCM) ─ core clock, at the `make synth` estimate
//
// Clock domains: axi_aclk (PCIe, 250 MHz), c0_ddr4_ui_clk (DDR, 300 MHz) and the
// core clock (the estimate in docs/capacity.md, 250.0 MHz for 6 LUT levels);
// only the AXI clock converters and the XPM macros cross between them.
// Resets: the core runs only while the PCIe link is up (XDMA axi_aresetn), the
// DDR4 controller is calibrated and the MMCM is locked; each domain sees the
// other domains' readiness through a synchronizer, so both sides of every clock
// converter are reset together. PERST# also resets the DDR4 controller.
// LEDs (active high assumed): 0 PCIe link up, 1 DDR4 calibrated, 2 blinks
// (a period of 2^27 core cycles: ~1.86 Hz at 250 MHz) while the core clock runs and the core is out of reset.
//
// farnn_core parameters: the capacity model's URAM design point for the Alveo
// U250 (docs/capacity.md; fpga/common/board_params.py turns it into parameters
// and check_core_params.py keeps these defaults equal to it):
//   NumPe 1136        the PEs the model fits in the U250's user region in
//                     whole chains of 16 (the LUTs bind: each chain beyond
//                     the first adds a node of the join tree);
//   NumChains 71      chains of 16 PEs, so a step's latency does not grow
//                     with the 1136-PE chain (docs/decisions.md);
//   MaxHidden 1136    the larger of its limits (LSTM H <= 1024, GRU H <= 1136);
//   NumBanks 1        the model gives each PE's whole RAM to one layer; two banks
//                     would halve the words per bank and the largest layer;
//   WeightDepth 4096  the model's URAM design point: one UltraRAM per PE
//   WeightUram 1      (4096 x 72, 32 bits used) holds the weights; the 3
//                     RAMB18 per PE the block RAM leaves all go to the
//                     accumulators (1136 words at MaxHidden); LSTM H <= 1024
//                     and GRU H <= 1136 fit, exactly the model's limits;
//   WeightLanes 16    one 512-bit host beat per weight-stream beat;
//   MaxBatch 4, MulLatency 2, AddLatency 3: the configuration whose synthesis
//                     gave the model's fixed cost and the clock estimate;
//   StoreAddrWidth 34 the 16 GiB of DDR4 C0 (the MIG's AXI address width).
// BuildId and ClockKhz come from the Tcl
// (commit hash; clock estimate), so `farnn info` names the RTL on the card.
// Pad names follow the board files (xilinx.com:au250 board part), not the
// _i/_o port suffixes of the RTL blocks.
`default_nettype none

module fpga_u250 #(
  parameter logic [31:0] BuildId        = 32'h0,   // set by the flow: git rev-parse --short=8 HEAD
  parameter logic [31:0] ClockKhz       = 32'd0,   // set by the flow: the make-synth clock estimate
  parameter int unsigned NumPe          = 1136,
  parameter int unsigned NumChains      = 71,
  parameter int unsigned WeightDepth    = 4096,
  parameter int unsigned WeightUram     = 1,
  parameter int unsigned NumBanks       = 1,
  parameter int unsigned WeightLanes    = 16,
  parameter int unsigned MaxHidden      = 1136,
  parameter int unsigned MaxBatch       = 4,
  parameter int unsigned MulLatency     = 2,
  parameter int unsigned AddLatency     = 3,
  parameter int unsigned StoreAddrWidth = 34
) (
  // PCIe edge connector: 100 MHz reference clock, PERST#, 16 lanes.
  input  wire         pcie_refclk_p,
  input  wire         pcie_refclk_n,
  input  wire         pcie_perst_n,
  input  wire  [15:0] pcie_rx_p,
  input  wire  [15:0] pcie_rx_n,
  output wire  [15:0] pcie_tx_p,
  output wire  [15:0] pcie_tx_n,
  // DDR4 channel C0 and its 300 MHz reference (default_300mhz_clk0).
  input  wire         ddr4_c0_clk_p,
  input  wire         ddr4_c0_clk_n,
  output wire         ddr4_c0_act_n,
  output wire  [16:0] ddr4_c0_adr,
  output wire  [1:0]  ddr4_c0_ba,
  output wire  [1:0]  ddr4_c0_bg,
  output wire  [0:0]  ddr4_c0_cke,
  output wire  [0:0]  ddr4_c0_odt,
  output wire  [0:0]  ddr4_c0_cs_n,
  output wire  [0:0]  ddr4_c0_ck_t,
  output wire  [0:0]  ddr4_c0_ck_c,
  output wire         ddr4_c0_reset_n,
  output wire         ddr4_c0_parity,
  inout  wire  [71:0] ddr4_c0_dq,
  inout  wire  [17:0] ddr4_c0_dqs_t,
  inout  wire  [17:0] ddr4_c0_dqs_c,
  // 300 MHz reference of the core clock (default_300mhz_clk1).
  input  wire         clk_300_1_p,
  input  wire         clk_300_1_n,
  // User LEDs.
  output wire  [2:0]  led
);

  // ============================================================ clocks and resets
  logic pcie_sys_clk, pcie_sys_clk_gt;   // 100 MHz reference: fabric copy, GT copy
  logic pcie_clk, pcie_rst_n, pcie_link_up;
  logic ddr_clk, ddr_ui_rst, ddr_calib_done;
  logic core_clk, core_clk_locked;

  IBUFDS_GTE4 #(
    .REFCLK_EN_TX_PATH  (1'b0),
    .REFCLK_HROW_CK_SEL (2'b00),   // ODIV2 = O: sys_clk at the reference frequency (PG195)
    .REFCLK_ICNTL_RX    (2'b00)
  ) u_pcie_refclk (
    .I     (pcie_refclk_p),
    .IB    (pcie_refclk_n),
    .CEB   (1'b0),
    .O     (pcie_sys_clk_gt),
    .ODIV2 (pcie_sys_clk)
  );

  clk_core u_clk_core (
    .clk_in1_p (clk_300_1_p),
    .clk_in1_n (clk_300_1_n),
    .clk_out1  (core_clk),
    .locked    (core_clk_locked)
  );

  // Readiness of each domain, registered in its own clock.
  logic ddr_up_d, ddr_up_q;
  assign ddr_up_d = ddr_calib_done && !ddr_ui_rst;
  always_ff @(posedge ddr_clk) ddr_up_q <= ddr_up_d;

  // Each domain's view of the others (the MMCM lock is asynchronous).
  logic [2:0] core_sees;   // {pcie up, ddr up, mmcm locked}
  logic [1:0] pcie_sees;   // {ddr up, mmcm locked}
  logic [1:0] ddr_sees;    // {pcie up, mmcm locked}

  xpm_cdc_array_single #(.DEST_SYNC_FF(4), .INIT_SYNC_FF(0), .SIM_ASSERT_CHK(0), .SRC_INPUT_REG(0), .WIDTH(3))
    u_up_to_core (.src_clk(1'b0), .src_in({pcie_rst_n, ddr_up_q, core_clk_locked}),
                  .dest_clk(core_clk), .dest_out(core_sees));
  xpm_cdc_array_single #(.DEST_SYNC_FF(4), .INIT_SYNC_FF(0), .SIM_ASSERT_CHK(0), .SRC_INPUT_REG(0), .WIDTH(2))
    u_up_to_pcie (.src_clk(1'b0), .src_in({ddr_up_q, core_clk_locked}),
                  .dest_clk(pcie_clk), .dest_out(pcie_sees));
  xpm_cdc_array_single #(.DEST_SYNC_FF(4), .INIT_SYNC_FF(0), .SIM_ASSERT_CHK(0), .SRC_INPUT_REG(0), .WIDTH(2))
    u_up_to_ddr (.src_clk(1'b0), .src_in({pcie_rst_n, core_clk_locked}),
                 .dest_clk(ddr_clk), .dest_out(ddr_sees));

  // Core reset: synchronous, active high, held until every domain is up (and
  // from configuration on: the initial value is the flop's configured state).
  logic core_rst_d;
  logic core_rst_q = 1'b1;
  assign core_rst_d = !(&core_sees);
  always_ff @(posedge core_clk) core_rst_q <= core_rst_d;

  // PCIe- and DDR-side resets of the converters (and the DDR4 AXI slave): the
  // domain's own reset output, or another domain down.
  logic pcie_others_up_d, pcie_others_up_q, ddr_others_up_d, ddr_others_up_q;
  assign pcie_others_up_d = &pcie_sees;
  assign ddr_others_up_d = &ddr_sees;
  always_ff @(posedge pcie_clk) pcie_others_up_q <= pcie_others_up_d;
  always_ff @(posedge ddr_clk) ddr_others_up_q <= ddr_others_up_d;
  logic pcie_side_rst_n, ddr_side_rst_n;
  assign pcie_side_rst_n = pcie_rst_n && pcie_others_up_q;
  assign ddr_side_rst_n = ddr_up_q && ddr_others_up_q;

  // ============================================================ LEDs
  logic [26:0] beat_d, beat_q;
  assign beat_d = beat_q + 27'd1;
  always_ff @(posedge core_clk) begin
    if (core_rst_q) beat_q <= '0;
    else beat_q <= beat_d;
  end
  assign led = {beat_q[26] && !core_rst_q, ddr_up_q, pcie_link_up};

  // ============================================================ nets
  // Register path: XDMA BAR0 master (pcie) -> width converter -> protocol
  // converter -> clock converter -> core (AXI4-Lite, 12-bit addresses).
  logic [3:0]   bar_awid, bar_arid, bar_bid, bar_rid;
  logic [63:0]  bar_awaddr, bar_araddr;
  logic [7:0]   bar_awlen, bar_arlen;
  logic [2:0]   bar_awsize, bar_arsize, bar_awprot, bar_arprot;
  logic [1:0]   bar_awburst, bar_arburst, bar_bresp, bar_rresp;
  logic         bar_awlock, bar_arlock;
  logic [3:0]   bar_awcache, bar_arcache;
  logic         bar_awvalid, bar_awready, bar_wlast, bar_wvalid, bar_wready, bar_bvalid, bar_bready;
  logic         bar_arvalid, bar_arready, bar_rlast, bar_rvalid, bar_rready;
  logic [511:0] bar_wdata, bar_rdata;
  logic [63:0]  bar_wstrb;

  logic [11:0]  n32_awaddr, n32_araddr;
  logic [7:0]   n32_awlen, n32_arlen;
  logic [2:0]   n32_awsize, n32_arsize, n32_awprot, n32_arprot;
  logic [1:0]   n32_awburst, n32_arburst, n32_bresp, n32_rresp;
  logic [0:0]   n32_awlock, n32_arlock;
  logic [3:0]   n32_awcache, n32_arcache, n32_awregion, n32_arregion, n32_awqos, n32_arqos;
  logic         n32_awvalid, n32_awready, n32_wlast, n32_wvalid, n32_wready, n32_bvalid, n32_bready;
  logic         n32_arvalid, n32_arready, n32_rlast, n32_rvalid, n32_rready;
  logic [31:0]  n32_wdata, n32_rdata;
  logic [3:0]   n32_wstrb;

  logic [11:0]  lite_awaddr, lite_araddr;
  logic [2:0]   lite_awprot, lite_arprot;
  logic         lite_awvalid, lite_awready, lite_wvalid, lite_wready, lite_bvalid, lite_bready;
  logic         lite_arvalid, lite_arready, lite_rvalid, lite_rready;
  logic [31:0]  lite_wdata, lite_rdata;
  logic [3:0]   lite_wstrb;
  logic [1:0]   lite_bresp, lite_rresp;

  logic [11:0]  csr_awaddr, csr_araddr;
  logic [2:0]   csr_awprot, csr_arprot;
  logic         csr_awvalid, csr_awready, csr_wvalid, csr_wready, csr_bvalid, csr_bready;
  logic         csr_arvalid, csr_arready, csr_rvalid, csr_rready;
  logic [31:0]  csr_wdata, csr_rdata;
  logic [3:0]   csr_wstrb;
  logic [1:0]   csr_bresp, csr_rresp;

  // Host path: core host master (core clock) -> clock converter -> XDMA bridge slave.
  logic [3:0]   host_awid, host_arid, host_bid, host_rid;
  logic [63:0]  host_awaddr, host_araddr;
  logic [7:0]   host_awlen, host_arlen;
  logic [2:0]   host_awsize, host_arsize;
  logic [1:0]   host_awburst, host_arburst, host_bresp, host_rresp;
  logic         host_awvalid, host_awready, host_wlast, host_wvalid, host_wready, host_bvalid, host_bready;
  logic         host_arvalid, host_arready, host_rlast, host_rvalid, host_rready;
  logic [511:0] host_wdata, host_rdata;
  logic [63:0]  host_wstrb;

  logic [3:0]   pcie_awid, pcie_arid, pcie_bid, pcie_rid;
  logic [63:0]  pcie_awaddr, pcie_araddr;
  logic [7:0]   pcie_awlen, pcie_arlen;
  logic [2:0]   pcie_awsize, pcie_arsize;
  logic [1:0]   pcie_awburst, pcie_arburst, pcie_bresp, pcie_rresp;
  logic [3:0]   pcie_awregion, pcie_arregion;
  logic         pcie_awvalid, pcie_awready, pcie_wlast, pcie_wvalid, pcie_wready, pcie_bvalid, pcie_bready;
  logic         pcie_arvalid, pcie_arready, pcie_rlast, pcie_rvalid, pcie_rready;
  logic [511:0] pcie_wdata, pcie_rdata;
  logic [63:0]  pcie_wstrb;

  // Card path: core card master (core clock) -> clock converter -> DDR4 AXI slave.
  logic [3:0]   card_awid, card_arid, card_bid, card_rid;
  logic [StoreAddrWidth-1:0] card_awaddr, card_araddr;
  logic [7:0]   card_awlen, card_arlen;
  logic [2:0]   card_awsize, card_arsize;
  logic [1:0]   card_awburst, card_arburst, card_bresp, card_rresp;
  logic         card_awvalid, card_awready, card_wlast, card_wvalid, card_wready, card_bvalid, card_bready;
  logic         card_arvalid, card_arready, card_rlast, card_rvalid, card_rready;
  logic [511:0] card_wdata, card_rdata;
  logic [63:0]  card_wstrb;

  logic [3:0]   mem_awid, mem_arid, mem_bid, mem_rid;
  logic [33:0]  mem_awaddr, mem_araddr;
  logic [7:0]   mem_awlen, mem_arlen;
  logic [2:0]   mem_awsize, mem_arsize, mem_awprot, mem_arprot;
  logic [1:0]   mem_awburst, mem_arburst, mem_bresp, mem_rresp;
  logic [0:0]   mem_awlock, mem_arlock;
  logic [3:0]   mem_awcache, mem_arcache, mem_awqos, mem_arqos;
  logic         mem_awvalid, mem_awready, mem_wlast, mem_wvalid, mem_wready, mem_bvalid, mem_bready;
  logic         mem_arvalid, mem_arready, mem_rlast, mem_rvalid, mem_rready;
  logic [511:0] mem_wdata, mem_rdata;
  logic [63:0]  mem_wstrb;

  // Interrupts.
  logic [1:0] core_irq_req, core_irq_ack, pcie_irq_req, pcie_irq_ack;

  // Outputs nobody reads.
  logic [5:0]   unused_ltssm;
  logic         unused_ctl_rst_n, unused_msi_enable, unused_bridge_irq, unused_ddr_dbg_clk, unused_ecc_irq;
  logic [2:0]   unused_msi_width;
  logic [511:0] unused_ddr_dbg_bus;
  logic [51:0]  unused_bar_awaddr_hi, unused_bar_araddr_hi;
  logic         unused_ctrl_awready, unused_ctrl_wready, unused_ctrl_bvalid, unused_ctrl_arready,
                unused_ctrl_rvalid;
  logic [1:0]   unused_ctrl_bresp, unused_ctrl_rresp;
  logic [31:0]  unused_ctrl_rdata;
  logic [0:0]   unused_pcie_awlock, unused_pcie_arlock;
  logic [3:0]   unused_pcie_awcache, unused_pcie_arcache, unused_pcie_awqos, unused_pcie_arqos;
  logic [2:0]   unused_pcie_awprot, unused_pcie_arprot;
  logic [3:0]   unused_mem_awregion, unused_mem_arregion;

  assign unused_bar_awaddr_hi = bar_awaddr[63:12];
  assign unused_bar_araddr_hi = bar_araddr[63:12];

  // ============================================================ PCIe bridge
  xdma_0 u_xdma (
    .sys_clk          (pcie_sys_clk),
    .sys_clk_gt       (pcie_sys_clk_gt),
    .sys_rst_n        (pcie_perst_n),
    .cfg_ltssm_state  (unused_ltssm),
    .user_lnk_up      (pcie_link_up),
    .pci_exp_txp      (pcie_tx_p),
    .pci_exp_txn      (pcie_tx_n),
    .pci_exp_rxp      (pcie_rx_p),
    .pci_exp_rxn      (pcie_rx_n),
    .axi_aclk         (pcie_clk),
    .axi_aresetn      (pcie_rst_n),
    .axi_ctl_aresetn  (unused_ctl_rst_n),
    .usr_irq_req      (pcie_irq_req),
    .usr_irq_ack      (pcie_irq_ack),
    .msi_enable       (unused_msi_enable),
    .msi_vector_width (unused_msi_width),
    // BAR0 -> register path
    .m_axib_awid    (bar_awid),    .m_axib_awaddr  (bar_awaddr),  .m_axib_awlen   (bar_awlen),
    .m_axib_awsize  (bar_awsize),  .m_axib_awburst (bar_awburst), .m_axib_awlock  (bar_awlock),
    .m_axib_awcache (bar_awcache), .m_axib_awprot  (bar_awprot),  .m_axib_awvalid (bar_awvalid),
    .m_axib_awready (bar_awready),
    .m_axib_wdata   (bar_wdata),   .m_axib_wstrb   (bar_wstrb),   .m_axib_wlast   (bar_wlast),
    .m_axib_wvalid  (bar_wvalid),  .m_axib_wready  (bar_wready),
    .m_axib_bid     (bar_bid),     .m_axib_bresp   (bar_bresp),   .m_axib_bvalid  (bar_bvalid),
    .m_axib_bready  (bar_bready),
    .m_axib_arid    (bar_arid),    .m_axib_araddr  (bar_araddr),  .m_axib_arlen   (bar_arlen),
    .m_axib_arsize  (bar_arsize),  .m_axib_arburst (bar_arburst), .m_axib_arlock  (bar_arlock),
    .m_axib_arcache (bar_arcache), .m_axib_arprot  (bar_arprot),  .m_axib_arvalid (bar_arvalid),
    .m_axib_arready (bar_arready),
    .m_axib_rid     (bar_rid),     .m_axib_rdata   (bar_rdata),   .m_axib_rresp   (bar_rresp),
    .m_axib_rlast   (bar_rlast),   .m_axib_rvalid  (bar_rvalid),  .m_axib_rready  (bar_rready),
    .interrupt_out  (unused_bridge_irq),
    // core host master -> PCIe memory
    .s_axib_awid     (pcie_awid),     .s_axib_awaddr  (pcie_awaddr),  .s_axib_awlen   (pcie_awlen),
    .s_axib_awsize   (pcie_awsize),   .s_axib_awburst (pcie_awburst), .s_axib_awregion(pcie_awregion),
    .s_axib_awvalid  (pcie_awvalid),  .s_axib_awready (pcie_awready),
    .s_axib_wdata    (pcie_wdata),    .s_axib_wstrb   (pcie_wstrb),   .s_axib_wlast   (pcie_wlast),
    .s_axib_wvalid   (pcie_wvalid),   .s_axib_wready  (pcie_wready),
    .s_axib_bid      (pcie_bid),      .s_axib_bresp   (pcie_bresp),   .s_axib_bvalid  (pcie_bvalid),
    .s_axib_bready   (pcie_bready),
    .s_axib_arid     (pcie_arid),     .s_axib_araddr  (pcie_araddr),  .s_axib_arlen   (pcie_arlen),
    .s_axib_arsize   (pcie_arsize),   .s_axib_arburst (pcie_arburst), .s_axib_arregion(pcie_arregion),
    .s_axib_arvalid  (pcie_arvalid),  .s_axib_arready (pcie_arready),
    .s_axib_rid      (pcie_rid),      .s_axib_rdata   (pcie_rdata),   .s_axib_rresp   (pcie_rresp),
    .s_axib_rlast    (pcie_rlast),    .s_axib_rvalid  (pcie_rvalid),  .s_axib_rready  (pcie_rready)
  );

  // ============================================================ register path
  axi_dwc_csr u_dwc_csr (
    .s_axi_aclk     (pcie_clk),
    .s_axi_aresetn  (pcie_side_rst_n),
    .s_axi_awid     (bar_awid),        .s_axi_awaddr   (bar_awaddr[11:0]), .s_axi_awlen  (bar_awlen),
    .s_axi_awsize   (bar_awsize),      .s_axi_awburst  (bar_awburst),      .s_axi_awlock (bar_awlock),
    .s_axi_awcache  (bar_awcache),     .s_axi_awprot   (bar_awprot),       .s_axi_awregion (4'd0),
    .s_axi_awqos    (4'd0),            .s_axi_awvalid  (bar_awvalid),      .s_axi_awready  (bar_awready),
    .s_axi_wdata    (bar_wdata),       .s_axi_wstrb    (bar_wstrb),        .s_axi_wlast    (bar_wlast),
    .s_axi_wvalid   (bar_wvalid),      .s_axi_wready   (bar_wready),
    .s_axi_bid      (bar_bid),         .s_axi_bresp    (bar_bresp),        .s_axi_bvalid   (bar_bvalid),
    .s_axi_bready   (bar_bready),
    .s_axi_arid     (bar_arid),        .s_axi_araddr   (bar_araddr[11:0]), .s_axi_arlen  (bar_arlen),
    .s_axi_arsize   (bar_arsize),      .s_axi_arburst  (bar_arburst),      .s_axi_arlock (bar_arlock),
    .s_axi_arcache  (bar_arcache),     .s_axi_arprot   (bar_arprot),       .s_axi_arregion (4'd0),
    .s_axi_arqos    (4'd0),            .s_axi_arvalid  (bar_arvalid),      .s_axi_arready  (bar_arready),
    .s_axi_rid      (bar_rid),         .s_axi_rdata    (bar_rdata),        .s_axi_rresp    (bar_rresp),
    .s_axi_rlast    (bar_rlast),       .s_axi_rvalid   (bar_rvalid),       .s_axi_rready   (bar_rready),
    .m_axi_awaddr   (n32_awaddr),      .m_axi_awlen    (n32_awlen),        .m_axi_awsize   (n32_awsize),
    .m_axi_awburst  (n32_awburst),     .m_axi_awlock   (n32_awlock),       .m_axi_awcache  (n32_awcache),
    .m_axi_awprot   (n32_awprot),      .m_axi_awregion (n32_awregion),     .m_axi_awqos    (n32_awqos),
    .m_axi_awvalid  (n32_awvalid),     .m_axi_awready  (n32_awready),
    .m_axi_wdata    (n32_wdata),       .m_axi_wstrb    (n32_wstrb),        .m_axi_wlast    (n32_wlast),
    .m_axi_wvalid   (n32_wvalid),      .m_axi_wready   (n32_wready),
    .m_axi_bresp    (n32_bresp),       .m_axi_bvalid   (n32_bvalid),       .m_axi_bready   (n32_bready),
    .m_axi_araddr   (n32_araddr),      .m_axi_arlen    (n32_arlen),        .m_axi_arsize   (n32_arsize),
    .m_axi_arburst  (n32_arburst),     .m_axi_arlock   (n32_arlock),       .m_axi_arcache  (n32_arcache),
    .m_axi_arprot   (n32_arprot),      .m_axi_arregion (n32_arregion),     .m_axi_arqos    (n32_arqos),
    .m_axi_arvalid  (n32_arvalid),     .m_axi_arready  (n32_arready),
    .m_axi_rdata    (n32_rdata),       .m_axi_rresp    (n32_rresp),        .m_axi_rlast    (n32_rlast),
    .m_axi_rvalid   (n32_rvalid),      .m_axi_rready   (n32_rready)
  );

  axi_pc_csr u_pc_csr (
    .aclk           (pcie_clk),
    .aresetn        (pcie_side_rst_n),
    .s_axi_awaddr   (n32_awaddr),      .s_axi_awlen    (n32_awlen),        .s_axi_awsize   (n32_awsize),
    .s_axi_awburst  (n32_awburst),     .s_axi_awlock   (n32_awlock),       .s_axi_awcache  (n32_awcache),
    .s_axi_awprot   (n32_awprot),      .s_axi_awregion (n32_awregion),     .s_axi_awqos    (n32_awqos),
    .s_axi_awvalid  (n32_awvalid),     .s_axi_awready  (n32_awready),
    .s_axi_wdata    (n32_wdata),       .s_axi_wstrb    (n32_wstrb),        .s_axi_wlast    (n32_wlast),
    .s_axi_wvalid   (n32_wvalid),      .s_axi_wready   (n32_wready),
    .s_axi_bresp    (n32_bresp),       .s_axi_bvalid   (n32_bvalid),       .s_axi_bready   (n32_bready),
    .s_axi_araddr   (n32_araddr),      .s_axi_arlen    (n32_arlen),        .s_axi_arsize   (n32_arsize),
    .s_axi_arburst  (n32_arburst),     .s_axi_arlock   (n32_arlock),       .s_axi_arcache  (n32_arcache),
    .s_axi_arprot   (n32_arprot),      .s_axi_arregion (n32_arregion),     .s_axi_arqos    (n32_arqos),
    .s_axi_arvalid  (n32_arvalid),     .s_axi_arready  (n32_arready),
    .s_axi_rdata    (n32_rdata),       .s_axi_rresp    (n32_rresp),        .s_axi_rlast    (n32_rlast),
    .s_axi_rvalid   (n32_rvalid),      .s_axi_rready   (n32_rready),
    .m_axi_awaddr   (lite_awaddr),     .m_axi_awprot   (lite_awprot),      .m_axi_awvalid  (lite_awvalid),
    .m_axi_awready  (lite_awready),
    .m_axi_wdata    (lite_wdata),      .m_axi_wstrb    (lite_wstrb),       .m_axi_wvalid   (lite_wvalid),
    .m_axi_wready   (lite_wready),
    .m_axi_bresp    (lite_bresp),      .m_axi_bvalid   (lite_bvalid),      .m_axi_bready   (lite_bready),
    .m_axi_araddr   (lite_araddr),     .m_axi_arprot   (lite_arprot),      .m_axi_arvalid  (lite_arvalid),
    .m_axi_arready  (lite_arready),
    .m_axi_rdata    (lite_rdata),      .m_axi_rresp    (lite_rresp),       .m_axi_rvalid   (lite_rvalid),
    .m_axi_rready   (lite_rready)
  );

  axi_cc_csr u_cc_csr (
    .s_axi_aclk     (pcie_clk),
    .s_axi_aresetn  (pcie_side_rst_n),
    .s_axi_awaddr   (lite_awaddr),     .s_axi_awprot   (lite_awprot),      .s_axi_awvalid  (lite_awvalid),
    .s_axi_awready  (lite_awready),
    .s_axi_wdata    (lite_wdata),      .s_axi_wstrb    (lite_wstrb),       .s_axi_wvalid   (lite_wvalid),
    .s_axi_wready   (lite_wready),
    .s_axi_bresp    (lite_bresp),      .s_axi_bvalid   (lite_bvalid),      .s_axi_bready   (lite_bready),
    .s_axi_araddr   (lite_araddr),     .s_axi_arprot   (lite_arprot),      .s_axi_arvalid  (lite_arvalid),
    .s_axi_arready  (lite_arready),
    .s_axi_rdata    (lite_rdata),      .s_axi_rresp    (lite_rresp),       .s_axi_rvalid   (lite_rvalid),
    .s_axi_rready   (lite_rready),
    .m_axi_aclk     (core_clk),
    .m_axi_aresetn  (!core_rst_q),
    .m_axi_awaddr   (csr_awaddr),      .m_axi_awprot   (csr_awprot),       .m_axi_awvalid  (csr_awvalid),
    .m_axi_awready  (csr_awready),
    .m_axi_wdata    (csr_wdata),       .m_axi_wstrb    (csr_wstrb),        .m_axi_wvalid   (csr_wvalid),
    .m_axi_wready   (csr_wready),
    .m_axi_bresp    (csr_bresp),       .m_axi_bvalid   (csr_bvalid),       .m_axi_bready   (csr_bready),
    .m_axi_araddr   (csr_araddr),      .m_axi_arprot   (csr_arprot),       .m_axi_arvalid  (csr_arvalid),
    .m_axi_arready  (csr_arready),
    .m_axi_rdata    (csr_rdata),       .m_axi_rresp    (csr_rresp),        .m_axi_rvalid   (csr_rvalid),
    .m_axi_rready   (csr_rready)
  );

  // ============================================================ host path
  axi_cc_host u_cc_host (
    .s_axi_aclk     (core_clk),
    .s_axi_aresetn  (!core_rst_q),
    .s_axi_awid     (host_awid),       .s_axi_awaddr   (host_awaddr),      .s_axi_awlen    (host_awlen),
    .s_axi_awsize   (host_awsize),     .s_axi_awburst  (host_awburst),     .s_axi_awlock   (1'b0),
    .s_axi_awcache  (4'd0),            .s_axi_awprot   (3'd0),             .s_axi_awregion (4'd0),
    .s_axi_awqos    (4'd0),            .s_axi_awvalid  (host_awvalid),     .s_axi_awready  (host_awready),
    .s_axi_wdata    (host_wdata),      .s_axi_wstrb    (host_wstrb),       .s_axi_wlast    (host_wlast),
    .s_axi_wvalid   (host_wvalid),     .s_axi_wready   (host_wready),
    .s_axi_bid      (host_bid),        .s_axi_bresp    (host_bresp),       .s_axi_bvalid   (host_bvalid),
    .s_axi_bready   (host_bready),
    .s_axi_arid     (host_arid),       .s_axi_araddr   (host_araddr),      .s_axi_arlen    (host_arlen),
    .s_axi_arsize   (host_arsize),     .s_axi_arburst  (host_arburst),     .s_axi_arlock   (1'b0),
    .s_axi_arcache  (4'd0),            .s_axi_arprot   (3'd0),             .s_axi_arregion (4'd0),
    .s_axi_arqos    (4'd0),            .s_axi_arvalid  (host_arvalid),     .s_axi_arready  (host_arready),
    .s_axi_rid      (host_rid),        .s_axi_rdata    (host_rdata),       .s_axi_rresp    (host_rresp),
    .s_axi_rlast    (host_rlast),      .s_axi_rvalid   (host_rvalid),      .s_axi_rready   (host_rready),
    .m_axi_aclk     (pcie_clk),
    .m_axi_aresetn  (pcie_side_rst_n),
    .m_axi_awid     (pcie_awid),       .m_axi_awaddr   (pcie_awaddr),      .m_axi_awlen    (pcie_awlen),
    .m_axi_awsize   (pcie_awsize),     .m_axi_awburst  (pcie_awburst),     .m_axi_awlock   (unused_pcie_awlock),
    .m_axi_awcache  (unused_pcie_awcache), .m_axi_awprot (unused_pcie_awprot), .m_axi_awregion (pcie_awregion),
    .m_axi_awqos    (unused_pcie_awqos),   .m_axi_awvalid (pcie_awvalid),  .m_axi_awready  (pcie_awready),
    .m_axi_wdata    (pcie_wdata),      .m_axi_wstrb    (pcie_wstrb),       .m_axi_wlast    (pcie_wlast),
    .m_axi_wvalid   (pcie_wvalid),     .m_axi_wready   (pcie_wready),
    .m_axi_bid      (pcie_bid),        .m_axi_bresp    (pcie_bresp),       .m_axi_bvalid   (pcie_bvalid),
    .m_axi_bready   (pcie_bready),
    .m_axi_arid     (pcie_arid),       .m_axi_araddr   (pcie_araddr),      .m_axi_arlen    (pcie_arlen),
    .m_axi_arsize   (pcie_arsize),     .m_axi_arburst  (pcie_arburst),     .m_axi_arlock   (unused_pcie_arlock),
    .m_axi_arcache  (unused_pcie_arcache), .m_axi_arprot (unused_pcie_arprot), .m_axi_arregion (pcie_arregion),
    .m_axi_arqos    (unused_pcie_arqos),   .m_axi_arvalid (pcie_arvalid),  .m_axi_arready  (pcie_arready),
    .m_axi_rid      (pcie_rid),        .m_axi_rdata    (pcie_rdata),       .m_axi_rresp    (pcie_rresp),
    .m_axi_rlast    (pcie_rlast),      .m_axi_rvalid   (pcie_rvalid),      .m_axi_rready   (pcie_rready)
  );

  // ============================================================ card memory: DDR4 C0
  axi_cc_card u_cc_card (
    .s_axi_aclk     (core_clk),
    .s_axi_aresetn  (!core_rst_q),
    .s_axi_awid     (card_awid),       .s_axi_awaddr   (card_awaddr),      .s_axi_awlen    (card_awlen),
    .s_axi_awsize   (card_awsize),     .s_axi_awburst  (card_awburst),     .s_axi_awlock   (1'b0),
    .s_axi_awcache  (4'd0),            .s_axi_awprot   (3'd0),             .s_axi_awregion (4'd0),
    .s_axi_awqos    (4'd0),            .s_axi_awvalid  (card_awvalid),     .s_axi_awready  (card_awready),
    .s_axi_wdata    (card_wdata),      .s_axi_wstrb    (card_wstrb),       .s_axi_wlast    (card_wlast),
    .s_axi_wvalid   (card_wvalid),     .s_axi_wready   (card_wready),
    .s_axi_bid      (card_bid),        .s_axi_bresp    (card_bresp),       .s_axi_bvalid   (card_bvalid),
    .s_axi_bready   (card_bready),
    .s_axi_arid     (card_arid),       .s_axi_araddr   (card_araddr),      .s_axi_arlen    (card_arlen),
    .s_axi_arsize   (card_arsize),     .s_axi_arburst  (card_arburst),     .s_axi_arlock   (1'b0),
    .s_axi_arcache  (4'd0),            .s_axi_arprot   (3'd0),             .s_axi_arregion (4'd0),
    .s_axi_arqos    (4'd0),            .s_axi_arvalid  (card_arvalid),     .s_axi_arready  (card_arready),
    .s_axi_rid      (card_rid),        .s_axi_rdata    (card_rdata),       .s_axi_rresp    (card_rresp),
    .s_axi_rlast    (card_rlast),      .s_axi_rvalid   (card_rvalid),      .s_axi_rready   (card_rready),
    .m_axi_aclk     (ddr_clk),
    .m_axi_aresetn  (ddr_side_rst_n),
    .m_axi_awid     (mem_awid),        .m_axi_awaddr   (mem_awaddr),       .m_axi_awlen    (mem_awlen),
    .m_axi_awsize   (mem_awsize),      .m_axi_awburst  (mem_awburst),      .m_axi_awlock   (mem_awlock),
    .m_axi_awcache  (mem_awcache),     .m_axi_awprot   (mem_awprot),       .m_axi_awregion (unused_mem_awregion),
    .m_axi_awqos    (mem_awqos),       .m_axi_awvalid  (mem_awvalid),      .m_axi_awready  (mem_awready),
    .m_axi_wdata    (mem_wdata),       .m_axi_wstrb    (mem_wstrb),        .m_axi_wlast    (mem_wlast),
    .m_axi_wvalid   (mem_wvalid),      .m_axi_wready   (mem_wready),
    .m_axi_bid      (mem_bid),         .m_axi_bresp    (mem_bresp),        .m_axi_bvalid   (mem_bvalid),
    .m_axi_bready   (mem_bready),
    .m_axi_arid     (mem_arid),        .m_axi_araddr   (mem_araddr),       .m_axi_arlen    (mem_arlen),
    .m_axi_arsize   (mem_arsize),      .m_axi_arburst  (mem_arburst),      .m_axi_arlock   (mem_arlock),
    .m_axi_arcache  (mem_arcache),     .m_axi_arprot   (mem_arprot),       .m_axi_arregion (unused_mem_arregion),
    .m_axi_arqos    (mem_arqos),       .m_axi_arvalid  (mem_arvalid),      .m_axi_arready  (mem_arready),
    .m_axi_rid      (mem_rid),         .m_axi_rdata    (mem_rdata),        .m_axi_rresp    (mem_rresp),
    .m_axi_rlast    (mem_rlast),       .m_axi_rvalid   (mem_rvalid),       .m_axi_rready   (mem_rready)
  );

  ddr4_0 u_ddr4_c0 (
    .sys_rst                 (!pcie_perst_n),
    .c0_sys_clk_p            (ddr4_c0_clk_p),
    .c0_sys_clk_n            (ddr4_c0_clk_n),
    .c0_ddr4_act_n           (ddr4_c0_act_n),
    .c0_ddr4_adr             (ddr4_c0_adr),
    .c0_ddr4_ba              (ddr4_c0_ba),
    .c0_ddr4_bg              (ddr4_c0_bg),
    .c0_ddr4_cke             (ddr4_c0_cke),
    .c0_ddr4_odt             (ddr4_c0_odt),
    .c0_ddr4_cs_n            (ddr4_c0_cs_n),
    .c0_ddr4_ck_t            (ddr4_c0_ck_t),
    .c0_ddr4_ck_c            (ddr4_c0_ck_c),
    .c0_ddr4_reset_n         (ddr4_c0_reset_n),
    .c0_ddr4_parity          (ddr4_c0_parity),
    .c0_ddr4_dq              (ddr4_c0_dq),
    .c0_ddr4_dqs_c           (ddr4_c0_dqs_c),
    .c0_ddr4_dqs_t           (ddr4_c0_dqs_t),
    .c0_init_calib_complete  (ddr_calib_done),
    .c0_ddr4_ui_clk          (ddr_clk),
    .c0_ddr4_ui_clk_sync_rst (ddr_ui_rst),
    .dbg_clk                 (unused_ddr_dbg_clk),
    // ECC registers: not used (the ECC corrects single-bit errors by itself).
    .c0_ddr4_s_axi_ctrl_awvalid (1'b0),  .c0_ddr4_s_axi_ctrl_awready (unused_ctrl_awready),
    .c0_ddr4_s_axi_ctrl_awaddr  (32'd0), .c0_ddr4_s_axi_ctrl_wvalid  (1'b0),
    .c0_ddr4_s_axi_ctrl_wready  (unused_ctrl_wready), .c0_ddr4_s_axi_ctrl_wdata (32'd0),
    .c0_ddr4_s_axi_ctrl_bvalid  (unused_ctrl_bvalid), .c0_ddr4_s_axi_ctrl_bready (1'b1),
    .c0_ddr4_s_axi_ctrl_bresp   (unused_ctrl_bresp),  .c0_ddr4_s_axi_ctrl_arvalid (1'b0),
    .c0_ddr4_s_axi_ctrl_arready (unused_ctrl_arready), .c0_ddr4_s_axi_ctrl_araddr (32'd0),
    .c0_ddr4_s_axi_ctrl_rvalid  (unused_ctrl_rvalid), .c0_ddr4_s_axi_ctrl_rready (1'b1),
    .c0_ddr4_s_axi_ctrl_rdata   (unused_ctrl_rdata),  .c0_ddr4_s_axi_ctrl_rresp  (unused_ctrl_rresp),
    .c0_ddr4_interrupt          (unused_ecc_irq),
    .c0_ddr4_aresetn         (ddr_side_rst_n),
    .c0_ddr4_s_axi_awid    (mem_awid),    .c0_ddr4_s_axi_awaddr  (mem_awaddr),  .c0_ddr4_s_axi_awlen   (mem_awlen),
    .c0_ddr4_s_axi_awsize  (mem_awsize),  .c0_ddr4_s_axi_awburst (mem_awburst), .c0_ddr4_s_axi_awlock  (mem_awlock),
    .c0_ddr4_s_axi_awcache (mem_awcache), .c0_ddr4_s_axi_awprot  (mem_awprot),  .c0_ddr4_s_axi_awqos   (mem_awqos),
    .c0_ddr4_s_axi_awvalid (mem_awvalid), .c0_ddr4_s_axi_awready (mem_awready),
    .c0_ddr4_s_axi_wdata   (mem_wdata),   .c0_ddr4_s_axi_wstrb   (mem_wstrb),   .c0_ddr4_s_axi_wlast   (mem_wlast),
    .c0_ddr4_s_axi_wvalid  (mem_wvalid),  .c0_ddr4_s_axi_wready  (mem_wready),
    .c0_ddr4_s_axi_bid     (mem_bid),     .c0_ddr4_s_axi_bresp   (mem_bresp),   .c0_ddr4_s_axi_bvalid  (mem_bvalid),
    .c0_ddr4_s_axi_bready  (mem_bready),
    .c0_ddr4_s_axi_arid    (mem_arid),    .c0_ddr4_s_axi_araddr  (mem_araddr),  .c0_ddr4_s_axi_arlen   (mem_arlen),
    .c0_ddr4_s_axi_arsize  (mem_arsize),  .c0_ddr4_s_axi_arburst (mem_arburst), .c0_ddr4_s_axi_arlock  (mem_arlock),
    .c0_ddr4_s_axi_arcache (mem_arcache), .c0_ddr4_s_axi_arprot  (mem_arprot),  .c0_ddr4_s_axi_arqos   (mem_arqos),
    .c0_ddr4_s_axi_arvalid (mem_arvalid), .c0_ddr4_s_axi_arready (mem_arready),
    .c0_ddr4_s_axi_rid     (mem_rid),     .c0_ddr4_s_axi_rdata   (mem_rdata),   .c0_ddr4_s_axi_rresp   (mem_rresp),
    .c0_ddr4_s_axi_rlast   (mem_rlast),   .c0_ddr4_s_axi_rvalid  (mem_rvalid),  .c0_ddr4_s_axi_rready  (mem_rready),
    .dbg_bus                 (unused_ddr_dbg_bus)
  );

  // ============================================================ interrupts
  // irq_req_o is a level held until acknowledged: synchronized into the PCIe
  // clock as usr_irq_req (which the bridge wants held until its ack). Each
  // usr_irq_ack pulse comes back to the core clock as one pulse.
  xpm_cdc_array_single #(.DEST_SYNC_FF(4), .INIT_SYNC_FF(0), .SIM_ASSERT_CHK(0), .SRC_INPUT_REG(1), .WIDTH(2))
    u_irq_req (.src_clk(core_clk), .src_in(core_irq_req), .dest_clk(pcie_clk), .dest_out(pcie_irq_req));

  for (genvar i = 0; i < 2; i++) begin : g_irq_ack
    xpm_cdc_pulse #(.DEST_SYNC_FF(4), .INIT_SYNC_FF(0), .REG_OUTPUT(1), .RST_USED(0), .SIM_ASSERT_CHK(0))
      u_ack (.src_clk(pcie_clk), .src_rst(1'b0), .src_pulse(pcie_irq_ack[i]),
             .dest_clk(core_clk), .dest_rst(1'b0), .dest_pulse(core_irq_ack[i]));
  end

  // ============================================================ the core
  farnn_core #(
    .NumPe          (NumPe),
    .NumChains      (NumChains),
    .WeightDepth    (WeightDepth),
    .WeightUram     (WeightUram),
    .NumBanks       (NumBanks),
    .WeightLanes    (WeightLanes),
    .MaxHidden      (MaxHidden),
    .MaxBatch       (MaxBatch),
    .MulLatency     (MulLatency),
    .AddLatency     (AddLatency),
    .StoreAddrWidth (StoreAddrWidth),
    .BuildId        (BuildId),
    .ClockKhz       (ClockKhz)
  ) u_core (
    .clk_i (core_clk),
    .rst_i (core_rst_q),
    .s_axil_awaddr  (csr_awaddr),  .s_axil_awprot  (csr_awprot),  .s_axil_awvalid (csr_awvalid),
    .s_axil_awready (csr_awready),
    .s_axil_wdata   (csr_wdata),   .s_axil_wstrb   (csr_wstrb),   .s_axil_wvalid  (csr_wvalid),
    .s_axil_wready  (csr_wready),
    .s_axil_bresp   (csr_bresp),   .s_axil_bvalid  (csr_bvalid),  .s_axil_bready  (csr_bready),
    .s_axil_araddr  (csr_araddr),  .s_axil_arprot  (csr_arprot),  .s_axil_arvalid (csr_arvalid),
    .s_axil_arready (csr_arready),
    .s_axil_rdata   (csr_rdata),   .s_axil_rresp   (csr_rresp),   .s_axil_rvalid  (csr_rvalid),
    .s_axil_rready  (csr_rready),
    .m_axi_host_arid    (host_arid),    .m_axi_host_araddr  (host_araddr),  .m_axi_host_arlen   (host_arlen),
    .m_axi_host_arsize  (host_arsize),  .m_axi_host_arburst (host_arburst), .m_axi_host_arvalid (host_arvalid),
    .m_axi_host_arready (host_arready),
    .m_axi_host_rid     (host_rid),     .m_axi_host_rdata   (host_rdata),   .m_axi_host_rresp   (host_rresp),
    .m_axi_host_rlast   (host_rlast),   .m_axi_host_rvalid  (host_rvalid),  .m_axi_host_rready  (host_rready),
    .m_axi_host_awid    (host_awid),    .m_axi_host_awaddr  (host_awaddr),  .m_axi_host_awlen   (host_awlen),
    .m_axi_host_awsize  (host_awsize),  .m_axi_host_awburst (host_awburst), .m_axi_host_awvalid (host_awvalid),
    .m_axi_host_awready (host_awready),
    .m_axi_host_wdata   (host_wdata),   .m_axi_host_wstrb   (host_wstrb),   .m_axi_host_wlast   (host_wlast),
    .m_axi_host_wvalid  (host_wvalid),  .m_axi_host_wready  (host_wready),
    .m_axi_host_bid     (host_bid),     .m_axi_host_bresp   (host_bresp),   .m_axi_host_bvalid  (host_bvalid),
    .m_axi_host_bready  (host_bready),
    .m_axi_card_arid    (card_arid),    .m_axi_card_araddr  (card_araddr),  .m_axi_card_arlen   (card_arlen),
    .m_axi_card_arsize  (card_arsize),  .m_axi_card_arburst (card_arburst), .m_axi_card_arvalid (card_arvalid),
    .m_axi_card_arready (card_arready),
    .m_axi_card_rid     (card_rid),     .m_axi_card_rdata   (card_rdata),   .m_axi_card_rresp   (card_rresp),
    .m_axi_card_rlast   (card_rlast),   .m_axi_card_rvalid  (card_rvalid),  .m_axi_card_rready  (card_rready),
    .m_axi_card_awid    (card_awid),    .m_axi_card_awaddr  (card_awaddr),  .m_axi_card_awlen   (card_awlen),
    .m_axi_card_awsize  (card_awsize),  .m_axi_card_awburst (card_awburst), .m_axi_card_awvalid (card_awvalid),
    .m_axi_card_awready (card_awready),
    .m_axi_card_wdata   (card_wdata),   .m_axi_card_wstrb   (card_wstrb),   .m_axi_card_wlast   (card_wlast),
    .m_axi_card_wvalid  (card_wvalid),  .m_axi_card_wready  (card_wready),
    .m_axi_card_bid     (card_bid),     .m_axi_card_bresp   (card_bresp),   .m_axi_card_bvalid  (card_bvalid),
    .m_axi_card_bready  (card_bready),
    .irq_req_o (core_irq_req),
    .irq_ack_i (core_irq_ack)
  );

`ifndef SYNTHESIS
  initial begin
    if (StoreAddrWidth != 34) $error("fpga_u250: DDR4 C0 takes 34-bit AXI addresses (ddr4_0.tcl), not %0d", StoreAddrWidth);
  end
`endif

endmodule

`default_nettype wire
