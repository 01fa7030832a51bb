// Stream walker: the DMA chunks of one per-step engine stream of a FORWARD or
// BACKWARD, in the engine's stream order. Chunk k covers time step
//   t = k                 (forward: xp in, h out)
//   t = maxlen - 1 - k    (backward: dh in, delta out; time runs backwards)
// for k = 0 .. maxlen-1 and holds the running sequences of step t, words_i
// 32-bit words each (packed batches: a finished sequence has no data). The
// chunk of step t starts at
//   base + t * stride                         (stride != 0: a padded [T][B] layout)
//   base + steps_before(t) * words * 4        (stride == 0: packed, PyTorch order)
// where steps_before(t) counts the (t', b) steps with t' < t. The last chunk
// is marked `last` (it ends the engine stream's portion).
// Latency: one cycle between a chunk being taken and the next being offered.
`default_nettype none

module core_walker #(
  parameter int unsigned MaxBatch = 4
) (
  input  logic                   clk_i,
  input  logic                   rst_i,
  input  logic                   abort_i,    // stop offering chunks
  input  logic                   start_i,    // takes the configuration below
  input  logic                   bw_i,
  input  logic [15:0]            batch_i,
  input  logic [MaxBatch*16-1:0] lengths_i,
  input  logic [15:0]            maxlen_i,   // longest length (>= 1)
  input  logic [31:0]            total_i,    // sum of the lengths
  input  logic [63:0]            base_i,
  input  logic [31:0]            stride_i,
  input  logic [17:0]            words_i,    // words per sequence and step
  output logic                   busy_o,     // chunks left to offer
  output logic                   out_valid_o,
  input  logic                   out_ready_i,
  output logic [63:0]            out_addr_o,
  output logic [31:0]            out_bytes_o,
  output logic                   out_last_o,
  output logic [15:0]            out_index_o  // k
);

  typedef enum logic [1:0] {
    W_IDLE,
    W_CALC,
    W_OFFER
  } state_e;

  state_e        state_q, state_d;
  logic          bw_q;
  logic [15:0]   batch_q, maxlen_q, k_q, k_d;
  logic [MaxBatch*16-1:0] lengths_q;
  logic [31:0]   off_q, off_d, rem_q, rem_d, stride_q;
  logic [63:0]   base_q, addr_q, addr_d;
  logic [17:0]   words_q;
  logic [31:0]   bytes_q, bytes_d;
  logic [15:0]   t, running;
  logic [MaxBatch-1:0] unused_mask;
  logic [31:0]   slot_off;

  assign t = bw_q ? (maxlen_q - 16'd1 - k_q) : k_q;

  running_slots #(.MaxBatch(MaxBatch)) u_running (
    .lengths_i(lengths_q),
    .batch_i  (batch_q),
    .t_i      (t),
    .mask_o   (unused_mask),
    .count_o  (running)
  );

  assign slot_off = bw_q ? (rem_q - 32'(running)) : off_q;

  always_comb begin
    state_d = state_q;
    k_d     = k_q;
    off_d   = off_q;
    rem_d   = rem_q;
    addr_d  = addr_q;
    bytes_d = bytes_q;
    case (state_q)
      W_IDLE: ;
      W_CALC: begin
        bytes_d = 32'(running) * 32'(words_q) * 32'd4;
        addr_d  = base_q + ((stride_q != 0) ? 64'(t) * 64'(stride_q)
                                            : 64'(slot_off) * 64'(words_q) * 64'd4);
        off_d   = off_q + 32'(running);
        rem_d   = rem_q - 32'(running);
        state_d = W_OFFER;
      end
      W_OFFER: begin
        if (out_ready_i) begin
          k_d     = k_q + 16'd1;
          state_d = (k_q + 16'd1 == maxlen_q) ? W_IDLE : W_CALC;
        end
      end
      default: state_d = W_IDLE;
    endcase
    if (abort_i) state_d = W_IDLE;
    if (start_i) begin
      state_d = W_CALC;
      k_d     = '0;
      off_d   = '0;
      rem_d   = total_i;
    end
  end

  assign busy_o      = (state_q != W_IDLE);
  assign out_valid_o = (state_q == W_OFFER);
  assign out_addr_o  = addr_q;
  assign out_bytes_o = bytes_q;
  assign out_last_o  = (k_q + 16'd1 == maxlen_q);
  assign out_index_o = k_q;

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      state_q <= W_IDLE;
    end else begin
      state_q <= state_d;
    end
    k_q     <= k_d;
    off_q   <= off_d;
    rem_q   <= rem_d;
    addr_q  <= addr_d;
    bytes_q <= bytes_d;
    if (start_i) begin
      bw_q      <= bw_i;
      batch_q   <= batch_i;
      lengths_q <= lengths_i;
      maxlen_q  <= maxlen_i;
      base_q    <= base_i;
      stride_q  <= stride_i;
      words_q   <= words_i;
    end
  end

endmodule

`default_nettype wire
