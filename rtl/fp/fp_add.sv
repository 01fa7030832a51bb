// fp_add: pipelined IEEE-754 binary32 adder, y = a + b, with the FARNN
// numerics (docs/decisions.md): round to nearest even; subnormal inputs are
// read as signed zeros and subnormal results flushed to signed zeros (an
// add result below 2^-126 is always exact, so no rounding is lost); every
// NaN result is 0x7FC00000; Inf per IEEE (Inf - Inf = NaN); an exact zero
// sum is +0 except (-0) + (-0) = -0. Subtract by flipping b's sign bit.
// Bit-exact C++ model: farnn::fp32::add (sw/lib/fp32.cpp).
//
// Latency: `Latency` cycles (1..7) from input handshake to output valid when
// not stalled. Throughput: one result per cycle. valid/ready on both sides
// (AXI-Stream rules); tag_i travels with the operands to tag_o.
//
// Datapath sections and cut points (a register at a cut when `Latency` asks).
// Each section is at most 6 Vivado-style levels (LUT, MUXF, CARRY8) when both
// its cuts hold registers (`make synth`, block fp_add_l7):
//                                                                -- cut 0 --
//   1 order: exponent distance |ea - eb| (shift amount), the
//     smaller operand (exponents; fractions when they are equal)
//     and the NaN/Inf classes                                    -- cut 1 --
//   2 swap and align: right shift of the smaller mantissa into
//     a 27-bit frame, the bits shifted out ORed into bit 0; the
//     zero, far and equal-exponent cases override the result     -- cut 2 --
//   3 add/sub (28-bit, one carry chain)                          -- cut 3 --
//   4 leading-zero count                                         -- cut 4 --
//   5 normalize: left shift, result exponent, under/overflow,
//     round-up decision                                          -- cut 5 --
//   6 round (increment over {exp, frac}), special-case select    -- cut 6 --
//
//   Latency | registers at cuts
//      1    | 6
//      2    | 2 6
//      3    | 2 4 6
//      4    | 1 2 4 6
//      5    | 1 2 4 5 6
//      6    | 1 2 3 4 5 6
//      7    | 0 1 2 3 4 5 6
`default_nettype none

module fp_add #(
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
  localparam logic [6:0] Cuts = (Latency == 1) ? 7'b1000000 :
                                (Latency == 2) ? 7'b1000100 :
                                (Latency == 3) ? 7'b1010100 :
                                (Latency == 4) ? 7'b1010110 :
                                (Latency == 5) ? 7'b1110110 :
                                (Latency == 6) ? 7'b1111110 :
                                (Latency == 7) ? 7'b1111111 : 7'b1000000;

`ifndef SYNTHESIS
  initial begin
    if (Latency < 1 || Latency > 7) begin
      $error("fp_add: Latency=%0d is not supported (legal: 1..7)", Latency);
    end
    if (TagWidth < 1) $error("fp_add: TagWidth=%0d must be at least 1", TagWidth);
  end
