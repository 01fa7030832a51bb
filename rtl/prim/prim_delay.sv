// Fixed delay line: out = in delayed by Depth cycles (Depth = 0 is a wire).
// Data registers are not reset (they only carry values qualified elsewhere).
// Latency: Depth cycles. Throughput: one value per cycle.
`default_nettype none

module prim_delay #(
  parameter int unsigned Width = 32,
  parameter int unsigned Depth = 1
) (
  input  logic             clk_i,
  input  logic [Width-1:0] d_i,
  output logic [Width-1:0] q_o
);

  if (Depth == 0) begin : g_wire
    logic unused_clk;
    assign unused_clk = clk_i;
    assign q_o = d_i;
  end else begin : g_regs
    logic [Depth*Width-1:0] stages_q;
    if (Depth == 1) begin : g_one
      always_ff @(posedge clk_i) stages_q <= d_i;
    end else begin : g_many
      always_ff @(posedge clk_i) stages_q <= {stages_q[(Depth-1)*Width-1:0], d_i};
    end
    assign q_o = stages_q[Depth*Width-1 -: Width];
  end

endmodule

`default_nettype wire
