// Recurrent engine: the FPGA part of training one LSTM or GRU layer. It keeps
// the recurrent weights U resident in a chain of NumPe processing elements,
// NumBanks weight sets at once, and runs, per command:
//   LOAD      (load port, beside FORWARD/BACKWARD on another bank) U and b_hh
//             of one bank from the weight stream, WeightLanes words a beat,
//             min(WeightLanes, NumPe) words written per cycle
//             (engine::load_image gives the order);
//   FORWARD   (command port, names its bank) T steps of B interleaved
//             sequences, each of its own length (a finished sequence does no
//             work and leaves the streams: PyTorch PackedSequence order): h0/c0 from the state stream,
//             xp_t (W_ih x_t + b_ih, unit-major; XpWords 4: one unit a
//             beat, gate g in lane g, GRU's lane 3 unused) in, h_t out, final (h, c) on
//             the state stream; activations saved to the gate store;
//   BACKWARD  the same sequences in reverse: the initial carry (dc_T for LSTM)
//             from the state stream, dh_t in, the gate gradients delta_t out
//             (one unit a beat), (dh0, dc0) on the state stream; activations
//             read back from the gate store. U is reused as resident
//             (U^T delta on the chain).
// Streams are valid/ready with `last` on the final beat of each command's
// portion (AXI-Stream rules): 32-bit words, but for the weight stream
// (WeightLanes words a beat), Xp with XpWords 4 and the delta stream (a unit's 4 words a beat,
// lane 0 in bits 31:0; GRU's fourth is its dhn term, as the model's). An
// input whose `last` comes early or late ends the command with
// ERR_TOO_FEW_WORDS / ERR_TOO_MANY_WORDS and the stream in status_unit_o; a
// late one's surplus is dropped up to its `last`.
// abort_i (and the watchdog, cfg_watchdog_i cycles without progress) ends any
// command within engine_pkg::flush_cycles + 2 cycles with ERR_ABORTED
// (ERR_TIMEOUT and the stalled stream): the datapath is reset, what it held is
// discarded, and gate-store responses still outstanding are dropped as they
// arrive, so the next command is exact. Weights and a finished forward's
// gate store survive an abort (an aborted LOAD or FORWARD invalidates its own).
// The gate store is a simple in-order request/response memory port (one
// 256-bit record per unit and step; every request gets one response, writes
// included). rst_i resets the engine and, by contract, the far side of this
// port: responses to requests made before rst_i must not arrive after it.
// Illegal configurations end the command at once with an error status.
// NaN and infinity propagate as IEEE says (one canonical NaN); cnt_nonfinite_o
// counts the hidden units whose outputs hold one, so the host can stop a
// diverging run without scanning every output.
`default_nettype none

module engine #(
  parameter int unsigned NumPe        = 4,
  parameter int unsigned NumChains    = 1,      // chains of NumPe/NumChains PEs (pe_chain)
  parameter int unsigned WeightDepth  = 1024,   // words per bank in each PE
  parameter int unsigned NumBanks     = 2,
  parameter int unsigned WeightUram   = 0,      // 1: the PEs' weight RAMs marked for UltraRAM
  parameter int unsigned WeightLanes  = 16,
  parameter int unsigned MaxHidden    = 32,
  parameter int unsigned MaxBatch     = 4,
  parameter int unsigned MulLatency   = 2,
  parameter int unsigned AddLatency   = 3,
  // BW delta rows a ROW token carries (1 or 4; engine_pkg::row_lanes picks
  // the one with the smaller per-step skews for the chain geometry).
  parameter int unsigned RowLanes     = engine_pkg::row_lanes(NumPe, NumChains, AddLatency),
  // FW results leave the chains ResLanes rows a cycle (4 needs NumPe a
  // multiple of 4; with 4 the activation unit takes a unit a cycle).
  parameter int unsigned ResLanes     = (NumPe % 4 == 0) ? 4 : 1,
  // Xp words a beat: 1 (a word a beat, G beats a unit) or 4 (a unit a beat).
  parameter int unsigned XpWords      = 4,
  // BW: 1 gives every PE an adder of its own for the reduction (about an
  // fp_add and a copy of its accumulators more a PE): the reduction then
  // overlaps the MACs instead of taking H of the MAC adder's cycles a step.
  parameter int unsigned RedAdder     = 0,
  parameter int unsigned MemAddrWidth = 40
) (
  input  logic                    clk_i,
  input  logic                    rst_i,
  // Command and configuration (sampled when the command is accepted).
  input  logic                    cmd_valid_i,
  output logic                    cmd_ready_o,
  input  logic [1:0]              cmd_op_i,
  input  logic [1:0]              cfg_cell_i,
  input  logic [15:0]             cfg_hidden_i,
  input  logic [15:0]             cfg_batch_i,
  input  logic [15:0]             cfg_steps_i,
  input  logic [7:0]              cfg_bank_i,
  input  logic [MaxBatch*16-1:0]  cfg_lengths_i,   // per batch slot, 1..T (packed batches)
  input  logic [MemAddrWidth-1:0] cfg_store_base_i,
  input  logic [MemAddrWidth-1:0] cfg_store_size_i,
  input  logic [31:0]             cfg_watchdog_i,
  input  logic                    abort_i,
  output logic                    busy_o,
  output logic                    done_o,
  output logic [4:0]              status_o,
  output logic [3:0]              status_unit_o,
  // LOAD command (the loader; abort_i ends it too) and its completion.
  input  logic                    load_valid_i,
  output logic                    load_ready_o,
  input  logic [7:0]              load_bank_i,
  input  logic [1:0]              load_cell_i,
  input  logic [15:0]             load_hidden_i,
  input  logic [31:0]             load_watchdog_i,
  output logic                    load_busy_o,
  output logic                    load_done_o,
  output logic [4:0]              load_status_o,
  output logic [3:0]              load_status_unit_o,
  // Input streams.
  input  logic                    weight_valid_i,
  output logic                    weight_ready_o,
  input  logic [WeightLanes*32-1:0] weight_data_i,
  input  logic                    weight_last_i,
  input  logic                    state_in_valid_i,
  output logic                    state_in_ready_o,
  input  logic [31:0]             state_in_data_i,
  input  logic                    state_in_last_i,
  input  logic                    xp_valid_i,
  output logic                    xp_ready_o,
  input  logic [XpWords*32-1:0]   xp_data_i,
  input  logic                    xp_last_i,
  input  logic                    dh_valid_i,
  output logic                    dh_ready_o,
  input  logic [31:0]             dh_data_i,
  input  logic                    dh_last_i,
  // Output streams.
  output logic                    h_valid_o,
  input  logic                    h_ready_i,
  output logic [31:0]             h_data_o,
  output logic                    h_last_o,
  output logic                    delta_valid_o,
  input  logic                    delta_ready_i,
  output logic [127:0]            delta_data_o,     // one unit: 4 words, lane 0 first
  output logic                    delta_last_o,
  output logic                    state_out_valid_o,
  input  logic                    state_out_ready_i,
  output logic [31:0]             state_out_data_o,
  output logic                    state_out_last_o,
  // Gate store memory port.
  output logic                    mem_req_valid_o,
  input  logic                    mem_req_ready_i,
  output logic                    mem_req_write_o,
  output logic [MemAddrWidth-1:0] mem_req_addr_o,
  output logic [255:0]            mem_req_data_o,
  input  logic                    mem_rsp_valid_i,
  output logic                    mem_rsp_ready_o,
  input  logic [255:0]            mem_rsp_data_i,
  // Counters of the last command (LOAD: its own two).
  output logic [63:0]             cnt_load_cycles_o,
  output logic [63:0]             cnt_weight_words_o,  // weight and bias RAM writes
  output logic [63:0]             cnt_cycles_o,
  output logic [63:0]             cnt_macs_o,          // MACs the PEs issued
  output logic [63:0]             cnt_stall_input_o,
  output logic [63:0]             cnt_stall_output_o,
  output logic [63:0]             cnt_stall_dep_o,
  output logic [63:0]             cnt_stall_store_o,
  output logic [63:0]             cnt_nonfinite_o      // units with a NaN/Inf output
);

  localparam int unsigned MaxRows     = (4 * MaxHidden + NumPe - 1) / NumPe;
  localparam int unsigned PeWidth     = (NumPe > 1) ? $clog2(NumPe) : 1;
  localparam int unsigned WAddrWidth  = $clog2(NumBanks * WeightDepth);
  localparam int unsigned Lanes       = (WeightLanes < NumPe) ? WeightLanes : NumPe;
  localparam int unsigned Groups      = (NumPe + Lanes - 1) / Lanes;
  localparam int unsigned GroupWidth  = (Groups > 1) ? $clog2(Groups) : 1;
  localparam int unsigned BankWidth   = (NumBanks > 1) ? $clog2(NumBanks) : 1;
  localparam int unsigned HiddenWidth = $clog2(MaxHidden + 1);
  localparam int unsigned RowsWidth   = $clog2(MaxRows + 1);
  localparam int unsigned JWidth      = (MaxHidden > 1) ? $clog2(MaxHidden) : 1;
  localparam int unsigned BWidth      = (MaxBatch > 1) ? $clog2(MaxBatch) : 1;
  localparam int unsigned BufWidth    = BWidth + JWidth;
  localparam int unsigned FifoDepth   = 1 << $clog2(2 * MaxHidden);
  localparam int unsigned FifoCount   = $clog2(FifoDepth + 2);
  localparam int unsigned OutstWidth  = $clog2(FifoDepth + 1) + 2;
  localparam int unsigned CountWidth  = $clog2(NumPe + 2);

  // ------------------------------------------------------------ sequencer
  logic                    run_bw, run_gru, start, flush, dp_rst;
  logic [39:0]             run_units, run_seq_units;
  logic                    xp_skip, dh_skip, progress;
  logic [3:0]              drain_busy;
  logic [CountWidth-1:0]   mac_count, wload_count;
  logic                    run_busy;
  logic [BankWidth-1:0]    run_bank, ld_bank;
  logic                    ld_busy, ld_ready, ld_valid, cmd_takes;
  logic [NumBanks-1:0]     bank_valid;
  logic [NumBanks*2-1:0]   bank_cell;
  logic [NumBanks*16-1:0]  bank_hidden;
  logic                    wbus_valid, wflush;
  logic                    outst_full;       // gate-store requests at the counter's maximum
  logic [GroupWidth-1:0]   wbus_group;
  logic [WAddrWidth-1:0]   wbus_addr;
  logic [Lanes-1:0]        wbus_mask;
  logic [Lanes*32-1:0]     wbus_data;
  logic [HiddenWidth-1:0]  run_hidden;
  logic [MemAddrWidth-1:0] run_store_base;
  logic                    chain_bw;
  logic [RowsWidth-1:0]    chain_rows_base;
  logic [PeWidth-1:0]      chain_rows_extra;
  logic                    tok_valid, tok_first, tok_last, tok_zero;
  logic [1:0]              tok_op;
  logic [PeWidth-1:0]      tok_pe;
  logic [WAddrWidth-1:0]   tok_addr;
  logic [RowLanes-1:0]     tok_mask;
  logic [RowLanes*32-1:0]  tok_data;
  logic                    xp_open, dh_open, xp_word, xp_unit, dh_word;
  logic [3:0]              bias_we;
  logic [BankWidth-1:0]    bias_bank;
  logic [JWidth-1:0]       bias_unit;
  logic [127:0]            bias_data;
  logic                    load_hbuf_we, load_state_we;
  logic [BufWidth-1:0]     load_addr;
  logic [31:0]             load_data;
  logic                    hbuf_re, dbuf_re;
  logic [BufWidth-1:0]     hbuf_raddr, dbuf_raddr;
  logic [31:0]             hbuf_rdata;
  logic [127:0]            dbuf_rdata;
  logic                    desc_push;
  logic [BWidth-1:0]       desc_push_batch;
  logic                    desc_push_flag;
  logic                    unit_done, nonfinite, rec_push, rec_pop, hout_pop, dout_pop, sout_pop, store_pop;
  logic                    drain_idle;
  logic                    rd_req_valid;
  logic [MemAddrWidth-1:0] rd_req_addr;

  // --------------------------------------------------------------- loader
  loader #(
    .NumPe      (NumPe),
    .NumBanks   (NumBanks),
    .WeightDepth(WeightDepth),
    .WeightLanes(WeightLanes),
    .MaxHidden  (MaxHidden)
  ) u_loader (
    .clk_i,
    .rst_i,
    .load_valid_i  (ld_valid),
    .load_ready_o  (ld_ready),
    .load_bank_i,
    .load_cell_i,
    .load_hidden_i,
    .load_watchdog_i,
    .abort_i,
    .busy_o        (ld_busy),
    .bank_o        (ld_bank),
    .done_o        (load_done_o),
    .status_o      (load_status_o),
    .status_unit_o (load_status_unit_o),
    .run_busy_i    (run_busy),
    .run_bank_i    (run_bank),
    .bank_valid_o  (bank_valid),
    .bank_cell_o   (bank_cell),
    .bank_hidden_o (bank_hidden),
    .weight_valid_i,
    .weight_ready_o,
    .weight_data_i,
    .weight_last_i,
    .wbus_valid_o  (wbus_valid),
    .wbus_group_o  (wbus_group),
    .wbus_addr_o   (wbus_addr),
    .wbus_mask_o   (wbus_mask),
    .wbus_data_o   (wbus_data),
    .wflush_o      (wflush),
    .bias_we_o     (bias_we),
    .bias_bank_o   (bias_bank),
    .bias_unit_o   (bias_unit),
    .bias_data_o   (bias_data),
    .pe_words_i    (wload_count),
    .cnt_cycles_o  (cnt_load_cycles_o),
    .cnt_words_o   (cnt_weight_words_o)
  );
  assign load_busy_o = ld_busy;
  // One acceptance per cycle: a command and a LOAD presented together, the
  // command first (the order decides who gets a contested bank).
  assign cmd_takes    = cmd_valid_i && cmd_ready_o;
  assign ld_valid     = load_valid_i && !cmd_takes;
  assign load_ready_o = ld_ready && !cmd_takes;

  // ------------------------------------------------------------ sequencer
  sequencer #(
    .NumPe       (NumPe),
    .NumChains   (NumChains),
    .WeightDepth (WeightDepth),
    .NumBanks    (NumBanks),
    .MaxHidden   (MaxHidden),
    .MaxBatch    (MaxBatch),
    .MulLatency  (MulLatency),
    .AddLatency  (AddLatency),
    .MemAddrWidth(MemAddrWidth),
    .FifoDepth   (FifoDepth),
    .RowLanes    (RowLanes),
    .ResLanes    (ResLanes),
    .XpWords     (XpWords),
    .RedAdder    (RedAdder)
  ) u_seq (
    .clk_i,
    .rst_i,
    .cmd_valid_i,
    .cmd_ready_o,
    .cmd_op_i,
    .cfg_cell_i,
    .cfg_hidden_i,
    .cfg_batch_i,
    .cfg_steps_i,
    .cfg_bank_i,
    .cfg_lengths_i,
    .cfg_store_base_i,
    .cfg_store_size_i,
    .cfg_watchdog_i,
    .abort_i,
    .busy_o,
    .done_o,
    .status_o,
    .status_unit_o,
    .flush_o           (flush),
    .run_busy_o        (run_busy),
    .run_bank_o        (run_bank),
    .run_bw_o          (run_bw),
    .run_gru_o         (run_gru),
    .run_hidden_o      (run_hidden),
    .run_store_base_o  (run_store_base),
    .run_units_o       (run_units),
    .run_seq_units_o   (run_seq_units),
    .start_o           (start),
    .chain_bw_o        (chain_bw),
    .chain_rows_base_o (chain_rows_base),
    .chain_rows_extra_o(chain_rows_extra),
    .tok_valid_o       (tok_valid),
    .tok_op_o          (tok_op),
    .tok_first_o       (tok_first),
    .tok_last_o        (tok_last),
    .tok_zero_o        (tok_zero),
    .tok_pe_o          (tok_pe),
    .tok_addr_o        (tok_addr),
    .tok_mask_o        (tok_mask),
    .tok_data_o        (tok_data),
    .bank_valid_i      (bank_valid),
    .bank_cell_i       (bank_cell),
    .bank_hidden_i     (bank_hidden),
    .load_busy_i       (ld_busy),
    .load_bank_i       (ld_bank),
    .state_valid_i     (state_in_valid_i),
    .state_ready_o     (state_in_ready_o),
    .state_data_i      (state_in_data_i),
    .state_last_i      (state_in_last_i),
    .xp_open_o         (xp_open),
    .xp_skip_o         (xp_skip),
    .xp_valid_i,
    .xp_word_i         (xp_word),
    .xp_last_i,
    .xp_unit_i         (xp_unit),
    .dh_open_o         (dh_open),
    .dh_skip_o         (dh_skip),
    .dh_valid_i,
    .dh_word_i         (dh_word),
    .dh_last_i,
    .load_hbuf_we_o    (load_hbuf_we),
    .load_state_we_o   (load_state_we),
    .load_addr_o       (load_addr),
    .load_data_o       (load_data),
    .hbuf_re_o         (hbuf_re),
    .hbuf_raddr_o      (hbuf_raddr),
    .hbuf_rdata_i      (hbuf_rdata),
    .dbuf_re_o         (dbuf_re),
    .dbuf_raddr_o      (dbuf_raddr),
    .dbuf_rdata_i      (dbuf_rdata),
    .desc_valid_o      (desc_push),
    .desc_batch_o      (desc_push_batch),
    .desc_flag_o       (desc_push_flag),
    .unit_done_i       (unit_done),
    .nonfinite_i       (nonfinite),
    .rec_push_i        (rec_push),
    .rec_pop_i         (rec_pop),
    .hout_pop_i        (hout_pop),
    .dout_pop_i        (dout_pop),
    .sout_pop_i        (sout_pop),
    .store_pop_i       (store_pop),
    .drain_idle_i      (drain_idle),
    .drain_busy_i      (drain_busy),
    .progress_i        (progress),
    .mac_count_i       (mac_count),
    .rd_req_valid_o    (rd_req_valid),
    .rd_req_ready_i    (mem_req_ready_i && !outst_full),
    .rd_req_addr_o     (rd_req_addr),
    .cnt_cycles_o,
    .cnt_macs_o,
    .cnt_stall_input_o,
    .cnt_stall_output_o,
    .cnt_stall_dep_o,
    .cnt_stall_store_o,
    .cnt_nonfinite_o
  );

  // --------------------------------------------------------------- chain
  logic [ResLanes-1:0]    res_valid;
  logic                   res_zero;
  logic [ResLanes*32-1:0] res_data;
  logic [NumPe-1:0] pe_mac, pe_wload;

  // The datapath's reset: rst_i, or a flush that ends a command early.
  assign dp_rst = rst_i || flush;

  pe_chain #(
    .NumPe      (NumPe),
    .NumChains  (NumChains),
    .WeightDepth(NumBanks * WeightDepth),
    .WeightUram (WeightUram),
    .MaxHidden  (MaxHidden),
    .MulLatency (MulLatency),
    .AddLatency (AddLatency),
    .Lanes      (Lanes),
    .RowLanes   (RowLanes),
    .ResLanes   (ResLanes),
    .RedAdder   (RedAdder)
  ) u_chain (
    .clk_i,
    .rst_i           (dp_rst),
    .wrst_i          (rst_i || wflush),
    .cfg_bw_i        (chain_bw),
    .cfg_hidden_i    (run_hidden),
    .cfg_rows_base_i (chain_rows_base),
    .cfg_rows_extra_i(chain_rows_extra),
    .tok_valid_i     (tok_valid),
    .tok_op_i        (tok_op),
    .tok_first_i     (tok_first),
    .tok_last_i      (tok_last),
    .tok_zero_i      (tok_zero),
    .tok_pe_i        (tok_pe),
    .tok_addr_i      (tok_addr),
    .tok_mask_i      (tok_mask),
    .tok_data_i      (tok_data),
    .wbus_valid_i    (wbus_valid),
    .wbus_group_i    (wbus_group),
    .wbus_addr_i     (wbus_addr),
    .wbus_mask_i     (wbus_mask),
    .wbus_data_i     (wbus_data),
    .res_valid_o     (res_valid),
    .res_zero_o      (res_zero),
    .res_data_o      (res_data),
    .mac_o           (pe_mac),
    .wload_o         (pe_wload)
  );

  // Measured activity: the PEs' MAC issues and weight RAM writes, registered
  // once and counted in the sequencer.
  logic [NumPe-1:0] pe_mac_q, pe_wload_q;
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      pe_mac_q   <= '0;
      pe_wload_q <= '0;
    end else begin
      pe_mac_q   <= pe_mac;
      pe_wload_q <= pe_wload;
    end
  end
  always_comb begin
    mac_count   = '0;
    wload_count = '0;
    for (int i = 0; i < NumPe; i++) begin
      mac_count   = mac_count + CountWidth'(pe_mac_q[i]);
      wload_count = wload_count + CountWidth'(pe_wload_q[i]);
    end
  end

  // ------------------------------------------------------ input buffering
  logic         xp_pack_valid, xp_pack_ready, xp_head_valid, xp_pop;
  logic [127:0] xp_pack_data, xp_head;
  logic [FifoCount-1:0] unused_xp_count;
  logic         xp_in_ready;
  if (XpWords == 1) begin : g_xp_words
    logic [2:0] gate_count;
    assign gate_count = run_gru ? 3'd3 : 3'd4;
    stream_pack #(.Lanes(4)) u_xp_pack (
      .clk_i,
      .rst_i      (dp_rst),
      .count_i    (gate_count),
      .in_valid_i (xp_valid_i && xp_open),
      .in_ready_o (xp_in_ready),
      .in_data_i  (xp_data_i),
      .out_valid_o(xp_pack_valid),
      .out_ready_i(xp_pack_ready),
      .out_data_o (xp_pack_data)
    );
  end else begin : g_xp_units
    // A unit a beat: GRU's fourth lane is not used.
    assign xp_pack_valid = xp_valid_i && xp_open;
    assign xp_in_ready   = xp_pack_ready;
    assign xp_pack_data  = {run_gru ? 32'h0 : xp_data_i[127:96], xp_data_i[95:0]};
  end
  assign xp_ready_o = (xp_open && xp_in_ready) || xp_skip;
  assign xp_word    = xp_valid_i && xp_ready_o;
  assign xp_unit    = xp_pack_valid && xp_pack_ready;

  prim_fifo #(.Width(128), .Depth(FifoDepth)) u_xp_fifo (
    .clk_i,
    .rst_i      (dp_rst),
    .in_valid_i (xp_pack_valid),
    .in_ready_o (xp_pack_ready),
    .in_data_i  (xp_pack_data),
    .out_valid_o(xp_head_valid),
    .out_ready_i(xp_pop),
    .out_data_o (xp_head),
    .count_o    (unused_xp_count)
  );

  logic        dh_head_valid, dh_pop, dh_fifo_ready;
  logic [31:0] dh_head;
  logic [FifoCount-1:0] unused_dh_count;
  prim_fifo #(.Width(32), .Depth(FifoDepth)) u_dh_fifo (
    .clk_i,
    .rst_i      (dp_rst),
    .in_valid_i (dh_valid_i && dh_open),
    .in_ready_o (dh_fifo_ready),
    .in_data_i  (dh_data_i),
    .out_valid_o(dh_head_valid),
    .out_ready_i(dh_pop),
    .out_data_o (dh_head),
    .count_o    (unused_dh_count)
  );
  assign dh_ready_o = (dh_open && dh_fifo_ready) || dh_skip;
  assign dh_word    = dh_valid_i && dh_ready_o;

  logic         rec_head_valid, rec_fifo_ready;
  logic [255:0] rec_head;
  logic [FifoCount-1:0] unused_rec_count;
  prim_fifo #(.Width(256), .Depth(FifoDepth)) u_rec_fifo (
    .clk_i,
    .rst_i      (dp_rst),
    .in_valid_i (mem_rsp_valid_i && run_bw && !rsp_stale),
    .in_ready_o (rec_fifo_ready),
    .in_data_i  (mem_rsp_data_i),
    .out_valid_o(rec_head_valid),
    .out_ready_i(rec_pop),
    .out_data_o (rec_head),
    .count_o    (unused_rec_count)
  );
  assign mem_rsp_ready_o = (run_bw && !rsp_stale) ? rec_fifo_ready : 1'b1;
  assign rec_push        = mem_rsp_valid_i && run_bw && !rsp_stale && rec_fifo_ready;

  // The step descriptors (slot, last/final flag) for the activation unit.
  // The sequencer's push is registered on its way in: its token decision
  // stays off the FIFO's count and RAM write. The unit reads a descriptor
  // only when its step's results arrive, many cycles after the token that
  // pushed it, so no cycle moves. Depth 8 and the output register hold 9;
  // a FORWARD holds at most 4 at once (a PE's two drain jobs and the step in
  // its elements; the cycle model's forward_descriptors, checked from 4 to
  // 4,096 PEs by EngineCycles.StepDescriptorsFitTheirFifo).
  logic             desc_valid, desc_ready, desc_flag;
  logic [BWidth-1:0] desc_batch;
  logic             desc_in_q, desc_in_flag_q;
  logic [BWidth-1:0] desc_in_batch_q;
  logic             unused_desc_in_ready;
  logic [$clog2(8+2)-1:0] unused_desc_count;
  always_ff @(posedge clk_i) begin
    if (dp_rst) desc_in_q <= 1'b0;
    else desc_in_q <= desc_push;
    desc_in_batch_q <= desc_push_batch;
    desc_in_flag_q  <= desc_push_flag;
  end
  prim_fifo #(.Width(BWidth + 1), .Depth(8)) u_desc_fifo (
    .clk_i,
    .rst_i      (dp_rst),
    .in_valid_i (desc_in_q),
    .in_ready_o (unused_desc_in_ready),
    .in_data_i  ({desc_in_flag_q, desc_in_batch_q}),
    .out_valid_o(desc_valid),
    .out_ready_i(desc_ready),
    .out_data_o ({desc_flag, desc_batch}),
    .count_o    (unused_desc_count)
  );

  // ----------------------------------------------------- activation unit
  logic                    act_hbuf_we, act_dbuf_we;
  logic [BufWidth-1:0]     act_hbuf_addr, act_dbuf_addr;
  logic [31:0]             act_hbuf_data;
  logic [127:0]            act_dbuf_data;
  logic                    hout_push, dout_push, sout_push, store_push;
  logic [31:0]             hout_data;
  logic [127:0]            dout_data;
  logic [63:0]             sout_data;
  logic [MemAddrWidth-1:0] store_addr;
  logic [255:0]            store_data;

  act_unit #(
    .MaxHidden   (MaxHidden),
    .MaxBatch    (MaxBatch),
    .MulLatency  (MulLatency),
    .AddLatency  (AddLatency),
    .MemAddrWidth(MemAddrWidth),
    .NumBanks    (NumBanks),
    .ResLanes    (ResLanes)
  ) u_act (
    .clk_i,
    .rst_i      (dp_rst),
    .cfg_bw_i        (run_bw),
    .cfg_gru_i       (run_gru),
    .cfg_hidden_i    (run_hidden),
    .cfg_store_base_i(run_store_base),
    .cfg_bank_i      (run_bank),
    .start_i         (start),
    .desc_valid_i    (desc_valid),
    .desc_ready_o    (desc_ready),
    .desc_batch_i    (desc_batch),
    .desc_flag_i     (desc_flag),
    .res_valid_i     (res_valid[0]),
    .res_data_i      (res_data),
    .xp_valid_i      (xp_head_valid),
    .xp_data_i       (xp_head),
    .xp_pop_o        (xp_pop),
    .dh_valid_i      (dh_head_valid),
    .dh_data_i       (dh_head),
    .dh_pop_o        (dh_pop),
    .rec_valid_i     (rec_head_valid),
    .rec_data_i      (rec_head),
    .rec_pop_o       (rec_pop),
    .bias_we_i       (bias_we),
    .bias_bank_i     (bias_bank),
    .bias_unit_i     (bias_unit),
    .bias_data_i     (bias_data),
    .state_we_i      (load_state_we),
    .state_addr_i    (load_addr),
    .state_data_i    (load_data),
    .unit_done_o     (unit_done),
    .nonfinite_o     (nonfinite),
    .hbuf_we_o       (act_hbuf_we),
    .hbuf_addr_o     (act_hbuf_addr),
    .hbuf_data_o     (act_hbuf_data),
    .dbuf_we_o       (act_dbuf_we),
    .dbuf_addr_o     (act_dbuf_addr),
    .dbuf_data_o     (act_dbuf_data),
    .hout_push_o     (hout_push),
    .hout_data_o     (hout_data),
    .dout_push_o     (dout_push),
    .dout_data_o     (dout_data),
    .sout_push_o     (sout_push),
    .sout_data_o     (sout_data),
    .store_push_o    (store_push),
    .store_addr_o    (store_addr),
    .store_data_o    (store_data)
  );

  // ------------------------------------------------- h and delta buffers
  prim_ram_1r1w #(.Width(32), .Depth(1 << BufWidth)) u_hbuf (
    .clk_i,
    .we_i   (act_hbuf_we || load_hbuf_we),
    .waddr_i(act_hbuf_we ? act_hbuf_addr : load_addr),
    .wdata_i(act_hbuf_we ? act_hbuf_data : load_data),
    .re_i   (hbuf_re),
    .rclr_i (1'b0),
    .raddr_i(hbuf_raddr),
    .rdata_o(hbuf_rdata)
  );

  // The delta buffer in chain row order: the activation unit writes unit u's
  // G deltas (rows k = G*u + g), row k goes to lane k mod 4 of word k / 4 of
  // its sequence's area, so that one read yields the rows of 4 consecutive
  // PEs (a ROW token's group). Four lane RAMs, each written at its own word.
  logic [JWidth+1:0] dbuf_row0;  // G*u
  assign dbuf_row0 = run_gru ? (JWidth+2)'(act_dbuf_addr[JWidth-1:0]) * (JWidth+2)'(3)
                             : (JWidth+2)'(act_dbuf_addr[JWidth-1:0]) << 2;
  for (genvar l = 0; l < 4; l++) begin : g_dbuf_lane
    logic [1:0]        gate;  // the gate whose row lands in this lane
    logic [JWidth+1:0] row;   // k = G*u + gate (k mod 4 == l)
    logic [1:0]        unused_row_lane;
    assign gate = 2'(l) - dbuf_row0[1:0];
    assign row  = dbuf_row0 + (JWidth+2)'(gate);
    assign unused_row_lane = row[1:0];
    prim_ram_1r1w #(.Width(32), .Depth(1 << BufWidth)) u_dbuf (
      .clk_i,
      .we_i   (act_dbuf_we && !(run_gru && gate == 2'd3)),
      .waddr_i({act_dbuf_addr[BufWidth-1:JWidth], row[JWidth+1:2]}),
      .wdata_i(act_dbuf_data[gate*32 +: 32]),
      .re_i   (dbuf_re),
      .rclr_i (1'b0),
      .raddr_i(dbuf_raddr),
      .rdata_o(dbuf_rdata[l*32 +: 32])
    );
  end

  // ------------------------------------------------------- output streams
  // `last` on the command's final word of each output stream: pushes are
  // counted against the command's unit counts.
  logic [39:0] hout_n_q, dout_n_q, sout_n_q;
  logic        hout_last, dout_last, sout_last;
  assign hout_last = (hout_n_q + 40'd1 == run_units);
  assign dout_last = (dout_n_q + 40'd1 == run_units);
  assign sout_last = (sout_n_q + 40'd1 == run_seq_units);
  always_ff @(posedge clk_i) begin
    if (rst_i || start) begin
      hout_n_q <= '0;
      dout_n_q <= '0;
      sout_n_q <= '0;
    end else begin
      hout_n_q <= hout_n_q + 40'(hout_push);
      dout_n_q <= dout_n_q + 40'(dout_push);
      sout_n_q <= sout_n_q + 40'(sout_push);
    end
  end

  logic hout_fifo_ready;
  logic [FifoCount-1:0] hout_count;
  prim_fifo #(.Width(33), .Depth(FifoDepth)) u_hout_fifo (
    .clk_i,
    .rst_i      (dp_rst),
    .in_valid_i (hout_push),
    .in_ready_o (hout_fifo_ready),
    .in_data_i  ({hout_last, hout_data}),
    .out_valid_o(h_valid_o),
    .out_ready_i(h_ready_i),
    .out_data_o ({h_last_o, h_data_o}),
    .count_o    (hout_count)
  );
  assign hout_pop = h_valid_o && h_ready_i;

  logic         dout_fifo_ready;
  logic [FifoCount-1:0] dout_count;
  // One unit a beat: its 4 delta words, lane 0 (bits 31:0) first.
  prim_fifo #(.Width(129), .Depth(FifoDepth)) u_dout_fifo (
    .clk_i,
    .rst_i      (dp_rst),
    .in_valid_i (dout_push),
    .in_ready_o (dout_fifo_ready),
    .in_data_i  ({dout_last, dout_data}),
    .out_valid_o(delta_valid_o),
    .out_ready_i(delta_ready_i),
    .out_data_o ({delta_last_o, delta_data_o}),
    .count_o    (dout_count)
  );
  assign dout_pop = delta_valid_o && delta_ready_i;

  logic        sout_fifo_ready, sout_head_valid, sout_head_last;
  logic [63:0] sout_head;
  logic [FifoCount-1:0] sout_count;
  prim_fifo #(.Width(65), .Depth(FifoDepth)) u_sout_fifo (
    .clk_i,
    .rst_i      (dp_rst),
    .in_valid_i (sout_push),
    .in_ready_o (sout_fifo_ready),
    .in_data_i  ({sout_last, sout_data}),
    .out_valid_o(sout_head_valid),
    .out_ready_i(sout_pop),
    .out_data_o ({sout_head_last, sout_head}),
    .count_o    (sout_count)
  );
  stream_unpack #(.Lanes(2)) u_sout_unpack (
    .clk_i,
    .rst_i      (dp_rst),
    .count_i    (run_gru ? 3'd1 : 3'd2),
    .in_valid_i (sout_head_valid),
    .in_pop_o   (sout_pop),
    .in_data_i  (sout_head),
    .in_last_i  (sout_head_last),
    .out_valid_o(state_out_valid_o),
    .out_ready_i(state_out_ready_i),
    .out_data_o (state_out_data_o),
    .out_last_o (state_out_last_o)
  );

  // ------------------------------------------------------ gate store port
  logic                    store_fifo_ready, store_head_valid;
  logic [MemAddrWidth+255:0] store_head;
  logic [FifoCount-1:0]    store_count;
  prim_fifo #(.Width(MemAddrWidth + 256), .Depth(FifoDepth)) u_store_fifo (
    .clk_i,
    .rst_i      (dp_rst),
    .in_valid_i (store_push),
    .in_ready_o (store_fifo_ready),
    .in_data_i  ({store_addr, store_data}),
    .out_valid_o(store_head_valid),
    .out_ready_i(store_pop),
    .out_data_o (store_head),
    .count_o    (store_count)
  );

  // Forward writes records; backward reads them. Every request is answered.
  // No request while the outstanding count is at its maximum (it never wraps).
  always_comb begin
    if (run_bw) begin
      mem_req_valid_o = rd_req_valid && !outst_full;
      mem_req_write_o = 1'b0;
      mem_req_addr_o  = rd_req_addr;
    end else begin
      mem_req_valid_o = store_head_valid && !outst_full;
      mem_req_write_o = 1'b1;
      mem_req_addr_o  = store_head[MemAddrWidth+255:256];
    end
  end
  assign mem_req_data_o = store_head[255:0];
  assign store_pop      = !run_bw && store_head_valid && mem_req_ready_i && !outst_full;

  // Requests without their response yet. A flush keeps the count: the
  // responses still due then are stale and dropped as they arrive (rsp_stale),
  // in order, before any response to a later request. A response with nothing
  // outstanding (the far side broke the reset contract) is dropped as well.
  logic [OutstWidth-1:0] outst_q, outst_d, stale_q, stale_d;
  logic                  outst_nz_q, outst_nz_d;  // outst_q != 0, registered (asserted)
  logic req_fire, rsp_fire, rsp_stale, flush_q;
  assign req_fire  = mem_req_valid_o && mem_req_ready_i;
  assign rsp_stale = (stale_q != '0) || !outst_nz_q;
  assign outst_full = &outst_q;
  assign rsp_fire  = mem_rsp_valid_i && mem_rsp_ready_o && outst_nz_q;
  assign outst_d   = outst_q + OutstWidth'(req_fire) - OutstWidth'(rsp_fire);
  // outst_d != 0 without its add: a request alone makes it non-zero, a
  // response alone leaves it non-zero unless it was 1; the request (the
  // store path's deepest signal) picks between the two at the end.
  assign outst_nz_d = req_fire ? (!rsp_fire || outst_nz_q) : (outst_nz_q && !(rsp_fire && outst_q == 1));
  // A stale response counts stale_q down: stale_q plus all ones, so that the
  // response's handshake enters the add with stale_q's bits (minus a
  // constant 1 would feed the carry chain through inverters, a LUT level
  // that ABC maps as free).
  always_comb begin
    stale_d = stale_q + {OutstWidth{rsp_fire && stale_q != '0}};
    if (flush && !flush_q) stale_d = outst_d;
  end
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      outst_q    <= '0;
      outst_nz_q <= 1'b0;
      stale_q    <= '0;
      flush_q    <= 1'b0;
    end else begin
      outst_q    <= outst_d;
      outst_nz_q <= outst_nz_d;
      stale_q    <= stale_d;
      flush_q    <= flush;
    end
  end

  // (From registers: the FIFO counts and outst_nz_q; the sequencer's S_DRAIN
  // exit follows drain_idle in the same cycle.)
  assign drain_busy = {(store_count != '0) || outst_nz_q, sout_count != '0,
                       dout_count != '0, hout_count != '0};
  assign drain_idle = (drain_busy == '0);

  // Progress for the watchdog: any handshake, chain token or finished unit.
  assign progress = (state_in_valid_i && state_in_ready_o) ||
                    xp_word || dh_word || hout_pop || dout_pop ||
                    (state_out_valid_o && state_out_ready_i) || req_fire || rsp_fire ||
                    tok_valid || unit_done;

  logic unused_engine;
  assign unused_engine = ^{res_zero, res_valid, unused_xp_count, unused_dh_count, unused_rec_count,
                           unused_desc_in_ready, unused_desc_count};

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (!rst_i) begin
      assert (!(hout_push && !hout_fifo_ready)) else $error("engine: h output FIFO overflow");
      assert (!(dout_push && !dout_fifo_ready)) else $error("engine: delta output FIFO overflow");
      assert (!(sout_push && !sout_fifo_ready)) else $error("engine: state output FIFO overflow");
      assert (!(store_push && !store_fifo_ready)) else $error("engine: gate store FIFO overflow");
      assert (!(desc_in_q && !unused_desc_in_ready)) else $error("engine: descriptor FIFO overflow");
      assert (outst_nz_q == (outst_q != '0)) else $error("engine: outst_nz_q differs from outst_q != 0");
    end
  end
`endif

endmodule

`default_nettype wire
