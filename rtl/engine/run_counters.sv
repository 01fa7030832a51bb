// Counters of the sequencer's command: cycles from acceptance to done, MACs
// the PEs issued, stall cycles by cause (the sequencer names one cause per
// stalled cycle), hidden units whose outputs hold a NaN or an infinity.
// Cleared when a command is accepted; they keep their values after done.
// The stall causes (the end of the sequencer's token decision) are counted
// a cycle late, from a register, so that the decision and the 64-bit add
// are not one path; the sequencer stalls in S_STATE, S_RUN and S_DRAIN,
// never in the cycle before it enters S_DONE (a stalled drain stays one more
// cycle), so the counts at done are complete (the sequencer asserts it:
// nothing pending at done).
`default_nettype none

module run_counters #(
  parameter int unsigned CountWidth = 3
) (
  input  logic                  clk_i,
  input  logic                  rst_i,
  input  logic                  clear_i,      // a command is accepted (counts as its first cycle)
  input  logic                  active_i,     // the command runs this cycle
  input  logic [CountWidth-1:0] macs_i,       // MACs issued this cycle
  input  logic [3:0]            stall_i,      // one-hot: {gate store, dependency, output, input}
  input  logic                  nonfinite_i,
  output logic [63:0]           cycles_o,
  output logic [63:0]           macs_o,
  output logic [63:0]           stall_input_o,
  output logic [63:0]           stall_output_o,
  output logic [63:0]           stall_dep_o,
  output logic [63:0]           stall_store_o,
  output logic [63:0]           nonfinite_o,
  output logic                  stall_pending_o  // a stall cycle not yet in its counter
);

  // Increments, one per counter: cycles, MACs, stalls (input, output,
  // dependency, gate store), non-finite units.
  logic [7*64-1:0] inc, cnt;
  logic [3:0]      stall_q;  // last cycle's causes (none in the cycle a command is accepted)
  always_ff @(posedge clk_i) begin
    if (rst_i || clear_i) stall_q <= '0;
    else                  stall_q <= stall_i;
  end
  assign stall_pending_o = |stall_q;
  assign inc = {64'(nonfinite_i), 64'(stall_q[3]), 64'(stall_q[2]), 64'(stall_q[1]), 64'(stall_q[0]),
                64'(macs_i), 64'(active_i)};

  for (genvar i = 0; i < 7; i++) begin : g_cnt
    logic [63:0] q;
    always_ff @(posedge clk_i) begin
      if (rst_i)        q <= '0;
      else if (clear_i) q <= (i == 0) ? 64'd1 : 64'd0;
      else              q <= q + inc[i*64 +: 64];
    end
    assign cnt[i*64 +: 64] = q;
  end

  assign cycles_o       = cnt[0*64 +: 64];
  assign macs_o         = cnt[1*64 +: 64];
  assign stall_input_o  = cnt[2*64 +: 64];
  assign stall_output_o = cnt[3*64 +: 64];
  assign stall_dep_o    = cnt[4*64 +: 64];
  assign stall_store_o  = cnt[5*64 +: 64];
  assign nonfinite_o    = cnt[6*64 +: 64];

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (!rst_i) assert ($countones(stall_i) <= 1) else $error("run_counters: two stall causes at once");
  end
`endif

endmodule

`default_nettype wire
