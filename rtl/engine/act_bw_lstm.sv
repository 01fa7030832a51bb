// LSTM backward activation datapath for one hidden unit per cycle. From the
// incoming gradient (dh_ext from the layer above, dh_rec = U^T delta_{t+1}
// from the chain), dc_{t+1} and the stored forward record {i,f,g,o,tanh(c),c_prev},
// it computes the gate pre-activation gradients and dc_t. Operation order
// (bit-exact with engine_model.cpp bw_lstm; 1-x is computed as 1 + (-x)):
//   dh = dh_ext + dh_rec
//   d_o = (dh*tc) * (o*(1-o));    dc = dc_next + (dh*o) * (1 - tc*tc)
//   d_i = (dc*g) * (i*(1-i));     d_g = (dc*i) * (1 - g*g)
//   d_f = (dc*c_prev) * (f*(1-f)); dc_prev = dc*f
// Outputs: delta = rows = {d_i, d_f, d_g, d_o} (lane 0 first), carry = dc_prev,
// dh (the summed gradient, used for dh0 in the final step).
// Fully pipelined dataflow; latency 2*AddLatency + 4*MulLatency, one unit per cycle.
`default_nettype none

module act_bw_lstm #(
  parameter int unsigned MulLatency = 2,
  parameter int unsigned AddLatency = 3,
  parameter int unsigned MetaWidth  = 8,
  localparam int unsigned Latency = 2 * AddLatency + 4 * MulLatency
) (
  input  logic                 clk_i,
  input  logic                 rst_i,
  input  logic                 in_valid_i,
  input  logic [MetaWidth-1:0] meta_i,
  input  logic [31:0]          dh_ext_i,
  input  logic [31:0]          dh_rec_i,
  input  logic [31:0]          carry_i,   // dc_{t+1}
  input  logic [255:0]         record_i,
  output logic                 out_valid_o,
  output logic [MetaWidth-1:0] meta_o,
  output logic [127:0]         delta_o,
  output logic [127:0]         rows_o,
  output logic [31:0]          carry_o,   // dc_t
  output logic [31:0]          dh_o
);

  localparam int unsigned La = AddLatency;
  localparam int unsigned Lm = MulLatency;
  localparam logic [31:0] ONE = engine_pkg::FP_ONE;

  logic [31:0] ri, rf, rg, ro, rtc, rcp;
  assign ri  = record_i[0 +: 32];
  assign rf  = record_i[32 +: 32];
  assign rg  = record_i[64 +: 32];
  assign ro  = record_i[96 +: 32];
  assign rtc = record_i[128 +: 32];
  assign rcp = record_i[160 +: 32];

  // Time La: dh and the 1-x terms; record values delayed to match.
  logic [31:0] dh, om, im, fm, i_a, f_a, o_a, tc_a;
  df_add #(.Latency(La)) u_dh (.clk_i, .rst_i, .a_i(dh_ext_i), .b_i(dh_rec_i), .y_o(dh));
  df_add #(.Latency(La)) u_om (.clk_i, .rst_i, .a_i(ONE), .b_i({~ro[31], ro[30:0]}), .y_o(om));
  df_add #(.Latency(La)) u_im (.clk_i, .rst_i, .a_i(ONE), .b_i({~ri[31], ri[30:0]}), .y_o(im));
  df_add #(.Latency(La)) u_fm (.clk_i, .rst_i, .a_i(ONE), .b_i({~rf[31], rf[30:0]}), .y_o(fm));
  prim_delay #(.Width(128), .Depth(La)) u_rec_a (
    .clk_i, .d_i({rtc, ro, rf, ri}), .q_o({tc_a, o_a, f_a, i_a}));

  // Time Lm / Lm+La: squares and 1 - square.
  logic [31:0] tc2, g2, tcm, gm;
  df_mul #(.Latency(Lm)) u_tc2 (.clk_i, .rst_i, .a_i(rtc), .b_i(rtc), .y_o(tc2));
  df_mul #(.Latency(Lm)) u_g2 (.clk_i, .rst_i, .a_i(rg), .b_i(rg), .y_o(g2));
  df_add #(.Latency(La)) u_tcm (.clk_i, .rst_i, .a_i(ONE), .b_i({~tc2[31], tc2[30:0]}), .y_o(tcm));
  df_add #(.Latency(La)) u_gm (.clk_i, .rst_i, .a_i(ONE), .b_i({~g2[31], g2[30:0]}), .y_o(gm));

  // Time La+Lm: activation derivatives and the dh products.
  logic [31:0] do_act, di_act, df_act, x1, x2;
  df_mul #(.Latency(Lm)) u_do (.clk_i, .rst_i, .a_i(o_a), .b_i(om), .y_o(do_act));
  df_mul #(.Latency(Lm)) u_di (.clk_i, .rst_i, .a_i(i_a), .b_i(im), .y_o(di_act));
  df_mul #(.Latency(Lm)) u_df (.clk_i, .rst_i, .a_i(f_a), .b_i(fm), .y_o(df_act));
  df_mul #(.Latency(Lm)) u_x1 (.clk_i, .rst_i, .a_i(dh), .b_i(tc_a), .y_o(x1));
  df_mul #(.Latency(Lm)) u_x2 (.clk_i, .rst_i, .a_i(dh), .b_i(o_a), .y_o(x2));

  // Time La+2Lm: d_o and the cell-gradient increment.
  logic [31:0] d_o, x3, dc_next_d, dc;
  df_mul #(.Latency(Lm)) u_do2 (.clk_i, .rst_i, .a_i(x1), .b_i(do_act), .y_o(d_o));
  df_mul #(.Latency(Lm)) u_x3 (.clk_i, .rst_i, .a_i(x2), .b_i(tcm), .y_o(x3));
  prim_delay #(.Width(32), .Depth(La + 2 * Lm)) u_dcn_d (.clk_i, .d_i(carry_i), .q_o(dc_next_d));
  df_add #(.Latency(La)) u_dc (.clk_i, .rst_i, .a_i(dc_next_d), .b_i(x3), .y_o(dc));

  // Time 2La+3Lm: dc times the record values.
  logic [31:0] i_c, f_c, g_c, cp_c, yi, yg, yf, dc_prev;
  prim_delay #(.Width(128), .Depth(2 * La + 2 * Lm)) u_rec_c (
    .clk_i, .d_i({rcp, rg, rf, ri}), .q_o({cp_c, g_c, f_c, i_c}));
  df_mul #(.Latency(Lm)) u_yi (.clk_i, .rst_i, .a_i(dc), .b_i(g_c), .y_o(yi));
  df_mul #(.Latency(Lm)) u_yg (.clk_i, .rst_i, .a_i(dc), .b_i(i_c), .y_o(yg));
  df_mul #(.Latency(Lm)) u_yf (.clk_i, .rst_i, .a_i(dc), .b_i(cp_c), .y_o(yf));
  df_mul #(.Latency(Lm)) u_dcp (.clk_i, .rst_i, .a_i(dc), .b_i(f_c), .y_o(dc_prev));

  // Time 2La+4Lm: the remaining gate gradients.
  logic [31:0] di_act_d, gm_d, df_act_d, d_i, d_g, d_f, d_o_out;
  prim_delay #(.Width(96), .Depth(La + 2 * Lm)) u_der_d (
    .clk_i, .d_i({df_act, gm, di_act}), .q_o({df_act_d, gm_d, di_act_d}));
  df_mul #(.Latency(Lm)) u_d_i (.clk_i, .rst_i, .a_i(yi), .b_i(di_act_d), .y_o(d_i));
  df_mul #(.Latency(Lm)) u_d_g (.clk_i, .rst_i, .a_i(yg), .b_i(gm_d), .y_o(d_g));
  df_mul #(.Latency(Lm)) u_d_f (.clk_i, .rst_i, .a_i(yf), .b_i(df_act_d), .y_o(d_f));
  prim_delay #(.Width(32), .Depth(La + 2 * Lm)) u_do_out (.clk_i, .d_i(d_o), .q_o(d_o_out));
  prim_delay #(.Width(32), .Depth(Lm)) u_carry_out (.clk_i, .d_i(dc_prev), .q_o(carry_o));
  prim_delay #(.Width(32), .Depth(La + 4 * Lm)) u_dh_out (.clk_i, .d_i(dh), .q_o(dh_o));

  assign delta_o = {d_o_out, d_g, d_f, d_i};
  assign rows_o  = delta_o;

  prim_delay_rst #(.Width(1), .Depth(Latency)) u_valid (
    .clk_i, .rst_i, .d_i(in_valid_i), .q_o(out_valid_o));
  prim_delay #(.Width(MetaWidth), .Depth(Latency)) u_meta (.clk_i, .d_i(meta_i), .q_o(meta_o));

  logic unused_rec;
  assign unused_rec = ^record_i[255:192];

endmodule

`default_nettype wire
