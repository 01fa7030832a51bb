# clk_core: the core clock of the U250 board top. Clocking Wizard (PG065), one
# MMCM from the board's 300 MHz default_300mhz_clk1 (a reference no other block
# uses; pins from the board part) to the frequency `make synth` estimates for
# farnn_core: $farnn_clock_mhz, set by create_project.tcl from
# fpga/common/board_params.py (docs/capacity.md). The MMCM output's period is
# the core's timing target; build.tcl checks that it equals the estimate.
create_ip -name clk_wiz -vendor xilinx.com -library ip -module_name clk_core

set_property -dict [list \
    CONFIG.CLK_IN1_BOARD_INTERFACE     {default_300mhz_clk1} \
    CONFIG.USE_BOARD_FLOW              {true} \
    CONFIG.PRIM_SOURCE                 {Differential_clock_capable_pin} \
    CONFIG.PRIM_IN_FREQ                {300.000} \
    CONFIG.PRIMITIVE                   {MMCM} \
    CONFIG.NUM_OUT_CLKS                {1} \
    CONFIG.CLKOUT1_REQUESTED_OUT_FREQ  [format %.3f $farnn_clock_mhz] \
    CONFIG.USE_RESET                   {false} \
    CONFIG.USE_LOCKED                  {true} \
] [get_ips clk_core]
