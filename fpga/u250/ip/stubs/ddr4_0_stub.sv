// Black-box stub of ddr4_0: the DDR4 SDRAM memory controller (MIG, PG150) for
// channel C0 of the Alveo U250 (one 16 GiB DDR4-2400 RDIMM, 72 bits with ECC,
// 300 MHz reference clock), AXI4 slave of 512 bits with 34-bit addresses and
// 4-bit IDs, as fpga/u250/ip/ddr4_0.tcl configures it from the board part's
// ddr4_sdram_c0 interface. For linting only: Vivado generates the real
// module. Port names follow PG150 (c0_sys_clk_p/n, c0_ddr4_*, c0_ddr4_ui_clk,
// c0_ddr4_ui_clk_sync_rst, c0_init_calib_complete, c0_ddr4_aresetn,
// c0_ddr4_s_axi_*; the ECC control slave c0_ddr4_s_axi_ctrl_* and
// c0_ddr4_interrupt exist because ECC is on); the flow compares this list with
// the generated instantiation template.
`default_nettype none

module ddr4_0 (
  // Reset (asynchronous, active high) and the 300 MHz reference clock.
  input  logic           sys_rst,
  input  logic           c0_sys_clk_p,
  input  logic           c0_sys_clk_n,
  // Memory interface (pins placed by the board part's ddr4_sdram_c0 interface).
  output logic           c0_ddr4_act_n,
  output logic [16:0]    c0_ddr4_adr,
  output logic [1:0]     c0_ddr4_ba,
  output logic [1:0]     c0_ddr4_bg,
  output logic [0:0]     c0_ddr4_cke,
  output logic [0:0]     c0_ddr4_odt,
  output logic [0:0]     c0_ddr4_cs_n,
  output logic [0:0]     c0_ddr4_ck_t,
  output logic [0:0]     c0_ddr4_ck_c,
  output logic           c0_ddr4_reset_n,
  output logic           c0_ddr4_parity,
  inout  wire  [71:0]    c0_ddr4_dq,
  inout  wire  [17:0]    c0_ddr4_dqs_c,
  inout  wire  [17:0]    c0_ddr4_dqs_t,
  // Status and the user-interface clock (300 MHz for DDR4-2400 at 4:1).
  output logic           c0_init_calib_complete,
  output logic           c0_ddr4_ui_clk,
  output logic           c0_ddr4_ui_clk_sync_rst,
  output logic           dbg_clk,
  // AXI4-Lite slave of the ECC registers, and the ECC interrupt.
  input  logic           c0_ddr4_s_axi_ctrl_awvalid,
  output logic           c0_ddr4_s_axi_ctrl_awready,
  input  logic [31:0]    c0_ddr4_s_axi_ctrl_awaddr,
  input  logic           c0_ddr4_s_axi_ctrl_wvalid,
  output logic           c0_ddr4_s_axi_ctrl_wready,
  input  logic [31:0]    c0_ddr4_s_axi_ctrl_wdata,
  output logic           c0_ddr4_s_axi_ctrl_bvalid,
  input  logic           c0_ddr4_s_axi_ctrl_bready,
  output logic [1:0]     c0_ddr4_s_axi_ctrl_bresp,
  input  logic           c0_ddr4_s_axi_ctrl_arvalid,
  output logic           c0_ddr4_s_axi_ctrl_arready,
  input  logic [31:0]    c0_ddr4_s_axi_ctrl_araddr,
  output logic           c0_ddr4_s_axi_ctrl_rvalid,
  input  logic           c0_ddr4_s_axi_ctrl_rready,
  output logic [31:0]    c0_ddr4_s_axi_ctrl_rdata,
  output logic [1:0]     c0_ddr4_s_axi_ctrl_rresp,
  output logic           c0_ddr4_interrupt,
  // AXI4 slave (ui_clk domain) and its reset.
  input  logic           c0_ddr4_aresetn,
  input  logic [3:0]     c0_ddr4_s_axi_awid,
  input  logic [33:0]    c0_ddr4_s_axi_awaddr,
  input  logic [7:0]     c0_ddr4_s_axi_awlen,
  input  logic [2:0]     c0_ddr4_s_axi_awsize,
  input  logic [1:0]     c0_ddr4_s_axi_awburst,
  input  logic [0:0]     c0_ddr4_s_axi_awlock,
  input  logic [3:0]     c0_ddr4_s_axi_awcache,
  input  logic [2:0]     c0_ddr4_s_axi_awprot,
  input  logic [3:0]     c0_ddr4_s_axi_awqos,
  input  logic           c0_ddr4_s_axi_awvalid,
  output logic           c0_ddr4_s_axi_awready,
  input  logic [511:0]   c0_ddr4_s_axi_wdata,
  input  logic [63:0]    c0_ddr4_s_axi_wstrb,
  input  logic           c0_ddr4_s_axi_wlast,
  input  logic           c0_ddr4_s_axi_wvalid,
  output logic           c0_ddr4_s_axi_wready,
  output logic [3:0]     c0_ddr4_s_axi_bid,
  output logic [1:0]     c0_ddr4_s_axi_bresp,
  output logic           c0_ddr4_s_axi_bvalid,
  input  logic           c0_ddr4_s_axi_bready,
  input  logic [3:0]     c0_ddr4_s_axi_arid,
  input  logic [33:0]    c0_ddr4_s_axi_araddr,
  input  logic [7:0]     c0_ddr4_s_axi_arlen,
  input  logic [2:0]     c0_ddr4_s_axi_arsize,
  input  logic [1:0]     c0_ddr4_s_axi_arburst,
  input  logic [0:0]     c0_ddr4_s_axi_arlock,
  input  logic [3:0]     c0_ddr4_s_axi_arcache,
  input  logic [2:0]     c0_ddr4_s_axi_arprot,
  input  logic [3:0]     c0_ddr4_s_axi_arqos,
  input  logic           c0_ddr4_s_axi_arvalid,
  output logic           c0_ddr4_s_axi_arready,
  output logic [3:0]     c0_ddr4_s_axi_rid,
  output logic [511:0]   c0_ddr4_s_axi_rdata,
  output logic [1:0]     c0_ddr4_s_axi_rresp,
  output logic           c0_ddr4_s_axi_rlast,
  output logic           c0_ddr4_s_axi_rvalid,
  input  logic           c0_ddr4_s_axi_rready,
  // Debug bus of the calibration logic.
  output logic [511:0]   dbg_bus
);
endmodule

`default_nettype wire
