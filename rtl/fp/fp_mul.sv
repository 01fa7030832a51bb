// fp_mul: pipelined IEEE-754 binary32 multiplier, y = a * b, with the FARNN
// numerics (docs/decisions.md): round to nearest even; subnormal inputs are
// read as signed zeros; a result below 2^-126 is flushed to a signed zero,
// except that 2^-127 * m with m >= 2 - 2^-23 (fraction all ones) rounds to
// the smallest normal, as it does under IEEE gradual underflow; overflow
// rounds to Inf; every NaN result is 0x7FC00000; 0 * Inf = NaN.
// Bit-exact C++ model: farnn::fp32::mul (sw/lib/fp32.cpp).
//
// Latency: `Latency` cycles (1..5) from input handshake to output valid when
// not stalled. Throughput: one result per cycle. valid/ready on both sides
// (AXI-Stream rules); tag_i travels with the operands to tag_o.
//
// Datapath sections and cut points (a register at a cut when `Latency` asks).
// With every cut registered each section is at most 6 Vivado-style levels
// (LUT, MUXF, CARRY8; `make synth`, block fp_mul_l5):
//                                                                -- cut 0 --
//   1 partial product: 24x24 mantissa product (a plain `*` for the DSPs);
//     beside it the result exponent for both product ranges, their
//     under/overflow flags, the special classes                  -- cut 1 --
//                                              (second product register) -- cut 2 --
//   2 normalize (one-bit): pick the fraction, guard, sticky and exponent;
//     decide specials and the round-up                           -- cut 3 --
//   3 round to nearest even (increment over {exp, frac}), pack   -- cut 4 --
// Cut 0 registers the raw operands (DSP input registers), cuts 1 and 2 the
// product (DSP M and P registers), cut 4 the result.
//
//   Latency | registers at cuts
//      1    | 4
//      2    | 1 4
//      3    | 0 1 4
//      4    | 0 1 2 4
//      5    | 0 1 2 3 4
`default_nettype none

module fp_mul #(
  parameter int unsigned TagWidth = 1,
  parameter int unsigned Latency  = 3
) (
  input  logic                clk_i,
  input  logic                rst_i,
  input  logic                in_valid_i,
  output logic                in_ready_o,
  input  logic [        31:0] a_i,
  input  logic [        31:0] b_i,
  input  logic [TagWidth-1:0] tag_i,
  output logic                out_valid_o,
  input  logic                out_ready_i,
  output logic [        31:0] y_o,
  output logic [TagWidth-1:0] tag_o
);

  // Which cuts hold a register (bit k = cut k).
  localparam logic [4:0] Cuts = (Latency == 1) ? 5'b10000 :
                                (Latency == 2) ? 5'b10010 :
                                (Latency == 3) ? 5'b10011 :
                                (Latency == 4) ? 5'b10111 :
                                (Latency == 5) ? 5'b11111 : 5'b10000;

`ifndef SYNTHESIS
  initial begin
    if (Latency < 1 || Latency > 5) begin
      $error("fp_mul: Latency=%0d is not supported (legal: 1..5)", Latency);
    end
    if (TagWidth < 1) $error("fp_mul: TagWidth=%0d must be at least 1", TagWidth);
  end
