// unit_gather: repacks the items of a word-aligned dma_reader (4 words on the
// beat's grid, words in_lo_i..in_hi_i belong to the stream) into units of
// size_i words (1..4), one unit a beat: word j of the unit in lane j
// (bits 32j+31:32j), lanes at and above size_i zero. The per-step reader of
// farnn_core uses it to hand the engine an LSTM unit (4 gate words) or a GRU
// unit (3) a cycle from chunks at any 4-byte address, and dh a word a beat.
// out_last_o goes with the unit that holds the word of an item marked
// in_last_i; the streams it serves carry whole units per command (the
// descriptor validation sizes them), so that word ends a unit (asserted).
// size_i must not change while words are held (it follows the run unit's
// command, which starts on an empty gather).
// Buffer: 12 words; an item is taken while at most 8 are held, so one unit a
// cycle keeps flowing at every size as long as items come one a cycle.
// Latency: an item's words are in a unit the cycle after it is taken.
// abort_i drops what is held (an item handed over in its cycle included).
// idle_o: no word is held.
`default_nettype none

module unit_gather (
  input  logic         clk_i,
  input  logic         rst_i,
  input  logic         abort_i,
  input  logic [2:0]   size_i,      // words a unit: 1..4
  input  logic         in_valid_i,
  output logic         in_ready_o,
  input  logic [127:0] in_data_i,
  input  logic [1:0]   in_lo_i,     // first word of the item in the stream
  input  logic [1:0]   in_hi_i,     // last word of the item in the stream
  input  logic         in_last_i,
  output logic         out_valid_o,
  input  logic         out_ready_i,
  output logic [127:0] out_data_o,
  output logic         out_last_o,
  output logic         idle_o
);

  localparam int unsigned Depth = 12;

  logic [31:0] buf_q [Depth];
  logic [31:0] buf_d [Depth];
  logic [Depth-1:0] lst_q, lst_d;  // the word ends a stream
  logic [3:0]  count_q, count_d;  // words held, from buf_q[0]
  logic        in_take, out_take;
  logic [3:0]  rest;               // words kept after the unit leaves
  logic [3:0]  cms_q, cms_d;       // count_q - size_i (exact while words are held)
  logic [2:0]  n_item;             // words of the offered item: in_hi_i - in_lo_i + 1
  logic [2:0]  n_in;               // words the item brings (0 when not taken)
  logic [Depth-1:0] keep;          // word i keeps a held word (i < rest)
  logic [Depth-1:0] take;          // word i takes an item word (rest <= i < rest + n_item)
  logic [Depth-1:0] ends;          // ... the item's last word
  logic [1:0]  pick [Depth];       // the stream word word i takes: in_lo_i + i - rest (mod 4)

  assign in_ready_o = (count_q <= 4'd8);
  assign idle_o = (count_q == 4'd0);
  assign in_take = in_valid_i && in_ready_o;
  assign out_valid_o = ({1'b0, size_i} <= count_q);
  assign out_take = out_valid_o && out_ready_i;
  assign n_item = 3'({1'b0, in_hi_i} - {1'b0, in_lo_i} + 3'd1);
  assign n_in = in_take ? n_item : 3'd0;
  // rest is count_q or, when a unit leaves, cms_q (a register, not a
  // subtraction behind the unit's handshake): the word positions below are
  // compares of registers with constants, chosen by out_take at the end.
  assign rest = out_take ? cms_q : count_q;

  always_comb begin
    for (int j = 0; j < 4; j++) begin
      out_data_o[j*32 +: 32] = (3'(j) < size_i) ? buf_q[j] : 32'd0;
    end
    out_last_o = lst_q[{1'b0, size_i - 3'd1}];
  end

  // Word i keeps word i (or, when a unit leaves, word i + size_i) below
  // `rest` and takes item word i - rest (stream word in_lo_i + i - rest)
  // from there on, while the item has it.
  always_comb begin
    for (int i = 0; i < Depth; i++) begin
      keep[i] = out_take ? (4'(i) < cms_q) : (4'(i) < count_q);
      // i - rest as the low bits of two differences of registers, picked by
      // the handshake; take and ends from compares with constants.
      pick[i] = in_lo_i + (out_take ? 2'(4'(i) - cms_q) : 2'(4'(i) - count_q));
      take[i] = 1'b0;
      ends[i] = 1'b0;
      for (int m = 0; m < 4; m++) begin
        if (i >= m && (out_take ? (cms_q == 4'(i - m)) : (count_q == 4'(i - m)))) begin
          take[i] = (3'(m) < n_item);
          ends[i] = (3'(m) + 3'd1 == n_item);
        end
      end
    end
    for (int i = 0; i < Depth; i++) begin
      buf_d[i] = buf_q[i];
      lst_d[i] = 1'b0;
      if (keep[i]) begin
        if (out_take) begin
          for (int s = 1; s <= 4; s++) begin
            if (i + s < Depth && size_i == 3'(s)) begin
              buf_d[i] = buf_q[(i + s < Depth) ? i + s : i];
              lst_d[i] = lst_q[(i + s < Depth) ? i + s : i];
            end
          end
        end else begin
          lst_d[i] = lst_q[i];
        end
      end else if (in_take && take[i]) begin
        buf_d[i] = in_data_i[pick[i]*32 +: 32];
        lst_d[i] = in_last_i && ends[i];
      end
    end
    count_d = rest + {1'b0, n_in};
    cms_d = rest - {1'b0, size_i} + {1'b0, n_in};
    if (abort_i) begin
      count_d = '0;
      lst_d = '0;
    end
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      count_q <= '0;
      lst_q <= '0;
    end else begin
      count_q <= count_d;
      lst_q <= lst_d;
    end
  end
  always_ff @(posedge clk_i) cms_q <= cms_d;

  always_ff @(posedge clk_i) begin
    for (int i = 0; i < Depth; i++) buf_q[i] <= buf_d[i];
  end

`ifndef SYNTHESIS
  logic [2:0] size_q;
  always_ff @(posedge clk_i) size_q <= size_i;
  always_ff @(posedge clk_i) begin
    if (!rst_i && !abort_i) begin
      if (in_take || out_valid_o) begin
        assert (size_i >= 3'd1 && size_i <= 3'd4) else $error("unit_gather: size_i must be 1..4");
      end
      if (in_take) begin
        assert (in_lo_i <= in_hi_i) else $error("unit_gather: item with in_lo_i above in_hi_i");
      end
      assert (count_d <= 4'(Depth)) else $error("unit_gather: buffer overflow");
      assert (count_q == '0 || size_i == size_q) else $error("unit_gather: size_i changed with words held");
      assert (count_q == '0 || cms_q == count_q - {1'b0, size_i})
        else $error("unit_gather: cms_q is not count_q - size_i with words held");
      if (out_take) begin
        for (int j = 0; j < 3; j++) begin
          if (3'(j) + 3'd1 < size_i) begin
            assert (!lst_q[j]) else $error("unit_gather: a stream's last word does not end a unit");
          end
        end
      end
    end
  end
`endif

endmodule

`default_nettype wire
