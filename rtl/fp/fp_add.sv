// fp_add: pipelined IEEE-754 binary32 adder, y = a + b, with the FARNN
// numerics (docs/decisions.md): round to nearest even; subnormal inputs are
// read as signed zeros and subnormal results flushed to signed zeros (an
// add result below 2^-126 is always exact, so no rounding is lost); every
// NaN result is 0x7FC00000; Inf per IEEE (Inf - Inf = NaN); an exact zero
// sum is +0 except (-0) + (-0) = -0. Subtract by flipping b's sign bit.
// Bit-exact C++ model: farnn::fp32::add (sw/lib/fp32.cpp).
//
// Latency: `Latency` cycles (1..5) from input handshake to output valid when
// not stalled. Throughput: one result per cycle. valid/ready on both sides
// (AXI-Stream rules); tag_i travels with the operands to tag_o.
//
// Datapath sections and cut points (a register at a cut when `Latency` asks):
//   1a unpack/compare/swap: order the operands by magnitude      -- cut 0 --
//   1b align: NaN/Inf classes, exponent difference, right shift of
//      the smaller mantissa into a 27-bit frame with sticky      -- cut 1 --
//   2  add/sub (28-bit) + leading-zero count                     -- cut 2 --
//   3a normalize: left shift, result exponent, under/overflow    -- cut 3 --
//   3b round to nearest even, pack, special-case select          -- cut 4 --
//
//   Latency | registers at cuts
//      1    | 4
//      2    | 1 4
//      3    | 1 2 4
//      4    | 0 1 2 4
//      5    | 0 1 2 3 4
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
  localparam logic [4:0] Cuts = (Latency == 1) ? 5'b10000 :
                                (Latency == 2) ? 5'b10010 :
                                (Latency == 3) ? 5'b10110 :
                                (Latency == 4) ? 5'b10111 :
                                (Latency == 5) ? 5'b11111 : 5'b10000;

