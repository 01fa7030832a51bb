// DMA reader: reads byte ranges of host memory over an AXI4 read channel
// (AR/R, 512-bit data) and delivers them in command order as a stream of
// OutWords-word items.
// A command (cmd_addr_i aligned to OutWords*4 bytes, cmd_bytes_i a non-zero
// multiple of it; with WordAligned, to 4 bytes and a multiple of 4) is split
// into INCR bursts of full beats, each at most min(MaxBurstBeats, FifoBeats)
// beats long and never crossing a 4 KiB boundary. The items of the command's
// first beat before its first word and of its last beat after its last word
// are skipped; with cmd_last_i the command's final item carries out_last_o.
// Items sit on the beat's grid of OutWords words: out_lo_o and out_hi_o give
// the first and last word of the item that belong to the command (0 and
// OutWords - 1 but in the command's first and last item of a WordAligned
// reader, whose other words are the memory's neighbours). The next command is accepted as soon as every burst of
// the current one is issued, so commands stream back to back.
// Credit rule: a burst is issued only when the beat FIFO has room for all its
// beats, counting the beats of bursts still outstanding, so m_axi_rready is
// constantly 1 and the shared R channel never stalls on this reader. At most
// MaxOutstanding bursts are outstanding; R beats must carry RID = Id.
// Errors: the first beat answered non-OKAY sets err_o (sticky until abort_i or
// rst_i) with the address of its burst (err_addr_o) and its RRESP; that beat
// and every later one is discarded and no burst is issued any more (items
// buffered before the failing beat may still be delivered). abort_i stops
// issuing, drops the command and the buffered data (an item handed over in the
// abort cycle itself counts as delivered; a command handed over in it is
// dropped) and discards the data of outstanding bursts as it arrives; idle_o
// rises once nothing is outstanding.
// Latency: command to first ARVALID 2 cycles; R beat to its first item 2 cycles.
// Throughput: one OutWords-word item per cycle (OutWords = 16: one beat per
// cycle); with FifoBeats >= latency + MaxBurstBeats beats and enough
// MaxOutstanding it keeps the R channel busy (98.5 % measured on a 1 MiB read
// at 250 cycles of latency with FifoBeats = 512, MaxBurstBeats = 64,
// MaxOutstanding = 8; 100 % after the first beat).
`default_nettype none

module dma_reader #(
  parameter int unsigned IdWidth        = 4,
  parameter int unsigned Id             = 0,
  parameter int unsigned OutWords       = 1,
  parameter int unsigned FifoBeats      = 32,
  parameter int unsigned MaxBurstBeats  = 64,
  parameter int unsigned MaxOutstanding = 8,
  parameter bit          WordAligned    = 1'b0
) (
  input  logic                   clk_i,
  input  logic                   rst_i,
  input  logic                   abort_i,
  output logic                   idle_o,
  input  logic                   cmd_valid_i,
  output logic                   cmd_ready_o,
  input  logic [63:0]            cmd_addr_i,
  input  logic [31:0]            cmd_bytes_i,
  input  logic                   cmd_last_i,
  output logic                   out_valid_o,
  input  logic                   out_ready_i,
  output logic [OutWords*32-1:0] out_data_o,
  output logic                   out_last_o,
  output logic [3:0]             out_lo_o,
  output logic [3:0]             out_hi_o,
  output logic                   err_o,
  output logic [63:0]            err_addr_o,
  output logic [1:0]             err_resp_o,
  output logic [IdWidth-1:0]     m_axi_arid,
  output logic [63:0]            m_axi_araddr,
  output logic [7:0]             m_axi_arlen,
  output logic [2:0]             m_axi_arsize,
  output logic [1:0]             m_axi_arburst,
  output logic                   m_axi_arvalid,
  input  logic                   m_axi_arready,
  input  logic [IdWidth-1:0]     m_axi_rid,
  input  logic [511:0]           m_axi_rdata,
  input  logic [1:0]             m_axi_rresp,
  input  logic                   m_axi_rlast,
  input  logic                   m_axi_rvalid,
  output logic                   m_axi_rready
);

  localparam int unsigned BurstCap     = (MaxBurstBeats < FifoBeats) ? MaxBurstBeats : FifoBeats;
  localparam int unsigned Chunks       = 16 / OutWords;  // items per beat
  localparam int unsigned ChunkWidth   = (Chunks > 1) ? $clog2(Chunks) : 1;
  localparam int unsigned ChunkShift   = $clog2(OutWords);
  localparam int unsigned PtrWidth     = (MaxOutstanding > 1) ? $clog2(MaxOutstanding) : 1;
  localparam int unsigned CntWidth     = $clog2(MaxOutstanding + 1);
  localparam int unsigned BeatCntWidth = $clog2(FifoBeats + 2);  // as prim_fifo's count_o
  // Burst descriptor: beat address, ARLEN, first and last word of its beats, stream last.
  localparam int unsigned DescWidth    = 58 + 8 + 2 * 4 + 1;
  // FIFO entry: stream last, last and first word of the beat, data.
  localparam int unsigned FifoWidth    = 1 + 2 * 4 + 512;
  localparam logic [3:0] ItemMask = 4'(OutWords - 1);  // a word's place in its item

  function automatic logic [PtrWidth-1:0] next_ptr(input logic [PtrWidth-1:0] p);
    next_ptr = (32'(p) == MaxOutstanding - 1) ? '0 : p + 1'b1;
  endfunction

  // ---------------------------------------------------------------------------
  // Command: the next burst to issue.
  logic                  active_q, active_d;
  logic [57:0]           baddr_q, baddr_d;            // beat address of the next burst
  logic [26:0]           beats_left_q, beats_left_d;  // beats still to issue
  logic                  first_q, first_d;            // the next burst is the command's first
  logic [3:0]            lo_q, lo_d, hi_q, hi_d;      // first word of the first beat, last of the last
  logic                  last_q, last_d;              // cmd_last_i
  logic [26:0]           cmd_beats;                   // beats the command touches
  logic [3:0]            cmd_end_word;                // word of the last byte in its beat
  logic                  cmd_take;

  // AR register and burst sizing.
  logic        arvalid_q, arvalid_d;
  logic [57:0] araddr_q, araddr_d;
  logic [7:0]  arlen_q, arlen_d;
  logic [6:0]  to_4k, blen;
  logic        room, issue;
  // The burst's size decides from registers: cap_q (the beats to the next
  // 4 KiB bound or BurstCap, whichever is less) and final_q (the beats left
  // are at most cap_q: this burst is the command's last), each next value
  // computed beside the issue from the registers and picked by it. A burst
  // that is not the last takes cap_q beats, so the next cap follows from
  // this one alone: BurstCap past a 4 KiB bound, else the rest of the way
  // to it. An assertion checks both against their definitions.
  logic [6:0]  cap_q, cap_d, cap_cmd, cap_next;
  logic        final_q, final_d, final_cmd, final_next;
  logic [6:0]  to_4k_cmd;                      // 64 - cmd_addr_i's beat in its 4 KiB page
  logic [26:0] left_next;                      // beats_left_q - cap_q: left after a burst not the last
  // The burst's sums split at its 64-beat bound (a burst never crosses
  // 4 KiB, so baddr's low 6 bits + blen <= 64 and blen <= 64): the low part
  // adds blen, the high part picks between itself and a +1 / -1 computed
  // from the registers beside the sizing, so the sizing does not run into a
  // 58-bit or 27-bit carry chain; and the FIFO room from the registers,
  // compared with blen.
  logic [6:0]  baddr_lo_sum;                   // baddr_q[5:0] + blen
  logic [51:0] baddr_hi_inc;                   // baddr_q[57:6] + 1
  logic [7:0]  left_lo_diff;                   // beats_left_q[6:0] - blen, borrow in bit 7
  logic [19:0] left_hi_dec;                    // beats_left_q[26:7] - 1
  // FifoBeats - inflight - FIFO count: never negative, as the credit rule
  // keeps inflight + count <= FifoBeats.
  logic [BeatCntWidth-1:0] free_beats;

  // Outstanding bursts (descriptor ring) and R side.
  logic [DescWidth-1:0]  desc_mem [MaxOutstanding];
  logic [PtrWidth-1:0]   desc_wptr_q, desc_wptr_d, desc_rptr_q, desc_rptr_d;
  logic [CntWidth-1:0]   desc_count_q, desc_count_d;
  logic [57:0]           h_addr;
  logic [7:0]            h_len;
  logic [3:0]            h_lo, h_hi;
  logic                  h_last;
  logic [7:0]            rbeat_q, rbeat_d;           // beat index in the head burst
  logic                  r_end, discard, push, r_bad;
  logic [CntWidth-1:0]   drop_q, drop_d;             // outstanding bursts whose data is dropped
  logic [BeatCntWidth-1:0] inflight_q, inflight_d;   // beats issued, not yet received
  logic                  err_q, err_d;
  logic [63:0]           err_addr_q, err_addr_d;
  logic [1:0]            err_resp_q, err_resp_d;

  // Beat FIFO and output stage.
  logic                    fifo_in_ready, fifo_out_valid;
  logic [FifoWidth-1:0]    fifo_in_data, fifo_out_data;
  logic [BeatCntWidth-1:0] fifo_count;
  logic                    f_last;
  logic [3:0]              f_lo, f_hi;                    // first and last word of the head beat
  logic [ChunkWidth-1:0]   f_lo_item, f_hi_item, cur;
  logic [511:0]            f_data;
  logic                    mid_q, mid_d;                  // the head beat is partly delivered
  logic [ChunkWidth-1:0]   chunk_q, chunk_d;
  logic                    beat_done;

  // ---------------------------------------------------------------------------
  // Burst sizing and issue.
  assign blen = final_q ? beats_left_q[6:0] : cap_q;
  assign free_beats = BeatCntWidth'(FifoBeats) - inflight_q - fifo_count;
  assign room = 32'(blen) <= 32'(free_beats);
  // The next burst's cap and last flag, beside the issue: from the command
  // (cmd_take), or after a burst that is not the last (cap_q beats).
  assign to_4k = 7'd64 - {1'b0, baddr_q[5:0]};
  assign to_4k_cmd = 7'd64 - {1'b0, cmd_addr_i[11:6]};
  assign cap_cmd = (to_4k_cmd < 7'(BurstCap)) ? to_4k_cmd : 7'(BurstCap);
  assign final_cmd = (cmd_beats <= 27'(cap_cmd));
  assign cap_next = (to_4k <= 7'(BurstCap)) ? 7'(BurstCap)
                  : ((to_4k - 7'(BurstCap) < 7'(BurstCap)) ? to_4k - 7'(BurstCap) : 7'(BurstCap));
  assign left_next = beats_left_q - 27'(cap_q);
  assign final_next = (left_next <= 27'(cap_next));
  assign baddr_lo_sum = {1'b0, baddr_q[5:0]} + blen;
  assign baddr_hi_inc = baddr_q[57:6] + 52'd1;
  assign left_lo_diff = {1'b0, beats_left_q[6:0]} - {1'b0, blen};
  assign left_hi_dec = beats_left_q[26:7] - 20'd1;
  assign issue = active_q && (!arvalid_q || m_axi_arready) && (32'(desc_count_q) < MaxOutstanding) &&
                 room && !err_q && !abort_i;

  assign cmd_ready_o = !active_q;
  assign cmd_take = cmd_valid_i && !active_q && !abort_i;
  assign cmd_beats = 27'(({27'b0, cmd_addr_i[5:0]} + {1'b0, cmd_bytes_i} + 33'd63) >> 6);
  assign cmd_end_word = 4'((cmd_addr_i[5:0] + cmd_bytes_i[5:0] - 6'd1) >> 2);

  always_comb begin
    active_d = active_q;
    baddr_d = baddr_q;
    beats_left_d = beats_left_q;
    first_d = first_q;
    lo_d = lo_q;
    hi_d = hi_q;
    last_d = last_q;
    arvalid_d = arvalid_q && !m_axi_arready;
    araddr_d = araddr_q;
    arlen_d = arlen_q;
    cap_d = cap_q;
    final_d = final_q;
    if (cmd_take) begin
      cap_d = cap_cmd;
      final_d = final_cmd;
      active_d = 1'b1;
      baddr_d = cmd_addr_i[63:6];
      beats_left_d = cmd_beats;
      first_d = 1'b1;
      lo_d = cmd_addr_i[5:2];
      hi_d = cmd_end_word;
      last_d = cmd_last_i;
    end
    if (issue) begin
      arvalid_d = 1'b1;
      araddr_d = baddr_q;
      arlen_d = 8'(blen - 7'd1);
      baddr_d = {baddr_lo_sum[6] ? baddr_hi_inc : baddr_q[57:6], baddr_lo_sum[5:0]};        // baddr + blen
      beats_left_d = {left_lo_diff[7] ? left_hi_dec : beats_left_q[26:7], left_lo_diff[6:0]};  // left - blen
      first_d = 1'b0;
      active_d = !final_q;
      cap_d = cap_next;
      final_d = final_next;
    end
    if (abort_i) active_d = 1'b0;
  end

  // ---------------------------------------------------------------------------
  // Descriptor ring (written at issue, read at the head as R beats arrive).
  always_ff @(posedge clk_i) begin
    if (issue) begin
      desc_mem[desc_wptr_q] <= {baddr_q, 8'(blen - 7'd1), first_q ? lo_q : 4'd0,
                                final_q ? hi_q : 4'd15, final_q && last_q};
    end
  end
  assign {h_addr, h_len, h_lo, h_hi, h_last} = desc_mem[desc_rptr_q];

  assign m_axi_rready = 1'b1;  // the credit rule reserved FIFO room for every beat
  assign r_end = m_axi_rvalid && (rbeat_q == h_len);
  assign discard = (drop_q != '0) || err_q || abort_i;
  assign push = m_axi_rvalid && !discard && (m_axi_rresp == 2'b00);
  assign r_bad = m_axi_rvalid && !discard && (m_axi_rresp != 2'b00);
  assign fifo_in_data = {r_end && h_last, (rbeat_q == h_len) ? h_hi : 4'd15,
                         (rbeat_q == 8'd0) ? h_lo : 4'd0, m_axi_rdata};

  always_comb begin
    desc_wptr_d = issue ? next_ptr(desc_wptr_q) : desc_wptr_q;
    desc_rptr_d = r_end ? next_ptr(desc_rptr_q) : desc_rptr_q;
    rbeat_d = rbeat_q;
    if (m_axi_rvalid) rbeat_d = r_end ? 8'd0 : rbeat_q + 8'd1;
    desc_count_d = desc_count_q + CntWidth'(issue) - CntWidth'(r_end);
    // Both sums beside the issue, which picks one (its blen is not on the issue's path).
    inflight_d = issue ? inflight_q + BeatCntWidth'(blen) - BeatCntWidth'(m_axi_rvalid)
                       : inflight_q - BeatCntWidth'(m_axi_rvalid);
    drop_d = drop_q;
    if (abort_i) drop_d = desc_count_q - CntWidth'(r_end);  // nothing issues in the abort cycle
    else if (r_end && drop_q != '0) drop_d = drop_q - 1'b1;
    err_d = err_q;
    err_addr_d = err_addr_q;
    err_resp_d = err_resp_q;
    if (abort_i) begin
      err_d = 1'b0;
    end else if (r_bad) begin
      err_d = 1'b1;
      err_addr_d = {h_addr, 6'b0};
      err_resp_d = m_axi_rresp;
    end
  end

  // ---------------------------------------------------------------------------
  // Beat FIFO (flushed by abort_i) and the item selector at its output.
  prim_fifo #(
    .Width(FifoWidth),
    .Depth(FifoBeats)
  ) u_fifo (
    .clk_i,
    .rst_i      (rst_i || abort_i),
    .in_valid_i (push),
    .in_ready_o (fifo_in_ready),
    .in_data_i  (fifo_in_data),
    .out_valid_o(fifo_out_valid),
    .out_ready_i(out_ready_i && cur == f_hi_item),
    .out_data_o (fifo_out_data),
    .count_o    (fifo_count)
  );

  assign {f_last, f_hi, f_lo, f_data} = fifo_out_data;
  assign f_lo_item = ChunkWidth'(f_lo >> ChunkShift);
  assign f_hi_item = ChunkWidth'(f_hi >> ChunkShift);
  assign cur = mid_q ? chunk_q : f_lo_item;
  assign out_valid_o = fifo_out_valid;
  assign out_last_o = f_last && (cur == f_hi_item);
  assign out_lo_o = (cur == f_lo_item) ? (f_lo & ItemMask) : 4'd0;
  assign out_hi_o = (cur == f_hi_item) ? (f_hi & ItemMask) : ItemMask;
  assign beat_done = out_valid_o && out_ready_i && (cur == f_hi_item);
  if (Chunks == 1) begin : g_beat_out
    assign out_data_o = f_data;
  end else begin : g_item_out
    assign out_data_o = f_data[cur * (OutWords * 32) +: OutWords * 32];
  end

  always_comb begin
    mid_d = mid_q;
    chunk_d = chunk_q;
    if (out_valid_o && out_ready_i) begin
      mid_d = !beat_done;
      chunk_d = cur + 1'b1;
    end
    if (abort_i) mid_d = 1'b0;
  end

  // ---------------------------------------------------------------------------
  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      active_q <= 1'b0;
      arvalid_q <= 1'b0;
      desc_wptr_q <= '0;
      desc_rptr_q <= '0;
      desc_count_q <= '0;
      rbeat_q <= '0;
      drop_q <= '0;
      inflight_q <= '0;
      err_q <= 1'b0;
      mid_q <= 1'b0;
    end else begin
      active_q <= active_d;
      arvalid_q <= arvalid_d;
      desc_wptr_q <= desc_wptr_d;
      desc_rptr_q <= desc_rptr_d;
      desc_count_q <= desc_count_d;
      rbeat_q <= rbeat_d;
      drop_q <= drop_d;
      inflight_q <= inflight_d;
      err_q <= err_d;
      mid_q <= mid_d;
    end
  end

  always_ff @(posedge clk_i) begin
    baddr_q <= baddr_d;
    beats_left_q <= beats_left_d;
    first_q <= first_d;
    lo_q <= lo_d;
    hi_q <= hi_d;
    last_q <= last_d;
    araddr_q <= araddr_d;
    arlen_q <= arlen_d;
    cap_q <= cap_d;
    final_q <= final_d;
    err_addr_q <= err_addr_d;
    err_resp_q <= err_resp_d;
    chunk_q <= chunk_d;
  end

  assign m_axi_arid = IdWidth'(Id);
  assign m_axi_araddr = {araddr_q, 6'b0};
  assign m_axi_arlen = arlen_q;
  assign m_axi_arsize = 3'd6;    // 64 bytes, the full width
  assign m_axi_arburst = 2'b01;  // INCR
  assign m_axi_arvalid = arvalid_q;
  assign err_o = err_q;
  assign err_addr_o = err_addr_q;
  assign err_resp_o = err_resp_q;
  assign idle_o = !active_q && (desc_count_q == '0) && (fifo_count == '0);

`ifndef SYNTHESIS
  initial begin
    if (OutWords != 1 && OutWords != 2 && OutWords != 4 && OutWords != 8 && OutWords != 16)
      $error("dma_reader: OutWords must be 1, 2, 4, 8 or 16");
    if (FifoBeats < 2 || (FifoBeats & (FifoBeats - 1)) != 0)
      $error("dma_reader: FifoBeats must be a power of two >= 2");
    if (MaxBurstBeats < 1 || MaxBurstBeats > 64) $error("dma_reader: MaxBurstBeats must be 1..64 (4 KiB)");
    if (MaxOutstanding < 1) $error("dma_reader: MaxOutstanding must be at least 1");
    if (IdWidth < 1 || IdWidth > 31 || Id >= (1 << IdWidth)) $error("dma_reader: Id does not fit IdWidth");
  end

  logic        ar_stalled_q, out_stalled_q;
  logic [65:0] ar_held_q;
  localparam int unsigned AlignBytes = WordAligned ? 4 : OutWords * 4;
  logic [OutWords*32+8:0] out_held_q;
  always_ff @(posedge clk_i) begin
    ar_stalled_q <= !rst_i && m_axi_arvalid && !m_axi_arready;
    ar_held_q <= {araddr_q, arlen_q};
    out_stalled_q <= !rst_i && !abort_i && out_valid_o && !out_ready_i;
    out_held_q <= {out_last_o, out_lo_o, out_hi_o, out_data_o};
    if (!rst_i) begin
      if (cmd_valid_i && cmd_ready_o) begin
        assert (cmd_bytes_i != '0 && (cmd_bytes_i[5:0] & 6'(AlignBytes - 1)) == '0)
        else $error("dma_reader: cmd_bytes_i must be a non-zero multiple of %0d", AlignBytes);
        assert ((cmd_addr_i[5:0] & 6'(AlignBytes - 1)) == '0)
        else $error("dma_reader: cmd_addr_i must be aligned to %0d bytes", AlignBytes);
      end
      if (m_axi_rvalid) begin
        assert (desc_count_q != '0) else $error("dma_reader: R beat with no burst outstanding");
        assert (m_axi_rid == IdWidth'(Id)) else $error("dma_reader: R beat with a foreign RID");
        assert (m_axi_rlast == (rbeat_q == h_len)) else $error("dma_reader: RLAST does not match ARLEN");
      end
      assert (!push || fifo_in_ready) else $error("dma_reader: beat FIFO overflow (credit rule broken)");
      assert ((!issue || (baddr_d == baddr_q + 58'(blen) && beats_left_d == beats_left_q - 27'(blen))) &&
              room == (32'(inflight_q) + 32'(fifo_count) + 32'(blen) <= FifoBeats))
      else $error("dma_reader: the split burst sums or the room differ from the wide ones");
      // The registered cap and last flag, against their definitions.
      assert (!active_q || (32'(cap_q) == ((32'(to_4k) < BurstCap) ? 32'(to_4k) : BurstCap) &&
                            final_q == (32'(beats_left_q) <= 32'(cap_q))))
      else $error("dma_reader: registered burst cap %0d / last %0d differ from the address and beats left",
                  cap_q, final_q);
      assert (32'(desc_count_q) <= MaxOutstanding) else $error("dma_reader: descriptor ring overflow");
      assert (!ar_stalled_q || (m_axi_arvalid && {araddr_q, arlen_q} == ar_held_q))
      else $error("dma_reader: AR dropped or changed while stalled");
      assert (!out_stalled_q || (out_valid_o && {out_last_o, out_lo_o, out_hi_o, out_data_o} == out_held_q))
      else $error("dma_reader: output dropped or changed while stalled");
    end
  end
`endif

endmodule

`default_nettype wire
