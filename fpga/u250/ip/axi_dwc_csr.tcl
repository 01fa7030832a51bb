# axi_dwc_csr: AXI Data Width Converter (PG059), first step of the register
# path: the XDMA bridge master m_axib_* (BAR0 accesses; 512-bit AXI4, 4-bit IDs,
# axi_aclk) down to 32 bits. 12-bit addresses: BAR0 is 4 KiB and maps to AXI
# address 0. Runs inside fpga/common/vivado/create_project.tcl.
create_ip -name axi_dwidth_converter -vendor xilinx.com -library ip -module_name axi_dwc_csr

set_property -dict [list \
    CONFIG.PROTOCOL       {AXI4} \
    CONFIG.SI_DATA_WIDTH  {512} \
    CONFIG.MI_DATA_WIDTH  {32} \
    CONFIG.ADDR_WIDTH     {12} \
    CONFIG.SI_ID_WIDTH    {4} \
] [get_ips axi_dwc_csr]
