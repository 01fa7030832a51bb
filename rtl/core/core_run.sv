// FORWARD/BACKWARD run unit of farnn_core: runs one engine command and the
// DMA around it.
//   - engine command (op, cell, sizes, lengths, bank, gate store, watchdog);
//   - state in: one read of the whole state stream (FW h0/c0, BW the carry);
//   - per-step input (FW xp, BW dh): one read per step (core_walker), each
//     gated, when enabled, on a "steps available" count: chunk k may be read
//     once count >= k + 1 (FW) or >= steps - maxlen + k + 1 (BW: counted from
//     the last step), compared modulo 2^32. The count is a step doorbell
//     register or, with gate_poll, a 32-bit word in memory read again while
//     the gate is closed;
//   - per-step output (FW h, BW delta): one write per step; each write's
//     completion (all its B responses) counts a step done; with
//     progress_every = K > 0 the steps-done count is written to
//     progress_addr every K steps and after the last one (a write in flight
//     is completed first; a later count replaces the ones it skipped);
//   - state out: one write of the whole state stream.
// done_o pulses when the engine ended without error and every write has
// completed; fail_o pulses with the engine's status when it ended with one
// (the shell's fault logic aborts the rest). abort_i stops issuing at once.
`default_nettype none

module core_run #(
  parameter int unsigned MaxBatch       = 4,
  parameter int unsigned StoreAddrWidth = 40
) (
  input  logic                      clk_i,
  input  logic                      rst_i,
  input  logic                      abort_i,
  // Start (one pulse) and the command, valid with it.
  input  logic                      start_i,
  input  logic                      bw_i,
  input  logic [1:0]                cell_i,
  input  logic [15:0]               hidden_i,
  input  logic [15:0]               batch_i,
  input  logic [15:0]               steps_i,
  input  logic [7:0]                bank_i,
  input  logic [MaxBatch*16-1:0]    lengths_i,
  input  logic [15:0]               maxlen_i,
  input  logic [17:0]               in_words_i,         // words per sequence and step, input
  input  logic [17:0]               out_words_i,        // and output (xp/dh, h/delta)
  input  logic [31:0]               state_in_bytes_i,
  input  logic [31:0]               state_out_bytes_i,
  input  logic [31:0]               total_i,
  input  logic [63:0]               in_addr_i,
  input  logic [31:0]               in_stride_i,
  input  logic [63:0]               out_addr_i,
  input  logic [31:0]               out_stride_i,
  input  logic [63:0]               state_in_addr_i,
  input  logic [63:0]               state_out_addr_i,
  input  logic [StoreAddrWidth-1:0] store_base_i,
  input  logic [StoreAddrWidth-1:0] store_size_i,
  input  logic [31:0]               watchdog_i,
  input  logic                      gate_enable_i,
  input  logic                      gate_poll_i,
  input  logic [1:0]                gate_select_i,
  input  logic [63:0]               gate_addr_i,
  input  logic [15:0]               progress_every_i,
  input  logic [63:0]               progress_addr_i,
  input  logic [4*32-1:0]           doorbells_i,
  output logic                      bw_o,          // the command's direction (held after start)
  output logic                      busy_o,
  output logic                      done_o,
  output logic                      fail_o,
  output logic [4:0]                fail_code_o,
  output logic [3:0]                fail_unit_o,
  output logic                      gate_wait_o,   // a chunk waits on its gate
  // Engine command port.
  output logic                      eng_cmd_valid_o,
  input  logic                      eng_cmd_ready_i,
  output logic [1:0]                eng_op_o,
  output logic [1:0]                eng_cell_o,
  output logic [15:0]               eng_hidden_o,
  output logic [15:0]               eng_batch_o,
  output logic [15:0]               eng_steps_o,
  output logic [7:0]                eng_bank_o,
  output logic [MaxBatch*16-1:0]    eng_lengths_o,
  output logic [StoreAddrWidth-1:0] eng_store_base_o,
  output logic [StoreAddrWidth-1:0] eng_store_size_o,
  output logic [31:0]               eng_watchdog_o,
  input  logic                      eng_busy_i,
  input  logic                      eng_done_i,
  input  logic [4:0]                eng_status_i,
  input  logic [3:0]                eng_status_unit_i,
  // DMA commands: per-step input reader, state-in reader, gate poll reader.
  output logic                      in_cmd_valid_o,
  input  logic                      in_cmd_ready_i,
  output logic [63:0]               in_cmd_addr_o,
  output logic [31:0]               in_cmd_bytes_o,
  output logic                      in_cmd_last_o,
  output logic                      si_cmd_valid_o,
  input  logic                      si_cmd_ready_i,
  output logic [63:0]               si_cmd_addr_o,
  output logic [31:0]               si_cmd_bytes_o,
  output logic                      poll_cmd_valid_o,
  input  logic                      poll_cmd_ready_i,
  output logic [63:0]               poll_cmd_addr_o,
  input  logic                      poll_valid_i,
  output logic                      poll_ready_o,
  input  logic [31:0]               poll_data_i,
  // DMA commands: per-step output writer, state-out writer, progress writer.
  output logic                      out_cmd_valid_o,
  input  logic                      out_cmd_ready_i,
  output logic [63:0]               out_cmd_addr_o,
  output logic [31:0]               out_cmd_bytes_o,
  input  logic                      out_done_i,
  output logic                      so_cmd_valid_o,
  input  logic                      so_cmd_ready_i,
  output logic [63:0]               so_cmd_addr_o,
  output logic [31:0]               so_cmd_bytes_o,
  input  logic                      so_done_i,
  output logic                      prog_cmd_valid_o,
  input  logic                      prog_cmd_ready_i,
  output logic [63:0]               prog_cmd_addr_o,
  output logic                      prog_valid_o,
  input  logic                      prog_ready_i,
  output logic [31:0]               prog_data_o,
  input  logic                      prog_done_i
);

  // ------------------------------------------------------- the command
  logic                   active_q, active_d;
  logic                   bw_q, gate_en_q, gate_poll_q;
  logic [1:0]             cell_q, gate_sel_q;
  logic [15:0]            hidden_q, batch_q, steps_q, maxlen_q, every_q;
  logic [7:0]             bank_q;
  logic [MaxBatch*16-1:0] lengths_q;
  logic [StoreAddrWidth-1:0] store_base_q, store_size_q;
  logic [31:0]            watchdog_q;
  logic [63:0]            gate_addr_q, prog_addr_q, si_addr_q, so_addr_q;

  // ------------------------------------------------------------- engine
  logic eng_pend_q, eng_pend_d, eng_done_q, eng_done_d;
  assign eng_cmd_valid_o  = eng_pend_q;
  assign eng_op_o         = bw_q ? engine_pkg::CMD_BACKWARD : engine_pkg::CMD_FORWARD;
  assign eng_cell_o       = cell_q;
  assign eng_hidden_o     = hidden_q;
  assign eng_batch_o      = batch_q;
  assign eng_steps_o      = steps_q;
  assign eng_bank_o       = bank_q;
  assign eng_lengths_o    = lengths_q;
  assign eng_store_base_o = store_base_q;
  assign eng_store_size_o = store_size_q;
  assign eng_watchdog_o   = watchdog_q;

  // ------------------------------------------------------- state streams
  logic si_pend_q, si_pend_d, so_pend_q, so_pend_d, so_done_q, so_done_d;
  logic [31:0] si_bytes_q, so_bytes_q;
  assign si_cmd_valid_o = si_pend_q;
  assign si_cmd_addr_o  = si_addr_q;
  assign si_cmd_bytes_o = si_bytes_q;
  assign so_cmd_valid_o = so_pend_q;
  assign so_cmd_addr_o  = so_addr_q;
  assign so_cmd_bytes_o = so_bytes_q;

  // ------------------------------------------------- per-step streams
  logic        in_valid, in_busy, in_last, out_valid, out_busy, unused_out_last;
  logic [63:0] in_addr, out_addr;
  logic [31:0] in_bytes, out_bytes;
  logic [15:0] in_k, unused_out_k;
  logic        gate_open;
  logic [31:0] gate_count, gate_need;

  core_walker #(.MaxBatch(MaxBatch)) u_in_walk (
    .clk_i,
    .rst_i,
    .abort_i,
    .start_i    (start_i),
    .bw_i       (bw_i),
    .batch_i    (batch_i),
    .lengths_i  (lengths_i),
    .maxlen_i   (maxlen_i),
    .total_i    (total_i),
    .base_i     (in_addr_i),
    .stride_i   (in_stride_i),
    .words_i    (in_words_i),
    .busy_o     (in_busy),
    .out_valid_o(in_valid),
    .out_ready_i(in_cmd_ready_i && gate_open),
    .out_addr_o (in_addr),
    .out_bytes_o(in_bytes),
    .out_last_o (in_last),
    .out_index_o(in_k)
  );
  core_walker #(.MaxBatch(MaxBatch)) u_out_walk (
    .clk_i,
    .rst_i,
    .abort_i,
    .start_i    (start_i),
    .bw_i       (bw_i),
    .batch_i    (batch_i),
    .lengths_i  (lengths_i),
    .maxlen_i   (maxlen_i),
    .total_i    (total_i),
    .base_i     (out_addr_i),
    .stride_i   (out_stride_i),
    .words_i    (out_words_i),
    .busy_o     (out_busy),
    .out_valid_o(out_valid),
    .out_ready_i(out_cmd_ready_i),
    .out_addr_o (out_addr),
    .out_bytes_o(out_bytes),
    .out_last_o (unused_out_last),
    .out_index_o(unused_out_k)
  );

  // Gate: the count of steps available against what chunk k needs.
  logic [31:0] polled_q, polled_d;
  logic        poll_busy_q, poll_busy_d;
  always_comb begin
    gate_count = polled_q;
    if (!gate_poll_q) gate_count = doorbells_i[gate_sel_q*32 +: 32];
  end
  assign gate_need   = (bw_q ? 32'(steps_q) - 32'(maxlen_q) : 32'd0) + 32'(in_k) + 32'd1;
  assign gate_open   = !gate_en_q || ($signed(gate_count - gate_need) >= 0);
  assign gate_wait_o = in_valid && !gate_open;

  assign in_cmd_valid_o = in_valid && gate_open;
  assign in_cmd_addr_o  = in_addr;
  assign in_cmd_bytes_o = in_bytes;
  assign in_cmd_last_o  = in_last;
  assign out_cmd_valid_o = out_valid;
  assign out_cmd_addr_o  = out_addr;
  assign out_cmd_bytes_o = out_bytes;

  // A poll is issued while a chunk waits on a closed polled gate.
  logic poll_issue;
  assign poll_issue       = active_q && in_valid && !gate_open && gate_poll_q && !poll_busy_q;
  assign poll_cmd_valid_o = poll_issue;
  assign poll_cmd_addr_o  = gate_addr_q;
  assign poll_ready_o     = 1'b1;

  // ------------------------------------------------------------ progress
  logic [15:0] steps_done_q, steps_done_d, reported_q, reported_d, next_report_q, next_report_d;
  logic [1:0]  prog_state_q, prog_state_d;   // 0 idle, 1 command + data, 2 wait for done
  logic        prog_cmd_done_q, prog_cmd_done_d, prog_data_done_q, prog_data_done_d;
  logic [31:0] prog_value_q, prog_value_d;
  logic        prog_due;
  assign prog_due = (every_q != 0) &&
                    ((steps_done_q >= next_report_q) || (steps_done_q == maxlen_q && reported_q != maxlen_q));
  assign prog_cmd_valid_o = (prog_state_q == 2'd1) && !prog_cmd_done_q;
  assign prog_cmd_addr_o  = prog_addr_q;
  assign prog_valid_o     = (prog_state_q == 2'd1) && !prog_data_done_q;
  assign prog_data_o      = prog_value_q;

  // ---------------------------------------------------------- completion
  logic finished;
  assign finished = active_q && eng_done_q && !eng_pend_q && !si_pend_q && !so_pend_q && so_done_q &&
                    !in_busy && !out_busy && (steps_done_q == maxlen_q) &&
                    (every_q == 0 || (reported_q == maxlen_q && prog_state_q == 2'd0)) &&
                    !poll_busy_q;

  always_comb begin
    active_d         = active_q;
    eng_pend_d       = eng_pend_q && !eng_cmd_ready_i;
    eng_done_d       = eng_done_q;
    si_pend_d        = si_pend_q && !si_cmd_ready_i;
    so_pend_d        = so_pend_q && !so_cmd_ready_i;
    so_done_d        = so_done_q || so_done_i;
    polled_d         = polled_q;
    poll_busy_d      = poll_busy_q;
    steps_done_d     = steps_done_q + 16'(out_done_i);
    reported_d       = reported_q;
    next_report_d    = next_report_q;
    prog_state_d     = prog_state_q;
    prog_cmd_done_d  = prog_cmd_done_q;
    prog_data_done_d = prog_data_done_q;
    prog_value_d     = prog_value_q;
    done_o           = 1'b0;
    fail_o           = 1'b0;

    if (poll_issue && poll_cmd_ready_i) poll_busy_d = 1'b1;
    if (poll_valid_i) begin
      polled_d    = poll_data_i;
      poll_busy_d = 1'b0;
    end

    case (prog_state_q)
      2'd0: begin
        if (active_q && prog_due) begin
          prog_state_d     = 2'd1;
          prog_cmd_done_d  = 1'b0;
          prog_data_done_d = 1'b0;
          prog_value_d     = 32'(steps_done_q);
          reported_d       = steps_done_q;
          next_report_d    = steps_done_q + every_q;
        end
      end
      2'd1: begin
        if (prog_cmd_valid_o && prog_cmd_ready_i) prog_cmd_done_d = 1'b1;
        if (prog_valid_o && prog_ready_i) prog_data_done_d = 1'b1;
        if (prog_cmd_done_d && prog_data_done_d) prog_state_d = 2'd2;
      end
      default: if (prog_done_i) prog_state_d = 2'd0;
    endcase

    if (active_q && eng_done_i) begin
      eng_done_d = 1'b1;
      if (eng_status_i != engine_pkg::ERR_NONE) begin
        fail_o   = 1'b1;
        active_d = 1'b0;
      end
    end
    if (finished) begin
      done_o   = 1'b1;
      active_d = 1'b0;
    end
    if (abort_i) begin
      active_d     = 1'b0;
      eng_pend_d   = 1'b0;
      si_pend_d    = 1'b0;
      so_pend_d    = 1'b0;
      prog_state_d = 2'd0;
    end
    if (start_i) begin
      active_d      = 1'b1;
      eng_pend_d    = 1'b1;
      eng_done_d    = 1'b0;
      si_pend_d     = 1'b1;
      so_pend_d     = 1'b1;
      so_done_d     = 1'b0;
      steps_done_d  = '0;
      reported_d    = '0;
      next_report_d = progress_every_i;
      prog_state_d  = 2'd0;
      polled_d      = '0;
      poll_busy_d   = 1'b0;
    end
  end

  assign fail_code_o = eng_status_i;
  assign fail_unit_o = eng_status_unit_i;
  assign busy_o      = active_q || eng_busy_i;
  assign bw_o        = bw_q;

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      active_q     <= 1'b0;
      eng_pend_q   <= 1'b0;
      eng_done_q   <= 1'b0;
      si_pend_q    <= 1'b0;
      so_pend_q    <= 1'b0;
      so_done_q    <= 1'b0;
      poll_busy_q  <= 1'b0;
      prog_state_q <= 2'd0;
      steps_done_q <= '0;
    end else begin
      active_q     <= active_d;
      eng_pend_q   <= eng_pend_d;
      eng_done_q   <= eng_done_d;
      si_pend_q    <= si_pend_d;
      so_pend_q    <= so_pend_d;
      so_done_q    <= so_done_d;
      poll_busy_q  <= poll_busy_d;
      prog_state_q <= prog_state_d;
      steps_done_q <= steps_done_d;
    end
    polled_q         <= polled_d;
    reported_q       <= reported_d;
    next_report_q    <= next_report_d;
    prog_cmd_done_q  <= prog_cmd_done_d;
    prog_data_done_q <= prog_data_done_d;
    prog_value_q     <= prog_value_d;
    if (start_i) begin
      bw_q         <= bw_i;
      cell_q       <= cell_i;
      hidden_q     <= hidden_i;
      batch_q      <= batch_i;
      steps_q      <= steps_i;
      maxlen_q     <= maxlen_i;
      bank_q       <= bank_i;
      lengths_q    <= lengths_i;
      store_base_q <= store_base_i;
      store_size_q <= store_size_i;
      watchdog_q   <= watchdog_i;
      gate_en_q    <= gate_enable_i;
      gate_poll_q  <= gate_poll_i;
      gate_sel_q   <= gate_select_i;
      gate_addr_q  <= gate_addr_i;
      every_q      <= progress_every_i;
      prog_addr_q  <= progress_addr_i;
      si_addr_q    <= state_in_addr_i;
      so_addr_q    <= state_out_addr_i;
      si_bytes_q   <= state_in_bytes_i;
      so_bytes_q   <= state_out_bytes_i;
    end
  end

endmodule

`default_nettype wire
