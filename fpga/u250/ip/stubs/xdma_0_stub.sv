// Black-box stub of xdma_0: the DMA/Bridge Subsystem for PCI Express (XDMA) in
// AXI Bridge mode, as fpga/u250/ip/xdma_0.tcl configures it (Gen3 x16, 512-bit
// AXI at 250 MHz, 64-bit AXI addresses, AXI IDs of 4 bits, MSI with 2 user
// interrupts, no AXI4-Lite slave for the bridge registers). For Verilator lint
// only: Vivado generates the real module from the Tcl at build time. Port names
// and directions follow the bridge-mode port tables of PG195 / PG194 (global
// signals, AXI4 bridge master m_axib_*, AXI4 bridge slave s_axib_*, user
// interrupts usr_irq_req / usr_irq_ack, msi_enable); the flow compares this
// list with the generated instantiation template (fpga/common/compare_stub.py).
`default_nettype none

module xdma_0 (
  // PCIe reference clock (IBUFDS_GTE4: O -> sys_clk_gt, ODIV2 -> sys_clk) and PERST#.
  input  logic           sys_clk,
  input  logic           sys_clk_gt,
  input  logic           sys_rst_n,
  // Link status and serial lanes.
  output logic [5:0]     cfg_ltssm_state,
  output logic           user_lnk_up,
  output logic [15:0]    pci_exp_txp,
  output logic [15:0]    pci_exp_txn,
  input  logic [15:0]    pci_exp_rxp,
  input  logic [15:0]    pci_exp_rxn,
  // AXI clock and resets (axi_aclk: 250 MHz user clock derived from the GT).
  output logic           axi_aclk,
  output logic           axi_aresetn,
  output logic           axi_ctl_aresetn,
  // User interrupts: usr_irq_req[i] held until usr_irq_ack[i] (one pulse per MSI).
  input  logic [1:0]     usr_irq_req,
  output logic [1:0]     usr_irq_ack,
  output logic           msi_enable,
  output logic [2:0]     msi_vector_width,
  // AXI4 bridge master: host accesses to BAR0.
  output logic [3:0]     m_axib_awid,
  output logic [63:0]    m_axib_awaddr,
  output logic [7:0]     m_axib_awlen,
  output logic [2:0]     m_axib_awsize,
  output logic [1:0]     m_axib_awburst,
  output logic           m_axib_awlock,
  output logic [3:0]     m_axib_awcache,
  output logic [2:0]     m_axib_awprot,
  output logic           m_axib_awvalid,
  input  logic           m_axib_awready,
  output logic [511:0]   m_axib_wdata,
  output logic [63:0]    m_axib_wstrb,
  output logic           m_axib_wlast,
  output logic           m_axib_wvalid,
  input  logic           m_axib_wready,
  input  logic [3:0]     m_axib_bid,
  input  logic [1:0]     m_axib_bresp,
  input  logic           m_axib_bvalid,
  output logic           m_axib_bready,
  output logic [3:0]     m_axib_arid,
  output logic [63:0]    m_axib_araddr,
  output logic [7:0]     m_axib_arlen,
  output logic [2:0]     m_axib_arsize,
  output logic [1:0]     m_axib_arburst,
  output logic           m_axib_arlock,
  output logic [3:0]     m_axib_arcache,
  output logic [2:0]     m_axib_arprot,
  output logic           m_axib_arvalid,
  input  logic           m_axib_arready,
  input  logic [3:0]     m_axib_rid,
  input  logic [511:0]   m_axib_rdata,
  input  logic [1:0]     m_axib_rresp,
  input  logic           m_axib_rlast,
  input  logic           m_axib_rvalid,
  output logic           m_axib_rready,
  // Bridge interrupt output (bridge error and status events).
  output logic           interrupt_out,
  // AXI4 bridge slave: fabric reads and writes of PCIe memory (host and GPU).
  input  logic [3:0]     s_axib_awid,
  input  logic [63:0]    s_axib_awaddr,
  input  logic [7:0]     s_axib_awlen,
  input  logic [2:0]     s_axib_awsize,
  input  logic [1:0]     s_axib_awburst,
  input  logic [3:0]     s_axib_awregion,
  input  logic           s_axib_awvalid,
  output logic           s_axib_awready,
  input  logic [511:0]   s_axib_wdata,
  input  logic [63:0]    s_axib_wstrb,
  input  logic           s_axib_wlast,
  input  logic           s_axib_wvalid,
  output logic           s_axib_wready,
  output logic [3:0]     s_axib_bid,
  output logic [1:0]     s_axib_bresp,
  output logic           s_axib_bvalid,
  input  logic           s_axib_bready,
  input  logic [3:0]     s_axib_arid,
  input  logic [63:0]    s_axib_araddr,
  input  logic [7:0]     s_axib_arlen,
  input  logic [2:0]     s_axib_arsize,
  input  logic [1:0]     s_axib_arburst,
  input  logic [3:0]     s_axib_arregion,
  input  logic           s_axib_arvalid,
  output logic           s_axib_arready,
  output logic [3:0]     s_axib_rid,
  output logic [511:0]   s_axib_rdata,
  output logic [1:0]     s_axib_rresp,
  output logic           s_axib_rlast,
  output logic           s_axib_rvalid,
  input  logic           s_axib_rready
);
endmodule

`default_nettype wire
