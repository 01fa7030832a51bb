// Where the PE chains meet: NumChains chain tails into one result stream, by a
// binary tree of engine_pkg::join_depth(NumChains) levels. Level by level,
// node i takes nodes 2i and 2i+1 of the level above (an odd last node is
// passed on, delayed to stay aligned).
//   FW (bw_i = 0): the chains drain their results in turns on Lanes lanes, at
//       most one valid per lane per cycle (a group of rows may straddle two
//       chains, lane by lane); each node registers, lane by lane, the valid
//       one. Latency: join_depth.
//   BW (bw_i = 1): every chain emits its partial sum of column c in the same
//       cycle; each node adds them (left + right), so the output is the tree
//       sum of engine::tree_sum; the zero flag travels with the left operand.
//       Latency: join_depth * AddLatency.
// BW partials use lane 0. Throughput: Lanes results (FW) or one sum (BW) per
// cycle. No handshake: the chains are rigidly timed.
`default_nettype none

module chain_join #(
  parameter int unsigned NumChains  = 4,
  parameter int unsigned AddLatency = 3,
  parameter int unsigned Lanes      = 1,   // FW result lanes
  localparam int unsigned Depth     = engine_pkg::join_depth(NumChains)
) (
  input  logic                   clk_i,
  input  logic                   rst_i,
  input  logic                   bw_i,
  input  logic [NumChains*Lanes-1:0]    valid_i,
  input  logic [NumChains-1:0]          zero_i,
  input  logic [NumChains*Lanes*32-1:0] data_i,
  output logic [Lanes-1:0]              valid_o,
  output logic                          zero_o,
  output logic [Lanes*32-1:0]           data_o
);

  localparam int unsigned W = Lanes * 32;  // FW data a node

  for (genvar l = 0; l <= Depth; l++) begin : g_lvl
    localparam int unsigned Nodes = (NumChains + (1 << l) - 1) >> l;
    logic [Nodes*Lanes-1:0] fw_valid;
    logic [Nodes-1:0]       bw_valid, bw_zero;
    logic [Nodes*W-1:0]     fw_data;
    logic [Nodes*32-1:0]    bw_data;
    if (l == 0) begin : g_tails
      for (genvar c = 0; c < NumChains; c++) begin : g_tail
        assign bw_valid[c]            = valid_i[c*Lanes] && bw_i;
        assign bw_data[c*32 +: 32]    = data_i[c*W +: 32];
      end
      assign fw_valid = valid_i & {NumChains*Lanes{!bw_i}};
      assign fw_data  = data_i;
      assign bw_zero  = zero_i;
    end else begin : g_nodes
      localparam int unsigned Above = (NumChains + (1 << (l - 1)) - 1) >> (l - 1);
      for (genvar i = 0; i < Nodes; i++) begin : g_node
        logic [Lanes-1:0] a_fw_valid;
        logic             a_bw_valid, a_bw_zero;
        logic [W-1:0]     a_fw_data;
        logic [31:0]      a_bw_data;
        assign a_fw_valid = g_lvl[l-1].fw_valid[2*i*Lanes +: Lanes];
        assign a_fw_data  = g_lvl[l-1].fw_data[2*i*W +: W];
        assign a_bw_valid = g_lvl[l-1].bw_valid[2*i];
        assign a_bw_zero  = g_lvl[l-1].bw_zero[2*i];
        assign a_bw_data  = g_lvl[l-1].bw_data[2*i*32 +: 32];

        // BW validity and zero flag: the adder's latency, from the left operand.
        prim_delay_rst #(.Width(1), .Depth(AddLatency)) u_bw_valid (
          .clk_i, .rst_i, .d_i(a_bw_valid), .q_o(bw_valid[i]));
        prim_delay #(.Width(1), .Depth(AddLatency)) u_bw_zero (
          .clk_i, .d_i(a_bw_zero), .q_o(bw_zero[i]));

        logic [Lanes-1:0] fw_valid_q;
        logic [W-1:0]     fw_data_q;
        if (2 * i + 1 < Above) begin : g_pair
          logic [Lanes-1:0] b_fw_valid;
          logic [W-1:0]     b_fw_data;
          logic [31:0]      b_bw_data;
          logic             unused_b;
          assign b_fw_valid = g_lvl[l-1].fw_valid[(2*i+1)*Lanes +: Lanes];
          assign b_fw_data  = g_lvl[l-1].fw_data[(2*i+1)*W +: W];
          assign b_bw_data  = g_lvl[l-1].bw_data[(2*i+1)*32 +: 32];
          // The right partial's valid and zero flag equal the left's (the
          // chains are aligned; asserted below).
          assign unused_b   = ^{g_lvl[l-1].bw_valid[2*i+1], g_lvl[l-1].bw_zero[2*i+1]};
          always_ff @(posedge clk_i) begin
            if (rst_i) fw_valid_q <= '0;
            else       fw_valid_q <= a_fw_valid | b_fw_valid;
          end
          for (genvar k = 0; k < Lanes; k++) begin : g_lane
            always_ff @(posedge clk_i)
              fw_data_q[k*32 +: 32] <= a_fw_valid[k] ? a_fw_data[k*32 +: 32] : b_fw_data[k*32 +: 32];
          end
          df_add #(.Latency(AddLatency)) u_add (
            .clk_i, .rst_i, .a_i(a_bw_data), .b_i(b_bw_data), .y_o(bw_data[i*32 +: 32]));
`ifndef SYNTHESIS
          always_ff @(posedge clk_i) begin
            if (!rst_i) begin
              assert ((a_fw_valid & b_fw_valid) == '0)
              else $error("chain_join: two FW results meet at level %0d node %0d", l, i);
              assert (a_bw_valid == g_lvl[l-1].bw_valid[2*i+1])
              else $error("chain_join: BW partials misaligned at level %0d node %0d", l, i);
            end
          end
`endif
        end else begin : g_pass
          always_ff @(posedge clk_i) begin
            if (rst_i) fw_valid_q <= '0;
            else       fw_valid_q <= a_fw_valid;
          end
          always_ff @(posedge clk_i) fw_data_q <= a_fw_data;
          prim_delay #(.Width(32), .Depth(AddLatency)) u_bw_data (
            .clk_i, .d_i(a_bw_data), .q_o(bw_data[i*32 +: 32]));
        end
        assign fw_valid[i*Lanes +: Lanes] = fw_valid_q;
        assign fw_data[i*W +: W]          = fw_data_q;
      end
    end
  end

  assign valid_o = bw_i ? Lanes'(g_lvl[Depth].bw_valid[0]) : g_lvl[Depth].fw_valid[Lanes-1:0];
  assign zero_o  = bw_i && g_lvl[Depth].bw_zero[0];
  always_comb begin
    data_o = g_lvl[Depth].fw_data[W-1:0];
    if (bw_i) data_o[31:0] = g_lvl[Depth].bw_data[31:0];
  end

`ifndef SYNTHESIS
  initial begin
    if (NumChains < 2 || NumChains > 512) $error("chain_join: NumChains=%0d outside 2..512", NumChains);
  end
`endif

endmodule

`default_nettype wire
