// Recurrent engine: the FPGA part of training one LSTM or GRU layer. It keeps
// the recurrent weights U resident in a chain of NumPe processing elements and
// runs, per command:
//   LOAD      U (chain row order, G*H*H words) then b_hh (G*H words) from the
//             weight stream;
//   FORWARD   T steps of B interleaved sequences: h0/c0 from the state stream,
//             xp_t (W_ih x_t + b_ih, unit-major) in, h_t out, final (h, c) on
//             the state stream; activations saved to the gate store;
//   BACKWARD  the same sequences in reverse: the initial carry (dc_T for LSTM)
//             from the state stream, dh_t in, the gate gradients delta_t out,
//             (dh0, dc0) on the state stream; activations read back from the
//             gate store. U is reused as resident (U^T delta on the chain).
// All streams are 32-bit valid/ready. The gate store is a simple in-order
// request/response memory port (one 256-bit record per unit and step; every
// request gets one response, writes included).
// Illegal configurations end the command at once with an error status.
// NaN and infinity propagate as IEEE says (one canonical NaN); cnt_nonfinite_o
// counts the hidden units whose outputs hold one, so the host can stop a
// diverging run without scanning every output.
`default_nettype none

module engine #(
  parameter int unsigned NumPe        = 4,
  parameter int unsigned WeightDepth  = 1024,
  parameter int unsigned MaxHidden    = 32,
  parameter int unsigned MaxBatch     = 4,
  parameter int unsigned MulLatency   = 2,
  parameter int unsigned AddLatency   = 3,
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
  input  logic [MemAddrWidth-1:0] cfg_store_base_i,
  input  logic [MemAddrWidth-1:0] cfg_store_size_i,
  output logic                    busy_o,
  output logic                    done_o,
  output logic [3:0]              status_o,
  // Input streams.
  input  logic                    weight_valid_i,
  output logic                    weight_ready_o,
  input  logic [31:0]             weight_data_i,
  input  logic                    state_in_valid_i,
  output logic                    state_in_ready_o,
  input  logic [31:0]             state_in_data_i,
  input  logic                    xp_valid_i,
  output logic                    xp_ready_o,
  input  logic [31:0]             xp_data_i,
  input  logic                    dh_valid_i,
  output logic                    dh_ready_o,
  input  logic [31:0]             dh_data_i,
  // Output streams.
  output logic                    h_valid_o,
  input  logic                    h_ready_i,
  output logic [31:0]             h_data_o,
  output logic                    delta_valid_o,
  input  logic                    delta_ready_i,
  output logic [31:0]             delta_data_o,
  output logic                    state_out_valid_o,
  input  logic                    state_out_ready_i,
  output logic [31:0]             state_out_data_o,
  // Gate store memory port.
  output logic                    mem_req_valid_o,
  input  logic                    mem_req_ready_i,
  output logic                    mem_req_write_o,
  output logic [MemAddrWidth-1:0] mem_req_addr_o,
  output logic [255:0]            mem_req_data_o,
  input  logic                    mem_rsp_valid_i,
  output logic                    mem_rsp_ready_o,
  input  logic [255:0]            mem_rsp_data_i,
  // Counters of the last command.
  output logic [63:0]             cnt_cycles_o,
  output logic [63:0]             cnt_macs_o,
  output logic [63:0]             cnt_stall_input_o,
  output logic [63:0]             cnt_stall_output_o,
  output logic [63:0]             cnt_stall_dep_o,
  output logic [63:0]             cnt_stall_store_o,
  output logic [63:0]             cnt_weight_words_o,
  output logic [63:0]             cnt_nonfinite_o   // units with a NaN/Inf output
);

  localparam int unsigned MaxRows     = (4 * MaxHidden + NumPe - 1) / NumPe;
  localparam int unsigned PeWidth     = (NumPe > 1) ? $clog2(NumPe) : 1;
  localparam int unsigned WAddrWidth  = $clog2(WeightDepth);
  localparam int unsigned HiddenWidth = $clog2(MaxHidden + 1);
  localparam int unsigned RowsWidth   = $clog2(MaxRows + 1);
  localparam int unsigned JWidth      = (MaxHidden > 1) ? $clog2(MaxHidden) : 1;
  localparam int unsigned BWidth      = (MaxBatch > 1) ? $clog2(MaxBatch) : 1;
  localparam int unsigned BufWidth    = BWidth + JWidth;
  localparam int unsigned FifoDepth   = 1 << $clog2(2 * MaxHidden);
  localparam int unsigned FifoCount   = $clog2(FifoDepth + 2);
  localparam int unsigned OutstWidth  = $clog2(FifoDepth + 1) + 2;

  // ------------------------------------------------------------ sequencer
  logic                    run_bw, run_gru, start;
  logic [HiddenWidth-1:0]  run_hidden;
  logic [MemAddrWidth-1:0] run_store_base;
  logic                    chain_bw;
  logic [RowsWidth-1:0]    chain_rows_base;
  logic [PeWidth-1:0]      chain_rows_extra;
  logic                    tok_valid, tok_first, tok_last, tok_zero;
  logic [1:0]              tok_op;
  logic [PeWidth-1:0]      tok_pe;
  logic [WAddrWidth-1:0]   tok_addr;
  logic [31:0]             tok_data;
  logic                    xp_open, dh_open, xp_word, xp_unit, dh_word;
  logic                    bias_we;
  logic [JWidth-1:0]       bias_unit;
  logic [1:0]              bias_gate;
  logic [31:0]             bias_data;
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

  sequencer #(
    .NumPe       (NumPe),
    .WeightDepth (WeightDepth),
    .MaxHidden   (MaxHidden),
    .MaxBatch    (MaxBatch),
    .MulLatency  (MulLatency),
    .AddLatency  (AddLatency),
    .MemAddrWidth(MemAddrWidth),
    .FifoDepth   (FifoDepth)
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
    .cfg_store_base_i,
    .cfg_store_size_i,
    .busy_o,
    .done_o,
    .status_o,
    .run_bw_o          (run_bw),
    .run_gru_o         (run_gru),
    .run_hidden_o      (run_hidden),
    .run_store_base_o  (run_store_base),
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
    .tok_data_o        (tok_data),
    .weight_valid_i,
    .weight_ready_o,
    .weight_data_i,
    .state_valid_i     (state_in_valid_i),
    .state_ready_o     (state_in_ready_o),
    .state_data_i      (state_in_data_i),
    .xp_open_o         (xp_open),
    .xp_word_i         (xp_word),
    .xp_unit_i         (xp_unit),
    .dh_open_o         (dh_open),
    .dh_word_i         (dh_word),
    .bias_we_o         (bias_we),
    .bias_unit_o       (bias_unit),
    .bias_gate_o       (bias_gate),
    .bias_data_o       (bias_data),
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
    .rd_req_valid_o    (rd_req_valid),
    .rd_req_ready_i    (mem_req_ready_i),
    .rd_req_addr_o     (rd_req_addr),
    .cnt_cycles_o,
    .cnt_macs_o,
    .cnt_stall_input_o,
    .cnt_stall_output_o,
    .cnt_stall_dep_o,
    .cnt_stall_store_o,
    .cnt_weight_words_o,
    .cnt_nonfinite_o
  );

  // --------------------------------------------------------------- chain
  logic        res_valid, res_zero;
  logic [31:0] res_data;

  pe_chain #(
    .NumPe      (NumPe),
    .WeightDepth(WeightDepth),
    .MaxHidden  (MaxHidden),
    .MulLatency (MulLatency),
    .AddLatency (AddLatency)
  ) u_chain (
    .clk_i,
    .rst_i,
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
    .tok_data_i      (tok_data),
    .res_valid_o     (res_valid),
    .res_zero_o      (res_zero),
    .res_data_o      (res_data)
  );

  // ------------------------------------------------------ input buffering
  logic [2:0]   gate_count;
  assign gate_count = run_gru ? 3'd3 : 3'd4;

  logic         xp_pack_valid, xp_pack_ready, xp_head_valid, xp_pop;
  logic [127:0] xp_pack_data, xp_head;
  logic [FifoCount-1:0] unused_xp_count;
  logic         xp_in_ready;
  stream_pack #(.Lanes(4)) u_xp_pack (
    .clk_i,
    .rst_i,
    .count_i    (gate_count),
    .in_valid_i (xp_valid_i && xp_open),
    .in_ready_o (xp_in_ready),
    .in_data_i  (xp_data_i),
    .out_valid_o(xp_pack_valid),
    .out_ready_i(xp_pack_ready),
    .out_data_o (xp_pack_data)
  );
  assign xp_ready_o = xp_open && xp_in_ready;
  assign xp_word    = xp_valid_i && xp_ready_o;
  assign xp_unit    = xp_pack_valid && xp_pack_ready;

  prim_fifo #(.Width(128), .Depth(FifoDepth)) u_xp_fifo (
    .clk_i,
    .rst_i,
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
    .rst_i,
    .in_valid_i (dh_valid_i && dh_open),
    .in_ready_o (dh_fifo_ready),
    .in_data_i  (dh_data_i),
    .out_valid_o(dh_head_valid),
    .out_ready_i(dh_pop),
    .out_data_o (dh_head),
    .count_o    (unused_dh_count)
  );
  assign dh_ready_o = dh_open && dh_fifo_ready;
  assign dh_word    = dh_valid_i && dh_ready_o;

  logic         rec_head_valid, rec_fifo_ready;
  logic [255:0] rec_head;
  logic [FifoCount-1:0] unused_rec_count;
  prim_fifo #(.Width(256), .Depth(FifoDepth)) u_rec_fifo (
    .clk_i,
    .rst_i,
    .in_valid_i (mem_rsp_valid_i && run_bw),
    .in_ready_o (rec_fifo_ready),
    .in_data_i  (mem_rsp_data_i),
    .out_valid_o(rec_head_valid),
    .out_ready_i(rec_pop),
    .out_data_o (rec_head),
    .count_o    (unused_rec_count)
  );
  assign mem_rsp_ready_o = run_bw ? rec_fifo_ready : 1'b1;
  assign rec_push        = mem_rsp_valid_i && run_bw && rec_fifo_ready;

  logic             desc_valid, desc_ready, desc_flag;
  logic [BWidth-1:0] desc_batch;
  logic             unused_desc_in_ready;
  logic [$clog2(8+2)-1:0] unused_desc_count;
  prim_fifo #(.Width(BWidth + 1), .Depth(8)) u_desc_fifo (
    .clk_i,
    .rst_i,
    .in_valid_i (desc_push),
    .in_ready_o (unused_desc_in_ready),
    .in_data_i  ({desc_push_flag, desc_push_batch}),
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
    .MemAddrWidth(MemAddrWidth)
  ) u_act (
    .clk_i,
    .rst_i,
    .cfg_bw_i        (run_bw),
    .cfg_gru_i       (run_gru),
    .cfg_hidden_i    (run_hidden),
    .cfg_store_base_i(run_store_base),
    .start_i         (start),
    .desc_valid_i    (desc_valid),
    .desc_ready_o    (desc_ready),
    .desc_batch_i    (desc_batch),
    .desc_flag_i     (desc_flag),
    .res_valid_i     (res_valid),
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
    .bias_unit_i     (bias_unit),
    .bias_gate_i     (bias_gate),
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
    .raddr_i(hbuf_raddr),
    .rdata_o(hbuf_rdata)
  );

  prim_ram_1r1w #(.Width(128), .Depth(1 << BufWidth)) u_dbuf (
    .clk_i,
    .we_i   (act_dbuf_we),
    .waddr_i(act_dbuf_addr),
    .wdata_i(act_dbuf_data),
    .re_i   (dbuf_re),
    .raddr_i(dbuf_raddr),
    .rdata_o(dbuf_rdata)
  );

  // ------------------------------------------------------- output streams
  logic hout_fifo_ready;
  logic [FifoCount-1:0] hout_count;
  prim_fifo #(.Width(32), .Depth(FifoDepth)) u_hout_fifo (
    .clk_i,
    .rst_i,
    .in_valid_i (hout_push),
    .in_ready_o (hout_fifo_ready),
    .in_data_i  (hout_data),
    .out_valid_o(h_valid_o),
    .out_ready_i(h_ready_i),
    .out_data_o (h_data_o),
    .count_o    (hout_count)
  );
  assign hout_pop = h_valid_o && h_ready_i;

  logic         dout_fifo_ready, dout_head_valid;
  logic [127:0] dout_head;
  logic [FifoCount-1:0] dout_count;
  prim_fifo #(.Width(128), .Depth(FifoDepth)) u_dout_fifo (
    .clk_i,
    .rst_i,
    .in_valid_i (dout_push),
    .in_ready_o (dout_fifo_ready),
    .in_data_i  (dout_data),
    .out_valid_o(dout_head_valid),
    .out_ready_i(dout_pop),
    .out_data_o (dout_head),
    .count_o    (dout_count)
  );
  stream_unpack #(.Lanes(4)) u_dout_unpack (
    .clk_i,
    .rst_i,
    .count_i    (3'd4),
    .in_valid_i (dout_head_valid),
    .in_pop_o   (dout_pop),
    .in_data_i  (dout_head),
    .out_valid_o(delta_valid_o),
    .out_ready_i(delta_ready_i),
    .out_data_o (delta_data_o)
  );

  logic        sout_fifo_ready, sout_head_valid;
  logic [63:0] sout_head;
  logic [FifoCount-1:0] sout_count;
  prim_fifo #(.Width(64), .Depth(FifoDepth)) u_sout_fifo (
    .clk_i,
    .rst_i,
    .in_valid_i (sout_push),
    .in_ready_o (sout_fifo_ready),
    .in_data_i  (sout_data),
    .out_valid_o(sout_head_valid),
    .out_ready_i(sout_pop),
    .out_data_o (sout_head),
    .count_o    (sout_count)
  );
  stream_unpack #(.Lanes(2)) u_sout_unpack (
    .clk_i,
    .rst_i,
    .count_i    (run_gru ? 3'd1 : 3'd2),
    .in_valid_i (sout_head_valid),
    .in_pop_o   (sout_pop),
    .in_data_i  (sout_head),
    .out_valid_o(state_out_valid_o),
    .out_ready_i(state_out_ready_i),
    .out_data_o (state_out_data_o)
  );

  // ------------------------------------------------------ gate store port
  logic                    store_fifo_ready, store_head_valid;
  logic [MemAddrWidth+255:0] store_head;
  logic [FifoCount-1:0]    store_count;
  prim_fifo #(.Width(MemAddrWidth + 256), .Depth(FifoDepth)) u_store_fifo (
    .clk_i,
    .rst_i,
    .in_valid_i (store_push),
    .in_ready_o (store_fifo_ready),
    .in_data_i  ({store_addr, store_data}),
    .out_valid_o(store_head_valid),
    .out_ready_i(store_pop),
    .out_data_o (store_head),
    .count_o    (store_count)
  );

  // Forward writes records; backward reads them. Every request is answered.
  always_comb begin
    if (run_bw) begin
      mem_req_valid_o = rd_req_valid;
      mem_req_write_o = 1'b0;
      mem_req_addr_o  = rd_req_addr;
    end else begin
      mem_req_valid_o = store_head_valid;
      mem_req_write_o = 1'b1;
      mem_req_addr_o  = store_head[MemAddrWidth+255:256];
    end
  end
  assign mem_req_data_o = store_head[255:0];
  assign store_pop      = !run_bw && store_head_valid && mem_req_ready_i;

  logic [OutstWidth-1:0] outst_q, outst_d;
  logic req_fire, rsp_fire;
  assign req_fire = mem_req_valid_o && mem_req_ready_i;
  assign rsp_fire = mem_rsp_valid_i && mem_rsp_ready_o;
  assign outst_d  = outst_q + OutstWidth'(req_fire) - OutstWidth'(rsp_fire);
  always_ff @(posedge clk_i) begin
    if (rst_i) outst_q <= '0;
    else       outst_q <= outst_d;
  end

  assign drain_idle = (hout_count == '0) && (dout_count == '0) && (sout_count == '0) &&
                      (store_count == '0) && (outst_q == '0);

  logic unused_engine;
  assign unused_engine = ^{res_zero, unused_xp_count, unused_dh_count, unused_rec_count,
                           unused_desc_in_ready, unused_desc_count};

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (!rst_i) begin
      assert (!(hout_push && !hout_fifo_ready)) else $error("engine: h output FIFO overflow");
      assert (!(dout_push && !dout_fifo_ready)) else $error("engine: delta output FIFO overflow");
      assert (!(sout_push && !sout_fifo_ready)) else $error("engine: state output FIFO overflow");
      assert (!(store_push && !store_fifo_ready)) else $error("engine: gate store FIFO overflow");
      assert (!(desc_push && !unused_desc_in_ready)) else $error("engine: descriptor FIFO overflow");
      assert (!(rsp_fire && outst_q == '0)) else $error("engine: memory response without a request");
    end
  end
`endif

endmodule

`default_nettype wire
