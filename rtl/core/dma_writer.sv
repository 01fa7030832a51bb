// DMA writer: writes a stream of items to byte ranges of host memory over an
// AXI4 write channel (AW/W/B, 512-bit data). An item is one 32-bit word
// (in_data_i[31:0]) or, for a command given with cmd_wide_i, InWords words
// (word 0 in bits 31:0).
// A command (cmd_addr_i aligned to the item, cmd_bytes_i a non-zero multiple
// of it) takes exactly cmd_bytes_i/4 words from the in stream. Words are
// packed into beats at lane addr[5:2] with WSTRB covering only the bytes
// written (an item never straddles two beats), and the beats are grouped
// into INCR bursts as long as possible within
// min(MaxBurstBeats, FifoBeats) beats and the 4 KiB boundary. A burst's AW is
// issued only once all its beats are buffered, so W never waits on the input
// mid-burst; W beats are presented only for bursts whose AW has been accepted
// (what axi_wr_mux needs). The next command is accepted as soon as the
// current one has taken its last word. Up to MaxOutstanding bursts are in
// flight (AW issued, B not returned); B beats must carry BID = Id.
// done_o pulses once per command, in command order, when the B responses of
// all its bursts have returned OKAY. The first non-OKAY BRESP sets err_o
// (sticky until abort_i or rst_i) with the address of that burst and its
// BRESP; no AW is issued after it and no done_o follows; bursts in flight
// complete. abort_i drops the command, the words not yet written and the
// bursts not yet issued (AXI still requires the W beats of every AW issued:
// they are sent, then the dropped beats leave the FIFO at one per cycle);
// the B responses of bursts in flight are ignored. A command or word handed
// over in the abort cycle is dropped; a done_o in it counts. idle_o rises
// once nothing is in flight, at most FifoBeats + 2 cycles after the last B.
// Latency: a command's last item to its AWVALID 2 cycles, to its first
// WVALID 1 cycle after the AW is accepted; B to done_o 1 cycle.
// Throughput: one input item per cycle; one W beat per cycle.
`default_nettype none

module dma_writer #(
  parameter int unsigned IdWidth        = 4,
  parameter int unsigned Id             = 0,
  parameter int unsigned InWords        = 1,   // words of a wide item: 1, 2, 4 or 8
  parameter int unsigned FifoBeats      = 32,
  parameter int unsigned MaxBurstBeats  = 64,
  parameter int unsigned MaxOutstanding = 8
) (
  input  logic               clk_i,
  input  logic               rst_i,
  input  logic               abort_i,
  output logic               idle_o,
  input  logic               cmd_valid_i,
  output logic               cmd_ready_o,
  input  logic [63:0]        cmd_addr_i,
  input  logic [31:0]        cmd_bytes_i,
  input  logic               cmd_wide_i,     // the command's items are InWords words
  input  logic               in_valid_i,
  output logic               in_ready_o,
  input  logic [InWords*32-1:0] in_data_i,
  output logic               done_o,
  output logic               err_o,
  output logic [63:0]        err_addr_o,
  output logic [1:0]         err_resp_o,
  output logic [IdWidth-1:0] m_axi_awid,
  output logic [63:0]        m_axi_awaddr,
  output logic [7:0]         m_axi_awlen,
  output logic [2:0]         m_axi_awsize,
  output logic [1:0]         m_axi_awburst,
  output logic               m_axi_awvalid,
  input  logic               m_axi_awready,
  output logic [511:0]       m_axi_wdata,
  output logic [63:0]        m_axi_wstrb,
  output logic               m_axi_wlast,
  output logic               m_axi_wvalid,
  input  logic               m_axi_wready,
  input  logic [IdWidth-1:0] m_axi_bid,
  input  logic [1:0]         m_axi_bresp,
  input  logic               m_axi_bvalid,
  output logic               m_axi_bready
);

  localparam int unsigned BurstCap     = (MaxBurstBeats < FifoBeats) ? MaxBurstBeats : FifoBeats;
  // Burst ring: bursts formed (all beats buffered) and bursts in flight.
  localparam int unsigned RingDepth    = 2 * MaxOutstanding;
  localparam int unsigned PtrWidth     = $clog2(RingDepth);
  localparam int unsigned RingCntWidth = $clog2(RingDepth + 1);
  localparam int unsigned BeatCntWidth = $clog2(FifoBeats + 2);  // as prim_fifo's count_o
  localparam int unsigned FifoWidth    = 1 + 16 + 512;           // WLAST, word mask, data
  localparam int unsigned ItemShift    = $clog2(InWords);
  localparam logic [15:0] WideMask     = 16'((32'd1 << InWords) - 1);

  function automatic logic [PtrWidth-1:0] next_ptr(input logic [PtrWidth-1:0] p);
    next_ptr = (32'(p) == RingDepth - 1) ? '0 : p + 1'b1;
  endfunction

  // Packer: the current command and the beat being assembled.
  logic         active_q, active_d;
  logic         wide_q, wide_d;              // items of InWords words
  logic [4:0]   item_words;                  // words of an item: 1 or InWords
  logic [15:0]  item_mask;                   // the lanes the item at `lane` fills
  logic [61:0]  waddr_q, waddr_d;            // word address of the next item
  logic [29:0]  words_left_q, words_left_d;
  logic [511:0] beat_data_q, beat_data_d, merged;
  logic [15:0]  beat_mask_q, beat_mask_d;    // words of the beat written so far
  logic [6:0]   burst_beats_q, burst_beats_d;  // beats buffered of the burst being formed
  logic [57:0]  burst_addr_q, burst_addr_d;
  logic [3:0]   lane;
  logic [57:0]  beat_addr;
  // The item's position, kept in registers so that in_ready_o is a few LUT
  // levels from them (a register slice takes it in farnn_core):
  logic         last_item_q, last_item_d;  // words_left_q == item_words
  logic         cap_q, cap_d;              // burst_beats_q == BurstCap - 1
  logic         beat_full, beat_end, burst_end, in_take, cmd_take;

  // Burst ring: [bptr, aptr) in flight, [aptr, wptr) formed.
  logic [57:0]             ring_addr [RingDepth];
  logic [7:0]              ring_len [RingDepth];
  logic                    ring_last [RingDepth];
  logic [PtrWidth-1:0]     wptr_q, wptr_d, aptr_q, aptr_d, bptr_q, bptr_d;
  logic [RingCntWidth-1:0] n_formed_q, n_formed_d, n_out_q, n_out_d;
  logic [RingCntWidth-1:0] n_ring_q, n_ring_d;  // n_formed_q + n_out_q
  logic                    ring_full, ring_push;

  // AW register, W accounting.
  logic                    awvalid_q, awvalid_d;
  logic [57:0]             awaddr_q, awaddr_d;
  logic [7:0]              awlen_q, awlen_d;
  logic                    aw_issue, aw_hs;
  logic [RingCntWidth-1:0] wb_q, wb_d;        // bursts with AW accepted and W not finished
  logic [BeatCntWidth-1:0] owed_q, owed_d;    // W beats of issued AWs not yet sent
  logic [BeatCntWidth-1:0] junk_q, junk_d;    // dropped beats behind them, still in the FIFO
  logic                    w_hs, junk_pop;

  // B side.
  logic [RingCntWidth-1:0] drop_b_q, drop_b_d;  // in-flight bursts whose B is ignored
  logic                    done_q, done_d;
  logic                    err_q, err_d;
  logic [63:0]             err_addr_q, err_addr_d;
  logic [1:0]              err_resp_q, err_resp_d;

  // Beat FIFO.
  logic                    fifo_in_ready, fifo_out_valid;
  logic [FifoWidth-1:0]    fifo_out_data;
  logic [BeatCntWidth-1:0] fifo_count;
  logic                    f_last;
  logic [15:0]             f_mask;

  // ---------------------------------------------------------------------------
  // Packer.
  assign lane = waddr_q[3:0];
  assign beat_addr = waddr_q[61:4];
  assign item_words = wide_q ? 5'(InWords) : 5'd1;
  assign item_mask = (wide_q ? WideMask : 16'd1) << lane;
  // The item ends the beat: lane + item_words == 16, compared as
  // lane == 16 - item_words (a constant for each width, no add on lane).
  assign beat_full = (lane == (wide_q ? 4'(16 - InWords) : 4'd15));
  assign beat_end = beat_full || last_item_q;
  assign burst_end = last_item_q || (beat_full && (cap_q || (beat_addr[5:0] == 6'h3f)));
  assign ring_full = (32'(n_ring_q) == RingDepth);
  assign in_ready_o = active_q && (!beat_end || fifo_in_ready) && (!burst_end || !ring_full);
  assign in_take = in_valid_i && in_ready_o && !abort_i;
  assign ring_push = in_take && burst_end;
  assign cmd_ready_o = !active_q;
  assign cmd_take = cmd_valid_i && !active_q && !abort_i;

  always_comb begin
    merged = beat_data_q;
    if (wide_q) begin
      for (int i = 0; i < 16 / InWords; i++) begin
        if (32'(lane) >> ItemShift == i) merged[i*InWords*32 +: InWords*32] = in_data_i;
      end
    end else begin
      for (int i = 0; i < 16; i++) begin
        if (lane == 4'(i)) merged[i*32 +: 32] = in_data_i[31:0];
      end
    end
  end

  always_comb begin
    active_d = active_q;
    wide_d = wide_q;
    waddr_d = waddr_q;
    words_left_d = words_left_q;
    beat_mask_d = beat_mask_q;
    burst_beats_d = burst_beats_q;
    burst_addr_d = burst_addr_q;
    last_item_d = last_item_q;
    cap_d = cap_q;
    beat_data_d = in_take ? merged : beat_data_q;
    if (cmd_take) begin
      active_d = 1'b1;
      wide_d = cmd_wide_i;
      waddr_d = cmd_addr_i[63:2];
      words_left_d = cmd_bytes_i[31:2];
      last_item_d = (cmd_bytes_i[31:2] == (cmd_wide_i ? 30'(InWords) : 30'd1));
    end
    if (in_take) begin
      waddr_d = waddr_q + 62'(item_words);
      words_left_d = words_left_q - 30'(item_words);
      last_item_d = (words_left_q == 30'(2 * item_words));
      active_d = !last_item_q;
      beat_mask_d = beat_end ? 16'b0 : beat_mask_q | item_mask;
      if (beat_end) begin
        burst_beats_d = burst_end ? 7'd0 : burst_beats_q + 7'd1;
        cap_d = burst_end ? (BurstCap == 1) : (32'(burst_beats_q) + 2 == BurstCap);
        if (burst_beats_q == 7'd0) burst_addr_d = beat_addr;
      end
    end
    if (abort_i) begin
      active_d = 1'b0;
      beat_mask_d = '0;
      burst_beats_d = '0;
      cap_d = (BurstCap == 1);
    end
  end

  // ---------------------------------------------------------------------------
  // Burst ring and AW.
  always_ff @(posedge clk_i) begin
    if (ring_push) begin
      ring_addr[wptr_q] <= (burst_beats_q == 7'd0) ? beat_addr : burst_addr_q;
      ring_len[wptr_q] <= {1'b0, burst_beats_q};
      ring_last[wptr_q] <= last_item_q;
    end
  end

  assign aw_issue = (n_formed_q != '0) && (32'(n_out_q) < MaxOutstanding) &&
                    (!awvalid_q || m_axi_awready) && !err_q && (junk_q == '0) && !abort_i;
  assign aw_hs = awvalid_q && m_axi_awready;

  always_comb begin
    awvalid_d = awvalid_q && !m_axi_awready;
    awaddr_d = awaddr_q;
    awlen_d = awlen_q;
    if (aw_issue) begin
      awvalid_d = 1'b1;
      awaddr_d = ring_addr[aptr_q];
      awlen_d = ring_len[aptr_q];
    end
    // Nothing is pushed or issued in the abort cycle: the formed bursts go.
    wptr_d = abort_i ? aptr_q : ring_push ? next_ptr(wptr_q) : wptr_q;
    aptr_d = aw_issue ? next_ptr(aptr_q) : aptr_q;
    bptr_d = m_axi_bvalid ? next_ptr(bptr_q) : bptr_q;
    n_formed_d = abort_i ? '0 : n_formed_q + RingCntWidth'(ring_push) - RingCntWidth'(aw_issue);
    n_out_d = n_out_q + RingCntWidth'(aw_issue) - RingCntWidth'(m_axi_bvalid);
    // An issue moves a burst from formed to in flight; the abort drops the
    // formed ones (and issues nothing).
    n_ring_d = (abort_i ? n_out_q : n_ring_q + RingCntWidth'(ring_push)) - RingCntWidth'(m_axi_bvalid);
  end

  // ---------------------------------------------------------------------------
  // W: beats of accepted AWs first, then the dropped beats of an abort.
  assign m_axi_wvalid = fifo_out_valid && (wb_q != '0);
  assign w_hs = m_axi_wvalid && m_axi_wready;
  assign junk_pop = fifo_out_valid && (owed_q == '0) && (junk_q != '0);

  always_comb begin
    wb_d = wb_q + RingCntWidth'(aw_hs) - RingCntWidth'(w_hs && f_last);
    owed_d = owed_q + (aw_issue ? BeatCntWidth'(ring_len[aptr_q]) + 1'b1 : '0) - BeatCntWidth'(w_hs);
    junk_d = junk_q - BeatCntWidth'(junk_pop);
    // Nothing is issued or pushed in the abort cycle: every beat left in the
    // FIFO that no issued AW owes is dropped.
    // (No AW issues in an abort cycle, so owed_d is owed_q less this W beat:
    // written so, the count does not wait on the AW handshake.)
    if (abort_i) junk_d = fifo_count - BeatCntWidth'(w_hs || junk_pop) - (owed_q - BeatCntWidth'(w_hs));
  end

  prim_fifo #(
    .Width(FifoWidth),
    .Depth(FifoBeats)
  ) u_fifo (
    .clk_i,
    .rst_i,
    .in_valid_i (in_take && beat_end),
    .in_ready_o (fifo_in_ready),
    .in_data_i  ({burst_end, beat_mask_q | item_mask, merged}),
    .out_valid_o(fifo_out_valid),
    .out_ready_i(((wb_q != 0) && m_axi_wready) || ((owed_q == 0) && (junk_q != 0))),
    .out_data_o (fifo_out_data),
    .count_o    (fifo_count)
  );

  assign {f_last, f_mask, m_axi_wdata} = fifo_out_data;
  assign m_axi_wlast = f_last;
  for (genvar i = 0; i < 16; i++) begin : g_strb
    assign m_axi_wstrb[i*4 +: 4] = {4{f_mask[i]}};
  end

  // ---------------------------------------------------------------------------
  // B: in order (one ID), against the ring's oldest in-flight burst.
  assign m_axi_bready = 1'b1;

  always_comb begin
    drop_b_d = drop_b_q;
    done_d = 1'b0;
    err_d = err_q;
    err_addr_d = err_addr_q;
    err_resp_d = err_resp_q;
    if (m_axi_bvalid) begin
      if (drop_b_q != '0) begin
        drop_b_d = drop_b_q - 1'b1;
      end else if (!abort_i && !err_q) begin
        if (m_axi_bresp != 2'b00) begin
          err_d = 1'b1;
          err_addr_d = {ring_addr[bptr_q], 6'b0};
          err_resp_d = m_axi_bresp;
        end else begin
          done_d = ring_last[bptr_q];
        end
      end
    end
    if (abort_i) begin
      drop_b_d = n_out_d;  // nothing issues in the abort cycle
      err_d = 1'b0;
    end
  end

  // ---------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      active_q <= 1'b0;
      beat_mask_q <= '0;
      burst_beats_q <= '0;
      cap_q <= (BurstCap == 1);
      wptr_q <= '0;
      aptr_q <= '0;
      bptr_q <= '0;
      n_formed_q <= '0;
      n_out_q <= '0;
      n_ring_q <= '0;
      awvalid_q <= 1'b0;
      wb_q <= '0;
      owed_q <= '0;
      junk_q <= '0;
      drop_b_q <= '0;
      done_q <= 1'b0;
      err_q <= 1'b0;
    end else begin
      active_q <= active_d;
      beat_mask_q <= beat_mask_d;
      burst_beats_q <= burst_beats_d;
      cap_q <= cap_d;
      wptr_q <= wptr_d;
      aptr_q <= aptr_d;
      bptr_q <= bptr_d;
      n_formed_q <= n_formed_d;
      n_out_q <= n_out_d;
      n_ring_q <= n_ring_d;
      awvalid_q <= awvalid_d;
      wb_q <= wb_d;
      owed_q <= owed_d;
      junk_q <= junk_d;
      drop_b_q <= drop_b_d;
      done_q <= done_d;
      err_q <= err_d;
    end
  end

  always_ff @(posedge clk_i) begin
    wide_q <= wide_d;
    waddr_q <= waddr_d;
    words_left_q <= words_left_d;
    last_item_q <= last_item_d;
    beat_data_q <= beat_data_d;
    burst_addr_q <= burst_addr_d;
    awaddr_q <= awaddr_d;
    awlen_q <= awlen_d;
    err_addr_q <= err_addr_d;
    err_resp_q <= err_resp_d;
  end

  assign m_axi_awid = IdWidth'(Id);
  assign m_axi_awaddr = {awaddr_q, 6'b0};
  assign m_axi_awlen = awlen_q;
  assign m_axi_awsize = 3'd6;    // 64 bytes, the full width
  assign m_axi_awburst = 2'b01;  // INCR
  assign m_axi_awvalid = awvalid_q;
  assign done_o = done_q;
  assign err_o = err_q;
  assign err_addr_o = err_addr_q;
  assign err_resp_o = err_resp_q;
  assign idle_o = !active_q && (n_formed_q == '0) && (n_out_q == '0) && (fifo_count == '0);

`ifndef SYNTHESIS
  initial begin
    if (InWords != 1 && InWords != 2 && InWords != 4 && InWords != 8)
      $error("dma_writer: InWords must be 1, 2, 4 or 8");
    if (FifoBeats < 2 || (FifoBeats & (FifoBeats - 1)) != 0)
      $error("dma_writer: FifoBeats must be a power of two >= 2");
    if (MaxBurstBeats < 1 || MaxBurstBeats > 64) $error("dma_writer: MaxBurstBeats must be 1..64 (4 KiB)");
    if (MaxOutstanding < 1) $error("dma_writer: MaxOutstanding must be at least 1");
    if (IdWidth < 1 || IdWidth > 31 || Id >= (1 << IdWidth)) $error("dma_writer: Id does not fit IdWidth");
  end

  logic         aw_stalled_q, w_stalled_q;
  logic [65:0]  aw_held_q;
  logic [576:0] w_held_q;
  always_ff @(posedge clk_i) begin
    aw_stalled_q <= !rst_i && m_axi_awvalid && !m_axi_awready;
    aw_held_q <= {awaddr_q, awlen_q};
    w_stalled_q <= !rst_i && m_axi_wvalid && !m_axi_wready;
    w_held_q <= {m_axi_wlast, m_axi_wstrb, m_axi_wdata};
    if (!rst_i) begin
      if (cmd_valid_i && cmd_ready_o) begin
        assert (cmd_bytes_i != '0 && cmd_bytes_i[1:0] == 2'b00)
        else $error("dma_writer: cmd_bytes_i must be a non-zero multiple of 4");
        assert (cmd_addr_i[1:0] == 2'b00) else $error("dma_writer: cmd_addr_i must be 4-byte aligned");
        assert (!cmd_wide_i || ((cmd_addr_i[5:0] | cmd_bytes_i[5:0]) & 6'(InWords * 4 - 1)) == '0)
        else $error("dma_writer: a wide command's address and length must be multiples of InWords*4 bytes");
      end
      if (m_axi_bvalid) begin
        assert (n_out_q != '0) else $error("dma_writer: B with no burst in flight");
        assert (m_axi_bid == IdWidth'(Id)) else $error("dma_writer: B with a foreign BID");
      end
      assert (!(in_take && beat_end) || fifo_in_ready) else $error("dma_writer: beat FIFO overflow");
      assert (!ring_push || !ring_full) else $error("dma_writer: burst ring overflow");
      assert (!active_q || last_item_q == (words_left_q == 30'(item_words)))
      else $error("dma_writer: last_item_q out of step with words_left_q");
      assert (cap_q == (32'(burst_beats_q) == BurstCap - 1))
      else $error("dma_writer: cap_q out of step with burst_beats_q");
      assert (n_ring_q == n_formed_q + n_out_q) else $error("dma_writer: n_ring_q out of step with the ring");
      assert (!w_hs || owed_q != '0) else $error("dma_writer: W beat that no AW owes");
      assert (32'(n_out_q) <= MaxOutstanding) else $error("dma_writer: more bursts in flight than MaxOutstanding");
      assert (!aw_stalled_q || (m_axi_awvalid && {awaddr_q, awlen_q} == aw_held_q))
      else $error("dma_writer: AW dropped or changed while stalled");
      assert (!w_stalled_q || (m_axi_wvalid && {m_axi_wlast, m_axi_wstrb, m_axi_wdata} == w_held_q))
      else $error("dma_writer: W dropped or changed while stalled");
    end
  end
`endif

endmodule

`default_nettype wire
