// Backward gate-store prefetch: reads the forward's records in the order the
// backward pass uses them — time steps from the last down, within a step the
// running sequences in slot order, units in order — as far ahead as the
// record FIFO has room (it owns that FIFO's credits). With lengths, a time
// step's block holds (running sequences) * H records; blocks lie in forward
// order in the store, so each block starts (its size) below the previous one.
// One request per cycle, none lost between blocks.
//
// Timing: a request decides from registers only: whether records are left,
// credits free and the block open are flags kept beside their counters
// (each next value picked by the request from a compare on the registers).
// The next two blocks' sizes and the next block's first record are kept
// ahead in registers; a block size is k * H for k running sequences, picked
// from a table of k * H (k = 0..MaxBatch) refreshed every cycle from H by
// shifts and adds (no multiplier). The first two sizes are computed every
// cycle in two registered stages (running counts, then the table's entry)
// from the command's H and lengths, which hold still from the sequencer's
// set-up on (three cycles and more before the start); a simulation check
// compares every block's size with the product.
`default_nettype none

module store_prefetch #(
  parameter int unsigned MaxBatch     = 4,
  parameter int unsigned MemAddrWidth = 40,
  parameter int unsigned FifoDepth    = 64,
  localparam int unsigned CW          = 40,
  // Credits count record FIFO entries, 0..FifoDepth: their own width, so a
  // pop's carry runs through a few bits, not a record count's.
  localparam int unsigned CrW         = $clog2(FifoDepth + 1)
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
  logic [CrW-1:0] credit_q, credit_d;  // free record FIFO entries not yet requested
  logic [CW-1:0] in_blk_q, in_blk_d;  // records left in the current block
  logic [CW-1:0] idx_q, idx_d;        // record index of the next request in the block
  logic [CW-1:0] open_q, open_d;      // first record of the next block
  logic [CW-1:0] blk_q, blk_d;        // size of the next block
  logic [CW-1:0] nblk_q, nblk_d;      // size of the block after it
  logic [15:0]   t2_q, t2_d;          // time step of the block after that
  // left_q != 0, left_q == 1, credit_q != 0, in_blk_q != 0, registered.
  logic          left_nz_q, left_nz_d, left_one_q, left_one_d, credit_nz_q, credit_nz_d;
  logic          in_blk_nz_q, in_blk_nz_d;
  logic          req_fire;

  // k * H for k = 0..MaxBatch: H shifted by each set bit of k, summed.
  logic [(MaxBatch+1)*CW-1:0] kh_q, kh_d;
  always_comb begin
    for (int k = 0; k <= MaxBatch; k++) begin
      kh_d[k*CW +: CW] = '0;
      for (int i = 0; i < 16; i++) begin
        if (((k >> i) & 1) != 0) kh_d[k*CW +: CW] = kh_d[k*CW +: CW] + (CW'(hidden_i) << i);
      end
    end
  end

  // The size of a block with `running` sequences: the table's entry.
  function automatic logic [CW-1:0] block_size(input logic [15:0] running,
                                               input logic [(MaxBatch+1)*CW-1:0] kh);
    block_size = '0;
    for (int k = 0; k <= MaxBatch; k++) begin
      if (32'(running) == k) block_size = kh[k*CW +: CW];
    end
  endfunction

  // Running sequences at the last two time steps (the command's first two
  // blocks) and at t2_q (the block a block opening brings into view).
  logic [15:0] run_m1, run_m2, run_t2;
  logic [MaxBatch-1:0] mask_m1, mask_m2, mask_t2;
  running_slots #(.MaxBatch(MaxBatch)) u_run_m1 (
    .lengths_i(lengths_i),
    .batch_i  (batch_i),
    .t_i      (maxlen_i - 16'd1),
    .mask_o   (mask_m1),
    .count_o  (run_m1)
  );
  running_slots #(.MaxBatch(MaxBatch)) u_run_m2 (
    .lengths_i(lengths_i),
    .batch_i  (batch_i),
    .t_i      (maxlen_i - 16'd2),
    .mask_o   (mask_m2),
    .count_o  (run_m2)
  );
  running_slots #(.MaxBatch(MaxBatch)) u_run_t2 (
    .lengths_i(lengths_i),
    .batch_i  (batch_i),
    .t_i      (t2_q),
    .mask_o   (mask_t2),
    .count_o  (run_t2)
  );
  // Sizes at maxlen - 1 and maxlen - 2, in two registered stages: the
  // running counts, then the table's entries.
  logic [15:0]   run_m1_q, run_m2_q;
  logic [CW-1:0] first_blk_q, second_blk_q;
  always_ff @(posedge clk_i) begin
    kh_q         <= kh_d;
    run_m1_q     <= run_m1;
    run_m2_q     <= run_m2;
    first_blk_q  <= block_size(run_m1_q, kh_q);
    second_blk_q <= block_size(run_m2_q, kh_q);
  end

  assign req_valid_o = enable_i && left_nz_q && credit_nz_q;
  assign req_addr_o  = base_i + MemAddrWidth'((in_blk_nz_q ? idx_q : open_q) << 5);
  assign req_fire    = req_valid_o && req_ready_i;

  always_comb begin
    left_d      = left_q;
    credit_d    = credit_q + CrW'(rec_pop_i);
    in_blk_d    = in_blk_q;
    idx_d       = idx_q;
    open_d      = open_q;
    blk_d       = blk_q;
    nblk_d      = nblk_q;
    t2_d        = t2_q;
    left_nz_d   = left_nz_q;
    left_one_d  = left_one_q;
    in_blk_nz_d = in_blk_nz_q;
    // A pop alone leaves credits; a request alone leaves none from one.
    if (rec_pop_i && !req_fire)      credit_nz_d = 1'b1;
    else if (req_fire && !rec_pop_i) credit_nz_d = (credit_q != 1);
    else                             credit_nz_d = credit_nz_q;
    if (req_fire) begin
      left_d      = left_q - 1;
      left_nz_d   = !left_one_q;
      left_one_d  = (left_q == 2);
      credit_d    = credit_d - CrW'(1);
      if (in_blk_nz_q) begin
        idx_d       = idx_q + 1;
        in_blk_d    = in_blk_q - 1;
        in_blk_nz_d = (in_blk_q != 1);
      end else begin  // open the next block; the one after it comes into view
        idx_d       = open_q + 1;
        in_blk_d    = blk_q - 1;
        in_blk_nz_d = (blk_q != 1);
        open_d      = open_q - nblk_q;
        blk_d       = nblk_q;
        nblk_d      = block_size(run_t2, kh_q);
        t2_d        = t2_q - 1'b1;
      end
    end
    if (start_i) begin
      left_d      = records_i;
      left_nz_d   = (records_i != 0);
      left_one_d  = (records_i == 1);
      credit_d    = CrW'(FifoDepth);
      credit_nz_d = (FifoDepth != 0);
      in_blk_d    = '0;
      in_blk_nz_d = 1'b0;
      open_d   = records_i - first_blk_q;
      blk_d    = first_blk_q;
      nblk_d   = second_blk_q;
      t2_d     = maxlen_i - 16'd3;
    end
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      left_q     <= '0;
      left_nz_q  <= 1'b0;
      left_one_q <= 1'b0;
    end else begin
      left_q     <= left_d;
      left_nz_q  <= left_nz_d;
      left_one_q <= left_one_d;
    end
  end
  always_ff @(posedge clk_i) begin
    credit_q    <= credit_d;
    credit_nz_q <= credit_nz_d;
    in_blk_nz_q <= in_blk_nz_d;
    in_blk_q <= in_blk_d;
    idx_q    <= idx_d;
    open_q   <= open_d;
    blk_q    <= blk_d;
    nblk_q   <= nblk_d;
    t2_q     <= t2_d;
  end

  logic unused_prefetch;
  assign unused_prefetch = ^{mask_m1, mask_m2, mask_t2};

`ifndef SYNTHESIS
  // Every block opened has the size of its time step's running sequences.
  logic [15:0]         chk_t_q;
  logic [15:0]         chk_running;
  logic [MaxBatch-1:0] chk_mask;
  running_slots #(.MaxBatch(MaxBatch)) u_check (
    .lengths_i(lengths_i),
    .batch_i  (batch_i),
    .t_i      (chk_t_q),
    .mask_o   (chk_mask),
    .count_o  (chk_running)
  );
  logic chk_started_q;  // the credit and block counters hold a command's values
  always_ff @(posedge clk_i) begin
    if (rst_i) chk_started_q <= 1'b0;
    else if (start_i) chk_started_q <= 1'b1;
    if (!rst_i) begin
      assert (left_nz_q == (left_q != 0) && left_one_q == (left_q == 1))
      else $error("store_prefetch: registered left flags differ from the count");
      assert (!chk_started_q || (credit_nz_q == (credit_q != 0) && in_blk_nz_q == (in_blk_q != 0)))
      else $error("store_prefetch: registered credit or block flags differ from the counts");
      assert (!chk_started_q || 32'(credit_q) <= FifoDepth)
      else $error("store_prefetch: %0d credits, more than the record FIFO's %0d entries", credit_q, FifoDepth);
    end
  end
  always_ff @(posedge clk_i) begin
    if (start_i) chk_t_q <= maxlen_i - 16'd1;
    else if (req_fire && in_blk_q == 0) chk_t_q <= chk_t_q - 16'd1;
    if (!rst_i && !start_i && req_fire && in_blk_q == 0) begin
      assert (blk_q == CW'(chk_running) * CW'(hidden_i) && chk_mask != '0)
      else $error("store_prefetch: block of %0d records at t = %0d, expected %0d x %0d", blk_q, chk_t_q,
                  chk_running, hidden_i);
    end
  end
`endif

endmodule

`default_nettype wire
