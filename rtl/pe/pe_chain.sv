// The chain of NumPe processing elements. Tokens and configuration enter at
// PE 0 and are relayed PE to PE; results (FW) and reduction partials (BW) are
// relayed the same way and leave from the last PE. Every link is a register
// between neighbours: there is no broadcast net besides clock and reset.
// Weights travel on their own bus (the loader's): Lanes words per cycle for
// the PEs of one group (Lanes consecutive PEs), registered once per group, so
// group q writes a word q cycles after the loader sent it.
// Timing (token issued to PE 0's input at cycle a):
//   FW: the results of a step whose last ELEM token arrives at cycle a leave
//       at a + DrainDelay + NumPe + 2 + k, k = 0 .. G*H-1 (row order);
//   BW: a REDUCE token arriving at cycle a makes dh_rec[c] leave at
//       a + 1 + NumPe*(AddLatency+2) + c, c = 0 .. H-1.
`default_nettype none

module pe_chain #(
  parameter int unsigned NumPe       = 4,
  parameter int unsigned WeightDepth = 1024,
  parameter int unsigned MaxHidden   = 32,
  parameter int unsigned MulLatency  = 2,
  parameter int unsigned AddLatency  = 3,
  parameter int unsigned Lanes       = 1,       // weight words per cycle
  localparam int unsigned Groups      = (NumPe + Lanes - 1) / Lanes,
  localparam int unsigned GroupWidth  = (Groups > 1) ? $clog2(Groups) : 1,
  localparam int unsigned MaxRows     = (4 * MaxHidden + NumPe - 1) / NumPe,
  localparam int unsigned PeWidth     = (NumPe > 1) ? $clog2(NumPe) : 1,
  localparam int unsigned WAddrWidth  = $clog2(WeightDepth),
  localparam int unsigned HiddenWidth = $clog2(MaxHidden + 1),
  localparam int unsigned RowsWidth   = $clog2(MaxRows + 1)
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
  input  logic [31:0]            tok_data_i,
  input  logic                   wbus_valid_i,
  input  logic [GroupWidth-1:0]  wbus_group_i,
  input  logic [WAddrWidth-1:0]  wbus_addr_i,
  input  logic [Lanes-1:0]       wbus_mask_i,
  input  logic [Lanes*32-1:0]    wbus_data_i,
  output logic                   res_valid_o,
  output logic                   res_zero_o,
  output logic [31:0]            res_data_o,
  // Per PE: a MAC issued / a weight word written this cycle (engine counters).
  output logic [NumPe-1:0]       mac_o,
  output logic [NumPe-1:0]       wload_o
);

  localparam int unsigned N = NumPe + 1;  // link slots: input of PE i is slot i

  logic [N-1:0]             cfg_bw;
  logic [N*HiddenWidth-1:0] cfg_hidden;
  logic [N*RowsWidth-1:0]   cfg_rows_base;
  logic [N*PeWidth-1:0]     cfg_rows_extra;
  logic [N-1:0]             tok_valid, tok_first, tok_last, tok_zero;
  logic [N*2-1:0]           tok_op;
  logic [N*PeWidth-1:0]     tok_pe;
  logic [N*WAddrWidth-1:0]  tok_addr;
  logic [N*32-1:0]          tok_data;
  logic [N-1:0]             res_valid, res_zero;
  logic [N*32-1:0]          res_data;

  assign cfg_bw[0]                     = cfg_bw_i;
  assign cfg_hidden[0 +: HiddenWidth]  = cfg_hidden_i;
  assign cfg_rows_base[0 +: RowsWidth] = cfg_rows_base_i;
  assign cfg_rows_extra[0 +: PeWidth]  = cfg_rows_extra_i;
  assign tok_valid[0]                  = tok_valid_i;
  assign tok_op[0 +: 2]                = tok_op_i;
  assign tok_first[0]                  = tok_first_i;
  assign tok_last[0]                   = tok_last_i;
  assign tok_zero[0]                   = tok_zero_i;
  assign tok_pe[0 +: PeWidth]          = tok_pe_i;
  assign tok_addr[0 +: WAddrWidth]     = tok_addr_i;
  assign tok_data[0 +: 32]             = tok_data_i;
  assign res_valid[0]                  = 1'b0;
  assign res_zero[0]                   = 1'b0;
  assign res_data[0 +: 32]             = '0;

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

  for (genvar i = 0; i < NumPe; i++) begin : g_pe
    localparam int unsigned Q = i / Lanes;  // group
    localparam int unsigned L = i % Lanes;  // lane
    logic wld_valid;
    assign wld_valid = wb_valid[Q] && (wb_group[Q*GroupWidth +: GroupWidth] == GroupWidth'(Q)) &&
                       wb_mask[Q*Lanes + L];
    pe #(
      .NumPe      (NumPe),
      .PeIndex    (i),
      .WeightDepth(WeightDepth),
      .MaxHidden  (MaxHidden),
      .MulLatency (MulLatency),
      .AddLatency (AddLatency)
    ) u_pe (
      .clk_i,
      .rst_i,
      .cfg_bw_i        (cfg_bw[i]),
      .cfg_hidden_i    (cfg_hidden[i*HiddenWidth +: HiddenWidth]),
      .cfg_rows_base_i (cfg_rows_base[i*RowsWidth +: RowsWidth]),
      .cfg_rows_extra_i(cfg_rows_extra[i*PeWidth +: PeWidth]),
      .cfg_bw_o        (cfg_bw[i+1]),
      .cfg_hidden_o    (cfg_hidden[(i+1)*HiddenWidth +: HiddenWidth]),
      .cfg_rows_base_o (cfg_rows_base[(i+1)*RowsWidth +: RowsWidth]),
      .cfg_rows_extra_o(cfg_rows_extra[(i+1)*PeWidth +: PeWidth]),
      .tok_valid_i     (tok_valid[i]),
      .tok_op_i        (tok_op[i*2 +: 2]),
      .tok_first_i     (tok_first[i]),
      .tok_last_i      (tok_last[i]),
      .tok_zero_i      (tok_zero[i]),
      .tok_pe_i        (tok_pe[i*PeWidth +: PeWidth]),
      .tok_addr_i      (tok_addr[i*WAddrWidth +: WAddrWidth]),
      .tok_data_i      (tok_data[i*32 +: 32]),
      .tok_valid_o     (tok_valid[i+1]),
      .tok_op_o        (tok_op[(i+1)*2 +: 2]),
      .tok_first_o     (tok_first[i+1]),
      .tok_last_o      (tok_last[i+1]),
      .tok_zero_o      (tok_zero[i+1]),
      .tok_pe_o        (tok_pe[(i+1)*PeWidth +: PeWidth]),
      .tok_addr_o      (tok_addr[(i+1)*WAddrWidth +: WAddrWidth]),
      .tok_data_o      (tok_data[(i+1)*32 +: 32]),
      .wld_valid_i     (wld_valid),
      .wld_addr_i      (wb_addr[Q*WAddrWidth +: WAddrWidth]),
      .wld_data_i      (wb_data[(Q*Lanes + L)*32 +: 32]),
      .res_valid_i     (res_valid[i]),
      .res_zero_i      (res_zero[i]),
      .res_data_i      (res_data[i*32 +: 32]),
      .res_valid_o     (res_valid[i+1]),
      .res_zero_o      (res_zero[i+1]),
      .res_data_o      (res_data[(i+1)*32 +: 32]),
      .mac_o           (mac_o[i]),
      .wload_o         (wload_o[i])
    );
  end

  assign res_valid_o = res_valid[NumPe];
  assign res_zero_o  = res_zero[NumPe];
  assign res_data_o  = res_data[NumPe*32 +: 32];

  // Lanes of the last group beyond NumPe have no PE.
  logic unused_lanes;
  assign unused_lanes = ^{wb_mask[Groups*Lanes-1 -: Lanes], wb_data[Groups*Lanes*32-1 -: Lanes*32]};

  // The last PE's relayed tokens and configuration have no consumer.
  logic unused_tail;
  assign unused_tail = ^{cfg_bw[NumPe], cfg_hidden[NumPe*HiddenWidth +: HiddenWidth],
                         cfg_rows_base[NumPe*RowsWidth +: RowsWidth],
                         cfg_rows_extra[NumPe*PeWidth +: PeWidth], tok_valid[NumPe],
                         tok_op[NumPe*2 +: 2], tok_first[NumPe], tok_last[NumPe],
                         tok_zero[NumPe], tok_pe[NumPe*PeWidth +: PeWidth],
                         tok_addr[NumPe*WAddrWidth +: WAddrWidth], tok_data[NumPe*32 +: 32]};

endmodule

`default_nettype wire
