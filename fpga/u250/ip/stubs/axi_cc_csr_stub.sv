// Black-box stub of axi_cc_csr: an AXI Clock Converter (axi_clock_converter, PG059)
// on the register path, from the PCIe clock to the core clock: AXI4-Lite,
// 32-bit data, 12-bit addresses (BAR0 is 4 KiB).
// Asynchronous clocks; port names as PG059 (s_axi_aclk / s_axi_aresetn and the
// slave s_axi_*, m_axi_aclk / m_axi_aresetn and the master m_axi_*). For
// linting (Verilator) only: Vivado generates the real module from
// fpga/u250/ip/axi_cc_csr.tcl.
`default_nettype none

module axi_cc_csr (
  // Slave side: the PCIe clock domain.
  input  logic           s_axi_aclk,
  input  logic           s_axi_aresetn,
  input  logic [11:0]    s_axi_awaddr,
  input  logic [2:0]     s_axi_awprot,
  input  logic           s_axi_awvalid,
  output logic           s_axi_awready,
  input  logic [31:0]    s_axi_wdata,
  input  logic [3:0]     s_axi_wstrb,
  input  logic           s_axi_wvalid,
  output logic           s_axi_wready,
  output logic [1:0]     s_axi_bresp,
  output logic           s_axi_bvalid,
  input  logic           s_axi_bready,
  input  logic [11:0]    s_axi_araddr,
  input  logic [2:0]     s_axi_arprot,
  input  logic           s_axi_arvalid,
  output logic           s_axi_arready,
  output logic [31:0]    s_axi_rdata,
  output logic [1:0]     s_axi_rresp,
  output logic           s_axi_rvalid,
  input  logic           s_axi_rready,
  // Master side: the core clock domain (farnn_core's s_axil_*).
  input  logic           m_axi_aclk,
  input  logic           m_axi_aresetn,
  output logic [11:0]    m_axi_awaddr,
  output logic [2:0]     m_axi_awprot,
  output logic           m_axi_awvalid,
  input  logic           m_axi_awready,
  output logic [31:0]    m_axi_wdata,
  output logic [3:0]     m_axi_wstrb,
  output logic           m_axi_wvalid,
  input  logic           m_axi_wready,
  input  logic [1:0]     m_axi_bresp,
  input  logic           m_axi_bvalid,
  output logic           m_axi_bready,
  output logic [11:0]    m_axi_araddr,
  output logic [2:0]     m_axi_arprot,
  output logic           m_axi_arvalid,
  input  logic           m_axi_arready,
  input  logic [31:0]    m_axi_rdata,
  input  logic [1:0]     m_axi_rresp,
  input  logic           m_axi_rvalid,
  output logic           m_axi_rready
);
endmodule

`default_nettype wire
