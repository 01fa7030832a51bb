# axi_cc_card: AXI Clock Converter (PG059) from farnn_core's card master (core
# clock) to the DDR4 controller's AXI slave (c0_ddr4_ui_clk, 300 MHz): AXI4,
# 512-bit data, 34-bit addresses (16 GiB of DDR4 C0), 4-bit IDs, asynchronous
# clocks. Runs inside fpga/common/vivado/create_project.tcl.
create_ip -name axi_clock_converter -vendor xilinx.com -library ip -module_name axi_cc_card

set_property -dict [list \
    CONFIG.PROTOCOL    {AXI4} \
    CONFIG.DATA_WIDTH  {512} \
    CONFIG.ADDR_WIDTH  {34} \
    CONFIG.ID_WIDTH    {4} \
    CONFIG.ACLK_ASYNC  {1} \
] [get_ips axi_cc_card]
