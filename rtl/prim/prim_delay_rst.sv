// Fixed delay line for control bits (valid flags): like prim_delay, but every
// stage resets to zero so nothing stale emerges after a reset.
// Latency: Depth cycles (Depth = 0 is a wire). Throughput: one value per cycle.
`default_nettype none

module prim_delay_rst #(
  parameter int unsigned Width = 1,
  parameter int unsigned Depth = 1
) (
  input  logic             clk_i,
  input  logic             rst_i,
  input  logic [Width-1:0] d_i,
  output logic [Width-1:0] q_o
);

  if (Depth == 0) begin : g_wire
    logic unused_rst;
    assign unused_rst = rst_i;
    assign q_o = d_i;
  end else begin : g_regs
    logic [Depth*Width-1:0] stages_q, stages_d;
    if (Depth == 1) begin : g_one
      assign stages_d = d_i;
    end else begin : g_many
      assign stages_d = {stages_q[(Depth-1)*Width-1:0], d_i};
    end
    always_ff @(posedge clk_i) begin
      if (rst_i) stages_q <= '0;
      else       stages_q <= stages_d;
    end
    assign q_o = stages_q[Depth*Width-1 -: Width];
  end

endmodule

`default_nettype wire
