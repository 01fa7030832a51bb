// Constants of the sigmoid / tanh unit (rtl/act/fp_act.sv, fp_act_pipe.sv) for
// the blocks that instantiate it: its fixed latency, the func_i encoding and
// the geometry of its table (rtl/act/act_lut_rom.sv).
package act_pkg;

  // Cycles from an accepted input to its result (fp_act_pipe.Latency).
  localparam int unsigned ACT_LATENCY = 8;

  // func_i encoding.
  localparam logic FUNC_SIGMOID = 1'b0;
  localparam logic FUNC_TANH = 1'b1;

  // Table of sigma on [0, 16): knots Y[k], k = 0 .. 4096, at step 2^-8 in
  // Q1.31 (tools/act_lut_gen; Y[4096] = 1.0). A lookup of knot k returns the
  // pair of knots around it that starts at an even index, as one 55-bit word
  // {DELTA (23 bits, signed), YE (32 bits)} with
  //   YE    = Y[k + k%2]                 (the even knot: Y[k] or Y[k+1])
  //   DELTA = Y[k | 1] - YE              (the odd knot minus it: +-D[k])
  localparam int unsigned LUT_DEPTH = 4096;
  localparam int unsigned LUT_ADDR_WIDTH = 12;
  localparam int unsigned LUT_Y_WIDTH = 32;
  localparam int unsigned LUT_DELTA_WIDTH = 23;
  localparam int unsigned LUT_WIDTH = 55;  // LUT_DELTA_WIDTH + LUT_Y_WIDTH

  // Read ports of one table (act_lut_rom): a true dual-port block RAM serves
  // two lookups per cycle.
  localparam int unsigned LUT_PORTS = 2;

endpackage
