# Constraints of the Alveo U250 board top fpga_u250 (fpga/u250/rtl/fpga_u250.sv),
# part xcu250-figd2104-2L-e, board part xilinx.com:au250.
#
# Pins. The IP place most pins through the board part's interfaces (Vivado's
# board flow), so this file holds only what no IP places. Ports placed by IP
# board interfaces (fpga/common/check_xdc_ports.py checks that every port of
# the top is either listed here or constrained below):
# board-flow ports: pcie_rx_p pcie_rx_n pcie_tx_p pcie_tx_n
#   (xdma_0: PCIE_BOARD_INTERFACE pci_express_x16, GTY quad 227)
# board-flow ports: ddr4_c0_clk_p ddr4_c0_clk_n ddr4_c0_act_n ddr4_c0_adr ddr4_c0_ba ddr4_c0_bg
# board-flow ports: ddr4_c0_cke ddr4_c0_odt ddr4_c0_cs_n ddr4_c0_ck_t ddr4_c0_ck_c ddr4_c0_reset_n
# board-flow ports: ddr4_c0_parity ddr4_c0_dq ddr4_c0_dqs_t ddr4_c0_dqs_c
#   (ddr4_0: C0_DDR4_BOARD_INTERFACE ddr4_sdram_c0, C0_CLOCK_BOARD_INTERFACE default_300mhz_clk0)
# board-flow ports: clk_300_1_p clk_300_1_n
#   (clk_core: CLK_IN1_BOARD_INTERFACE default_300mhz_clk1)
# Every PACKAGE_PIN below is from the U250 board files (xilinx.com:au250 board
# part, part0_pins.xml of board file version 1.3), where the board part names
# the pin as given in each comment.

# ---- configuration: 1.8 V configuration banks, quad-SPI flash (the settings of
# the public Corundum AU250 design, corundum/corundum fpga/mqnic/AU250/*/fpga.xdc)
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property CFGBVS GND [current_design]
set_property BITSTREAM.GENERAL.COMPRESS TRUE [current_design]
set_property BITSTREAM.CONFIG.CONFIGRATE 63.8 [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR YES [current_design]
set_property BITSTREAM.CONFIG.SPI_FALL_EDGE YES [current_design]
set_property BITSTREAM.CONFIG.UNUSEDPIN PULLUP [current_design]

# ---- PCIe reference clock, 100 MHz from the edge connector (board part: pcie_mgt_clkp /
# pcie_mgt_clkn of interface pcie_refclk), into the IBUFDS_GTE4 of the top
set_property PACKAGE_PIN AM11 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN AM10 [get_ports pcie_refclk_n]
create_clock -name pcie_refclk -period 10.000 [get_ports pcie_refclk_p]

# ---- PERST# from the edge connector (board part: pcie_perstn_rst of interface
# pcie_perstn, LVCMOS12). Asynchronous: into the XDMA's sys_rst_n and the DDR4
# controller's reset, both of which synchronize it.
set_property PACKAGE_PIN BD21 [get_ports pcie_perst_n]
set_property IOSTANDARD LVCMOS12 [get_ports pcie_perst_n]
set_property PULLUP true [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]

# ---- user LEDs (board part: GPIO_LED_0_LS .. GPIO_LED_2_LS of interface led_3bits,
# LVCMOS12, drive 8); status only, so no output timing
set_property -dict {PACKAGE_PIN BC21 IOSTANDARD LVCMOS12 DRIVE 8} [get_ports {led[0]}]
set_property -dict {PACKAGE_PIN BB21 IOSTANDARD LVCMOS12 DRIVE 8} [get_ports {led[1]}]
set_property -dict {PACKAGE_PIN BA20 IOSTANDARD LVCMOS12 DRIVE 8} [get_ports {led[2]}]
set_false_path -to [get_ports {led[*]}]

# ---- clocks and crossings
# The IP constrain their own clocks: the XDMA its GT-derived axi_aclk (250 MHz),
# the DDR4 controller c0_sys_clk (300 MHz) and its ui_clk, the Clocking Wizard
# its input (300 MHz) and the core clock it makes. The core clock's period is
# the timing target: the `make synth` estimate (docs/capacity.md), set in
# clk_core.tcl and checked by fpga/common/vivado/build.tcl.
# The three domains (PCIe, DDR, core) meet only in the AXI clock converters and
# the XPM CDC macros, which carry their own datapath-only delay constraints.
# There is deliberately no set_clock_groups -asynchronous: it would override
# those constraints (gray-coded FIFO pointers would go unconstrained).
