// Always-flowing sigmoid or tanh (Func = 0: sigmoid, 1: tanh) for fixed-latency
// dataflow pipelines: a new input every cycle, its result exactly
// act_pkg::ACT_LATENCY cycles later (fp_act with the handshake tied off).
// Latency: act_pkg::ACT_LATENCY. Throughput: one result per cycle.
`default_nettype none

module df_act #(
  parameter bit Func = 1'b0
) (
  input  logic        clk_i,
  input  logic        rst_i,
  input  logic [31:0] x_i,
  output logic [31:0] y_o
);

  logic unused_ready, unused_valid;
  logic [0:0] unused_tag;

  fp_act #(
    .TagWidth(1)
  ) u_act (
    .clk_i,
    .rst_i,
    .in_valid_i (1'b1),
    .in_ready_o (unused_ready),
    .x_i,
    .func_i     (Func),
    .tag_i      (1'b0),
    .out_valid_o(unused_valid),
    .out_ready_i(1'b1),
    .y_o,
    .tag_o      (unused_tag)
  );

endmodule

`default_nettype wire
