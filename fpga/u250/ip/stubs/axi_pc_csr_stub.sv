// Black-box stub of axi_pc_csr: an AXI Protocol Converter (axi_protocol_converter,
// PG059) on the register path: 32-bit AXI4 (no IDs) to AXI4-Lite, in the PCIe
// clock domain. Port names as PG059 (aclk, aresetn, s_axi_*, m_axi_*). For
// linting (Verilator) only: Vivado generates the real module from
// fpga/u250/ip/axi_pc_csr.tcl.
`default_nettype none

module axi_pc_csr (
  // Clock and reset (the PCIe axi_aclk).
  input  logic           aclk,
  input  logic           aresetn,
  // Slave side: AXI4, 32 bits, from the data width converter.
  input  logic [11:0]    s_axi_awaddr,
  input  logic [7:0]     s_axi_awlen,
  input  logic [2:0]     s_axi_awsize,
  input  logic [1:0]     s_axi_awburst,
  input  logic [0:0]     s_axi_awlock,
  input  logic [3:0]     s_axi_awcache,
  input  logic [2:0]     s_axi_awprot,
  input  logic [3:0]     s_axi_awregion,
  input  logic [3:0]     s_axi_awqos,
  input  logic           s_axi_awvalid,
  output logic           s_axi_awready,
  input  logic [31:0]    s_axi_wdata,
  input  logic [3:0]     s_axi_wstrb,
  input  logic           s_axi_wlast,
  input  logic           s_axi_wvalid,
  output logic           s_axi_wready,
  output logic [1:0]     s_axi_bresp,
  output logic           s_axi_bvalid,
  input  logic           s_axi_bready,
  input  logic [11:0]    s_axi_araddr,
  input  logic [7:0]     s_axi_arlen,
  input  logic [2:0]     s_axi_arsize,
  input  logic [1:0]     s_axi_arburst,
  input  logic [0:0]     s_axi_arlock,
  input  logic [3:0]     s_axi_arcache,
  input  logic [2:0]     s_axi_arprot,
  input  logic [3:0]     s_axi_arregion,
  input  logic [3:0]     s_axi_arqos,
  input  logic           s_axi_arvalid,
  output logic           s_axi_arready,
  output logic [31:0]    s_axi_rdata,
  output logic [1:0]     s_axi_rresp,
  output logic           s_axi_rlast,
  output logic           s_axi_rvalid,
  input  logic           s_axi_rready,
  // Master side: AXI4-Lite, to the clock converter.
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
