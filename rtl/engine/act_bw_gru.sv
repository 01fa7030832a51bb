// GRU backward activation datapath for one hidden unit per cycle. From dh_ext
// (layer above), dh_rec = U^T delta_{t+1} (chain), the direct term carried from
// step t+1 (dh_{t+1} * z_{t+1}) and the forward record {r, z, n, hn, h_prev}
// (hn = U_hn h + b_hn), it computes the pre-activation gradients. Operation order
// (bit-exact with engine_model.cpp bw_gru; 1-x is computed as 1 + (-x)):
//   dh = (dh_ext + dh_rec) + carry
//   d_n = (dh*(1-z)) * (1 - n*n);   d_z = (dh*(h_prev - n)) * (z*(1-z))
//   d_hn = d_n * r;                 d_r = (d_n*hn) * (r*(1-r))
//   carry_out = dh * z
// Outputs: delta = {d_r, d_z, d_n, d_hn}; chain rows = {d_r, d_z, d_hn} (what
// U^T is applied to); dh (for dh0 in the final step).
// Fully pipelined dataflow; latency 2*AddLatency + 4*MulLatency, one unit per cycle.
`default_nettype none

module act_bw_gru #(
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
  input  logic [31:0]          carry_i,   // dh_{t+1} * z_{t+1}
  input  logic [255:0]         record_i,
  output logic                 out_valid_o,
  output logic [MetaWidth-1:0] meta_o,
  output logic [127:0]         delta_o,
  output logic [127:0]         rows_o,
  output logic [31:0]          carry_o,   // dh_t * z_t
  output logic [31:0]          dh_o
);

  localparam int unsigned La = AddLatency;
  localparam int unsigned Lm = MulLatency;
  localparam logic [31:0] ONE = engine_pkg::FP_ONE;

  logic [31:0] rr_in, rz, rn, rhn, rhp;
  assign rr_in = record_i[0 +: 32];
  assign rz    = record_i[32 +: 32];
  assign rn    = record_i[64 +: 32];
  assign rhn   = record_i[96 +: 32];
  assign rhp   = record_i[128 +: 32];

  // Time La / 2La: the total gradient; 1-z, 1-r, h_prev - n.
  logic [31:0] s, carry_a, dh, zm, rm, dzn, z_a, r_a;
  df_add #(.Latency(La)) u_s (.clk_i, .rst_i, .a_i(dh_ext_i), .b_i(dh_rec_i), .y_o(s));
  prim_delay #(.Width(32), .Depth(La)) u_carry_a (.clk_i, .d_i(carry_i), .q_o(carry_a));
  df_add #(.Latency(La)) u_dh (.clk_i, .rst_i, .a_i(s), .b_i(carry_a), .y_o(dh));
  df_add #(.Latency(La)) u_zm (.clk_i, .rst_i, .a_i(ONE), .b_i({~rz[31], rz[30:0]}), .y_o(zm));
  df_add #(.Latency(La)) u_rm (.clk_i, .rst_i, .a_i(ONE), .b_i({~rr_in[31], rr_in[30:0]}), .y_o(rm));
  df_add #(.Latency(La)) u_dzn (.clk_i, .rst_i, .a_i(rhp), .b_i({~rn[31], rn[30:0]}), .y_o(dzn));
  prim_delay #(.Width(64), .Depth(La)) u_zr_a (.clk_i, .d_i({rz, rr_in}), .q_o({z_a, r_a}));

  // Time Lm / La+Lm: 1 - n*n, z*(1-z), r*(1-r).
  logic [31:0] n2, nm, zz, rr;
  df_mul #(.Latency(Lm)) u_n2 (.clk_i, .rst_i, .a_i(rn), .b_i(rn), .y_o(n2));
  df_add #(.Latency(La)) u_nm (.clk_i, .rst_i, .a_i(ONE), .b_i({~n2[31], n2[30:0]}), .y_o(nm));
  df_mul #(.Latency(Lm)) u_zz (.clk_i, .rst_i, .a_i(z_a), .b_i(zm), .y_o(zz));
  df_mul #(.Latency(Lm)) u_rr (.clk_i, .rst_i, .a_i(r_a), .b_i(rm), .y_o(rr));

  // Time 2La+Lm: dh products.
  logic [31:0] zm_b, dzn_b, z_b, dn, dz, carry_new;
  prim_delay #(.Width(96), .Depth(La)) u_b (
    .clk_i, .d_i({z_a, dzn, zm}), .q_o({z_b, dzn_b, zm_b}));
  df_mul #(.Latency(Lm)) u_dn (.clk_i, .rst_i, .a_i(dh), .b_i(zm_b), .y_o(dn));
  df_mul #(.Latency(Lm)) u_dz (.clk_i, .rst_i, .a_i(dh), .b_i(dzn_b), .y_o(dz));
  df_mul #(.Latency(Lm)) u_carry (.clk_i, .rst_i, .a_i(dh), .b_i(z_b), .y_o(carry_new));

  // Time 2La+2Lm: d_n, d_z.
  logic [31:0] nm_c, zz_c, d_n, d_z;
  prim_delay #(.Width(64), .Depth(La)) u_c (.clk_i, .d_i({zz, nm}), .q_o({zz_c, nm_c}));
  df_mul #(.Latency(Lm)) u_d_n (.clk_i, .rst_i, .a_i(dn), .b_i(nm_c), .y_o(d_n));
  df_mul #(.Latency(Lm)) u_d_z (.clk_i, .rst_i, .a_i(dz), .b_i(zz_c), .y_o(d_z));

  // Time 2La+3Lm: d_hn and dr; 2La+4Lm: d_r.
  logic [31:0] r_d, hn_d, rr_d, d_hn, dr, d_r;
  prim_delay #(.Width(64), .Depth(2 * La + 2 * Lm)) u_rhn_d (
    .clk_i, .d_i({rhn, rr_in}), .q_o({hn_d, r_d}));
  df_mul #(.Latency(Lm)) u_d_hn (.clk_i, .rst_i, .a_i(d_n), .b_i(r_d), .y_o(d_hn));
  df_mul #(.Latency(Lm)) u_dr (.clk_i, .rst_i, .a_i(d_n), .b_i(hn_d), .y_o(dr));
  prim_delay #(.Width(32), .Depth(La + 2 * Lm)) u_rr_d (.clk_i, .d_i(rr), .q_o(rr_d));
  df_mul #(.Latency(Lm)) u_d_r (.clk_i, .rst_i, .a_i(dr), .b_i(rr_d), .y_o(d_r));

  // Align the outputs with d_r.
  logic [31:0] d_z_out, d_n_out, d_hn_out;
  prim_delay #(.Width(64), .Depth(2 * Lm)) u_zn_out (
    .clk_i, .d_i({d_n, d_z}), .q_o({d_n_out, d_z_out}));
  prim_delay #(.Width(32), .Depth(Lm)) u_hn_out (.clk_i, .d_i(d_hn), .q_o(d_hn_out));
  prim_delay #(.Width(32), .Depth(3 * Lm)) u_carry_out (.clk_i, .d_i(carry_new), .q_o(carry_o));
  prim_delay #(.Width(32), .Depth(4 * Lm)) u_dh_out (.clk_i, .d_i(dh), .q_o(dh_o));

  assign delta_o = {d_hn_out, d_n_out, d_z_out, d_r};
  assign rows_o  = {32'h0, d_hn_out, d_z_out, d_r};

  prim_delay_rst #(.Width(1), .Depth(Latency)) u_valid (
    .clk_i, .rst_i, .d_i(in_valid_i), .q_o(out_valid_o));
  prim_delay #(.Width(MetaWidth), .Depth(Latency)) u_meta (.clk_i, .d_i(meta_i), .q_o(meta_o));

  logic unused_rec;
  assign unused_rec = ^record_i[255:160];

endmodule

`default_nettype wire
