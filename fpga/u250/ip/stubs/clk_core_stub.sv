// Black-box stub of clk_core: the Clocking Wizard (clk_wiz, PG065) MMCM that
// makes the core clock from the board's 300 MHz default_300mhz_clk1 reference,
// at the frequency `make synth` estimates (fpga/u250/ip/clk_core.tcl sets it
// from fpga/common/board_params.py). For linting only.
`default_nettype none

module clk_core (
  // Differential reference (pins placed by the board interface).
  input  logic           clk_in1_p,
  input  logic           clk_in1_n,
  // Core clock and MMCM lock.
  output logic           clk_out1,
  output logic           locked
);
endmodule

`default_nettype wire
