// Sigmoid or tanh of a binary32 value (func_i: 0 sigmoid, 1 tanh), bit-exact
// to the C++ model farnn::act::sigmoid / tanh (sw/lib/activation.cpp), without
// its table: the pipeline reads the table through a port of an act_lut_rom
// outside (lut_en_o / lut_addr_o, the word comes back as lut_data_i one cycle
// later), so that several pipelines can share one table (fp_act, df_act).
//
// Method: one table of sigma on [0, 16) (knots Y[k] at step 2^-8 in Q1.31,
// D[k] = Y[k+1] - Y[k]) with linear interpolation in fixed point;
// tanh(x) = 2 sigma(2x) - 1 from the same table.
//   u = floor(|x| * 2^(24+func))   28 bits; 0 for zero/subnormal (flushed)
//   y = Y[u>>16] + floor(D[u>>16] * u[15:0] / 2^16), y = 1.0 if |x|*2^func >= 16
//     (computed from the table port's even-knot pair, see S2)
//   r = y (sigmoid, x >= 0), 1 - y (sigmoid, x < 0), 2y - 1 (tanh, sign of x)
//   result = r rounded to binary32 (nearest-even); NaN -> 0x7FC00000.
// tanh of a small argument (2^-126 <= |x| < 2^-8: biased exponent e in
// 1 .. 118) is computed relative to its result instead: |x| - |x|^3/3, in
// units where the significand's last bit is 2^7,
//   r = {1, man, 7'b0} - floor((T << 4) >> (236 - 2e))  (0 once e <= 111)
//   T = TANH_CUBE[man[22:15]] ~ m^3/3 * 2^8              (act_lut_data_pkg)
// rounded with the exponent e + 1 - lz; the table path sees u = 0 (its
// product is 0) and S3 puts {1, man, 7'b0} in place of YE.
//
// Pipeline, one register per stage:
//   S1 decode: NaN / clamp / small flags, u by a right shift of the
//              significand; small path: T from TANH_CUBE, the shift, e + 1
//   S2 table:  {DELTA, YE} = table[u[27:16]] (the table port's read register,
//              enabled by lut_en_o), g = u[15:0] or 2^16 - u[15:0] (odd knot);
//              small path: the correction (T << 4) >> shift
//   S3 mul:    p = DELTA * g, 23 x 18 bits signed (DSP48E2 multiplier, M
//              register); YE forced to 1.0 on the clamp (g is 0 there, so p = 0),
//              to {1, man, 7'b0} on the small path (g is 0 there too)
//   S4 add:    {YE, 16'b0} + p, y = its bits [47:16] (DSP post-adder, P register)
//   S5 select: r = y, 1 - y, 2y - 1 or (small path) y - correction
//   S6 count:  leading-zero count of r, zero flag
//   S7 shift:  normalize (r << lz), exponent 127 - lz (small path:
//              e + 1 - lz), round-up decision
//   S8 round:  increment over {exp, frac} (nearest even), sign, zero, NaN;
//              the output register
// Each stage is at most 6 Vivado-style levels (LUT, MUXF, CARRY8; `make
// synth`, block fp_act).
// Handshake: valid/ready in the fpnew manner (valid bits reset, data not;
// a stage loads when the output is ready or a bubble is at or after it), so
// bubbles are squeezed out under backpressure; lut_en_o is S2's load enable,
// so the table port's read register holds with its stage. tag_i travels with
// the item to tag_o, and {small, nan, neg, func} with it.
// Latency: Latency = act_pkg::ACT_LATENCY = 8 cycles. Throughput: one result per cycle.
`default_nettype none

module fp_act_pipe #(
  parameter int unsigned TagWidth = 1
) (
  input  logic                clk_i,
  input  logic                rst_i,
  input  logic                in_valid_i,
  output logic                in_ready_o,
  input  logic [31:0]         x_i,
  input  logic                func_i,     // 0 = sigmoid, 1 = tanh
  input  logic [TagWidth-1:0] tag_i,
  output logic                out_valid_o,
  input  logic                out_ready_i,
  output logic [31:0]         y_o,
  output logic [TagWidth-1:0] tag_o,
  // Table port (act_lut_rom): knot lut_addr_o read when lut_en_o, its word
  // {DELTA, YE} on lut_data_i from the next cycle on, held while lut_en_o is low.
  output logic                                lut_en_o,
  output logic [act_pkg::LUT_ADDR_WIDTH-1:0] lut_addr_o,
  input  logic [act_pkg::LUT_WIDTH-1:0]      lut_data_i
);

  localparam int unsigned NumStages = 8;  // S1 .. S8 below
  localparam int unsigned Latency = NumStages;
  localparam int unsigned SideWidth = TagWidth + 4;  // {tag, small, nan, neg, func}
  localparam logic [31:0] QOne = 32'h8000_0000;  // 1.0 in Q1.31
  localparam logic [31:0] CanonicalNan = 32'h7FC0_0000;
  localparam logic [8:0] ClampExp = 9'd131;  // biased exponent of 16.0
  localparam logic [7:0] SmallMaxExp = 8'd118;  // tanh's small path: |x| < 2^-8
  localparam logic [7:0] SmallCorrMinExp = 8'd112;  // below it the correction is 0
  localparam int unsigned CubeIdxW = act_lut_data_pkg::TANH_CUBE_INDEX_WIDTH;
  localparam int unsigned CubeW = act_lut_data_pkg::TANH_CUBE_WIDTH;
  localparam int unsigned CorrW = CubeW + 4;  // T << 4

  // ---------------------------------------------------------------------------
  // Handshake: valid bit per stage; stage s loads when the item before it is
  // valid and stage s may take it: the output is ready, or some stage from s
  // to the last is empty (the fpnew chain ready[s] = ready[s+1] | ~valid[s]
  // written out).
  // ---------------------------------------------------------------------------
  logic [NumStages-1:0] valid_q, valid_d, stage_ready, stage_in_valid, stage_en;

  assign stage_in_valid = {valid_q[NumStages-2:0], in_valid_i};
  for (genvar s = 0; s < NumStages; s++) begin : g_ready
    assign stage_ready[s] = out_ready_i | ~(&valid_q[NumStages-1:s]);
  end
  assign stage_en = stage_in_valid & stage_ready;
  assign valid_d = (stage_ready & stage_in_valid) | (~stage_ready & valid_q);

  always_ff @(posedge clk_i) begin
    if (rst_i) valid_q <= '0;
    else valid_q <= valid_d;
  end

  assign in_ready_o = stage_ready[0];
  assign out_valid_o = valid_q[NumStages-1];

  // Side band through every stage: {tag, small, nan, neg, func}.
  logic [SideWidth-1:0] side_in;
  logic [NumStages*SideWidth-1:0] side_q, side_d, side_prev;
  logic s0_nan, s0_small;

  assign side_in = {tag_i, s0_small, s0_nan, x_i[31], func_i};
  assign side_prev = {side_q[(NumStages-1)*SideWidth-1:0], side_in};

  always_comb begin
    side_d = side_q;
    for (int s = 0; s < NumStages; s++) begin
      if (stage_en[s]) side_d[s*SideWidth +: SideWidth] = side_prev[s*SideWidth +: SideWidth];
    end
  end

  always_ff @(posedge clk_i) begin
    side_q <= side_d;
  end

  // ---------------------------------------------------------------------------
  // S1 decode: u = floor(|x| * 2^(24+func)) = {1, man, 4'b0} >> (130 - exp - func).
  // A zero or subnormal input (exp 0) shifts out completely (flushed to zero),
  // as does |x| * 2^func < 2^-24. The clamp (|x| * 2^func >= 16, Inf) leaves
  // u = 0, so g = 0 and the product below is 0. The small path leaves u = 0
  // too, and keeps the significand, T, the correction's shift / 2 (118 - e,
  // for e >= 112) and e + 1.
  // ---------------------------------------------------------------------------
  logic [8:0]  s0_es, s0_rs;
  logic        s0_sat;
  logic [27:0] s0_u;
  logic [27:0] s1_u_q, s1_u_d;
  logic        s1_sat_q, s1_sat_d;
  logic [22:0] s1_man_q, s1_man_d;
  logic [CubeW-1:0] s1_cube_q, s1_cube_d;
  logic [2:0]  s1_half_sh_q, s1_half_sh_d;
  logic        s1_corr_en_q, s1_corr_en_d;
  logic [7:0]  s1_e1_q, s1_e1_d;

  // The small path's table as an array of constant words (a LUT ROM read by
  // the significand's top bits; no index arithmetic).
  logic [CubeW-1:0] cube_rom [2**CubeIdxW];
  for (genvar j = 0; j < 2**CubeIdxW; j++) begin : g_cube_rom
    assign cube_rom[j] = act_lut_data_pkg::TANH_CUBE[j*CubeW +: CubeW];
  end

  always_comb begin
    s0_nan   = (x_i[30:23] == 8'hFF) && (x_i[22:0] != '0);
    s0_small = func_i && (x_i[30:23] != 8'h00) && (x_i[30:23] <= SmallMaxExp);
    s0_es    = {1'b0, x_i[30:23]} + {8'b0, func_i};
    s0_sat   = (s0_es >= ClampExp);
    s0_rs    = (ClampExp - 9'd1) - s0_es;  // 0 .. 130 when not clamped
    s0_u     = '0;
    if (!s0_sat && !s0_small && s0_rs < 9'd28) s0_u = {1'b1, x_i[22:0], 4'b0} >> s0_rs[4:0];

    s1_u_d       = s1_u_q;
    s1_sat_d     = s1_sat_q;
    s1_man_d     = s1_man_q;
    s1_cube_d    = s1_cube_q;
    s1_half_sh_d = s1_half_sh_q;
    s1_corr_en_d = s1_corr_en_q;
    s1_e1_d      = s1_e1_q;
    if (stage_en[0]) begin
      s1_u_d       = s0_u;
      s1_sat_d     = s0_sat;
      s1_man_d     = x_i[22:0];
      s1_cube_d    = cube_rom[x_i[22 -: CubeIdxW]];
      s1_half_sh_d = 3'(SmallMaxExp - x_i[30:23]);
      s1_corr_en_d = (x_i[30:23] >= SmallCorrMinExp);
      s1_e1_d      = x_i[30:23] + 8'd1;
    end
  end

  always_ff @(posedge clk_i) begin
    s1_u_q       <= s1_u_d;
    s1_sat_q     <= s1_sat_d;
    s1_man_q     <= s1_man_d;
    s1_cube_q    <= s1_cube_d;
    s1_half_sh_q <= s1_half_sh_d;
    s1_corr_en_q <= s1_corr_en_d;
    s1_e1_q      <= s1_e1_d;
  end

  // ---------------------------------------------------------------------------
  // S2 table read: the table port's read register is this stage's data
  // register. The port returns the knots around k = u >> 16 that start at an
  // even index, YE = Y[k + k%2] and DELTA = Y[k | 1] - YE; with the weight
  // g = frac (k even) or 2^16 - frac (k odd),
  //   Y[k] + floor(D[k] * frac / 2^16) = YE + floor(DELTA * g / 2^16)
  // exactly (k even: YE = Y[k], DELTA = D[k]; k odd: YE = Y[k] + D[k],
  // DELTA = -D[k], and YE - D[k] + floor(D[k] * frac / 2^16) =
  // YE + floor(-D[k] * (2^16 - frac) / 2^16)).
  // ---------------------------------------------------------------------------
  logic signed [act_pkg::LUT_DELTA_WIDTH-1:0] s2_delta;
  logic [act_pkg::LUT_Y_WIDTH-1:0] s2_ye;
  logic [16:0] s2_g_q, s2_g_d;  // 0 .. 2^16
  logic        s2_sat_q, s2_sat_d;
  logic [22:0] s2_man_q, s2_man_d;
  logic [CorrW-1:0] s2_corr_q, s2_corr_d;
  logic [7:0]  s2_e1_q, s2_e1_d;

  assign lut_en_o   = stage_en[1];
  assign lut_addr_o = s1_u_q[27:16];
  assign {s2_delta, s2_ye} = lut_data_i;

  always_comb begin
    s2_g_d    = s2_g_q;
    s2_sat_d  = s2_sat_q;
    s2_man_d  = s2_man_q;
    s2_corr_d = s2_corr_q;
    s2_e1_d   = s2_e1_q;
    if (stage_en[1]) begin
      s2_g_d    = s1_u_q[16] ? 17'h1_0000 - {1'b0, s1_u_q[15:0]} : {1'b0, s1_u_q[15:0]};
      s2_sat_d  = s1_sat_q;
      s2_man_d  = s1_man_q;
      s2_corr_d = s1_corr_en_q ? {s1_cube_q, 4'b0} >> {s1_half_sh_q, 1'b0} : '0;
      s2_e1_d   = s1_e1_q;
    end
  end

  always_ff @(posedge clk_i) begin
    s2_g_q    <= s2_g_d;
    s2_sat_q  <= s2_sat_d;
    s2_man_q  <= s2_man_d;
    s2_corr_q <= s2_corr_d;
    s2_e1_q   <= s2_e1_d;
  end

  // ---------------------------------------------------------------------------
  // S3 multiply: p = DELTA * g, |p| < 2^38 (one DSP48E2, 23 x 18 bits signed:
  // |DELTA| = D < 2^22, g <= 2^16); YE forced to 1.0 on the clamp (u = 0
  // there, so g = 0 and p = 0).
  // ---------------------------------------------------------------------------
  logic signed [17:0] s2_g_s;
  logic signed [39:0] s3_prod_q, s3_prod_d;
  logic [31:0] s3_y_q, s3_y_d;
  logic [CorrW-1:0] s3_corr_q, s3_corr_d;
  logic [7:0]  s3_e1_q, s3_e1_d;
  logic        s2_small;

  assign s2_g_s   = {1'b0, s2_g_q};
  assign s2_small = side_q[SideWidth + 3];

  always_comb begin
    s3_prod_d = s3_prod_q;
    s3_y_d    = s3_y_q;
    s3_corr_d = s3_corr_q;
    s3_e1_d   = s3_e1_q;
    if (stage_en[2]) begin
      s3_prod_d = s2_delta * s2_g_s;
      s3_y_d    = s2_sat_q ? QOne : s2_small ? {2'b01, s2_man_q, 7'b0} : s2_ye;
      s3_corr_d = s2_corr_q;
      s3_e1_d   = s2_e1_q;
    end
  end

  always_ff @(posedge clk_i) begin
    s3_prod_q <= s3_prod_d;
    s3_y_q    <= s3_y_d;
    s3_corr_q <= s3_corr_d;
    s3_e1_q   <= s3_e1_d;
  end

  // ---------------------------------------------------------------------------
  // S4 add: y * 2^16 = YE * 2^16 + p, in [2^46, 2^47] (y in [2^30, 2^31]), so
  // with p sign-extended the 48-bit sum is exact and y = YE + floor(p / 2^16)
  // is bits [47:16].
  // ---------------------------------------------------------------------------
  logic [47:0] s4_acc_q, s4_acc_d;
  logic [CorrW-1:0] s4_corr_q, s4_corr_d;
  logic [7:0]  s4_e1_q, s4_e1_d;

  always_comb begin
    s4_acc_d  = s4_acc_q;
    s4_corr_d = s4_corr_q;
    s4_e1_d   = s4_e1_q;
    if (stage_en[3]) begin
      s4_acc_d  = {s3_y_q, 16'h0000} + {{8{s3_prod_q[39]}}, s3_prod_q};
      s4_corr_d = s3_corr_q;
      s4_e1_d   = s3_e1_q;
    end
  end

  always_ff @(posedge clk_i) begin
    s4_acc_q  <= s4_acc_d;
    s4_corr_q <= s4_corr_d;
    s4_e1_q   <= s4_e1_d;
  end

  // ---------------------------------------------------------------------------
  // S5 select: y in [2^30, 2^31] (Q1.31), so every r below is in [0, 2^31]
  // (the small path's in (2^29, 2^31)).
  // ---------------------------------------------------------------------------
  logic [31:0] s5_y, s5_r;
  logic [32:0] s5_minuend, s5_subtrahend;
  logic        s4_neg, s4_func, s4_small;
  logic [31:0] s5_r_q, s5_r_d;
  logic [7:0]  s5_e1_q, s5_e1_d;
  logic [15:0] unused_acc_lo;

  assign s4_small = side_q[3*SideWidth + 3];
  assign s4_neg  = side_q[3*SideWidth + 1];
  assign s4_func = side_q[3*SideWidth];
  assign s5_y = s4_acc_q[47:16];
  assign unused_acc_lo = s4_acc_q[15:0];  // p mod 2^16: below the Q1.31 LSB

  always_comb begin
    // One subtraction with selected operands (a single carry chain):
    //   sigmoid(|x|) = y - 0, sigmoid(-|x|) = 1 - y, tanh(|x|) = 2y - 1,
    //   small path: y - correction.
    s5_minuend    = {1'b0, s5_y};
    s5_subtrahend = '0;
    if (s4_small) begin
      s5_subtrahend = 33'(s4_corr_q);
    end else if (s4_func) begin
      s5_minuend    = {s5_y, 1'b0};
      s5_subtrahend = {1'b0, QOne};
    end else if (s4_neg) begin
      s5_minuend    = {1'b0, QOne};
      s5_subtrahend = {1'b0, s5_y};
    end
    s5_r = 32'(s5_minuend - s5_subtrahend);  // in [0, 2^31]

    s5_r_d  = s5_r_q;
    s5_e1_d = s5_e1_q;
    if (stage_en[4]) begin
      s5_r_d  = s5_r;
      s5_e1_d = s4_e1_q;
    end
  end

  always_ff @(posedge clk_i) begin
    s5_r_q  <= s5_r_d;
    s5_e1_q <= s5_e1_d;
  end

  // ---------------------------------------------------------------------------
  // S6 count: leading zeros of r (r = 0 flagged).
  // ---------------------------------------------------------------------------
  logic [4:0]  s6_lz;
  logic [31:0] s6_r_q, s6_r_d;
  logic [4:0]  s6_lz_q, s6_lz_d;
  logic        s6_zero_q, s6_zero_d;
  logic [7:0]  s6_e1_q, s6_e1_d;

  // As a tree (prim_lzc32); its count for r = 0 (31) is overridden by the
  // zero flag in S8.
  prim_lzc32 u_lzc (
    .x_i    (s5_r_q),
    .count_o(s6_lz)
  );

  always_comb begin
    s6_r_d    = s6_r_q;
    s6_lz_d   = s6_lz_q;
    s6_zero_d = s6_zero_q;
    s6_e1_d   = s6_e1_q;
    if (stage_en[5]) begin
      s6_r_d    = s5_r_q;
      s6_lz_d   = s6_lz;
      s6_zero_d = (s5_r_q == '0);
      s6_e1_d   = s5_e1_q;
    end
  end

  always_ff @(posedge clk_i) begin
    s6_r_q    <= s6_r_d;
    s6_lz_q   <= s6_lz_d;
    s6_zero_q <= s6_zero_d;
    s6_e1_q   <= s6_e1_d;
  end

  // ---------------------------------------------------------------------------
  // S7 shift: value r * 2^-31 with its leading one at bit 31 - lz, so the
  // biased exponent is 127 - lz (>= 96: never subnormal; small path: bit 31
  // is worth 2^(e + 1 - 127) and lz is 1, or 2 where the correction took r
  // below 2^30, which needs e >= 112, so e + 1 - lz >= 1); the
  // significand is bits [30:8] of r << lz, guard bit 7, sticky bits [6:0].
  // ---------------------------------------------------------------------------
  logic        s6_small;
  logic [30:0] s7_norm;  // r << lz without its leading one
  logic [22:0] s7_frac_q, s7_frac_d;
  logic [7:0]  s7_exp_q, s7_exp_d;
  logic        s7_round_up_q, s7_round_up_d, s7_zero_q, s7_zero_d;

  assign s6_small = side_q[5*SideWidth + 3];

  always_comb begin
    s7_norm = 31'(s6_r_q << s6_lz_q);

    s7_frac_d     = s7_frac_q;
    s7_exp_d      = s7_exp_q;
    s7_round_up_d = s7_round_up_q;
    s7_zero_d     = s7_zero_q;
    if (stage_en[6]) begin
      s7_frac_d     = s7_norm[30:8];
      s7_exp_d      = (s6_small ? s6_e1_q : 8'd127) - {3'b0, s6_lz_q};
      s7_round_up_d = s7_norm[7] & ((|s7_norm[6:0]) | s7_norm[8]);
      s7_zero_d     = s6_zero_q;
    end
  end

  always_ff @(posedge clk_i) begin
    s7_frac_q     <= s7_frac_d;
    s7_exp_q      <= s7_exp_d;
    s7_round_up_q <= s7_round_up_d;
    s7_zero_q     <= s7_zero_d;
  end

  // ---------------------------------------------------------------------------
  // S8 round: the rounding carry out of the significand moves into the
  // exponent.
  // ---------------------------------------------------------------------------
  logic        s7_nan, s7_neg, s7_func;
  logic [31:0] s8_y;
  logic [31:0] s8_y_q, s8_y_d;

  assign s7_nan  = side_q[6*SideWidth + 2];
  assign s7_neg  = side_q[6*SideWidth + 1];
  assign s7_func = side_q[6*SideWidth];

  always_comb begin
    s8_y = {s7_func & s7_neg, ({s7_exp_q, s7_frac_q} + 31'(s7_round_up_q))};
    if (s7_zero_q) s8_y = {s7_func & s7_neg, 31'b0};  // sigmoid: +0, tanh: signed zero
    if (s7_nan) s8_y = CanonicalNan;

    s8_y_d = s8_y_q;
    if (stage_en[7]) s8_y_d = s8_y;
  end

  always_ff @(posedge clk_i) begin
    s8_y_q <= s8_y_d;
  end

  assign y_o   = s8_y_q;
  assign tag_o = side_q[(NumStages-1)*SideWidth + 4 +: TagWidth];

  // The last stage's small/nan/neg/func bits are not needed after rounding.
  logic [3:0] unused_side_last;
  assign unused_side_last = side_q[(NumStages-1)*SideWidth +: 4];

`ifndef SYNTHESIS
  initial begin
    if (TagWidth < 1) $error("fp_act_pipe: TagWidth must be at least 1");
    if (Latency != act_pkg::ACT_LATENCY) $error("fp_act_pipe: Latency != act_pkg::ACT_LATENCY");
  end

  // A stalled output holds its valid, result and tag.
  assert property (@(posedge clk_i) (!rst_i && out_valid_o && !out_ready_i) |=>
                   (out_valid_o && y_o == $past(y_o) && tag_o == $past(tag_o)))
  else $error("fp_act_pipe: output changed while stalled");

  // The producer holds a stalled input (AXI-Stream rules).
  assert property (@(posedge clk_i) (!rst_i && in_valid_i && !in_ready_o) |=>
                   (rst_i || (in_valid_i && x_i == $past(x_i) && func_i == $past(func_i) &&
                              tag_i == $past(tag_i))))
  else $error("fp_act_pipe: input changed while stalled");
`endif

endmodule

`default_nettype wire
