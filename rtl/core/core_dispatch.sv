// Command-ring dispatcher of farnn_core. While the ring is enabled and the
// driver's tail is ahead of the head, it
//   1. checks the ring (size a power of two >= 2, base 128-byte aligned, the
//      descriptor and the write-back word inside windows) and fetches the
//      descriptor at base + (head mod size) * 128 (32 words) — one at a time,
//      ahead of the commands still running;
//   2. decodes and validates it: known op, every bit the op does not use zero,
//      sizes within the core's capacity, addresses and lengths aligned, and
//      every range it names inside a window with the right permission
//      (FORWARD/BACKWARD read their per-slot lengths first: the packed
//      streams' extents depend on them). Nothing moves before all pass;
//   3. issues it: LOAD beside a running FORWARD/BACKWARD (another bank), a
//      FORWARD/BACKWARD when the run unit is free and its bank is not being
//      loaded; NOP, WAIT and SIGNAL are fences (after every earlier
//      descriptor has completed);
//   4. retires descriptors in ring order: RING_DONE counts them, the count is
//      written to the write-back address (when set) before the completion
//      interrupt is raised for a descriptor with its irq bit.
// A descriptor that fails validation fails after the earlier ones complete;
// a fault while running (engine error, bus error, watchdog, CTRL.abort)
// aborts everything at once. Either way the fault log is written (first fault
// only), every block is drained to idle, the ring halts and the error
// interrupt is raised. A soft reset aborts and drains, holds the engine in
// reset while the gate store's outstanding responses drain (at least
// SoftResetCycles), then discards the ring's pending descriptors
// (HEAD = DONE = TAIL) and clears the error state.
`default_nettype none

module core_dispatch #(
  parameter int unsigned NumWindows      = 8,
  parameter int unsigned MaxBatch        = 4,
  parameter int unsigned MaxHidden       = 32,
  parameter int unsigned WeightLanes     = 16,
  parameter int unsigned StoreAddrWidth  = 40,
  parameter int unsigned SoftResetCycles = 16
) (
  input  logic                       clk_i,
  input  logic                       rst_i,
  // Registers.
  input  logic                       enable_i,
  input  logic                       soft_reset_i,
  input  logic                       abort_i,
  input  logic [63:0]                ring_base_i,
  input  logic [31:0]                ring_size_i,
  input  logic [31:0]                ring_tail_i,
  input  logic [63:0]                ring_wb_addr_i,
  input  logic [31:0]                watchdog_i,
  input  logic [NumWindows*64-1:0]   win_base_i,
  input  logic [NumWindows*64-1:0]   win_size_i,
  input  logic [NumWindows-1:0]      win_read_i,
  input  logic [NumWindows-1:0]      win_write_i,
  input  logic [4*32-1:0]            doorbells_i,
  output logic [31:0]                ring_head_o,
  output logic [31:0]                ring_done_o,
  output logic                       busy_o,
  output logic                       halted_o,
  output logic                       resetting_o,
  output logic [4:0]                 error_o,
  output logic [3:0]                 unit_o,
  output logic [3:0]                 op_o,
  output logic [63:0]                fault_addr_o,
  output logic [7:0]                 fault_kind_o,
  output logic [3:0]                 fault_stream_o,
  output logic [31:0]                fault_desc_o,
  output logic                       irq_done_set_o,
  output logic                       irq_error_set_o,
  output logic                       desc_done_o,      // one pulse per retired descriptor
  output logic                       wait_stall_o,     // a WAIT descriptor is waiting
  // Runtime faults from the rest of the core.
  input  logic                       dma_err_i,        // a DMA mover saw SLVERR/DECERR
  input  logic [63:0]                dma_err_addr_i,
  input  logic [1:0]                 dma_err_resp_i,
  input  logic                       dma_err_write_i,
  input  logic [3:0]                 dma_err_stream_i,
  // Drain control.
  output logic                       abort_o,          // engine, run unit and DMA movers (registered)
  output logic                       eng_rst_o,        // engine reset (soft reset)
  output logic                       store_flush_o,
  input  logic                       all_idle_i,       // engine, run unit and movers idle (seen while aborting)
  input  logic                       store_idle_i,
  // Control reader (descriptors, lengths, WAIT polls; 32-bit words).
  output logic [3:0]                 ctl_stream_o,     // what the control reader reads
  output logic                       ctl_cmd_valid_o,
  input  logic                       ctl_cmd_ready_i,
  output logic [63:0]                ctl_cmd_addr_o,
  output logic [31:0]                ctl_cmd_bytes_o,
  input  logic                       ctl_valid_i,
  output logic                       ctl_ready_o,
  input  logic [31:0]                ctl_data_i,
  input  logic                       ctl_last_i,
  // Notify writer (completion write-back and SIGNAL; 32-bit words).
  output logic                       ntf_cmd_valid_o,
  input  logic                       ntf_cmd_ready_i,
  output logic [63:0]                ntf_cmd_addr_o,
  output logic                       ntf_valid_o,
  input  logic                       ntf_ready_i,
  output logic [31:0]                ntf_data_o,
  input  logic                       ntf_done_i,
  // LOAD: engine load port and the weight reader.
  output logic                       load_valid_o,
  input  logic                       load_ready_i,
  output logic [7:0]                 load_bank_o,
  output logic [1:0]                 load_cell_o,
  output logic [15:0]                load_hidden_o,
  output logic [31:0]                load_watchdog_o,
  input  logic                       load_done_i,
  input  logic [4:0]                 load_status_i,
  input  logic [3:0]                 load_status_unit_i,
  output logic                       wgt_cmd_valid_o,
  input  logic                       wgt_cmd_ready_i,
  output logic [63:0]                wgt_cmd_addr_o,
  output logic [31:0]                wgt_cmd_bytes_o,
  // FORWARD/BACKWARD: the run unit.
  output logic                       run_start_o,
  output logic                       run_bw_o,
  output logic [1:0]                 run_cell_o,
  output logic [15:0]                run_hidden_o,
  output logic [15:0]                run_batch_o,
  output logic [15:0]                run_steps_o,
  output logic [7:0]                 run_bank_o,
  output logic [MaxBatch*16-1:0]     run_lengths_o,
  output logic [15:0]                run_maxlen_o,
  output logic [17:0]                run_in_words_o,
  output logic [17:0]                run_out_words_o,
  output logic [31:0]                run_state_in_bytes_o,
  output logic [31:0]                run_state_out_bytes_o,
  output logic [31:0]                run_total_o,
  output logic [63:0]                run_in_addr_o,
  output logic [31:0]                run_in_stride_o,
  output logic [63:0]                run_out_addr_o,
  output logic [31:0]                run_out_stride_o,
  output logic [63:0]                run_state_in_addr_o,
  output logic [63:0]                run_state_out_addr_o,
  output logic [StoreAddrWidth-1:0]  run_store_base_o,
  output logic [StoreAddrWidth-1:0]  run_store_size_o,
  output logic [31:0]                run_watchdog_o,
  output logic                       run_gate_enable_o,
  output logic                       run_gate_poll_o,
  output logic [1:0]                 run_gate_select_o,
  output logic [63:0]                run_gate_addr_o,
  output logic [15:0]                run_progress_every_o,
  output logic [63:0]                run_progress_addr_o,
  input  logic                       run_done_i,
  input  logic                       run_fail_i,
  input  logic [4:0]                 run_fail_code_i,
  input  logic [3:0]                 run_fail_unit_i
);

  localparam int unsigned DW = core_regs_pkg::DESC_WORDS;

  // ---------------------------------------------------------- descriptor
  logic [DW*32-1:0] desc_q, desc_d;
  logic [7:0]  d_op;
  logic        d_irq, d_gate_enable, d_gate_poll;
  logic [1:0]  d_cell, d_gate_select;
  logic [7:0]  d_bank;
  logic [15:0] d_hidden, d_batch, d_steps, d_every;
  logic [31:0] d_watchdog, d_len0, d_value, d_in_stride, d_out_stride;
  logic [63:0] d_addr0, d_in_addr, d_out_addr, d_si_addr, d_so_addr, d_store_base, d_store_size;
  logic [63:0] d_gate_addr, d_prog_addr;

  assign d_op          = desc_q[core_regs_pkg::DESC_OP_WORD*32 + core_regs_pkg::DESC_OP_LSB +: 8];
  assign d_irq         = desc_q[core_regs_pkg::DESC_IRQ_WORD*32 + core_regs_pkg::DESC_IRQ_LSB];
  assign d_cell        = desc_q[core_regs_pkg::DESC_CELL_WORD*32 + core_regs_pkg::DESC_CELL_LSB +: 2];
  assign d_bank        = desc_q[core_regs_pkg::DESC_BANK_WORD*32 + core_regs_pkg::DESC_BANK_LSB +: 8];
  assign d_hidden      = desc_q[core_regs_pkg::DESC_HIDDEN_WORD*32 + core_regs_pkg::DESC_HIDDEN_LSB +: 16];
  assign d_batch       = desc_q[core_regs_pkg::DESC_BATCH_WORD*32 + core_regs_pkg::DESC_BATCH_LSB +: 16];
  assign d_steps       = desc_q[core_regs_pkg::DESC_STEPS_WORD*32 + core_regs_pkg::DESC_STEPS_LSB +: 16];
  assign d_every       = desc_q[core_regs_pkg::DESC_PROGRESS_EVERY_WORD*32 + core_regs_pkg::DESC_PROGRESS_EVERY_LSB +: 16];
  assign d_watchdog    = desc_q[core_regs_pkg::DESC_WATCHDOG_WORD*32 +: 32];
  assign d_addr0       = desc_q[core_regs_pkg::DESC_ADDR0_WORD*32 +: 64];
  assign d_len0        = desc_q[core_regs_pkg::DESC_LEN0_WORD*32 +: 32];
  assign d_value       = desc_q[core_regs_pkg::DESC_VALUE_WORD*32 +: 32];
  assign d_gate_select = desc_q[core_regs_pkg::DESC_GATE_SELECT_WORD*32 + core_regs_pkg::DESC_GATE_SELECT_LSB +: 2];
  assign d_gate_enable = desc_q[core_regs_pkg::DESC_GATE_ENABLE_WORD*32 + core_regs_pkg::DESC_GATE_ENABLE_LSB];
  assign d_gate_poll   = desc_q[core_regs_pkg::DESC_GATE_POLL_WORD*32 + core_regs_pkg::DESC_GATE_POLL_LSB];
  assign d_in_addr     = desc_q[core_regs_pkg::DESC_IN_ADDR_WORD*32 +: 64];
  assign d_in_stride   = desc_q[core_regs_pkg::DESC_IN_STRIDE_WORD*32 +: 32];
  assign d_out_addr    = desc_q[core_regs_pkg::DESC_OUT_ADDR_WORD*32 +: 64];
  assign d_out_stride  = desc_q[core_regs_pkg::DESC_OUT_STRIDE_WORD*32 +: 32];
  assign d_si_addr     = desc_q[core_regs_pkg::DESC_STATE_IN_ADDR_WORD*32 +: 64];
  assign d_so_addr     = desc_q[core_regs_pkg::DESC_STATE_OUT_ADDR_WORD*32 +: 64];
  assign d_store_base  = desc_q[core_regs_pkg::DESC_STORE_BASE_WORD*32 +: 64];
  assign d_store_size  = desc_q[core_regs_pkg::DESC_STORE_SIZE_WORD*32 +: 64];
  assign d_gate_addr   = desc_q[core_regs_pkg::DESC_GATE_ADDR_WORD*32 +: 64];
  assign d_prog_addr   = desc_q[core_regs_pkg::DESC_PROGRESS_ADDR_WORD*32 +: 64];

  // The op, decoded from desc_q for the descriptor checks (S_DECODE), and
  // registered from it for every later state: desc_q holds still from
  // S_DECODE until the next fetch, so the registered flags are valid from
  // the cycle after S_DECODE on, and the window checks, issue and WAIT
  // decide from registers.
  logic op_load, op_bw, op_run, op_wait, op_signal;
  logic is_load, is_bw, is_run, is_wait, is_signal, addr0_zero;
  assign op_load   = (d_op == core_regs_pkg::OP_LOAD);
  assign op_bw     = (d_op == core_regs_pkg::OP_BACKWARD);
  assign op_run    = (d_op == core_regs_pkg::OP_FORWARD) || op_bw;
  assign op_wait   = (d_op == core_regs_pkg::OP_WAIT);
  assign op_signal = (d_op == core_regs_pkg::OP_SIGNAL);
  always_ff @(posedge clk_i) begin
    is_load    <= op_load;
    is_bw      <= op_bw;
    is_run     <= op_run;
    is_wait    <= op_wait;
    is_signal  <= op_signal;
    addr0_zero <= (d_addr0 == 0);
  end

  // A bit the op does not use is set, for each op: gathered word by word as
  // the descriptor arrives (S_FETCH_DATA: the word against each op's mask),
  // so the decode reads one register picked by the op instead of reducing
  // 1,024 masked bits (11 LUT levels). An unknown op is CK_OP's.
  localparam int unsigned NumOps = 32'(core_regs_pkg::OP_SIGNAL) + 1;  // OP_NOP .. OP_SIGNAL
  // The bits of descriptor word w that op uses.
  function automatic logic [31:0] op_word_used(input logic [7:0] op, input int unsigned w);
    case (op)
      core_regs_pkg::OP_NOP:      op_word_used = core_regs_pkg::DESC_USED_NOP[w*32 +: 32];
      core_regs_pkg::OP_LOAD:     op_word_used = core_regs_pkg::DESC_USED_LOAD[w*32 +: 32];
      core_regs_pkg::OP_FORWARD:  op_word_used = core_regs_pkg::DESC_USED_FORWARD[w*32 +: 32];
      core_regs_pkg::OP_BACKWARD: op_word_used = core_regs_pkg::DESC_USED_BACKWARD[w*32 +: 32];
      core_regs_pkg::OP_WAIT:     op_word_used = core_regs_pkg::DESC_USED_WAIT[w*32 +: 32];
      default:                    op_word_used = core_regs_pkg::DESC_USED_SIGNAL[w*32 +: 32];
    endcase
  endfunction
  logic [NumOps-1:0]       unused_q, unused_word;
  logic [NumOps*32-1:0]    word_used;   // the arriving word's bits each op uses (32 an op)
  always_comb begin
    word_used = '1;                     // a word beyond the descriptor is not stored
    for (int unsigned o = 0; o < NumOps; o++) begin
      for (int unsigned w = 0; w < DW; w++) begin
        if (word_q == 6'(w)) word_used[o*32 +: 32] = op_word_used(8'(o), w);
      end
      unused_word[o] = (ctl_data_i & ~word_used[o*32 +: 32]) != '0;
    end
  end
  always_ff @(posedge clk_i) begin
    if (state_q == S_FETCH) unused_q <= '0;
    else if (state_q == S_FETCH_DATA && ctl_valid_i) unused_q <= unused_q | unused_word;
  end
  logic unused_set;
  assign unused_set = (d_op < 8'(NumOps)) && unused_q[3'(d_op)];

  // The watchdog a command runs under: its own, else the register's.
  logic [31:0] eff_watchdog;
  assign eff_watchdog = (d_watchdog != 0) ? d_watchdog : watchdog_i;

  // Sizes derived from the descriptor and its lengths. No multiplier on a
  // decision's way: the products come from serial multipliers
  // (prim_mul_serial, a bit a cycle) into registers, B*H from S_DECODE on
  // and the lengths' products in S_EXTENT; S_EXTENT_WAIT holds the window
  // checks until they are done (at most 17 cycles), and every size below is
  // the product shifted, or a sum of two.
  logic        lstm;
  logic [17:0] in_words, out_words;     // words per sequence and step of the per-step streams
  logic [31:0] si_bytes, so_bytes;      // the state streams
  logic [15:0] maxlen_q, maxlen_d;
  logic [31:0] total_q, total_d;
  logic [MaxBatch*16-1:0] lengths_q, lengths_d;
  assign lstm      = (d_cell == 2'd0);
  assign in_words  = is_bw ? 18'(d_hidden) : (lstm ? 18'(d_hidden) << 2 : (18'(d_hidden) << 1) + 18'(d_hidden));
  assign out_words = is_bw ? 18'(d_hidden) << 2 : 18'(d_hidden);

  logic        bh_start, ext_start, bh_busy, th_busy, msi_busy, mso_busy;
  logic [31:0] bh;                      // B*H
  logic [63:0] th, msi, mso;            // total*H, (maxlen-1)*in stride, (maxlen-1)*out stride
  prim_mul_serial #(.AWidth(16), .BWidth(16), .ProdWidth(32)) u_mul_bh (
    .clk_i, .rst_i, .start_i(bh_start), .a_i(d_batch), .b_i(d_hidden), .busy_o(bh_busy), .prod_o(bh)
  );
  prim_mul_serial #(.AWidth(32), .BWidth(16), .ProdWidth(64)) u_mul_th (
    .clk_i, .rst_i, .start_i(ext_start), .a_i(total_q), .b_i(d_hidden), .busy_o(th_busy), .prod_o(th)
  );
  prim_mul_serial #(.AWidth(32), .BWidth(16), .ProdWidth(64)) u_mul_msi (
    .clk_i, .rst_i, .start_i(ext_start), .a_i(d_in_stride), .b_i(maxlen_q - 16'd1), .busy_o(msi_busy),
    .prod_o(msi)
  );
  prim_mul_serial #(.AWidth(32), .BWidth(16), .ProdWidth(64)) u_mul_mso (
    .clk_i, .rst_i, .start_i(ext_start), .a_i(d_out_stride), .b_i(maxlen_q - 16'd1), .busy_o(mso_busy),
    .prod_o(mso)
  );

  // FW (h, c) pairs (LSTM) or h in and out; BW the carry (one word per unit)
  // in, (dh0, dc0) pairs (LSTM) or dh0 out.
  assign si_bytes  = (lstm && !is_bw) ? bh << 3 : bh << 2;
  assign so_bytes  = lstm ? bh << 3 : bh << 2;

  // Extent of a per-step stream: strided, (maxlen - 1) * stride + B * words
  // * 4, or packed, total * words * 4; words * 4 is H times 16 (LSTM FW in,
  // BW out), 12 (GRU FW in) or 4. Registered: the window checks read them.
  logic [63:0] bh16, bh12, bh4, th16, th12, th4, ext_in_q, ext_out_q;
  assign bh4  = 64'(bh) << 2;
  assign bh16 = 64'(bh) << 4;
  assign bh12 = (64'(bh) << 3) + bh4;
  assign th4  = th << 2;
  assign th16 = th << 4;
  assign th12 = (th << 3) + th4;
  always_ff @(posedge clk_i) begin
    ext_in_q  <= (d_in_stride != 0) ? msi + (is_bw ? bh4 : (lstm ? bh16 : bh12))
                                    : (is_bw ? th4 : (lstm ? th16 : th12));
    ext_out_q <= (d_out_stride != 0) ? mso + (is_bw ? bh16 : bh4) : (is_bw ? th16 : th4);
  end

  // -------------------------------------------------------------- state
  typedef enum logic [4:0] {
    S_IDLE,
    S_RING_WIN,
    S_FETCH,
    S_FETCH_DATA,
    S_DECODE,
    S_CHECK,
    S_PRE_WIN,
    S_LENGTHS,
    S_LENGTHS_DATA,
    S_EXTENT,
    S_EXTENT_WAIT,
    S_POST_WIN,
    S_ISSUE,
    S_WAIT_RUN,
    S_SIGNAL,
    S_SIGNAL_WAIT,
    S_FENCE_FAULT,
    S_FAULT,
    S_HALTED,
    S_SRESET,
    S_SRESET_RST
  } state_e;

  state_e      state_q, state_d;
  logic        abort_q;  // abort_o: the state was S_FAULT or S_SRESET a cycle ago
  logic [31:0] head_q, head_d, done_q, done_d;
  logic [5:0]  word_q, word_d;        // descriptor / lengths word counter
  logic [2:0]  chk_q, chk_d;          // window-check index within a phase
  logic        chk_started_q, chk_started_d;
  logic [31:0] wait_left_q, wait_left_d;  // WAIT: cycles left before it times out
  logic        wait_wd_q, wait_wd_d;      // WAIT: it runs under a watchdog
  logic        wait_zero_q, wait_zero_d;  // WAIT: wait_left_q == 0, kept beside it (no
                                          // compare of the counter on the timeout's path)
  logic        db_met_q;                  // the doorbell has reached the WAIT's value (a cycle ago)
  logic        sig_cmd_q, sig_cmd_d, sig_data_q, sig_data_d;
  logic [7:0]  rst_cnt_q, rst_cnt_d;
  logic        len_bad_q, len_bad_d;

  // Fault log and status.
  logic        faulted_q, faulted_d;
  logic [4:0]  err_q, err_d;
  logic [3:0]  unit_q, unit_d, opq_q, opq_d;
  logic [63:0] f_addr_q, f_addr_d;
  logic [7:0]  f_kind_q, f_kind_d;
  logic [3:0]  f_stream_q, f_stream_d;
  logic [31:0] f_desc_q, f_desc_d;
  // A validation fault waiting for the earlier descriptors (fence).
  logic [4:0]  pf_err_q, pf_err_d;
  logic [7:0]  pf_kind_q, pf_kind_d;
  logic [3:0]  pf_stream_q, pf_stream_d;
  logic [63:0] pf_addr_q, pf_addr_d;

  // In-flight slots: run (FORWARD/BACKWARD), load, control (NOP/WAIT/SIGNAL).
  logic        run_busy_q, run_busy_d, run_fin_q, run_fin_d, run_irq_q, run_irq_d;
  logic        ld_busy_q, ld_busy_d, ld_fin_q, ld_fin_d, ld_irq_q, ld_irq_d;
  logic        ct_busy_q, ct_busy_d, ct_irq_q, ct_irq_d;
  logic [31:0] run_idx_q, run_idx_d, ld_idx_q, ld_idx_d, ct_idx_q, ct_idx_d;
  logic [7:0]  run_bank_q, run_bank_d, ld_bank_q, ld_bank_d;
  logic [3:0]  run_op_q, run_op_d;
  logic        ld_pend_q, ld_pend_d, wgt_pend_q, wgt_pend_d;
  logic        fence, rt_fault, ld_fail, ld_issue, run_issue;

  // Retirement.
  typedef enum logic [1:0] {
    R_IDLE,
    R_WB,
    R_WB_WAIT,
    R_IRQ
  } rstate_e;
  rstate_e     rst_q, rst_d;
  logic        ret_irq_q, ret_irq_d, wb_cmd_q, wb_cmd_d, wb_data_q, wb_data_d;

  // ------------------------------------------------------ window checks
  logic        win_start, win_busy, win_done, win_ok;
  logic        chk_valid, chk_write;
  logic [63:0] chk_addr, chk_bytes;
  logic [3:0]  chk_stream;
  logic [2:0]  chk_count;
  logic [63:0] desc_addr;
  logic [31:0] ring_mask;

  assign ring_mask = ring_size_i - 32'd1;
  assign desc_addr = ring_base_i + {25'd0, head_q & ring_mask, 7'd0};

  core_windows #(.NumWindows(NumWindows)) u_windows (
    .clk_i,
    .rst_i,
    .win_base_i (win_base_i),
    .win_size_i (win_size_i),
    .win_read_i (win_read_i),
    .win_write_i(win_write_i),
    .start_i    (win_start),
    .addr_i     (chk_addr),
    .bytes_i    (chk_bytes),
    .write_i    (chk_write),
    .busy_o     (win_busy),
    .done_o     (win_done),
    .ok_o       (win_ok)
  );

  // Which ranges of each phase are checked at all, registered from the
  // descriptor and the ring's registers (stable through the phases) so that
  // the phase's next-state logic selects a register bit: S_RING_WIN {write-back
  // word, descriptor}, S_PRE_WIN its one range, S_POST_WIN {progress word,
  // gate word, state out, state in, out, in}.
  logic [1:0] ring_valid_q;
  logic       pre_valid_q;
  logic [7:0] post_valid_q;  // indices 6, 7: none
  always_ff @(posedge clk_i) begin
    ring_valid_q <= {ring_wb_addr_i != 0, 1'b1};
    pre_valid_q  <= is_load || is_run || (is_wait && !addr0_zero) || is_signal;
    post_valid_q <= {2'b00, d_every != 0, d_gate_enable && d_gate_poll, 4'b1111};
  end

  // The ranges to check in the current phase: index chk_q of chk_count.
  always_comb begin
    chk_valid  = 1'b0;
    chk_write  = 1'b0;
    chk_addr   = '0;
    chk_bytes  = '0;
    chk_stream = core_regs_pkg::STREAM_NONE;
    chk_count  = 3'd0;
    if (state_q == S_RING_WIN) begin
      chk_count = 3'd2;
      chk_valid = ring_valid_q[chk_q[0]];
      if (chk_q == 3'd0) begin
        chk_addr   = desc_addr;
        chk_bytes  = 64'd128;
        chk_stream = core_regs_pkg::STREAM_DESC;
      end else begin
        chk_write  = 1'b1;
        chk_addr   = ring_wb_addr_i;
        chk_bytes  = 64'd4;
        chk_stream = core_regs_pkg::STREAM_SIGNAL;
      end
    end else if (state_q == S_PRE_WIN) begin
      chk_count = 3'd1;
      chk_valid = pre_valid_q;
      if (is_load) begin
        chk_addr   = d_addr0;
        chk_bytes  = 64'(d_len0);
        chk_stream = core_regs_pkg::STREAM_WEIGHTS;
      end else if (is_run) begin
        chk_addr   = d_addr0;
        chk_bytes  = 64'(d_batch) * 64'd4;
        chk_stream = core_regs_pkg::STREAM_LENGTHS;
      end else if (is_wait) begin
        chk_addr   = d_addr0;
        chk_bytes  = 64'd4;
        chk_stream = core_regs_pkg::STREAM_WAIT_POLL;
      end else if (is_signal) begin
        chk_write  = 1'b1;
        chk_addr   = d_addr0;
        chk_bytes  = 64'd4;
        chk_stream = core_regs_pkg::STREAM_SIGNAL;
      end
    end else if (state_q == S_POST_WIN) begin
      chk_count = 3'd6;
      chk_valid = post_valid_q[chk_q];
      case (chk_q)
        3'd0: begin
          chk_addr   = d_in_addr;
          chk_bytes  = ext_in_q;
          chk_stream = is_bw ? core_regs_pkg::STREAM_DH : core_regs_pkg::STREAM_XP;
        end
        3'd1: begin
          chk_write  = 1'b1;
          chk_addr   = d_out_addr;
          chk_bytes  = ext_out_q;
          chk_stream = is_bw ? core_regs_pkg::STREAM_DELTA : core_regs_pkg::STREAM_H;
        end
        3'd2: begin
          chk_addr   = d_si_addr;
          chk_bytes  = 64'(si_bytes);
          chk_stream = core_regs_pkg::STREAM_STATE_IN;
        end
        3'd3: begin
          chk_write  = 1'b1;
          chk_addr   = d_so_addr;
          chk_bytes  = 64'(so_bytes);
          chk_stream = core_regs_pkg::STREAM_STATE_OUT;
        end
        3'd4: begin
          chk_addr   = d_gate_addr;
          chk_bytes  = 64'd4;
          chk_stream = core_regs_pkg::STREAM_WAIT_POLL;
        end
        default: begin
          chk_write  = 1'b1;
          chk_addr   = d_prog_addr;
          chk_bytes  = 64'd4;
          chk_stream = core_regs_pkg::STREAM_SIGNAL;
        end
      endcase
    end
  end
  assign win_start = (state_q == S_RING_WIN || state_q == S_PRE_WIN || state_q == S_POST_WIN) &&
                     (chk_q < chk_count) && chk_valid && !chk_started_q && !win_busy;

  // ------------------------------------------------ descriptor checks
  // Each field check of a decoded descriptor is a flag, registered as
  // S_DECODE ends (dec_fail_q); S_CHECK acts on the first one that failed,
  // in the order of the CK_* indices. The priority pick runs from registers,
  // so neither the fields' compares nor the pick sit on one path.
  localparam int unsigned CK_OP         = 0;   // unknown op
  localparam int unsigned CK_FIELD      = 1;   // a bit the op does not use is set
  localparam int unsigned CK_LOAD_ALIGN = 2;   // LOAD: length or address off the weight lanes
  localparam int unsigned CK_H_ZERO     = 3;   // FORWARD/BACKWARD from here to CK_BW_ALIGN
  localparam int unsigned CK_H_LARGE    = 4;
  localparam int unsigned CK_B_ZERO     = 5;
  localparam int unsigned CK_B_LARGE    = 6;
  localparam int unsigned CK_T_ZERO     = 7;
  localparam int unsigned CK_WRAP       = 8;   // store beyond the card master's address space
  localparam int unsigned CK_RUN_ALIGN  = 9;   // a stream address or stride not word aligned
  localparam int unsigned CK_BW_ALIGN   = 10;  // BACKWARD writes delta a unit (16 bytes) an item
  localparam int unsigned CK_SYNC_ALIGN = 11;  // WAIT/SIGNAL: address not word aligned
  localparam int unsigned NumChecks     = 12;
  logic [NumChecks-1:0] dec_fail, dec_fail_q;
  // The address a failed check reports: the field's (dec_faddr_q, for
  // CK_LOAD_ALIGN, CK_BW_ALIGN and CK_SYNC_ALIGN) or the descriptor's own.
  logic [63:0] dec_faddr_q, dec_daddr_q;
  always_ff @(posedge clk_i) begin
    dec_fail_q  <= dec_fail;
    dec_faddr_q <= op_run ? d_out_addr : d_addr0;
    dec_daddr_q <= desc_addr;
  end
  // The engine checks H, B and T too, but only once the command runs: the
  // lengths read (B words into MaxBatch slots) and the extents of the window
  // checks need them bounded before anything moves.
  always_comb begin
    dec_fail                = '0;
    dec_fail[CK_OP]         = (d_op > core_regs_pkg::OP_SIGNAL);
    dec_fail[CK_FIELD]      = unused_set;
    dec_fail[CK_LOAD_ALIGN] = op_load && (d_len0 == 0 || (d_len0 % (WeightLanes * 4)) != 0 ||
                                          (d_addr0 % (WeightLanes * 4)) != 0);
    dec_fail[CK_H_ZERO]     = op_run && (d_hidden == 0);
    dec_fail[CK_H_LARGE]    = op_run && (32'(d_hidden) > MaxHidden);
    dec_fail[CK_B_ZERO]     = op_run && (d_batch == 0);
    dec_fail[CK_B_LARGE]    = op_run && (32'(d_batch) > MaxBatch);
    dec_fail[CK_T_ZERO]     = op_run && (d_steps == 0);
    dec_fail[CK_WRAP]       = op_run && ((d_store_base[63:StoreAddrWidth] |
                                          d_store_size[63:StoreAddrWidth]) != 0);
    dec_fail[CK_RUN_ALIGN]  = op_run && ((d_addr0[1:0] | d_in_addr[1:0] | d_out_addr[1:0] | d_si_addr[1:0] |
                                          d_so_addr[1:0] | d_in_stride[1:0] | d_out_stride[1:0] |
                                          ((d_gate_enable && d_gate_poll) ? d_gate_addr[1:0] : 2'd0) |
                                          ((d_every != 0) ? d_prog_addr[1:0] : 2'd0)) != 2'd0);
    dec_fail[CK_BW_ALIGN]   = op_bw && ((d_out_addr[3:0] | d_out_stride[3:0]) != 4'd0);
    dec_fail[CK_SYNC_ALIGN] = (op_wait || op_signal) && (d_addr0[1:0] != 2'd0);
  end
  // The first failed check's code, fault kind and address (S_CHECK).
  logic [4:0]  dec_err;
  logic [7:0]  dec_kind;
  logic [63:0] dec_addr;
  always_comb begin
    dec_err  = core_regs_pkg::ERR_NONE;
    dec_kind = core_regs_pkg::FAULT_KIND_NONE;
    dec_addr = dec_daddr_q;
    for (int k = NumChecks - 1; k >= 0; k--) begin
      if (dec_fail_q[k]) begin
        case (k)
          CK_OP:      {dec_err, dec_kind} = {core_regs_pkg::ERR_DESC_OP, core_regs_pkg::FAULT_KIND_DESC_OP};
          CK_FIELD:   {dec_err, dec_kind} = {core_regs_pkg::ERR_DESC_FIELD, core_regs_pkg::FAULT_KIND_DESC_FIELD};
          CK_H_ZERO:  {dec_err, dec_kind} = {core_regs_pkg::ERR_HIDDEN_ZERO, core_regs_pkg::FAULT_KIND_DESC_FIELD};
          CK_H_LARGE: {dec_err, dec_kind} = {core_regs_pkg::ERR_HIDDEN_TOO_LARGE, core_regs_pkg::FAULT_KIND_DESC_FIELD};
          CK_B_ZERO:  {dec_err, dec_kind} = {core_regs_pkg::ERR_BATCH_ZERO, core_regs_pkg::FAULT_KIND_DESC_FIELD};
          CK_B_LARGE: {dec_err, dec_kind} = {core_regs_pkg::ERR_BATCH_TOO_LARGE, core_regs_pkg::FAULT_KIND_DESC_FIELD};
          CK_T_ZERO:  {dec_err, dec_kind} = {core_regs_pkg::ERR_STEPS_ZERO, core_regs_pkg::FAULT_KIND_DESC_FIELD};
          CK_WRAP:    {dec_err, dec_kind} = {core_regs_pkg::ERR_STORE_WRAP, core_regs_pkg::FAULT_KIND_DESC_FIELD};
          default:    {dec_err, dec_kind} = {core_regs_pkg::ERR_ALIGN, core_regs_pkg::FAULT_KIND_ALIGN};
        endcase
        dec_addr = (k == CK_LOAD_ALIGN || k == CK_BW_ALIGN || k == CK_SYNC_ALIGN) ? dec_faddr_q : dec_daddr_q;
      end
    end
  end

  // Ring configuration: size a power of two >= 2, base 128-byte aligned,
  // write-back word aligned, tail at most a ring ahead of the completions.
  logic ring_ok;
  // A descriptor is pending (enabled, head behind the tail), registered: the
  // 32-bit compare stays off the next-state logic. Set only after a cycle in
  // S_IDLE, where head_q does not move, so it is never stale there. The ring
  // check is registered beside it (ring_ok_q): S_IDLE reads both from the
  // same cycle's registers (tail, size, base, completions), and the size's
  // power-of-two test (a 32-bit subtract) and the pending compare stay off
  // the next-state logic too.
  logic pend_q, ring_ok_q;
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      pend_q    <= 1'b0;
      ring_ok_q <= 1'b0;
    end else begin
      pend_q    <= (state_q == S_IDLE) && enable_i && (head_q != ring_tail_i);
      ring_ok_q <= ring_ok;
    end
  end
  assign ring_ok = (ring_size_i >= 32'd2) && ((ring_size_i & ring_mask) == 0) &&
                   (ring_base_i[6:0] == 7'd0) && (ring_wb_addr_i[1:0] == 2'd0) &&
                   (ring_tail_i - done_q <= ring_size_i);  // no more pending than the ring holds

  // The stream id (core_regs_pkg::STREAM_*) of an engine unit (engine_pkg::UNIT_*).
  function automatic logic [3:0] unit_stream(input logic [3:0] unit);
    case (unit)
      engine_pkg::UNIT_WEIGHT:     unit_stream = core_regs_pkg::STREAM_WEIGHTS;
      engine_pkg::UNIT_STATE_IN:   unit_stream = core_regs_pkg::STREAM_STATE_IN;
      engine_pkg::UNIT_XP:         unit_stream = core_regs_pkg::STREAM_XP;
      engine_pkg::UNIT_DH:         unit_stream = core_regs_pkg::STREAM_DH;
      engine_pkg::UNIT_H:          unit_stream = core_regs_pkg::STREAM_H;
      engine_pkg::UNIT_DELTA:      unit_stream = core_regs_pkg::STREAM_DELTA;
      engine_pkg::UNIT_STATE_OUT:  unit_stream = core_regs_pkg::STREAM_STATE_OUT;
      engine_pkg::UNIT_GATE_STORE: unit_stream = core_regs_pkg::STREAM_GATE_STORE;
      default:                     unit_stream = core_regs_pkg::STREAM_NONE;
    endcase
  endfunction

  // Wrap-safe "a was issued before b".
  function automatic logic older(input logic [31:0] a, input logic [31:0] b);
    older = $signed(a - b) < 0;
  endfunction

  // A WAIT on a doorbell compares with the register (modulo 2^32); the
  // comparison is registered (db_met_q), so a WAIT sees a doorbell write a
  // cycle after the register does.
  logic [31:0] wait_value;
  assign wait_value = doorbells_i[d_gate_select*32 +: 32];

  // ------------------------------------------------------------ outputs
  assign ctl_cmd_valid_o = (state_q == S_FETCH) || (state_q == S_LENGTHS) ||
                           (state_q == S_WAIT_RUN && !addr0_zero && word_q == 6'd0);
  assign ctl_cmd_addr_o  = (state_q == S_FETCH) ? desc_addr : d_addr0;
  assign ctl_cmd_bytes_o = (state_q == S_FETCH) ? 32'd128 :
                           (state_q == S_LENGTHS) ? 32'(d_batch) * 32'd4 : 32'd4;
  assign ctl_ready_o     = 1'b1;
  assign ctl_stream_o    = (state_q == S_FETCH || state_q == S_FETCH_DATA) ? core_regs_pkg::STREAM_DESC :
                           (state_q == S_WAIT_RUN) ? core_regs_pkg::STREAM_WAIT_POLL : core_regs_pkg::STREAM_LENGTHS;

  always_comb begin
    state_d       = state_q;
    head_d        = head_q;
    done_d        = done_q;
    desc_d        = desc_q;
    word_d        = word_q;
    chk_d         = chk_q;
    chk_started_d = chk_started_q;
    wait_left_d   = wait_left_q;
    wait_wd_d     = wait_wd_q;
    wait_zero_d   = wait_zero_q;
    sig_cmd_d     = sig_cmd_q;
    sig_data_d    = sig_data_q;
    rst_cnt_d     = rst_cnt_q;
    len_bad_d     = len_bad_q;
    maxlen_d      = maxlen_q;
    total_d       = total_q;
    lengths_d     = lengths_q;
    faulted_d     = faulted_q;
    err_d         = err_q;
    unit_d        = unit_q;
    opq_d         = opq_q;
    f_addr_d      = f_addr_q;
    f_kind_d      = f_kind_q;
    f_stream_d    = f_stream_q;
    f_desc_d      = f_desc_q;
    pf_err_d      = pf_err_q;
    pf_kind_d     = pf_kind_q;
    pf_stream_d   = pf_stream_q;
    pf_addr_d     = pf_addr_q;
    run_busy_d    = run_busy_q;
    run_fin_d     = run_fin_q || run_done_i;
    run_irq_d     = run_irq_q;
    run_idx_d     = run_idx_q;
    run_bank_d    = run_bank_q;
    run_op_d      = run_op_q;
    ld_busy_d     = ld_busy_q;
    ld_fin_d      = ld_fin_q;
    ld_irq_d      = ld_irq_q;
    ld_idx_d      = ld_idx_q;
    ld_bank_d     = ld_bank_q;
    ld_pend_d     = ld_pend_q && !load_ready_i;
    wgt_pend_d    = wgt_pend_q && !wgt_cmd_ready_i;
    ct_busy_d     = ct_busy_q;
    ct_irq_d      = ct_irq_q;
    ct_idx_d      = ct_idx_q;
    rst_d         = rst_q;
    ret_irq_d     = ret_irq_q;
    wb_cmd_d      = wb_cmd_q;
    wb_data_d     = wb_data_q;
    run_start_o   = 1'b0;
    irq_done_set_o  = 1'b0;
    irq_error_set_o = 1'b0;
    desc_done_o   = 1'b0;

    // ---- window-check sequencing (shared by the three phases)
    if (win_start) chk_started_d = 1'b1;
    if (win_done) chk_started_d = 1'b0;

    // ---- the main sequence
    case (state_q)
      S_IDLE: begin
        if (pend_q) begin
          if (!ring_ok_q) begin
            pf_err_d    = core_regs_pkg::ERR_RING;
            pf_kind_d   = core_regs_pkg::FAULT_KIND_RING;
            pf_stream_d = core_regs_pkg::STREAM_DESC;
            pf_addr_d   = ring_base_i;
            state_d     = S_FENCE_FAULT;
          end else begin
            chk_d   = '0;
            state_d = S_RING_WIN;
          end
        end
      end

      S_RING_WIN, S_PRE_WIN, S_POST_WIN: begin
        if (chk_q >= chk_count) begin
          chk_d = '0;
          if (state_q == S_RING_WIN) state_d = S_FETCH;
          else if (state_q == S_PRE_WIN) state_d = is_run ? S_LENGTHS : S_ISSUE;
          else state_d = S_ISSUE;
        end else if (!chk_valid) begin
          chk_d = chk_q + 3'd1;
        end else if (win_done) begin
          if (win_ok) begin
            chk_d = chk_q + 3'd1;
          end else begin
            pf_err_d    = (state_q == S_RING_WIN) ? core_regs_pkg::ERR_RING : core_regs_pkg::ERR_WINDOW;
            pf_kind_d   = chk_write ? core_regs_pkg::FAULT_KIND_WINDOW_WRITE : core_regs_pkg::FAULT_KIND_WINDOW_READ;
            pf_stream_d = chk_stream;
            pf_addr_d   = chk_addr;
            state_d     = S_FENCE_FAULT;
          end
        end
      end

      S_FETCH: begin
        word_d = '0;
        if (ctl_cmd_ready_i) state_d = S_FETCH_DATA;
      end

      S_FETCH_DATA: begin
        if (ctl_valid_i) begin
          desc_d[word_q*32 +: 32] = ctl_data_i;
          word_d = word_q + 6'd1;
          if (ctl_last_i) state_d = S_DECODE;
        end
      end

      // The checks' flags are registered (dec_fail_q) the cycle after S_DECODE.
      S_DECODE: state_d = S_CHECK;

      S_CHECK: begin
        if (dec_fail_q != '0) begin
          pf_err_d    = dec_err;
          pf_kind_d   = dec_kind;
          pf_stream_d = core_regs_pkg::STREAM_DESC;
          pf_addr_d   = dec_addr;
          state_d     = S_FENCE_FAULT;
        end else begin
          chk_d   = '0;
          state_d = S_PRE_WIN;
        end
      end

      S_LENGTHS: begin
        word_d    = '0;
        len_bad_d = 1'b0;
        maxlen_d  = '0;
        total_d   = '0;
        lengths_d = '0;
        if (ctl_cmd_ready_i) state_d = S_LENGTHS_DATA;
      end

      S_LENGTHS_DATA: begin
        if (ctl_valid_i) begin
          for (int unsigned b = 0; b < MaxBatch; b++) begin
            if (word_q == 6'(b)) lengths_d[b*16 +: 16] = ctl_data_i[15:0];
          end
          if (ctl_data_i[15:0] > maxlen_q) maxlen_d = ctl_data_i[15:0];
          total_d = total_q + ctl_data_i;
          word_d  = word_q + 6'd1;
          // A length outside 1..T would make the streams' sizes meaningless.
          if (ctl_data_i == 0 || ctl_data_i > 32'(d_steps)) begin
            pf_err_d    = core_regs_pkg::ERR_BAD_LENGTH;
            pf_kind_d   = core_regs_pkg::FAULT_KIND_DESC_FIELD;
            pf_stream_d = core_regs_pkg::STREAM_LENGTHS;
            pf_addr_d   = d_addr0 + 64'(word_q) * 64'd4;
            len_bad_d   = 1'b1;  // remembered until the lengths are drained
          end
          if (ctl_last_i) begin
            chk_d   = '0;
            state_d = len_bad_d ? S_FENCE_FAULT : S_EXTENT;
          end
        end
      end

      // The lengths' products start (S_EXTENT) and finish; the extents'
      // registers hold their sums the cycle after.
      S_EXTENT: state_d = S_EXTENT_WAIT;
      S_EXTENT_WAIT: if (!bh_busy && !th_busy && !msi_busy && !mso_busy) state_d = S_POST_WIN;

      S_ISSUE: begin
        if (is_load) begin
          if (ld_issue) begin
            ld_busy_d  = 1'b1;
            ld_fin_d   = 1'b0;
            ld_irq_d   = d_irq;
            ld_idx_d   = head_q;
            ld_bank_d  = d_bank;
            ld_pend_d  = 1'b1;
            wgt_pend_d = 1'b1;
            head_d     = head_q + 32'd1;
            state_d    = S_IDLE;
          end
        end else if (is_run) begin
          if (run_issue) begin
            run_busy_d  = 1'b1;
            run_fin_d   = 1'b0;
            run_irq_d   = d_irq;
            run_idx_d   = head_q;
            run_bank_d  = d_bank;
            run_op_d    = d_op[3:0];
            run_start_o = 1'b1;
            head_d      = head_q + 32'd1;
            state_d     = S_IDLE;
          end
        end else if (fence) begin
          ct_busy_d     = 1'b1;
          ct_irq_d      = d_irq;
          ct_idx_d      = head_q;
          wait_left_d   = eff_watchdog;
          wait_wd_d     = (eff_watchdog != 0);
          wait_zero_d   = (eff_watchdog == 0);
          word_d        = '0;
          sig_cmd_d     = 1'b0;
          sig_data_d    = 1'b0;
          if (is_wait) state_d = S_WAIT_RUN;
          else if (is_signal) state_d = S_SIGNAL;
          else begin
            head_d    = head_q + 32'd1;
            state_d   = S_IDLE;
          end
        end
      end

      // WAIT on a doorbell (addr0 = 0) or a polled word; word_q says a poll
      // is in flight; wait_left_q counts down to the watchdog (a WAIT under
      // watchdog W times out in its cycle W, counted from 0).
      S_WAIT_RUN: begin
        if (addr0_zero) begin
          if (db_met_q) begin
            head_d  = head_q + 32'd1;
            state_d = S_IDLE;
          end
        end else begin
          if (ctl_cmd_valid_o && ctl_cmd_ready_i) word_d = 6'd1;
          if (ctl_valid_i) begin
            word_d = 6'd0;
            if ($signed(ctl_data_i - d_value) >= 0) begin
              head_d  = head_q + 32'd1;
              state_d = S_IDLE;
            end
          end
        end
        if (!wait_zero_q) begin
          wait_left_d = wait_left_q - 32'd1;
          wait_zero_d = (wait_left_q == 32'd1);
        end
        if (wait_wd_q && wait_zero_q && state_d == S_WAIT_RUN && word_q == 6'd0) begin
          ct_busy_d   = 1'b0;  // the WAIT is the descriptor at fault: it never retires
          pf_err_d    = core_regs_pkg::ERR_TIMEOUT;
          pf_kind_d   = core_regs_pkg::FAULT_KIND_TIMEOUT;
          pf_stream_d = core_regs_pkg::STREAM_WAIT_POLL;
          pf_addr_d   = d_addr0;
          state_d     = S_FENCE_FAULT;
        end
      end

      S_SIGNAL: begin
        if (ntf_cmd_valid_o && ntf_cmd_ready_i) sig_cmd_d = 1'b1;
        if (ntf_valid_o && ntf_ready_i) sig_data_d = 1'b1;
        if (sig_cmd_d && sig_data_d) state_d = S_SIGNAL_WAIT;
      end

      S_SIGNAL_WAIT: begin
        if (ntf_done_i) begin
          head_d  = head_q + 32'd1;
          state_d = S_IDLE;
        end
      end

      S_FENCE_FAULT: begin
        if (fence) begin
          err_d      = pf_err_q;
          unit_d     = pf_stream_q;
          f_kind_d   = pf_kind_q;
          f_stream_d = pf_stream_q;
          f_addr_d   = pf_addr_q;
          f_desc_d   = head_q;
          opq_d      = d_op[3:0];
          faulted_d  = 1'b1;
          state_d    = S_FAULT;
        end
      end

      S_FAULT: begin
        if (all_idle_i) begin
          irq_error_set_o = 1'b1;
          state_d         = S_HALTED;
        end
      end

      S_HALTED: ;

      S_SRESET: begin
        rst_cnt_d = '0;
        if (all_idle_i) state_d = S_SRESET_RST;
      end

      S_SRESET_RST: begin
        if (rst_cnt_q != 8'(SoftResetCycles)) rst_cnt_d = rst_cnt_q + 8'd1;
        if (rst_cnt_q == 8'(SoftResetCycles) && store_idle_i) begin
          head_d     = ring_tail_i;
          done_d     = ring_tail_i;
          faulted_d  = 1'b0;
          err_d      = core_regs_pkg::ERR_NONE;
          unit_d     = '0;
          opq_d      = '0;
          f_addr_d   = '0;
          f_kind_d   = core_regs_pkg::FAULT_KIND_NONE;
          f_stream_d = '0;
          f_desc_d   = '0;
          state_d    = S_IDLE;
        end
      end

      default: state_d = S_IDLE;
    endcase

    // ---- LOAD completion
    if (ld_busy_q && !ld_fin_q && load_done_i && load_status_i == core_regs_pkg::ERR_NONE) ld_fin_d = 1'b1;

    // ---- retirement in ring order
    case (rst_q)
      R_IDLE: begin
        // The oldest slot in flight retires once finished.
        if (run_busy_q && run_fin_q && (!ld_busy_q || older(run_idx_q, ld_idx_q)) &&
            (!ct_busy_q || older(run_idx_q, ct_idx_q))) begin
          run_busy_d = 1'b0;
          ret_irq_d  = run_irq_q;
          done_d     = run_idx_q + 32'd1;
          rst_d      = R_WB;
        end else if (ld_busy_q && ld_fin_q && (!run_busy_q || older(ld_idx_q, run_idx_q)) &&
                     (!ct_busy_q || older(ld_idx_q, ct_idx_q))) begin
          ld_busy_d = 1'b0;
          ret_irq_d = ld_irq_q;
          done_d    = ld_idx_q + 32'd1;
          rst_d     = R_WB;
        end else if (ct_busy_q && older(ct_idx_q, head_q) && !run_busy_q && !ld_busy_q) begin
          ct_busy_d = 1'b0;
          ret_irq_d = ct_irq_q;
          done_d    = ct_idx_q + 32'd1;
          rst_d     = R_WB;
        end
        wb_cmd_d  = 1'b0;
        wb_data_d = 1'b0;
        desc_done_o = (rst_d == R_WB);  // RING_DONE and CNT_DESC_DONE move together
        if (rst_d == R_WB && ring_wb_addr_i == 0) rst_d = R_IRQ;
      end
      R_WB: begin
        if (ntf_cmd_valid_o && ntf_cmd_ready_i) wb_cmd_d = 1'b1;
        if (ntf_valid_o && ntf_ready_i) wb_data_d = 1'b1;
        if (wb_cmd_d && wb_data_d) rst_d = R_WB_WAIT;
      end
      R_WB_WAIT: if (ntf_done_i) rst_d = R_IRQ;
      default: begin
        irq_done_set_o = ret_irq_q;
        rst_d          = R_IDLE;
      end
    endcase

    // ---- runtime faults: abort everything now (first fault logged)
    if (rt_fault) begin
      faulted_d = 1'b1;
      state_d   = S_FAULT;
      f_addr_d  = '0;
      if (dma_err_i) begin
        err_d      = core_regs_pkg::ERR_BUS;
        unit_d     = dma_err_stream_i;
        f_stream_d = dma_err_stream_i;
        f_addr_d   = dma_err_addr_i;
        f_kind_d   = dma_err_write_i ?
                     ((dma_err_resp_i == 2'b11) ? core_regs_pkg::FAULT_KIND_BUS_WRITE_DECERR
                                                : core_regs_pkg::FAULT_KIND_BUS_WRITE_SLVERR) :
                     ((dma_err_resp_i == 2'b11) ? core_regs_pkg::FAULT_KIND_BUS_READ_DECERR
                                                : core_regs_pkg::FAULT_KIND_BUS_READ_SLVERR);
        f_desc_d   = (dma_err_stream_i == core_regs_pkg::STREAM_WEIGHTS) ? ld_idx_q :
                     run_busy_q ? run_idx_q : head_q;
        opq_d      = (dma_err_stream_i == core_regs_pkg::STREAM_WEIGHTS) ? core_regs_pkg::OP_LOAD[3:0] :
                     run_busy_q ? run_op_q : d_op[3:0];
      end else if (run_fail_i || ld_fail) begin
        // The engine's status: the run's when both fail in one cycle.
        err_d      = run_fail_i ? run_fail_code_i : load_status_i;
        unit_d     = unit_stream(run_fail_i ? run_fail_unit_i : load_status_unit_i);
        f_stream_d = unit_stream(run_fail_i ? run_fail_unit_i : load_status_unit_i);
        f_kind_d   = (err_d == core_regs_pkg::ERR_TIMEOUT) ? core_regs_pkg::FAULT_KIND_TIMEOUT
                                                           : core_regs_pkg::FAULT_KIND_ENGINE;
        f_desc_d   = run_fail_i ? run_idx_q : ld_idx_q;
        opq_d      = run_fail_i ? run_op_q : core_regs_pkg::OP_LOAD[3:0];
      end else begin
        err_d      = core_regs_pkg::ERR_ABORTED;
        unit_d     = '0;
        f_stream_d = '0;
        f_kind_d   = core_regs_pkg::FAULT_KIND_ABORT;
        f_desc_d   = run_busy_q ? run_idx_q : (ld_busy_q ? ld_idx_q : head_q);
        opq_d      = run_busy_q ? run_op_q : (ld_busy_q ? core_regs_pkg::OP_LOAD[3:0] : d_op[3:0]);
      end
    end
    // A fault (or soft reset) frees the slots: their descriptors never retire.
    // (A fenced fault finds them free already.)
    if (rt_fault) begin
      run_busy_d = 1'b0;
      ld_busy_d  = 1'b0;
      ct_busy_d  = 1'b0;
      ld_pend_d  = 1'b0;
      wgt_pend_d = 1'b0;
      rst_d      = R_IDLE;
    end

    // ---- soft reset wins over everything
    if (soft_reset_i) begin
      state_d    = S_SRESET;
      run_busy_d = 1'b0;
      ld_busy_d  = 1'b0;
      ct_busy_d  = 1'b0;
      ld_pend_d  = 1'b0;
      wgt_pend_d = 1'b0;
      rst_d      = R_IDLE;
    end
  end

  // LOAD beside a run on another bank, a run beside a LOAD of another bank.
  assign bh_start  = state_q == S_DECODE;
  assign ext_start = state_q == S_EXTENT;
  assign ld_issue  = state_q == S_ISSUE && is_load && !ld_busy_q && !(run_busy_q && run_bank_q == d_bank);
  assign run_issue = state_q == S_ISSUE && is_run && !run_busy_q && !(ld_busy_q && ld_bank_q == d_bank);

  assign fence = !run_busy_q && !ld_busy_q && !ct_busy_q && (rst_q == R_IDLE);

  // A runtime fault this cycle (the first one is logged; a soft reset's own
  // abort is not one). Named, not read back from state_d: the slots' flags
  // would otherwise wait on the whole next-state logic.
  assign ld_fail  = ld_busy_q && load_done_i && load_status_i != core_regs_pkg::ERR_NONE;
  assign rt_fault = !faulted_q && state_q != S_SRESET && state_q != S_SRESET_RST &&
                    (abort_i || run_fail_i || dma_err_i || ld_fail);

  // Notify writer: the retirement write-back, else SIGNAL.
  logic ntf_wb;
  assign ntf_wb          = (rst_q == R_WB);
  assign ntf_cmd_valid_o = ntf_wb ? !wb_cmd_q : (state_q == S_SIGNAL && !sig_cmd_q);
  assign ntf_cmd_addr_o  = ntf_wb ? ring_wb_addr_i : d_addr0;
  assign ntf_valid_o     = ntf_wb ? !wb_data_q : (state_q == S_SIGNAL && !sig_data_q);
  assign ntf_data_o      = ntf_wb ? done_q : d_value;

  // LOAD outputs.
  logic [1:0]  ld_cell_q;
  logic [15:0] ld_hidden_q;
  logic [31:0] ld_wd_q, ld_len_q;
  logic [63:0] ld_addr_q;
  assign load_valid_o    = ld_pend_q;
  assign load_bank_o     = ld_bank_q;
  assign load_cell_o     = ld_cell_q;
  assign load_hidden_o   = ld_hidden_q;
  assign load_watchdog_o = ld_wd_q;
  assign wgt_cmd_valid_o = wgt_pend_q;
  assign wgt_cmd_addr_o  = ld_addr_q;
  assign wgt_cmd_bytes_o = ld_len_q;

  // FORWARD/BACKWARD outputs (valid with run_start_o).
  assign run_bw_o             = is_bw;
  assign run_cell_o           = d_cell;
  assign run_hidden_o         = d_hidden;
  assign run_batch_o          = d_batch;
  assign run_steps_o          = d_steps;
  assign run_bank_o           = d_bank;
  assign run_lengths_o        = lengths_q;
  assign run_maxlen_o         = maxlen_q;
  assign run_in_words_o       = in_words;
  assign run_out_words_o      = out_words;
  assign run_state_in_bytes_o = si_bytes;
  assign run_state_out_bytes_o = so_bytes;
  assign run_total_o          = total_q;
  assign run_in_addr_o        = d_in_addr;
  assign run_in_stride_o      = d_in_stride;
  assign run_out_addr_o       = d_out_addr;
  assign run_out_stride_o     = d_out_stride;
  assign run_state_in_addr_o  = d_si_addr;
  assign run_state_out_addr_o = d_so_addr;
  assign run_store_base_o     = d_store_base[StoreAddrWidth-1:0];
  assign run_store_size_o     = d_store_size[StoreAddrWidth-1:0];
  assign run_watchdog_o       = eff_watchdog;
  assign run_gate_enable_o    = d_gate_enable;
  assign run_gate_poll_o      = d_gate_poll;
  assign run_gate_select_o    = d_gate_select;
  assign run_gate_addr_o      = d_gate_addr;
  assign run_progress_every_o = d_every;
  assign run_progress_addr_o  = d_prog_addr;

  // Status.
  assign ring_head_o    = head_q;
  assign ring_done_o    = done_q;
  assign busy_o         = run_busy_q || ld_busy_q || ct_busy_q || (state_q != S_IDLE && state_q != S_HALTED);
  assign halted_o       = (state_q == S_HALTED);
  assign resetting_o    = (state_q == S_SRESET) || (state_q == S_SRESET_RST);
  assign error_o        = err_q;
  assign unit_o         = unit_q;
  assign op_o           = opq_q;
  assign fault_addr_o   = f_addr_q;
  assign fault_kind_o   = f_kind_q;
  assign fault_stream_o = f_stream_q;
  assign fault_desc_o   = f_desc_q;
  assign wait_stall_o   = (state_q == S_WAIT_RUN);
  assign abort_o        = abort_q;
  assign eng_rst_o      = (state_q == S_SRESET_RST);
  assign store_flush_o  = (state_q == S_SRESET_RST);

  // The abort reaches every block a cycle after the dispatcher enters
  // S_FAULT or S_SRESET, from a register (its fan-out spans the core).
  always_ff @(posedge clk_i) begin
    if (rst_i) abort_q <= 1'b0;
    else abort_q <= (state_q == S_FAULT) || (state_q == S_SRESET);
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      state_q       <= S_IDLE;
      head_q        <= '0;
      done_q        <= '0;
      chk_started_q <= 1'b0;
      faulted_q     <= 1'b0;
      err_q         <= core_regs_pkg::ERR_NONE;
      unit_q        <= '0;
      opq_q         <= '0;
      f_addr_q      <= '0;
      f_kind_q      <= core_regs_pkg::FAULT_KIND_NONE;
      f_stream_q    <= '0;
      f_desc_q      <= '0;
      run_busy_q    <= 1'b0;
      run_fin_q     <= 1'b0;
      ld_busy_q     <= 1'b0;
      ld_fin_q      <= 1'b0;
      ct_busy_q     <= 1'b0;
      ld_pend_q     <= 1'b0;
      wgt_pend_q    <= 1'b0;
      rst_q         <= R_IDLE;
    end else begin
      state_q       <= state_d;
      head_q        <= head_d;
      done_q        <= done_d;
      chk_started_q <= chk_started_d;
      faulted_q     <= faulted_d;
      err_q         <= err_d;
      unit_q        <= unit_d;
      opq_q         <= opq_d;
      f_addr_q      <= f_addr_d;
      f_kind_q      <= f_kind_d;
      f_stream_q    <= f_stream_d;
      f_desc_q      <= f_desc_d;
      run_busy_q    <= run_busy_d;
      run_fin_q     <= run_fin_d;
      ld_busy_q     <= ld_busy_d;
      ld_fin_q      <= ld_fin_d;
      ct_busy_q     <= ct_busy_d;
      ld_pend_q     <= ld_pend_d;
      wgt_pend_q    <= wgt_pend_d;
      rst_q         <= rst_d;
    end
    desc_q        <= desc_d;
    word_q        <= word_d;
    chk_q         <= chk_d;
    wait_left_q   <= wait_left_d;
    wait_wd_q     <= wait_wd_d;
    wait_zero_q   <= wait_zero_d;
    db_met_q      <= ($signed(wait_value - d_value) >= 0);
    sig_cmd_q     <= sig_cmd_d;
    sig_data_q    <= sig_data_d;
    rst_cnt_q     <= rst_cnt_d;
    len_bad_q     <= len_bad_d;
    maxlen_q      <= maxlen_d;
    total_q       <= total_d;
    lengths_q     <= lengths_d;
    pf_err_q      <= pf_err_d;
    pf_kind_q     <= pf_kind_d;
    pf_stream_q   <= pf_stream_d;
    pf_addr_q     <= pf_addr_d;
    run_irq_q     <= run_irq_d;
    run_idx_q     <= run_idx_d;
    run_bank_q    <= run_bank_d;
    run_op_q      <= run_op_d;
    ld_irq_q      <= ld_irq_d;
    ld_idx_q      <= ld_idx_d;
    ld_bank_q     <= ld_bank_d;
    ct_irq_q      <= ct_irq_d;
    ct_idx_q      <= ct_idx_d;
    ret_irq_q     <= ret_irq_d;
    wb_cmd_q      <= wb_cmd_d;
    wb_data_q     <= wb_data_d;
    if (ld_issue) begin
      ld_cell_q   <= d_cell;
      ld_hidden_q <= d_hidden;
      ld_wd_q     <= eff_watchdog;
      ld_addr_q   <= d_addr0;
      ld_len_q    <= d_len0;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (!rst_i && state_q == S_WAIT_RUN) begin
      assert (wait_zero_q == (wait_left_q == 32'd0))
      else $error("core_dispatch: the WAIT's zero flag disagrees with its counter");
    end
  end
  initial begin
    if (MaxBatch > 32) $error("core_dispatch: MaxBatch above 32 needs a wider lengths word counter");
    if (NumWindows < 1) $error("core_dispatch: NumWindows must be >= 1");
  end
`endif

endmodule

`default_nettype wire
