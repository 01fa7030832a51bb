// Backward gate-store prefetch: reads the forward's records in the order the
// backward pass uses them — time steps from the last down, within a step the
// running sequences in slot order, units in order — as far ahead as the
// record FIFO has room (it owns that FIFO's credits). With lengths, a time
// step's block holds (running sequences) * H records; blocks lie in forward
// order in the store, so each block starts (its size) below the previous one.
// One request per cycle, none lost between blocks.
`default_nettype none

module store_prefetch #(
  parameter int unsigned MaxBatch     = 4,
  parameter int unsigned MemAddrWidth = 40,
  parameter int unsigned FifoDepth    = 64,
  localparam int unsigned CW          = 40
) (
  input  logic                    clk_i,
  input  logic                    rst_i,
  input  logic                    start_i,     // a command starts: take the parameters
  input  logic                    enable_i,    // a BACKWARD is running
  input  logic [MemAddrWidth-1:0] base_i,      // the gate store
  input  logic [CW-1:0]           records_i,   // S*H: records to read (BACKWARD), 0 otherwise
  input  logic [15:0]             hidden_i,
  input  logic [15:0]             batch_i,
  input  logic [MaxBatch*16-1:0]  lengths_i,
  input  logic [15:0]             maxlen_i,    // the longest length
  input  logic                    rec_pop_i,   // a record left the record FIFO
  output logic                    req_valid_o,
  input  logic                    req_ready_i,
  output logic [MemAddrWidth-1:0] req_addr_o
);

  logic [CW-1:0] left_q, left_d;      // records still to request
  logic [CW-1:0] credit_q, credit_d;  // free record FIFO entries not yet requested
  logic [CW-1:0] in_blk_q, in_blk_d;  // records left in the current block
  logic [CW-1:0] idx_q, idx_d;        // record index of the next request
  logic [CW-1:0] start_q, start_d;    // first record of the current block
  logic [15:0]   t_q, t_d;            // time step of the next block

  // Size of the next block: the sequences running at t_q, H records each.
  logic [15:0] running;
  logic [MaxBatch-1:0] unused_mask;
  running_slots #(.MaxBatch(MaxBatch)) u_next (
    .lengths_i(lengths_i),
    .batch_i  (batch_i),
    .t_i      (t_q),
    .mask_o   (unused_mask),
    .count_o  (running)
  );
  logic [CW-1:0] next_blk;
  assign next_blk = CW'(running) * CW'(hidden_i);

  assign req_valid_o = enable_i && (left_q != 0) && (credit_q != 0);
  assign req_addr_o  = base_i + MemAddrWidth'(((in_blk_q != 0) ? idx_q : start_q - next_blk) << 5);

  always_comb begin
    left_d   = left_q;
    credit_d = credit_q + CW'(rec_pop_i);
    in_blk_d = in_blk_q;
    idx_d    = idx_q;
    start_d  = start_q;
    t_d      = t_q;
    if (req_valid_o && req_ready_i) begin
      left_d   = left_q - 1;
      credit_d = credit_d - 1;
      if (in_blk_q != 0) begin
        idx_d    = idx_q + 1;
        in_blk_d = in_blk_q - 1;
      end else begin  // open the block of time step t_q
        start_d  = start_q - next_blk;
        idx_d    = start_q - next_blk + 1;
        in_blk_d = next_blk - 1;
        t_d      = t_q - 1'b1;
      end
    end
    if (start_i) begin
      left_d   = records_i;
      credit_d = CW'(FifoDepth);
      in_blk_d = '0;
      start_d  = records_i;
      t_d      = maxlen_i - 1'b1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) left_q <= '0;
    else       left_q <= left_d;
  end
  always_ff @(posedge clk_i) begin
    credit_q <= credit_d;
    in_blk_q <= in_blk_d;
    idx_q    <= idx_d;
    start_q  <= start_d;
    t_q      <= t_d;
  end

  logic unused_prefetch;
  assign unused_prefetch = ^unused_mask;

endmodule

`default_nettype wire
