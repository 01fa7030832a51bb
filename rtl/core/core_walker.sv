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
//
// No multiplier on a chunk's way: a cursor walks the addresses (forward: +=
// stride, or += the chunk's bytes; backward: -= stride, or -= the chunk's
// bytes from the packed stream's end), the chunk's bytes are running * words
// * 4 by shift and add (running <= MaxBatch), and the backward's start,
// base + (maxlen - 1) * stride or base + total * words * 4, comes from a
// serial multiplier (prim_mul_serial) at the start.
// Latency: start -> first chunk offered 5 cycles (forward), 5 + max(1, bit
// length of maxlen - 1, or of words when packed) cycles (backward); a chunk
// taken -> the next offered 4 cycles.
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

  localparam int unsigned RunW = $clog2(MaxBatch + 1);

  typedef enum logic [2:0] {
    W_IDLE,
    W_INIT,   // the serial multiplier forms the backward's start offset
    W_RUN,    // running_q <- the running sequences of step t
    W_BYTES,  // bytes_q <- running * words * 4
    W_ADDR,   // addr_q <- the chunk's address from the cursor
    W_OFFER
  } state_e;

  state_e        state_q, state_d;
  logic          bw_q, packed_q;
  logic [15:0]   batch_q, maxlen_q, k_q, t_q;
  logic [MaxBatch*16-1:0] lengths_q;
  logic [31:0]   stride_q;
  logic [17:0]   words_q;
  logic [63:0]   base_q, cur_q, addr_q;
  logic [31:0]   bytes_q;
  logic [RunW-1:0] running_q;
  logic          last_q;

  // The backward's start offset: (maxlen - 1) * stride, or total * words (* 4).
  // The operands matter only at a backward's start (mul_start).
  logic        mul_start, mul_busy;
  logic [63:0] mul_prod;
  prim_mul_serial #(.AWidth(32), .BWidth(18), .ProdWidth(64)) u_mul (
    .clk_i,
    .rst_i,
    .start_i(mul_start),
    .a_i    ((stride_i != 0) ? stride_i : total_i),
    .b_i    ((stride_i != 0) ? 18'(16'(maxlen_i - 16'd1)) : words_i),
    .busy_o (mul_busy),
    .prod_o (mul_prod)
  );
  assign mul_start = start_i && bw_i;

  logic [MaxBatch-1:0] run_mask;
  logic [15:0]         run_count;
  running_slots #(.MaxBatch(MaxBatch)) u_running (
    .lengths_i(lengths_q),
    .batch_i  (batch_q),
    .t_i      (t_q),
    .mask_o   (run_mask),
    .count_o  (run_count)
  );
  logic unused_run;
  assign unused_run = ^{run_mask, run_count[15:RunW]};

  // running * words * 4, shift and add over the bits of running.
  logic [31:0] chunk_bytes;
  always_comb begin
    chunk_bytes = '0;
    for (int unsigned i = 0; i < RunW; i++) begin
      if (running_q[i]) chunk_bytes = chunk_bytes + (32'(words_q) << (i + 2));
    end
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      state_q <= W_IDLE;
    end else begin
      state_q <= state_d;
    end
  end

  always_comb begin
    state_d = state_q;
    case (state_q)
      W_IDLE:  ;
      W_INIT:  if (!bw_q || !mul_busy) state_d = W_RUN;
      W_RUN:   state_d = W_BYTES;
      W_BYTES: state_d = W_ADDR;
      W_ADDR:  state_d = W_OFFER;
      W_OFFER: if (out_ready_i) state_d = last_q ? W_IDLE : W_RUN;
      default: state_d = W_IDLE;
    endcase
    if (abort_i) state_d = W_IDLE;
    if (start_i) state_d = W_INIT;
  end

  always_ff @(posedge clk_i) begin
    if (start_i) begin
      bw_q      <= bw_i;
      packed_q  <= (stride_i == 0);
      batch_q   <= batch_i;
      lengths_q <= lengths_i;
      maxlen_q  <= maxlen_i;
      base_q    <= base_i;
      stride_q  <= stride_i;
      words_q   <= words_i;
      k_q       <= '0;
      t_q       <= bw_i ? maxlen_i - 16'd1 : 16'd0;
      last_q    <= (maxlen_i == 16'd1);
    end else begin
      case (state_q)
        W_INIT: begin
          // The cursor: forward base; backward base + the start offset.
          if (!bw_q) cur_q <= base_q;
          else if (packed_q) cur_q <= base_q + (mul_prod << 2);
          else cur_q <= base_q + mul_prod;
        end
        W_RUN:   running_q <= RunW'(run_count);
        W_BYTES: bytes_q <= chunk_bytes;
        W_ADDR:  addr_q <= (bw_q && packed_q) ? cur_q - 64'(bytes_q) : cur_q;
        W_OFFER: begin
          if (out_ready_i) begin
            k_q    <= k_q + 16'd1;
            t_q    <= bw_q ? t_q - 16'd1 : t_q + 16'd1;
            last_q <= (k_q + 16'd2 == maxlen_q);
            if (packed_q) cur_q <= bw_q ? addr_q : cur_q + 64'(bytes_q);
            else cur_q <= bw_q ? cur_q - 64'(stride_q) : cur_q + 64'(stride_q);
          end
        end
        default: ;
      endcase
    end
  end

  assign busy_o      = (state_q != W_IDLE);
  assign out_valid_o = (state_q == W_OFFER);
  assign out_addr_o  = addr_q;
  assign out_bytes_o = bytes_q;
  assign out_last_o  = last_q;
  assign out_index_o = k_q;

endmodule

`default_nettype wire
