// Constants shared by the recurrent engine: chain token opcodes, commands,
// cell types, error codes, FP32 constants, and the fixed timing relations
// between the PE pipeline and the sequencer (see docs/architecture.md,
// "Recurrent engine", for the derivations).
package engine_pkg;

  // Tokens on the PE chain's input relay.
  localparam logic [1:0] TOK_ELEM   = 2'd0;  // FW: h_{t-1}[j] broadcast to every PE
  localparam logic [1:0] TOK_ROW    = 2'd1;  // BW: delta rows k for PEs (k mod NumPe), RowLanes a token
  localparam logic [1:0] TOK_REDUCE = 2'd3;  // BW: start the cross-PE reduction wave

  // Commands. LOAD goes to the loader's port, FORWARD/BACKWARD to the sequencer's.
  localparam logic [1:0] CMD_LOAD     = 2'd0;  // U then b_hh (engine::load_image layout)
  localparam logic [1:0] CMD_FORWARD  = 2'd1;
  localparam logic [1:0] CMD_BACKWARD = 2'd2;

  // Cell types.
  localparam logic [1:0] CELL_LSTM = 2'd0;
  localparam logic [1:0] CELL_GRU  = 2'd1;

  // Command status (error) codes. sw/include/farnn/engine_abi.hpp holds the same
  // codes with their names for C++; tests/engine/test_engine_abi compares them.
  localparam logic [4:0] ERR_NONE             = 5'd0;
  localparam logic [4:0] ERR_BAD_CELL         = 5'd1;
  localparam logic [4:0] ERR_HIDDEN_ZERO      = 5'd2;
  localparam logic [4:0] ERR_HIDDEN_TOO_LARGE = 5'd3;
  localparam logic [4:0] ERR_BATCH_ZERO       = 5'd4;
  localparam logic [4:0] ERR_BATCH_TOO_LARGE  = 5'd5;
  localparam logic [4:0] ERR_STEPS_ZERO       = 5'd6;
  localparam logic [4:0] ERR_STORE_TOO_SMALL  = 5'd7;
  localparam logic [4:0] ERR_NO_WEIGHTS       = 5'd8;
  localparam logic [4:0] ERR_NO_FORWARD       = 5'd9;
  localparam logic [4:0] ERR_BAD_COMMAND      = 5'd10;
  localparam logic [4:0] ERR_STORE_MISALIGNED = 5'd11;  // base not a multiple of RECORD_BYTES
  localparam logic [4:0] ERR_STORE_WRAP       = 5'd12;  // base + size beyond the address space
  localparam logic [4:0] ERR_TOO_FEW_WORDS    = 5'd13;  // `last` before the command's final word
  localparam logic [4:0] ERR_TOO_MANY_WORDS   = 5'd14;  // no `last` on the command's final word
  localparam logic [4:0] ERR_TIMEOUT          = 5'd15;  // watchdog: no progress for the limit
  localparam logic [4:0] ERR_ABORTED          = 5'd16;  // abort_i
  localparam logic [4:0] ERR_BAD_BANK         = 5'd17;  // bank >= NumBanks
  localparam logic [4:0] ERR_BANK_BUSY        = 5'd18;  // the bank is being loaded / computed on
  localparam logic [4:0] ERR_BAD_LENGTH       = 5'd19;  // a sequence length outside 1..T

  // The stream or port a framing or timeout error names (status_unit_o).
  localparam logic [3:0] UNIT_NONE       = 4'd0;
  localparam logic [3:0] UNIT_WEIGHT     = 4'd1;
  localparam logic [3:0] UNIT_STATE_IN   = 4'd2;
  localparam logic [3:0] UNIT_XP         = 4'd3;
  localparam logic [3:0] UNIT_DH         = 4'd4;
  localparam logic [3:0] UNIT_H          = 4'd5;
  localparam logic [3:0] UNIT_DELTA      = 4'd6;
  localparam logic [3:0] UNIT_STATE_OUT  = 4'd7;
  localparam logic [3:0] UNIT_GATE_STORE = 4'd8;

  localparam logic [31:0] FP_NEG_ZERO = 32'h8000_0000;  // x + (-0) == x exactly
  localparam logic [31:0] FP_ONE      = 32'h3f80_0000;

  // Bytes per gate-store record (one 256-bit word per hidden unit and step).
  localparam int unsigned RECORD_BYTES = 32;
  // Finished FORWARDs the sequencer remembers for BACKWARD (a stacked,
  // bidirectional model runs every forward before the first backward).
  localparam int unsigned FW_RECORDS = 8;

  // PE timing. A MAC issued at cycle i reads the weight RAM at i, multiplies at
  // i+1, reads the accumulator at i+MulLatency, adds at i+1+MulLatency and
  // writes back at the end of cycle i+1+MulLatency+AddLatency.
  // FW with fewer than FW_SPLIT_ROWS rows a PE: S sums per row (2
  // for 3-4 rows, 4 for 2, 8 for 1, at most the largest power of two <= H),
  // column c in sum c mod S, added on the PE's adder once the step's last
  // element's sum leaves it: from the sum holding column H-1 on, in cyclic
  // order, S-1 dependent adds. An accumulator is revisited every S elements.
  // Sum s of local row lr sits at accumulator word bank << 3 | (s << (3 -
  // log2 S)) | lr (rows * S <= 8 words a bank; the PE's bank bit turns at
  // each step's last element). Rows only, no timing parameter: the numbers
  // do not depend on the FP latencies.
  localparam int unsigned FW_SPLIT_ROWS = 5;
  // log2 of the sums per row, 0..3 (comparisons only: the PEs derive it from
  // a command's configuration at run time).
  function automatic int unsigned fw_sums_log2(input int unsigned rows, input int unsigned hidden);
    int unsigned by_rows, by_hidden;
    by_rows   = (rows >= FW_SPLIT_ROWS) ? 0 : (rows >= 3) ? 1 : (rows == 2) ? 2 : 3;
    by_hidden = (hidden >= 8) ? 3 : (hidden >= 4) ? 2 : (hidden >= 2) ? 1 : 0;
    fw_sums_log2 = (by_rows < by_hidden) ? by_rows : by_hidden;
  endfunction
  // Cycles the final adds of several sums wait after the last element's sum
  // leaves the adder, so that they miss its last MACs' accumulator reads (only
  // where AddLatency + 2 <= FW_SPLIT_ROWS - 1, i.e. AddLatency < 3).
  function automatic int unsigned fw_split_wait(input int unsigned add_lat);
    fw_split_wait = (add_lat + 2 < FW_SPLIT_ROWS) ? FW_SPLIT_ROWS - 2 - add_lat : 0;
  endfunction
  // The final adds of S = 2^sums_log2 sums: from the last element's sum out
  // of the adder to the last add's start, fw_split_wait + (S-1)*(AddLatency
  // + 1) cycles (0 with one sum; shifts, no multiply).
  function automatic int unsigned fw_final_adds(input int unsigned add_lat, input int unsigned sums_log2);
    fw_final_adds = (sums_log2 > 0) ? fw_split_wait(add_lat) + ((add_lat + 1) << sums_log2) - (add_lat + 1) : 0;
  endfunction
  // Cycles after a FW token's arrival before a PE drains its first result
  // (with several sums the final adds come on top).
  function automatic int unsigned pe_drain_delay(input int unsigned mul_lat,
                                                 input int unsigned add_lat, input int unsigned sums_log2);
    pe_drain_delay = mul_lat + add_lat + 4 + fw_final_adds(add_lat, sums_log2);
  endfunction

  // The checks a LOAD and a FORWARD/BACKWARD share: bank, cell type, hidden
  // size. ERR_NONE when the layer can exist in this engine.
  function automatic logic [4:0] layer_error(input logic [7:0] bank, input int unsigned num_banks,
                                             input logic [1:0] cell_type, input logic [15:0] hidden,
                                             input int unsigned max_hidden);
    if (32'(bank) >= num_banks)                     layer_error = ERR_BAD_BANK;
    else if (cell_type != CELL_LSTM && cell_type != CELL_GRU) layer_error = ERR_BAD_CELL;
    else if (hidden == 0)                           layer_error = ERR_HIDDEN_ZERO;
    else if (32'(hidden) > max_hidden)              layer_error = ERR_HIDDEN_TOO_LARGE;
    else                                            layer_error = ERR_NONE;
  endfunction

  // G*H, the gate rows of a layer: 3H (GRU) or 4H (LSTM), as a shift and an
  // add. Written as `H * 3`, Yosys puts it on a DSP48E2 without registers,
  // whose 5 levels (the clock rule's count for such a DSP) ended in the
  // sequencer's and the loader's division remainder at 7 levels.
  function automatic logic [17:0] gate_rows_of(input logic is_gru, input logic [15:0] hidden);
    gate_rows_of = is_gru ? (18'(hidden) << 1) + 18'(hidden) : 18'(hidden) << 2;
  endfunction

  // The sequencer's spacing rules, all in one place (the cycle model in
  // sw/lib/engine_cycles.cpp mirrors them by name). rows = ceil(G*H / NumPe).
  // FW: cycles between ELEM tokens. A PE does its rows' MACs on each element,
  // and revisits an accumulator no sooner than AddLatency + 2 cycles later
  // (S sums: S elements later).
  // (The *_sums forms take l = fw_sums_log2(rows, hidden) itself: the
  // sequencer registers it a cycle before it derives the rules.)
  function automatic int unsigned fw_elem_spacing_sums(input int unsigned rows, input int unsigned l,
                                                       input int unsigned add_lat);
    int unsigned revisit;
    revisit = (add_lat + 2 + (1 << l) - 1) >> l;
    fw_elem_spacing_sums = (rows > revisit) ? rows : revisit;
  endfunction
  function automatic int unsigned fw_elem_spacing(input int unsigned rows, input int unsigned hidden,
                                                  input int unsigned add_lat);
    fw_elem_spacing = fw_elem_spacing_sums(rows, fw_sums_log2(rows, hidden), add_lat);
  endfunction
  // FW: with S sums, a step's last element's final adds take the
  // accumulator read port and the adder up to this many cycles after its
  // last ELEM: fw_split_wait + (S-1)*(AddLatency + 1) + rows (0 with one sum).
  function automatic int unsigned fw_sums_clear(input int unsigned rows, input int unsigned l,
                                                input int unsigned add_lat);
    fw_sums_clear = (l > 0) ? fw_final_adds(add_lat, l) + rows : 0;
  endfunction
  // FW: a step's last ELEM to the next step's first (another sequence's, with
  // B > 1). The next step's MACs write the other half of the accumulators
  // (the PE's sum bank), so they run beside the last element's final adds,
  // skipping only the adder's cycles those take (fw_step_holes); at least
  // FW_STEP_MIN cycles, for the slot flags that follow the step's slot.
  localparam int unsigned FW_STEP_MIN = 3;
  function automatic int unsigned fw_step_spacing_sums(input int unsigned rows, input int unsigned l,
                                                       input int unsigned add_lat);
    fw_step_spacing_sums = fw_elem_spacing_sums(rows, l, add_lat);
    if (fw_step_spacing_sums < FW_STEP_MIN) fw_step_spacing_sums = FW_STEP_MIN;
  endfunction
  function automatic int unsigned fw_step_spacing(input int unsigned rows, input int unsigned hidden,
                                                  input int unsigned add_lat);
    fw_step_spacing = fw_step_spacing_sums(rows, fw_sums_log2(rows, hidden), add_lat);
  endfunction
  // FW: the ELEM offsets after a step's last ELEM that the next step's
  // ELEMs skip (bit d: d cycles after it). Final add k (1..S-1) of the last
  // element's row r enters the adder, and reads the accumulator a cycle
  // before, where the MAC of row r' of an ELEM d cycles later would, for
  // d = fw_split_wait + k*(AddLatency + 1) + r - r': |d - (fw_split_wait +
  // k*(AddLatency + 1))| < rows. rows clamped to 7 (S > 1 means rows <= 4),
  // so each bit is a function of five bits. Offsets below fw_sums_clear.
  function automatic logic [63:0] fw_step_holes(input int unsigned rows_in, input logic [1:0] l,
                                                input int unsigned add_lat);
    int unsigned centre;
    logic [2:0]  rows;
    rows = (rows_in > 7) ? 3'd7 : 3'(rows_in);
    fw_step_holes = '0;
    for (int unsigned k = 1; k < 8; k++) begin
      centre = fw_split_wait(add_lat) + k * (add_lat + 1);
      for (int unsigned d = 0; d < 64; d++) begin
        if (k < (32'd1 << l) && d + 32'(rows) > centre && d < centre + 32'(rows)) fw_step_holes[d] = 1'b1;
      end
    end
  endfunction
  // FW: a step's last ELEM comes at least this many cycles after the previous
  // step's. Row k = lr*NumPe + p drains in slot DrainDelay + k div ResLanes
  // after the last ELEM, so a step's results leave in slots DrainDelay ..
  // DrainDelay + drain_slots - 1 (drain_slots: G*H with one result lane, H
  // with four). A step's slots follow the previous step's (drain_slots + 4),
  // and a PE holds two steps' drain jobs (one waiting), so the step two back
  // must have drained: two gaps cover at least DrainDelay + drain_slots + 3.
  function automatic int unsigned fw_result_gap_sums(input int unsigned drain_slots, input int unsigned l,
                                                     input int unsigned mul_lat, input int unsigned add_lat);
    int unsigned two_back;
    two_back           = (drain_slots + pe_drain_delay(mul_lat, add_lat, l) + 4) >> 1;
    fw_result_gap_sums = (drain_slots + 4 > two_back) ? drain_slots + 4 : two_back;
  endfunction
  function automatic int unsigned fw_result_gap(input int unsigned rows, input int unsigned drain_slots,
                                                input int unsigned hidden, input int unsigned mul_lat,
                                                input int unsigned add_lat);
    fw_result_gap = fw_result_gap_sums(drain_slots, fw_sums_log2(rows, hidden), mul_lat, add_lat);
  endfunction
  // FW: the least distance between two steps' last ELEMs: the result gap,
  // and with S sums the previous step's final adds (fw_sums_clear), so that
  // two steps' final adds never meet and a sum bank is free again before the
  // step after next writes it.
  function automatic int unsigned fw_last_gap(input int unsigned rows, input int unsigned drain_slots,
                                              input int unsigned hidden, input int unsigned mul_lat,
                                              input int unsigned add_lat);
    int unsigned clear;
    clear       = fw_sums_clear(rows, fw_sums_log2(rows, hidden), add_lat);
    fw_last_gap = fw_result_gap(rows, drain_slots, hidden, mul_lat, add_lat);
    if (fw_last_gap < clear) fw_last_gap = clear;
  endfunction
  // BW: ROW tokens. A token carries the delta rows of RowLanes consecutive PEs
  // of a chain (a group; RowLanes 1 or 4, a lane-valid mask marks rows past
  // G*H). A wave (rows w*P .. w*P+P-1) is a grid of chain_len/RowLanes lines:
  // line m4 sends group m4 of chains 0, 1, .. (the chains the wave reaches),
  // and the next line starts `pitch` cycles after it. A token reaches the PE
  // at chain position m about m cycles after its chain's head, a REDUCE's
  // partials pass it m*(AddLatency+2) cycles after the head: the sparse pitch
  // RowLanes*(AddLatency+1) keeps the two in step, so the skews below stay
  // near (chains - 1) + (RowLanes - 1)*(AddLatency+1) whatever the PE count.
  // Where the sparse grid outlasts a PE's H MACs, lines follow each other
  // (pitch = chains: the dense grid) and the skews grow instead.
  function automatic int unsigned bw_pitch_sparse(input int unsigned num_chains, input int unsigned lanes,
                                                  input int unsigned add_lat);
    bw_pitch_sparse = (num_chains > lanes * (add_lat + 1)) ? num_chains : lanes * (add_lat + 1);
  endfunction
  // BW: cycles from a wave's first line to its last, (lines - 1) * pitch:
  // the one product of the grid's rules. The rules below take it as `lp`
  // (the sequencer registers it ahead of the cycle that derives them).
  function automatic int unsigned bw_line_span(input int unsigned pitch, input int unsigned lines);
    bw_line_span = (lines - 1) * pitch;
  endfunction
  // BW: cycles a wave's tokens take, first to last + 1, for the chains it reaches.
  function automatic int unsigned bw_wave_span(input int unsigned chains_reached, input int unsigned lp);
    bw_wave_span = lp + chains_reached;
  endfunction
  // The pitch of a command: sparse unless its grid outlasts max(H, AddLatency + 2).
  function automatic int unsigned bw_pitch(input int unsigned hidden, input int unsigned num_chains,
                                           input int unsigned lines, input int unsigned lanes,
                                           input int unsigned add_lat);
    int unsigned sparse, busy;
    sparse = bw_pitch_sparse(num_chains, lanes, add_lat);
    busy   = (hidden > add_lat + 2) ? hidden : add_lat + 2;
    bw_pitch = (bw_wave_span(num_chains, bw_line_span(sparse, lines)) <= busy) ? sparse : num_chains;
  endfunction
  // The skews the grid leaves: the REDUCE waits for the latest token relative
  // to the reduction's sweep (plus the chains the last wave reaches, - 1),
  // the next wave for the earliest.
  // (lines - 1) * (pitch - sparse) is lp minus a constant product.
  function automatic int unsigned bw_skew_reduce(input int unsigned pitch, input int unsigned lp,
                                                 input int unsigned lines, input int unsigned lanes,
                                                 input int unsigned add_lat);
    bw_skew_reduce = (pitch > lanes * (add_lat + 1)) ? lp - (lines - 1) * lanes * (add_lat + 1) : 0;
  endfunction
  function automatic int unsigned bw_skew_next(input int unsigned gate_rows, input int unsigned pitch,
                                               input int unsigned lp, input int unsigned lines,
                                               input int unsigned lanes, input int unsigned add_lat);
    bw_skew_next = ((gate_rows < lanes) ? gate_rows - 1 : lanes - 1) * (add_lat + 1);
    if (pitch < lanes * (add_lat + 1))
      bw_skew_next = bw_skew_next + (lines - 1) * lanes * (add_lat + 1) - lp;
  endfunction
  // RowLanes for a chain geometry: 4 where its sparse grid leaves the smaller
  // skews (long or many chains), else 1 (fewer relay registers). 4 needs
  // chain_len % 4 == 0.
  function automatic int unsigned row_lanes(input int unsigned num_pe, input int unsigned num_chains,
                                            input int unsigned add_lat);
    int unsigned len;
    len = num_pe / num_chains;
    if (len % 4 != 0) row_lanes = 1;
    else if (bw_skew_reduce(bw_pitch_sparse(num_chains, 4, add_lat),
                            bw_line_span(bw_pitch_sparse(num_chains, 4, add_lat), len / 4), len / 4, 4, add_lat) +
             bw_skew_next(4, bw_pitch_sparse(num_chains, 4, add_lat),
                          bw_line_span(bw_pitch_sparse(num_chains, 4, add_lat), len / 4), len / 4, 4, add_lat) <
             bw_skew_reduce(bw_pitch_sparse(num_chains, 1, add_lat),
                            bw_line_span(bw_pitch_sparse(num_chains, 1, add_lat), len), len, 1, add_lat))
      row_lanes = 4;
    else row_lanes = 1;
  endfunction
  // BW: a PE's MAC burst for one row: H MACs, at least the adder's revisit
  // distance apart.
  function automatic int unsigned bw_burst(input int unsigned hidden, input int unsigned add_lat);
    bw_burst = (hidden > add_lat + 2) ? hidden : add_lat + 2;
  endfunction
  // BW: start-to-start spacing of the waves of delta rows: a PE's H MACs per
  // row, the adder's revisit distance, the wave's tokens.
  function automatic int unsigned bw_wave_spacing(input int unsigned hidden, input int unsigned wave_span,
                                                  input int unsigned add_lat);
    bw_wave_spacing = bw_burst(hidden, add_lat);
    if (bw_wave_spacing < wave_span) bw_wave_spacing = wave_span;
  endfunction
  // BW: the last wave's start to the REDUCE token: every PE's MACs of the
  // wave have written its accumulators before the reduction's partials read
  // them (the REDUCE reaches every chain head at once), and the REDUCE
  // follows the wave's last token. On the MAC adder (red_adder 0) the
  // partials wait for the whole MAC burst, max(H, AddLatency + 2) cycles; on
  // an adder of their own they sweep column c as soon as its last MAC has
  // written it, AddLatency + 2 cycles after its issue (the burst and the
  // sweep both take a column a cycle).
  // Both of its terms add the chains the wave reaches, so it is a base from
  // H and the grid plus those chains (the sequencer registers the base ahead
  // of the cycle that adds the last wave's chains).
  function automatic int unsigned bw_reduce_gap_base(input int unsigned hidden, input int unsigned pitch,
                                                     input int unsigned lp, input int unsigned lines,
                                                     input int unsigned lanes, input int unsigned mul_lat,
                                                     input int unsigned add_lat, input bit red_adder);
    int unsigned burst;
    burst = red_adder ? add_lat + 2 : bw_burst(hidden, add_lat);
    bw_reduce_gap_base = burst + mul_lat + bw_skew_reduce(pitch, lp, lines, lanes, add_lat) - 1;
    if (bw_reduce_gap_base < lp) bw_reduce_gap_base = lp;  // the wave's span less its chains
  endfunction
  function automatic int unsigned bw_reduce_gap(input int unsigned hidden, input int unsigned chains_reached,
                                                input int unsigned pitch, input int unsigned lp,
                                                input int unsigned lines, input int unsigned lanes,
                                                input int unsigned mul_lat, input int unsigned add_lat,
                                                input bit red_adder);
    bw_reduce_gap = bw_reduce_gap_base(hidden, pitch, lp, lines, lanes, mul_lat, add_lat, red_adder) +
                    chains_reached;
  endfunction
  // BW, RedAdder: the rule of bw_after_reduce below for a given skew of the
  // next wave's earliest token (grid or row order).
  function automatic int unsigned bw_red_after_reduce(input int unsigned hidden, input int unsigned skew_next,
                                                      input int unsigned mul_lat, input int unsigned add_lat,
                                                      input int unsigned reduce_gap);
    int unsigned burst;
    bw_red_after_reduce = (skew_next > mul_lat + add_lat + 1) ? skew_next - mul_lat - add_lat : 1;
    burst = bw_burst(hidden, add_lat);
    if (burst > reduce_gap && burst - reduce_gap > bw_red_after_reduce) bw_red_after_reduce = burst - reduce_gap;
  endfunction
  // BW: the REDUCE token to the next wave, for a given skew of the next
  // wave's earliest token (bw_after_reduce below gives the grid's; the
  // sequencer registers the skew a cycle before it derives the rule).
  function automatic int unsigned bw_after_reduce_skew(input int unsigned hidden, input int unsigned skew_next,
                                                       input int unsigned mul_lat, input int unsigned add_lat,
                                                       input int unsigned reduce_gap, input bit red_adder);
    if (!red_adder) begin
      bw_after_reduce_skew = (hidden + skew_next > mul_lat + 1) ? hidden + skew_next - mul_lat : 1;
    end else begin
      bw_after_reduce_skew = bw_red_after_reduce(hidden, skew_next, mul_lat, add_lat, reduce_gap);
    end
  endfunction
  // BW: the REDUCE token to the next wave. On the MAC adder: the reduction
  // partials have passed a PE (H of them) before its new MACs use the adder.
  // On an adder of its own: a new step's first row writes column c after
  // the partial of column c has read it (H + AddLatency cycles earlier than
  // the adder's rule allows), and the new wave starts no sooner than a PE's
  // burst after the last wave's start (the REDUCE is reduce_gap, the
  // command's bw_reduce_gap, after it).
  function automatic int unsigned bw_after_reduce(input int unsigned hidden, input int unsigned gate_rows,
                                                  input int unsigned pitch, input int unsigned lp,
                                                  input int unsigned lines, input int unsigned lanes,
                                                  input int unsigned mul_lat, input int unsigned add_lat,
                                                  input int unsigned reduce_gap, input bit red_adder);
    bw_after_reduce = bw_after_reduce_skew(hidden, bw_skew_next(gate_rows, pitch, lp, lines, lanes, add_lat),
                                           mul_lat, add_lat, reduce_gap, red_adder);
  endfunction

  // BW in row order: a command of one sequence on PEs with adders of their
  // own and 4-row tokens sends a wave's tokens in row order, chain by chain
  // (group m of chain q at q*lines + m, one a cycle, no pitch). At batch 1 a
  // wave's units arrive a unit a cycle from the previous step's reduction,
  // and row order asks for them in that order, where the grid's first line
  // already needs a unit of every chain (nearly all of them). The REDUCE then
  // waits for the last chain's first group, (chains - 1) * lines cycles
  // after the wave starts, against the sweep; the next wave's earliest token
  // is group lines - 1 of chain 0, which the sweep reaches
  // (lines - 1) * (lanes * (AddLatency + 1) - 1) cycles after the token.
  // The grid stays where a second sequence fills the reduction's latency, or
  // where the reduction runs on the MAC adder (docs/decisions.md, "row order").
  function automatic bit bw_row_order(input bit red_adder, input int unsigned lanes, input int unsigned batch);
    bw_row_order = red_adder && lanes == 4 && batch == 1;
  endfunction
  function automatic int unsigned bw_rows_span(input int unsigned chains_reached, input int unsigned lines);
    bw_rows_span = chains_reached * lines;
  endfunction
  function automatic int unsigned bw_rows_reduce_gap(input int unsigned chains_reached, input int unsigned lines,
                                                     input int unsigned mul_lat, input int unsigned add_lat);
    bw_rows_reduce_gap = add_lat + 2 + mul_lat + (chains_reached - 1) * lines;
    if (bw_rows_reduce_gap < bw_rows_span(chains_reached, lines))
      bw_rows_reduce_gap = bw_rows_span(chains_reached, lines);
  endfunction
  function automatic int unsigned bw_rows_skew_next(input int unsigned gate_rows, input int unsigned lines,
                                                    input int unsigned lanes, input int unsigned add_lat);
    bw_rows_skew_next = ((gate_rows < lanes) ? gate_rows - 1 : lanes - 1) * (add_lat + 1) +
                        (lines - 1) * (lanes * (add_lat + 1) - 1);
  endfunction

  // The chains (pe_chain): NumChains (<= 512) chains of NumPe / NumChains PEs,
  // a power of two when there is more than one chain. Tokens
  // and configuration reach the chain heads through a register tree of
  // fan-out 4, bcast_depth levels deep (none for one chain); the chain tails
  // meet in a binary tree, join_depth levels deep: a register per level for
  // FW results, an adder (AddLatency) per level for BW partials.
  function automatic int unsigned bcast_depth(input int unsigned num_chains);
    if (num_chains <= 1)        bcast_depth = 0;
    else if (num_chains <= 4)   bcast_depth = 1;
    else if (num_chains <= 16)  bcast_depth = 2;
    else if (num_chains <= 64)  bcast_depth = 3;
    else if (num_chains <= 256) bcast_depth = 4;
    else                        bcast_depth = 5;
  endfunction
  function automatic int unsigned join_depth(input int unsigned num_chains);
    if (num_chains <= 1)        join_depth = 0;
    else if (num_chains <= 2)   join_depth = 1;
    else if (num_chains <= 4)   join_depth = 2;
    else if (num_chains <= 8)   join_depth = 3;
    else if (num_chains <= 16)  join_depth = 4;
    else if (num_chains <= 32)  join_depth = 5;
    else if (num_chains <= 64)  join_depth = 6;
    else if (num_chains <= 128) join_depth = 7;
    else if (num_chains <= 256) join_depth = 8;
    else                        join_depth = 9;
  endfunction
  // Cycles a new configuration takes to reach every PE.
  function automatic int unsigned cfg_settle_cycles(input int unsigned num_pe, input int unsigned num_chains);
    cfg_settle_cycles = bcast_depth(num_chains) + num_pe / num_chains + 4;
  endfunction

  // Cycles the datapath is held in reset after an abort, a timeout or a framing
  // error: every pipeline without a reset of its own (the PE's MAC bookkeeping,
  // 2 + MulLatency + AddLatency deep, then the sums' final-add wait line,
  // fw_split_wait <= 2 deep; the final adds' loop runs through registers that
  // the flush resets) has emptied by then.
  function automatic int unsigned flush_cycles(input int unsigned mul_lat,
                                               input int unsigned add_lat);
    flush_cycles = mul_lat + add_lat + 4;
  endfunction

endpackage
