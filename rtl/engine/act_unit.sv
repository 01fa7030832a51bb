// Activation unit of the recurrent engine, forward and backward, LSTM and GRU.
// FW: gathers the chain's G gate results of each hidden unit (they leave the
//     chain in row order k = G*j + g, ResLanes a cycle: with one lane a unit
//     every G cycles; with four a group of 4 rows a cycle, which is an LSTM
//     unit, and a GRU unit every cycle through a 4-to-3 regrouping behind a
//     FIFO of groups, which falls behind the chain by one group in 4 within
//     a step), adds b_hh (bias RAM) and
//     xp (Xp FIFO), reads c_{t-1} (LSTM) or h_{t-1} (GRU) from the state RAM,
//     runs act_fw_lstm / act_fw_gru and writes h (h buffer and h stream), the
//     new state, the gate-store record and, on the last time step, the final
//     state (state stream).
// BW: takes dh_rec[j] from the chain's reduction (one per cycle), dh_ext (dh
//     FIFO), the record (record FIFO) and the carried term (state RAM: dc for
//     LSTM, dh*z for GRU), runs act_bw_lstm / act_bw_gru and writes delta (delta
//     stream), the chain rows (delta buffer) and the new carry; in the final
//     step (dh_ext = -0, no record) it writes dh0 (and dc0) to the state stream.
// Activations: the FW datapaths share five always-flowing sigmoid/tanh lanes
// (df_act: lanes i, f, g, o, tanh(c) of LSTM; r, z, n of GRU on lanes 0-2) on
// three dual-port tables; LSTM and GRU never run in one command, so the
// command's cell picks whose operands enter lanes 0-2. BW uses none.
// Every step is announced by a descriptor from the sequencer, which has
// reserved room in every output FIFO and made sure every input FIFO holds the
// whole step by the time its first result arrives, so nothing here ever
// stalls (asserted).
// Latency: FW 3/5*AddLatency + 2*MulLatency + 2*ACT_LATENCY (LSTM/GRU) plus 1;
// BW 2*AddLatency + 4*MulLatency + 1; with four lanes the FW units enter 3
// cycles after their group (the FIFO and the side RAM read). Throughput: one
// unit per G cycles (FW, one lane) or per cycle (FW, four lanes; BW).
`default_nettype none

module act_unit #(
  parameter int unsigned MaxHidden    = 32,
  parameter int unsigned MaxBatch     = 4,
  parameter int unsigned MulLatency   = 2,
  parameter int unsigned AddLatency   = 3,
  parameter int unsigned MemAddrWidth = 40,
  parameter int unsigned NumBanks     = 2,
  parameter int unsigned ResLanes     = 1,   // chain result lanes (1 or 4)
  localparam int unsigned BankWidth   = (NumBanks > 1) ? $clog2(NumBanks) : 1,
  localparam int unsigned JWidth      = (MaxHidden > 1) ? $clog2(MaxHidden) : 1,
  localparam int unsigned BWidth      = (MaxBatch > 1) ? $clog2(MaxBatch) : 1,
  localparam int unsigned HiddenWidth = $clog2(MaxHidden + 1),
  localparam int unsigned BufWidth    = BWidth + JWidth
) (
  input  logic                    clk_i,
  input  logic                    rst_i,
  // Command configuration (stable while a command runs).
  input  logic                    cfg_bw_i,
  input  logic                    cfg_gru_i,
  input  logic [HiddenWidth-1:0]  cfg_hidden_i,
  input  logic [MemAddrWidth-1:0] cfg_store_base_i,
  input  logic [BankWidth-1:0]    cfg_bank_i,     // the weight bank (its b_hh)
  input  logic                    start_i,        // command start: reset record counter
  // Step descriptors (one per chain step, in chain order).
  input  logic                    desc_valid_i,
  output logic                    desc_ready_o,
  input  logic [BWidth-1:0]       desc_batch_i,
  input  logic                    desc_flag_i,    // FW: last time step; BW: final step
  // Chain output (FW: a group of ResLanes rows, lane 0 valid for a group;
  // BW: dh_rec on lane 0).
  input  logic                    res_valid_i,
  input  logic [ResLanes*32-1:0]  res_data_i,
  // Input FIFO heads (first-word fall-through) and pops.
  input  logic                    xp_valid_i,
  input  logic [127:0]            xp_data_i,
  output logic                    xp_pop_o,
  input  logic                    dh_valid_i,
  input  logic [31:0]             dh_data_i,
  output logic                    dh_pop_o,
  input  logic                    rec_valid_i,
  input  logic [255:0]            rec_data_i,
  output logic                    rec_pop_o,
  // Loading: b_hh (the loader: any of a unit's G gates per write, any bank)
  // and the initial state / carry.
  input  logic [3:0]              bias_we_i,
  input  logic [BankWidth-1:0]    bias_bank_i,
  input  logic [JWidth-1:0]       bias_unit_i,
  input  logic [127:0]            bias_data_i,
  input  logic                    state_we_i,
  input  logic [BufWidth-1:0]     state_addr_i,   // {b, j}
  input  logic [31:0]             state_data_i,
  // Results.
  output logic                    unit_done_o,
  output logic                    nonfinite_o,    // this unit's output has a NaN or Inf
  output logic                    hbuf_we_o,
  output logic [BufWidth-1:0]     hbuf_addr_o,
  output logic [31:0]             hbuf_data_o,
  output logic                    dbuf_we_o,
  output logic [BufWidth-1:0]     dbuf_addr_o,
  output logic [127:0]            dbuf_data_o,
  output logic                    hout_push_o,
  output logic [31:0]             hout_data_o,
  output logic                    dout_push_o,
  output logic [127:0]            dout_data_o,
  output logic                    sout_push_o,
  output logic [63:0]             sout_data_o,    // {second word, first word}
  output logic                    store_push_o,
  output logic [MemAddrWidth-1:0] store_addr_o,
  output logic [255:0]            store_data_o
);

  // Metadata travelling with a unit: {flag, b, j, carry_in}.
  localparam int unsigned MetaWidth = 1 + BWidth + JWidth + 32;
  localparam logic [31:0] NEG_ZERO = engine_pkg::FP_NEG_ZERO;

  // ------------------------------------------------------------ input side
  logic [1:0]        gate_q, gate_d;       // FW: gate index of the next result
  logic [JWidth-1:0] unit_q, unit_d;       // unit index of the next result
  logic              in_step_q, in_step_d; // a step's results are arriving
  logic [BWidth-1:0] batch_q, batch_d;
  logic              flag_q, flag_d;
  logic [1:0]        last_gate;
  logic              first_of_step, last_of_unit, last_of_step;
  logic [BWidth-1:0] cur_batch;
  logic              cur_flag;

  // take: a unit's result (one lane, FW: a gate) enters this cycle; FW with
  // four lanes, a unit cut from the groups (fw_take, g_groups).
  logic              take, fw_take;
  assign take          = cfg_bw_i ? res_valid_i : fw_take;
  assign last_gate     = cfg_gru_i ? 2'd2 : 2'd3;
  assign first_of_step = take && !in_step_q;
  assign desc_ready_o  = first_of_step;
  assign cur_batch     = first_of_step ? desc_batch_i : batch_q;
  assign cur_flag      = first_of_step ? desc_flag_i : flag_q;
  assign last_of_unit  = cfg_bw_i || ResLanes > 1 || (gate_q == last_gate);
  assign last_of_step  = last_of_unit && (32'(unit_q) + 1 == 32'(cfg_hidden_i));

  always_comb begin
    gate_d    = gate_q;
    unit_d    = unit_q;
    in_step_d = in_step_q;
    batch_d   = cur_batch;
    flag_d    = cur_flag;
    if (take) begin
      in_step_d = !last_of_step;
      gate_d    = last_of_unit ? 2'd0 : gate_q + 2'd1;
      unit_d    = last_of_step ? '0 : (last_of_unit ? unit_q + 1'b1 : unit_q);
    end
  end
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      gate_q    <= '0;
      unit_q    <= '0;
      in_step_q <= 1'b0;
    end else begin
      gate_q    <= gate_d;
      unit_q    <= unit_d;
      in_step_q <= in_step_d;
    end
  end
  always_ff @(posedge clk_i) begin
    batch_q <= batch_d;
    flag_q  <= flag_d;
  end

  // Bias RAMs (one per gate lane, NumBanks banks) and the state RAM, read at a unit's first
  // result (FW) or at its dh_rec (BW); data is used one or more cycles later.
  logic              side_re;
  logic [127:0]      bias_rdata;
  logic [31:0]       state_rdata;
  assign side_re = take && (cfg_bw_i || gate_q == 2'd0);

  for (genvar g = 0; g < 4; g++) begin : g_bias
    prim_ram_1r1w #(
      .Width(32),
      .Depth(1 << (BankWidth + JWidth))
    ) u_bias (
      .clk_i,
      .we_i   (bias_we_i[g]),
      .waddr_i({bias_bank_i, bias_unit_i}),
      .wdata_i(bias_data_i[g*32 +: 32]),
      .re_i   (side_re),
      .rclr_i (1'b0),
      .raddr_i({cfg_bank_i, unit_q}),
      .rdata_o(bias_rdata[g*32 +: 32])
    );
  end

  logic              state_we;
  logic [BufWidth-1:0] state_waddr;
  logic [31:0]       state_wdata;
  prim_ram_1r1w #(
    .Width(32),
    .Depth(1 << BufWidth)
  ) u_state (
    .clk_i,
    .we_i   (state_we),
    .waddr_i(state_waddr),
    .wdata_i(state_wdata),
    .re_i   (side_re),
    .rclr_i (1'b0),
    .raddr_i({cur_batch, unit_q}),
    .rdata_o(state_rdata)
  );

  // FW: a unit's G gate results, launched with its bias and state words.
  logic              fw_launch;
  logic [127:0]      fw_acc;
  logic [MetaWidth-1:0] fw_meta;
  if (ResLanes == 1) begin : g_gather
    // One result a cycle: collect the gates; launch on the last (the side
    // RAMs were read at the first).
    logic [95:0] gates_q, gates_d;
    always_comb begin
      gates_d = gates_q;
      if (res_valid_i && !cfg_bw_i && !last_of_unit) gates_d[gate_q*32 +: 32] = res_data_i;
    end
    always_ff @(posedge clk_i) gates_q <= gates_d;
    assign fw_take       = res_valid_i;
    assign fw_launch     = res_valid_i && !cfg_bw_i && last_of_unit;
    assign fw_acc        = cfg_gru_i ? {32'h0, res_data_i, gates_q[63:0]} : {res_data_i, gates_q};
    assign fw_meta       = {cur_flag, cur_batch, unit_q, 32'h0};
  end else begin : g_groups
    // Four rows a cycle into a FIFO of groups. LSTM: a group is a unit. GRU:
    // units of 3 rows are cut from the groups, holding up to 3 rows over
    // (rows held: 0 -> 1 -> 2 -> 3, and the fourth cycle makes a unit of the
    // held rows without a group); a step's last unit drops what is held (the
    // padding lanes of its last group). Groups arrive 4 rows a cycle and
    // leave 3, so the FIFO holds at most a quarter of a step's groups
    // (GroupDepth), and empties before the next step's groups arrive (the
    // sequencer's fw_result_gap counts H slots).
    localparam int unsigned GroupDepth = 1 << $clog2((3 * MaxHidden + 15) / 16 + 2);
    logic         grp_valid, grp_pop, grp_in_ready;
    logic [127:0] grp_data;
    logic [$clog2(GroupDepth + 2)-1:0] unused_grp_count;
    prim_fifo #(.Width(128), .Depth(GroupDepth)) u_groups (
      .clk_i, .rst_i,
      .in_valid_i (res_valid_i && !cfg_bw_i),
      .in_ready_o (grp_in_ready),
      .in_data_i  (res_data_i),
      .out_valid_o(grp_valid),
      .out_ready_i(grp_pop),
      .out_data_o (grp_data),
      .count_o    (unused_grp_count)
    );
    logic [1:0]   held_q, held_d;    // GRU rows held over
    logic [95:0]  hold_q, hold_d;
    logic         fw_unit_valid;
    logic [127:0] fw_unit;
    assign fw_take = fw_unit_valid;
    always_comb begin
      held_d        = held_q;
      hold_d        = hold_q;
      fw_unit_valid = grp_valid;
      fw_unit       = grp_data;
      grp_pop       = grp_valid;
      if (cfg_gru_i) begin
        unique case (held_q)
          2'd0: begin
            fw_unit           = {32'h0, grp_data[95:0]};
            hold_d[31:0]      = grp_data[127:96];
          end
          2'd1: begin
            fw_unit           = {32'h0, grp_data[63:0], hold_q[31:0]};
            hold_d[63:0]      = grp_data[127:64];
          end
          2'd2: begin
            fw_unit           = {32'h0, grp_data[31:0], hold_q[63:0]};
            hold_d            = grp_data[127:32];
          end
          default: begin
            fw_unit_valid     = 1'b1;
            fw_unit           = {32'h0, hold_q};
            grp_pop           = 1'b0;
          end
        endcase
        if (fw_unit_valid) held_d = held_q + 2'd1;
      end
      if (fw_unit_valid && last_of_step) held_d = 2'd0;
    end
    always_ff @(posedge clk_i) begin
      if (rst_i) held_q <= '0;
      else       held_q <= held_d;
    end
    always_ff @(posedge clk_i) hold_q <= hold_d;

    // The side RAMs are read as the unit is cut; it launches a cycle later.
    logic                 launch_q;
    logic [127:0]         acc_q;
    logic [MetaWidth-1:0] meta_q;
    always_ff @(posedge clk_i) begin
      if (rst_i) launch_q <= 1'b0;
      else       launch_q <= fw_unit_valid && !cfg_bw_i;
    end
    always_ff @(posedge clk_i) begin
      acc_q  <= fw_unit;
      meta_q <= {cur_flag, cur_batch, unit_q, 32'h0};
    end
    assign fw_launch = launch_q;
    assign fw_acc    = acc_q;
    assign fw_meta   = meta_q;
`ifndef SYNTHESIS
    always_ff @(posedge clk_i) begin
      if (!rst_i) begin
        assert (!(res_valid_i && !cfg_bw_i && !grp_in_ready))
        else $error("act_unit: group FIFO full");
        assert (!(fw_unit_valid && cfg_bw_i)) else $error("act_unit: FW unit in a BW command");
      end
    end
