// LSTM forward activation datapath for one hidden unit per cycle (gates in lane
// order i, f, g, o). Operation order (bit-exact with engine_model.cpp fw_lstm):
//   p = (acc + b_hh) + xp;  i, f, o = sigmoid(p);  g = tanh(p)
//   c = f*c_prev + i*g;  h = o * tanh(c)
//   record = {i, f, g, o, tanh(c), c_prev, 0, 0} (lane 0 first)
// The five activations run outside (act_unit's df_act, shared with the GRU
// datapath): act_x_o carries lanes i, f, g, o (sigmoid, sigmoid, tanh, sigmoid)
// and c (tanh), and act_y_i must return their results exactly
// act_pkg::ACT_LATENCY cycles later.
// Fully pipelined dataflow; latency 3*AddLatency + 2*MulLatency + 2*ACT_LATENCY,
// one unit per cycle.
`default_nettype none

module act_fw_lstm #(
  parameter int unsigned MulLatency = 2,
  parameter int unsigned AddLatency = 3,
  parameter int unsigned MetaWidth  = 8,
  localparam int unsigned Latency = 3 * AddLatency + 2 * MulLatency + 2 * act_pkg::ACT_LATENCY
) (
  input  logic                 clk_i,
  input  logic                 rst_i,
  input  logic                 in_valid_i,
  input  logic [MetaWidth-1:0] meta_i,
  input  logic [127:0]         acc_i,    // U*h_{t-1}, lanes i, f, g, o
  input  logic [127:0]         xp_i,     // W_ih*x_t + b_ih
  input  logic [127:0]         bias_i,   // b_hh
  input  logic [31:0]          state_i,  // c_{t-1}
  output logic                 out_valid_o,
  output logic [MetaWidth-1:0] meta_o,
  output logic [31:0]          h_o,
  output logic [31:0]          state_o,  // c_t
  output logic [255:0]         record_o,
  output logic [159:0]         act_x_o,  // activation operands: i, f, g, o, c
  input  logic [159:0]         act_y_i   // their results, ACT_LATENCY cycles later
);

  localparam int unsigned Lx = act_pkg::ACT_LATENCY;
  localparam int unsigned TGate = 2 * AddLatency + Lx;     // gate activations ready
  localparam int unsigned TCell = TGate + MulLatency + AddLatency;  // c ready
  localparam int unsigned TTanh = TCell + Lx;               // tanh(c) ready

  logic [127:0] a, xp_d, p, gate;
  for (genvar g = 0; g < 4; g++) begin : g_gate
    df_add #(.Latency(AddLatency)) u_bias (
      .clk_i, .rst_i, .a_i(acc_i[g*32 +: 32]), .b_i(bias_i[g*32 +: 32]), .y_o(a[g*32 +: 32]));
    prim_delay #(.Width(32), .Depth(AddLatency)) u_xp_d (
      .clk_i, .d_i(xp_i[g*32 +: 32]), .q_o(xp_d[g*32 +: 32]));
    df_add #(.Latency(AddLatency)) u_pre (
      .clk_i, .rst_i, .a_i(a[g*32 +: 32]), .b_i(xp_d[g*32 +: 32]), .y_o(p[g*32 +: 32]));
  end

  assign act_x_o[127:0] = p;  // sigmoid i, f, o; tanh g
  assign gate = act_y_i[127:0];

  logic [31:0] gi, gf, gg, go;
  assign gi = gate[0 +: 32];
  assign gf = gate[32 +: 32];
  assign gg = gate[64 +: 32];
  assign go = gate[96 +: 32];

  logic [31:0] c_prev_g, fc, ig, c, tc, o_d, h;
  prim_delay #(.Width(32), .Depth(TGate)) u_cprev_d (.clk_i, .d_i(state_i), .q_o(c_prev_g));
  df_mul #(.Latency(MulLatency)) u_fc (.clk_i, .rst_i, .a_i(gf), .b_i(c_prev_g), .y_o(fc));
  df_mul #(.Latency(MulLatency)) u_ig (.clk_i, .rst_i, .a_i(gi), .b_i(gg), .y_o(ig));
  df_add #(.Latency(AddLatency)) u_c (.clk_i, .rst_i, .a_i(fc), .b_i(ig), .y_o(c));
  assign act_x_o[159:128] = c;  // tanh(c)
  assign tc = act_y_i[159:128];
  prim_delay #(.Width(32), .Depth(TTanh - TGate)) u_o_d (.clk_i, .d_i(go), .q_o(o_d));
  df_mul #(.Latency(MulLatency)) u_h (.clk_i, .rst_i, .a_i(o_d), .b_i(tc), .y_o(h));

  // Align everything kept for the record and the state with h.
  logic [127:0] gate_out;
  logic [31:0]  tc_out, c_prev_out;
  prim_delay #(.Width(128), .Depth(Latency - TGate)) u_gate_out (.clk_i, .d_i(gate), .q_o(gate_out));
  prim_delay #(.Width(32), .Depth(MulLatency)) u_tc_out (.clk_i, .d_i(tc), .q_o(tc_out));
  prim_delay #(.Width(32), .Depth(Latency - TGate)) u_cprev_out (
    .clk_i, .d_i(c_prev_g), .q_o(c_prev_out));
  prim_delay #(.Width(32), .Depth(Latency - TCell)) u_c_out (.clk_i, .d_i(c), .q_o(state_o));

  assign h_o      = h;
  assign record_o = {64'h0, c_prev_out, tc_out, gate_out};

  prim_delay_rst #(.Width(1), .Depth(Latency)) u_valid (
    .clk_i, .rst_i, .d_i(in_valid_i), .q_o(out_valid_o));
  prim_delay #(.Width(MetaWidth), .Depth(Latency)) u_meta (.clk_i, .d_i(meta_i), .q_o(meta_o));

endmodule

`default_nettype wire
