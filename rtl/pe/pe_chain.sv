// The NumPe processing elements, in NumChains chains of ChainLen = NumPe /
// NumChains consecutive PEs. Tokens and configuration reach every chain's
// head at once through chain_bcast (a register tree, Bcast levels; none for
// one chain) and are relayed PE to PE along the chain; results (FW) and
// reduction partials (BW) are relayed the same way to the chain's tail, and
// the tails meet in chain_join (Join levels: a register each for FW results,
// an adder each for BW partials, which sums the chains in a tree). Every link
// is a register between neighbours or tree nodes: no net fans out further.
// BW ROW tokens carry RowLanes rows for as many consecutive PEs of a chain.
// Weights travel on their own bus (the loader's): Lanes words per cycle for
// the PEs of one group (Lanes consecutive PEs), registered once per group, so
// group q writes a word q cycles after the loader sent it.
// FW results travel on ResLanes lanes (row k on lane k mod ResLanes), so
// ResLanes consecutive rows leave together; BW partials use lane 0.
// Timing (token issued to the chain input at cycle a; one chain: Bcast = Join = 0):
//   FW: the results of a step whose last ELEM token is issued at cycle a
//       leave at a + Bcast + DrainDelay + ChainLen + 2 + Join + k div ResLanes,
//       k = 0 .. G*H-1 (row order);
//   BW: a REDUCE token issued at cycle a makes dh_rec[c] leave at
//       a + Bcast + 1 + ChainLen*(AddLatency+2) + Join*AddLatency + c, c = 0 .. H-1.
`default_nettype none

module pe_chain #(
  parameter int unsigned NumPe       = 4,
  parameter int unsigned NumChains   = 1,       // divides NumPe; ChainLen a power of two if > 1
  parameter int unsigned WeightDepth = 1024,
  parameter int unsigned WeightUram  = 0,       // 1: every PE's weight RAM marked for UltraRAM
  parameter int unsigned MaxHidden   = 32,
  parameter int unsigned MulLatency  = 2,
  parameter int unsigned AddLatency  = 3,
  parameter int unsigned Lanes       = 1,       // weight words per cycle
  parameter int unsigned RowLanes    = 1,       // BW delta rows per ROW token (1 or 4)
  parameter int unsigned ResLanes    = 1,       // FW result lanes (1, or 4 dividing NumPe)
  parameter int unsigned RedAdder    = 0,       // 1: the BW reduction on an adder of its own per PE
  localparam int unsigned Groups      = (NumPe + Lanes - 1) / Lanes,
  localparam int unsigned GroupWidth  = (Groups > 1) ? $clog2(Groups) : 1,
  localparam int unsigned MaxRows     = (4 * MaxHidden + NumPe - 1) / NumPe,
  localparam int unsigned PeWidth     = (NumPe > 1) ? $clog2(NumPe) : 1,
  localparam int unsigned WAddrWidth  = $clog2(WeightDepth),
  localparam int unsigned HiddenWidth = $clog2(MaxHidden + 1),
  localparam int unsigned RowsWidth   = $clog2(MaxRows + 1),
  localparam int unsigned ChainLen    = NumPe / NumChains
) (
  input  logic                   clk_i,
  input  logic                   rst_i,
  input  logic                   wrst_i,      // clears the weight bus relay
  input  logic                   cfg_bw_i,
  input  logic [HiddenWidth-1:0] cfg_hidden_i,
  input  logic [RowsWidth-1:0]   cfg_rows_base_i,
  input  logic [PeWidth-1:0]     cfg_rows_extra_i,
  input  logic                   tok_valid_i,
  input  logic [1:0]             tok_op_i,
  input  logic                   tok_first_i,
  input  logic                   tok_last_i,
  input  logic                   tok_zero_i,
  input  logic [PeWidth-1:0]     tok_pe_i,
  input  logic [WAddrWidth-1:0]  tok_addr_i,
  input  logic [RowLanes-1:0]    tok_mask_i,
  input  logic [RowLanes*32-1:0] tok_data_i,
  input  logic                   wbus_valid_i,
  input  logic [GroupWidth-1:0]  wbus_group_i,
  input  logic [WAddrWidth-1:0]  wbus_addr_i,
  input  logic [Lanes-1:0]       wbus_mask_i,
  input  logic [Lanes*32-1:0]    wbus_data_i,
  output logic [ResLanes-1:0]    res_valid_o,   // lane 0: BW partials too
  output logic                   res_zero_o,
  output logic [ResLanes*32-1:0] res_data_o,
  // Per PE: a MAC issued / a weight word written this cycle (engine counters).
  output logic [NumPe-1:0]       mac_o,
  output logic [NumPe-1:0]       wload_o
);

  // Links: slot i holds PE i's outputs (a chain head's inputs come from the tree).
  logic [NumPe-1:0]             cfg_bw;
  logic [NumPe*HiddenWidth-1:0] cfg_hidden;
  logic [NumPe*RowsWidth-1:0]   cfg_rows_base;
  logic [NumPe*PeWidth-1:0]     cfg_rows_extra;
  logic [NumPe-1:0]             tok_first, tok_last, tok_zero;
  logic [NumPe*3-1:0]           tok_kind;
  logic [NumPe*PeWidth-1:0]     tok_pe;
  logic [NumPe*WAddrWidth-1:0]  tok_addr;
  logic [NumPe*RowLanes-1:0]    tok_mask;
  logic [NumPe*RowLanes*32-1:0] tok_data;
  logic [NumPe*ResLanes-1:0]    res_valid;
  logic [NumPe-1:0]             res_zero;
  logic [NumPe*ResLanes*32-1:0] res_data;

  // Weight bus: group 0 takes the loader's register, each further group
  // registers it once more.
  logic [Groups-1:0]             wb_valid;
  logic [Groups*GroupWidth-1:0]  wb_group;
  logic [Groups*WAddrWidth-1:0]  wb_addr;
  logic [Groups*Lanes-1:0]       wb_mask;
  logic [Groups*Lanes*32-1:0]    wb_data;
  assign wb_valid[0]                 = wbus_valid_i;
  assign wb_group[0 +: GroupWidth]   = wbus_group_i;
  assign wb_addr[0 +: WAddrWidth]    = wbus_addr_i;
  assign wb_mask[0 +: Lanes]         = wbus_mask_i;
  assign wb_data[0 +: Lanes*32]      = wbus_data_i;
  if (Groups == 1) begin : g_one_group
    logic unused_wrst;
    assign unused_wrst = wrst_i;  // no relay register to clear
  end
  for (genvar q = 1; q < Groups; q++) begin : g_wbus
    logic                  valid_q;
    logic [GroupWidth-1:0] group_q;
    logic [WAddrWidth-1:0] addr_q;
    logic [Lanes-1:0]      mask_q;
    logic [Lanes*32-1:0]   data_q;
    always_ff @(posedge clk_i) begin
      if (wrst_i) valid_q <= 1'b0;
      else        valid_q <= wb_valid[q-1];
    end
    always_ff @(posedge clk_i) begin
      group_q <= wb_group[(q-1)*GroupWidth +: GroupWidth];
      addr_q  <= wb_addr[(q-1)*WAddrWidth +: WAddrWidth];
      mask_q  <= wb_mask[(q-1)*Lanes +: Lanes];
      data_q  <= wb_data[(q-1)*Lanes*32 +: Lanes*32];
    end
    assign wb_valid[q]                      = valid_q;
    assign wb_group[q*GroupWidth +: GroupWidth] = group_q;
    assign wb_addr[q*WAddrWidth +: WAddrWidth]  = addr_q;
    assign wb_mask[q*Lanes +: Lanes]            = mask_q;
    assign wb_data[q*Lanes*32 +: Lanes*32]      = data_q;
  end

  // Chain heads take the broadcast tree's leaves (one chain: the chain input).
  localparam int unsigned CfgTokWidth = 1 + HiddenWidth + RowsWidth + PeWidth +
                                        3 + 1 + 1 + 1 + PeWidth + WAddrWidth + RowLanes * 33;
  logic [NumChains*CfgTokWidth-1:0] head_in;
  // The token's kind, one-hot as the PEs relay it: {REDUCE, ROW, ELEM}.
  logic [2:0] tok_kind_in;
  assign tok_kind_in = {tok_valid_i && tok_op_i == engine_pkg::TOK_REDUCE,
                        tok_valid_i && tok_op_i == engine_pkg::TOK_ROW,
                        tok_valid_i && tok_op_i == engine_pkg::TOK_ELEM};
  chain_bcast #(
    .Width (CfgTokWidth),
    .Leaves(NumChains)
  ) u_bcast (
    .clk_i,
    .rst_i,
    .d_i({cfg_bw_i, cfg_hidden_i, cfg_rows_base_i, cfg_rows_extra_i, tok_kind_in,
          tok_first_i, tok_last_i, tok_zero_i, tok_pe_i, tok_addr_i, tok_mask_i, tok_data_i}),
    .q_o(head_in)
  );

  for (genvar i = 0; i < NumPe; i++) begin : g_pe
    localparam int unsigned Q = i / Lanes;  // group
    localparam int unsigned L = i % Lanes;  // lane
    localparam bit          Head = (i % ChainLen == 0);
    logic wld_valid;
    assign wld_valid = wb_valid[Q] && (wb_group[Q*GroupWidth +: GroupWidth] == GroupWidth'(Q)) &&
                       wb_mask[Q*Lanes + L];
    // Inputs: a head's from the tree (no results before it), the others' from
    // the previous PE.
    logic                   in_cfg_bw, in_tok_first, in_tok_last, in_tok_zero;
    logic [HiddenWidth-1:0] in_cfg_hidden;
    logic [RowsWidth-1:0]   in_cfg_rows_base;
    logic [PeWidth-1:0]     in_cfg_rows_extra, in_tok_pe;
    logic [2:0]             in_tok_kind;
    logic [WAddrWidth-1:0]  in_tok_addr;
    logic [RowLanes-1:0]    in_tok_mask;
    logic [RowLanes*32-1:0] in_tok_data;
    logic [ResLanes*32-1:0] in_res_data;
    logic [ResLanes-1:0]    in_res_valid;
    logic                   in_res_zero;
    if (Head) begin : g_head
      assign {in_cfg_bw, in_cfg_hidden, in_cfg_rows_base, in_cfg_rows_extra, in_tok_kind,
              in_tok_first, in_tok_last, in_tok_zero, in_tok_pe, in_tok_addr, in_tok_mask, in_tok_data} =
             head_in[(i / ChainLen)*CfgTokWidth +: CfgTokWidth];
      assign in_res_valid = '0;
      assign in_res_zero  = 1'b0;
      assign in_res_data  = '0;
    end else begin : g_link
      assign in_cfg_bw         = cfg_bw[i-1];
      assign in_cfg_hidden     = cfg_hidden[(i-1)*HiddenWidth +: HiddenWidth];
      assign in_cfg_rows_base  = cfg_rows_base[(i-1)*RowsWidth +: RowsWidth];
      assign in_cfg_rows_extra = cfg_rows_extra[(i-1)*PeWidth +: PeWidth];
      assign in_tok_kind       = tok_kind[(i-1)*3 +: 3];
      assign in_tok_first      = tok_first[i-1];
      assign in_tok_last       = tok_last[i-1];
      assign in_tok_zero       = tok_zero[i-1];
      assign in_tok_pe         = tok_pe[(i-1)*PeWidth +: PeWidth];
      assign in_tok_addr       = tok_addr[(i-1)*WAddrWidth +: WAddrWidth];
      assign in_tok_mask       = tok_mask[(i-1)*RowLanes +: RowLanes];
      assign in_tok_data       = tok_data[(i-1)*RowLanes*32 +: RowLanes*32];
      assign in_res_valid      = res_valid[(i-1)*ResLanes +: ResLanes];
      assign in_res_zero       = res_zero[i-1];
      assign in_res_data       = res_data[(i-1)*ResLanes*32 +: ResLanes*32];
    end
    pe #(
      .NumPe      (NumPe),
      .PeIndex    (i),
      .ChainHead  (Head),
      .WeightDepth(WeightDepth),
      .WeightUram (WeightUram),
      .MaxHidden  (MaxHidden),
      .MulLatency (MulLatency),
      .AddLatency (AddLatency),
      .RowLanes   (RowLanes),
      .ResLanes   (ResLanes),
      .RedAdder   (RedAdder)
    ) u_pe (
      .clk_i,
      .rst_i,
      .cfg_bw_i        (in_cfg_bw),
      .cfg_hidden_i    (in_cfg_hidden),
      .cfg_rows_base_i (in_cfg_rows_base),
      .cfg_rows_extra_i(in_cfg_rows_extra),
      .cfg_bw_o        (cfg_bw[i]),
      .cfg_hidden_o    (cfg_hidden[i*HiddenWidth +: HiddenWidth]),
      .cfg_rows_base_o (cfg_rows_base[i*RowsWidth +: RowsWidth]),
      .cfg_rows_extra_o(cfg_rows_extra[i*PeWidth +: PeWidth]),
      .tok_kind_i      (in_tok_kind),
      .tok_first_i     (in_tok_first),
      .tok_last_i      (in_tok_last),
      .tok_zero_i      (in_tok_zero),
      .tok_pe_i        (in_tok_pe),
      .tok_addr_i      (in_tok_addr),
      .tok_mask_i      (in_tok_mask),
      .tok_data_i      (in_tok_data),
      .tok_kind_o      (tok_kind[i*3 +: 3]),
      .tok_first_o     (tok_first[i]),
      .tok_last_o      (tok_last[i]),
      .tok_zero_o      (tok_zero[i]),
      .tok_pe_o        (tok_pe[i*PeWidth +: PeWidth]),
      .tok_addr_o      (tok_addr[i*WAddrWidth +: WAddrWidth]),
      .tok_mask_o      (tok_mask[i*RowLanes +: RowLanes]),
      .tok_data_o      (tok_data[i*RowLanes*32 +: RowLanes*32]),
      .wld_valid_i     (wld_valid),
      .wld_addr_i      (wb_addr[Q*WAddrWidth +: WAddrWidth]),
      .wld_data_i      (wb_data[(Q*Lanes + L)*32 +: 32]),
      .res_valid_i     (in_res_valid),
      .res_zero_i      (in_res_zero),
      .res_data_i      (in_res_data),
      .res_valid_o     (res_valid[i*ResLanes +: ResLanes]),
      .res_zero_o      (res_zero[i]),
      .res_data_o      (res_data[i*ResLanes*32 +: ResLanes*32]),
      .mac_o           (mac_o[i]),
      .wload_o         (wload_o[i])
    );
  end

  if (NumChains == 1) begin : g_one_chain
    assign res_valid_o = res_valid[(NumPe-1)*ResLanes +: ResLanes];
    assign res_zero_o  = res_zero[NumPe-1];
    assign res_data_o  = res_data[(NumPe-1)*ResLanes*32 +: ResLanes*32];
  end else begin : g_chains
    logic [NumChains*ResLanes-1:0]    tail_valid;
    logic [NumChains-1:0]             tail_zero;
    logic [NumChains*ResLanes*32-1:0] tail_data;
    for (genvar c = 0; c < NumChains; c++) begin : g_tail
      localparam int unsigned T = (c + 1) * ChainLen - 1;
      assign tail_valid[c*ResLanes +: ResLanes]       = res_valid[T*ResLanes +: ResLanes];
      assign tail_zero[c]                             = res_zero[T];
      assign tail_data[c*ResLanes*32 +: ResLanes*32]  = res_data[T*ResLanes*32 +: ResLanes*32];
    end
    chain_join #(
      .NumChains (NumChains),
      .AddLatency(AddLatency),
      .Lanes     (ResLanes)
    ) u_join (
      .clk_i,
      .rst_i,
      .bw_i   (cfg_bw_i),
      .valid_i(tail_valid),
      .zero_i (tail_zero),
      .data_i (tail_data),
      .valid_o(res_valid_o),
      .zero_o (res_zero_o),
      .data_o (res_data_o)
    );
  end

  // Lanes of the last group beyond NumPe have no PE.
  logic unused_lanes;
  assign unused_lanes = ^{wb_mask[Groups*Lanes-1 -: Lanes], wb_data[Groups*Lanes*32-1 -: Lanes*32]};

  // A chain's last PE relays its configuration and tokens to no one: the next
  // chain's head takes the tree's copy.
  for (genvar c = 0; c < NumChains; c++) begin : g_tail_relay
    localparam int unsigned S = (c + 1) * ChainLen - 1;
    logic unused_relay;
    assign unused_relay = ^{cfg_bw[S], cfg_hidden[S*HiddenWidth +: HiddenWidth],
                            cfg_rows_base[S*RowsWidth +: RowsWidth],
                            cfg_rows_extra[S*PeWidth +: PeWidth],
                            tok_kind[S*3 +: 3], tok_first[S], tok_last[S],
                            tok_zero[S], tok_pe[S*PeWidth +: PeWidth],
                            tok_addr[S*WAddrWidth +: WAddrWidth], tok_mask[S*RowLanes +: RowLanes],
                            tok_data[S*RowLanes*32 +: RowLanes*32]};
  end

`ifndef SYNTHESIS
  initial begin
    if (NumChains < 1 || NumPe % NumChains != 0)
      $error("pe_chain: NumChains=%0d must divide NumPe=%0d", NumChains, NumPe);
    if (NumChains > 1 && (ChainLen & (ChainLen - 1)) != 0)
      $error("pe_chain: with several chains, ChainLen=%0d must be a power of two", ChainLen);
    if (!(ResLanes == 1 || (ResLanes == 4 && NumPe % 4 == 0)))
      $error("pe_chain: ResLanes=%0d must be 1, or 4 with NumPe a multiple of 4", ResLanes);
    if (!(RowLanes == 1 || (RowLanes == 4 && ChainLen % 4 == 0)))
      $error("pe_chain: RowLanes=%0d must be 1, or 4 with chains of a multiple of 4 PEs", RowLanes);
  end
`endif

endmodule

`default_nettype wire
