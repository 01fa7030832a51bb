// Sequencer of the recurrent engine: accepts a command (FORWARD, BACKWARD;
// LOADs go to the loader, which runs beside it) with its configuration and
// weight bank, refuses illegal configurations with an error status (it never
// hangs on one), and then drives the PE chain:
//   FORWARD   loads h0/c0 slot by slot beside the tokens, and for t, for
//             each sequence b still running (t < length b): H ELEM tokens
//             (h_{t-1}[j], read from the h buffer once the activation unit
//             has produced it, or at t = 0 once slot b's h0/c0 are in);
//   BACKWARD  loads the initial carry, then for t from the longest length
//             down, for each b with t < length b: the waves of delta rows
//             (P rows each, one per PE, RowLanes rows a ROW token, sent in
//             the grid of engine_pkg's "BW: ROW tokens", or in row order
//             where engine_pkg::bw_row_order says so) and a REDUCE token; a
//             sequence's first backward step (t = length - 1) reduces zeros,
//             and a final reduction per sequence yields dh0. Gate-store
//             records are prefetched in backward order.
// Sequences have their own lengths (1..T): a finished sequence does no work
// and is absent from the streams (PyTorch PackedSequence order); each
// sequence's dependency is on its own previous step (a per-slot table).
// It reserves room in every output FIFO and checks every input FIFO holds
// the whole step before the step's results reach the activation unit (FW:
// Xp and the h, final-state and gate-store room at the step's last ELEM;
// BW: dh, records and the delta or final-state room at its REDUCE), so the
// rigid chain and activation unit never stall. Token spacing follows the PE
// timing (docs/architecture.md).
// Framing: every input stream marks the final word of the command's portion
// with `last`; a `last` too early ends the command with ERR_TOO_FEW_WORDS, a
// final word without it with ERR_TOO_MANY_WORDS, after which the stream's
// surplus is dropped up to its `last` (never left for the next command). On
// the buffered streams (Xp, dh) the error is registered: the stream closes
// at the bad word and the command ends in the next cycle.
// abort_i, the watchdog (cycles without progress, 0 = off) and framing errors
// all end the command the same way: the datapath is held in reset for
// engine_pkg::flush_cycles cycles (nothing of the command survives; weights,
// bias and a finished forward's gate store do) and the command completes
// with its status and the stream it names. From abort_i to done: at most
// flush_cycles + 2 cycles (plus the surplus drop after a framing error).
// Counters: cycles, MACs issued by the PEs (their MAC enables), stall cycles by
// cause, weight words written (weight and bias RAM write enables), hidden units
// whose outputs hold a NaN or an infinity.
`default_nettype none

module sequencer #(
  parameter int unsigned NumPe        = 4,
  parameter int unsigned NumChains    = 1,      // pe_chain's chains
  parameter int unsigned WeightDepth  = 1024,   // words per bank in each PE
  parameter int unsigned NumBanks     = 2,
  parameter int unsigned MaxHidden    = 32,
  parameter int unsigned MaxBatch     = 4,
  parameter int unsigned MulLatency   = 2,
  parameter int unsigned AddLatency   = 3,
  parameter int unsigned MemAddrWidth = 40,
  parameter int unsigned FifoDepth    = 64,
  parameter int unsigned RowLanes     = 1,      // delta rows a ROW token carries (pe_chain checks it)
  parameter int unsigned ResLanes     = 1,      // FW result lanes of the chain (1 or 4)
  parameter int unsigned XpWords      = 1,      // Xp words a beat (1, or 4: a unit a beat)
  parameter int unsigned RedAdder     = 0,      // 1: the PEs reduce on adders of their own
  localparam int unsigned CountWidth  = $clog2(NumPe + 2),
  localparam int unsigned BankWidth   = (NumBanks > 1) ? $clog2(NumBanks) : 1,
  localparam int unsigned MaxRows     = (4 * MaxHidden + NumPe - 1) / NumPe,
  localparam int unsigned PeWidth     = (NumPe > 1) ? $clog2(NumPe) : 1,
  localparam int unsigned WAddrWidth  = $clog2(NumBanks * WeightDepth),
  localparam int unsigned HiddenWidth = $clog2(MaxHidden + 1),
  localparam int unsigned RowsWidth   = $clog2(MaxRows + 1),
  localparam int unsigned JWidth      = (MaxHidden > 1) ? $clog2(MaxHidden) : 1,
  localparam int unsigned BWidth      = (MaxBatch > 1) ? $clog2(MaxBatch) : 1,
  localparam int unsigned BufWidth    = BWidth + JWidth
) (
  input  logic                    clk_i,
  input  logic                    rst_i,
  // Command and status.
  input  logic                    cmd_valid_i,
  output logic                    cmd_ready_o,
  input  logic [1:0]              cmd_op_i,
  input  logic [1:0]              cfg_cell_i,
  input  logic [15:0]             cfg_hidden_i,
  input  logic [15:0]             cfg_batch_i,
  input  logic [15:0]             cfg_steps_i,
  input  logic [7:0]              cfg_bank_i,
  input  logic [MaxBatch*16-1:0]  cfg_lengths_i,    // per slot, 1..T
  input  logic [MemAddrWidth-1:0] cfg_store_base_i,
  input  logic [MemAddrWidth-1:0] cfg_store_size_i,
  input  logic [31:0]             cfg_watchdog_i,   // cycles without progress; 0: off
  input  logic                    abort_i,
  output logic                    busy_o,
  output logic                    done_o,
  output logic [4:0]              status_o,
  output logic [3:0]              status_unit_o,
  // Datapath reset after an abort, a timeout or a framing error.
  output logic                    flush_o,
  // Running configuration for the datapath.
  output logic                    run_busy_o,       // a command claims run_bank_o (from acceptance on)
  output logic [BankWidth-1:0]    run_bank_o,
  output logic                    run_bw_o,
  output logic                    run_gru_o,
  output logic [HiddenWidth-1:0]  run_hidden_o,
  output logic [MemAddrWidth-1:0] run_store_base_o,
  output logic [39:0]             run_units_o,      // T*B*H: h / delta units of the command
  output logic [39:0]             run_seq_units_o,  // B*H: final-state units
  output logic                    start_o,
  // PE chain configuration and tokens.
  output logic                    chain_bw_o,
  output logic [RowsWidth-1:0]    chain_rows_base_o,
  output logic [PeWidth-1:0]      chain_rows_extra_o,
  output logic                    tok_valid_o,
  output logic [1:0]              tok_op_o,
  output logic                    tok_first_o,
  output logic                    tok_last_o,
  output logic                    tok_zero_o,
  output logic [PeWidth-1:0]      tok_pe_o,
  output logic [WAddrWidth-1:0]   tok_addr_o,
  output logic [RowLanes-1:0]     tok_mask_o,       // ROW: lanes that carry a row
  output logic [RowLanes*32-1:0]  tok_data_o,       // ELEM: h[j] in every lane
  // Weight banks (the loader's table) and the LOAD in progress.
  input  logic [NumBanks-1:0]     bank_valid_i,
  input  logic [NumBanks*2-1:0]   bank_cell_i,
  input  logic [NumBanks*16-1:0]  bank_hidden_i,
  input  logic                    load_busy_i,      // a LOAD of load_bank_i is running
  input  logic [BankWidth-1:0]    load_bank_i,
  // Input stream consumed here.
  input  logic                    state_valid_i,
  output logic                    state_ready_o,
  input  logic [31:0]             state_data_i,
  input  logic                    state_last_i,
  // Input streams buffered elsewhere: open while words may still be accepted;
  // skip: drop words up to `last` (the surplus after ERR_TOO_MANY_WORDS).
  // valid: the stream's own valid (while skipping, ready is the skip itself,
  // so a word is taken exactly when one is valid; S_SKIP reads valid and
  // keeps the ready logic off its next state).
  output logic                    xp_open_o,
  output logic                    xp_skip_o,
  input  logic                    xp_valid_i,
  input  logic                    xp_word_i,
  input  logic                    xp_last_i,
  input  logic                    xp_unit_i,
  output logic                    dh_open_o,
  output logic                    dh_skip_o,
  input  logic                    dh_valid_i,
  input  logic                    dh_word_i,
  input  logic                    dh_last_i,
  // Loading the h buffer and the state RAM.
  output logic                    load_hbuf_we_o,
  output logic                    load_state_we_o,
  output logic [BufWidth-1:0]     load_addr_o,
  output logic [31:0]             load_data_o,
  // Buffers read for tokens.
  output logic                    hbuf_re_o,
  output logic [BufWidth-1:0]     hbuf_raddr_o,
  input  logic [31:0]             hbuf_rdata_i,
  output logic                    dbuf_re_o,
  output logic [BufWidth-1:0]     dbuf_raddr_o,
  input  logic [127:0]            dbuf_rdata_i,
  // Step descriptors to the activation unit.
  output logic                    desc_valid_o,
  output logic [BWidth-1:0]       desc_batch_o,
  output logic                    desc_flag_o,
  // Progress and FIFO events.
  input  logic                    unit_done_i,
  input  logic                    nonfinite_i,
  input  logic                    rec_push_i,
  input  logic                    rec_pop_i,
  input  logic                    hout_pop_i,
  input  logic                    dout_pop_i,
  input  logic                    sout_pop_i,
  input  logic                    store_pop_i,
  input  logic                    drain_idle_i,
  input  logic [3:0]              drain_busy_i,     // {gate store, state out, delta, h} hold data
  input  logic                    progress_i,       // a handshake, token or unit this cycle
  // Measured activity: MACs issued by the PEs this cycle.
  input  logic [CountWidth-1:0]   mac_count_i,
  // Gate-store read requests (backward prefetch).
  output logic                    rd_req_valid_o,
  input  logic                    rd_req_ready_i,
  output logic [MemAddrWidth-1:0] rd_req_addr_o,
  // Counters (cleared when a command is accepted).
  output logic [63:0]             cnt_cycles_o,
  output logic [63:0]             cnt_macs_o,
  output logic [63:0]             cnt_stall_input_o,
  output logic [63:0]             cnt_stall_output_o,
  output logic [63:0]             cnt_stall_dep_o,
  output logic [63:0]             cnt_stall_store_o,
  output logic [63:0]             cnt_nonfinite_o
);

  localparam int unsigned La = AddLatency;
  localparam int unsigned Lm = MulLatency;
  localparam int unsigned CW = 40;  // width of unit/word counts (T*B*G*H < 2^40)
  // Credits and availabilities count FIFO entries: 0..FifoDepth + 1 (and a spare bit).
  localparam int unsigned CrW = $clog2(FifoDepth + 1) + 1;
  localparam logic [CrW-1:0] FIFO_CREDITS = CrW'(FifoDepth);
  localparam int unsigned FlushCycles = engine_pkg::flush_cycles(Lm, La);
  // The ROW token grid: Lines lines of up to NumChains groups, pitch_q apart.
  localparam int unsigned ChainLen  = NumPe / NumChains;
  localparam int unsigned Lines     = ChainLen / RowLanes;
  localparam int unsigned ChainBits = (NumChains > 1) ? $clog2(ChainLen) : 0;
  localparam int unsigned LaneBits  = (RowLanes > 1) ? $clog2(RowLanes) : 0;

  typedef enum logic [3:0] {
    S_IDLE, S_SETUP, S_LENGTHS, S_DIVIDE, S_DERIVE, S_PRODUCT, S_CHECK, S_CFGWAIT, S_STATE,
    S_RUN, S_DRAIN, S_ABORT, S_SKIP, S_DONE
  } state_e;

  state_e state_q, state_d;

  // ------------------------------------------------------- command latch
  logic [1:0]              op_q, op_d;
  logic [1:0]              cell_q, cell_d;
  logic [15:0]             hid_q, hid_d, bat_q, bat_d, stp_q, stp_d;
  logic [7:0]              bank_q, bank_d;
  logic                    after_load_q, after_load_d;  // a LOAD of this bank came first
  // The command's bank holds weights of its cell and size, as the loader
  // showed them a cycle ago. The loader changes a bank only while it is busy
  // with it, and busy in the cycle after (L_DONE, or its run): so where S_CHECK
  // reads the flag, unless the LOAD that came first is still busy (BANK_BUSY
  // wins), the bank is as it was a cycle before (asserted). A LOAD that came
  // later is refused while the command runs, the bank untouched.
  logic                    weights_ok_q, weights_ok;
  logic [WAddrWidth-1:0]   bank_base_q, bank_base_d;  // bank * WeightDepth
  logic [MemAddrWidth-1:0] base_q, base_d, size_q, size_d;
  logic [4:0]              status_q, status_d;
  logic [3:0]              unit_q, unit_d;      // stream named by the status
  logic [3:0]              skip_q, skip_d;      // stream whose surplus is being dropped
  logic [31:0]             wd_lim_m1_q, wd_lim_m1_d;  // watchdog limit - 1 (all ones: no watchdog)
  // Cycles without progress, one cycle behind: the count is wd_prev_q + 1,
  // or 0 where wd_clr_q says a progress (or an idle or new command) cleared
  // it; the progress input (a handshake the sequencer's own outputs open) is
  // registered into wd_clr_q instead of reaching the counter's 32 bits.
  logic [31:0]             wd_prev_q;
  logic                    wd_clr_q, wd_clr_d;
  logic [7:0]              fl_q, fl_d;          // flush cycles left
  logic                    wrap_q, wrap_d;      // base + size beyond the address space

  // Derived configuration.
  logic [17:0]   gh_q, gh_d;          // G*H
  logic [17:0]   rem_q, rem_d;        // division remainder
  logic [17:0]   quo_q, quo_d;        // floor(G*H / P)
  logic [17:0]   rows_q, rows_d;      // R = ceil(G*H / P), rows of PE 0 = waves
  logic [CW-1:0] bh_q, bh_d;          // B*H
  logic [CW-1:0] tbh_q, tbh_d;        // T*B*H
  logic [CW-1:0] tb_q, tb_d;          // S: packed steps, the sum of the lengths
  logic [15:0]   hm1_q, hm1_d;        // H - 1: the last element / column
  logic [CW-1:0] nlast_q, nlast_d;    // the command's last chain step (FW S - 1, BW S + B - 1)
  logic [CW-1:0] uend_q, uend_d;      // units at the end (FW T*B*H, BW T*B*H + B*H)
  logic [MaxBatch*16-1:0] len_q, len_d;  // per slot
  logic [15:0]   maxlen_q, maxlen_d;  // the longest length
  logic [15:0]   maxslot_q, maxslot_d;  // the first slot with it
  logic          len_bad_q, len_bad_d;  // a length outside 1..T
  logic [CW-1:0] rh_q, rh_d;          // R*H (weight words per PE)
  logic [CW+5:0] bytes_q, bytes_d;    // T*B*H*32: the gate store the command needs
  logic          big_q, big_d;        // R*H beyond a bank (S_PRODUCT)
  logic          small_q, small_d;    // the gate store smaller than bytes (S_PRODUCT)
  logic [15:0]   s_fw_q, s_fw_d;      // ELEM spacing
  logic [15:0]   s_fwb_q, s_fwb_d;    // a step's last ELEM to the next step's first
  logic [31:0]   l_res_q, l_res_d;    // min distance between a step's last ELEMs (fw_last_gap)
  logic [15:0]   s_bw_q, s_bw_d;      // wave spacing - its span: idle after a wave's last token
  logic [15:0]   q_last_q, q_last_d;  // chains the last wave reaches
  logic [15:0]   q_lm1_q, q_lm1_d;    // q_last - 1
  logic [15:0]   pitch_q, pitch_d;    // cycles from a grid line to the next
  logic [15:0]   s_red_q, s_red_d;    // last wave -> REDUCE, less its span
  logic [15:0]   s_ared_q, s_ared_d;  // REDUCE -> next wave
  logic [15:0]   wait_cfg_q, wait_cfg_d;
  logic          wait_cfg_z_q, wait_cfg_z_d;  // wait_cfg_q == 0, registered beside it (S_CFGWAIT)

  // The finished FORWARDs a BACKWARD may match (engine_pkg::FW_RECORDS of
  // them): each one's key (cell, H, B, T, store base, bank, lengths) and its
  // store window [lo, hi). A FORWARD accepted over a window voids every
  // record it overlaps. The entries are in age order, entry 0 the newest: a
  // finished FORWARD goes into entry 0 and the entries before the first free
  // one move up by one (none free: the oldest, entry FR-1, drops out), so a
  // free entry left by a void never makes a newer record the next to go.
  localparam int unsigned FR = engine_pkg::FW_RECORDS;
  localparam int unsigned KW = 2 + 3 * 16 + MemAddrWidth + 8 + MaxBatch * 16;
  logic [FR-1:0]              fr_ok_q, fr_ok_d;
  logic [FR*KW-1:0]           fr_key_q, fr_key_d;
  logic [FR*MemAddrWidth-1:0] fr_lo_q, fr_lo_d, fr_hi_q, fr_hi_d;
  logic [KW-1:0]              fr_key;                // the running command's key
  logic [MemAddrWidth-1:0]    fr_end_q;              // its store window's end (registered)
  logic                       fr_match, fr_match_q;  // a record matches it (registered: used in S_CHECK)
  localparam int unsigned FR_PARTS = 6;                  // the key compared in parts of <= 27 bits
  localparam int unsigned FR_PW    = (KW + FR_PARTS - 1) / FR_PARTS;
  logic [FR*FR_PARTS-1:0]     fr_part_q;             // bit i*FR_PARTS + p: record i's part p equals the key's
  logic [FR-1:0]              fr_over;               // records whose windows its window overlaps
  logic                       fr_void_q, fr_void_d;  // an accepted FORWARD voids those next cycle
  logic [FR-1:0]              fr_shift;              // entries that take their younger neighbour's record

  logic is_lstm, is_gru, is_bw, is_fw, running;
  assign is_lstm = (cell_q == engine_pkg::CELL_LSTM);
  assign is_gru  = (cell_q == engine_pkg::CELL_GRU);
  assign is_fw   = (op_q == engine_pkg::CMD_FORWARD);
  assign is_bw   = (op_q == engine_pkg::CMD_BACKWARD);
  // Past validation and set-up: streams may flow, records may be prefetched.
  assign running = (state_q == S_STATE) || (state_q == S_RUN) || (state_q == S_DRAIN);
  // The last set-up cycle: counters, flags and the prefetch start for the run.
  logic run_start;
  assign run_start = (state_q == S_CFGWAIT) && wait_cfg_z_q;

  logic [CW-1:0] hid_cw;
  assign hid_cw = CW'(hid_q);

  // ------------------------------------------------------------ run state
  logic [CW-1:0] n_q, n_d;            // chain step
  logic [15:0]   b_q, b_d;            // its sequence
  logic [15:0]   t_q, t_d;            // its time step
  logic          fin_q, fin_d;        // BW: the final reductions (dh0)
  logic [CW-1:0] nh_q, nh_d;          // n * H: first unit of step n
  logic [15:0]   j_q, j_d;            // FW element / load column
  logic [17:0]   w_q, w_d;            // BW wave
  logic [17:0]   kw_q, kw_d;          // BW first row of the wave (w * P)
  logic [15:0]   gc_q, gc_d;          // BW chain of the next group
  logic [15:0]   gl_q, gl_d;          // BW grid line (group within a chain)
  logic [2:0]    g_q, g_d;            // FW LSTM state load: h (0) or c (1) word next
  logic [CW-1:0] base_w_q, base_w_d;  // weight address base (row * H)
  logic          in_red_q, in_red_d;  // BW: next token is the step's REDUCE
  logic [31:0]   wait_q, wait_d;      // idle cycles before the next token
  logic          wait_z_q, wait_z_d;  // wait_q == 0, kept beside it: each load of wait
                                      // takes its value's zero flag (wz_*_q below)
  logic [31:0]   since_q, since_d;    // cycles since the last step-closing ELEM
  logic          spc_q, spc_d;        // since_q >= l_res_q, registered beside it
  logic          since_zero;          // since_d = 0 this cycle (else it counts up or saturates)
  // FW holes: the ELEM offsets after a step's last ELEM at which the next
  // step's MACs would meet its final adds (engine_pkg::fw_step_holes), and
  // the final adds' span (fw_sums_clear), registered from the command's rows
  // and sums as they stand (from S_CHECK on; l_res takes the span in
  // S_CFGWAIT). hole_q shifts them past: bit 0 is the offset of this cycle.
  localparam int unsigned HoleBits = engine_pkg::fw_sums_clear(1, 3, La);  // past the widest (S = 8)
  logic [HoleBits-1:0] hole_mask_q, hole_q, hole_d;
  logic [15:0]   clr_q;
  logic [CW-1:0] left_q, left_d;      // state words still to consume
  logic          left_one_q;          // left_q == 1, registered with it
  // The state loader, beside the issue: its own slot and column, so that a
  // FORWARD's ELEMs of slot b start once slot b's words are in while the
  // later slots still load (BW: S_STATE waits for the whole carry).
  logic          ld_q, ld_d;          // words are still expected
  logic [15:0]   ld_b_q, ld_b_d;      // the slot being loaded (B once all are in)
  logic [15:0]   ld_j_q, ld_j_d;      // its column
  logic          ld_jend_q, ld_jend_d;  // ld_j_q == H - 1, registered beside it
  logic          ld_fire;             // a state word is taken this cycle
  // The slots whose words are all in (bit b), and FW: the slot of the next
  // ELEM (b_q) is among them, registered from the bits as this cycle's last
  // word of a slot sets them (a pick by b_q, no compare of the slot
  // numbers). b_q moves at a step's last ELEM, and the next step's first
  // must come two or more cycles later (it comes fw_step_spacing >= 3
  // later), when the flag reads the new slot; the ELEM assertion below
  // would catch an earlier one.
  logic [MaxBatch-1:0] ld_in_q, ld_in_d;
  logic          ld_ok_q;

  // Credits and availability.
  logic [CW-1:0] units_q, units_d;    // units completed by the activation unit
  logic [CrW-1:0] xp_av_q, xp_av_d, dh_av_q, dh_av_d, rec_av_q, rec_av_d;
  logic [CrW-1:0] hout_cr_q, hout_cr_d, dout_cr_q, dout_cr_d, sout_cr_q, sout_cr_d;
  logic [CrW-1:0] store_cr_q, store_cr_d;
  logic [CW-1:0] xp_left_q, xp_left_d, dh_left_q, dh_left_d;
  logic [CW-1:0] xpw_q, xpw_d;        // FW: the Xp beats of the command (T*B*H*G words, or T*B*H units)
  // xp_left / dh_left == 0 and == 1, registered beside them (framing stays shallow).
  logic          xp_z_q, xp_one_q, dh_z_q, dh_one_q;
  logic [CW-1:0] xp_init, dh_init;    // their values when the run starts

  // The stall cause of this cycle, one-hot {gate store, dependency, output, input}.
  logic [3:0] stall;
  logic       state_err;  // a framing error on the state stream this cycle (the loader)
  logic       rec_now_q;  // a FORWARD drained last cycle: it becomes a record now

  // Token output registers (data comes from a buffer read or tok_data_q).
  logic                  tk_valid_q, tk_valid_d;
  logic [1:0]            tk_op_q, tk_op_d;
  logic                  tk_first_q, tk_first_d, tk_last_q, tk_last_d, tk_zero_q, tk_zero_d;
  logic [PeWidth-1:0]    tk_pe_q, tk_pe_d;
  logic [WAddrWidth-1:0] tk_addr_q, tk_addr_d;
  logic [1:0]            tk_src_q, tk_src_d;  // 0 no data (REDUCE), 1 h buffer, 2 delta buffer
  logic [1:0]            tk_lane_q, tk_lane_d;  // RowLanes 1: the row's lane of the buffer word
  logic [RowLanes-1:0]   tk_mask_q, tk_mask_d;

  // ------------------------------------------------------ step conditions
  logic [CrW-1:0] need;     // H in credit width (H <= MaxHidden <= FifoDepth / 2)
  // The lowest slot of `mask` above `after` (after = -1: the lowest), and whether there is one.
  function automatic logic [16:0] first_after(input logic [MaxBatch-1:0] mask, input logic [16:0] after);
    first_after = '0;
    for (int b = MaxBatch - 1; b >= 0; b--) begin
      if (mask[b] && $signed({1'b0, 17'(b)}) > $signed({after[16], after})) first_after = {1'b1, 16'(b)};
    end
  endfunction
  logic [15:0] len_b;                  // length of the current step's sequence
  assign len_b    = len_q[BWidth'(b_q)*16 +: 16];

  // Per-slot dependency: units done since the first unit of the sequence's
  // latest step (units - that unit; pv_we sets it at the step's end). Kept
  // clamped to -DvLow..MaxHidden: every use saturates at H, and the engine
  // never lags further (asserted below), so the compares stay narrow.
  localparam int unsigned DvW = $clog2(FifoDepth) + 4;
  localparam logic signed [DvW-1:0] DV_HIGH = DvW'(MaxHidden);
  // (The minus outside the parentheses: Yosys 0.23 drops a unary minus written
  // directly before a size cast.)
  localparam logic signed [DvW-1:0] DV_LOW  = -(DvW'(4 * FifoDepth));
  logic [MaxBatch*DvW-1:0] dv_q, dv_d;   // per slot, signed
  logic signed [DvW-1:0] dv_cur, dv_new, dv_b;
  // The same in delta rows (dv * G, G = 3 or 4), for the backward groups.
  localparam int unsigned RvW = DvW + 2;
  logic [MaxBatch*RvW-1:0] rv_q, rv_d;
  logic signed [RvW-1:0] rv_cur, rv_new, rv_b, rv_high, rv_g;
  // units - n*H itself, kept in a narrow register that the done and step
  // events update (a 40-bit units + done - n*H was the sequencer's slowest
  // path): it never falls below DV_LOW - MaxHidden (asserted at each step's
  // end, below) and never leads (a step's units follow its last token, where
  // n*H moves on); the width leaves room above both, and an assertion holds
  // it equal to the wide difference.
  localparam int unsigned AhSpan = $clog2((MaxBatch + 2) * MaxHidden + 4 * FifoDepth + 1) + 1;
  localparam int unsigned AhW = (AhSpan > DvW) ? AhSpan : DvW;
  logic signed [AhW-1:0] ahead_q, ahead_d;
  logic signed [AhW-1:0] dv_diff;   // units_d - nh_q
  logic                  pv_we, dv_clear;
  assign dv_cur  = $signed(dv_q[BWidth'(b_q)*DvW +: DvW]);
  assign rv_cur  = $signed(rv_q[BWidth'(b_q)*RvW +: RvW]);
  assign rv_g    = is_gru ? RvW'(3) : RvW'(4);
  assign rv_high = is_gru ? RvW'(3 * MaxHidden) : RvW'(4 * MaxHidden);
  assign rv_new  = is_gru ? (RvW'(dv_new) <<< 1) + RvW'(dv_new) : RvW'(dv_new) <<< 2;
  assign dv_diff = ahead_q + AhW'(unit_done_i);
  always_comb begin
    if (dv_diff > $signed(AhW'(MaxHidden))) dv_new = DV_HIGH;
    else if (dv_diff < $signed(AhW'(DV_LOW))) dv_new = DV_LOW;
    else dv_new = DvW'(dv_diff);
    // nh moves to the next step's first unit where pv_we sets dv.
    if (dv_clear) ahead_d = '0;
    else if (pv_we) ahead_d = dv_diff - $signed(AhW'(hid_q));
    else ahead_d = dv_diff;
    for (int b = 0; b < MaxBatch; b++) begin
      dv_b = $signed(dv_q[b*DvW +: DvW]);
      if (dv_clear) dv_b = '0;
      else if (pv_we && BWidth'(b_q) == BWidth'(b)) dv_b = dv_new;
      else if (unit_done_i && dv_b != DV_HIGH) dv_b = dv_b + 1'b1;
      dv_d[b*DvW +: DvW] = dv_b;
      rv_b = $signed(rv_q[b*RvW +: RvW]);
      if (dv_clear) rv_b = '0;
      else if (pv_we && BWidth'(b_q) == BWidth'(b)) rv_b = rv_new;
      else if (unit_done_i && rv_b != rv_high) rv_b = rv_b + rv_g;
      rv_d[b*RvW +: RvW] = rv_b;
    end
  end
  always_ff @(posedge clk_i) begin
    dv_q    <= dv_d;
    rv_q    <= rv_d;
    ahead_q <= ahead_d;
  end

  // Per slot: t + 1 == its length (the sequence's last FW / first BW step),
  // registered, with the compares for the next t computed beside the step.
  logic [MaxBatch-1:0] tl_q, tl_d, tl_up, tl_load;
  logic [1:0]          t_move;    // 0 t stays, 1 t + 1, 2 t - 1, 3 t loaded (S_STATE)
  // Each length less 2, registered (the lengths stand from S_DIVIDE on), so
  // that tl_up compares t with a register instead of t + 2 on a carry.
  logic [MaxBatch*16-1:0] lm2_q;
  always_ff @(posedge clk_i) begin
    for (int b = 0; b < MaxBatch; b++) lm2_q[b*16 +: 16] <= len_q[b*16 +: 16] - 16'd2;
  end
  for (genvar b = 0; b < MaxBatch; b++) begin : g_tl
    assign tl_up[b]   = (t_q == lm2_q[b*16 +: 16]);
    assign tl_load[b] = is_fw ? (len_q[b*16 +: 16] == 16'd1) : (len_q[b*16 +: 16] == maxlen_q);
  end
  always_ff @(posedge clk_i) tl_q <= tl_d;  // tl_d: below, beside the running slots

  // The slots running at t (slot < B and length > t) and at the next t (FW
  // t + 1, BW t - 1), kept beside t as tl_q is, so that the next sequence
  // (nb_same, nb_next) comes from registers, not from compares of the lengths
  // with t and of the slots with B: FW, a slot stops after its last step
  // (tl_q); BW, a slot joins at t - 1 when its length is t; t loaded, from
  // the lengths (running_slots).
  // The first step's t, running slots and last-step flags (the _load
  // values) are registered in two stages (t, then the slots from it): their
  // inputs (the op, B, the lengths, the longest) stand from S_DIVIDE on, and
  // S_STATE, which reads them, comes four or more cycles later (asserted).
  logic [MaxBatch-1:0] run_q, run_d, run_load, run_load_q, used_q;
  logic [MaxBatch-1:0] tl_load_q;
  logic [15:0]         t_load, t_load_q, unused_count_load;
  assign t_load = is_fw ? '0 : maxlen_q - 1'b1;
  running_slots #(.MaxBatch(MaxBatch)) u_run_load (
    .lengths_i(len_q), .batch_i(bat_q), .t_i(t_load_q), .mask_o(run_load), .count_o(unused_count_load));
  always_ff @(posedge clk_i) begin
    t_load_q   <= t_load;
    run_load_q <= run_load;
    tl_load_q  <= tl_load;
  end
  // t == 0, kept the same way (t < T <= 65535, so t + 1 never wraps to 0).
  logic t0_q, t0_d;
  always_comb begin
    unique case (t_move)
      2'd1:    t0_d = 1'b0;
      2'd2:    t0_d = (t_q == 16'd1);
      2'd3:    t0_d = is_fw || (maxlen_q == 16'd1);
      default: t0_d = t0_q;
    endcase
  end
  always_ff @(posedge clk_i) begin
    run_q <= run_d;
    t0_q  <= t0_d;
    for (int b = 0; b < MaxBatch; b++) used_q[b] <= (32'(b) < 32'(bat_q));  // B is set long before S_RUN
  end

  // The next step's sequence, registered a cycle ahead: {found, slot} of the
  // next running sequence at t (nb_same_q) and of the first at the next t
  // (nb_next_q), and (read by BW only) whether that step is its sequence's
  // first BW step (nb_same_tl_q: t + 1 == its length; nb_next_tl_q: t == its
  // length). They follow from b, t and the slot flags, which change only at
  // a step's end (its last ELEM or its REDUCE) and as S_STATE ends; the next
  // step end comes two or more cycles later (FW: H >= 2 elements, or for
  // H = 1 a spacing of max(R, AddLatency + 2) >= 2; BW: a wave, or H idle
  // cycles, between REDUCEs), so the value computed from the registers of
  // the cycle before is the current one. Outside S_RUN they are computed for
  // the first step (FW slot 0 at t = 0, BW the longest sequence's slot at its
  // last step) from the lengths, latched at acceptance, and the longest,
  // found in S_LENGTHS. The step decisions then pick from registers instead
  // of comparing the lengths and searching the slots.
  logic                in_run;
  logic [15:0]         b_c, t_c;
  logic [MaxBatch-1:0] run_c, tl_c, tdn_c, run_next_c;
  logic [16:0]         nb_same_c, nb_next_c, nb_same_q, nb_next_q;
  logic                nb_same_tl_q, nb_next_tl_q;
  assign in_run = (state_q == S_RUN);
  assign b_c    = in_run ? b_q : (is_fw ? '0 : maxslot_q);
  assign t_c    = in_run ? t_q : t_load_q;
  assign run_c  = in_run ? run_q : run_load_q;
  assign tl_c   = in_run ? tl_q : tl_load_q;
  for (genvar b = 0; b < MaxBatch; b++) begin : g_tdn
    assign tdn_c[b] = (t_c == len_q[b*16 +: 16]);  // BW: the slot runs from t - 1 on
  end
  assign run_next_c = is_fw ? (run_c & ~tl_c) : (run_c | (used_q & tdn_c));
  // t moves only in S_RUN, where the _c values are the registers' own.
  always_comb begin
    unique case (t_move)
      2'd1:    tl_d = tl_up;
      2'd2:    tl_d = tdn_c;
      2'd3:    tl_d = tl_load_q;
      default: tl_d = tl_q;
    endcase
    unique case (t_move)
      2'd1, 2'd2: run_d = run_next_c;
      2'd3:       run_d = run_load_q;
      default:    run_d = run_q;
    endcase
  end
  assign nb_same_c  = first_after(run_c, {1'b0, b_c});
  assign nb_next_c  = first_after(run_next_c, 17'h1ffff);
  always_ff @(posedge clk_i) begin
    nb_same_q    <= nb_same_c;
    nb_next_q    <= nb_next_c;
    nb_same_tl_q <= tl_c[BWidth'(nb_same_c[15:0])];
    nb_next_tl_q <= tdn_c[BWidth'(nb_next_c[15:0])];
  end

  logic fw_last_t, bw_final, bw_zero, last_wave, line_end, wave_end;
  logic [15:0] chains_w;                 // chains this wave reaches
  logic [17:0] grp_pe, grp_klast;        // the group's first PE, its last row
  // Registered with the grid position: the wave is the last (w = R - 1); the
  // group's first row grp_k = kw + grp_pe; the line's first row kw + gl*RowLanes
  // (grid order; row order walks grp_k alone).
  logic        lw_q, lw_d;
  // The line's end (gc == the wave's last chain) and the grid's last line
  // (gl == Lines - 1), registered beside gc and gl: each is picked by the
  // grid's move from compares on the current registers, so the token's
  // wait choice reads two flags instead of comparing gc and gl.
  logic        le_q, le_d, gll_q, gll_d;
  logic [15:0] q_lm2_r;                  // q_last - 2: gc + 1 == q_last - 1 <=> gc == q_last - 2
  logic        q_one_r;                  // q_last == 1: the last wave's line ends at gc = 0
  logic        le_next, gll_pen;
  logic        lw2_q, lw2_d;             // the next wave is the last (w + 2 == R): lw_d's
                                         // candidate at a wave move, so lw_d is a 2:1 pick
  logic [17:0] grp_k_q, grp_k_d, line_k_q, line_k_d;
  logic [1:0]  grid_move;                // 0 stay, 1 next group (grid: next chain; row order:
                                         // + RowLanes), 2 next line, 3 next wave
  logic        grid_clear;               // back to the first wave (REDUCE, set-up)
  logic [RowLanes-1:0] grp_mask;
  logic [31:0]   q_last;                 // chains the last wave reaches (S_DERIVE)
  logic [31:0]   pitch_r, lp_r;          // the command's grid pitch, (Lines - 1) * pitch
  logic [15:0]   red_base_r;             // its reduce gap less the last wave's chains
  logic [31:0]   span_full, span_last;   // a full (S_DERIVE) and the last wave's (S_PRODUCT) token span
  logic [15:0]   red_gap;                // the last wave's start to the REDUCE (S_PRODUCT)
  // The spacing rules' terms, registered in S_PRODUCT for S_CHECK (their
  // inputs stand from S_DERIVE on): the FW sums a row (log2), the reduce
  // gap, the last wave's span and the next wave's skew.
  logic [1:0]    sums_l2_q;
  logic [15:0]   red_gap_q, span_last_q, skew_next_q;
  // The pitch and its one product are registered from H as it stands: H is
  // loaded as the command leaves S_IDLE, pitch_r a cycle later and lp_r two;
  // S_DERIVE comes at least three cycles after H (S_SETUP, S_LENGTHS and
  // S_DIVIDE take one or more each), when both hold the command's values,
  // and red_base_r (from them, a cycle after lp_r) is read in S_PRODUCT.
  // Row order (engine_pkg::bw_row_order) is registered from the batch as it
  // stands, like the pitch: the batch is loaded as the command leaves S_IDLE.
  logic rowo_q;
  always_ff @(posedge clk_i) begin
    pitch_r <= engine_pkg::bw_pitch(32'(hid_q), NumChains, Lines, RowLanes, La);
    lp_r    <= engine_pkg::bw_line_span(pitch_r, Lines);
    red_base_r <= 16'(engine_pkg::bw_reduce_gap_base(32'(hid_q), pitch_r, lp_r, Lines, RowLanes, Lm, La,
                                                      RedAdder != 0));
    rowo_q  <= engine_pkg::bw_row_order(RedAdder != 0, RowLanes, 32'(bat_q));
  end
  // The zero flags of the values wait is loaded with in S_RUN, registered
  // from the spacing registers (set in S_DERIVE and S_CHECK, at least six
  // cycles before S_RUN): a token decision reads wait_z_q instead of
  // comparing 32 bits.
  logic wz_fw_q, wz_fwb_q, wz_line_q, wz_line_last_q, wz_bw_q, wz_red_q, wz_ared_q;
  always_ff @(posedge clk_i) begin
    wz_fw_q        <= (s_fw_q == 16'd1);            // s_fw - 1
    wz_fwb_q       <= (s_fwb_q == 16'd1);           // s_fwb - 1
    wz_line_q      <= (pitch_q == 16'(NumChains));  // pitch - chains, a full wave
    wz_line_last_q <= (pitch_q == q_last_q);        // pitch - chains, the last wave
    wz_bw_q        <= (s_bw_q == 16'd0);
    wz_red_q       <= (s_red_q == 16'd0);
    wz_ared_q      <= (s_ared_q == 16'd1);          // s_ared - 1
  end
  assign q_last = (NumChains == 1) ? 32'd1 :
                  ((((rem_q == 0) ? NumPe : 32'(rem_q)) - 1) >> ChainBits) + 1;
  assign span_full = rowo_q ? engine_pkg::bw_rows_span(NumChains, Lines) : engine_pkg::bw_wave_span(NumChains, lp_r);
  assign span_last = rowo_q ? engine_pkg::bw_rows_span(32'(q_last_q), Lines) :
                              engine_pkg::bw_wave_span(32'(q_last_q), lp_r);
  assign red_gap   = rowo_q ? 16'(engine_pkg::bw_rows_reduce_gap(32'(q_last_q), Lines, Lm, La)) :
                              red_base_r + 16'(q_last_q);  // engine_pkg::bw_reduce_gap
  always_ff @(posedge clk_i) begin
    if (state_q == S_PRODUCT) begin
      sums_l2_q   <= 2'(engine_pkg::fw_sums_log2(32'(rows_q), 32'(hid_q)));
      red_gap_q   <= red_gap;
      span_last_q <= 16'(span_last);
      skew_next_q <= rowo_q ? 16'(engine_pkg::bw_rows_skew_next(32'(gh_q), Lines, RowLanes, La)) :
                              16'(engine_pkg::bw_skew_next(32'(gh_q), pitch_r, lp_r, Lines, RowLanes, La));
    end
  end
  assign need      = CrW'(hid_q);
  assign fw_last_t = tl_q[BWidth'(b_q)];            // the sequence's last step
  assign bw_final  = fin_q;
  assign bw_zero   = !fin_q && tl_q[BWidth'(b_q)];     // the sequence's first BW step
  assign last_wave = lw_q;
  assign chains_w  = last_wave ? q_last_q : 16'(NumChains);
  assign line_end  = le_q;
  assign wave_end  = le_q && gll_q;
  assign grp_pe    = (18'(gc_q) << ChainBits) + (18'(gl_q) << LaneBits);
  // The group's last row, min(grp_k + RowLanes - 1, G*H - 1), and whether it
  // has no row (grp_k >= G*H), registered beside grp_k: each is picked by
  // the grid's move from candidates computed from the current registers, so
  // the backward token decision compares one register with the slot's rows.
  logic [17:0] grp_kl_q, grp_kl_d, kl_clear, kl_next, kl_line, kl_wave;
  logic        grp_none_q, grp_none_d, none_next, none_line, none_wave;
  logic [17:0] k_next, k_line, k_wave;
  // The last row of the group whose first row is k.
  function automatic logic [17:0] last_row(input logic [17:0] k, input logic [17:0] gh);
    last_row = (k + 18'(RowLanes - 1) < gh) ? k + 18'(RowLanes - 1) : gh - 1'b1;
  endfunction
  assign k_next = grp_k_q + (rowo_q ? 18'(RowLanes) : (18'd1 << ChainBits));
  assign k_line = line_k_q + (18'd1 << LaneBits);
  assign k_wave = kw_q + 18'(NumPe);
  assign kl_clear  = last_row('0, gh_q);
  assign kl_next   = last_row(k_next, gh_q);
  assign kl_line   = last_row(k_line, gh_q);
  assign kl_wave   = last_row(k_wave, gh_q);
  assign none_next = (k_next >= gh_q);
  assign none_line = (k_line >= gh_q);
  assign none_wave = (k_wave >= gh_q);
  always_comb begin
    grp_kl_d   = grp_kl_q;
    grp_none_d = grp_none_q;
    if (grid_clear) begin
      grp_kl_d   = kl_clear;
      grp_none_d = (gh_q == 0);
    end else begin
      unique case (grid_move)
        2'd1: begin
          grp_kl_d   = kl_next;
          grp_none_d = none_next;
        end
        2'd2: begin
          grp_kl_d   = kl_line;
          grp_none_d = none_line;
        end
        2'd3: begin
          grp_kl_d   = kl_wave;
          grp_none_d = none_wave;
        end
        default: ;
      endcase
    end
  end
  always_ff @(posedge clk_i) begin
    grp_kl_q   <= grp_kl_d;
    grp_none_q <= grp_none_d;
  end
  assign grp_klast = grp_kl_q;
  always_comb begin
    lw_d     = lw_q;
    lw2_d    = lw2_q;
    grp_k_d  = grp_k_q;
    line_k_d = line_k_q;
    le_d     = le_q;
    gll_d    = gll_q;
    if (grid_clear) begin
      lw_d     = (rows_q == 18'd1);
      lw2_d    = (rows_q == 18'd2);
      grp_k_d  = '0;
      line_k_d = '0;
      le_d     = (rows_q == 18'd1) ? q_one_r : (NumChains == 1);
      gll_d    = (Lines == 1);
    end else begin
      unique case (grid_move)
        2'd1: begin
          grp_k_d = k_next;
          // Grid order: the next chain. Row order: the chain's next group,
          // or after its last line the next chain's first.
          if (!rowo_q || gll_q) le_d = le_next;
          if (rowo_q) gll_d = gll_q ? (Lines == 1) : gll_pen;
        end
        2'd2: begin
          grp_k_d  = k_line;
          line_k_d = k_line;
          le_d     = lw_q ? q_one_r : (NumChains == 1);
          gll_d    = gll_pen;
        end
        2'd3: begin
          lw_d     = lw2_q;
          lw2_d    = (w_q + 18'd3 == rows_q);
          grp_k_d  = k_wave;
          line_k_d = k_wave;
          le_d     = lw2_q ? q_one_r : (NumChains == 1);
          gll_d    = (Lines == 1);
        end
        default: ;
      endcase
    end
  end
  // q_lm1_q is loaded in S_DERIVE, read here from the next cycle on; the
  // first grid_clear comes in S_CFGWAIT, after S_PRODUCT and S_CHECK.
  always_ff @(posedge clk_i) begin
    q_lm2_r <= q_lm1_q - 1'b1;
    q_one_r <= (q_lm1_q == 0);
  end
  // gc + 1 ends the line (grid order, or a row-order chain move); gc = 0
  // ends it (a new line or wave) where that wave reaches one chain; gl + 1
  // is the grid's last line where gl is the last but one.
  assign le_next = (gc_q == (lw_q ? q_lm2_r : 16'(NumChains - 2)));
  assign gll_pen = (32'(gl_q) == Lines - 2);
  always_ff @(posedge clk_i) begin
    le_q  <= le_d;
    gll_q <= gll_d;
  end
  for (genvar l = 0; l < RowLanes; l++) begin : g_mask
    assign grp_mask[l] = (grp_k_q + 18'(l) < gh_q);
  end

  // j == H - 1 and j == 0, registered: j only steps by one or clears, so the
  // flags follow from compares on registers beside the step (j_move).
  logic        j_end_q, j_end_d;
  logic [1:0]  j_move;                  // 0 j stays, 1 j + 1, 2 j cleared
  logic [15:0] hm2_q;                   // H - 2 (j + 1 == H - 1 <=> j == H - 2)
  logic        h_one_q;                 // H == 1 (j = 0 is the last element)
  logic        j_zero_q, j_zero_d;      // j == 0: the step's first element
  always_comb begin
    unique case (j_move)
      2'd1: begin
        j_end_d  = (j_q == hm2_q);
        j_zero_d = 1'b0;
      end
      2'd2: begin
        j_end_d  = h_one_q;
        j_zero_d = 1'b1;
      end
      default: begin
        j_end_d  = j_end_q;
        j_zero_d = j_zero_q;
      end
    endcase
  end
  always_ff @(posedge clk_i) begin
    j_end_q  <= j_end_d;
    j_zero_q <= j_zero_d;
    hm2_q   <= hm1_q - 1'b1;
    h_one_q <= (hm1_q == 0);
  end

  logic fw_in_ok, fw_out_ok, fw_st_ok, fw_dep_ok, fw_spc_ok, fw_ld_ok, fw_hole_ok;
  // A step's Xp is first read after its last ELEM (by the activation unit),
  // so the step's last ELEM, not its first, waits for all of it: the first
  // step's MACs overlap the Xp stream. Its h (and final state) words and
  // its gate-store records come after the last ELEM too, so that ELEM
  // reserves their FIFO room: a step's MACs overlap the previous steps'
  // output words.
  logic j_end;                          // the step's last element (j = H - 1)
  assign j_end     = j_end_q;
  assign fw_in_ok  = !j_end || (xp_av_q >= need);
  assign fw_out_ok = !j_end || ((hout_cr_q >= need) && (!fw_last_t || sout_cr_q >= need));
  assign fw_st_ok  = !j_end || (store_cr_q >= need);
  assign fw_dep_ok = t0_q || (dv_cur > $signed(DvW'(j_q)));
  assign fw_spc_ok = !j_end || spc_q;
  assign fw_hole_ok = !hole_q[0];
  // The first step of a slot (t = 0) reads its initial h from the buffer.
  assign fw_ld_ok  = !t0_q || ld_ok_q;

  logic bw_in_ok, bw_out_ok, bw_st_ok, bw_dep_ok;
  assign bw_in_ok  = !in_red_q || bw_final || (dh_av_q >= need);
  assign bw_out_ok = !in_red_q || (bw_final ? (sout_cr_q >= need) : (dout_cr_q >= need));
  assign bw_st_ok  = !in_red_q || bw_final || (rec_av_q >= need);
  // A group needs the units of its rows (none for an empty group).
  // Each slot's rows compared with the group's last row, then the slot picked.
  logic [MaxBatch-1:0] rv_past;
  for (genvar b = 0; b < MaxBatch; b++) begin : g_rv_past
    assign rv_past[b] = $signed(32'($signed(rv_q[b*RvW +: RvW]))) > $signed(32'(grp_klast));
  end
  assign bw_dep_ok = in_red_q || grp_none_q || rv_past[BWidth'(b_q)];

  // Framing of the buffered streams (their words are counted in xp/dh_left).
  // A framing error is registered and ends the command in the next cycle;
  // the stream closes at once (no word after the bad one is taken).
  logic xp_few, xp_many, dh_few, dh_many;
  logic xp_bad_q, xp_many_q, dh_bad_q, dh_many_q;
  assign xp_few  = running && xp_word_i && xp_last_i && !xp_one_q;
  assign xp_many = running && xp_word_i && !xp_last_i && xp_one_q;
  assign dh_few  = running && dh_word_i && dh_last_i && !dh_one_q;
  assign dh_many = running && dh_word_i && !dh_last_i && dh_one_q;
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      xp_bad_q  <= 1'b0;
      xp_many_q <= 1'b0;
      dh_bad_q  <= 1'b0;
      dh_many_q <= 1'b0;
    end else begin
      xp_bad_q  <= xp_few || xp_many;
      xp_many_q <= xp_many;
      dh_bad_q  <= dh_few || dh_many;
      dh_many_q <= dh_many;
    end
  end
  // The state loader takes a word while no unit is written and no framing
  // error of Xp/dh ends the command (state_ready_o, below).
  assign ld_fire     = ld_q && state_valid_i && !unit_done_i && !(xp_bad_q || dh_bad_q);
  assign xp_init = is_fw ? xpw_q : '0;
  assign dh_init = is_bw ? tbh_q : '0;
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      xp_z_q   <= 1'b1;
      xp_one_q <= 1'b0;
      dh_z_q   <= 1'b1;
      dh_one_q <= 1'b0;
    end else if (run_start) begin
      xp_z_q   <= (xp_init == 0);
      xp_one_q <= (xp_init == 1);
      dh_z_q   <= (dh_init == 0);
      dh_one_q <= (dh_init == 1);
    end else begin
      if (xp_word_i) begin
        xp_z_q   <= xp_one_q;
        xp_one_q <= (xp_left_q == 2);
      end
      if (dh_word_i) begin
        dh_z_q   <= dh_one_q;
        dh_one_q <= (dh_left_q == 2);
      end
    end
  end

  // The stream or port the command waits on now (named by a timeout).
  logic [3:0] waiting_on;
  always_comb begin
    waiting_on = engine_pkg::UNIT_NONE;
    unique case (state_q)
      S_STATE:            waiting_on = engine_pkg::UNIT_STATE_IN;
      S_SKIP:             waiting_on = skip_q;
      S_RUN: begin
        if (is_fw) begin
          if (!fw_ld_ok)       waiting_on = engine_pkg::UNIT_STATE_IN;
          else if (!fw_in_ok)  waiting_on = engine_pkg::UNIT_XP;
          else if (!fw_out_ok) waiting_on = (hout_cr_q < need) ? engine_pkg::UNIT_H
                                                               : engine_pkg::UNIT_STATE_OUT;
          else if (!fw_st_ok)  waiting_on = engine_pkg::UNIT_GATE_STORE;
        end else begin
          if (!bw_in_ok)       waiting_on = engine_pkg::UNIT_DH;
          else if (!bw_st_ok)  waiting_on = engine_pkg::UNIT_GATE_STORE;
          else if (!bw_out_ok) waiting_on = bw_final ? engine_pkg::UNIT_STATE_OUT
                                                     : engine_pkg::UNIT_DELTA;
        end
      end
      S_DRAIN: begin
        if (drain_busy_i[0])      waiting_on = engine_pkg::UNIT_H;
        else if (drain_busy_i[1]) waiting_on = engine_pkg::UNIT_DELTA;
        else if (drain_busy_i[2]) waiting_on = engine_pkg::UNIT_STATE_OUT;
        else if (drain_busy_i[3]) waiting_on = engine_pkg::UNIT_GATE_STORE;
      end
      default: ;
    endcase
  end

  // States in which the command can be ended early (abort, timeout, framing).
  logic can_end, watched;
  assign can_end = (state_q != S_IDLE) && (state_q != S_ABORT) && (state_q != S_DONE);
  assign watched = running || (state_q == S_SKIP);
  logic wd_fire;  // the watchdog's limit is reached
  assign wd_fire = (wd_lim_m1_q != '1) && !wd_clr_q && (wd_prev_q >= wd_lim_m1_q);
  // A cause that ends a running command in this cycle (the state loader
  // adds its framing error, state_err, below).
  logic ends_now;
  assign ends_now = abort_i || xp_bad_q || dh_bad_q || wd_fire;
  // S_DRAIN's exit: every unit came back and the datapath is idle. A FORWARD
  // that leaves S_DRAIN this way, not ended in the same cycle, becomes a
  // record. rec_now_q is set from these registered conditions directly, not
  // from state_d, whose S_RUN logic (step ends, credits) is the sequencer's
  // deepest.
  logic drained, fw_records;
  // Every unit came back (units == uend), registered from the next count:
  // uend is set in S_CHECK, long before S_DRAIN reads the flag.
  logic units_end_q;
  always_ff @(posedge clk_i) units_end_q <= (units_d == uend_q);
  assign drained    = units_end_q && drain_idle_i;
  assign fw_records = (state_q == S_DRAIN) && is_fw && drained && !ends_now;

  // ----------------------------------------------------------------- main
  always_comb begin
    state_d    = state_q;
    op_d       = op_q;
    cell_d     = cell_q;
    hid_d      = hid_q;
    bat_d      = bat_q;
    stp_d      = stp_q;
    base_d     = base_q;
    size_d     = size_q;
    status_d   = status_q;
    unit_d     = unit_q;
    skip_d     = skip_q;
    wd_lim_m1_d = wd_lim_m1_q;
    wd_clr_d   = progress_i || !watched;
    fl_d       = (fl_q != 0) ? fl_q - 1 : fl_q;
    wrap_d     = wrap_q;
    gh_d       = gh_q;
    rem_d      = rem_q;
    quo_d      = quo_q;
    rows_d     = rows_q;
    bh_d       = bh_q;
    tbh_d      = tbh_q;
    tb_d       = tb_q;
    hm1_d      = hm1_q;
    nlast_d    = nlast_q;
    uend_d     = uend_q;
    xpw_d      = xpw_q;
    rh_d       = rh_q;
    bytes_d    = bytes_q;
    big_d      = big_q;
    small_d    = small_q;
    s_fw_d     = s_fw_q;
    s_fwb_d    = s_fwb_q;
    l_res_d    = l_res_q;
    s_bw_d     = s_bw_q;
    q_last_d   = q_last_q;
    q_lm1_d    = q_lm1_q;
    pitch_d    = pitch_q;
    s_red_d    = s_red_q;
    s_ared_d   = s_ared_q;
    wait_cfg_d = wait_cfg_q;
    wait_cfg_z_d = wait_cfg_z_q;
    bank_d     = bank_q;
    // The LOAD seen at acceptance, as long as it runs (a later one came later).
    after_load_d = after_load_q && load_busy_i && (load_bank_i == BankWidth'(bank_q));
    bank_base_d = bank_base_q;
    fr_ok_d    = fr_ok_q;
    fr_key_d   = fr_key_q;
    fr_lo_d    = fr_lo_q;
    fr_hi_d    = fr_hi_q;
    fr_void_d  = 1'b0;
    n_d        = n_q;
    b_d        = b_q;
    t_d        = t_q;
    fin_d      = fin_q;
    nh_d       = nh_q;
    pv_we      = 1'b0;
    len_d      = len_q;
    maxlen_d   = maxlen_q;
    maxslot_d  = maxslot_q;
    len_bad_d  = len_bad_q;
    j_d        = j_q;
    j_move     = 2'd0;
    w_d        = w_q;
    kw_d       = kw_q;
    gc_d       = gc_q;
    gl_d       = gl_q;
    g_d        = g_q;
    ld_d       = ld_q;
    ld_b_d     = ld_b_q;
    ld_j_d     = ld_j_q;
    ld_jend_d  = ld_jend_q;
    ld_in_d    = ld_in_q;
    base_w_d   = base_w_q;
    in_red_d   = in_red_q;
    wait_d     = (wait_q != 0) ? wait_q - 1 : 0;
    wait_z_d   = (wait_q[31:1] == '0);
    since_d    = (since_q != 32'hffff_ffff) ? since_q + 1 : since_q;
    since_zero = 1'b0;
    left_d     = left_q;
    units_d    = units_q + CW'(unit_done_i);
    xp_av_d    = xp_av_q + CrW'(xp_unit_i);
    dh_av_d    = dh_av_q + CrW'(dh_word_i);
    rec_av_d   = rec_av_q + CrW'(rec_push_i);
    stall      = '0;
    state_err  = 1'b0;
    t_move     = 2'd0;
    grid_move  = 2'd0;
    grid_clear = 1'b0;
    dv_clear   = 1'b0;
    hout_cr_d  = hout_cr_q + CrW'(hout_pop_i);
    dout_cr_d  = dout_cr_q + CrW'(dout_pop_i);
    sout_cr_d  = sout_cr_q + CrW'(sout_pop_i);
    store_cr_d = store_cr_q + CrW'(store_pop_i);
    xp_left_d  = xp_left_q - CW'(xp_word_i);
    dh_left_d  = dh_left_q - CW'(dh_word_i);
    tk_valid_d = 1'b0;
    tk_op_d    = tk_op_q;
    tk_first_d = 1'b0;
    tk_last_d  = 1'b0;
    tk_zero_d  = 1'b0;
    tk_pe_d    = tk_pe_q;
    tk_addr_d  = tk_addr_q;
    tk_src_d   = 2'd0;
    tk_lane_d  = tk_lane_q;
    tk_mask_d  = tk_mask_q;

    cmd_ready_o     = 1'b0;
    done_o          = 1'b0;
    start_o         = 1'b0;
    state_ready_o   = 1'b0;
    load_hbuf_we_o  = 1'b0;
    load_state_we_o = 1'b0;
    hbuf_re_o       = 1'b0;
    dbuf_re_o       = 1'b0;
    desc_valid_o    = 1'b0;
    desc_batch_o    = BWidth'(b_q);
    desc_flag_o     = 1'b0;
    flush_o         = (state_q == S_ABORT);
    xp_skip_o       = (state_q == S_SKIP) && (skip_q == engine_pkg::UNIT_XP);
    dh_skip_o       = (state_q == S_SKIP) && (skip_q == engine_pkg::UNIT_DH);

    unique case (state_q)
      S_IDLE: begin
        cmd_ready_o = 1'b1;
        if (cmd_valid_i) begin
          op_d     = cmd_op_i;
          cell_d   = cfg_cell_i;
          hid_d    = cfg_hidden_i;
          bat_d    = cfg_batch_i;
          stp_d    = cfg_steps_i;
          bank_d   = cfg_bank_i;
          len_d    = cfg_lengths_i;
          after_load_d = load_busy_i && (load_bank_i == BankWidth'(cfg_bank_i));
          for (int b = 0; b < MaxBatch; b++) begin  // slots beyond the batch: 0
            if (b >= 32'(cfg_batch_i)) len_d[b*16 +: 16] = '0;
          end
          base_d   = cfg_store_base_i;
          size_d   = cfg_store_size_i;
          wd_lim_m1_d = cfg_watchdog_i - 1;
          unit_d   = engine_pkg::UNIT_NONE;
          skip_d   = engine_pkg::UNIT_NONE;
          wd_clr_d = 1'b1;
          state_d  = S_SETUP;
        end
      end

      // Checks that bound the derivation below, then G*H for the division.
      S_SETUP: begin
        gh_d  = engine_pkg::gate_rows_of(is_gru, hid_q);
        hm1_d = hid_q - 1'b1;
        rem_d = gh_d;
        quo_d = '0;
        bank_base_d = WAddrWidth'(32'(bank_q) * WeightDepth);
        wrap_d = ({1'b0, base_q} + {1'b0, size_q}) > {1'b1, MemAddrWidth'(0)};
        b_d       = '0;
        tb_d      = '0;
        maxlen_d  = '0;
        maxslot_d = '0;
        len_bad_d = 1'b0;
        state_d = S_LENGTHS;
        if (!is_fw && !is_bw) begin  // LOAD belongs to the loader's port
          status_d = engine_pkg::ERR_BAD_COMMAND;
          state_d  = S_DONE;
        end else if (engine_pkg::layer_error(bank_q, NumBanks, cell_q, hid_q, MaxHidden) !=
                     engine_pkg::ERR_NONE) begin
          status_d = engine_pkg::layer_error(bank_q, NumBanks, cell_q, hid_q, MaxHidden);
          state_d  = S_DONE;
        end
      end

      // One slot a cycle: each length within 1..T, their sum, the longest.
      S_LENGTHS: begin
        if (bat_q != 0 && 32'(bat_q) <= MaxBatch) begin
          if (len_b == 0 || len_b > stp_q) len_bad_d = 1'b1;
          tb_d = tb_q + CW'(len_b);
          if (len_b > maxlen_q) begin
            maxlen_d  = len_b;
            maxslot_d = b_q;
          end
        end
        b_d = b_q + 1'b1;
        // b < B <= MaxBatch here, so B - 1 in BWidth bits names the last slot
        // (a 16-bit b + 1 == B was a carry chain and a ripple compare).
        if (bat_q == 0 || 32'(bat_q) > MaxBatch || BWidth'(b_q) == BWidth'(bat_q - 16'd1)) state_d = S_DIVIDE;
      end

      S_DIVIDE: begin
        if (32'(rem_q) >= NumPe) begin
          rem_d = rem_q - 18'(NumPe);
          quo_d = quo_q + 18'd1;
        end else begin
          // R leaves the division registered, so that R*H (S_DERIVE) starts
          // its multiply from a register, not behind the remainder's compare.
          rows_d  = quo_q + 18'(rem_q != 0);
          state_d = S_DERIVE;
        end
      end

      S_DERIVE: begin
        rh_d     = CW'(rows_q) * hid_cw;
        bh_d     = CW'(bat_q) * hid_cw;
        tbh_d    = tb_q * hid_cw;
        bytes_d  = (CW + 6)'(tb_q * hid_cw) << 5;
        pitch_d  = 16'(pitch_r);
        s_bw_d   = 16'(engine_pkg::bw_wave_spacing(32'(hid_q), span_full, La) - span_full);
        q_last_d = 16'(q_last);
        q_lm1_d  = 16'(q_last - 1);
        state_d  = S_PRODUCT;
      end

      // The products (S_DERIVE) are compared here; S_CHECK reads the results.
      // The spacing rules (engine_pkg, "The sequencer's spacing rules") take
      // two cycles: here their terms from R (registered as the division
      // ended) and the last wave's chains as S_DERIVE registered them (the
      // sums a row, the reduce gap, the last wave's span, the next wave's
      // skew), in S_CHECK the rules from those.
      // The division's remainder, R's add, the terms and the rules' compares
      // would otherwise be one path of carry chains in series.
      S_PRODUCT: begin
        big_d    = rh_q > CW'(WeightDepth);
        small_d  = bytes_q > (CW + 6)'(size_q);
        nlast_d  = is_fw ? tb_q - 1'b1 : tb_q + CW'(bat_q) - 1'b1;
        state_d  = S_CHECK;
      end

      // The spacing rules are loaded here, read from S_RUN on: S_CFGWAIT
      // lasts cfg_settle_cycles + 1 >= 6 cycles, and the zero flags (wz_*)
      // follow a cycle after the rules.
      S_CHECK: begin
        s_fw_d     = 16'(engine_pkg::fw_elem_spacing_sums(32'(rows_q), 32'(sums_l2_q), La));
        s_fwb_d    = 16'(engine_pkg::fw_step_spacing_sums(32'(rows_q), 32'(sums_l2_q), La));
        l_res_d    = engine_pkg::fw_result_gap_sums(ResLanes > 1 ? 32'(hid_q) : 32'(gh_q), 32'(sums_l2_q), Lm, La);
        s_red_d    = red_gap_q - span_last_q;
        s_ared_d   = 16'(engine_pkg::bw_after_reduce_skew(32'(hid_q), 32'(skew_next_q), Lm, La, 32'(red_gap_q),
                                                          RedAdder != 0));
        wait_cfg_d = 16'(engine_pkg::cfg_settle_cycles(NumPe, NumChains));
        wait_cfg_z_d = (wait_cfg_d == 0);
        uend_d     = is_bw ? tbh_q + bh_q : tbh_q;
        xpw_d      = (XpWords > 1) ? tbh_q : (is_gru ? (tbh_q << 1) + tbh_q : tbh_q << 2);
        state_d    = S_CFGWAIT;
        if (big_q) begin
          status_d = engine_pkg::ERR_HIDDEN_TOO_LARGE;
          state_d  = S_DONE;
        end else if (bat_q == 0) begin
          status_d = engine_pkg::ERR_BATCH_ZERO;
          state_d  = S_DONE;
        end else if (32'(bat_q) > MaxBatch) begin
          status_d = engine_pkg::ERR_BATCH_TOO_LARGE;
          state_d  = S_DONE;
        end else if (stp_q == 0) begin
          status_d = engine_pkg::ERR_STEPS_ZERO;
          state_d  = S_DONE;
        end else if (len_bad_q) begin
          status_d = engine_pkg::ERR_BAD_LENGTH;
          state_d  = S_DONE;
        end else if (base_q[4:0] != 5'd0) begin
          status_d = engine_pkg::ERR_STORE_MISALIGNED;
          state_d  = S_DONE;
        end else if (wrap_q) begin
          status_d = engine_pkg::ERR_STORE_WRAP;
          state_d  = S_DONE;
        end else if (small_q) begin
          status_d = engine_pkg::ERR_STORE_TOO_SMALL;
          state_d  = S_DONE;
        end else if (after_load_q && load_busy_i) begin  // first come, first served
          status_d = engine_pkg::ERR_BANK_BUSY;
          state_d  = S_DONE;
        end else if (!weights_ok_q) begin
          status_d = engine_pkg::ERR_NO_WEIGHTS;
          state_d  = S_DONE;
        end else if (is_bw && !fr_match_q) begin
          status_d = engine_pkg::ERR_NO_FORWARD;
          state_d  = S_DONE;
        end else begin
          status_d  = engine_pkg::ERR_NONE;
          fr_void_d = is_fw;  // it overwrites the records of every forward whose window it overlaps
        end
      end

      // Let the configuration reach every PE; set up the run.
      S_CFGWAIT: begin
        wait_cfg_d   = wait_cfg_q - 1'b1;
        if (l_res_q < 32'(clr_q)) l_res_d = 32'(clr_q);
        wait_cfg_z_d = (wait_cfg_q == 16'd1);
        if (wait_cfg_z_q) begin
          start_o    = 1'b1;
          n_d        = '0;
          b_d        = '0;
          j_d        = '0;
          j_move     = 2'd2;
          nh_d       = '0;
          fin_d      = 1'b0;
          w_d        = '0;
          kw_d       = '0;
          gc_d       = '0;
          gl_d       = '0;
          g_d        = '0;
          base_w_d   = '0;
          grid_clear = 1'b1;
          in_red_d   = 1'b1;
          wait_d     = '0;
          wait_z_d   = 1'b1;
          since_d    = 32'hffff_ffff;
          units_d    = '0;
          dv_clear   = 1'b1;
          xp_av_d    = '0;
          dh_av_d    = '0;
          rec_av_d   = '0;
          hout_cr_d  = FIFO_CREDITS;
          dout_cr_d  = FIFO_CREDITS;
          sout_cr_d  = FIFO_CREDITS;
          store_cr_d = FIFO_CREDITS;
          xp_left_d  = xp_init;
          dh_left_d  = dh_init;
          left_d    = (is_fw && is_lstm) ? bh_q << 1 : bh_q;
          ld_d      = 1'b1;
          ld_b_d    = '0;
          ld_j_d    = '0;
          ld_jend_d = h_one_q;
          ld_in_d   = '0;
          state_d   = S_STATE;
        end
      end

      // Initial state (the loader below takes its words): FW (h, c) pairs
      // (LSTM) or h (GRU), whose slots the ELEMs follow from S_RUN on; BW the
      // carry, all of it before the first token.
      S_STATE: begin
        if (is_fw || (ld_fire && left_one_q)) begin
          b_d     = is_fw ? '0 : maxslot_q;                 // FW: t = 0, every slot runs
          t_d     = t_load_q;                               // BW: from the longest sequence's end
          t_move  = 2'd3;
          j_d     = '0;
          j_move  = 2'd2;
          state_d = S_RUN;
        end else if (!ld_fire) begin
          stall = 4'b0001;
        end
      end

      S_RUN: begin
        if (is_fw) begin
          if (wait_z_q) begin
            if (fw_dep_ok && fw_ld_ok && fw_in_ok && fw_out_ok && fw_st_ok && fw_spc_ok && fw_hole_ok) begin
              hbuf_re_o  = 1'b1;
              tk_valid_d = 1'b1;
              tk_op_d    = engine_pkg::TOK_ELEM;
              tk_first_d = j_zero_q;
              tk_last_d  = j_end;
              tk_addr_d  = WAddrWidth'(j_q) + bank_base_q;
              tk_src_d   = 2'd1;
              wait_d     = tk_last_d ? 32'(s_fwb_q) - 1 : 32'(s_fw_q) - 1;
              wait_z_d   = tk_last_d ? wz_fwb_q : wz_fw_q;
              if (j_zero_q) begin
                desc_valid_o = 1'b1;
                desc_flag_o  = fw_last_t;
              end
              j_d    = j_q + 1;
              j_move = 2'd1;
              if (j_end) begin
                hout_cr_d  = hout_cr_d - need;
                store_cr_d = store_cr_d - need;
                if (fw_last_t) sout_cr_d = sout_cr_d - need;
                xp_av_d = xp_av_d - need;
                since_d = '0;
                since_zero = 1'b1;
                j_d     = '0;
                j_move  = 2'd2;
                n_d     = n_q + 1;
                nh_d    = nh_q + hid_cw;
                pv_we   = 1'b1;
                // The next running sequence at t, or the first at t + 1.
                if (nb_same_q[16]) begin
                  b_d = nb_same_q[15:0];
                end else begin
                  b_d = nb_next_q[15:0];
                  t_d = t_q + 1'b1;
                  t_move = 2'd1;
                end
                if (n_q == nlast_q) state_d = S_DRAIN;
              end
            end else if (!fw_dep_ok) begin
              stall = 4'b0100;
            end else if (!fw_ld_ok || !fw_in_ok) begin
              stall = 4'b0001;
            end else if (!fw_out_ok) begin
              stall = 4'b0010;
            end else if (!fw_st_ok) begin
              stall = 4'b1000;
            end
          end
        end else begin
          // Two decisions: a ROW token waits on its rows' units alone and a
          // REDUCE on its streams and output room alone (each of the other
          // conditions holds in its case), so that the REDUCE's fan-out
          // (grid_clear, the wave registers) does not follow the rows' compare.
          if (wait_z_q) begin
            if (!in_red_q) begin
              if (bw_dep_ok) begin
                tk_valid_d = 1'b1;
                // ROW token: rows k = w*P + p .. + RowLanes-1 for PEs p.. of
                // group gl of chain gc (p = gc*ChainLen + gl*RowLanes).
                dbuf_re_o  = 1'b1;
                tk_op_d    = engine_pkg::TOK_ROW;
                tk_pe_d    = PeWidth'(grp_pe);
                tk_mask_d  = grp_mask;
                tk_addr_d  = WAddrWidth'(base_w_q) + bank_base_q;
                tk_first_d = (w_q == 0);
                tk_src_d   = 2'd2;
                tk_lane_d  = grp_k_q[1:0];
                gc_d       = gc_q + 1'b1;
                grid_move  = 2'd1;
                if (rowo_q) begin  // row order: the groups of a chain, then the next chain
                  gc_d = gc_q;
                  gl_d = gl_q + 1'b1;
                  if (gll_q) begin
                    gc_d = gc_q + 1'b1;
                    gl_d = '0;
                  end
                end else if (line_end) begin
                  gc_d   = '0;
                  gl_d   = gl_q + 1'b1;
                  grid_move = 2'd2;
                  wait_d = 32'(pitch_q) - 32'(chains_w);
                  wait_z_d = last_wave ? wz_line_last_q : wz_line_q;
                end
                if (wave_end) begin
                  gc_d     = '0;
                  gl_d     = '0;
                  w_d      = w_q + 1;
                  grid_move = 2'd3;
                  kw_d     = kw_q + 18'(NumPe);
                  base_w_d = base_w_q + hid_cw;
                  wait_d   = last_wave ? 32'(s_red_q) : 32'(s_bw_q);
                  wait_z_d = last_wave ? wz_red_q : wz_bw_q;
                  in_red_d = last_wave;
                end
              end else begin
                stall = 4'b0100;
              end
            end else if (bw_in_ok && bw_out_ok && bw_st_ok) begin
              tk_valid_d   = 1'b1;
              tk_op_d      = engine_pkg::TOK_REDUCE;
              tk_zero_d    = bw_zero;
              desc_valid_o = 1'b1;
              desc_flag_o  = bw_final;
              if (bw_final) begin
                sout_cr_d = sout_cr_d - need;
              end else begin
                dh_av_d   = dh_av_d - need;
                rec_av_d  = rec_av_d - need;
                dout_cr_d = dout_cr_d - need;
              end
              n_d      = n_q + 1;
              nh_d     = nh_q + hid_cw;
              pv_we    = 1'b1;
              w_d      = '0;
              kw_d     = '0;
              gc_d     = '0;
              gl_d     = '0;
              base_w_d = '0;
              grid_clear = 1'b1;
              // The next step: the next running sequence at t, else the
              // first at t - 1, else (after t = 0) the final reductions.
              if (fin_q) begin
                b_d = b_q + 1'b1;
              end else if (nb_same_q[16]) begin
                b_d = nb_same_q[15:0];
              end else if (!t0_q) begin
                b_d = nb_next_q[15:0];
                t_d = t_q - 1'b1;
                t_move = 2'd2;
              end else begin
                b_d   = '0;
                fin_d = 1'b1;
              end
              // A sequence's first BW step reduces zeros: no waves.
              in_red_d = !fin_d && (nb_same_q[16] ? nb_same_tl_q : nb_next_tl_q);
              wait_d   = in_red_d ? 32'(hid_q) : 32'(s_ared_q) - 1;
              // H >= 1 here (layer_error refuses H = 0), so a REDUCE
              // load is never zero.
              wait_z_d = !in_red_d && wz_ared_q;
              if (n_q == nlast_q) state_d = S_DRAIN;
            end else if (!bw_in_ok) begin
              stall = 4'b0001;
            end else if (!bw_out_ok) begin
              stall = 4'b0010;
            end else if (!bw_st_ok) begin
              stall = 4'b1000;
            end
          end
        end
      end

      // Wait for the activation unit, the output streams and the gate store.
      S_DRAIN: begin
        if (drained) begin
          state_d = S_DONE;
        end else if (units_end_q) begin
          stall = 4'b0010;
        end
      end

      // The datapath is held in reset; then drop a stream's surplus, or finish.
      S_ABORT: begin
        // A surplus word on Xp/dh in the cycle another cause (not an abort)
        // ended the command: its surplus is dropped too.
        if ((xp_many_q || dh_many_q) && skip_q == engine_pkg::UNIT_NONE &&
            status_q != engine_pkg::ERR_ABORTED) begin
          skip_d = xp_many_q ? engine_pkg::UNIT_XP : engine_pkg::UNIT_DH;
        end
        if (abort_i) skip_d = engine_pkg::UNIT_NONE;  // an abort also cancels the surplus drop
        if (fl_q == 0) state_d = (skip_q != engine_pkg::UNIT_NONE && !abort_i) ? S_SKIP : S_DONE;
      end

      // Drop the surplus words of one stream up to and including its `last`.
      S_SKIP: begin
        if (skip_q == engine_pkg::UNIT_STATE_IN) begin
          state_ready_o = 1'b1;
          if (state_valid_i && state_last_i) state_d = S_DONE;
        end else if (skip_q == engine_pkg::UNIT_XP) begin
          if (xp_valid_i && xp_last_i) state_d = S_DONE;
        end else if (skip_q == engine_pkg::UNIT_DH) begin
          if (dh_valid_i && dh_last_i) state_d = S_DONE;
        end else begin
          state_d = S_DONE;
        end
      end

      S_DONE: begin
        done_o  = 1'b1;
        state_d = S_IDLE;
      end

      default: state_d = S_IDLE;
    endcase

    // The state loader. It takes a word in any cycle in which the activation
    // unit writes no unit (its writes win the h buffer's and the state RAM's
    // one write port) and no framing error of Xp/dh is ending the command.
    // LSTM FW words come in (h, c) pairs, h to the buffer, c to the state RAM.
    if (ld_q) state_ready_o = !unit_done_i && !(xp_bad_q || dh_bad_q);  // ld_fire's terms
    if (ld_fire) begin
      left_d = left_q - 1;
      if (is_fw && is_lstm) begin
        load_hbuf_we_o  = !g_q[0];
        load_state_we_o = g_q[0];
        g_d = {2'b00, !g_q[0]};
      end else begin
        load_hbuf_we_o  = is_fw;
        load_state_we_o = 1'b1;
      end
      if (!(is_fw && is_lstm) || g_q[0]) begin  // the unit's last word: next column
        ld_j_d    = ld_j_q + 1'b1;
        ld_jend_d = (ld_j_q == hm2_q);
        if (ld_jend_q) begin                    // the slot's last column
          ld_j_d    = '0;
          ld_jend_d = h_one_q;
          ld_b_d    = ld_b_q + 1'b1;
          ld_in_d[BWidth'(ld_b_q)] = 1'b1;
        end
      end
      if (left_one_q) ld_d = 1'b0;
      if (left_one_q != state_last_i) begin
        state_err = 1'b1;
        ld_d      = 1'b0;
        status_d  = left_one_q ? engine_pkg::ERR_TOO_MANY_WORDS : engine_pkg::ERR_TOO_FEW_WORDS;
        unit_d    = engine_pkg::UNIT_STATE_IN;
        skip_d    = left_one_q ? engine_pkg::UNIT_STATE_IN : engine_pkg::UNIT_NONE;
        state_d   = S_ABORT;
      end
    end

    // Ending a command early: abort_i, a framing error, or the watchdog. The
    // first cause wins (a registered framing error is a cycle old); a skip in
    // progress just stops.
    if (can_end) begin
      if (state_q == S_SKIP) begin
        if (abort_i) begin
          state_d = S_DONE;
        end else if (wd_fire) begin
          status_d = engine_pkg::ERR_TIMEOUT;
          state_d  = S_DONE;
        end
      end else if (xp_bad_q || dh_bad_q) begin
        // A framing error of the previous cycle came first; an abort now
        // cancels its surplus drop, as it does during the flush.
        status_d = (xp_many_q || dh_many_q) ? engine_pkg::ERR_TOO_MANY_WORDS
                                            : engine_pkg::ERR_TOO_FEW_WORDS;
        unit_d   = xp_bad_q ? engine_pkg::UNIT_XP : engine_pkg::UNIT_DH;
        skip_d   = abort_i   ? engine_pkg::UNIT_NONE :
                   xp_many_q ? engine_pkg::UNIT_XP :
                   dh_many_q ? engine_pkg::UNIT_DH : engine_pkg::UNIT_NONE;
        state_d  = S_ABORT;
      end else if (abort_i) begin
        status_d = engine_pkg::ERR_ABORTED;
        unit_d   = engine_pkg::UNIT_NONE;
        skip_d   = engine_pkg::UNIT_NONE;
        state_d  = S_ABORT;
      end else if (state_err) begin
        // a framing error on the state stream, set by the loader above
      end else if (wd_fire) begin
        status_d = engine_pkg::ERR_TIMEOUT;
        unit_d   = waiting_on;
        skip_d   = engine_pkg::UNIT_NONE;
        state_d  = S_ABORT;
      end
      if (state_q != S_SKIP && (ends_now || state_err)) begin
        fl_d = 8'(FlushCycles - 1);  // the command ends now (S_ABORT next)
        ld_d = 1'b0;
      end
    end

    // A FORWARD that drained (not aborted in the same cycle) becomes a record.
    // A later LOAD of its bank does not void it: the weights a BACKWARD uses
    // are the bank's at that time (the driver reloads the same ones).
    if (fr_void_q) fr_ok_d = fr_ok_q & ~fr_over;
    // (It is written in the S_DONE cycle that follows, before any command reads it.)
    if (rec_now_q) begin
      for (int i = 0; i < FR; i++) begin
        if (fr_shift[i]) begin
          fr_ok_d[i] = 1'b1;
          if (i == 0) begin
            fr_key_d[0 +: KW]           = fr_key;
            fr_lo_d[0 +: MemAddrWidth]  = base_q;
            fr_hi_d[0 +: MemAddrWidth]  = fr_end_q;
          end else begin
            fr_key_d[i*KW +: KW]                    = fr_key_q[(i-1)*KW +: KW];
            fr_lo_d[i*MemAddrWidth +: MemAddrWidth] = fr_lo_q[(i-1)*MemAddrWidth +: MemAddrWidth];
            fr_hi_d[i*MemAddrWidth +: MemAddrWidth] = fr_hi_q[(i-1)*MemAddrWidth +: MemAddrWidth];
          end
        end
      end
    end

  end

  // The FW holes: loaded at a step's last ELEM (since_zero) with the offsets
  // from the next cycle on, shifted a place a cycle, cleared at run start.
  always_comb begin
    hole_d = hole_q >> 1;
    if (since_zero) hole_d = hole_mask_q >> 1;
    else if (run_start) hole_d = '0;
  end
  always_ff @(posedge clk_i) begin
    hole_mask_q <= HoleBits'(engine_pkg::fw_step_holes(32'(rows_q), sums_l2_q, La));
    clr_q       <= 16'(engine_pkg::fw_sums_clear(32'(rows_q), 32'(sums_l2_q), La));
    hole_q      <= hole_d;
  end

  // since_d >= l_res_q without waiting for since_d: set to 0 (a step's last
  // ELEM), to the maximum (run start: then 1), or since_q + 1 (saturating).
  always_comb begin
    if (since_zero) spc_d = (l_res_q == 0);
    else if (run_start) spc_d = 1'b1;
    else spc_d = ({1'b0, since_q} + 33'd1 >= {1'b0, l_res_q});
  end

  // Backward record prefetch (owns the record FIFO's credits).
  store_prefetch #(
    .MaxBatch    (MaxBatch),
    .MemAddrWidth(MemAddrWidth),
    .FifoDepth   (FifoDepth)
  ) u_prefetch (
    .clk_i,
    .rst_i,
    .start_i    (run_start),
    .enable_i   (running && is_bw),
    .base_i     (base_q),
    .records_i  (is_bw ? tbh_q : '0),
    .hidden_i   (hid_q),
    .batch_i    (bat_q),
    .lengths_i  (len_q),
    .maxlen_i   (maxlen_q),
    .rec_pop_i,
    .req_valid_o(rd_req_valid_o),
    .req_ready_i(rd_req_ready_i),
    .req_addr_o (rd_req_addr_o)
  );

  logic stall_pending;  // read by an assertion only (the counters are complete at done)
  run_counters #(.CountWidth(CountWidth)) u_counters (
    .clk_i,
    .rst_i,
    .clear_i       (state_q == S_IDLE && cmd_valid_i),
    .active_i      (state_q != S_IDLE),
    .macs_i        (mac_count_i),
    .stall_i       (stall),
    .nonfinite_i,
    .cycles_o      (cnt_cycles_o),
    .macs_o        (cnt_macs_o),
    .stall_input_o (cnt_stall_input_o),
    .stall_output_o(cnt_stall_output_o),
    .stall_dep_o   (cnt_stall_dep_o),
    .stall_store_o (cnt_stall_store_o),
    .nonfinite_o   (cnt_nonfinite_o),
    .stall_pending_o(stall_pending)
  );

  // Loading writes: {b, j} addresses, h buffer / state RAM / bias.
  assign load_addr_o = {BWidth'(ld_b_q), JWidth'(ld_j_q)};
  assign load_data_o = state_data_i;

  // Buffer reads for the token issued this cycle.
  assign hbuf_raddr_o = {BWidth'(b_q), JWidth'(j_q)};
  // The delta buffer holds rows k in lane k mod 4 of word k / 4 (engine.sv).
  assign dbuf_raddr_o = {BWidth'(b_q), JWidth'(grp_k_q >> 2)};

  assign xp_open_o = running && is_fw && !xp_z_q && !xp_bad_q;
  assign dh_open_o = running && is_bw && !dh_z_q && !dh_bad_q;

  assign weights_ok = bank_valid_i[BankWidth'(bank_q)] &&
                      bank_cell_i[BankWidth'(bank_q)*2 +: 2] == cell_q &&
                      bank_hidden_i[BankWidth'(bank_q)*16 +: 16] == hid_q;
  always_ff @(posedge clk_i) weights_ok_q <= weights_ok;

  // ----------------------------------------------------------- forward records
  assign fr_key = {cell_q, hid_q, bat_q, stp_q, base_q, bank_q, len_q};
  // Entry i moves (entry 0: is written) when every entry before it is in use.
  assign fr_shift[0] = 1'b1;
  for (genvar i = 1; i < FR; i++) begin : g_fr_shift
    assign fr_shift[i] = &fr_ok_q[i-1:0];
  end
  // The key is compared in two registered stages: the parts of each record
  // (fr_part_q), then the records. The key is the accepted command's from
  // S_SETUP on and no record changes before its S_CHECK (a record is written
  // in a FORWARD's S_DONE, a void acts after S_CHECK), so S_CHECK, at least
  // four cycles after S_SETUP, reads the match of its key (asserted).
  for (genvar i = 0; i < FR; i++) begin : g_fr_part
    logic [FR_PARTS*FR_PW-1:0] diff;
    assign diff = (FR_PARTS * FR_PW)'(fr_key_q[i*KW +: KW] ^ fr_key);
    for (genvar p = 0; p < FR_PARTS; p++) begin : g_part
      always_ff @(posedge clk_i) fr_part_q[i*FR_PARTS+p] <= (diff[p*FR_PW +: FR_PW] == '0);
    end
  end
  always_comb begin
    fr_match = 1'b0;
    for (int i = FR - 1; i >= 0; i--) begin
      if (fr_ok_q[i] && &fr_part_q[i*FR_PARTS +: FR_PARTS]) fr_match = 1'b1;
      fr_over[i] = base_q < fr_hi_q[i*MemAddrWidth +: MemAddrWidth] &&
                   fr_lo_q[i*MemAddrWidth +: MemAddrWidth] < fr_end_q;
    end
  end

  // ----------------------------------------------------------- registers
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      state_q    <= S_IDLE;
      status_q   <= engine_pkg::ERR_NONE;
      unit_q     <= engine_pkg::UNIT_NONE;
      skip_q     <= engine_pkg::UNIT_NONE;
      wd_clr_q   <= 1'b1;
      fl_q       <= '0;
      fr_ok_q    <= '0;
      fr_void_q  <= 1'b0;
      rec_now_q  <= 1'b0;
      tk_valid_q <= 1'b0;
      op_q       <= engine_pkg::CMD_FORWARD;
      cell_q     <= engine_pkg::CELL_LSTM;
      xp_left_q  <= '0;
      dh_left_q  <= '0;
      ld_q       <= 1'b0;
    end else begin
      state_q    <= state_d;
      status_q   <= status_d;
      unit_q     <= unit_d;
      skip_q     <= skip_d;
      wd_clr_q   <= wd_clr_d;
      fl_q       <= fl_d;
      fr_ok_q    <= fr_ok_d;
      fr_void_q  <= fr_void_d;
      rec_now_q  <= fw_records;
      tk_valid_q <= tk_valid_d;
      op_q       <= op_d;
      cell_q     <= cell_d;
      xp_left_q  <= xp_left_d;
      dh_left_q  <= dh_left_d;
      ld_q       <= ld_d;
    end
  end

  always_ff @(posedge clk_i) begin
    hid_q      <= hid_d;
    bat_q      <= bat_d;
    stp_q      <= stp_d;
    base_q     <= base_d;
    size_q     <= size_d;
    wd_lim_m1_q <= wd_lim_m1_d;
    wd_prev_q  <= wd_clr_q ? '0 : wd_prev_q + 1;
    wrap_q     <= wrap_d;
    gh_q       <= gh_d;
    rem_q      <= rem_d;
    quo_q      <= quo_d;
    rows_q     <= rows_d;
    bh_q       <= bh_d;
    tbh_q      <= tbh_d;
    tb_q       <= tb_d;
    hm1_q      <= hm1_d;
    nlast_q    <= nlast_d;
    uend_q     <= uend_d;
    xpw_q      <= xpw_d;
    rh_q       <= rh_d;
    bytes_q    <= bytes_d;
    big_q      <= big_d;
    small_q    <= small_d;
    s_fw_q     <= s_fw_d;
    s_fwb_q    <= s_fwb_d;
    l_res_q    <= l_res_d;
    s_bw_q     <= s_bw_d;
    q_last_q   <= q_last_d;
    q_lm1_q    <= q_lm1_d;
    pitch_q    <= pitch_d;
    s_red_q    <= s_red_d;
    s_ared_q   <= s_ared_d;
    wait_cfg_q <= wait_cfg_d;
    wait_cfg_z_q <= wait_cfg_z_d;
    bank_q     <= bank_d;
    after_load_q <= after_load_d;
    bank_base_q <= bank_base_d;
    fr_key_q   <= fr_key_d;
    fr_match_q <= fr_match;
    fr_end_q   <= base_q + MemAddrWidth'(bytes_q);
    fr_lo_q    <= fr_lo_d;
    fr_hi_q    <= fr_hi_d;
    n_q        <= n_d;
    b_q        <= b_d;
    t_q        <= t_d;
    fin_q      <= fin_d;
    nh_q       <= nh_d;
    len_q      <= len_d;
    maxlen_q   <= maxlen_d;
    maxslot_q  <= maxslot_d;
    len_bad_q  <= len_bad_d;
    j_q        <= j_d;
    w_q        <= w_d;
    kw_q       <= kw_d;
    gc_q       <= gc_d;
    gl_q       <= gl_d;
    g_q        <= g_d;
    base_w_q   <= base_w_d;
    in_red_q   <= in_red_d;
    lw_q       <= lw_d;
    lw2_q      <= lw2_d;
    grp_k_q    <= grp_k_d;
    line_k_q   <= line_k_d;
    wait_q     <= wait_d;
    wait_z_q   <= wait_z_d;
    since_q    <= since_d;
    spc_q      <= spc_d;
    left_q     <= left_d;
    left_one_q <= (left_d == CW'(1));
    ld_b_q     <= ld_b_d;
    ld_j_q     <= ld_j_d;
    ld_jend_q  <= ld_jend_d;
    ld_in_q    <= ld_in_d;
    ld_ok_q    <= ld_in_d[BWidth'(b_q)];
    units_q    <= units_d;
    xp_av_q    <= xp_av_d;
    dh_av_q    <= dh_av_d;
    rec_av_q   <= rec_av_d;
    hout_cr_q  <= hout_cr_d;
    dout_cr_q  <= dout_cr_d;
    sout_cr_q  <= sout_cr_d;
    store_cr_q <= store_cr_d;
    tk_op_q    <= tk_op_d;
    tk_first_q <= tk_first_d;
    tk_last_q  <= tk_last_d;
    tk_zero_q  <= tk_zero_d;
    tk_pe_q    <= tk_pe_d;
    tk_addr_q  <= tk_addr_d;
    tk_src_q   <= tk_src_d;
    tk_lane_q  <= tk_lane_d;
    tk_mask_q  <= tk_mask_d;
  end

  // ------------------------------------------------------------- outputs
  assign busy_o     = (state_q != S_IDLE);
  assign run_busy_o = (state_q != S_IDLE) && (state_q != S_DONE);
  assign run_bank_o = BankWidth'(bank_q);
  assign status_o      = status_q;
  assign status_unit_o = unit_q;
  assign run_units_o     = tbh_q;
  assign run_seq_units_o = bh_q;

  assign run_bw_o         = is_bw;
  assign run_gru_o        = is_gru;
  assign run_hidden_o     = HiddenWidth'(hid_q);
  assign run_store_base_o = base_q;

  assign chain_bw_o         = is_bw;
  assign chain_rows_base_o  = RowsWidth'(quo_q);
  assign chain_rows_extra_o = PeWidth'(rem_q);

  assign tok_valid_o = tk_valid_q;
  assign tok_op_o    = tk_op_q;
  assign tok_first_o = tk_first_q;
  assign tok_last_o  = tk_last_q;
  assign tok_zero_o  = tk_zero_q;
  assign tok_pe_o    = tk_pe_q;
  assign tok_addr_o  = tk_addr_q;
  assign tok_mask_o  = tk_mask_q;
  logic [RowLanes*32-1:0] tok_rows;  // a ROW token's rows: the buffer word, or its lane
  if (RowLanes == 4) begin : g_row_word
    logic [1:0] unused_lane;
    assign unused_lane = tk_lane_q;
    assign tok_rows    = dbuf_rdata_i;
  end else begin : g_row_lane
    assign tok_rows = dbuf_rdata_i[tk_lane_q*32 +: 32];
  end
  always_comb begin
    unique case (tk_src_q)
      2'd1:    tok_data_o = {RowLanes{hbuf_rdata_i}};
      2'd2:    tok_data_o = tok_rows;
      default: tok_data_o = '0;
    endcase
  end


`ifndef SYNTHESIS
  // The reduce gap by its rule (the sequencer adds the last wave's chains to
  // a registered base).
  logic [31:0] red_gap_rule;
  assign red_gap_rule = rowo_q ? engine_pkg::bw_rows_reduce_gap(32'(q_last_q), Lines, Lm, La) :
                                 engine_pkg::bw_reduce_gap(32'(hid_q), 32'(q_last_q), pitch_r, lp_r, Lines,
                                                           RowLanes, Lm, La, RedAdder != 0);
  // The registered checks equal what their inputs give where they are read:
  // the forward-record match and the bank's weights in S_CHECK (the latter
  // unless a LOAD that came first still holds the bank), the state words' last
  // flag always, and the watchdog's count the count it replaced (cleared the
  // cycle after a progress, or an idle or accepting cycle).
  logic        fr_match_ref;
  logic [31:0] wd_ref_q, wd_lim_ref_q;  // the count and the limit as the command gave it
  always_comb begin
    fr_match_ref = 1'b0;
    for (int i = 0; i < FR; i++) begin
      if (fr_ok_q[i] && fr_key_q[i*KW +: KW] == fr_key) fr_match_ref = 1'b1;
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_i) wd_ref_q <= '0;
    else       wd_ref_q <= wd_clr_d ? '0 : wd_ref_q + 1;
    if (state_q == S_IDLE && cmd_valid_i) wd_lim_ref_q <= cfg_watchdog_i;
    if (!rst_i) begin
      assert (state_q != S_CHECK || fr_match_q == fr_match_ref)
      else $error("sequencer: the registered forward-record match differs from the records in S_CHECK");
      assert (state_q != S_CHECK || (after_load_q && load_busy_i) || weights_ok_q == weights_ok)
      else $error("sequencer: the bank's weights changed in the cycle before S_CHECK read them");
      assert (left_one_q == (left_q == CW'(1)))
      else $error("sequencer: left_one_q differs from left_q == 1");
      assert (!ld_q || ld_jend_q == (ld_j_q == hm1_q))
      else $error("sequencer: the loader's last-column flag differs from its column");
      assert (!ld_q || state_q == S_STATE || state_q == S_RUN)
      else $error("sequencer: the state loader is active outside S_STATE and S_RUN");
      assert (!(tk_valid_d && tk_op_d == engine_pkg::TOK_ELEM && t0_q) || 17'(ld_b_q) > 17'(b_q))
      else $error("sequencer: an ELEM of a slot's first step before the slot's state is loaded");
      for (int b = 0; b < MaxBatch; b++) begin
        assert (!ld_q || ld_in_q[b] == (32'(b) < 32'(ld_b_q)))
        else $error("sequencer: the loader's slot bits differ from its slot");
      end
      assert (wd_ref_q == (wd_clr_q ? 32'd0 : wd_prev_q + 1) &&
              wd_fire == (wd_lim_ref_q != 0 && wd_ref_q >= wd_lim_ref_q))
      else $error("sequencer: the watchdog's count or limit differs from its reference");
    end
  end

  // The running slots at t and at the next t, from the lengths (run_q and
  // run_next_c must equal them; BW at t = 0 has no next t).
  logic [MaxBatch-1:0] run_ref, run_ref_next;
  logic [15:0]         unused_ref_count, unused_ref_count_next;
  running_slots #(.MaxBatch(MaxBatch)) u_run_ref (
    .lengths_i(len_q), .batch_i(bat_q), .t_i(t_q), .mask_o(run_ref), .count_o(unused_ref_count));
  running_slots #(.MaxBatch(MaxBatch)) u_run_ref_next (
    .lengths_i(len_q), .batch_i(bat_q), .t_i(is_fw ? t_q + 1'b1 : t_q - 1'b1), .mask_o(run_ref_next),
    .count_o(unused_ref_count_next));
  // A run has started since reset: units and n*H hold a command's counts.
  logic run_seen_q;
  always_ff @(posedge clk_i) begin
    if (rst_i) run_seen_q <= 1'b0;
    else if (dv_clear) run_seen_q <= 1'b1;
  end
  // Running sets only shrink with t (FW) and grow as t falls (BW): a step
  // that is not the last always has a next one.
  always_ff @(posedge clk_i) begin
    if (!rst_i) begin
      assert (!(pv_we && state_d == S_RUN && !nb_same_q[16] && !fin_q && (is_fw || t_q != 0) && !nb_next_q[16]))
      else $error("sequencer: no running sequence at the next time step");
      // S_SKIP reads valid for the word it takes (see the port list).
      assert (!xp_skip_o || xp_word_i == xp_valid_i) else $error("sequencer: xp skip without ready");
      assert (!dh_skip_o || dh_word_i == dh_valid_i) else $error("sequencer: dh skip without ready");
    end
  end
  initial begin
    if (NumPe < 1) $error("sequencer: NumPe must be >= 1");
    if (XpWords != 1 && XpWords != 4) $error("sequencer: XpWords %0d must be 1 or 4", XpWords);
    if (MaxBatch < 1 || MaxHidden < 1) $error("sequencer: MaxBatch and MaxHidden must be >= 1");
    if (FifoDepth < 2 * MaxHidden) $error("sequencer: FifoDepth must hold two steps");
    if (FlushCycles > 255) $error("sequencer: flush counter too narrow");
    if (HoleBits > 64) $error("sequencer: AddLatency %0d past the FW hole mask's 64 offsets", La);
    // The spacing rules' terms (red_gap_q, span_last_q, skew_next_q) are 16
    // bits: a bound above the reduce gap and the skews, grid or row order.
    if (MaxHidden + Lm + La + 3 + 2 * Lines * (NumChains + RowLanes * (La + 1)) + NumChains >= 65536)
      $error("sequencer: the spacing rules' 16-bit terms are too narrow for this chain geometry");
  end
  always_ff @(posedge clk_i) begin
    if (!rst_i) begin
      assert (state_q != S_STATE || (t_load_q == t_load && run_load_q == run_load && tl_load_q == tl_load))
      else $error("sequencer: the registered first-step t, slots or last flags differ from the lengths");
      assert (!(state_q == S_LENGTHS && bat_q != 0 && 32'(bat_q) <= MaxBatch) || b_q < bat_q)
      else $error("sequencer: S_LENGTHS beyond the batch (its end compares BWidth bits)");
      assert (state_q != S_CFGWAIT || wait_cfg_z_q == (wait_cfg_q == 0))
      else $error("sequencer: the registered settle-count zero flag differs from the count");
    end
  end
  always_ff @(posedge clk_i) begin
    if (!rst_i && running) begin
      // (A FIFO holds FifoDepth + 1 entries, its output register included.)
      assert (xp_av_q <= FIFO_CREDITS + 1 && dh_av_q <= FIFO_CREDITS + 1 && rec_av_q <= FIFO_CREDITS + 1 &&
              hout_cr_q <= FIFO_CREDITS && dout_cr_q <= FIFO_CREDITS && sout_cr_q <= FIFO_CREDITS &&
              store_cr_q <= FIFO_CREDITS)
      else $error("sequencer: a credit or availability count beyond the FIFO depth");
      assert (xp_z_q == (xp_left_q == 0) && xp_one_q == (xp_left_q == 1) &&
              dh_z_q == (dh_left_q == 0) && dh_one_q == (dh_left_q == 1))
      else $error("sequencer: registered stream-end flags differ from the word counts");
      assert (!(state_q == S_RUN && is_bw) || (grp_kl_q == last_row(grp_k_q, gh_q) &&
                                               grp_none_q == (grp_k_q >= gh_q)))
      else $error("sequencer: the registered group's last row or emptiness differs from grp_k");
      assert (!(state_q == S_RUN && is_bw) || (grp_k_q == kw_q + grp_pe && lw_q == (w_q + 1 == rows_q) &&
                                               lw2_q == (w_q + 2 == rows_q)))
      else $error("sequencer: registered grid position differs from the wave counters");
      assert (!(state_q == S_RUN && is_bw) || (le_q == (gc_q == (lw_q ? q_lm1_q : 16'(NumChains - 1))) &&
                                               gll_q == (32'(gl_q) == Lines - 1)))
      else $error("sequencer: registered line or grid end differs from gc and gl");
      // A command cannot complete in the cycle of a framing error (its words come first).
      assert (!(state_d == S_DONE && (xp_few || xp_many || dh_few || dh_many)))
      else $error("sequencer: a command completed in the cycle of a framing error");
      assert (state_q != S_RUN ||
              (hm1_q == hid_q - 1'b1 && nlast_q == (is_fw ? tb_q - 1'b1 : tb_q + CW'(bat_q) - 1'b1) &&
               uend_q == (is_bw ? tbh_q + bh_q : tbh_q)))
      else $error("sequencer: a registered run constant differs from its expression");
      for (int b = 0; b < MaxBatch; b++) begin
        assert (!running || lm2_q[b*16 +: 16] == len_q[b*16 +: 16] - 16'd2)
        else $error("sequencer: slot %0d's length less 2 not registered before the run", b);
        assert (state_q != S_RUN || tl_q[b] == (t_q + 1'b1 == len_q[b*16 +: 16]))
        else $error("sequencer: the registered last-step flag of slot %0d differs", b);
      end
      assert (state_q != S_RUN || (run_q == run_ref && t0_q == (t_q == 0) &&
                                   (!(is_fw || t_q != 0) || run_next_c == run_ref_next)))
      else $error("sequencer: the registered running slots or t == 0 differ from the lengths");
      assert (state_q != S_DRAIN || units_end_q == (units_q == uend_q))
      else $error("sequencer: the registered all-units flag differs from the count");
      // At a step's end the next sequence registered a cycle ahead is the current one.
      assert (!(pv_we && !fin_q) ||
              (nb_same_q == first_after(run_ref, {1'b0, b_q}) &&
               (!(is_fw || t_q != 0) || (nb_next_q == first_after(run_ref_next, 17'h1ffff) &&
                                         (is_fw || !nb_next_q[16] ||
                                          nb_next_tl_q == (t_q == len_q[BWidth'(nb_next_q[15:0])*16 +: 16])))) &&
               (!nb_same_q[16] || nb_same_tl_q == tl_q[BWidth'(nb_same_q[15:0])])))
      else $error("sequencer: the next sequence registered a cycle ahead differs from b, t and the lengths");
      assert (!(state_q == S_STATE || state_q == S_RUN) || (j_end_q == (j_q == hm1_q) && j_zero_q == (j_q == 0)))
      else $error("sequencer: the registered first/last-element flags differ from j == 0 / j == H - 1");
      assert (spc_q == (since_q >= l_res_q))
      else $error("sequencer: the registered spacing flag differs from the counter");
      assert (state_q != S_RUN || wait_z_q == (wait_q == 0))
      else $error("sequencer: the registered wait flag differs from wait == 0");
      assert (fw_records == (state_q == S_DRAIN && state_d == S_DONE && is_fw))
      else $error("sequencer: the record condition differs from the drain's exit to S_DONE");
      assert (rv_cur == (is_gru ? 3 : 4) * dv_cur)
      else $error("sequencer: the rows-done counter differs from the units-done counter");
      assert (!(pv_we && dv_diff < $signed(AhW'(DV_LOW))))
      else $error("sequencer: a step's units lag beyond the dependency counter's range");
      // The spacing rules derived in two cycles from registered terms are the
      // rules of engine_pkg from the command's configuration.
      assert (state_q != S_RUN ||
              (s_fw_q == 16'(engine_pkg::fw_elem_spacing(32'(rows_q), 32'(hid_q), La)) &&
               s_fwb_q == 16'(engine_pkg::fw_step_spacing(32'(rows_q), 32'(hid_q), La)) &&
               l_res_q == engine_pkg::fw_last_gap(32'(rows_q), ResLanes > 1 ? 32'(hid_q) : 32'(gh_q),
                                                  32'(hid_q), Lm, La) &&
               hole_mask_q == HoleBits'(engine_pkg::fw_step_holes(
                                  32'(rows_q), 2'(engine_pkg::fw_sums_log2(32'(rows_q), 32'(hid_q))), La)) &&
               s_red_q == 16'(red_gap_rule - span_last) &&
               s_ared_q == (rowo_q ?
                            16'(engine_pkg::bw_red_after_reduce(
                                32'(hid_q), engine_pkg::bw_rows_skew_next(32'(gh_q), Lines, RowLanes, La), Lm, La,
                                red_gap_rule)) :
                            16'(engine_pkg::bw_after_reduce(32'(hid_q), 32'(gh_q), pitch_r, lp_r, Lines, RowLanes,
                                                            Lm, La, red_gap_rule, RedAdder != 0)))))
      else $error("sequencer: a registered spacing rule differs from engine_pkg's rule");
      assert (!(done_o && stall_pending))
      else $error("sequencer: a stall cycle not yet counted at done");
      assert (!run_seen_q || CW'(ahead_q) == units_q - nh_q)
      else $error("sequencer: the narrow units-ahead register differs from units - n*H");
    end
  end
`endif

endmodule

`default_nettype wire
