// Table of the sigmoid / tanh unit with two read ports (two lookups a cycle,
// each port with its own enable): port p returns for knot k = addr_i[p] the
// word {DELTA, YE} (act_pkg: YE = Y[k + k%2], DELTA = Y[k | 1] - YE, Q1.31)
// one cycle later and holds it while its enable is low.
// Storage: Y only, from rtl/act/act_lut_data_pkg.sv (tools/act_lut_gen), in an
// even bank (Y[0], Y[2], ...) and an odd bank (Y[1], Y[3], ...) of 2048 words:
// a lookup reads the even knot k + k%2 and the odd knot k | 1, one from each
// bank. An even word is Y_LOW = (Y - 2^30) mod 2^27, an odd word only its low
// 23 bits (all that DELTA needs); the top bits of YE come from the even knot's
// index (its segment, a count of the package's SEG_START thresholds):
//   YE    = 2^30 + 2^27 * seg + Y_LOW[k + k%2]
//   DELTA = (Y_LOW[k | 1] - Y_LOW[k + k%2]) mod 2^23, as a signed number
//           (exact: |DELTA| = D < 2^22)
// For k = 4095 the even knot is 4096 (YE = 2^31, segment 8): the even bank's
// address wraps to 0, and Y_LOW[0] = 0 is also Y_LOW[4096] (Y[0] = 2^30 and
// Y[4096] = 2^31 are multiples of 2^27; checked at elaboration).
// Each bank is one true dual-port ROM without reset (2048 x 27 and 2048 x 23:
// three RAMB18E2 as 2K x 9 each on UltraScale+), so the table takes 3 RAMB36.
// Latency: 1 cycle. Throughput: two reads per cycle.
`default_nettype none

module act_lut_rom (
  input  logic                                                   clk_i,
  input  logic [act_pkg::LUT_PORTS-1:0]                          en_i,
  input  logic [act_pkg::LUT_PORTS*act_pkg::LUT_ADDR_WIDTH-1:0] addr_i,
  output logic [act_pkg::LUT_PORTS*act_pkg::LUT_WIDTH-1:0]      data_o
);

  localparam int unsigned NumPorts = act_pkg::LUT_PORTS;
  localparam int unsigned KWidth = act_pkg::LUT_ADDR_WIDTH;  // knot index
  localparam int unsigned BankAddrWidth = KWidth - 1;
  localparam int unsigned BankDepth = act_pkg::LUT_DEPTH / 2;
  localparam int unsigned LowWidth = act_lut_data_pkg::LOW_WIDTH;
  localparam int unsigned NumSegStarts = act_lut_data_pkg::NUM_SEG_STARTS;
  localparam int unsigned TopWidth = act_pkg::LUT_Y_WIDTH - LowWidth;  // YE >> 27
  localparam int unsigned DeltaWidth = act_pkg::LUT_DELTA_WIDTH;

  (* rom_style = "block" *) logic [LowWidth-1:0] even_rom [BankDepth];
  (* rom_style = "block" *) logic [DeltaWidth-1:0] odd_rom [BankDepth];

  initial begin
    for (int i = 0; i < BankDepth; i++) begin
      even_rom[i] = act_lut_data_pkg::Y_LOW[(2 * i) * LowWidth +: LowWidth];
      odd_rom[i]  = act_lut_data_pkg::Y_LOW[(2 * i + 1) * LowWidth +: DeltaWidth];
    end
  end

  // The smallest knot k whose even knot k + k%2 is at or above start S:
  // S itself when S is odd (or 0), S - 1 when S is even.
  function automatic logic [KWidth-1:0] seg_knot(input logic [KWidth-1:0] start);
    seg_knot = (start[0] || start == '0) ? start : start - 1'b1;
  endfunction

  for (genvar p = 0; p < NumPorts; p++) begin : g_port
    // Bank addresses: the odd knot k | 1 is odd word k >> 1, the even knot
    // k + k%2 is even word (k + 1) >> 1, taken mod 2048 (knot 4096 reads
    // word 0, see above).
    logic [KWidth-1:0]        k;
    logic [BankAddrWidth-1:0] ea;
    logic [TopWidth-1:0]   top_d, top_q;
    logic [LowWidth-1:0]   even_q;
    logic [DeltaWidth-1:0] odd_q, delta;

    assign k  = addr_i[p*KWidth +: KWidth];
    assign ea = k[KWidth-1:1] + BankAddrWidth'(k[0]);

    // YE >> 27 = 8 + segment of the even knot (8 + 8 = 16 for knot 4096).
    // k + k%2 >= S exactly when k >= seg_knot(S) (no adder on the
    // way), and the starts ascend, so the last start reached is the segment.
    always_comb begin
      top_d = TopWidth'(8);
      for (int j = 0; j < NumSegStarts; j++) begin
        if (k >= seg_knot(act_lut_data_pkg::SEG_START[j*KWidth +: KWidth])) top_d = TopWidth'(9 + j);
      end
      if (k == '1) top_d = TopWidth'(16);
      if (!en_i[p]) top_d = top_q;
    end
    always_ff @(posedge clk_i) begin
      top_q <= top_d;
    end

    // Block-RAM read template: the enable is the port's read enable.
    always_ff @(posedge clk_i) begin
      if (en_i[p]) even_q <= even_rom[ea];
    end
    always_ff @(posedge clk_i) begin
      if (en_i[p]) odd_q <= odd_rom[k[KWidth-1:1]];
    end

    assign delta = odd_q - even_q[DeltaWidth-1:0];
    assign data_o[p*act_pkg::LUT_WIDTH +: act_pkg::LUT_WIDTH] = {delta, top_q, even_q};
  end

`ifndef SYNTHESIS
  initial begin
    if (act_pkg::LUT_DEPTH != (1 << act_pkg::LUT_ADDR_WIDTH)) begin
      $error("act_lut_rom: LUT_DEPTH must be 2^LUT_ADDR_WIDTH");
    end
    if (TopWidth != 5 || NumSegStarts != 7) begin
      $error("act_lut_rom: YE = {8 + segment (5 bits), Y_LOW (27 bits)} with 7 segment starts");
    end
    if (LowWidth < DeltaWidth) $error("act_lut_rom: Y_LOW narrower than DELTA");
    for (int j = 1; j < NumSegStarts; j++) begin
      if (act_lut_data_pkg::SEG_START[j*KWidth +: KWidth] <=
          act_lut_data_pkg::SEG_START[(j-1)*KWidth +: KWidth]) begin
        $error("act_lut_rom: SEG_START must ascend (the segment is the last start reached)");
      end
    end
    if (act_lut_data_pkg::Y_LOW[LowWidth-1:0] != '0) begin
      $error("act_lut_rom: Y_LOW[0] must be 0 (it stands in for Y_LOW[4096])");
    end
  end
`endif

endmodule

`default_nettype wire
