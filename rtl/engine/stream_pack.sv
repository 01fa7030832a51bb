// Packs a 32-bit word stream into entries of `count_i` words (1..Lanes), lane 0
// first, and pushes each complete entry into a FIFO (valid/ready). Used to turn
// the Xp stream into one entry per hidden unit.
// Latency: the entry is pushed with its last word. Throughput: one word per cycle.
`default_nettype none

module stream_pack #(
  parameter int unsigned Lanes = 4
) (
  input  logic                  clk_i,
  input  logic                  rst_i,
  input  logic [2:0]            count_i,   // words per entry, stable while in use
  input  logic                  in_valid_i,
  output logic                  in_ready_o,
  input  logic [31:0]           in_data_i,
  output logic                  out_valid_o,
  input  logic                  out_ready_i,
  output logic [Lanes*32-1:0]   out_data_o
);

  logic [2:0]               lane_q, lane_d;
  logic [(Lanes-1)*32-1:0]  held_q, held_d;
  logic                     closes;

  assign closes      = (lane_q + 3'd1 == count_i);
  assign in_ready_o  = !closes || out_ready_i;
  assign out_valid_o = in_valid_i && closes;

  always_comb begin
    out_data_o = '0;
    out_data_o[(Lanes-1)*32-1:0] = held_q;
    out_data_o[lane_q*32 +: 32] = in_data_i;
  end

  always_comb begin
    lane_d = lane_q;
    held_d = held_q;
    if (in_valid_i && in_ready_o) begin
      lane_d = closes ? 3'd0 : lane_q + 3'd1;
      if (!closes) held_d[lane_q*32 +: 32] = in_data_i;
    end
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) lane_q <= '0;
    else       lane_q <= lane_d;
  end
  always_ff @(posedge clk_i) held_q <= held_d;

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (!rst_i) assert (count_i >= 3'd1 && 32'(count_i) <= Lanes) else $error("stream_pack: bad count");
  end
`endif

endmodule

`default_nettype wire
