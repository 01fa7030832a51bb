// GRU forward activation datapath for one hidden unit per cycle (gates in lane
// order r, z, n; lane 3 unused). PyTorch form with the reset gate applied after
// the recurrent product. Operation order (bit-exact with engine_model.cpp fw_gru):
//   a = acc + b_hh;  r = sigmoid(a_r + xp_r);  z = sigmoid(a_z + xp_z)
//   n = tanh(xp_n + r*a_n);  h = n + z*(h_prev - n)
//   record = {r, z, n, a_n, h_prev, 0, 0, 0} (lane 0 first)
// The three activations run outside (act_unit's df_act, shared with the LSTM
// datapath): act_x_o carries lanes r, z (sigmoid) and n (tanh), and act_y_i
// must return their results exactly act_pkg::ACT_LATENCY cycles later.
// Fully pipelined dataflow; latency 5*AddLatency + 2*MulLatency + 2*ACT_LATENCY,
// one unit per cycle.
`default_nettype none

module act_fw_gru #(
  parameter int unsigned MulLatency = 2,
  parameter int unsigned AddLatency = 3,
  parameter int unsigned MetaWidth  = 8,
  localparam int unsigned Latency = 5 * AddLatency + 2 * MulLatency + 2 * act_pkg::ACT_LATENCY
) (
  input  logic                 clk_i,
  input  logic                 rst_i,
  input  logic                 in_valid_i,
  input  logic [MetaWidth-1:0] meta_i,
  input  logic [127:0]         acc_i,    // U*h_{t-1}, lanes r, z, n
  input  logic [127:0]         xp_i,     // W_ih*x_t + b_ih
  input  logic [127:0]         bias_i,   // b_hh
  input  logic [31:0]          state_i,  // h_{t-1}
  output logic                 out_valid_o,
  output logic [MetaWidth-1:0] meta_o,
  output logic [31:0]          h_o,
  output logic [31:0]          state_o,  // h_t (kept as next step's h_prev)
  output logic [255:0]         record_o,
  output logic [95:0]          act_x_o,  // activation operands: r, z, n
  input  logic [95:0]          act_y_i   // their results, ACT_LATENCY cycles later
);

  localparam int unsigned La = AddLatency;
  localparam int unsigned Lm = MulLatency;
  localparam int unsigned Lx = act_pkg::ACT_LATENCY;
  localparam int unsigned TBias = La;            // a = acc + b
  localparam int unsigned TGate = 2 * La + Lx;   // r, z
  localparam int unsigned TRn   = TGate + Lm;    // r * a_n
  localparam int unsigned TN    = TRn + La + Lx; // n
  localparam int unsigned TDiff = TN + La;       // h_prev - n
  localparam int unsigned TZd   = TDiff + Lm;    // z * (h_prev - n)

  logic [95:0] a;
  for (genvar g = 0; g < 3; g++) begin : g_bias
    df_add #(.Latency(La)) u_bias (
      .clk_i, .rst_i, .a_i(acc_i[g*32 +: 32]), .b_i(bias_i[g*32 +: 32]), .y_o(a[g*32 +: 32]));
  end

  logic [63:0] xp_rz_d, pre_rz, gate_rz;
  for (genvar g = 0; g < 2; g++) begin : g_rz
    prim_delay #(.Width(32), .Depth(La)) u_xp_d (
      .clk_i, .d_i(xp_i[g*32 +: 32]), .q_o(xp_rz_d[g*32 +: 32]));
    df_add #(.Latency(La)) u_pre (
      .clk_i, .rst_i, .a_i(a[g*32 +: 32]), .b_i(xp_rz_d[g*32 +: 32]), .y_o(pre_rz[g*32 +: 32]));
  end

  assign act_x_o[63:0] = pre_rz;  // sigmoid r, z
  assign gate_rz = act_y_i[63:0];

  logic [31:0] r, z, a_n_g, rn, xp_n_d, pre_n, n, h_prev_d, n_neg, diff, z_d, zd, n_d, h;
  assign r = gate_rz[0 +: 32];
  assign z = gate_rz[32 +: 32];
  prim_delay #(.Width(32), .Depth(TGate - TBias)) u_an_d (.clk_i, .d_i(a[64 +: 32]), .q_o(a_n_g));
  df_mul #(.Latency(Lm)) u_rn (.clk_i, .rst_i, .a_i(r), .b_i(a_n_g), .y_o(rn));
  prim_delay #(.Width(32), .Depth(TRn)) u_xpn_d (.clk_i, .d_i(xp_i[64 +: 32]), .q_o(xp_n_d));
  df_add #(.Latency(La)) u_pre_n (.clk_i, .rst_i, .a_i(xp_n_d), .b_i(rn), .y_o(pre_n));
  assign act_x_o[95:64] = pre_n;  // tanh(n)
  assign n = act_y_i[95:64];
  prim_delay #(.Width(32), .Depth(TN)) u_hprev_d (.clk_i, .d_i(state_i), .q_o(h_prev_d));
  assign n_neg = {~n[31], n[30:0]};
  df_add #(.Latency(La)) u_diff (.clk_i, .rst_i, .a_i(h_prev_d), .b_i(n_neg), .y_o(diff));
  prim_delay #(.Width(32), .Depth(TDiff - TGate)) u_z_d (.clk_i, .d_i(z), .q_o(z_d));
  df_mul #(.Latency(Lm)) u_zd (.clk_i, .rst_i, .a_i(z_d), .b_i(diff), .y_o(zd));
  prim_delay #(.Width(32), .Depth(TZd - TN)) u_n_d (.clk_i, .d_i(n), .q_o(n_d));
  df_add #(.Latency(La)) u_h (.clk_i, .rst_i, .a_i(n_d), .b_i(zd), .y_o(h));

  // Align the record with h.
  logic [63:0] rz_out;
  logic [31:0] n_out, a_n_out, h_prev_out;
  prim_delay #(.Width(64), .Depth(Latency - TGate)) u_rz_out (.clk_i, .d_i(gate_rz), .q_o(rz_out));
  prim_delay #(.Width(32), .Depth(Latency - TN)) u_n_out (.clk_i, .d_i(n), .q_o(n_out));
  prim_delay #(.Width(32), .Depth(Latency - TGate)) u_an_out (.clk_i, .d_i(a_n_g), .q_o(a_n_out));
  prim_delay #(.Width(32), .Depth(Latency - TN)) u_hprev_out (
    .clk_i, .d_i(h_prev_d), .q_o(h_prev_out));

  assign h_o      = h;
  assign state_o  = h;
  assign record_o = {96'h0, h_prev_out, a_n_out, n_out, rz_out};

  prim_delay_rst #(.Width(1), .Depth(Latency)) u_valid (
    .clk_i, .rst_i, .d_i(in_valid_i), .q_o(out_valid_o));
  prim_delay #(.Width(MetaWidth), .Depth(Latency)) u_meta (.clk_i, .d_i(meta_i), .q_o(meta_o));

  logic unused_lane3;
  assign unused_lane3 = ^{acc_i[127:96], xp_i[127:96], bias_i[127:96]};

endmodule

`default_nettype wire
