// Weight loader of the recurrent engine: runs a LOAD command beside the
// sequencer, so the next layer's (or the other direction's) weights arrive
// into one bank while FORWARD/BACKWARD computes on another.
// The weight stream carries WeightLanes words per beat. Lanes =
// min(WeightLanes, NumPe) words are written per cycle, one into each of Lanes
// PEs (a sub-beat); a beat holds floor(WeightLanes / Lanes) sub-beats, taken
// one per cycle. Order (engine::load_image): U by local row, column and PE
// group, then b_hh one unit per ceil(G / Lanes) sub-beats (written into the
// activation unit's bias RAMs, G gates at once).
// U words leave on the weight bus (bank address, group, Lanes words, lane
// mask), which the chain relays one register per group of Lanes PEs.
// Checks: bank, cell, hidden size, rows per PE within the bank, and the bank
// not in use by the command the sequencer runs (ERR_BANK_BUSY). Framing:
// `last` on the final beat (ERR_TOO_FEW_WORDS / ERR_TOO_MANY_WORDS, the
// surplus dropped up to its `last`). abort_i and the watchdog end a LOAD
// within 5 cycles; a bank the LOAD began to write stays invalid until a LOAD
// of it completes (an abort before that leaves every bank as it was).
// Throughput: one sub-beat per cycle; a layer takes
// R*H*ceil(NumPe/Lanes) + H*ceil(G/Lanes) cycles plus the set-up
// (floor(G*H/NumPe) + 4), the bus drain (ceil(NumPe/Lanes) + 4) and done
// (engine::load_cycles).
`default_nettype none

module loader #(
  parameter int unsigned NumPe       = 4,
  parameter int unsigned NumBanks    = 2,
  parameter int unsigned WeightDepth = 1024,   // words per bank in each PE
  parameter int unsigned WeightLanes = 16,
  parameter int unsigned MaxHidden   = 32,
  localparam int unsigned Lanes       = (WeightLanes < NumPe) ? WeightLanes : NumPe,
  localparam int unsigned SubBeats    = WeightLanes / Lanes,
  localparam int unsigned Groups      = (NumPe + Lanes - 1) / Lanes,
  localparam int unsigned GroupWidth  = (Groups > 1) ? $clog2(Groups) : 1,
  localparam int unsigned WAddrWidth  = $clog2(NumBanks * WeightDepth),
  localparam int unsigned JWidth      = (MaxHidden > 1) ? $clog2(MaxHidden) : 1,
  localparam int unsigned BankWidth   = (NumBanks > 1) ? $clog2(NumBanks) : 1,
  localparam int unsigned CountWidth  = $clog2(NumPe + 2)
) (
  input  logic                        clk_i,
  input  logic                        rst_i,
  // LOAD command and completion.
  input  logic                        load_valid_i,
  output logic                        load_ready_o,
  input  logic [7:0]                  load_bank_i,
  input  logic [1:0]                  load_cell_i,
  input  logic [15:0]                 load_hidden_i,
  input  logic [31:0]                 load_watchdog_i,  // cycles without progress; 0: off
  input  logic                        abort_i,
  output logic                        busy_o,
  output logic [BankWidth-1:0]        bank_o,           // the bank being loaded
  output logic                        done_o,
  output logic [4:0]                  status_o,
  output logic [3:0]                  status_unit_o,
  // The sequencer's command: first come, first served. A LOAD accepted while
  // a command on its bank runs is refused if that command still runs at the
  // LOAD's check (the engine never accepts both in one cycle).
  input  logic                        run_busy_i,
  input  logic [BankWidth-1:0]        run_bank_i,
  // Which banks hold weights, for which cell and hidden size.
  output logic [NumBanks-1:0]         bank_valid_o,
  output logic [NumBanks*2-1:0]       bank_cell_o,
  output logic [NumBanks*16-1:0]      bank_hidden_o,
  // Weight stream.
  input  logic                        weight_valid_i,
  output logic                        weight_ready_o,
  input  logic [WeightLanes*32-1:0]   weight_data_i,
  input  logic                        weight_last_i,
  // Weight bus to the chain, bias writes to the activation unit.
  output logic                        wbus_valid_o,
  output logic [GroupWidth-1:0]       wbus_group_o,
  output logic [WAddrWidth-1:0]       wbus_addr_o,
  output logic [Lanes-1:0]            wbus_mask_o,
  output logic [Lanes*32-1:0]         wbus_data_o,
  output logic                        wflush_o,         // clear the bus relay
  output logic [3:0]                  bias_we_o,        // per gate
  output logic [BankWidth-1:0]        bias_bank_o,
  output logic [JWidth-1:0]           bias_unit_o,
  output logic [127:0]                bias_data_o,      // gate g in bits g*32
  // Words written, measured at the RAM write ports (PEs, bias RAMs).
  input  logic [CountWidth-1:0]       pe_words_i,
  output logic [63:0]                 cnt_cycles_o,
  output logic [63:0]                 cnt_words_o
);

  localparam int unsigned CW = 40;

  typedef enum logic [3:0] {
    L_IDLE, L_SETUP, L_DIVIDE, L_CHECK, L_RUN, L_DRAIN, L_ABORT, L_SKIP, L_DONE
  } state_e;
  state_e state_q, state_d;
  logic   done_q;  // state_q == L_DONE (done_o)

  logic [BankWidth-1:0]    bank_q, bank_d;
  logic [7:0]              bank_in_q, bank_in_d;
  logic [1:0]              cell_q, cell_d;
  logic [15:0]             hid_q, hid_d;
  logic [31:0]             wd_lim_q, wd_lim_d, wd_q, wd_d;
  logic [4:0]              status_q, status_d;
  logic [3:0]              unit_q, unit_d;
  logic                    skip_q, skip_d;
  logic                    after_run_q, after_run_d;  // a command on this bank came first
  logic [17:0]             gh_q, gh_d, rem_q, rem_d, quo_q, quo_d;
  logic [15:0]             hm1_q, hm1_d;          // H - 1: the last column / bias unit
  logic [17:0]             rm1_q, rm1_d;          // R - 1: the last local row
  logic [CW-1:0]           rh_q, rh_d;            // R*H: words per PE
  logic [CW-1:0]           qh_q, qh_d;            // quo*H, kept by adds beside quo (no multiplier)
  logic [7:0]              drain_q, drain_d;
  // Position in the stream.
  logic                    in_bias_q, in_bias_d;   // past U: b_hh sub-beats
  logic [17:0]             lr_q, lr_d;             // U local row
  logic [15:0]             c_q, c_d;               // U column / bias unit
  logic [GroupWidth-1:0]   q_q, q_d;               // U PE group
  logic [2:0]              gs_q, gs_d;             // bias: first gate of this sub-beat
  logic [CW-1:0]           row_addr_q, row_addr_d; // lr*H within the bank
  logic [CW-1:0]           kq_q, kq_d;             // chain row of lane 0: lr*P + q*Lanes
  logic [CW-1:0]           lrp_q, lrp_d;           // lr*P
  logic [$clog2(SubBeats + 1)-1:0] sub_q, sub_d;   // sub-beat within the beat
  // Bank table.
  logic [NumBanks-1:0]     bv_q, bv_d;
  logic [NumBanks*2-1:0]   bc_q, bc_d;
  logic [NumBanks*16-1:0]  bh_q, bh_d;
  // Counters.
  logic [63:0]             c_cyc_q, c_cyc_d, c_w_q, c_w_d;
  // Bus register.
  logic                    wb_valid_q, wb_valid_d;
  logic [GroupWidth-1:0]   wb_group_q, wb_group_d;
  logic [WAddrWidth-1:0]   wb_addr_q, wb_addr_d;
  logic [Lanes-1:0]        wb_mask_q, wb_mask_d;
  logic [Lanes*32-1:0]     wb_data_q, wb_data_d;

  logic [2:0] gates;
  assign gates = (cell_q == engine_pkg::CELL_GRU) ? 3'd3 : 3'd4;

  // The current sub-beat's words.
  logic [Lanes*32-1:0] sub_data;
  assign sub_data = weight_data_i[32'(sub_q) * Lanes * 32 +: Lanes * 32];

  // Last sub-beat of the command: the final bias sub-beat.
  logic last_u, last_bias_of_unit, final_sub, beat_end;
  logic c_end;  // the last column (U) or bias unit
  // c == H - 1, registered: c only steps by one or clears, so the flag
  // follows from compares on registers beside the step (c_move).
  logic        c_end_q, c_end_d;
  logic [1:0]  c_move;   // 0 c stays, 1 c + 1, 2 c cleared
  logic [15:0] hm2_q;    // H - 2 (c + 1 == H - 1 <=> c == H - 2)
  logic        h_one_q;  // H == 1
  always_comb begin
    unique case (c_move)
      2'd1:    c_end_d = (c_q == hm2_q);
      2'd2:    c_end_d = h_one_q;
      default: c_end_d = c_end_q;
    endcase
  end
  always_ff @(posedge clk_i) begin
    c_end_q <= c_end_d;
    hm2_q   <= hm1_q - 1'b1;
    h_one_q <= (hm1_q == 0);
  end
  assign c_end             = c_end_q;
  assign last_u            = (32'(q_q) + 1 == Groups) && c_end && (lr_q == rm1_q);
  assign last_bias_of_unit = (32'(gs_q) + Lanes >= 32'(gates));
  assign final_sub         = in_bias_q && last_bias_of_unit && c_end;
  assign beat_end          = (32'(sub_q) + 1 == SubBeats) || final_sub;

  logic progress;
  logic frame_err;  // a framing error ends the LOAD this cycle (L_RUN)
  assign progress = weight_valid_i && (weight_ready_o || state_q == L_RUN);

  always_comb begin
    state_d    = state_q;
    bank_d     = bank_q;
    bank_in_d  = bank_in_q;
    cell_d     = cell_q;
    hid_d      = hid_q;
    wd_lim_d   = wd_lim_q;
    wd_d       = (progress || (state_q != L_RUN && state_q != L_SKIP)) ? '0 : wd_q + 1;
    status_d   = status_q;
    unit_d     = unit_q;
    skip_d     = skip_q;
    // The command seen at acceptance, as long as it runs (the next one came later).
    after_run_d = after_run_q && run_busy_i;
    gh_d       = gh_q;
    rem_d      = rem_q;
    quo_d      = quo_q;
    hm1_d      = hm1_q;
    rm1_d      = rm1_q;
    frame_err  = 1'b0;
    rh_d       = rh_q;
    qh_d       = qh_q;
    drain_d    = (drain_q != 0) ? drain_q - 1 : drain_q;
    in_bias_d  = in_bias_q;
    lr_d       = lr_q;
    c_d        = c_q;
    c_move     = 2'd0;
    q_d        = q_q;
    gs_d       = gs_q;
    row_addr_d = row_addr_q;
    kq_d       = kq_q;
    lrp_d      = lrp_q;
    sub_d      = sub_q;
    bv_d       = bv_q;
    bc_d       = bc_q;
    bh_d       = bh_q;
    c_cyc_d    = c_cyc_q + 64'(state_q != L_IDLE);
    c_w_d      = c_w_q + 64'(pe_words_i);
    wb_valid_d = 1'b0;
    wb_group_d = wb_group_q;
    wb_addr_d  = wb_addr_q;
    wb_mask_d  = wb_mask_q;
    wb_data_d  = wb_data_q;

    load_ready_o   = 1'b0;
    weight_ready_o = 1'b0;
    wflush_o       = (state_q == L_ABORT);
    bias_we_o      = '0;
    bias_data_o    = '0;

    unique case (state_q)
      L_IDLE: begin
        load_ready_o = 1'b1;
        if (load_valid_i) begin
          bank_in_d = load_bank_i;
          bank_d    = BankWidth'(load_bank_i);
          cell_d    = load_cell_i;
          hid_d     = load_hidden_i;
          wd_lim_d  = load_watchdog_i;
          unit_d    = engine_pkg::UNIT_NONE;
          skip_d    = 1'b0;
          after_run_d = run_busy_i && (run_bank_i == BankWidth'(load_bank_i));
          c_cyc_d   = 64'd1;
          c_w_d     = '0;
          state_d   = L_SETUP;
        end
      end

      L_SETUP: begin
        gh_d    = engine_pkg::gate_rows_of(cell_q == engine_pkg::CELL_GRU, hid_q);
        rem_d   = gh_d;
        quo_d   = '0;
        qh_d    = '0;
        hm1_d   = hid_q - 1'b1;
        state_d = L_DIVIDE;
        if (engine_pkg::layer_error(bank_in_q, NumBanks, cell_q, hid_q, MaxHidden) != engine_pkg::ERR_NONE) begin
          status_d = engine_pkg::layer_error(bank_in_q, NumBanks, cell_q, hid_q, MaxHidden);
          state_d  = L_DONE;
        end
      end

      // R = ceil(G*H / NumPe) by repeated subtraction (no divider).
      L_DIVIDE: begin
        if (32'(rem_q) >= NumPe) begin
          rem_d = rem_q - 18'(NumPe);
          quo_d = quo_q + 18'd1;
          qh_d  = qh_q + CW'(hid_q);
        end else begin
          rm1_d   = quo_q + 18'(rem_q != 0) - 1'b1;
          rh_d    = qh_q + ((rem_q != 0) ? CW'(hid_q) : '0);  // (quo + (rem != 0)) * H
          state_d = L_CHECK;
        end
      end

      L_CHECK: begin
        state_d    = L_RUN;
        in_bias_d  = 1'b0;
        lr_d       = '0;
        c_d        = '0;
        c_move     = 2'd2;
        q_d        = '0;
        gs_d       = '0;
        row_addr_d = '0;
        kq_d       = '0;
        lrp_d      = '0;
        sub_d      = '0;
        if (rh_q > CW'(WeightDepth)) begin
          status_d = engine_pkg::ERR_HIDDEN_TOO_LARGE;
          state_d  = L_DONE;
        end else if (after_run_q && run_busy_i && run_bank_i == bank_q) begin
          status_d = engine_pkg::ERR_BANK_BUSY;
          state_d  = L_DONE;
        end else begin
          status_d   = engine_pkg::ERR_NONE;
          bv_d[bank_q] = 1'b0;
        end
      end

      // One sub-beat per cycle.
      L_RUN: begin
        if (weight_valid_i) begin
          weight_ready_o = beat_end;
          sub_d = beat_end ? '0 : sub_q + 1'b1;
          if (!in_bias_q) begin
            wb_valid_d = 1'b1;
            wb_group_d = q_q;
            wb_addr_d  = WAddrWidth'(CW'(bank_q) * CW'(WeightDepth) + row_addr_q + CW'(c_q));
            wb_data_d  = sub_data;
            for (int l = 0; l < Lanes; l++) begin
              wb_mask_d[l] = (32'(q_q) * Lanes + l < NumPe) && (kq_q + CW'(l) < CW'(gh_q));
            end
            q_d  = q_q + 1'b1;
            kq_d = kq_q + CW'(Lanes);
            if (32'(q_q) + 1 == Groups) begin
              q_d  = '0;
              kq_d = lrp_q;
              c_d    = c_q + 1'b1;
              c_move = 2'd1;
              if (c_end) begin
                c_d        = '0;
                c_move     = 2'd2;
                lr_d       = lr_q + 1'b1;
                row_addr_d = row_addr_q + CW'(hid_q);
                lrp_d      = lrp_q + CW'(NumPe);
                kq_d       = lrp_q + CW'(NumPe);
              end
            end
            if (last_u) in_bias_d = 1'b1;
          end else begin
            // b_hh of unit c: lanes carry gates gs .. gs+Lanes-1.
            for (int g = 0; g < 4; g++) begin
              if (g < 32'(gates) && g >= 32'(gs_q) && g < 32'(gs_q) + Lanes) begin
                bias_we_o[g]            = 1'b1;
                bias_data_o[g*32 +: 32] = sub_data[(g - 32'(gs_q)) * 32 +: 32];
              end
            end
            gs_d = last_bias_of_unit ? '0 : gs_q + 3'(Lanes);
            if (last_bias_of_unit) begin
              c_d    = c_q + 1'b1;
              c_move = 2'd1;
            end
          end
          // Framing, checked on the beat that ends.
          if (beat_end && final_sub && weight_last_i) begin
            drain_d = 8'(Groups + 3);
            state_d = L_DRAIN;
          end else if (beat_end && (final_sub || weight_last_i)) begin
            frame_err = 1'b1;
            status_d = final_sub ? engine_pkg::ERR_TOO_MANY_WORDS : engine_pkg::ERR_TOO_FEW_WORDS;
            unit_d   = engine_pkg::UNIT_WEIGHT;
            skip_d   = final_sub;
            drain_d  = 8'd2;
            state_d  = L_ABORT;
          end
        end
      end

      // The last words travel to the last PE group.
      L_DRAIN: begin
        if (drain_q == 0) begin
          bv_d[bank_q]           = 1'b1;
          bc_d[bank_q*2 +: 2]    = cell_q;
          bh_d[bank_q*16 +: 16]  = hid_q;
          state_d                = L_DONE;
        end
      end

      L_ABORT: begin
        if (abort_i) skip_d = 1'b0;  // an abort also cancels the surplus drop
        if (drain_q == 0) state_d = (skip_q && !abort_i) ? L_SKIP : L_DONE;
      end

      // The surplus after ERR_TOO_MANY_WORDS, up to and including `last`.
      L_SKIP: begin
        weight_ready_o = 1'b1;
        if (weight_valid_i && weight_last_i) state_d = L_DONE;
      end

      L_DONE: begin
        state_d = L_IDLE;
      end

      default: state_d = L_IDLE;
    endcase

    // Bias words are counted at the bias RAMs' write enables.
    c_w_d = c_w_d + 64'(bias_we_o[0]) + 64'(bias_we_o[1]) + 64'(bias_we_o[2]) + 64'(bias_we_o[3]);

    // Abort and watchdog. Abort wins over a framing error of the same cycle.
    // Before L_RUN nothing was written: the LOAD just ends (its bank, maybe
    // not even a legal one, untouched); from L_RUN on the bank stays invalid
    // (cleared when the LOAD passed its checks) and the weight bus is cleared.
    if (state_q == L_SKIP && (abort_i || (wd_lim_q != 0 && wd_q >= wd_lim_q))) begin
      if (!abort_i) status_d = engine_pkg::ERR_TIMEOUT;
      state_d = L_DONE;
    end else if (state_q == L_SETUP || state_q == L_DIVIDE || state_q == L_CHECK) begin
      if (abort_i) begin
        status_d = engine_pkg::ERR_ABORTED;
        bv_d     = bv_q;
        state_d  = L_DONE;
      end
    end else if (state_q == L_RUN || state_q == L_DRAIN) begin
      if (abort_i || (!frame_err && wd_lim_q != 0 && wd_q >= wd_lim_q)) begin
        status_d = abort_i ? engine_pkg::ERR_ABORTED : engine_pkg::ERR_TIMEOUT;
        unit_d   = abort_i ? engine_pkg::UNIT_NONE : engine_pkg::UNIT_WEIGHT;
        skip_d   = 1'b0;
        drain_d  = 8'd2;
        state_d  = L_ABORT;
        bv_d[bank_q] = 1'b0;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      state_q    <= L_IDLE;
      done_q     <= 1'b0;
      status_q   <= engine_pkg::ERR_NONE;
      unit_q     <= engine_pkg::UNIT_NONE;
      skip_q     <= 1'b0;
      wd_q       <= '0;
      drain_q    <= '0;
      sub_q      <= '0;
      bv_q       <= '0;
      c_cyc_q    <= '0;
      c_w_q      <= '0;
      wb_valid_q <= 1'b0;
    end else begin
      state_q    <= state_d;
      done_q     <= (state_d == L_DONE);
      status_q   <= status_d;
      unit_q     <= unit_d;
      skip_q     <= skip_d;
      wd_q       <= wd_d;
      drain_q    <= drain_d;
      sub_q      <= sub_d;
      bv_q       <= bv_d;
      c_cyc_q    <= c_cyc_d;
      c_w_q      <= c_w_d;
      wb_valid_q <= wb_valid_d && !wflush_o;
    end
  end
  always_ff @(posedge clk_i) begin
    bank_q     <= bank_d;
    bank_in_q  <= bank_in_d;
    after_run_q <= after_run_d;
    cell_q     <= cell_d;
    hid_q      <= hid_d;
    wd_lim_q   <= wd_lim_d;
    gh_q       <= gh_d;
    rem_q      <= rem_d;
    quo_q      <= quo_d;
    hm1_q      <= hm1_d;
    rm1_q      <= rm1_d;
    rh_q       <= rh_d;
    qh_q       <= qh_d;
    in_bias_q  <= in_bias_d;
    lr_q       <= lr_d;
    c_q        <= c_d;
    q_q        <= q_d;
    gs_q       <= gs_d;
    row_addr_q <= row_addr_d;
    kq_q       <= kq_d;
    lrp_q      <= lrp_d;
    bc_q       <= bc_d;
    bh_q       <= bh_d;
    wb_group_q <= wb_group_d;
    wb_addr_q  <= wb_addr_d;
    wb_mask_q  <= wb_mask_d;
    wb_data_q  <= wb_data_d;
  end

  assign busy_o        = (state_q != L_IDLE);
  assign bank_o        = bank_q;
  // done_o is state_q == L_DONE from a register of its own: the dispatcher
  // reads it through its whole fault and retirement logic.
  assign done_o        = done_q;
  assign status_o      = status_q;
  assign status_unit_o = unit_q;
  assign bank_valid_o  = bv_q;
  assign bank_cell_o   = bc_q;
  assign bank_hidden_o = bh_q;
  assign wbus_valid_o  = wb_valid_q;
  assign wbus_group_o  = wb_group_q;
  assign wbus_addr_o   = wb_addr_q;
  assign wbus_mask_o   = wb_mask_q;
  assign wbus_data_o   = wb_data_q;
  assign bias_bank_o   = bank_q;
  assign bias_unit_o   = JWidth'(c_q);
  assign cnt_cycles_o  = c_cyc_q;
  assign cnt_words_o   = c_w_q;

`ifndef SYNTHESIS
  initial begin
    if (NumBanks < 1 || NumBanks > 256) $error("loader: NumBanks must be 1..256");
    if (WeightLanes < 1) $error("loader: WeightLanes must be >= 1");
    if (Groups + 3 > 255) $error("loader: drain counter too narrow");
  end
  always_ff @(posedge clk_i) begin
    if (!rst_i) begin
      assert (state_q != L_RUN || c_end_q == (c_q == hm1_q))
      else $error("loader: the registered last-column flag differs from c == H - 1");
      assert (state_q != L_DIVIDE || qh_q == CW'(quo_q) * CW'(hid_q))
      else $error("loader: quo * H kept by adds differs from the product");
      assert (state_q != L_CHECK || rh_q == (CW'(rm1_q) + 1'b1) * CW'(hid_q))
      else $error("loader: R * H differs from the product");
      assert (done_q == (state_q == L_DONE))
      else $error("loader: done_q differs from state_q == L_DONE");
    end
  end
`endif

endmodule

`default_nettype wire
