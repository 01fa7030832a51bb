// Broadcast tree of the PE chains: one word in, a registered copy at each of
// Leaves outputs (the chain heads), through engine_pkg::bcast_depth(Leaves)
// levels of fan-out 4. Every node is a register, so no net drives more than
// four loads besides clock and reset. Every register resets to zero (the
// word carries valid bits and the chain configuration).
// Latency: bcast_depth(Leaves) cycles (0 for one leaf: a wire).
// Throughput: one word per cycle.
`default_nettype none

module chain_bcast #(
  parameter int unsigned Width  = 32,
  parameter int unsigned Leaves = 4,
  localparam int unsigned Depth = engine_pkg::bcast_depth(Leaves)
) (
  input  logic                    clk_i,
  input  logic                    rst_i,
  input  logic [Width-1:0]        d_i,
  output logic [Leaves*Width-1:0] q_o
);

  // Level l holds ceil(Leaves / 4^(Depth-l)) nodes; node i copies node i/4
  // of the level above. Level 0 is the input, level Depth the leaves.
  for (genvar l = 0; l <= Depth; l++) begin : g_lvl
    localparam int unsigned Shift = 2 * (Depth - l);
    localparam int unsigned Nodes = (Leaves + (1 << Shift) - 1) >> Shift;
    logic [Nodes*Width-1:0] node;
    if (l == 0) begin : g_root
      assign node = d_i;
    end else begin : g_regs
      for (genvar i = 0; i < Nodes; i++) begin : g_node
        logic [Width-1:0] node_q;
        always_ff @(posedge clk_i) begin
          if (rst_i) node_q <= '0;
          else       node_q <= g_lvl[l-1].node[(i/4)*Width +: Width];
        end
        assign node[i*Width +: Width] = node_q;
      end
    end
  end
  assign q_o = g_lvl[Depth].node;

  if (Depth == 0) begin : g_no_regs
    logic unused_clk_rst;
    assign unused_clk_rst = ^{clk_i, rst_i};
  end

`ifndef SYNTHESIS
  initial begin
    if (Leaves < 1 || Leaves > 1024) $error("chain_bcast: Leaves=%0d outside 1..1024", Leaves);
  end
`endif

endmodule

`default_nettype wire
