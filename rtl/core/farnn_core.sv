// farnn_core: the vendor-neutral FPGA shell around the recurrent engine. A
// board wraps it with a PCIe bridge and a DDR controller:
//   s_axil_*       AXI4-Lite slave: the registers (BAR0; docs/registers.md);
//   m_axi_host_*   AXI4 master, 64-bit addresses, 512-bit data: descriptors,
//                  weights, states, x-projections, dh in; h, delta, states,
//                  progress words and completions out (host and GPU memory
//                  through the bridge's slave port);
//   m_axi_card_*   AXI4 master, 512-bit data: the gate store in card memory;
//   irq_req_o/irq_ack_i  one interrupt per cause (0 completion, 1 error):
//                  requested while the cause's IRQ_STATUS bit and enable are
//                  set, until acknowledged; raised again after software
//                  clears the bit and the cause recurs.
// Inside: core_regs (generated from rtl/core/data/regmap.json), the ring
// dispatcher (core_dispatch: fetch, validation, address windows, in-order
// retirement, fault log, soft reset), the run unit (core_run: one
// FORWARD/BACKWARD with per-step DMA, step gating and progress words), the
// engine, five DMA readers and four writers on the host master (axi_rd_mux /
// axi_wr_mux; reader and writer i use AXI ID i; the per-step reader's items
// repacked into engine units by unit_gather), and the gate-store adapter
// (store_axi) on the card master. Counters are 64-bit totals since reset.
`default_nettype none

module farnn_core #(
  parameter int unsigned NumPe          = 4,
  parameter int unsigned NumChains      = 1,    // chains of NumPe/NumChains PEs (engine, pe_chain)
  parameter int unsigned RedAdder       = 0,    // 1: each PE reduces on an adder of its own (CAPS5)
  parameter int unsigned WeightDepth    = 1024,
  parameter int unsigned NumBanks       = 2,
  parameter int unsigned WeightUram     = 0,    // 1: the PEs' weight RAMs marked for UltraRAM
  parameter int unsigned WeightLanes    = 16,
  parameter int unsigned MaxHidden      = 32,
  parameter int unsigned MaxBatch       = 4,
  parameter int unsigned MulLatency     = 2,
  parameter int unsigned AddLatency     = 3,
  parameter int unsigned StoreAddrWidth = 40,
  parameter int unsigned MaxOutstanding = 8,    // host reads/writes in flight per mover
  parameter int unsigned WeightFifoBeats = 512, // weight reader buffer: >= read latency + a burst, in beats
  parameter logic [31:0] BuildId        = 32'h0,
  parameter logic [31:0] ClockKhz       = 32'd0
) (
  input  logic                      clk_i,
  input  logic                      rst_i,
  // AXI4-Lite slave (registers).
  input  logic [11:0]               s_axil_awaddr,
  input  logic [2:0]                s_axil_awprot,
  input  logic                      s_axil_awvalid,
  output logic                      s_axil_awready,
  input  logic [31:0]               s_axil_wdata,
  input  logic [3:0]                s_axil_wstrb,
  input  logic                      s_axil_wvalid,
  output logic                      s_axil_wready,
  output logic [1:0]                s_axil_bresp,
  output logic                      s_axil_bvalid,
  input  logic                      s_axil_bready,
  input  logic [11:0]               s_axil_araddr,
  input  logic [2:0]                s_axil_arprot,
  input  logic                      s_axil_arvalid,
  output logic                      s_axil_arready,
  output logic [31:0]               s_axil_rdata,
  output logic [1:0]                s_axil_rresp,
  output logic                      s_axil_rvalid,
  input  logic                      s_axil_rready,
  // AXI4 master: host (and GPU) memory.
  output logic [3:0]                m_axi_host_arid,
  output logic [63:0]               m_axi_host_araddr,
  output logic [7:0]                m_axi_host_arlen,
  output logic [2:0]                m_axi_host_arsize,
  output logic [1:0]                m_axi_host_arburst,
  output logic                      m_axi_host_arvalid,
  input  logic                      m_axi_host_arready,
  input  logic [3:0]                m_axi_host_rid,
  input  logic [511:0]              m_axi_host_rdata,
  input  logic [1:0]                m_axi_host_rresp,
  input  logic                      m_axi_host_rlast,
  input  logic                      m_axi_host_rvalid,
  output logic                      m_axi_host_rready,
  output logic [3:0]                m_axi_host_awid,
  output logic [63:0]               m_axi_host_awaddr,
  output logic [7:0]                m_axi_host_awlen,
  output logic [2:0]                m_axi_host_awsize,
  output logic [1:0]                m_axi_host_awburst,
  output logic                      m_axi_host_awvalid,
  input  logic                      m_axi_host_awready,
  output logic [511:0]              m_axi_host_wdata,
  output logic [63:0]               m_axi_host_wstrb,
  output logic                      m_axi_host_wlast,
  output logic                      m_axi_host_wvalid,
  input  logic                      m_axi_host_wready,
  input  logic [3:0]                m_axi_host_bid,
  input  logic [1:0]                m_axi_host_bresp,
  input  logic                      m_axi_host_bvalid,
  output logic                      m_axi_host_bready,
  // AXI4 master: card memory (gate store).
  output logic [3:0]                m_axi_card_arid,
  output logic [StoreAddrWidth-1:0] m_axi_card_araddr,
  output logic [7:0]                m_axi_card_arlen,
  output logic [2:0]                m_axi_card_arsize,
  output logic [1:0]                m_axi_card_arburst,
  output logic                      m_axi_card_arvalid,
  input  logic                      m_axi_card_arready,
  input  logic [3:0]                m_axi_card_rid,
  input  logic [511:0]              m_axi_card_rdata,
  input  logic [1:0]                m_axi_card_rresp,
  input  logic                      m_axi_card_rlast,
  input  logic                      m_axi_card_rvalid,
  output logic                      m_axi_card_rready,
  output logic [3:0]                m_axi_card_awid,
  output logic [StoreAddrWidth-1:0] m_axi_card_awaddr,
  output logic [7:0]                m_axi_card_awlen,
  output logic [2:0]                m_axi_card_awsize,
  output logic [1:0]                m_axi_card_awburst,
  output logic                      m_axi_card_awvalid,
  input  logic                      m_axi_card_awready,
  output logic [511:0]              m_axi_card_wdata,
  output logic [63:0]               m_axi_card_wstrb,
  output logic                      m_axi_card_wlast,
  output logic                      m_axi_card_wvalid,
  input  logic                      m_axi_card_wready,
  input  logic [3:0]                m_axi_card_bid,
  input  logic [1:0]                m_axi_card_bresp,
  input  logic                      m_axi_card_bvalid,
  output logic                      m_axi_card_bready,
  // Interrupts: [0] completion, [1] error.
  output logic [1:0]                irq_req_o,
  input  logic [1:0]                irq_ack_i
);

  localparam int unsigned NumWindows = 8;
  localparam int unsigned NumRd = 5;   // ctl, weights, state in, per-step in, poll
  localparam int unsigned NumWr = 4;   // per-step out, state out, progress, notify
  localparam int unsigned RD_CTL = 0, RD_WGT = 1, RD_SI = 2, RD_IN = 3, RD_POLL = 4;
  localparam int unsigned WR_OUT = 0, WR_SO = 1, WR_PROG = 2, WR_NTF = 3;

  // ============================================================ registers
  logic        ctrl_soft_reset, ctrl_abort, ctrl_irq_done_en, ctrl_irq_error_en, ctrl_enable;
  logic        irq_done, irq_error, irq_done_set, irq_error_set;
  logic [63:0] ring_base, ring_wb_addr;
  logic [31:0] ring_size, ring_tail, ring_head, ring_done, watchdog;
  logic [NumWindows*64-1:0] win_base, win_size;
  logic [NumWindows-1:0]    win_read, win_write;
  logic [4*32-1:0]          doorbells;
  logic        st_busy_q, st_halted_q, st_halted, st_resetting;
  logic [4:0]  st_error;
  logic [3:0]  st_unit, st_op, fault_stream;
  logic [63:0] fault_addr;
  logic [7:0]  fault_kind;
  logic [31:0] fault_desc;
  logic [63:0] cnt_cycles, cnt_busy, cnt_macs, cnt_st_in, cnt_st_out, cnt_st_dep, cnt_st_store,
               cnt_st_gate, cnt_host_rd, cnt_host_wr, cnt_card_rd, cnt_card_wr, cnt_desc, cnt_nonfinite;
  logic [31:0] unused_scratch;
  logic unused_scratch_we, unused_ctrl_we, unused_ring_base_we, unused_ring_size_we, unused_ring_tail_we;
  logic unused_ring_wb_addr_we, unused_watchdog_we;
  logic [NumWindows-1:0] unused_win_base_we, unused_win_size_we, unused_win_ctrl_we;
  logic [3:0] unused_step_doorbell_we;

  core_regs u_regs (
    .clk_i,
    .rst_i,
    .s_axil_awaddr,
    .s_axil_awprot,
    .s_axil_awvalid,
    .s_axil_awready,
    .s_axil_wdata,
    .s_axil_wstrb,
    .s_axil_wvalid,
    .s_axil_wready,
    .s_axil_bresp,
    .s_axil_bvalid,
    .s_axil_bready,
    .s_axil_araddr,
    .s_axil_arprot,
    .s_axil_arvalid,
    .s_axil_arready,
    .s_axil_rdata,
    .s_axil_rresp,
    .s_axil_rvalid,
    .s_axil_rready,
    .build_id_i              (BuildId),
    .clock_khz_i             (ClockKhz),
    .caps0_num_pe_i          (16'(NumPe)),
    .caps0_num_banks_i       (8'(NumBanks)),
    .caps0_weight_lanes_i    (8'(WeightLanes)),
    .caps1_max_hidden_i      (16'(MaxHidden)),
    .caps1_max_batch_i       (16'(MaxBatch)),
    .caps2_weight_depth_i    (32'(WeightDepth)),
    .caps3_cells_i           (2'b11),
    .caps3_addr_width_i      (8'd64),
    .caps3_num_windows_i     (8'(NumWindows)),
    .caps3_max_outstanding_i (8'(MaxOutstanding)),
    .caps4_store_addr_width_i(8'(StoreAddrWidth)),
    .caps5_num_chains_i      (16'(NumChains)),
    .caps5_red_adder_i       (RedAdder != 0),
    .scratch_o               (unused_scratch),
    .scratch_we_o            (unused_scratch_we),
    .ctrl_soft_reset_o       (ctrl_soft_reset),
    .ctrl_abort_o            (ctrl_abort),
    .ctrl_irq_done_en_o      (ctrl_irq_done_en),
    .ctrl_irq_error_en_o     (ctrl_irq_error_en),
    .ctrl_enable_o           (ctrl_enable),
    .ctrl_we_o               (unused_ctrl_we),
    .status_busy_i           (st_busy_q),
    .status_halted_i         (st_halted_q),
    .status_resetting_i      (st_resetting),
    .status_error_i          (st_error),
    .status_unit_i           (st_unit),
    .status_op_i             (st_op),
    .irq_status_done_set_i   (irq_done_set),
    .irq_status_done_o       (irq_done),
    .irq_status_error_set_i  (irq_error_set),
    .irq_status_error_o      (irq_error),
    .ring_base_o             (ring_base),
    .ring_base_we_o          (unused_ring_base_we),
    .ring_size_o             (ring_size),
    .ring_size_we_o          (unused_ring_size_we),
    .ring_head_i             (ring_head),
    .ring_tail_o             (ring_tail),
    .ring_tail_we_o          (unused_ring_tail_we),
    .ring_done_i             (ring_done),
    .ring_wb_addr_o          (ring_wb_addr),
    .ring_wb_addr_we_o       (unused_ring_wb_addr_we),
    .win_base_o              (win_base),
    .win_base_we_o           (unused_win_base_we),
    .win_size_o              (win_size),
    .win_size_we_o           (unused_win_size_we),
    .win_ctrl_read_o         (win_read),
    .win_ctrl_write_o        (win_write),
    .win_ctrl_we_o           (unused_win_ctrl_we),
    .fault_addr_i            (fault_addr),
    .fault_info_kind_i       (fault_kind),
    .fault_info_stream_i     (fault_stream),
    .fault_desc_i            (fault_desc),
    .watchdog_o              (watchdog),
    .watchdog_we_o           (unused_watchdog_we),
    .cnt_cycles_i            (cnt_cycles),
    .cnt_busy_cycles_i       (cnt_busy),
    .cnt_macs_i              (cnt_macs),
    .cnt_stall_input_i       (cnt_st_in),
    .cnt_stall_output_i      (cnt_st_out),
    .cnt_stall_dep_i         (cnt_st_dep),
    .cnt_stall_store_i       (cnt_st_store),
    .cnt_stall_gate_i        (cnt_st_gate),
    .cnt_host_rd_bytes_i     (cnt_host_rd),
    .cnt_host_wr_bytes_i     (cnt_host_wr),
    .cnt_card_rd_bytes_i     (cnt_card_rd),
    .cnt_card_wr_bytes_i     (cnt_card_wr),
    .cnt_desc_done_i         (cnt_desc),
    .cnt_nonfinite_i         (cnt_nonfinite),
    .step_doorbell_o         (doorbells),
    .step_doorbell_we_o      (unused_step_doorbell_we)
  );

  // ============================================================ engine
  logic                      eng_rst, abort, abort_idle_q;
  logic                      eng_cmd_valid, eng_cmd_ready, eng_busy, eng_done;
  logic [1:0]                eng_op, eng_cell;
  logic [15:0]               eng_hidden, eng_batch, eng_steps;
  logic [7:0]                eng_bank;
  logic [MaxBatch*16-1:0]    eng_lengths;
  logic [StoreAddrWidth-1:0] eng_store_base, eng_store_size;
  logic [31:0]               eng_watchdog;
  logic [4:0]                eng_status;
  logic [3:0]                eng_status_unit;
  logic                      ld_valid, ld_ready, ld_busy, ld_done;
  logic [7:0]                ld_bank;
  logic [1:0]                ld_cell;
  logic [15:0]               ld_hidden;
  logic [31:0]               ld_watchdog;
  logic [4:0]                ld_status;
  logic [3:0]                ld_status_unit;
  logic                      w_valid, w_ready, w_last;
  logic [WeightLanes*32-1:0] w_data;
  logic                      si_valid, si_ready, si_last;
  logic [31:0]               si_data;
  logic                      in_valid, in_ready, in_last, xp_ready, dh_ready;
  logic [127:0]              in_data;     // a unit a beat (Xp), or dh in bits 31:0
  logic                      h_valid, h_last, delta_valid, delta_last, out_ready;
  logic [31:0]               h_data;
  logic [127:0]              delta_data;  // one unit's 4 delta words a beat
  logic                      so_valid, so_ready, unused_so_last;
  logic [31:0]               so_data;
  logic                      mreq_valid, mreq_ready, mreq_write, mrsp_valid, mrsp_ready;
  logic [StoreAddrWidth-1:0] mreq_addr;
  logic [255:0]              mreq_data, mrsp_data;
  logic [63:0]               e_load_cycles, e_weight_words, e_cycles, e_macs, e_st_in, e_st_out, e_st_dep,
                             e_st_store, e_nonfinite;
  logic                      run_bw_q;   // the run unit's direction: routes the per-step streams

  engine #(
    .NumPe       (NumPe),
    .NumChains   (NumChains),
    .WeightDepth (WeightDepth),
    .NumBanks    (NumBanks),
    .WeightUram  (WeightUram),
    .WeightLanes (WeightLanes),
    .MaxHidden   (MaxHidden),
    .MaxBatch    (MaxBatch),
    .MulLatency  (MulLatency),
    .AddLatency  (AddLatency),
    .XpWords     (4),             // Xp a unit a beat (u_in_gather)
    .RedAdder    (RedAdder),
    .MemAddrWidth(StoreAddrWidth)
  ) u_engine (
    .clk_i,
    .rst_i              (rst_i || eng_rst),
    .cmd_valid_i        (eng_cmd_valid),
    .cmd_ready_o        (eng_cmd_ready),
    .cmd_op_i           (eng_op),
    .cfg_cell_i         (eng_cell),
    .cfg_hidden_i       (eng_hidden),
    .cfg_batch_i        (eng_batch),
    .cfg_steps_i        (eng_steps),
    .cfg_bank_i         (eng_bank),
    .cfg_lengths_i      (eng_lengths),
    .cfg_store_base_i   (eng_store_base),
    .cfg_store_size_i   (eng_store_size),
    .cfg_watchdog_i     (eng_watchdog),
    .abort_i            (abort),
    .busy_o             (eng_busy),
    .done_o             (eng_done),
    .status_o           (eng_status),
    .status_unit_o      (eng_status_unit),
    .load_valid_i       (ld_valid),
    .load_ready_o       (ld_ready),
    .load_bank_i        (ld_bank),
    .load_cell_i        (ld_cell),
    .load_hidden_i      (ld_hidden),
    .load_watchdog_i    (ld_watchdog),
    .load_busy_o        (ld_busy),
    .load_done_o        (ld_done),
    .load_status_o      (ld_status),
    .load_status_unit_o (ld_status_unit),
    .weight_valid_i     (w_valid),
    .weight_ready_o     (w_ready),
    .weight_data_i      (w_data),
    .weight_last_i      (w_last),
    .state_in_valid_i   (si_valid),
    .state_in_ready_o   (si_ready),
    .state_in_data_i    (si_data),
    .state_in_last_i    (si_last),
    .xp_valid_i         (in_valid && !run_bw_q),
    .xp_ready_o         (xp_ready),
    .xp_data_i          (in_data),
    .xp_last_i          (in_last),
    .dh_valid_i         (in_valid && run_bw_q),
    .dh_ready_o         (dh_ready),
    .dh_data_i          (in_data[31:0]),
    .dh_last_i          (in_last),
    .h_valid_o          (h_valid),
    .h_ready_i          (out_ready && !run_bw_q),
    .h_data_o           (h_data),
    .h_last_o           (h_last),
    .delta_valid_o      (delta_valid),
    .delta_ready_i      (out_ready && run_bw_q),
    .delta_data_o       (delta_data),
    .delta_last_o       (delta_last),
    .state_out_valid_o  (so_valid),
    .state_out_ready_i  (so_ready),
    .state_out_data_o   (so_data),
    .state_out_last_o   (unused_so_last),
    .mem_req_valid_o    (mreq_valid),
    .mem_req_ready_i    (mreq_ready),
    .mem_req_write_o    (mreq_write),
    .mem_req_addr_o     (mreq_addr),
    .mem_req_data_o     (mreq_data),
    .mem_rsp_valid_i    (mrsp_valid),
    .mem_rsp_ready_o    (mrsp_ready),
    .mem_rsp_data_i     (mrsp_data),
    .cnt_load_cycles_o  (e_load_cycles),
    .cnt_weight_words_o (e_weight_words),
    .cnt_cycles_o       (e_cycles),
    .cnt_macs_o         (e_macs),
    .cnt_stall_input_o  (e_st_in),
    .cnt_stall_output_o (e_st_out),
    .cnt_stall_dep_o    (e_st_dep),
    .cnt_stall_store_o  (e_st_store),
    .cnt_nonfinite_o    (e_nonfinite)
  );
  assign in_ready = run_bw_q ? dh_ready : xp_ready;

  // The engine's done and status reach the run unit (and through it the
  // dispatcher's fault logic) a cycle late, from registers (8 LUT levels
  // from the sequencer's state to the dispatcher's otherwise).
  logic       eng_done_q;
  logic [4:0] eng_status_q;
  always_ff @(posedge clk_i) begin
    if (rst_i) eng_done_q <= 1'b0;
    else eng_done_q <= eng_done;
    eng_status_q <= eng_status;
  end

  // ============================================================ dispatcher
  logic                      run_start_q, run_start, run_bw, run_gate_en, run_gate_poll, run_done, run_fail, run_busy;
  logic [1:0]                run_cell, run_gate_sel;
  logic [15:0]               run_hidden, run_batch, run_steps, run_maxlen, run_every;
  logic [7:0]                run_bank;
  logic [MaxBatch*16-1:0]    run_lengths;
  logic [31:0]               run_total, run_in_stride, run_out_stride, run_watchdog, run_si_bytes, run_so_bytes;
  logic [17:0]               run_in_words, run_out_words;
  logic [63:0]               run_in_addr, run_out_addr, run_si_addr, run_so_addr, run_gate_addr, run_prog_addr;
  logic [StoreAddrWidth-1:0] run_store_base, run_store_size;
  logic [4:0]                run_fail_code;
  logic [3:0]                run_fail_unit;
  logic                      gate_wait, wait_stall, desc_done, disp_busy, store_flush, store_idle;
  logic                      dma_err, dma_err_write, dma_err_q, dma_err_write_q;
  logic [63:0]               dma_err_addr, dma_err_addr_q;
  logic [1:0]                dma_err_resp, dma_err_resp_q;
  logic [3:0]                dma_err_stream, dma_err_stream_q;

  // Mover command/data wiring (index by the RD_/WR_ constants).
  logic [NumRd-1:0]    rc_valid, rc_ready, rc_last, rd_idle, rd_err;
  logic [NumRd*64-1:0] rc_addr, rd_err_addr;
  logic [NumRd*32-1:0] rc_bytes;
  logic [NumRd*2-1:0]  rd_err_resp;
  logic [NumWr-1:0]    wc_valid, wc_ready, wr_idle, wr_err, wr_done, wi_valid, wi_ready;
  logic [NumWr*64-1:0] wc_addr, wr_err_addr;
  logic [NumWr*32-1:0] wc_bytes, wi_data;
  logic [NumWr*2-1:0]  wr_err_resp;
  logic                ctl_valid, ctl_ready, ctl_last, poll_valid, poll_ready, unused_poll_last;
  logic [31:0]         ctl_data, poll_data;
  logic                rctl_valid, rctl_ready, rctl_last;   // the sliced readers' items (u_ctl_slice, ...)
  logic                rwgt_valid, rwgt_ready, rwgt_last, rsi_valid, rsi_ready, rsi_last;
  logic [31:0]         rctl_data, rsi_data;
  logic [WeightLanes*32-1:0] rwgt_data;
  logic                rin_valid, rin_ready, rin_last;  // the per-step reader's items
  logic [127:0]        rin_data;
  logic [3:0]          rin_lo, rin_hi;
  logic [15:0]         unused_rd_lo, unused_rd_hi;          // the item-aligned readers' (0 and OutWords - 1)
  logic                gather_idle;
  // The register slices at the parts' boundaries hold nothing (the idle the
  // dispatcher waits for): per-step input, h/delta, state out, control,
  // weights, state in, control-read command.
  localparam int unsigned NumSlices = 7;
  localparam int unsigned SL_IN = 0, SL_OUT = 1, SL_SO = 2, SL_CTL = 3, SL_WGT = 4, SL_SI = 5, SL_CC = 6;
  logic [NumSlices-1:0] slice_empty;
  logic                gu_valid, gu_ready, gu_last;         // the gather's units, into u_in_slice
  logic [127:0]        gu_data;
  logic [3:0]          unused_rin_bits;                     // a 4-word item's word index has 2 bits
  assign unused_rin_bits = {rin_lo[3:2], rin_hi[3:2]};
  logic [3:0]          ctl_stream;
  logic                cc_valid, cc_ready;               // the dispatcher's control-read command
  logic [63:0]         cc_addr;
  logic [31:0]         cc_bytes;

  core_dispatch #(
    .NumWindows    (NumWindows),
    .MaxBatch      (MaxBatch),
    .MaxHidden     (MaxHidden),
    .WeightLanes   (WeightLanes),
    .StoreAddrWidth(StoreAddrWidth)
  ) u_dispatch (
    .clk_i,
    .rst_i,
    .enable_i            (ctrl_enable),
    .soft_reset_i        (ctrl_soft_reset),
    .abort_i             (ctrl_abort),
    .ring_base_i         (ring_base),
    .ring_size_i         (ring_size),
    .ring_tail_i         (ring_tail),
    .ring_wb_addr_i      (ring_wb_addr),
    .watchdog_i          (watchdog),
    .win_base_i          (win_base),
    .win_size_i          (win_size),
    .win_read_i          (win_read),
    .win_write_i         (win_write),
    .doorbells_i         (doorbells),
    .ring_head_o         (ring_head),
    .ring_done_o         (ring_done),
    .busy_o              (disp_busy),
    .halted_o            (st_halted),
    .resetting_o         (st_resetting),
    .error_o             (st_error),
    .unit_o              (st_unit),
    .op_o                (st_op),
    .fault_addr_o        (fault_addr),
    .fault_kind_o        (fault_kind),
    .fault_stream_o      (fault_stream),
    .fault_desc_o        (fault_desc),
    .irq_done_set_o      (irq_done_set),
    .irq_error_set_o     (irq_error_set),
    .desc_done_o         (desc_done),
    .wait_stall_o        (wait_stall),
    .dma_err_i           (dma_err_q),
    .dma_err_addr_i      (dma_err_addr_q),
    .dma_err_resp_i      (dma_err_resp_q),
    .dma_err_write_i     (dma_err_write_q),
    .dma_err_stream_i    (dma_err_stream_q),
    .abort_o             (abort),
    .eng_rst_o           (eng_rst),
    .store_flush_o       (store_flush),
    .all_idle_i          (abort_idle_q),
    .store_idle_i        (store_idle),
    .ctl_stream_o        (ctl_stream),
    .ctl_cmd_valid_o     (cc_valid),
    .ctl_cmd_ready_i     (cc_ready),
    .ctl_cmd_addr_o      (cc_addr),
    .ctl_cmd_bytes_o     (cc_bytes),
    .ctl_valid_i         (ctl_valid),
    .ctl_ready_o         (ctl_ready),
    .ctl_data_i          (ctl_data),
    .ctl_last_i          (ctl_last),
    .ntf_cmd_valid_o     (wc_valid[WR_NTF]),
    .ntf_cmd_ready_i     (wc_ready[WR_NTF]),
    .ntf_cmd_addr_o      (wc_addr[WR_NTF*64 +: 64]),
    .ntf_valid_o         (wi_valid[WR_NTF]),
    .ntf_ready_i         (wi_ready[WR_NTF]),
    .ntf_data_o          (wi_data[WR_NTF*32 +: 32]),
    .ntf_done_i          (wr_done[WR_NTF]),
    .load_valid_o        (ld_valid),
    .load_ready_i        (ld_ready),
    .load_bank_o         (ld_bank),
    .load_cell_o         (ld_cell),
    .load_hidden_o       (ld_hidden),
    .load_watchdog_o     (ld_watchdog),
    .load_done_i         (ld_done),
    .load_status_i       (ld_status),
    .load_status_unit_i  (ld_status_unit),
    .wgt_cmd_valid_o     (rc_valid[RD_WGT]),
    .wgt_cmd_ready_i     (rc_ready[RD_WGT]),
    .wgt_cmd_addr_o      (rc_addr[RD_WGT*64 +: 64]),
    .wgt_cmd_bytes_o     (rc_bytes[RD_WGT*32 +: 32]),
    .run_start_o         (run_start),
    .run_bw_o            (run_bw),
    .run_cell_o          (run_cell),
    .run_hidden_o        (run_hidden),
    .run_batch_o         (run_batch),
    .run_steps_o         (run_steps),
    .run_bank_o          (run_bank),
    .run_lengths_o       (run_lengths),
    .run_maxlen_o        (run_maxlen),
    .run_in_words_o      (run_in_words),
    .run_out_words_o     (run_out_words),
    .run_state_in_bytes_o(run_si_bytes),
    .run_state_out_bytes_o(run_so_bytes),
    .run_total_o         (run_total),
    .run_in_addr_o       (run_in_addr),
    .run_in_stride_o     (run_in_stride),
    .run_out_addr_o      (run_out_addr),
    .run_out_stride_o    (run_out_stride),
    .run_state_in_addr_o (run_si_addr),
    .run_state_out_addr_o(run_so_addr),
    .run_store_base_o    (run_store_base),
    .run_store_size_o    (run_store_size),
    .run_watchdog_o      (run_watchdog),
    .run_gate_enable_o   (run_gate_en),
    .run_gate_poll_o     (run_gate_poll),
    .run_gate_select_o   (run_gate_sel),
    .run_gate_addr_o     (run_gate_addr),
    .run_progress_every_o(run_every),
    .run_progress_addr_o (run_prog_addr),
    .run_done_i          (run_done),
    .run_fail_i          (run_fail),
    .run_fail_code_i     (run_fail_code),
    .run_fail_unit_i     (run_fail_unit)
  );
  assign wc_bytes[WR_NTF*32 +: 32] = 32'd4;
  assign rc_last[RD_CTL] = 1'b1;

  // The control reader's command passes a register slice: its address and
  // size are muxed by the dispatcher's state, and the reader's burst split
  // adds a carry chain (8 LUT levels through both).
  prim_reg_slice #(.Width(64 + 32)) u_ctl_cmd_slice (
    .clk_i, .rst_i(rst_i || abort),
    .in_valid_i (cc_valid), .in_ready_o(cc_ready), .in_data_i({cc_addr, cc_bytes}),
    .out_valid_o(rc_valid[RD_CTL]), .out_ready_i(rc_ready[RD_CTL]),
    .out_data_o ({rc_addr[RD_CTL*64 +: 64], rc_bytes[RD_CTL*32 +: 32]}), .empty_o(slice_empty[SL_CC]));
  assign rc_last[RD_WGT] = 1'b1;

  // ============================================================ run unit
  // The run unit starts a cycle after the dispatcher issues, from a
  // register (9 LUT levels from the dispatcher's state through the run
  // unit's start logic otherwise). The command's fields come from the
  // dispatcher's registers, which hold until the next descriptor is decoded,
  // many cycles later (asserted).
  always_ff @(posedge clk_i) begin
    if (rst_i || abort) run_start_q <= 1'b0;
    else run_start_q <= run_start;
  end
`ifndef SYNTHESIS
  localparam int unsigned RunFieldBits = 3 + 2 * 2 + 5 * 16 + 8 + MaxBatch * 16 + 6 * 32 + 2 * 18 + 6 * 64 +
                                         2 * StoreAddrWidth;
  logic [RunFieldBits-1:0] run_fields, run_fields_q;
  assign run_fields = {run_bw, run_gate_en, run_gate_poll, run_cell, run_gate_sel, run_hidden, run_batch, run_steps,
                       run_maxlen, run_every, run_bank, run_lengths, run_total, run_in_stride, run_out_stride,
                       run_watchdog, run_si_bytes, run_so_bytes, run_in_words, run_out_words, run_in_addr,
                       run_out_addr, run_si_addr, run_so_addr, run_gate_addr, run_prog_addr, run_store_base,
                       run_store_size};
  always_ff @(posedge clk_i) begin
    run_fields_q <= run_fields;
    if (!rst_i && run_start_q) begin
      assert (run_fields == run_fields_q) else $error("farnn_core: a run's fields changed the cycle after its issue");
    end
  end
