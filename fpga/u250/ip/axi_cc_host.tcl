# axi_cc_host: AXI Clock Converter (PG059) from farnn_core's host master (core
# clock) to the XDMA bridge slave s_axib_* (axi_aclk, 250 MHz): AXI4, 512-bit
# data, 64-bit addresses, 4-bit IDs, asynchronous clocks. Runs inside
# fpga/common/vivado/create_project.tcl.
create_ip -name axi_clock_converter -vendor xilinx.com -library ip -module_name axi_cc_host

set_property -dict [list \
    CONFIG.PROTOCOL    {AXI4} \
    CONFIG.DATA_WIDTH  {512} \
    CONFIG.ADDR_WIDTH  {64} \
    CONFIG.ID_WIDTH    {4} \
    CONFIG.ACLK_ASYNC  {1} \
] [get_ips axi_cc_host]
