// Gate-store adapter: the engine's in-order request/response memory port
// (one 256-bit record per request, writes answered too) onto the AXI4 "card"
// master (512-bit data). A record is half of a 64-byte beat, and records go
// two to a beat where the engine's order allows: a write of a beat's low half
// waits up to HoldCycles for the write of its high half and both leave as
// one full beat; a read of the beat the previous read fetched takes its half
// of that beat (BACKWARD reads records high half first). Otherwise a request
// is a single-beat burst at addr & ~63 (writes strobe the half addr[5] names;
// reads keep that half). Up to MaxOutstanding requests are in flight; their
// responses return to the engine in request order, reads and writes mixed
// (AXI orders neither against the other, so an order FIFO restores it).
// Read data is only requested when its response buffer has room, so R is
// always ready; B is always ready.
// A non-OKAY response still answers the engine (data as received) and sets
// err_o with the record's address (sticky until rst_i or flush_i): the shell
// aborts the command. flush_i (the shell's soft reset, while the engine is held in
// reset) stops new requests and drops the responses of those in flight;
// idle_o says nothing is outstanding, so the engine's reset contract holds
// (no response to an old request arrives after its reset).
// Latency: request to AR/AW 1 cycle (a lone low-half write: HoldCycles more);
// response to the engine 2 cycles after R/B. Throughput: one request per cycle.
`default_nettype none

module store_axi #(
  parameter int unsigned AddrWidth      = 40,
  parameter int unsigned IdWidth        = 4,
  parameter int unsigned MaxOutstanding = 32
) (
  input  logic                   clk_i,
  input  logic                   rst_i,
  input  logic                   flush_i,
  output logic                   idle_o,
  // Engine gate-store port.
  input  logic                   req_valid_i,
  output logic                   req_ready_o,
  input  logic                   req_write_i,
  input  logic [AddrWidth-1:0]   req_addr_i,
  input  logic [255:0]           req_data_i,
  output logic                   rsp_valid_o,
  input  logic                   rsp_ready_i,
  output logic [255:0]           rsp_data_o,
  // Errors (first non-OKAY response).
  output logic                   err_o,
  output logic [AddrWidth-1:0]   err_addr_o,
  output logic [1:0]             err_resp_o,
  output logic                   err_write_o,
  // AXI4 master.
  output logic [IdWidth-1:0]     m_axi_awid,
  output logic [AddrWidth-1:0]   m_axi_awaddr,
  output logic [7:0]             m_axi_awlen,
  output logic [2:0]             m_axi_awsize,
  output logic [1:0]             m_axi_awburst,
  output logic                   m_axi_awvalid,
  input  logic                   m_axi_awready,
  output logic [511:0]           m_axi_wdata,
  output logic [63:0]            m_axi_wstrb,
  output logic                   m_axi_wlast,
  output logic                   m_axi_wvalid,
  input  logic                   m_axi_wready,
  input  logic [IdWidth-1:0]     m_axi_bid,
  input  logic [1:0]             m_axi_bresp,
  input  logic                   m_axi_bvalid,
  output logic                   m_axi_bready,
  output logic [IdWidth-1:0]     m_axi_arid,
  output logic [AddrWidth-1:0]   m_axi_araddr,
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

  localparam int unsigned OW = $clog2(MaxOutstanding + 1);
  // Order entry: write flag, high half flag, shares the previous entry's beat, record address.
  localparam int unsigned OrdWidth = 3 + AddrWidth;
  // Cycles a low-half write waits in the request register for its partner.
  localparam int unsigned HoldCycles = 8;
  localparam int unsigned AB = AddrWidth - 6;  // beat address bits

  // ------------------------------------------------------------ request side
  // One request register for the beat being issued: a write needs both AW
  // and W, which may be taken in different cycles; a read needs AR.
  logic                 pend_q, pend_d, pend_write_q, pend_write_d;
  logic                 aw_done_q, aw_done_d, w_done_q, w_done_d;
  logic [AddrWidth-1:0] pend_addr_q, pend_addr_d;
  logic [1:0]           pend_strb_q, pend_strb_d;   // the halves a write stores
  logic [511:0]         pend_data_q;
  logic [3:0]           hold_q, hold_d;             // a low-half write waits while > 0
  logic                 hold_nz_q, hold_nz_d;       // hold_q != 0: a lone low-half write waits (registered)
  logic                 prev_rd_q, prev_rd_d;       // the last request taken was a read that issued an AR
  logic [AB-1:0]        prev_beat_q, prev_beat_d;   // and this was its beat
  logic [OW-1:0]        outst_q, outst_d;      // requests taken, response not yet given
  logic [OW-1:0]        rd_credit_q, rd_credit_d;  // free read-data buffer entries not yet claimed
  logic                 take, issued, ord_ready, ord_valid, release_w, pairs, shares, room;
  logic [OrdWidth-1:0]  ord_head;
  logic [$clog2(MaxOutstanding + 2)-1:0] unused_ord_count;

  // Pairing: a write to the high half of the beat whose low half waits in
  // the register joins it (one full beat); a read of the beat the previous
  // read fetched shares its data (no second AR). The shared entry answers
  // with its partner's response.
  // A hold runs only while the register holds a lone low-half write (a
  // write's low half alone starts it; issuing or pairing ends it), so its
  // registered flag stands for that whole condition (asserted below).
  assign pairs  = hold_nz_q && req_write_i && req_addr_i[5] &&
                  (req_addr_i[AddrWidth-1:6] == pend_addr_q[AddrWidth-1:6]);
  assign shares = !req_write_i && prev_rd_q && (req_addr_i[AddrWidth-1:6] == prev_beat_q);
  // A lone low-half write goes once its hold is over or another request needs the register.
  assign release_w = !hold_nz_q || (req_valid_i && !pairs && !shares);
  assign issued = pend_q && (pend_write_q ? ((aw_done_q || m_axi_awready) && (w_done_q || m_axi_wready) &&
                                             release_w)
                                          : m_axi_arready);
  assign room = !flush_i && ord_ready && (outst_q < OW'(MaxOutstanding));
  assign req_ready_o = room && (pairs || shares || ((!pend_q || issued) && (req_write_i || rd_credit_q != 0)));
  assign take = req_valid_i && req_ready_o;

  assign m_axi_awid    = '0;
  assign m_axi_awaddr  = {pend_addr_q[AddrWidth-1:6], 6'd0};
  assign m_axi_awlen   = 8'd0;
  assign m_axi_awsize  = 3'd6;
  assign m_axi_awburst = 2'b01;
  assign m_axi_awvalid = pend_q && pend_write_q && !aw_done_q && release_w;
  assign m_axi_wdata   = pend_data_q;
  assign m_axi_wstrb   = {{32{pend_strb_q[1]}}, {32{pend_strb_q[0]}}};
  assign m_axi_wlast   = 1'b1;
  assign m_axi_wvalid  = pend_q && pend_write_q && !w_done_q && release_w;
  assign m_axi_arid    = '0;
  assign m_axi_araddr  = {pend_addr_q[AddrWidth-1:6], 6'd0};
  assign m_axi_arlen   = 8'd0;
  assign m_axi_arsize  = 3'd6;
  assign m_axi_arburst = 2'b01;
  assign m_axi_arvalid = pend_q && !pend_write_q;

  always_comb begin
    pend_d       = pend_q;
    pend_write_d = pend_write_q;
    pend_addr_d  = pend_addr_q;
    pend_strb_d  = pend_strb_q;
    aw_done_d    = aw_done_q || (m_axi_awvalid && m_axi_awready);
    w_done_d     = w_done_q || (m_axi_wvalid && m_axi_wready);
    // Once released it stays released (AW/W valid must hold until taken).
    hold_d       = (release_w || !hold_nz_q) ? 4'd0 : hold_q - 4'd1;
    hold_nz_d    = !release_w && hold_nz_q && (hold_q != 4'd1);
    prev_rd_d    = prev_rd_q;
    prev_beat_d  = prev_beat_q;
    if (issued) begin
      pend_d    = 1'b0;
      aw_done_d = 1'b0;
      w_done_d  = 1'b0;
    end
    if (take && pairs) begin
      pend_strb_d = 2'b11;
      hold_d      = 4'd0;
      hold_nz_d   = 1'b0;
    end else if (take && !shares) begin
      pend_d       = 1'b1;
      pend_write_d = req_write_i;
      pend_addr_d  = req_addr_i;
      pend_strb_d  = req_addr_i[5] ? 2'b10 : 2'b01;
      hold_d       = (req_write_i && !req_addr_i[5]) ? 4'(HoldCycles) : 4'd0;
      hold_nz_d    = req_write_i && !req_addr_i[5];
    end
    if (take) begin
      prev_rd_d   = !req_write_i && !shares;
      prev_beat_d = req_addr_i[AddrWidth-1:6];
    end
    if (flush_i) prev_rd_d = 1'b0;
  end

  // Order FIFO: one entry per request taken, popped when its response leaves.
  logic rsp_fire;
  prim_fifo #(
    .Width(OrdWidth),
    .Depth(MaxOutstanding)
  ) u_order (
    .clk_i,
    .rst_i,
    .in_valid_i (take),
    .in_ready_o (ord_ready),
    .in_data_i  ({req_write_i, req_addr_i[5], pairs || shares, req_addr_i}),
    .out_valid_o(ord_valid),
    .out_ready_i(rsp_fire),
    .out_data_o (ord_head),
    .count_o    (unused_ord_count)
  );

  // ----------------------------------------------------------- response side
  // Read data buffer (R is always ready: a read is only issued with a credit).
  logic         rbuf_valid, rbuf_pop, unused_rbuf_ready;
  logic [513:0] rbuf_data;
  logic [$clog2(MaxOutstanding + 2)-1:0] unused_rbuf_count;
  prim_fifo #(
    .Width(514),
    .Depth(MaxOutstanding)
  ) u_rbuf (
    .clk_i,
    .rst_i,
    .in_valid_i (m_axi_rvalid),
    .in_ready_o (unused_rbuf_ready),
    .in_data_i  ({m_axi_rresp, m_axi_rdata}),
    .out_valid_o(rbuf_valid),
    .out_ready_i(rbuf_pop),
    .out_data_o (rbuf_data),
    .count_o    (unused_rbuf_count)
  );
  assign m_axi_rready = 1'b1;
  assign m_axi_bready = 1'b1;

  // Write responses (one ID: they return in issue order), matched in turn
  // with the write entries of the order FIFO that issued a beat.
  logic       bbuf_valid, bbuf_pop, unused_bbuf_ready;
  logic [1:0] bbuf_resp;
  logic [$clog2(MaxOutstanding + 2)-1:0] unused_bbuf_count;
  prim_fifo #(
    .Width(2),
    .Depth(MaxOutstanding)
  ) u_bbuf (
    .clk_i,
    .rst_i,
    .in_valid_i (m_axi_bvalid),
    .in_ready_o (unused_bbuf_ready),
    .in_data_i  (m_axi_bresp),
    .out_valid_o(bbuf_valid),
    .out_ready_i(bbuf_pop),
    .out_data_o (bbuf_resp),
    .count_o    (unused_bbuf_count)
  );

  // The beat (and response) the last entry that issued one received, for the entry sharing it.
  logic [513:0] last_rd_q;
  logic [1:0]   last_b_q;

  logic                 head_write, head_high, head_shared, head_ready;
  logic [AddrWidth-1:0] head_addr;
  logic [513:0]         head_beat;
  assign head_write  = ord_head[OrdWidth-1];
  assign head_high   = ord_head[OrdWidth-2];
  assign head_shared = ord_head[OrdWidth-3];
  assign head_addr   = ord_head[AddrWidth-1:0];
  assign head_ready  = ord_valid && (head_shared || (head_write ? bbuf_valid : rbuf_valid));
  // During a flush responses are consumed without reaching the engine.
  assign rsp_valid_o = head_ready && !flush_i;
  assign rsp_fire    = head_ready && (flush_i || rsp_ready_i);
  assign rbuf_pop    = rsp_fire && !head_write && !head_shared;
  assign bbuf_pop    = rsp_fire && head_write && !head_shared;
  assign head_beat   = head_shared ? last_rd_q : rbuf_data;
  assign rsp_data_o  = head_high ? head_beat[511:256] : head_beat[255:0];

  logic [1:0] head_resp;
  assign head_resp = head_write ? (head_shared ? last_b_q : bbuf_resp) : head_beat[513:512];

  logic                 err_q, err_d;
  logic [AddrWidth-1:0] err_addr_q, err_addr_d;
  logic [1:0]           err_resp_q, err_resp_d;
  logic                 err_write_q, err_write_d;

  always_comb begin
    outst_d     = outst_q + OW'(take) - OW'(rsp_fire);
    rd_credit_d = rd_credit_q - OW'(take && !req_write_i && !shares) + OW'(rbuf_pop);
    err_d       = err_q;
    err_addr_d  = err_addr_q;
    err_resp_d  = err_resp_q;
    err_write_d = err_write_q;
    if (flush_i) err_d = 1'b0;  // a soft reset clears it
    if (rsp_fire && head_resp != 2'b00 && !err_q && !flush_i) begin
      err_d      = 1'b1;
      err_addr_d = head_addr;
      err_resp_d = head_resp;
      err_write_d = head_write;
    end
  end

  assign idle_o     = (outst_q == 0) && !pend_q;
  assign err_o      = err_q;
  assign err_addr_o = err_addr_q;
  assign err_resp_o = err_resp_q;
  assign err_write_o = err_write_q;

  logic [IdWidth-1:0] unused_ids;
  logic               unused_rlast;
  assign unused_ids   = m_axi_bid ^ m_axi_rid;
  assign unused_rlast = m_axi_rlast;

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      pend_q        <= 1'b0;
      aw_done_q     <= 1'b0;
      w_done_q      <= 1'b0;
      hold_q        <= '0;
      hold_nz_q     <= 1'b0;
      prev_rd_q     <= 1'b0;
      outst_q       <= '0;
      rd_credit_q   <= OW'(MaxOutstanding);
      err_q         <= 1'b0;
    end else begin
      pend_q        <= pend_d;
      aw_done_q     <= aw_done_d;
      w_done_q      <= w_done_d;
      hold_q        <= hold_d;
      hold_nz_q     <= hold_nz_d;
      prev_rd_q     <= prev_rd_d;
      outst_q       <= outst_d;
      rd_credit_q   <= rd_credit_d;
      err_q         <= err_d;
    end
    pend_write_q <= pend_write_d;
    pend_addr_q  <= pend_addr_d;
    pend_strb_q  <= pend_strb_d;
    prev_beat_q  <= prev_beat_d;
    err_addr_q   <= err_addr_d;
    err_resp_q   <= err_resp_d;
    err_write_q  <= err_write_d;
    if (take && pairs) pend_data_q[511:256] <= req_data_i;
    if (take && !pairs && !shares) pend_data_q <= {req_data_i, req_data_i};
    if (rbuf_pop) last_rd_q <= rbuf_data;
    if (bbuf_pop) last_b_q <= bbuf_resp;
  end

`ifndef SYNTHESIS
  initial begin
    if (MaxOutstanding < 2) $error("store_axi: MaxOutstanding must be >= 2");
    if (AddrWidth < 7) $error("store_axi: AddrWidth must hold a 64-byte beat address");
  end
  // R is always ready: the buffer must have room for every beat that arrives.
  always_ff @(posedge clk_i) begin
    if (!rst_i && m_axi_rvalid) assert (unused_rbuf_ready) else $error("store_axi: read buffer overflow");
    if (!rst_i && m_axi_bvalid) assert (unused_bbuf_ready) else $error("store_axi: write response buffer overflow");
    if (!rst_i) assert (hold_nz_q == (hold_q != 0) && (!hold_nz_q || (pend_q && pend_write_q && pend_strb_q == 2'b01)))
      else $error("store_axi: the hold flag differs from the hold count or from a lone low-half write");
  end
`endif

endmodule

`default_nettype wire