`endif

  core_run #(
    .MaxBatch      (MaxBatch),
    .StoreAddrWidth(StoreAddrWidth)
  ) u_run (
    .clk_i,
    .rst_i             (rst_i || eng_rst),
    .abort_i           (abort),
    .start_i           (run_start_q),
    .bw_i              (run_bw),
    .cell_i            (run_cell),
    .hidden_i          (run_hidden),
    .batch_i           (run_batch),
    .steps_i           (run_steps),
    .bank_i            (run_bank),
    .lengths_i         (run_lengths),
    .maxlen_i          (run_maxlen),
    .in_words_i        (run_in_words),
    .out_words_i       (run_out_words),
    .state_in_bytes_i  (run_si_bytes),
    .state_out_bytes_i (run_so_bytes),
    .total_i           (run_total),
    .in_addr_i         (run_in_addr),
    .in_stride_i       (run_in_stride),
    .out_addr_i        (run_out_addr),
    .out_stride_i      (run_out_stride),
    .state_in_addr_i   (run_si_addr),
    .state_out_addr_i  (run_so_addr),
    .store_base_i      (run_store_base),
    .store_size_i      (run_store_size),
    .watchdog_i        (run_watchdog),
    .gate_enable_i     (run_gate_en),
    .gate_poll_i       (run_gate_poll),
    .gate_select_i     (run_gate_sel),
    .gate_addr_i       (run_gate_addr),
    .progress_every_i  (run_every),
    .progress_addr_i   (run_prog_addr),
    .doorbells_i       (doorbells),
    .bw_o              (run_bw_q),
    .busy_o            (run_busy),
    .done_o            (run_done),
    .fail_o            (run_fail),
    .fail_code_o       (run_fail_code),
    .fail_unit_o       (run_fail_unit),
    .gate_wait_o       (gate_wait),
    .eng_cmd_valid_o   (eng_cmd_valid),
    .eng_cmd_ready_i   (eng_cmd_ready),
    .eng_op_o          (eng_op),
    .eng_cell_o        (eng_cell),
    .eng_hidden_o      (eng_hidden),
    .eng_batch_o       (eng_batch),
    .eng_steps_o       (eng_steps),
    .eng_bank_o        (eng_bank),
    .eng_lengths_o     (eng_lengths),
    .eng_store_base_o  (eng_store_base),
    .eng_store_size_o  (eng_store_size),
    .eng_watchdog_o    (eng_watchdog),
    .eng_busy_i        (eng_busy),
    .eng_done_i        (eng_done_q),
    .eng_status_i      (eng_status_q),
    .eng_status_unit_i (eng_status_unit),
    .in_cmd_valid_o    (rc_valid[RD_IN]),
    .in_cmd_ready_i    (rc_ready[RD_IN]),
    .in_cmd_addr_o     (rc_addr[RD_IN*64 +: 64]),
    .in_cmd_bytes_o    (rc_bytes[RD_IN*32 +: 32]),
    .in_cmd_last_o     (rc_last[RD_IN]),
    .si_cmd_valid_o    (rc_valid[RD_SI]),
    .si_cmd_ready_i    (rc_ready[RD_SI]),
    .si_cmd_addr_o     (rc_addr[RD_SI*64 +: 64]),
    .si_cmd_bytes_o    (rc_bytes[RD_SI*32 +: 32]),
    .poll_cmd_valid_o  (rc_valid[RD_POLL]),
    .poll_cmd_ready_i  (rc_ready[RD_POLL]),
    .poll_cmd_addr_o   (rc_addr[RD_POLL*64 +: 64]),
    .poll_valid_i      (poll_valid),
    .poll_ready_o      (poll_ready),
    .poll_data_i       (poll_data),
    .out_cmd_valid_o   (wc_valid[WR_OUT]),
    .out_cmd_ready_i   (wc_ready[WR_OUT]),
    .out_cmd_addr_o    (wc_addr[WR_OUT*64 +: 64]),
    .out_cmd_bytes_o   (wc_bytes[WR_OUT*32 +: 32]),
    .out_done_i        (wr_done[WR_OUT]),
    .so_cmd_valid_o    (wc_valid[WR_SO]),
    .so_cmd_ready_i    (wc_ready[WR_SO]),
    .so_cmd_addr_o     (wc_addr[WR_SO*64 +: 64]),
    .so_cmd_bytes_o    (wc_bytes[WR_SO*32 +: 32]),
    .so_done_i         (wr_done[WR_SO]),
    .prog_cmd_valid_o  (wc_valid[WR_PROG]),
    .prog_cmd_ready_i  (wc_ready[WR_PROG]),
    .prog_cmd_addr_o   (wc_addr[WR_PROG*64 +: 64]),
    .prog_valid_o      (wi_valid[WR_PROG]),
    .prog_ready_i      (wi_ready[WR_PROG]),
    .prog_data_o       (wi_data[WR_PROG*32 +: 32]),
    .prog_done_i       (wr_done[WR_PROG])
  );
  assign wc_bytes[WR_PROG*32 +: 32] = 32'd4;
  assign rc_last[RD_SI]   = 1'b1;
  assign rc_last[RD_POLL] = 1'b1;
  assign rc_bytes[RD_POLL*32 +: 32] = 32'd4;


  // ============================================================ host DMA
  logic [NumRd-1:0]     s_arvalid, s_arready, s_rvalid, s_rready, s_rlast;
  logic [NumRd*4-1:0]   s_arid, s_rid;
  logic [NumRd*64-1:0]  s_araddr;
  logic [NumRd*8-1:0]   s_arlen;
  logic [NumRd*3-1:0]   s_arsize;
  logic [NumRd*2-1:0]   s_arburst, s_rresp;
  logic [NumRd*512-1:0] s_rdata;

  // Readers: control (descriptors, lengths, WAIT polls), weights (full
  // beats), state in, per-step input, gate poll.
  dma_reader #(.IdWidth(4), .Id(RD_CTL), .OutWords(1), .FifoBeats(4), .MaxBurstBeats(2),
               .MaxOutstanding(2)) u_rd_ctl (
    .clk_i, .rst_i, .abort_i(abort), .idle_o(rd_idle[RD_CTL]),
    .cmd_valid_i(rc_valid[RD_CTL]), .cmd_ready_o(rc_ready[RD_CTL]), .cmd_addr_i(rc_addr[RD_CTL*64 +: 64]),
    .cmd_bytes_i(rc_bytes[RD_CTL*32 +: 32]), .cmd_last_i(rc_last[RD_CTL]),
    .out_valid_o(rctl_valid), .out_ready_i(rctl_ready), .out_data_o(rctl_data), .out_last_o(rctl_last),
    .out_lo_o(unused_rd_lo[0*4 +: 4]), .out_hi_o(unused_rd_hi[0*4 +: 4]),
    .err_o(rd_err[RD_CTL]), .err_addr_o(rd_err_addr[RD_CTL*64 +: 64]), .err_resp_o(rd_err_resp[RD_CTL*2 +: 2]),
    .m_axi_arid(s_arid[RD_CTL*4 +: 4]), .m_axi_araddr(s_araddr[RD_CTL*64 +: 64]),
    .m_axi_arlen(s_arlen[RD_CTL*8 +: 8]), .m_axi_arsize(s_arsize[RD_CTL*3 +: 3]),
    .m_axi_arburst(s_arburst[RD_CTL*2 +: 2]), .m_axi_arvalid(s_arvalid[RD_CTL]),
    .m_axi_arready(s_arready[RD_CTL]), .m_axi_rid(s_rid[RD_CTL*4 +: 4]),
    .m_axi_rdata(s_rdata[RD_CTL*512 +: 512]), .m_axi_rresp(s_rresp[RD_CTL*2 +: 2]),
    .m_axi_rlast(s_rlast[RD_CTL]), .m_axi_rvalid(s_rvalid[RD_CTL]), .m_axi_rready(s_rready[RD_CTL]));

  dma_reader #(.IdWidth(4), .Id(RD_WGT), .OutWords(WeightLanes), .FifoBeats(WeightFifoBeats),
               .MaxBurstBeats(64), .MaxOutstanding(MaxOutstanding)) u_rd_wgt (
    .clk_i, .rst_i, .abort_i(abort), .idle_o(rd_idle[RD_WGT]),
    .cmd_valid_i(rc_valid[RD_WGT]), .cmd_ready_o(rc_ready[RD_WGT]), .cmd_addr_i(rc_addr[RD_WGT*64 +: 64]),
    .cmd_bytes_i(rc_bytes[RD_WGT*32 +: 32]), .cmd_last_i(rc_last[RD_WGT]),
    .out_valid_o(rwgt_valid), .out_ready_i(rwgt_ready), .out_data_o(rwgt_data), .out_last_o(rwgt_last),
    .out_lo_o(unused_rd_lo[1*4 +: 4]), .out_hi_o(unused_rd_hi[1*4 +: 4]),
    .err_o(rd_err[RD_WGT]), .err_addr_o(rd_err_addr[RD_WGT*64 +: 64]), .err_resp_o(rd_err_resp[RD_WGT*2 +: 2]),
    .m_axi_arid(s_arid[RD_WGT*4 +: 4]), .m_axi_araddr(s_araddr[RD_WGT*64 +: 64]),
    .m_axi_arlen(s_arlen[RD_WGT*8 +: 8]), .m_axi_arsize(s_arsize[RD_WGT*3 +: 3]),
    .m_axi_arburst(s_arburst[RD_WGT*2 +: 2]), .m_axi_arvalid(s_arvalid[RD_WGT]),
    .m_axi_arready(s_arready[RD_WGT]), .m_axi_rid(s_rid[RD_WGT*4 +: 4]),
    .m_axi_rdata(s_rdata[RD_WGT*512 +: 512]), .m_axi_rresp(s_rresp[RD_WGT*2 +: 2]),
    .m_axi_rlast(s_rlast[RD_WGT]), .m_axi_rvalid(s_rvalid[RD_WGT]), .m_axi_rready(s_rready[RD_WGT]));

  dma_reader #(.IdWidth(4), .Id(RD_SI), .OutWords(1), .FifoBeats(16), .MaxBurstBeats(16),
               .MaxOutstanding(2)) u_rd_si (
    .clk_i, .rst_i, .abort_i(abort), .idle_o(rd_idle[RD_SI]),
    .cmd_valid_i(rc_valid[RD_SI]), .cmd_ready_o(rc_ready[RD_SI]), .cmd_addr_i(rc_addr[RD_SI*64 +: 64]),
    .cmd_bytes_i(rc_bytes[RD_SI*32 +: 32]), .cmd_last_i(rc_last[RD_SI]),
    .out_valid_o(rsi_valid), .out_ready_i(rsi_ready), .out_data_o(rsi_data), .out_last_o(rsi_last),
    .out_lo_o(unused_rd_lo[2*4 +: 4]), .out_hi_o(unused_rd_hi[2*4 +: 4]),
    .err_o(rd_err[RD_SI]), .err_addr_o(rd_err_addr[RD_SI*64 +: 64]), .err_resp_o(rd_err_resp[RD_SI*2 +: 2]),
    .m_axi_arid(s_arid[RD_SI*4 +: 4]), .m_axi_araddr(s_araddr[RD_SI*64 +: 64]),
    .m_axi_arlen(s_arlen[RD_SI*8 +: 8]), .m_axi_arsize(s_arsize[RD_SI*3 +: 3]),
    .m_axi_arburst(s_arburst[RD_SI*2 +: 2]), .m_axi_arvalid(s_arvalid[RD_SI]),
    .m_axi_arready(s_arready[RD_SI]), .m_axi_rid(s_rid[RD_SI*4 +: 4]),
    .m_axi_rdata(s_rdata[RD_SI*512 +: 512]), .m_axi_rresp(s_rresp[RD_SI*2 +: 2]),
    .m_axi_rlast(s_rlast[RD_SI]), .m_axi_rvalid(s_rvalid[RD_SI]), .m_axi_rready(s_rready[RD_SI]));

  // The control, weight and state-in streams reach the dispatcher and the
  // engine through register slices: the readers' valid and last come from
  // their word-select logic and the consumers' ready from their state
  // machines, 8-9 LUT levels through both without them. abort_i drops what
  // they hold, as the readers drop their data.
  prim_reg_slice #(.Width(1 + 32)) u_ctl_slice (
    .clk_i, .rst_i(rst_i || abort),
    .in_valid_i (rctl_valid), .in_ready_o(rctl_ready), .in_data_i({rctl_last, rctl_data}),
    .out_valid_o(ctl_valid), .out_ready_i(ctl_ready), .out_data_o({ctl_last, ctl_data}), .empty_o(slice_empty[SL_CTL]));
  prim_reg_slice #(.Width(1 + WeightLanes * 32)) u_wgt_slice (
    .clk_i, .rst_i(rst_i || abort),
    .in_valid_i (rwgt_valid), .in_ready_o(rwgt_ready), .in_data_i({rwgt_last, rwgt_data}),
    .out_valid_o(w_valid), .out_ready_i(w_ready), .out_data_o({w_last, w_data}), .empty_o(slice_empty[SL_WGT]));
  prim_reg_slice #(.Width(1 + 32)) u_si_slice (
    .clk_i, .rst_i(rst_i || abort),
    .in_valid_i (rsi_valid), .in_ready_o(rsi_ready), .in_data_i({rsi_last, rsi_data}),
    .out_valid_o(si_valid), .out_ready_i(si_ready), .out_data_o({si_last, si_data}), .empty_o(slice_empty[SL_SI]));

  // The per-step reader: 4-word items from chunks at any 4-byte address,
  // repacked by u_in_gather into an Xp unit (G words) or a dh word a beat.
  dma_reader #(.IdWidth(4), .Id(RD_IN), .OutWords(4), .FifoBeats(32), .MaxBurstBeats(16),
               .MaxOutstanding(MaxOutstanding), .WordAligned(1'b1)) u_rd_in (
    .clk_i, .rst_i, .abort_i(abort), .idle_o(rd_idle[RD_IN]),
    .cmd_valid_i(rc_valid[RD_IN]), .cmd_ready_o(rc_ready[RD_IN]), .cmd_addr_i(rc_addr[RD_IN*64 +: 64]),
    .cmd_bytes_i(rc_bytes[RD_IN*32 +: 32]), .cmd_last_i(rc_last[RD_IN]),
    .out_valid_o(rin_valid), .out_ready_i(rin_ready), .out_data_o(rin_data), .out_last_o(rin_last),
    .out_lo_o(rin_lo), .out_hi_o(rin_hi),
    .err_o(rd_err[RD_IN]), .err_addr_o(rd_err_addr[RD_IN*64 +: 64]), .err_resp_o(rd_err_resp[RD_IN*2 +: 2]),
    .m_axi_arid(s_arid[RD_IN*4 +: 4]), .m_axi_araddr(s_araddr[RD_IN*64 +: 64]),
    .m_axi_arlen(s_arlen[RD_IN*8 +: 8]), .m_axi_arsize(s_arsize[RD_IN*3 +: 3]),
    .m_axi_arburst(s_arburst[RD_IN*2 +: 2]), .m_axi_arvalid(s_arvalid[RD_IN]),
    .m_axi_arready(s_arready[RD_IN]), .m_axi_rid(s_rid[RD_IN*4 +: 4]),
    .m_axi_rdata(s_rdata[RD_IN*512 +: 512]), .m_axi_rresp(s_rresp[RD_IN*2 +: 2]),
    .m_axi_rlast(s_rlast[RD_IN]), .m_axi_rvalid(s_rvalid[RD_IN]), .m_axi_rready(s_rready[RD_IN]));

  // The unit size follows the run's command, a cycle after the run unit
  // latches it: the gather is empty then (its reader has not been given the
  // command's first chunk), and the size stays out of its repacking paths.
  logic [2:0] gather_size_q;
  always_ff @(posedge clk_i) gather_size_q <= run_bw_q ? 3'd1 : ((eng_cell == core_regs_pkg::CELL_GRU) ? 3'd3 : 3'd4);

  unit_gather u_in_gather (
    .clk_i, .rst_i, .abort_i(abort),
    .size_i     (gather_size_q),
    .in_valid_i (rin_valid), .in_ready_o(rin_ready), .in_data_i(rin_data),
    .in_lo_i    (rin_lo[1:0]), .in_hi_i(rin_hi[1:0]), .in_last_i(rin_last),
    .out_valid_o(gu_valid), .out_ready_i(gu_ready), .out_data_o(gu_data), .out_last_o(gu_last),
    .idle_o     (gather_idle));

  // The engine's input ready comes from its sequencer's state: a register
  // slice keeps that path out of the gather (10 LUT levels through both).
  // abort_i drops what it holds, as the gather does.
  prim_reg_slice #(.Width(1 + 128)) u_in_slice (
    .clk_i,
    .rst_i      (rst_i || abort),
    .in_valid_i (gu_valid),
    .in_ready_o (gu_ready),
    .in_data_i  ({gu_last, gu_data}),
    .out_valid_o(in_valid),
    .out_ready_i(in_ready),
    .out_data_o ({in_last, in_data}),
    .empty_o    (slice_empty[SL_IN]));

  dma_reader #(.IdWidth(4), .Id(RD_POLL), .OutWords(1), .FifoBeats(2), .MaxBurstBeats(1),
               .MaxOutstanding(1)) u_rd_poll (
    .clk_i, .rst_i, .abort_i(abort), .idle_o(rd_idle[RD_POLL]),
    .cmd_valid_i(rc_valid[RD_POLL]), .cmd_ready_o(rc_ready[RD_POLL]), .cmd_addr_i(rc_addr[RD_POLL*64 +: 64]),
    .cmd_bytes_i(rc_bytes[RD_POLL*32 +: 32]), .cmd_last_i(rc_last[RD_POLL]),
    .out_valid_o(poll_valid), .out_ready_i(poll_ready), .out_data_o(poll_data), .out_last_o(unused_poll_last),
    .out_lo_o(unused_rd_lo[3*4 +: 4]), .out_hi_o(unused_rd_hi[3*4 +: 4]),
    .err_o(rd_err[RD_POLL]), .err_addr_o(rd_err_addr[RD_POLL*64 +: 64]),
    .err_resp_o(rd_err_resp[RD_POLL*2 +: 2]),
    .m_axi_arid(s_arid[RD_POLL*4 +: 4]), .m_axi_araddr(s_araddr[RD_POLL*64 +: 64]),
    .m_axi_arlen(s_arlen[RD_POLL*8 +: 8]), .m_axi_arsize(s_arsize[RD_POLL*3 +: 3]),
    .m_axi_arburst(s_arburst[RD_POLL*2 +: 2]), .m_axi_arvalid(s_arvalid[RD_POLL]),
    .m_axi_arready(s_arready[RD_POLL]), .m_axi_rid(s_rid[RD_POLL*4 +: 4]),
    .m_axi_rdata(s_rdata[RD_POLL*512 +: 512]), .m_axi_rresp(s_rresp[RD_POLL*2 +: 2]),
    .m_axi_rlast(s_rlast[RD_POLL]), .m_axi_rvalid(s_rvalid[RD_POLL]), .m_axi_rready(s_rready[RD_POLL]));

  axi_rd_mux #(.NumPorts(NumRd), .IdWidth(4)) u_rd_mux (
    .clk_i, .rst_i,
    .s_arid_i(s_arid), .s_araddr_i(s_araddr), .s_arlen_i(s_arlen), .s_arsize_i(s_arsize),
    .s_arburst_i(s_arburst), .s_arvalid_i(s_arvalid), .s_arready_o(s_arready),
    .s_rid_o(s_rid), .s_rdata_o(s_rdata), .s_rresp_o(s_rresp), .s_rlast_o(s_rlast),
    .s_rvalid_o(s_rvalid), .s_rready_i(s_rready),
    .m_axi_arid(m_axi_host_arid), .m_axi_araddr(m_axi_host_araddr), .m_axi_arlen(m_axi_host_arlen),
    .m_axi_arsize(m_axi_host_arsize), .m_axi_arburst(m_axi_host_arburst),
    .m_axi_arvalid(m_axi_host_arvalid), .m_axi_arready(m_axi_host_arready),
    .m_axi_rid(m_axi_host_rid), .m_axi_rdata(m_axi_host_rdata), .m_axi_rresp(m_axi_host_rresp),
    .m_axi_rlast(m_axi_host_rlast), .m_axi_rvalid(m_axi_host_rvalid), .m_axi_rready(m_axi_host_rready));

  // Writers: per-step output (h or delta), state out, progress, notify.
  logic [NumWr-1:0]     s_awvalid, s_awready, s_wvalid, s_wready, s_wlast, s_bvalid, s_bready;
  logic [NumWr*4-1:0]   s_awid, s_bid;
  logic [NumWr*64-1:0]  s_awaddr, s_wstrb;
  logic [NumWr*8-1:0]   s_awlen;
  logic [NumWr*3-1:0]   s_awsize;
  logic [NumWr*2-1:0]   s_awburst, s_bresp;
  logic [NumWr*512-1:0] s_wdata;

  // The engine's result streams reach their writers through register
  // slices: a writer's ready comes from its burst and ring state, and the
  // engine's result FIFOs and stream credits act on it in the same cycle
  // (12 LUT levels through both without them). abort_i drops what they
  // hold, as the writers drop the words handed over.
  logic [127:0] out_item, out_sl_data;   // h a word (zero above), or delta a unit
  assign out_item = run_bw_q ? delta_data : {96'b0, h_data};
  prim_reg_slice #(.Width(128)) u_out_slice (
    .clk_i,
    .rst_i      (rst_i || abort),
    .in_valid_i (run_bw_q ? delta_valid : h_valid),
    .in_ready_o (out_ready),
    .in_data_i  (out_item),
    .out_valid_o(wi_valid[WR_OUT]),
    .out_ready_i(wi_ready[WR_OUT]),
    .out_data_o (out_sl_data),
    .empty_o    (slice_empty[SL_OUT]));
  assign wi_data[WR_OUT*32 +: 32] = out_sl_data[31:0];
  prim_reg_slice #(.Width(32)) u_so_slice (
    .clk_i,
    .rst_i      (rst_i || abort),
    .in_valid_i (so_valid),
    .in_ready_o (so_ready),
    .in_data_i  (so_data),
    .out_valid_o(wi_valid[WR_SO]),
    .out_ready_i(wi_ready[WR_SO]),
    .out_data_o (wi_data[WR_SO*32 +: 32]),
    .empty_o    (slice_empty[SL_SO]));

  for (genvar i = 0; i < NumWr; i++) begin : g_wr
    localparam int unsigned Beats = (i == WR_OUT) ? 32 : (i == WR_SO) ? 16 : 2;
    localparam int unsigned Burst = (i == WR_OUT) ? 16 : (i == WR_SO) ? 16 : 1;
    // The per-step output writer takes BACKWARD's delta a unit (4 words) a
    // cycle, so the delta stream keeps the engine's rate; FORWARD's h, a word.
    localparam int unsigned InW = (i == WR_OUT) ? 4 : 1;
    logic [InW*32-1:0] item;
    logic              cmd_wide;
    if (i == WR_OUT) begin : g_out
      assign item     = {out_sl_data[127:32], wi_data[i*32 +: 32]};
      assign cmd_wide = run_bw_q;
    end else begin : g_word
      assign item     = wi_data[i*32 +: 32];
      assign cmd_wide = 1'b0;
    end
    dma_writer #(.IdWidth(4), .Id(i), .InWords(InW), .FifoBeats(Beats), .MaxBurstBeats(Burst),
                 .MaxOutstanding((i == WR_OUT) ? MaxOutstanding : 2)) u_wr (
      .clk_i, .rst_i, .abort_i(abort), .idle_o(wr_idle[i]),
      .cmd_valid_i(wc_valid[i]), .cmd_ready_o(wc_ready[i]), .cmd_addr_i(wc_addr[i*64 +: 64]),
      .cmd_bytes_i(wc_bytes[i*32 +: 32]), .cmd_wide_i(cmd_wide),
      .in_valid_i(wi_valid[i]), .in_ready_o(wi_ready[i]), .in_data_i(item),
      .done_o(wr_done[i]),
      .err_o(wr_err[i]), .err_addr_o(wr_err_addr[i*64 +: 64]), .err_resp_o(wr_err_resp[i*2 +: 2]),
      .m_axi_awid(s_awid[i*4 +: 4]), .m_axi_awaddr(s_awaddr[i*64 +: 64]), .m_axi_awlen(s_awlen[i*8 +: 8]),
      .m_axi_awsize(s_awsize[i*3 +: 3]), .m_axi_awburst(s_awburst[i*2 +: 2]),
      .m_axi_awvalid(s_awvalid[i]), .m_axi_awready(s_awready[i]),
      .m_axi_wdata(s_wdata[i*512 +: 512]), .m_axi_wstrb(s_wstrb[i*64 +: 64]), .m_axi_wlast(s_wlast[i]),
      .m_axi_wvalid(s_wvalid[i]), .m_axi_wready(s_wready[i]),
      .m_axi_bid(s_bid[i*4 +: 4]), .m_axi_bresp(s_bresp[i*2 +: 2]), .m_axi_bvalid(s_bvalid[i]),
      .m_axi_bready(s_bready[i]));
  end

  axi_wr_mux #(.NumPorts(NumWr), .IdWidth(4)) u_wr_mux (
    .clk_i, .rst_i,
    .s_awid_i(s_awid), .s_awaddr_i(s_awaddr), .s_awlen_i(s_awlen), .s_awsize_i(s_awsize),
    .s_awburst_i(s_awburst), .s_awvalid_i(s_awvalid), .s_awready_o(s_awready),
    .s_wdata_i(s_wdata), .s_wstrb_i(s_wstrb), .s_wlast_i(s_wlast), .s_wvalid_i(s_wvalid),
    .s_wready_o(s_wready), .s_bid_o(s_bid), .s_bresp_o(s_bresp), .s_bvalid_o(s_bvalid), .s_bready_i(s_bready),
    .m_axi_awid(m_axi_host_awid), .m_axi_awaddr(m_axi_host_awaddr), .m_axi_awlen(m_axi_host_awlen),
    .m_axi_awsize(m_axi_host_awsize), .m_axi_awburst(m_axi_host_awburst),
    .m_axi_awvalid(m_axi_host_awvalid), .m_axi_awready(m_axi_host_awready),
    .m_axi_wdata(m_axi_host_wdata), .m_axi_wstrb(m_axi_host_wstrb), .m_axi_wlast(m_axi_host_wlast),
    .m_axi_wvalid(m_axi_host_wvalid), .m_axi_wready(m_axi_host_wready),
    .m_axi_bid(m_axi_host_bid), .m_axi_bresp(m_axi_host_bresp), .m_axi_bvalid(m_axi_host_bvalid),
    .m_axi_bready(m_axi_host_bready));

  // ============================================================ gate store
  // A register slice between the engine's port and the adapter: the
  // adapter's ready depends on the request's address (it pairs a beat's two
  // records and shares a read beat), and the engine's request address comes
  // from an add, so without it one cycle ran engine -> adapter -> engine
  // (13 LUT levels in the assembled core). A second slice carries the
  // responses back: the engine's response ready comes from its stale count
  // and record FIFO, and the adapter's response fire pops its read buffer,
  // 8 LUT levels through both without it (measured on b668776). Both are
  // emptied with the adapter by the soft reset, which resets the engine too
  // (nothing waits for the dropped requests' responses); the adapter is idle
  // only with them empty.
  logic                      sl_valid, sl_ready, sl_write, sl_empty, st_idle;
  logic                      rsl_valid, rsl_ready, rsl_empty;
  logic [255:0]              rsl_data;
  logic [StoreAddrWidth-1:0] sl_addr;
  logic [255:0]              sl_data;
  prim_reg_slice #(.Width(1 + StoreAddrWidth + 256)) u_store_slice (
    .clk_i,
    .rst_i      (rst_i || store_flush),
    .in_valid_i (mreq_valid),
    .in_ready_o (mreq_ready),
    .in_data_i  ({mreq_write, mreq_addr, mreq_data}),
    .out_valid_o(sl_valid),
    .out_ready_i(sl_ready),
    .out_data_o ({sl_write, sl_addr, sl_data}),
    .empty_o    (sl_empty)
  );
  prim_reg_slice #(.Width(256)) u_store_rsp_slice (
    .clk_i,
    .rst_i      (rst_i || store_flush),
    .in_valid_i (rsl_valid),
    .in_ready_o (rsl_ready),
    .in_data_i  (rsl_data),
    .out_valid_o(mrsp_valid),
    .out_ready_i(mrsp_ready),
    .out_data_o (mrsp_data),
    .empty_o    (rsl_empty)
  );
  assign store_idle = st_idle && sl_empty && rsl_empty;
  logic                      st_err;
  logic [StoreAddrWidth-1:0] st_err_addr;
  logic [1:0]                st_err_resp;
  logic                      st_err_write;
  store_axi #(
    .AddrWidth(StoreAddrWidth),
    .IdWidth  (4)
  ) u_store (
    .clk_i,
    .rst_i,
    .flush_i      (store_flush),
    .idle_o       (st_idle),
    .req_valid_i  (sl_valid),
    .req_ready_o  (sl_ready),
    .req_write_i  (sl_write),
    .req_addr_i   (sl_addr),
    .req_data_i   (sl_data),
    .rsp_valid_o  (rsl_valid),
    .rsp_ready_i  (rsl_ready),
    .rsp_data_o   (rsl_data),
    .err_o        (st_err),
    .err_addr_o   (st_err_addr),
    .err_resp_o   (st_err_resp),
    .err_write_o  (st_err_write),
    .m_axi_awid   (m_axi_card_awid),
    .m_axi_awaddr (m_axi_card_awaddr),
    .m_axi_awlen  (m_axi_card_awlen),
    .m_axi_awsize (m_axi_card_awsize),
    .m_axi_awburst(m_axi_card_awburst),
    .m_axi_awvalid(m_axi_card_awvalid),
    .m_axi_awready(m_axi_card_awready),
    .m_axi_wdata  (m_axi_card_wdata),
    .m_axi_wstrb  (m_axi_card_wstrb),
    .m_axi_wlast  (m_axi_card_wlast),
    .m_axi_wvalid (m_axi_card_wvalid),
    .m_axi_wready (m_axi_card_wready),
    .m_axi_bid    (m_axi_card_bid),
    .m_axi_bresp  (m_axi_card_bresp),
    .m_axi_bvalid (m_axi_card_bvalid),
    .m_axi_bready (m_axi_card_bready),
    .m_axi_arid   (m_axi_card_arid),
    .m_axi_araddr (m_axi_card_araddr),
    .m_axi_arlen  (m_axi_card_arlen),
    .m_axi_arsize (m_axi_card_arsize),
    .m_axi_arburst(m_axi_card_arburst),
    .m_axi_arvalid(m_axi_card_arvalid),
    .m_axi_arready(m_axi_card_arready),
    .m_axi_rid    (m_axi_card_rid),
    .m_axi_rdata  (m_axi_card_rdata),
    .m_axi_rresp  (m_axi_card_rresp),
    .m_axi_rlast  (m_axi_card_rlast),
    .m_axi_rvalid (m_axi_card_rvalid),
    .m_axi_rready (m_axi_card_rready)
  );

  // ============================================================ faults
  // The first mover (in a fixed order) with an error names the fault; the
  // error stays set until the abort that follows clears it.
  logic [3:0] rd_stream [NumRd];
  logic [3:0] wr_stream [NumWr];
  always_comb begin
    rd_stream[RD_CTL]  = ctl_stream;
    rd_stream[RD_WGT]  = core_regs_pkg::STREAM_WEIGHTS;
    rd_stream[RD_SI]   = core_regs_pkg::STREAM_STATE_IN;
    rd_stream[RD_IN]   = run_bw_q ? core_regs_pkg::STREAM_DH : core_regs_pkg::STREAM_XP;
    rd_stream[RD_POLL] = core_regs_pkg::STREAM_WAIT_POLL;
    wr_stream[WR_OUT]  = run_bw_q ? core_regs_pkg::STREAM_DELTA : core_regs_pkg::STREAM_H;
    wr_stream[WR_SO]   = core_regs_pkg::STREAM_STATE_OUT;
    wr_stream[WR_PROG] = core_regs_pkg::STREAM_SIGNAL;
    wr_stream[WR_NTF]  = core_regs_pkg::STREAM_SIGNAL;
    dma_err        = 1'b0;
    dma_err_addr   = '0;
    dma_err_resp   = '0;
    dma_err_write  = 1'b0;
    dma_err_stream = '0;
    if (st_err) begin
      dma_err        = 1'b1;
      dma_err_addr   = 64'(st_err_addr);
      dma_err_resp   = st_err_resp;
      dma_err_write  = st_err_write;
      dma_err_stream = core_regs_pkg::STREAM_GATE_STORE;
    end
    for (int i = NumWr - 1; i >= 0; i--) begin
      if (wr_err[i]) begin
        dma_err        = 1'b1;
        dma_err_addr   = wr_err_addr[i*64 +: 64];
        dma_err_resp   = wr_err_resp[i*2 +: 2];
        dma_err_write  = 1'b1;
        dma_err_stream = wr_stream[i];
      end
    end
    for (int i = NumRd - 1; i >= 0; i--) begin
      if (rd_err[i]) begin
        dma_err        = 1'b1;
        dma_err_addr   = rd_err_addr[i*64 +: 64];
        dma_err_resp   = rd_err_resp[i*2 +: 2];
        dma_err_write  = 1'b0;
        dma_err_stream = rd_stream[i];
      end
    end
  end
  // The dispatcher takes the fault a cycle later, from registers (the
  // control reader's stream comes from the dispatcher's state: 8 LUT levels
  // round the loop otherwise).
  always_ff @(posedge clk_i) begin
    if (rst_i) dma_err_q <= 1'b0;
    else dma_err_q <= dma_err;
    dma_err_addr_q   <= dma_err_addr;
    dma_err_resp_q   <= dma_err_resp;
    dma_err_write_q  <= dma_err_write;
    dma_err_stream_q <= dma_err_stream;
  end

  // The dispatcher waits for idle only while it aborts (fault, soft reset),
  // when nothing new starts. The idle it sees is registered twice (each
  // block's, then their AND), and each stage counts only cycles spent
  // aborting, so a command handed over just before the abort is never
  // missed (the blocks' idle outputs reach the dispatcher's state in 10 LUT
  // levels otherwise).
  localparam int unsigned NumIdle = NumRd + NumWr + 5;
  logic [NumIdle-1:0] idle_q;
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      idle_q       <= '0;
      abort_idle_q <= 1'b0;
    end else begin
      idle_q       <= {NumIdle{abort}} & {!eng_busy, !ld_busy, !run_busy, rd_idle, wr_idle, gather_idle,
                                          &slice_empty};
      abort_idle_q <= abort && (&idle_q);
    end
  end
  // STATUS.busy/halted are read a cycle late, from registers (the register
  // file's read mux adds 6 LUT levels to the dispatcher's state decode).
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      st_busy_q   <= 1'b0;
      st_halted_q <= 1'b0;
    end else begin
      st_busy_q   <= disp_busy;
      st_halted_q <= st_halted;
    end
  end

  // ============================================================ counters
  // Engine counters are per command: added to the totals the cycle after
  // its done (eng_done_q, when they have stopped).
  logic [63:0] host_wr_bytes, card_wr_bytes;
  always_comb begin
    host_wr_bytes = '0;
    card_wr_bytes = '0;
    for (int b = 0; b < 64; b++) begin
      host_wr_bytes = host_wr_bytes + 64'(m_axi_host_wstrb[b]);
      card_wr_bytes = card_wr_bytes + 64'(m_axi_card_wstrb[b]);
    end
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      cnt_cycles    <= '0;
      cnt_busy      <= '0;
      cnt_macs      <= '0;
      cnt_st_in     <= '0;
      cnt_st_out    <= '0;
      cnt_st_dep    <= '0;
      cnt_st_store  <= '0;
      cnt_st_gate   <= '0;
      cnt_host_rd   <= '0;
      cnt_host_wr   <= '0;
      cnt_card_rd   <= '0;
      cnt_card_wr   <= '0;
      cnt_desc      <= '0;
      cnt_nonfinite <= '0;
    end else begin
      cnt_cycles  <= cnt_cycles + 64'd1;
      cnt_busy    <= cnt_busy + 64'(disp_busy);
      cnt_st_gate <= cnt_st_gate + 64'(gate_wait || wait_stall);
      cnt_desc    <= cnt_desc + 64'(desc_done);
      if (m_axi_host_rvalid && m_axi_host_rready) cnt_host_rd <= cnt_host_rd + 64'd64;
      if (m_axi_host_wvalid && m_axi_host_wready) cnt_host_wr <= cnt_host_wr + host_wr_bytes;
      if (m_axi_card_rvalid && m_axi_card_rready) cnt_card_rd <= cnt_card_rd + 64'd64;
      if (m_axi_card_wvalid && m_axi_card_wready) cnt_card_wr <= cnt_card_wr + card_wr_bytes;
      if (eng_done_q) begin
        cnt_macs      <= cnt_macs + e_macs;
        cnt_st_in     <= cnt_st_in + e_st_in;
        cnt_st_out    <= cnt_st_out + e_st_out;
        cnt_st_dep    <= cnt_st_dep + e_st_dep;
        cnt_st_store  <= cnt_st_store + e_st_store;
        cnt_nonfinite <= cnt_nonfinite + e_nonfinite;
      end
    end
  end

  // ============================================================ interrupts
  logic [1:0] acked_q, acked_d, cause;
  assign cause = {irq_error && ctrl_irq_error_en, irq_done && ctrl_irq_done_en};
  always_comb begin
    acked_d = acked_q;
    for (int i = 0; i < 2; i++) begin
      if (irq_ack_i[i]) acked_d[i] = 1'b1;
      if (!cause[i]) acked_d[i] = 1'b0;
    end
  end
  assign irq_req_o = cause & ~acked_q;
  always_ff @(posedge clk_i) begin
    if (rst_i) acked_q <= '0;
    else acked_q <= acked_d;
  end

  logic unused_core;
  assign unused_core = ^{e_load_cycles, e_weight_words, e_cycles, h_last, delta_last};

endmodule

`default_nettype wire
