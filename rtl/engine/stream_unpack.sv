// Sends the first `count_i` words (1..Lanes) of each entry of a first-word-
// fall-through source as a 32-bit stream, lane 0 first, and pops the entry with
// its last word. Used for the delta and final-state output streams. An entry
// flagged `in_last_i` marks its final word with `out_last_o` (the command's
// final word on an AXI-Stream-style output).
// Latency: combinational from the source head. Throughput: one word per cycle.
`default_nettype none

module stream_unpack #(
  parameter int unsigned Lanes = 4
) (
  input  logic                clk_i,
  input  logic                rst_i,
  input  logic [2:0]          count_i,
  input  logic                in_valid_i,
  output logic                in_pop_o,
  input  logic [Lanes*32-1:0] in_data_i,
  input  logic                in_last_i,
  output logic                out_valid_o,
  input  logic                out_ready_i,
  output logic [31:0]         out_data_o,
  output logic                out_last_o
);

  logic [2:0] lane_q, lane_d;
  logic       fire, closes;

  assign out_valid_o = in_valid_i;
  assign out_data_o  = in_data_i[lane_q*32 +: 32];
  assign fire        = in_valid_i && out_ready_i;
  assign closes      = (lane_q + 3'd1 == count_i);
  assign in_pop_o    = fire && closes;
  assign out_last_o  = in_last_i && closes;

  always_comb begin
    lane_d = lane_q;
    if (fire) lane_d = closes ? 3'd0 : lane_q + 3'd1;
  end
  always_ff @(posedge clk_i) begin
    if (rst_i) lane_q <= '0;
    else       lane_q <= lane_d;
  end

endmodule

`default_nettype wire