`ifndef SYNTHESIS
  initial begin
    if (Latency < 1 || Latency > 5) begin
      $error("fp_add: Latency=%0d is not supported (legal: 1..5)", Latency);
    end
    if (TagWidth < 1) $error("fp_add: TagWidth=%0d must be at least 1", TagWidth);
  end
`endif

  // ---------------------------------------------------------------------
  // 1a. unpack/compare/swap. {exp, frac} compares like the magnitude, and
  // NaN > Inf > finite, so `big` also carries the special class that wins.
  logic        swap;
  logic [31:0] s0_big;
  logic [30:0] s0_small;
  logic        s0_eff_sub, s0_zero_sign;

  always_comb begin
    swap         = b_i[30:0] > a_i[30:0];
    s0_big       = swap ? b_i : a_i;
    s0_small     = swap ? a_i[30:0] : b_i[30:0];
    s0_eff_sub   = a_i[31] ^ b_i[31];
    s0_zero_sign = a_i[31] & b_i[31];  // sign of an exact zero sum
  end

  localparam int unsigned C0W = 32 + 31 + 2 + TagWidth;
  logic           c0_valid, c0_ready;
  logic [C0W-1:0] c0_data;
  logic [   31:0] c0_big;
  logic [   30:0] c0_small;
  logic           c0_eff_sub, c0_zero_sign;
  logic [TagWidth-1:0] c0_tag;

  fp_pipe_stage #(.Width(C0W), .Enable(Cuts[0])) u_cut0 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (in_valid_i),
    .in_ready_o (in_ready_o),
    .in_data_i  ({s0_big, s0_small, s0_eff_sub, s0_zero_sign, tag_i}),
    .out_valid_o(c0_valid),
    .out_ready_i(c0_ready),
    .out_data_o (c0_data)
  );
  assign {c0_big, c0_small, c0_eff_sub, c0_zero_sign, c0_tag} = c0_data;

  // ---------------------------------------------------------------------
  // 1b. align. The smaller mantissa goes into a 27-bit frame (24 bits plus
  // guard, round and sticky) and is shifted right by the exponent difference
  // in three mux levels (16; 0/4/8/12; 0/1/2/3); the bits shifted out are
  // ORed into bit 0. A zero/subnormal small operand contributes nothing
  // (hidden bit 0, shift saturated, sticky cleared).
  logic [ 7:0] e_big, e_small, exp_diff;
  logic        small_zero;
  logic [ 4:0] shamt;
  logic [26:0] small_frame, shift16, shift4, s1_aligned;
  logic        sticky16, sticky4, sticky1;
  logic        s1_nan, s1_inf;

  always_comb begin
    e_big       = c0_big[30:23];
    e_small     = c0_small[30:23];
    small_zero  = e_small == 8'd0;
    exp_diff    = e_big - e_small;  // >= 0: |big| >= |small|
    shamt       = (small_zero || exp_diff[7:5] != 3'd0) ? 5'd31 : exp_diff[4:0];
    small_frame = {~small_zero, c0_small[22:0], 3'b000};
    // by 16
    shift16     = shamt[4] ? {16'd0, small_frame[26:16]} : small_frame;
    sticky16    = shamt[4] && small_frame[15:3] != 13'd0;
    // by 0, 4, 8, 12
    unique case (shamt[3:2])
      2'd0: begin
        shift4  = shift16;
        sticky4 = 1'b0;
      end
      2'd1: begin
        shift4  = {4'd0, shift16[26:4]};
        sticky4 = shift16[3:0] != 4'd0;
      end
      2'd2: begin
        shift4  = {8'd0, shift16[26:8]};
        sticky4 = shift16[7:0] != 8'd0;
      end
      default: begin
        shift4  = {12'd0, shift16[26:12]};
        sticky4 = shift16[11:0] != 12'd0;
      end
    endcase
    // by 0, 1, 2, 3
    unique case (shamt[1:0])
      2'd0: begin
        s1_aligned = shift4;
        sticky1    = 1'b0;
      end
      2'd1: begin
        s1_aligned = {1'd0, shift4[26:1]};
        sticky1    = shift4[0];
      end
      2'd2: begin
        s1_aligned = {2'd0, shift4[26:2]};
        sticky1    = shift4[1:0] != 2'd0;
      end
      default: begin
        s1_aligned = {3'd0, shift4[26:3]};
        sticky1    = shift4[2:0] != 3'd0;
      end
    endcase
    s1_aligned[0] = s1_aligned[0] | ((sticky16 | sticky4 | sticky1) & ~small_zero);
    // Special classes: `big` is NaN, or Inf with an opposite Inf, -> NaN;
    // `big` is Inf otherwise -> Inf.
    s1_nan      = e_big == 8'hFF && (c0_big[22:0] != 23'd0 || (e_small == 8'hFF && c0_eff_sub));
    s1_inf      = e_big == 8'hFF && !s1_nan;
  end

  localparam int unsigned C1W = 1 + 8 + 23 + 27 + 4 + TagWidth;
  logic           c1_valid, c1_ready;
  logic [C1W-1:0] c1_data;
  logic           c1_sign;
  logic [    7:0] c1_exp;
  logic [   22:0] c1_frac;
  logic [   26:0] c1_aligned;
  logic           c1_eff_sub, c1_zero_sign, c1_nan, c1_inf;
  logic [TagWidth-1:0] c1_tag;

  fp_pipe_stage #(.Width(C1W), .Enable(Cuts[1])) u_cut1 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c0_valid),
    .in_ready_o (c0_ready),
    .in_data_i  ({c0_big[31], e_big, c0_big[22:0], s1_aligned, c0_eff_sub, c0_zero_sign,
                  s1_nan, s1_inf, c0_tag}),
    .out_valid_o(c1_valid),
    .out_ready_i(c1_ready),
    .out_data_o (c1_data)
  );
  assign {c1_sign, c1_exp, c1_frac, c1_aligned, c1_eff_sub, c1_zero_sign, c1_nan, c1_inf,
          c1_tag} = c1_data;

  // ---------------------------------------------------------------------
  // 2. add/sub + leading-zero count. The larger magnitude minus the smaller
  // is never negative; bit 27 of the sum is the carry of an addition. When
  // `big` is zero or subnormal (then both operands are) the sum is garbage
  // and section 3a selects a zero result instead (exponent 0).
  logic [26:0] big_frame;
  logic [27:0] s2_sum;
  logic [ 4:0] s2_lzc;

  always_comb begin
    big_frame = {1'b1, c1_frac, 3'b000};
    // One carry chain: a - b = a + ~b + 1.
    s2_sum    = {1'b0, big_frame} + ({1'b0, c1_aligned} ^ {28{c1_eff_sub}}) + 28'(c1_eff_sub);
    s2_lzc    = 5'd27;  // a zero sum is caught by its missing leading one
    for (int i = 0; i < 28; i++) begin
      if (s2_sum[i]) s2_lzc = 5'(27 - i);
    end
  end

  localparam int unsigned C2W = 28 + 5 + 1 + 8 + 3 + TagWidth;
  logic           c2_valid, c2_ready;
  logic [C2W-1:0] c2_data;
  logic [   27:0] c2_sum;
  logic [    4:0] c2_lzc;
  logic           c2_sign;
  logic [    7:0] c2_exp;
  logic           c2_zero_sign, c2_nan, c2_inf;
  logic [TagWidth-1:0] c2_tag;

  fp_pipe_stage #(.Width(C2W), .Enable(Cuts[2])) u_cut2 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c1_valid),
    .in_ready_o (c1_ready),
    .in_data_i  ({s2_sum, s2_lzc, c1_sign, c1_exp, c1_zero_sign, c1_nan, c1_inf, c1_tag}),
    .out_valid_o(c2_valid),
    .out_ready_i(c2_ready),
    .out_data_o (c2_data)
  );
  assign {c2_sum, c2_lzc, c2_sign, c2_exp, c2_zero_sign, c2_nan, c2_inf, c2_tag} = c2_data;

  // ---------------------------------------------------------------------
  // 3a. normalize: leading one to bit 27; result exponent e_big + 1 - lzc
  // (10-bit two's complement, range -26..255 for finite operands).
  logic [27:0] norm16, norm4, norm;
  logic [ 9:0] exp_res;
  logic        s3_zero, s3_uflow, s3_ovf, s3_sticky;

  always_comb begin
    // Left shift by lzc in three mux levels (16; 0/4/8/12; 0/1/2/3).
    norm16 = c2_lzc[4] ? {c2_sum[11:0], 16'd0} : c2_sum;
    unique case (c2_lzc[3:2])
      2'd0:    norm4 = norm16;
      2'd1:    norm4 = {norm16[23:0], 4'd0};
      2'd2:    norm4 = {norm16[19:0], 8'd0};
      default: norm4 = {norm16[15:0], 12'd0};
    endcase
    unique case (c2_lzc[1:0])
      2'd0:    norm = norm4;
      2'd1:    norm = {norm4[26:0], 1'd0};
      2'd2:    norm = {norm4[25:0], 2'd0};
      default: norm = {norm4[24:0], 3'd0};
    endcase
    exp_res   = {2'b00, c2_exp} + 10'd1 - {5'd0, c2_lzc};
    s3_zero   = !norm[27] || c2_exp == 8'd0;  // exact zero, or both inputs zero/subnormal
    s3_uflow  = exp_res[9] || exp_res == 10'd0;  // below 2^-126: flush
    s3_ovf    = !exp_res[9] && exp_res[8:0] >= 9'd255;
    s3_sticky = norm[2:0] != 3'd0;
  end

  localparam int unsigned C3W = 23 + 2 + 8 + 7 + TagWidth;
  logic           c3_valid, c3_ready;
  logic [C3W-1:0] c3_data;
  logic [   22:0] c3_frac;
  logic           c3_guard, c3_sticky;
  logic [    7:0] c3_exp;
  logic           c3_zero, c3_uflow, c3_ovf, c3_sign, c3_zero_sign, c3_nan, c3_inf;
  logic [TagWidth-1:0] c3_tag;

  fp_pipe_stage #(.Width(C3W), .Enable(Cuts[3])) u_cut3 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c2_valid),
    .in_ready_o (c2_ready),
    .in_data_i  ({norm[26:4], norm[3], s3_sticky, exp_res[7:0], s3_zero, s3_uflow, s3_ovf,
                  c2_sign, c2_zero_sign, c2_nan, c2_inf, c2_tag}),
    .out_valid_o(c3_valid),
    .out_ready_i(c3_ready),
    .out_data_o (c3_data)
  );
  assign {c3_frac, c3_guard, c3_sticky, c3_exp, c3_zero, c3_uflow, c3_ovf, c3_sign, c3_zero_sign,
          c3_nan, c3_inf, c3_tag} = c3_data;

  // ---------------------------------------------------------------------
  // 3b. round to nearest even and pack. The rounding increment runs over
  // {exp, frac}, so a fraction carry bumps the exponent and 254 -> 255
  // yields exactly the Inf encoding.
  logic        round_up;
  logic [30:0] rounded;
  logic [31:0] s4_y;

  always_comb begin
    round_up = c3_guard & (c3_sticky | c3_frac[0]);
    rounded  = {c3_exp, c3_frac} + 31'(round_up);
    if (c3_nan) s4_y = 32'h7FC0_0000;
    else if (c3_inf) s4_y = {c3_sign, 8'hFF, 23'd0};
    else if (c3_zero) s4_y = {c3_zero_sign, 31'd0};
    else if (c3_ovf) s4_y = {c3_sign, 8'hFF, 23'd0};
    else if (c3_uflow) s4_y = {c3_sign, 31'd0};
    else s4_y = {c3_sign, rounded};
  end

  fp_pipe_stage #(.Width(32 + TagWidth), .Enable(Cuts[4])) u_cut4 (
    .clk_i      (clk_i),
    .rst_i      (rst_i),
    .in_valid_i (c3_valid),
    .in_ready_o (c3_ready),
    .in_data_i  ({s4_y, c3_tag}),
    .out_valid_o(out_valid_o),
    .out_ready_i(out_ready_i),
    .out_data_o ({y_o, tag_o})
  );

`ifndef SYNTHESIS
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