`endif

  // ---------------------------------------------------------------------
  // Cut 0: the raw operands.
  localparam int unsigned C0W = 64 + TagWidth;
  logic                c0_valid, c0_ready;
  logic [31:0]         c0_a, c0_b;
  logic [TagWidth-1:0] c0_tag;

  fp_pipe_stage #(.Width(C0W), .Enable(Cuts[0])) u_cut0 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (in_valid_i),
    .in_ready_o (in_ready_o),
    .in_data_i  ({a_i, b_i, tag_i}),
    .out_valid_o(c0_valid),
    .out_ready_i(c0_ready),
    .out_data_o ({c0_a, c0_b, c0_tag})
  );

  // ---------------------------------------------------------------------
  // 1. partial product. The hidden bits are constant ones: a zero or
  // subnormal operand is a special class whose result overrides the
  // product, so the DSP inputs are the fraction bits straight from cut 0.
  // The product is in [2^46, 2^48); a leading one at bit 47 (`hi`, a
  // mantissa in [2, 4)) adds one to the exponent, so the biased result
  // exponent ea + eb - 127 + hi is formed here for both values of hi
  // (10-bit two's complement, -125..382 for normals) with its flags.
  logic [ 7:0] ea, eb;
  logic        a_zero, b_zero, a_max, b_max;
  logic [47:0] s1_prod;
  logic [ 9:0] s1_exp_lo, s1_exp_hi;
  logic        s1_uflow_lo, s1_uflow_hi, s1_ovf_lo, s1_ovf_hi, s1_ezero_lo;
  logic        s1_sign, s1_nan, s1_inf, s1_zero;

  always_comb begin
    ea          = c0_a[30:23];
    eb          = c0_b[30:23];
    a_zero      = ea == 8'd0;
    b_zero      = eb == 8'd0;
    a_max       = ea == 8'hFF;
    b_max       = eb == 8'hFF;
    s1_sign     = c0_a[31] ^ c0_b[31];
    s1_nan      = (a_max && c0_a[22:0] != 23'd0) || (b_max && c0_b[22:0] != 23'd0) ||
                  (a_max && b_zero) || (b_max && a_zero);
    s1_inf      = a_max || b_max;  // when not NaN
    s1_zero     = a_zero || b_zero;  // when not NaN
    s1_exp_lo   = {2'b00, ea} + {2'b00, eb} - 10'd127;
    s1_exp_hi   = {2'b00, ea} + {2'b00, eb} - 10'd126;
    s1_ezero_lo = s1_exp_lo == 10'd0;
    s1_uflow_lo = s1_exp_lo[9] || s1_ezero_lo;  // below 2^-126
    s1_uflow_hi = s1_exp_hi[9] || s1_exp_hi == 10'd0;
    s1_ovf_lo   = !s1_exp_lo[9] && s1_exp_lo[8:0] >= 9'd255;
    s1_ovf_hi   = !s1_exp_hi[9] && s1_exp_hi[8:0] >= 9'd255;
    s1_prod     = {24'd0, 1'b1, c0_a[22:0]} * {24'd0, 1'b1, c0_b[22:0]};
  end

  localparam int unsigned C1W = 48 + 16 + 5 + 4 + TagWidth;
  logic                c1_valid, c1_ready, c2_valid, c2_ready;
  logic [   C1W-1:0]   c1_data, c2_data;
  logic [      47:0]   c2_prod;
  logic [       7:0]   c2_exp_lo, c2_exp_hi;
  logic                c2_uflow_lo, c2_uflow_hi, c2_ovf_lo, c2_ovf_hi, c2_ezero_lo;
  logic                c2_sign, c2_nan, c2_inf, c2_zero;
  logic [TagWidth-1:0] c2_tag;

  fp_pipe_stage #(.Width(C1W), .Enable(Cuts[1])) u_cut1 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c0_valid),
    .in_ready_o (c0_ready),
    .in_data_i  ({s1_prod, s1_exp_lo[7:0], s1_exp_hi[7:0], s1_uflow_lo, s1_uflow_hi, s1_ovf_lo,
                  s1_ovf_hi, s1_ezero_lo, s1_sign, s1_nan, s1_inf, s1_zero, c0_tag}),
    .out_valid_o(c1_valid),
    .out_ready_i(c1_ready),
    .out_data_o (c1_data)
  );

  fp_pipe_stage #(.Width(C1W), .Enable(Cuts[2])) u_cut2 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c1_valid),
    .in_ready_o (c1_ready),
    .in_data_i  (c1_data),
    .out_valid_o(c2_valid),
    .out_ready_i(c2_ready),
    .out_data_o (c2_data)
  );
  assign {c2_prod, c2_exp_lo, c2_exp_hi, c2_uflow_lo, c2_uflow_hi, c2_ovf_lo, c2_ovf_hi, c2_ezero_lo,
          c2_sign, c2_nan, c2_inf, c2_zero, c2_tag} = c2_data;

  // ---------------------------------------------------------------------
  // 2. normalize. Special results are forced into {exp, frac} ahead of the
  // rounding increment:
  //   NaN {FF, 400000}+0, Inf/overflow {FF, 0}+0, zero/underflow {0, 0}+0,
  //   min-normal case {0, 7FFFFF}+1 = {1, 0}, normal {exp, frac}+round.
  logic        hi;
  logic [22:0] frac;
  logic [ 7:0] exp_res;
  logic        guard, sticky, uflow, ovf, min_normal, force_max, force_zero;
  logic [30:0] s2_unrounded;
  logic        s2_round_in, s2_sign;

  always_comb begin
    hi           = c2_prod[47];
    frac         = hi ? c2_prod[46:24] : c2_prod[45:23];
    guard        = hi ? c2_prod[23] : c2_prod[22];
    sticky       = (c2_prod[21:0] != 22'd0) || (hi && c2_prod[22]);
    exp_res      = hi ? c2_exp_hi : c2_exp_lo;
    uflow        = hi ? c2_uflow_hi : c2_uflow_lo;
    ovf          = hi ? c2_ovf_hi : c2_ovf_lo;
    // 2^-127 * 1.11..1x rounds up to 2^-126 under gradual underflow. Only
    // with hi = 0: a product in [2, 4) has at most (2^24 - 1)^2 < 2^48 - 2^24,
    // so its 23 fraction bits are never all ones.
    min_normal   = c2_ezero_lo && frac == 23'h7F_FFFF;
    force_max    = c2_nan || c2_inf || (!c2_zero && ovf);
    force_zero   = !force_max && (c2_zero || (uflow && !min_normal));
    s2_unrounded = {force_max ? 8'hFF : (force_zero ? 8'h00 : exp_res),
                    (force_max || force_zero) ? {c2_nan, 22'd0} : frac};
    s2_round_in  = !force_max && !force_zero && (min_normal || (guard && (sticky || frac[0])));
    s2_sign      = c2_sign && !c2_nan;
  end

  localparam int unsigned C3W = 33 + TagWidth;
  logic                c3_valid, c3_ready;
  logic [30:0]         c3_unrounded;
  logic                c3_round_in, c3_sign;
  logic [TagWidth-1:0] c3_tag;

  fp_pipe_stage #(.Width(C3W), .Enable(Cuts[3])) u_cut3 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c2_valid),
    .in_ready_o (c2_ready),
    .in_data_i  ({s2_sign, s2_unrounded, s2_round_in, c2_tag}),
    .out_valid_o(c3_valid),
    .out_ready_i(c3_ready),
    .out_data_o ({c3_sign, c3_unrounded, c3_round_in, c3_tag})
  );

  // ---------------------------------------------------------------------
  // 3. round and pack: a fraction carry bumps the exponent, 254 -> 255 is
  // exactly the Inf encoding.
  logic [31:0] s3_y;
  assign s3_y = {c3_sign, c3_unrounded + 31'(c3_round_in)};

  fp_pipe_stage #(.Width(32 + TagWidth), .Enable(Cuts[4])) u_cut4 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c3_valid),
    .in_ready_o (c3_ready),
    .in_data_i  ({s3_y, c3_tag}),
    .out_valid_o(out_valid_o),
    .out_ready_i(out_ready_i),
    .out_data_o ({y_o, tag_o})
  );

`ifndef SYNTHESIS
  // Output handshake: a stalled result holds valid, data and tag.
  assert property (@(posedge clk_i) (!rst_i && out_valid_o && !out_ready_i) |=>
                   (out_valid_o && y_o == $past(y_o) && tag_o == $past(tag_o)))
  else $error("fp_mul: output changed while stalled");
  // With the consumer ready the pipe never refuses an input.
  assert property (@(posedge clk_i) !rst_i && out_ready_i |-> in_ready_o)
  else $error("fp_mul: in_ready_o low while out_ready_i is high");
`endif

endmodule

`default_nettype wire
