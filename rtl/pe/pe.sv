// One processing element of the recurrent engine's chain. It holds rows
// k = lr*NumPe + PeIndex of the recurrent matrix U (chain row order k = G*j + g)
// in a local weight RAM (word lr*H + c holds U[k][c]) and does one FP32 MAC per
// cycle (unfused: fp_mul then fp_add) on the token it is working on:
//   ELEM   (FW)  operand h[c]: acc[lr] (+)= U[k][c] * h[c] for its rows lr;
//                on the step's last element the sums go to the result RAM and
//                are drained onto result lane k mod ResLanes, one every
//                NumPe/ResLanes cycles, so the chain emits all G*H results in
//                row order k, ResLanes consecutive rows a cycle. With
//                fewer than FW_SPLIT_ROWS rows a PE, S sums a row
//                (engine_pkg::fw_sums_log2): element c goes to sum c mod S at
//                acc[bank << 3 | (c mod S) << (3 - log2 S) | lr], and the last
//                element's sum is added to the others, one after another in
//                cyclic order, on its way to the result RAM. The bank (one
//                bit) turns at each step's last element, so the next step's
//                MACs run beside those final adds; the sequencer leaves the
//                adder's cycles they take free (engine_pkg::fw_step_holes).
//   ROW    (BW)  operand delta[k] for this PE: acc[c] (+)= U[k][c] * delta[k]
//                for every column c; the first row of a step seeds with the
//                product alone (x + (-0) == x). A ROW token carries the rows
//                of RowLanes consecutive PEs (tok_pe the first, a lane-valid
//                mask); this PE takes lane PeIndex mod RowLanes. ELEM tokens
//                carry h[c] in every lane.
//   REDUCE (BW)  the first PE of its chain (ChainHead) starts H partials of
//                -0; each PE adds its acc[c] to partial c as it passes (PEs
//                without rows add -0), so the chain emits its sum
//                (((-0 + acc_first[c]) + acc_next[c]) ...) in order c, on
//                result lane 0. With RedAdder the reduction has an adder
//                and a copy of the accumulators of its own (written with
//                them, read only by it): it no longer takes the MAC adder's
//                cycles, so it can sweep a column as soon as that column's
//                last MAC has written it, while the MACs of later columns
//                (and of the next step's rows) go on.
// Weights arrive on a port of their own (the loader's bus, one word per
// cycle), independent of the tokens: a LOAD into one bank of the weight RAM
// runs while the MACs read another (the RAM has a read and a write port).
// Links are neighbour-only: every token, configuration bit and result is
// registered once per PE. The chain is rigidly timed (no stall); the sequencer
// spaces tokens so that a PE never has two jobs at once (asserted here).
// Latency: a MAC issued at cycle i writes back at the end of cycle
// i+1+MulLatency+AddLatency; a reduction partial spends AddLatency+2 cycles per PE.
`default_nettype none

module pe #(
  parameter int unsigned NumPe       = 4,
  parameter int unsigned PeIndex     = 0,
  parameter bit          ChainHead   = 1'b1,   // first PE of its chain
  parameter int unsigned WeightDepth = 1024,   // RAM words, all banks
  parameter int unsigned WeightUram  = 0,      // 1: the weight RAM marked for UltraRAM
  parameter int unsigned MaxHidden   = 32,
  parameter int unsigned MulLatency  = 2,
  parameter int unsigned AddLatency  = 3,
  parameter int unsigned RowLanes    = 1,      // rows a ROW token carries (1 or 4)
  parameter int unsigned ResLanes    = 1,      // FW result lanes (1, or 4 dividing NumPe)
  parameter int unsigned RedAdder    = 0,      // 1: the BW reduction on an adder of its own
  localparam int unsigned MaxRows     = (4 * MaxHidden + NumPe - 1) / NumPe,
  localparam int unsigned AccWords    = (MaxRows > MaxHidden) ? MaxRows : MaxHidden,  // FW rows / BW columns
  localparam int unsigned AccDepth    = (AccWords > 16) ? AccWords : 16,  // two banks of S sums of R rows (R*S <= 8)
  localparam int unsigned AccWidth    = $clog2(AccDepth),
  localparam int unsigned ResWidth    = (MaxRows > 1) ? $clog2(MaxRows) : 1,
  localparam int unsigned PeWidth     = (NumPe > 1) ? $clog2(NumPe) : 1,
  localparam int unsigned WAddrWidth  = $clog2(WeightDepth),
  localparam int unsigned HiddenWidth = $clog2(MaxHidden + 1),
  localparam int unsigned RowsWidth   = $clog2(MaxRows + 1),
  localparam int unsigned CntWidth    = (RowsWidth > HiddenWidth) ? RowsWidth : HiddenWidth
) (
  input  logic                   clk_i,
  input  logic                   rst_i,
  // Static configuration (changes only between commands), relayed.
  input  logic                   cfg_bw_i,          // 1: backward (ROW/REDUCE) mode
  input  logic [HiddenWidth-1:0] cfg_hidden_i,      // H
  input  logic [RowsWidth-1:0]   cfg_rows_base_i,   // floor(G*H / NumPe)
  input  logic [PeWidth-1:0]     cfg_rows_extra_i,  // (G*H) mod NumPe
  output logic                   cfg_bw_o,
  output logic [HiddenWidth-1:0] cfg_hidden_o,
  output logic [RowsWidth-1:0]   cfg_rows_base_o,
  output logic [PeWidth-1:0]     cfg_rows_extra_o,
  // Token relay.
  input  logic [2:0]             tok_kind_i,        // one-hot: {REDUCE, ROW, ELEM}; 0: none
  input  logic                   tok_first_i,
  input  logic                   tok_last_i,
  input  logic                   tok_zero_i,
  input  logic [PeWidth-1:0]     tok_pe_i,
  input  logic [WAddrWidth-1:0]  tok_addr_i,
  input  logic [RowLanes-1:0]    tok_mask_i,
  input  logic [RowLanes*32-1:0] tok_data_i,
  output logic [2:0]             tok_kind_o,
  output logic                   tok_first_o,
  output logic                   tok_last_o,
  output logic                   tok_zero_o,
  output logic [PeWidth-1:0]     tok_pe_o,
  output logic [WAddrWidth-1:0]  tok_addr_o,
  output logic [RowLanes-1:0]    tok_mask_o,
  output logic [RowLanes*32-1:0] tok_data_o,
  // Weight write port (from the loader's bus).
  input  logic                   wld_valid_i,
  input  logic [WAddrWidth-1:0]  wld_addr_i,
  input  logic [31:0]            wld_data_i,
  // Result relay: ResLanes lanes of FW results, BW reduction partials on lane 0.
  input  logic [ResLanes-1:0]    res_valid_i,
  input  logic                   res_zero_i,
  input  logic [ResLanes*32-1:0] res_data_i,
  output logic [ResLanes-1:0]    res_valid_o,
  output logic                   res_zero_o,
  output logic [ResLanes*32-1:0] res_data_o,
  // Activity, for the engine's counters: a MAC issued, a weight word written.
  output logic                   mac_o,
  output logic                   wload_o
);

  localparam int unsigned DrainDelay1 = engine_pkg::pe_drain_delay(MulLatency, AddLatency, 0);  // 1 sum a row
  localparam int unsigned DrainDelay2 = engine_pkg::pe_drain_delay(MulLatency, AddLatency, 1);
  localparam int unsigned DrainDelay4 = engine_pkg::pe_drain_delay(MulLatency, AddLatency, 2);
  localparam int unsigned DrainDelay8 = engine_pkg::pe_drain_delay(MulLatency, AddLatency, 3);
  localparam int unsigned WaitWidth   = $clog2(DrainDelay8 + NumPe / ResLanes + 1);
  localparam logic [PeWidth-1:0] MY_INDEX = PeWidth'(PeIndex);
  localparam int unsigned MyLane   = PeIndex % RowLanes;
  localparam int unsigned ResLane  = PeIndex % ResLanes;   // this PE's FW result lane
  localparam int unsigned DrainGap = NumPe / ResLanes;     // cycles between its drains
  localparam int unsigned LaneBits = (RowLanes > 1) ? $clog2(RowLanes) : 0;

  // ---------------------------------------------------------------- config
  logic                   cfg_bw_q;
  logic [HiddenWidth-1:0] cfg_hidden_q;
  logic [RowsWidth-1:0]   cfg_rows_base_q;
  logic [PeWidth-1:0]     cfg_rows_extra_q;
  logic [RowsWidth-1:0]   rows_q, rows_d;          // rows this PE holds
  logic                   has_rows_q, has_rows_d;
  logic [1:0]             sums_q, sums_d;          // FW: log2 of the sums a row

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      cfg_bw_q         <= 1'b0;
      cfg_hidden_q     <= '0;
      cfg_rows_base_q  <= '0;
      cfg_rows_extra_q <= '0;
    end else begin
      cfg_bw_q         <= cfg_bw_i;
      cfg_hidden_q     <= cfg_hidden_i;
      cfg_rows_base_q  <= cfg_rows_base_i;
      cfg_rows_extra_q <= cfg_rows_extra_i;
    end
  end
  assign cfg_bw_o         = cfg_bw_q;
  assign cfg_hidden_o     = cfg_hidden_q;
  assign cfg_rows_base_o  = cfg_rows_base_q;
  assign cfg_rows_extra_o = cfg_rows_extra_q;

  // Rows this PE holds, from the static configuration; registered so that the
  // arithmetic stays off the MAC and reduction paths (the sequencer waits for
  // the configuration to settle before the first token).
  assign rows_d     = cfg_rows_base_q + RowsWidth'({1'b0, cfg_rows_extra_q} > {1'b0, MY_INDEX});
  assign has_rows_d = (rows_d != '0);
  assign sums_d     = 2'(engine_pkg::fw_sums_log2(32'(cfg_rows_base_q) + 32'(cfg_rows_extra_q != '0),
                                                     32'(cfg_hidden_q)));
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      rows_q     <= '0;
      has_rows_q <= 1'b0;
      sums_q     <= '0;
    end else begin
      rows_q     <= rows_d;
      has_rows_q <= has_rows_d;
      sums_q     <= sums_d;
    end
  end

  // ---------------------------------------------------------- token relay
  // A token's kind travels one-hot (pe_chain decodes the sequencer's valid
  // and op once, at its input), so each PE's decode starts from one bit and
  // the PE-to-PE paths stay short.
  logic [2:0]            tok_kind_q;
  logic                  tok_first_q, tok_last_q, tok_zero_q;
  logic [PeWidth-1:0]    tok_pe_q;
  logic [WAddrWidth-1:0] tok_addr_q;
  logic [RowLanes-1:0]   tok_mask_q;
  logic [RowLanes*32-1:0] tok_data_q;

  always_ff @(posedge clk_i) begin
    if (rst_i) tok_kind_q <= '0;
    else       tok_kind_q <= tok_kind_i;
  end
  always_ff @(posedge clk_i) begin
    tok_first_q <= tok_first_i;
    tok_last_q  <= tok_last_i;
    tok_zero_q  <= tok_zero_i;
    tok_pe_q    <= tok_pe_i;
    tok_addr_q  <= tok_addr_i;
    tok_mask_q  <= tok_mask_i;
    tok_data_q  <= tok_data_i;
  end
  assign tok_kind_o  = tok_kind_q;
  assign tok_first_o = tok_first_q;
  assign tok_last_o  = tok_last_q;
  assign tok_zero_o  = tok_zero_q;
  assign tok_pe_o    = tok_pe_q;
  assign tok_addr_o  = tok_addr_q;
  assign tok_mask_o  = tok_mask_q;
  assign tok_data_o  = tok_data_q;

  logic for_me, is_elem, is_row, is_reduce;
  logic [31:0] tok_x;  // this PE's lane
  assign tok_x = tok_data_i[MyLane*32 +: 32];
  if (RowLanes > 1 && NumPe <= RowLanes) begin : g_one_group
    assign for_me = tok_mask_i[MyLane];
  end else if (RowLanes > 1) begin : g_group
    assign for_me = (tok_pe_i[PeWidth-1:LaneBits] == MY_INDEX[PeWidth-1:LaneBits]) && tok_mask_i[MyLane];
  end else begin : g_single
    assign for_me = (tok_pe_i == MY_INDEX) && tok_mask_i[0];
  end
  assign is_elem   = tok_kind_i[0] && !cfg_bw_q && has_rows_q;
  assign is_row    = tok_kind_i[1] && cfg_bw_q && for_me;
  assign is_reduce = tok_kind_i[2] && cfg_bw_q && ChainHead;

  // FW sums: element c of a step goes to sum c mod S (S = 2^sums_q); the
  // first S elements each start their sum from the product alone. With S > 1
  // a step's sums sit in bank elem_bank_q (words 8-15 or 0-7), which turns
  // after the step's last element.
  logic [2:0]          sums_mask;      // S - 1
  logic [2:0]          elem_sum_q;     // the next element's sum
  logic                elem_fill_q;    // the next element starts its sum
  logic                elem_bank_q;    // the step's sum bank
  logic [2:0]          elem_sum, elem_next;
  logic                elem_seed;
  logic [AccWidth-1:0] elem_base;      // its accumulator word for row 0
  assign sums_mask = 3'((4'd1 << sums_q) - 4'd1);
  assign elem_sum  = tok_first_i ? 3'd0 : elem_sum_q;
  assign elem_seed = tok_first_i || elem_fill_q;
  assign elem_next = (elem_sum + 3'd1) & sums_mask;
  always_comb begin
    elem_base = '0;
    unique case (sums_q)
      2'd0: elem_base = '0;
      2'd1: elem_base[3:0] = {elem_bank_q, elem_sum[0], 2'b00};
      2'd2: elem_base[3:0] = {elem_bank_q, elem_sum[1:0], 1'b0};
      default: elem_base[3:0] = {elem_bank_q, elem_sum};
    endcase
  end
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      elem_sum_q  <= '0;
      elem_fill_q <= 1'b0;
      elem_bank_q <= 1'b0;
    end else if (is_elem) begin
      elem_sum_q  <= elem_next;
      elem_fill_q <= elem_seed && (elem_next != '0);
      elem_bank_q <= elem_bank_q ^ tok_last_i;
    end
  end

  // --------------------------------------------------------- MAC issuing
  // A burst issues one MAC per cycle: rows lr = 0.. (FW, weight stride H) or
  // columns c = 0..H-1 (BW, weight stride 1); the accumulator index counts up.
  logic [CntWidth-1:0]    issue_cnt_q, issue_cnt_d;
  logic [WAddrWidth-1:0]  issue_addr_q, issue_addr_d;
  logic [AccWidth-1:0]    issue_idx_q, issue_idx_d;
  logic                   issue_fw_q, issue_fw_d;
  logic                   issue_first_q, issue_first_d;
  logic                   issue_last_q, issue_last_d;
  logic [31:0]            issue_x_q, issue_x_d;
  logic                   issue;

  assign issue = (issue_cnt_q != '0);

  always_comb begin
    issue_cnt_d   = issue_cnt_q;
    issue_addr_d  = issue_addr_q;
    issue_idx_d   = issue_idx_q;
    issue_fw_d    = issue_fw_q;
    issue_first_d = issue_first_q;
    issue_last_d  = issue_last_q;
    issue_x_d     = issue_x_q;
    if (issue) begin
      issue_cnt_d  = issue_cnt_q - 1'b1;
      issue_addr_d = issue_addr_q + (issue_fw_q ? WAddrWidth'(cfg_hidden_q) : WAddrWidth'(1));
      issue_idx_d  = issue_idx_q + 1'b1;
    end
    if (is_elem || is_row) begin
      issue_cnt_d   = is_elem ? CntWidth'(rows_q) : CntWidth'(cfg_hidden_q);
      issue_addr_d  = tok_addr_i;
      issue_idx_d   = is_elem ? elem_base : '0;
      issue_fw_d    = is_elem;
      issue_first_d = is_elem ? elem_seed : tok_first_i;
      issue_last_d  = tok_last_i;
      issue_x_d     = tok_x;
    end
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) issue_cnt_q <= '0;
    else       issue_cnt_q <= issue_cnt_d;
  end
  always_ff @(posedge clk_i) begin
    issue_addr_q  <= issue_addr_d;
    issue_idx_q   <= issue_idx_d;
    issue_fw_q    <= issue_fw_d;
    issue_first_q <= issue_first_d;
    issue_last_q  <= issue_last_d;
    issue_x_q     <= issue_x_d;
  end

  assign mac_o   = issue;
  assign wload_o = wld_valid_i;

  // Weight RAM: MAC reads, the loader writes.
  logic [31:0] weight;
  prim_ram_1r1w #(
    .Width(32),
    .Depth(WeightDepth),
    .Ultra(WeightUram != 0)
  ) u_weights (
    .clk_i,
    .we_i   (wld_valid_i),
    .waddr_i(wld_addr_i),
    .wdata_i(wld_data_i),
    .re_i   (issue),
    .rclr_i (1'b0),
    .raddr_i(issue_addr_q),
    .rdata_o(weight)
  );

  // MAC bookkeeping travels beside the data: {valid, fw, first, last, idx}.
  localparam int unsigned InfoWidth = 4 + AccWidth;
  logic [InfoWidth-1:0] info_issue, info_mul_in, info_acc_rd, info_add_in, info_add_out;
  logic [31:0] mul_x;
  assign info_issue = {issue, issue_fw_q, issue_first_q, issue_last_q, issue_idx_q};

  prim_delay #(.Width(InfoWidth), .Depth(1)) u_info_d1 (
    .clk_i, .d_i(info_issue), .q_o(info_mul_in));
  prim_delay #(.Width(32), .Depth(1)) u_x_d1 (
    .clk_i, .d_i(issue_x_q), .q_o(mul_x));
  prim_delay #(.Width(InfoWidth), .Depth(MulLatency - 1)) u_info_mul (
    .clk_i, .d_i(info_mul_in), .q_o(info_acc_rd));
  prim_delay #(.Width(InfoWidth), .Depth(1)) u_info_d2 (
    .clk_i, .d_i(info_acc_rd), .q_o(info_add_in));
  prim_delay #(.Width(InfoWidth), .Depth(AddLatency)) u_info_add (
    .clk_i, .d_i(info_add_in), .q_o(info_add_out));

  logic mac_acc_rd, mac_add_in, mac_add_out;
  assign mac_acc_rd  = info_acc_rd[InfoWidth-1];
  assign mac_add_in  = info_add_in[InfoWidth-1];
  assign mac_add_out = info_add_out[InfoWidth-1];

  logic [31:0] product;
  logic unused_mul_valid, unused_mul_ready;
  logic [0:0] unused_mul_tag;
  fp_mul #(
    .TagWidth(1),
    .Latency (MulLatency)
  ) u_mul (
    .clk_i,
    .rst_i,
    .in_valid_i (1'b1),
    .in_ready_o (unused_mul_ready),
    .a_i        (weight),
    .b_i        (mul_x),
    .tag_i      (1'b0),
    .out_valid_o(unused_mul_valid),
    .out_ready_i(1'b1),
    .y_o        (product),
    .tag_o      (unused_mul_tag)
  );

  // ------------------------------------------------------ BW reduction
  // Partial source: a chain's first PE generates H partials of -0 on a REDUCE
  // token; the others take them from the result relay.
  logic [HiddenWidth-1:0] gen_cnt_q, gen_cnt_d;
  logic                   gen_zero_q, gen_zero_d;
  logic                   part_valid, part_zero;
  logic [31:0]            part_data;

  always_comb begin
    gen_cnt_d  = gen_cnt_q;
    gen_zero_d = gen_zero_q;
    if (gen_cnt_q != '0) gen_cnt_d = gen_cnt_q - 1'b1;
    if (is_reduce) begin
      gen_cnt_d  = cfg_hidden_q;
      gen_zero_d = tok_zero_i;
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_i) gen_cnt_q <= '0;
    else       gen_cnt_q <= gen_cnt_d;
  end
  always_ff @(posedge clk_i) gen_zero_q <= gen_zero_d;

  if (ChainHead) begin : g_first
    logic unused_res;
    assign unused_res = ^{res_valid_i[0], res_zero_i, res_data_i[31:0]};
    assign part_valid = (gen_cnt_q != '0);
    assign part_zero  = gen_zero_q;
    assign part_data  = engine_pkg::FP_NEG_ZERO;
  end else begin : g_rest
    assign part_valid = cfg_bw_q && res_valid_i[0];
    assign part_zero  = res_zero_i;
    assign part_data  = res_data_i[31:0];
  end

  // Column counter of the partials passing this PE (0..H-1, in order).
  logic [AccWidth-1:0] red_idx_q, red_idx_d;
  always_comb begin
    red_idx_d = red_idx_q;
    if (part_valid) begin
      red_idx_d = (32'(red_idx_q) + 1 == 32'(cfg_hidden_q)) ? '0 : red_idx_q + 1'b1;
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_i) red_idx_q <= '0;
    else       red_idx_q <= red_idx_d;
  end

  // The partial waits one cycle for its accumulator word.
  logic        red_add_in_q, red_zero_q;
  always_ff @(posedge clk_i) begin
    if (rst_i) red_add_in_q <= 1'b0;
    else       red_add_in_q <= part_valid;
  end
  always_ff @(posedge clk_i) red_zero_q <= part_zero;

  // ------------------------------------------------- accumulator and adder
  logic [31:0] acc_rdata;
  logic        acc_re;
  logic [AccWidth-1:0] acc_raddr;
  logic [31:0] sum;

  // S sums: the sum of a step's last element (row lr, accumulator word w)
  // leaves the adder in cycle E; in E + SplitWait the next sum of the row
  // (word w + 8/S, mod 8 within its bank: the sum index sits in the bank's
  // top bits) is read,
  // and both enter the adder a cycle later. Each of the S-1 links loops the
  // adder's output back the same way; the last goes to the result RAM. The
  // wait line is flushed like the MAC bookkeeping.
  localparam int unsigned SplitWait = engine_pkg::fw_split_wait(AddLatency);
  logic       fw_last_out, comb_start, first_go, loop_go, comb_go, comb_q, comb_done;
  logic [31:0] first_sum;
  logic [2:0] comb_step, go_left, comb_left_q, out_left;
  logic [3:0] first_w, go_w, comb_w_q, out_w;  // {bank, word in the bank}
  assign fw_last_out = mac_add_out && info_add_out[InfoWidth-2] && info_add_out[AccWidth];  // fw, last
  assign comb_start  = fw_last_out && (sums_q != '0);
  assign comb_step   = 3'(4'd8 >> sums_q);
  prim_delay #(.Width(1 + 32 + 4), .Depth(SplitWait)) u_split_wait (
    .clk_i, .d_i({comb_start, sum, info_add_out[3:0]}), .q_o({first_go, first_sum, first_w}));
  assign loop_go = comb_out && (out_left != '0);
  assign comb_go = first_go || loop_go;
  assign go_w    = first_go ? {first_w[3], first_w[2:0] + comb_step} : {out_w[3], out_w[2:0] + comb_step};
  assign go_left = first_go ? sums_mask : out_left;
  always_ff @(posedge clk_i) begin
    if (rst_i) comb_q <= 1'b0;
    else       comb_q <= comb_go;
  end
  always_ff @(posedge clk_i) begin
    comb_w_q    <= go_w;
    comb_left_q <= go_left - 3'd1;
  end

  assign acc_re    = mac_acc_rd || (part_valid && RedAdder == 0) || comb_go;
  assign acc_raddr = mac_acc_rd ? info_acc_rd[AccWidth-1:0] :
                     comb_go    ? AccWidth'(go_w) : red_idx_q;

  // The adder's operands. A MAC adds its product to the accumulator word
  // (-0 for a sum's first element); a final add of S sums adds the looped
  // sum to the word it read; the reduction adds its partial to the word
  // (-0 without rows or for a zero partial). Both choices are made a cycle
  // ahead, into aux_a_q (the looped sum after comb_go, else the partial) and
  // the accumulator's read register (acc_sel_d low: it loads -0 instead of
  // the word, by the flip-flops' synchronous set/reset, not a LUT a bit), so
  // that each operand is one registered select away from the adder's
  // exponent compare and alignment. acc_sel_q keeps the choice for the
  // assertions below.
  logic [31:0] add_a, add_b, aux_a_q;
  logic        acc_sel_d, acc_sel_q;
  logic        part_word;  // a partial adds this PE's word (it has rows, the partial is not zero)
  assign part_word = has_rows_d && !part_zero;
  assign acc_sel_d = mac_acc_rd ? !info_acc_rd[AccWidth+1] : (comb_go || part_word);
  always_ff @(posedge clk_i) begin
    aux_a_q   <= comb_go ? (first_go ? first_sum : sum) : part_data;
    acc_sel_q <= acc_sel_d;
  end
  assign add_a = mac_add_in ? product : aux_a_q;
  assign add_b = acc_rdata;

  // Adder tags: {sums added, the word read, links left, reduction partial, zero}.
  localparam int unsigned AddTagWidth = 10;
  logic [AddTagWidth-1:0] add_tag_in, add_tag_out;
  logic add_out_valid, unused_add_ready;
  assign add_tag_in = {comb_q && !mac_add_in, comb_w_q, comb_left_q,
                       red_add_in_q && !mac_add_in && !comb_q && RedAdder == 0, red_zero_q};
  fp_add #(
    .TagWidth(AddTagWidth),
    .Latency (AddLatency)
  ) u_add (
    .clk_i,
    .rst_i,
    .in_valid_i (1'b1),
    .in_ready_o (unused_add_ready),
    .a_i        (add_a),
    .b_i        (add_b),
    .tag_i      (add_tag_in),
    .out_valid_o(add_out_valid),
    .out_ready_i(1'b1),
    .y_o        (sum),
    .tag_o      (add_tag_out)
  );

  // The adder's stages load only valid data, so after a reset its last stage
  // shows a stale tag until the pipeline has refilled: qualify with valid.
  logic comb_out;
  assign comb_out    = add_tag_out[AddTagWidth-1] && add_out_valid;
  assign out_w       = add_tag_out[8:5];
  assign out_left    = add_tag_out[4:2];
  assign comb_done   = comb_out && (out_left == '0);

  prim_ram_1r1w #(
    .Width     (32),
    .Depth     (AccDepth),
    .ClearValue(engine_pkg::FP_NEG_ZERO)
  ) u_acc (
    .clk_i,
    .we_i   (mac_add_out),
    .waddr_i(info_add_out[AccWidth-1:0]),
    .wdata_i(sum),
    .re_i   (acc_re),
    .rclr_i (!acc_sel_d),
    .raddr_i(acc_raddr),
    .rdata_o(acc_rdata)
  );

  // The reduction's adder: the MAC adder (its idle cycles), or with RedAdder
  // one of its own, fed from a copy of the accumulators that the MACs write
  // alongside u_acc. Either way a partial spends one cycle at the RAM, then
  // AddLatency in the adder, then one in the result relay.
  logic        red_add_out, red_out_zero;
  logic [31:0] red_sum;
  if (RedAdder != 0) begin : g_red_adder
    logic [31:0] red_acc_rdata, red_part_q;
    logic [0:0]  red_tag_out;
    logic        unused_red_ready;
    always_ff @(posedge clk_i) red_part_q <= part_data;
    // The word, or -0 (no rows, or a zero partial) from the read register's
    // clear, as for u_acc.
    prim_ram_1r1w #(
      .Width     (32),
      .Depth     (AccDepth),
      .ClearValue(engine_pkg::FP_NEG_ZERO)
    ) u_acc_red (
      .clk_i,
      .we_i   (mac_add_out),
      .waddr_i(info_add_out[AccWidth-1:0]),
      .wdata_i(sum),
      .re_i   (part_valid),
      .rclr_i (!part_word),
      .raddr_i(red_idx_q),
      .rdata_o(red_acc_rdata)
    );
    fp_add #(
      .TagWidth(1),
      .Latency (AddLatency)
    ) u_red_add (
      .clk_i,
      .rst_i,
      .in_valid_i (red_add_in_q),
      .in_ready_o (unused_red_ready),
      .a_i        (red_part_q),
      .b_i        (red_acc_rdata),
      .tag_i      (red_zero_q),
      .out_valid_o(red_add_out),
      .out_ready_i(1'b1),
      .y_o        (red_sum),
      .tag_o      (red_tag_out)
    );
    assign red_out_zero = red_tag_out[0];
    logic unused_red;
    assign unused_red = ^{unused_red_ready, add_tag_out[1]};
  end else begin : g_red_shared
    assign red_add_out  = add_tag_out[1] && add_out_valid;
    assign red_out_zero = add_tag_out[0];
    assign red_sum      = sum;
  end

  // ------------------------------------------------------------ FW drain
  // Results of a step's last element (S sums: the added sums, row lr from the
  // word's low bits) go to the result RAM; PE p drains row lr (row k =
  // lr*NumPe + p) onto lane k mod ResLanes at (last token arrival) + 1 +
  // DrainDelay + k div ResLanes (p = PeIndex, over all NumPe PEs, so the
  // chains' tails take turns: rows in order, ResLanes a cycle; DrainDelay by
  // the number of sums). A step's drain may still wait for its slot when the
  // next step's last element comes (steps fw_result_gap apart, less than
  // DrainDelay + the drain slots): that job waits in a second counter and
  // takes over when the first has drained its last row. Two jobs at most
  // (fw_result_gap: two gaps cover DrainDelay and the slots). The job starts
  // from a register a cycle after its last element (job_new_q), its wait one
  // less, so the slots are where they were and the relayed token reaches the
  // drain through one LUT, into job_new_q (the chain link's depth).
  logic                res_we;
  logic [ResWidth-1:0] res_waddr;
  assign res_we    = (fw_last_out && sums_q == '0) || comb_done;
  assign res_waddr = comb_done ? ResWidth'(3'(out_w[2:0] & (comb_step - 3'd1))) : info_add_out[ResWidth-1:0];

  logic [RowsWidth-1:0] drain_left_q, drain_left_d;
  logic [ResWidth-1:0]  drain_lr_q, drain_lr_d;
  logic [WaitWidth-1:0] drain_wait_q, drain_wait_d;
  logic                 drain_re, inject_q;
  logic [31:0]          res_rdata;
  logic                 job_new_q, job_free;      // a step's last element came last cycle; the drain
                                                  // free next cycle
  logic [WaitWidth-1:0] job_wait;                 // its wait to row 0's slot, from the cycle after
  logic                 pend_q, pend_d;           // a second job waits
  logic [WaitWidth-1:0] pend_wait_q, pend_wait_d; // its wait, counting
  // The counters' compares, registered beside them (each next value picked
  // with its counter's), so that the drain's decision starts from flags:
  // left_nz (rows left), left_one (the last row left), wait_z (its slot now;
  // tracked while rows are left, the wait counter has no reset).
  logic                 left_nz_q, left_nz_d, left_one_q, left_one_d, wait_z_q, wait_z_d;
  logic                 rows_nz, rows_one;        // a starting job's left_nz and left_one
  assign rows_nz  = rows_q != '0;
  assign rows_one = rows_q == RowsWidth'(1);

  assign drain_re = left_nz_q && wait_z_q;
  assign job_free = !left_nz_q || (left_one_q && drain_re);
  always_comb begin
    unique case (sums_q)
      2'd0:    job_wait = WaitWidth'(DrainDelay1 - 1 + PeIndex / ResLanes);
      2'd1:    job_wait = WaitWidth'(DrainDelay2 - 1 + PeIndex / ResLanes);
      2'd2:    job_wait = WaitWidth'(DrainDelay4 - 1 + PeIndex / ResLanes);
      default: job_wait = WaitWidth'(DrainDelay8 - 1 + PeIndex / ResLanes);
    endcase
  end

  always_comb begin
    drain_left_d = drain_left_q;
    drain_lr_d   = drain_lr_q;
    drain_wait_d = drain_wait_q;
    left_nz_d    = left_nz_q;
    left_one_d   = left_one_q;
    wait_z_d     = wait_z_q;
    pend_d       = pend_q;
    pend_wait_d  = pend_wait_q - WaitWidth'(pend_q);
    if (left_nz_q) begin
      if (!wait_z_q) begin
        drain_wait_d = drain_wait_q - 1'b1;
        wait_z_d     = drain_wait_q == WaitWidth'(1);
      end else begin
        drain_left_d = drain_left_q - 1'b1;
        drain_lr_d   = drain_lr_q + 1'b1;
        drain_wait_d = WaitWidth'(DrainGap - 1);
        left_nz_d    = !left_one_q;
        left_one_d   = drain_left_q == RowsWidth'(2);
        wait_z_d     = DrainGap == 1;
      end
    end
    if (job_free && pend_q) begin  // the waiting job takes over
      drain_left_d = rows_q;
      drain_lr_d   = '0;
      drain_wait_d = pend_wait_q - 1'b1;
      left_nz_d    = rows_nz;
      left_one_d   = rows_one;
      wait_z_d     = pend_wait_q == WaitWidth'(1);
      pend_d       = 1'b0;
    end
    if (job_new_q) begin
      if (job_free && !pend_q) begin
        drain_left_d = rows_q;
        drain_lr_d   = '0;
        drain_wait_d = job_wait;
        left_nz_d    = rows_nz;
        left_one_d   = rows_one;
        wait_z_d     = job_wait == '0;
      end else begin
        pend_d      = 1'b1;
        pend_wait_d = job_wait;
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      job_new_q    <= 1'b0;
      drain_left_q <= '0;
      left_nz_q    <= 1'b0;
      left_one_q   <= 1'b0;
      pend_q       <= 1'b0;
      inject_q     <= 1'b0;
    end else begin
      job_new_q    <= is_elem && tok_last_i;
      drain_left_q <= drain_left_d;
      left_nz_q    <= left_nz_d;
      left_one_q   <= left_one_d;
      pend_q       <= pend_d;
      inject_q     <= drain_re;
    end
  end
  always_ff @(posedge clk_i) begin
    drain_lr_q   <= drain_lr_d;
    drain_wait_q <= drain_wait_d;
    wait_z_q     <= wait_z_d;
    pend_wait_q  <= pend_wait_d;
  end

  prim_ram_1r1w #(
    .Width(32),
    .Depth(MaxRows > 1 ? MaxRows : 2)
  ) u_results (
    .clk_i,
    .we_i   (res_we),
    .waddr_i(res_waddr),
    .wdata_i(sum),
    .re_i   (drain_re),
    .rclr_i (1'b0),
    .raddr_i(drain_lr_q),
    .rdata_o(res_rdata)
  );

  // --------------------------------------------------------- result relay
  // Lane 0 carries the BW partials and, FW, the results of the PEs on lane 0;
  // lane ResLane takes this PE's drained results; the other lanes pass on.
  logic [ResLanes-1:0]    res_valid_q, res_valid_d;
  logic                   res_zero_q, res_zero_d;
  logic [ResLanes*32-1:0] res_data_q, res_data_d;
  always_comb begin
    res_valid_d = cfg_bw_q ? '0 : res_valid_i;
    res_data_d  = res_data_i;
    res_zero_d  = 1'b0;
    if (cfg_bw_q) begin
      res_valid_d[0]    = red_add_out;
      res_zero_d        = red_out_zero;
      res_data_d[31:0]  = red_sum;
    end else if (inject_q) begin
      res_valid_d[ResLane]           = 1'b1;
      res_data_d[ResLane*32 +: 32]   = res_rdata;
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_i) res_valid_q <= '0;
    else       res_valid_q <= res_valid_d;
  end
  always_ff @(posedge clk_i) begin
    res_zero_q <= res_zero_d;
    res_data_q <= res_data_d;
  end
  assign res_valid_o = res_valid_q;
  assign res_zero_o  = res_zero_q;
  assign res_data_o  = res_data_q;

  logic unused_pe;
  assign unused_pe = ^{unused_mul_valid, unused_mul_ready, unused_mul_tag, unused_add_ready,
                       info_add_in[AccWidth-1:0], info_add_in[InfoWidth-2],
                       info_add_in[AccWidth], info_add_out[InfoWidth-3]};

`ifndef SYNTHESIS
  initial begin
    if (PeIndex >= NumPe) $error("pe: PeIndex %0d >= NumPe %0d", PeIndex, NumPe);
    if (MulLatency < 1 || AddLatency < 1) $error("pe: operator latencies must be >= 1");
    if (WeightDepth < 2) $error("pe: WeightDepth must be >= 2");
    if (RedAdder > 1) $error("pe: RedAdder %0d must be 0 or 1", RedAdder);
    if (!(ResLanes == 1 || (ResLanes == 4 && NumPe % 4 == 0)))
      $error("pe: ResLanes %0d must be 1, or 4 with NumPe %0d a multiple of 4", ResLanes, NumPe);
  end
  // The sequencer's spacing must keep every PE to one job at a time (forward,
  // two drain jobs: one draining, one waiting).
  always_ff @(posedge clk_i) begin
    if (!rst_i) begin
      assert ($onehot0(tok_kind_i))
      else $error("pe %0d: token kind %b is not one-hot", PeIndex, tok_kind_i);
      assert (!((is_elem || is_row) && issue_cnt_q > 1))
      else $error("pe %0d: new token while a MAC burst is still issuing", PeIndex);
      assert (RedAdder != 0 || !(mac_acc_rd && part_valid))
      else $error("pe %0d: accumulator read port claimed by MAC and reduction", PeIndex);
      assert (RedAdder != 0 || !(mac_add_in && red_add_in_q))
      else $error("pe %0d: adder claimed by MAC and reduction in the same cycle", PeIndex);
      assert (!(comb_go && (mac_acc_rd || part_valid)))
      else $error("pe %0d: accumulator read port claimed by MAC and the sums' final adds", PeIndex);
      assert (!(first_go && loop_go))
      else $error("pe %0d: a row's first sum link meets another row's next link", PeIndex);
      assert (!mac_add_in || acc_sel_q == !info_add_in[AccWidth+1])
      else $error("pe %0d: a MAC's accumulator operand chosen wrongly ahead", PeIndex);
      assert (!comb_q || mac_add_in || acc_sel_q)
      else $error("pe %0d: a final add's accumulator operand chosen wrongly ahead", PeIndex);
      assert (!red_add_in_q || mac_add_in || comb_q || RedAdder != 0 ||
              acc_sel_q == (has_rows_q && !red_zero_q))
      else $error("pe %0d: a reduction's accumulator operand chosen wrongly ahead", PeIndex);
      assert (!(comb_q && (mac_add_in || red_add_in_q)))
      else $error("pe %0d: adder claimed by the sums' final adds and a MAC or reduction", PeIndex);
      assert (!(inject_q && res_valid_i[ResLane]))
      else $error("pe %0d: drained result collides with a relayed result", PeIndex);
      assert (!(job_new_q && pend_q && !job_free))
      else $error("pe %0d: a third step's results before the first drain finished", PeIndex);
      assert (!(pend_q && pend_wait_q == '0))
      else $error("pe %0d: a waiting step's drain slot came before the previous drain finished",
                  PeIndex);
      assert (left_nz_q == (drain_left_q != '0) && left_one_q == (drain_left_q == RowsWidth'(1)) &&
              (!left_nz_q || wait_z_q == (drain_wait_q == '0)))
      else $error("pe %0d: the drain's registered flags disagree with its counters", PeIndex);
      assert (!(is_reduce && gen_cnt_q != '0))
      else $error("pe %0d: REDUCE while the previous one's partials are still leaving", PeIndex);
    end
  end
  // The order of a backward step's accumulator words (the sequencer's
  // bw_reduce_gap and bw_after_reduce, in row order bw_rows_reduce_gap and
  // bw_red_after_reduce): the reduction reads word c only after
  // each of the PE's rows of the step has written it, and the next step's
  // first row writes it only after the reduction has read it. Reads see the
  // writes of earlier cycles (prim_ram_1r1w), so a cycle's read is checked
  // before its write counts. bw_writes[c]: rows written since the last read.
  // Unpacked: at a device's MaxHidden (1136 words) a packed vector would be
  // wider than Verilator's 8k-bit limit on a replication.
  logic [RowsWidth:0]  bw_writes_q [AccDepth];
  logic                red_reads;
  logic [AccWidth-1:0] mac_word;
  assign red_reads = part_valid && has_rows_q && !part_zero;
  assign mac_word  = info_add_out[AccWidth-1:0];
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      bw_writes_q <= '{default: '0};
    end else begin
      if (red_reads) begin
        assert (bw_writes_q[red_idx_q] == (RowsWidth + 1)'(rows_q))
        else $error("pe %0d: reduction read word %0d after %0d of its %0d rows", PeIndex, red_idx_q,
                    bw_writes_q[red_idx_q], rows_q);
        bw_writes_q[red_idx_q] <= '0;
      end
      if (mac_add_out && !info_add_out[InfoWidth-2]) begin
        if (info_add_out[AccWidth+1]) begin
          assert (bw_writes_q[mac_word] == '0 || (red_reads && red_idx_q == mac_word))
          else $error("pe %0d: a step's first row wrote word %0d before the reduction read it", PeIndex, mac_word);
          bw_writes_q[mac_word] <= (RowsWidth + 1)'(1);
        end else begin
          bw_writes_q[mac_word] <= bw_writes_q[mac_word] + 1'b1;
        end
      end
    end
  end
`endif

endmodule

`default_nettype wire
