# axi_cc_csr: AXI Clock Converter (PG059), last step of the register path:
# AXI4-Lite, 32-bit data, 12-bit addresses, from axi_aclk to the core clock,
# into farnn_core's s_axil_* (BAR0). Runs inside
# fpga/common/vivado/create_project.tcl.
create_ip -name axi_clock_converter -vendor xilinx.com -library ip -module_name axi_cc_csr

set_property -dict [list \
    CONFIG.PROTOCOL    {AXI4LITE} \
    CONFIG.DATA_WIDTH  {32} \
    CONFIG.ADDR_WIDTH  {12} \
    CONFIG.ACLK_ASYNC  {1} \
] [get_ips axi_cc_csr]
