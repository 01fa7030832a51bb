// Always-flowing binary32 adder: y = a + b for fixed-latency dataflow
// pipelines: a new operand pair enters every cycle and its result leaves
// exactly Latency cycles later (fp_add with the handshake tied off; validity is
// tracked by the enclosing pipeline).
// Latency: Latency cycles. Throughput: one result per cycle.
`default_nettype none

module df_add #(
  parameter int unsigned Latency = 3
) (
  input  logic        clk_i,
  input  logic        rst_i,
  input  logic [31:0] a_i,
  input  logic [31:0] b_i,
  output logic [31:0] y_o
);

  logic unused_ready, unused_valid;
  logic [0:0] unused_tag;

  fp_add #(
    .TagWidth(1),
    .Latency (Latency)
  ) u_add (
    .clk_i,
    .rst_i,
    .in_valid_i (1'b1),
    .in_ready_o (unused_ready),
    .a_i,
    .b_i,
    .tag_i      (1'b0),
    .out_valid_o(unused_valid),
    .out_ready_i(1'b1),
    .y_o,
    .tag_o      (unused_tag)
  );

endmodule

`default_nettype wire
