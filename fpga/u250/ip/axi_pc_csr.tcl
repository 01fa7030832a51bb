# axi_pc_csr: AXI Protocol Converter (PG059), second step of the register path:
# 32-bit AXI4 without IDs (from axi_dwc_csr) to AXI4-Lite, in axi_aclk; a burst
# becomes single AXI4-Lite transfers (the driver issues 32-bit accesses only).
# Runs inside fpga/common/vivado/create_project.tcl.
create_ip -name axi_protocol_converter -vendor xilinx.com -library ip -module_name axi_pc_csr

set_property -dict [list \
    CONFIG.SI_PROTOCOL  {AXI4} \
    CONFIG.MI_PROTOCOL  {AXI4LITE} \
    CONFIG.DATA_WIDTH   {32} \
    CONFIG.ADDR_WIDTH   {12} \
    CONFIG.ID_WIDTH     {0} \
] [get_ips axi_pc_csr]