`endif

  // ---------------------------------------------------------------------
  // Cut 0: the raw operands.
  logic                c0_valid, c0_ready;
  logic [        31:0] c0_a, c0_b;
  logic [TagWidth-1:0] c0_tag;

  fp_pipe_stage #(.Width(64 + TagWidth), .Enable(Cuts[0])) u_cut0 (
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
  // 1. order. {exp, frac} compares like the magnitude, and NaN > Inf >
  // finite, so the larger operand (`swap` picks b) also carries the special
  // class that wins. The compare is split so that the alignment does not
  // wait for it: the exponents alone decide which mantissa is shifted
  // (`small_a`: eb > ea, the borrow of ea - eb), and only equal exponents
  // need the fractions (`fix`: b's larger, so a is the small operand, shifted
  // by 0). The shift amount needs no swap: e_big - e_small = |ea - eb|; a
  // distance of 32 or more (`far`) shifts everything into the sticky bit,
  // and the smaller exponent is zero exactly when one of the two is. The
  // classes likewise: the result is NaN when an operand is NaN or Infs of
  // opposite signs meet, Inf when an exponent is all ones otherwise. The
  // operands cross cut 1 unswapped.
  logic        s1_swap, s1_small_a, s1_far, s1_fix, a_nan, b_nan, a_inf, b_inf;
  logic [ 7:0] ea, eb;
  logic [ 8:0] d_ab;
  logic [ 7:0] d_ba;
  logic [ 7:0] exp_dist;
  logic        s1_small_zero, s1_eff_sub, s1_zero_sign, s1_nan, s1_inf;
  logic [ 4:0] s1_shamt;

  always_comb begin
    ea            = c0_a[30:23];
    eb            = c0_b[30:23];
    d_ab          = {1'b0, ea} - {1'b0, eb};
    d_ba          = eb - ea;
    s1_small_a    = d_ab[8];  // eb > ea
    s1_fix        = ea == eb && c0_b[22:0] > c0_a[22:0];  // equal exponents, b's fraction larger
    s1_swap       = s1_small_a || s1_fix;
    exp_dist      = s1_small_a ? d_ba : d_ab[7:0];
    s1_small_zero = ea == 8'd0 || eb == 8'd0;
    s1_shamt      = exp_dist[4:0];
    s1_far        = exp_dist[7:5] != 3'd0;
    s1_eff_sub    = c0_a[31] ^ c0_b[31];
    s1_zero_sign  = c0_a[31] & c0_b[31];  // sign of an exact zero sum
    a_nan         = ea == 8'hFF && c0_a[22:0] != 23'd0;
    b_nan         = eb == 8'hFF && c0_b[22:0] != 23'd0;
    a_inf         = ea == 8'hFF && c0_a[22:0] == 23'd0;
    b_inf         = eb == 8'hFF && c0_b[22:0] == 23'd0;
    s1_nan        = a_nan || b_nan || (a_inf && b_inf && s1_eff_sub);
    s1_inf        = (ea == 8'hFF || eb == 8'hFF) && !s1_nan;
  end

  localparam int unsigned C1W = 64 + 5 + 5 + 4 + TagWidth;
  logic                c1_valid, c1_ready;
  logic [31:0]         c1_a, c1_b;
  logic [ 4:0]         c1_shamt;
  logic                c1_swap, c1_small_a, c1_far, c1_fix, c1_small_zero;
  logic                c1_eff_sub, c1_zero_sign, c1_nan, c1_inf;
  logic [TagWidth-1:0] c1_tag;

  fp_pipe_stage #(.Width(C1W), .Enable(Cuts[1])) u_cut1 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c0_valid),
    .in_ready_o (c0_ready),
    .in_data_i  ({c0_a, c0_b, s1_swap, s1_small_a, s1_far, s1_fix, s1_small_zero, s1_shamt,
                  s1_eff_sub, s1_zero_sign, s1_nan, s1_inf, c0_tag}),
    .out_valid_o(c1_valid),
    .out_ready_i(c1_ready),
    .out_data_o ({c1_a, c1_b, c1_swap, c1_small_a, c1_far, c1_fix, c1_small_zero, c1_shamt,
                  c1_eff_sub, c1_zero_sign, c1_nan, c1_inf, c1_tag})
  );

  // ---------------------------------------------------------------------
  // 2. swap and align. The larger operand passes on; the smaller mantissa
  // (picked by `small_a`) goes into a 27-bit frame (24 bits plus guard, round
  // and sticky) and is shifted right by the low 5 bits of the distance in
  // three mux levels (16; 0/4/8/12; 0/1/2/3); the sticky bit is the OR of
  // what each level shifts out. Three overrides come last, off the shifter's
  // path: a zero/subnormal small operand contributes nothing, a far one only
  // its sticky bit, and with `fix` the small operand is a, unshifted.
  logic [31:0] s2_big;
  logic [22:0] small_frac;
  logic [26:0] small_frame, shift16, shift4, shifted, s2_aligned;
  logic        sticky16, sticky4, sticky1;

  always_comb begin
    s2_big      = c1_swap ? c1_b : c1_a;
    small_frac  = c1_small_a ? c1_a[22:0] : c1_b[22:0];
    small_frame = {1'b1, small_frac, 3'b000};
    shift16     = c1_shamt[4] ? {16'd0, small_frame[26:16]} : small_frame;
    sticky16    = c1_shamt[4] && small_frame[15:0] != 16'd0;
    unique case (c1_shamt[3:2])
      2'd0:    begin shift4 = shift16;                  sticky4 = 1'b0;                  end
      2'd1:    begin shift4 = {4'd0, shift16[26:4]};   sticky4 = shift16[3:0] != 4'd0;  end
      2'd2:    begin shift4 = {8'd0, shift16[26:8]};   sticky4 = shift16[7:0] != 8'd0;  end
      default: begin shift4 = {12'd0, shift16[26:12]}; sticky4 = shift16[11:0] != 12'd0; end
    endcase
    unique case (c1_shamt[1:0])
      2'd0:    begin shifted = shift4;                 sticky1 = 1'b0;                 end
      2'd1:    begin shifted = {1'd0, shift4[26:1]};  sticky1 = shift4[0];            end
      2'd2:    begin shifted = {2'd0, shift4[26:2]};  sticky1 = shift4[1:0] != 2'd0;  end
      default: begin shifted = {3'd0, shift4[26:3]};  sticky1 = shift4[2:0] != 3'd0;  end
    endcase
    if (c1_small_zero) s2_aligned = 27'd0;
    else if (c1_far)   s2_aligned = 27'd1;
    else if (c1_fix)   s2_aligned = {1'b1, c1_a[22:0], 3'b000};
    else               s2_aligned = {shifted[26:1], shifted[0] | sticky16 | sticky4 | sticky1};
  end

  localparam int unsigned C2W = 1 + 8 + 23 + 27 + 4 + TagWidth;
  logic                c2_valid, c2_ready;
  logic                c2_sign;
  logic [ 7:0]         c2_exp;
  logic [22:0]         c2_frac;
  logic [26:0]         c2_aligned;
  logic                c2_eff_sub, c2_zero_sign, c2_nan, c2_inf;
  logic [TagWidth-1:0] c2_tag;

  fp_pipe_stage #(.Width(C2W), .Enable(Cuts[2])) u_cut2 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c1_valid),
    .in_ready_o (c1_ready),
    .in_data_i  ({s2_big, s2_aligned, c1_eff_sub, c1_zero_sign, c1_nan, c1_inf, c1_tag}),
    .out_valid_o(c2_valid),
    .out_ready_i(c2_ready),
    .out_data_o ({c2_sign, c2_exp, c2_frac, c2_aligned, c2_eff_sub, c2_zero_sign, c2_nan, c2_inf,
                  c2_tag})
  );

  // ---------------------------------------------------------------------
  // 3. add/sub. The larger magnitude minus the smaller is never negative;
  // bit 27 of the sum is the carry of an addition. When `big` is zero or
  // subnormal (then both operands are) the sum is garbage and section 5
  // selects a zero result instead (exponent 0).
  logic [26:0] big_frame;
  logic [27:0] s3_sum;

  always_comb begin
    big_frame = {1'b1, c2_frac, 3'b000};
    // One carry chain: a - b = a + ~b + 1.
    s3_sum    = {1'b0, big_frame} + ({1'b0, c2_aligned} ^ {28{c2_eff_sub}}) + 28'(c2_eff_sub);
  end

  localparam int unsigned C3W = 28 + 1 + 8 + 3 + TagWidth;
  logic                c3_valid, c3_ready;
  logic [27:0]         c3_sum;
  logic                c3_sign;
  logic [ 7:0]         c3_exp;
  logic                c3_zero_sign, c3_nan, c3_inf;
  logic [TagWidth-1:0] c3_tag;

  fp_pipe_stage #(.Width(C3W), .Enable(Cuts[3])) u_cut3 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c2_valid),
    .in_ready_o (c2_ready),
    .in_data_i  ({s3_sum, c2_sign, c2_exp, c2_zero_sign, c2_nan, c2_inf, c2_tag}),
    .out_valid_o(c3_valid),
    .out_ready_i(c3_ready),
    .out_data_o ({c3_sum, c3_sign, c3_exp, c3_zero_sign, c3_nan, c3_inf, c3_tag})
  );

  // ---------------------------------------------------------------------
  // 4. leading-zero count, as a tree (prim_lzc32; the sum at the top of its
  // word). A zero sum (count 31) is caught in section 5 by the sum itself,
  // whose zero result takes precedence over every flag the count feeds.
  logic [4:0] s4_lzc;

  prim_lzc32 u_lzc (
    .x_i    ({c3_sum, 4'b0000}),
    .count_o(s4_lzc)
  );

  localparam int unsigned C4W = 28 + 5 + 1 + 8 + 3 + TagWidth;
  logic                c4_valid, c4_ready;
  logic [27:0]         c4_sum;
  logic [ 4:0]         c4_lzc;
  logic                c4_sign;
  logic [ 7:0]         c4_exp;
  logic                c4_zero_sign, c4_nan, c4_inf;
  logic [TagWidth-1:0] c4_tag;

  fp_pipe_stage #(.Width(C4W), .Enable(Cuts[4])) u_cut4 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c3_valid),
    .in_ready_o (c3_ready),
    .in_data_i  ({c3_sum, s4_lzc, c3_sign, c3_exp, c3_zero_sign, c3_nan, c3_inf, c3_tag}),
    .out_valid_o(c4_valid),
    .out_ready_i(c4_ready),
    .out_data_o ({c4_sum, c4_lzc, c4_sign, c4_exp, c4_zero_sign, c4_nan, c4_inf, c4_tag})
  );

  // ---------------------------------------------------------------------
  // 5. normalize: leading one to bit 27 (the hidden bit, dropped: the
  // shifts keep bits 26..0); result exponent e_big + 1 - lzc (its low 8
  // bits; its range, -26..255 for finite operands, in the under/overflow
  // flags); round to nearest even decided on the normalized frame.
  logic [26:0] norm16, norm4, norm;
  logic [ 7:0] exp_res;
  logic        s5_zero, s5_uflow, s5_ovf, s5_round_up;

  always_comb begin
    // Left shift by lzc in three mux levels (16; 0/4/8/12; 0/1/2/3).
    norm16 = c4_lzc[4] ? {c4_sum[10:0], 16'd0} : c4_sum[26:0];
    unique case (c4_lzc[3:2])
      2'd0:    norm4 = norm16;
      2'd1:    norm4 = {norm16[22:0], 4'd0};
      2'd2:    norm4 = {norm16[18:0], 8'd0};
      default: norm4 = {norm16[14:0], 12'd0};
    endcase
    unique case (c4_lzc[1:0])
      2'd0:    norm = norm4;
      2'd1:    norm = {norm4[25:0], 1'd0};
      2'd2:    norm = {norm4[24:0], 2'd0};
      default: norm = {norm4[23:0], 3'd0};
    endcase
    exp_res     = c4_exp + 8'd1 - {3'd0, c4_lzc};
    // Exact zero (the sum, not norm[27], which waits for the shift), or both
    // inputs zero/subnormal.
    s5_zero     = c4_sum == 28'd0 || c4_exp == 8'd0;
    // Under/overflow of the exact exponent, read from c4_exp and c4_lzc
    // beside the subtract rather than after it: <= 0 (below 2^-126: flush)
    // is lzc > e_big; >= 255 is e_big >= 254 + lzc.
    s5_uflow    = {3'd0, c4_lzc} > c4_exp;
    s5_ovf      = (c4_lzc == 5'd0 && c4_exp >= 8'd254) || (c4_lzc == 5'd1 && c4_exp == 8'd255);
    // guard norm[3]; sticky norm[2:0]; the kept LSB norm[4]
    s5_round_up = norm[3] & (norm[2:0] != 3'd0 || norm[4]);
  end

  localparam int unsigned C5W = 23 + 8 + 8 + TagWidth;
  logic                c5_valid, c5_ready;
  logic [22:0]         c5_frac;
  logic [ 7:0]         c5_exp;
  logic                c5_round_up, c5_zero, c5_uflow, c5_ovf, c5_sign, c5_zero_sign, c5_nan, c5_inf;
  logic [TagWidth-1:0] c5_tag;

  fp_pipe_stage #(.Width(C5W), .Enable(Cuts[5])) u_cut5 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c4_valid),
    .in_ready_o (c4_ready),
    .in_data_i  ({norm[26:4], exp_res, s5_round_up, s5_zero, s5_uflow, s5_ovf, c4_sign,
                  c4_zero_sign, c4_nan, c4_inf, c4_tag}),
    .out_valid_o(c5_valid),
    .out_ready_i(c5_ready),
    .out_data_o ({c5_frac, c5_exp, c5_round_up, c5_zero, c5_uflow, c5_ovf, c5_sign, c5_zero_sign,
                  c5_nan, c5_inf, c5_tag})
  );

  // ---------------------------------------------------------------------
  // 6. round and pack. The rounding increment runs over {exp, frac}, so a
  // fraction carry bumps the exponent and 254 -> 255 yields exactly the Inf
  // encoding.
  logic [30:0] rounded;
  logic [31:0] s6_y;

  always_comb begin
    rounded = {c5_exp, c5_frac} + 31'(c5_round_up);
    if (c5_nan) s6_y = 32'h7FC0_0000;
    else if (c5_inf) s6_y = {c5_sign, 8'hFF, 23'd0};
    else if (c5_zero) s6_y = {c5_zero_sign, 31'd0};
    else if (c5_ovf) s6_y = {c5_sign, 8'hFF, 23'd0};
    else if (c5_uflow) s6_y = {c5_sign, 31'd0};
    else s6_y = {c5_sign, rounded};
  end

  fp_pipe_stage #(.Width(32 + TagWidth), .Enable(Cuts[6])) u_cut6 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c5_valid),
    .in_ready_o (c5_ready),
    .in_data_i  ({s6_y, c5_tag}),
    .out_valid_o(out_valid_o),
    .out_ready_i(out_ready_i),
    .out_data_o ({y_o, tag_o})
  );

`ifndef SYNTHESIS
  // The flags against the exact exponent.
  logic signed [10:0] exp_exact;
  assign exp_exact = 11'(c4_exp) + 11'sd1 - 11'(c4_lzc);
  always_ff @(posedge clk_i) begin
    if (!rst_i && c4_valid) begin
      assert (s5_uflow == (exp_exact <= 0) && s5_ovf == (exp_exact >= 255))
      else $error("fp_add: under/overflow flags differ from the exact exponent");
    end
  end
  // Output handshake: a stalled result holds valid, data and tag.
  assert property (@(posedge clk_i) (!rst_i && out_valid_o && !out_ready_i) |=>
                   (out_valid_o && y_o == $past(y_o) && tag_o == $past(tag_o)))
  else $error("fp_add: output changed while stalled");
  // With the consumer ready the pipe never refuses an input.
  assert property (@(posedge clk_i) !rst_i && out_ready_i |-> in_ready_o)
  else $error("fp_add: in_ready_o low while out_ready_i is high");
`endif

endmodule

`default_nettype wire
