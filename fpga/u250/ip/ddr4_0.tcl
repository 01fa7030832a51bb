# ddr4_0: the gate store's card memory on the U250 board top. DDR4 SDRAM
# controller (MIG, PG150) for channel C0: one 16 GiB DDR4-2400 RDIMM, 72 bits
# with ECC, 300 MHz reference (default_300mhz_clk0). Memory type, timing, pins
# and the reference clock come from the board part's interfaces (ddr4_sdram_c0,
# default_300mhz_clk0); this script sets only the AXI side: 512-bit data (one
# farnn_core card-master beat), 34-bit addresses (16 GiB), 4-bit IDs. The reset
# is the board top's (PERST#), not the board's CPU_RESET button. Runs inside
# fpga/common/vivado/create_project.tcl.
create_ip -name ddr4 -vendor xilinx.com -library ip -module_name ddr4_0

set_property -dict [list \
    CONFIG.C0_DDR4_BOARD_INTERFACE   {ddr4_sdram_c0} \
    CONFIG.C0_CLOCK_BOARD_INTERFACE  {default_300mhz_clk0} \
    CONFIG.RESET_BOARD_INTERFACE     {Custom} \
    CONFIG.C0.DDR4_AxiSelection      {true} \
    CONFIG.C0.DDR4_AxiDataWidth      {512} \
    CONFIG.C0.DDR4_AxiAddressWidth   {34} \
    CONFIG.C0.DDR4_AxiIDWidth        {4} \
    CONFIG.C0.DDR4_Ecc               {true} \
    CONFIG.ADDN_UI_CLKOUT1_FREQ_HZ   {None} \
    CONFIG.Debug_Signal              {Disable} \
] [get_ips ddr4_0]
