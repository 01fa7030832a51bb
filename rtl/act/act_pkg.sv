// Constants of the sigmoid / tanh unit (rtl/act/fp_act.sv) for the blocks
// that instantiate it: its fixed latency, the func_i encoding and the
// geometry of its table ROM (rtl/act/act_lut_rom.sv).
package act_pkg;

  // Cycles from an accepted input to its result (fp_act.Latency).
  localparam int unsigned ACT_LATENCY = 6;

  // func_i encoding.
  localparam logic FUNC_SIGMOID = 1'b0;
  localparam logic FUNC_TANH = 1'b1;

  // Table of sigma on [0, 16): 4096 knots at step 2^-8, one 54-bit word each,
  // {D[k] (22 bits), Y[k] (32 bits)} in Q1.31 (tools/act_lut_gen).
  localparam int unsigned LUT_DEPTH = 4096;
  localparam int unsigned LUT_ADDR_WIDTH = 12;
  localparam int unsigned LUT_Y_WIDTH = 32;
  localparam int unsigned LUT_D_WIDTH = 22;
  localparam int unsigned LUT_WIDTH = 54;  // LUT_D_WIDTH + LUT_Y_WIDTH

endpackage