`endif
  end
  assign xp_pop_o = fw_launch;

  // BW: one unit per dh_rec; the carry read lands one cycle later.
  logic                 bw_launch_q;
  logic [MetaWidth-1:0] bw_meta_q;
  logic [31:0]          bw_dh_ext_q, bw_dh_rec_q;
  logic [255:0]         bw_rec_q;
  logic                 bw_take;
  assign bw_take   = res_valid_i && cfg_bw_i;
  // With bw_take, take holds, so cur_flag (first_of_step ? desc_flag :
  // flag_q) is in_step_q ? flag_q : desc_flag_i. Written so, the pops do not
  // wait for take (the FW gather's pick, from the sequencer's cell): one path
  // through the sequencer, this unit and the FIFO counts, which ABC maps in
  // three runs (docs/decisions.md, "What ABC's level count follows").
  logic bw_flag;
  assign bw_flag   = in_step_q ? flag_q : desc_flag_i;
  assign dh_pop_o  = bw_take && !bw_flag;
  assign rec_pop_o = bw_take && !bw_flag;
  always_ff @(posedge clk_i) begin
    if (rst_i) bw_launch_q <= 1'b0;
    else       bw_launch_q <= bw_take;
  end
  always_ff @(posedge clk_i) begin
    bw_meta_q   <= {cur_flag, cur_batch, unit_q, 32'h0};
    bw_dh_ext_q <= cur_flag ? NEG_ZERO : dh_data_i;
    bw_dh_rec_q <= res_data_i[31:0];
    bw_rec_q    <= cur_flag ? '0 : rec_data_i;
  end
  logic [MetaWidth-1:0] bw_meta;
  assign bw_meta = {bw_meta_q[MetaWidth-1:32], state_rdata};

  // ------------------------------------------------------------ datapaths
  logic                 fwl_valid, fwg_valid, bwl_valid, bwg_valid;
  logic [MetaWidth-1:0] fwl_meta, fwg_meta, bwl_meta, bwg_meta;
  logic [31:0]          fwl_h, fwg_h, fwl_state, fwg_state;
  logic [255:0]         fwl_rec, fwg_rec;
  logic [127:0]         bwl_delta, bwg_delta, bwl_rows, bwg_rows;
  logic [31:0]          bwl_carry, bwg_carry, bwl_dh, bwg_dh;
  logic [159:0]         fwl_act_x, act_x, act_y;
  logic [95:0]          fwg_act_x;

  act_fw_lstm #(
    .MulLatency(MulLatency), .AddLatency(AddLatency), .MetaWidth(MetaWidth)
  ) u_fw_lstm (
    .clk_i, .rst_i,
    .in_valid_i (fw_launch && !cfg_gru_i),
    .meta_i     (fw_meta),
    .acc_i      (fw_acc),
    .xp_i       (xp_data_i),
    .bias_i     (bias_rdata),
    .state_i    (state_rdata),
    .out_valid_o(fwl_valid),
    .meta_o     (fwl_meta),
    .h_o        (fwl_h),
    .state_o    (fwl_state),
    .record_o   (fwl_rec),
    .act_x_o    (fwl_act_x),
    .act_y_i    (act_y)
  );

  act_fw_gru #(
    .MulLatency(MulLatency), .AddLatency(AddLatency), .MetaWidth(MetaWidth)
  ) u_fw_gru (
    .clk_i, .rst_i,
    .in_valid_i (fw_launch && cfg_gru_i),
    .meta_i     (fw_meta),
    .acc_i      (fw_acc),
    .xp_i       (xp_data_i),
    .bias_i     (bias_rdata),
    .state_i    (state_rdata),
    .out_valid_o(fwg_valid),
    .meta_o     (fwg_meta),
    .h_o        (fwg_h),
    .state_o    (fwg_state),
    .record_o   (fwg_rec),
    .act_x_o    (fwg_act_x),
    .act_y_i    (act_y[95:0])
  );

  // The shared activation lanes: sigmoid on 0, 1, 3 and tanh on 2, 4 serve
  // LSTM's i, f, g, o, c and GRU's r, z, n alike; cfg_gru_i is stable while a
  // command runs, and the unselected datapath's results are never used.
  assign act_x = cfg_gru_i ? {fwl_act_x[159:96], fwg_act_x} : fwl_act_x;

  df_act #(
    .NumLanes(5),
    .Funcs   (5'b10100)
  ) u_df_act (
    .clk_i,
    .rst_i,
    .x_i(act_x),
    .y_o(act_y)
  );

  act_bw_lstm #(
    .MulLatency(MulLatency), .AddLatency(AddLatency), .MetaWidth(MetaWidth)
  ) u_bw_lstm (
    .clk_i, .rst_i,
    .in_valid_i (bw_launch_q && !cfg_gru_i),
    .meta_i     (bw_meta),
    .dh_ext_i   (bw_dh_ext_q),
    .dh_rec_i   (bw_dh_rec_q),
    .carry_i    (state_rdata),
    .record_i   (bw_rec_q),
    .out_valid_o(bwl_valid),
    .meta_o     (bwl_meta),
    .delta_o    (bwl_delta),
    .rows_o     (bwl_rows),
    .carry_o    (bwl_carry),
    .dh_o       (bwl_dh)
  );

  act_bw_gru #(
    .MulLatency(MulLatency), .AddLatency(AddLatency), .MetaWidth(MetaWidth)
  ) u_bw_gru (
    .clk_i, .rst_i,
    .in_valid_i (bw_launch_q && cfg_gru_i),
    .meta_i     (bw_meta),
    .dh_ext_i   (bw_dh_ext_q),
    .dh_rec_i   (bw_dh_rec_q),
    .carry_i    (state_rdata),
    .record_i   (bw_rec_q),
    .out_valid_o(bwg_valid),
    .meta_o     (bwg_meta),
    .delta_o    (bwg_delta),
    .rows_o     (bwg_rows),
    .carry_o    (bwg_carry),
    .dh_o       (bwg_dh)
  );

  // ----------------------------------------------------------- output side
  logic                 fw_out, bw_out, out_flag;
  logic [MetaWidth-1:0] out_meta;
  logic [31:0]          fw_h, fw_state, bw_carry, bw_dh;
  logic [255:0]         fw_rec;
  logic [127:0]         bw_delta, bw_rows;
  logic [BufWidth-1:0]  out_addr;

  assign fw_out   = fwl_valid || fwg_valid;
  assign bw_out   = bwl_valid || bwg_valid;
  assign out_meta = cfg_bw_i ? (cfg_gru_i ? bwg_meta : bwl_meta) : (cfg_gru_i ? fwg_meta : fwl_meta);
  assign out_flag = out_meta[MetaWidth-1];
  assign out_addr = out_meta[32 +: BufWidth];
  assign fw_h     = cfg_gru_i ? fwg_h : fwl_h;
  assign fw_state = cfg_gru_i ? fwg_state : fwl_state;
  assign fw_rec   = cfg_gru_i ? fwg_rec : fwl_rec;
  assign bw_delta = cfg_gru_i ? bwg_delta : bwl_delta;
  assign bw_rows  = cfg_gru_i ? bwg_rows : bwl_rows;
  assign bw_carry = cfg_gru_i ? bwg_carry : bwl_carry;
  assign bw_dh    = cfg_gru_i ? bwg_dh : bwl_dh;

  // Gate-store address of the next record (records are written in FW order).
  logic [MemAddrWidth-1:0] store_addr_q, store_addr_d;
  always_comb begin
    store_addr_d = store_addr_q;
    if (fw_out) store_addr_d = store_addr_q + MemAddrWidth'(engine_pkg::RECORD_BYTES);
    if (start_i) store_addr_d = cfg_store_base_i;
  end
  always_ff @(posedge clk_i) store_addr_q <= store_addr_d;

  assign unit_done_o  = fw_out || bw_out;

  // A unit whose result (h; delta or dh0) holds a NaN or an infinity: an
  // all-ones exponent.
  assign nonfinite_o = (fw_out && &fw_h[30:23]) ||
                       (bw_out && !out_flag && (&bw_delta[30:23] || &bw_delta[62:55] ||
                                                &bw_delta[94:87] || &bw_delta[126:119])) ||
                       (bw_out && out_flag && &bw_dh[30:23]);
  assign hbuf_we_o    = fw_out;
  assign hbuf_addr_o  = out_addr;
  assign hbuf_data_o  = fw_h;
  assign hout_push_o  = fw_out;
  assign hout_data_o  = fw_h;
  assign store_push_o = fw_out;
  assign store_addr_o = store_addr_q;
  assign store_data_o = fw_rec;
  assign dbuf_we_o    = bw_out && !out_flag;
  assign dbuf_addr_o  = out_addr;
  assign dbuf_data_o  = bw_rows;
  assign dout_push_o  = bw_out && !out_flag;
  assign dout_data_o  = bw_delta;

  // Final state: FW last step {c, h} / {-, h}; BW final {dc0, dh0} / {-, dh0},
  // where dc0 is the carry that entered the final step.
  assign sout_push_o = (fw_out || bw_out) && out_flag;
  assign sout_data_o = cfg_bw_i ? {out_meta[31:0], bw_dh} : {fw_state, fw_h};

  // State RAM writes: loader, FW new state, BW new carry.
  always_comb begin
    state_we    = state_we_i;
    state_waddr = state_addr_i;
    state_wdata = state_data_i;
    if (fw_out || (bw_out && !out_flag)) begin
      state_we    = 1'b1;
      state_waddr = out_addr;
      state_wdata = cfg_bw_i ? bw_carry : fw_state;
    end
  end

  logic unused_act;
  assign unused_act = ^{fw_meta[31:0], fwl_meta[31:0], fwg_meta[31:0], bw_meta_q[31:0]};

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (!rst_i) begin
      assert (!(first_of_step && !desc_valid_i))
      else $error("act_unit: chain results without a step descriptor");
      assert (!(xp_pop_o && !xp_valid_i)) else $error("act_unit: Xp FIFO empty at a unit launch");
      assert (!(dh_pop_o && !dh_valid_i)) else $error("act_unit: dh FIFO empty at a unit launch");
      assert (!(rec_pop_o && !rec_valid_i)) else $error("act_unit: record FIFO empty at a unit launch");
      assert (!(bw_take && bw_flag != cur_flag)) else $error("act_unit: the pops' flag is not the unit's");
      assert (!(state_we_i && (fw_out || bw_out))) else $error("act_unit: state load during a command");
      assert (!(fw_out && bw_out)) else $error("act_unit: FW and BW outputs at once");
    end
  end
`endif

endmodule

`default_nettype wire
