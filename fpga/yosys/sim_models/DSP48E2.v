// Behavioural simulation model of the UltraScale+ DSP48E2 slice, written for
// the FARNN post-synthesis equivalence check (fpga/yosys/eqcheck.py). Yosys
// 0.23 ships no simulation model for DSP48E2, so the netlist it writes can
// only be simulated with a model of our own.
//
// Scope: the subset Yosys 0.23 (mul2dsp + xilinx_dsp) can produce, following
// UG579 (UltraScale Architecture DSP Slice):
//   - A/B direct or cascade inputs, AREG/BREG 0..2, ACASCREG/BCASCREG,
//     CREG, DREG, ADREG, MREG, PREG, INMODEREG, OPMODEREG, CARRYINSELREG,
//     ALUMODEREG, CARRYINREG, each with its clock enable and synchronous
//     reset (reset wins over the enable);
//   - pre-adder (D +/- A, INMODE[3:1]), AMULTSEL / BMULTSEL, PREADDINSEL "A";
//   - 27x18 signed multiplier; X/Y/Z/W multiplexers (all OPMODE codes);
//   - ALUMODE 0000, 0001, 0010, 0011 (the arithmetic modes), USE_SIMD ONE48;
//   - CARRYINSEL 000 (CARRYIN) and 010 (CARRYCASCIN);
//   - outputs P, PCOUT, ACOUT, BCOUT.
// Anything outside the subset (pattern detector, SIMD, logic ALU modes,
// INMODE[0]/[4] = 1, inverted pins, ...) stops the simulation with $fatal,
// so the check can never pass by modelling something it does not know.
// eqcheck.py also refuses netlists that use other outputs (CARRYOUT, ...).
`timescale 1ns/1ps
module DSP48E2 (
  output [29:0] ACOUT,
  output [17:0] BCOUT,
  output        CARRYCASCOUT,
  output [3:0]  CARRYOUT,
  output        MULTSIGNOUT,
  output        OVERFLOW,
  output [47:0] P,
  output        PATTERNBDETECT,
  output        PATTERNDETECT,
  output [47:0] PCOUT,
  output        UNDERFLOW,
  output [7:0]  XOROUT,
  input  [29:0] A,
  input  [29:0] ACIN,
  input  [3:0]  ALUMODE,
  input  [17:0] B,
  input  [17:0] BCIN,
  input  [47:0] C,
  input         CARRYCASCIN,
  input         CARRYIN,
  input  [2:0]  CARRYINSEL,
  input         CEA1,
  input         CEA2,
  input         CEAD,
  input         CEALUMODE,
  input         CEB1,
  input         CEB2,
  input         CEC,
  input         CECARRYIN,
  input         CECTRL,
  input         CED,
  input         CEINMODE,
  input         CEM,
  input         CEP,
  input         CLK,
  input  [26:0] D,
  input  [4:0]  INMODE,
  input         MULTSIGNIN,
  input  [8:0]  OPMODE,
  input  [47:0] PCIN,
  input         RSTA,
  input         RSTALLCARRYIN,
  input         RSTALUMODE,
  input         RSTB,
  input         RSTC,
  input         RSTCTRL,
  input         RSTD,
  input         RSTINMODE,
  input         RSTM,
  input         RSTP
);
  parameter integer ACASCREG = 1;
  parameter integer ADREG = 1;
  parameter integer ALUMODEREG = 1;
  parameter AMULTSEL = "A";
  parameter integer AREG = 1;
  parameter AUTORESET_PATDET = "NO_RESET";
  parameter AUTORESET_PRIORITY = "RESET";
  parameter A_INPUT = "DIRECT";
  parameter integer BCASCREG = 1;
  parameter BMULTSEL = "B";
  parameter integer BREG = 1;
  parameter B_INPUT = "DIRECT";
  parameter integer CARRYINREG = 1;
  parameter integer CARRYINSELREG = 1;
  parameter integer CREG = 1;
  parameter integer DREG = 1;
  parameter integer INMODEREG = 1;
  parameter [3:0] IS_ALUMODE_INVERTED = 4'b0000;
  parameter [0:0] IS_CARRYIN_INVERTED = 1'b0;
  parameter [0:0] IS_CLK_INVERTED = 1'b0;
  parameter [4:0] IS_INMODE_INVERTED = 5'b00000;
  parameter [8:0] IS_OPMODE_INVERTED = 9'b000000000;
  parameter [0:0] IS_RSTALLCARRYIN_INVERTED = 1'b0;
  parameter [0:0] IS_RSTALUMODE_INVERTED = 1'b0;
  parameter [0:0] IS_RSTA_INVERTED = 1'b0;
  parameter [0:0] IS_RSTB_INVERTED = 1'b0;
  parameter [0:0] IS_RSTCTRL_INVERTED = 1'b0;
  parameter [0:0] IS_RSTC_INVERTED = 1'b0;
  parameter [0:0] IS_RSTD_INVERTED = 1'b0;
  parameter [0:0] IS_RSTINMODE_INVERTED = 1'b0;
  parameter [0:0] IS_RSTM_INVERTED = 1'b0;
  parameter [0:0] IS_RSTP_INVERTED = 1'b0;
  parameter [47:0] MASK = 48'h3FFFFFFFFFFF;
  parameter integer MREG = 1;
  parameter integer OPMODEREG = 1;
  parameter [47:0] PATTERN = 48'h000000000000;
  parameter PREADDINSEL = "A";
  parameter integer PREG = 1;
  parameter [47:0] RND = 48'h000000000000;
  parameter SEL_MASK = "MASK";
  parameter SEL_PATTERN = "PATTERN";
  parameter USE_MULT = "MULTIPLY";
  parameter USE_PATTERN_DETECT = "NO_PATDET";
  parameter USE_SIMD = "ONE48";
  parameter USE_WIDEXOR = "FALSE";
  parameter XORSIMD = "XOR24_48_96";

  // ---------------------------------------------------------------- scope
  initial begin
    if (IS_ALUMODE_INVERTED != 0 || IS_CARRYIN_INVERTED != 0 || IS_CLK_INVERTED != 0 ||
        IS_INMODE_INVERTED != 0 || IS_OPMODE_INVERTED != 0 || IS_RSTALLCARRYIN_INVERTED != 0 ||
        IS_RSTALUMODE_INVERTED != 0 || IS_RSTA_INVERTED != 0 || IS_RSTB_INVERTED != 0 ||
        IS_RSTCTRL_INVERTED != 0 || IS_RSTC_INVERTED != 0 || IS_RSTD_INVERTED != 0 ||
        IS_RSTINMODE_INVERTED != 0 || IS_RSTM_INVERTED != 0 || IS_RSTP_INVERTED != 0)
      $fatal(1, "DSP48E2 model: inverted pins are not modelled (%m)");
    if (USE_SIMD != "ONE48") $fatal(1, "DSP48E2 model: USE_SIMD %s not modelled (%m)", USE_SIMD);
    if (USE_PATTERN_DETECT != "NO_PATDET") $fatal(1, "DSP48E2 model: pattern detector not modelled (%m)");
    if (USE_WIDEXOR != "FALSE") $fatal(1, "DSP48E2 model: wide XOR not modelled (%m)");
    if (PREADDINSEL != "A") $fatal(1, "DSP48E2 model: PREADDINSEL %s not modelled (%m)", PREADDINSEL);
    if (AREG > 2 || BREG > 2 || CREG > 1 || DREG > 1 || ADREG > 1 || MREG > 1 || PREG > 1 ||
        INMODEREG > 1 || OPMODEREG > 1 || ALUMODEREG > 1 || CARRYINREG > 1 || CARRYINSELREG > 1)
      $fatal(1, "DSP48E2 model: illegal register count (%m)");
    if (USE_MULT != "MULTIPLY" && USE_MULT != "NONE" && USE_MULT != "DYNAMIC")
      $fatal(1, "DSP48E2 model: USE_MULT %s illegal (%m)", USE_MULT);
  end

  // ------------------------------------------------------ control registers
  reg [4:0] inmode_q = 5'd0;
  reg [8:0] opmode_q = 9'd0;
  reg [3:0] alumode_q = 4'd0;
  reg [2:0] carryinsel_q = 3'd0;
  reg       carryin_q = 1'b0;
  always @(posedge CLK) begin
    if (RSTINMODE) inmode_q <= 5'd0; else if (CEINMODE) inmode_q <= INMODE;
    if (RSTCTRL) begin
      opmode_q <= 9'd0;
      carryinsel_q <= 3'd0;
    end else if (CECTRL) begin
      opmode_q <= OPMODE;
      carryinsel_q <= CARRYINSEL;
    end
    if (RSTALUMODE) alumode_q <= 4'd0; else if (CEALUMODE) alumode_q <= ALUMODE;
    if (RSTALLCARRYIN) carryin_q <= 1'b0; else if (CECARRYIN) carryin_q <= CARRYIN;
  end
  wire [4:0] inmode = INMODEREG ? inmode_q : INMODE;
  wire [8:0] opmode = OPMODEREG ? opmode_q : OPMODE;
  wire [3:0] alumode = ALUMODEREG ? alumode_q : ALUMODE;
  wire [2:0] carryinsel = CARRYINSELREG ? carryinsel_q : CARRYINSEL;
  wire       carryin_r = CARRYINREG ? carryin_q : CARRYIN;

  // ------------------------------------------------------------- A, B, C, D
  wire [29:0] a_in = (A_INPUT == "CASCADE") ? ACIN : A;
  wire [17:0] b_in = (B_INPUT == "CASCADE") ? BCIN : B;
  reg  [29:0] a1_q = 30'd0, a2_q = 30'd0;
  reg  [17:0] b1_q = 18'd0, b2_q = 18'd0;
  reg  [47:0] c_q = 48'd0;
  reg  [26:0] d_q = 27'd0;
  always @(posedge CLK) begin
    if (RSTA) begin
      a1_q <= 30'd0;
      a2_q <= 30'd0;
    end else begin
      if (CEA1) a1_q <= a_in;
      if (CEA2) a2_q <= (AREG == 2) ? a1_q : a_in;
    end
    if (RSTB) begin
      b1_q <= 18'd0;
      b2_q <= 18'd0;
    end else begin
      if (CEB1) b1_q <= b_in;
      if (CEB2) b2_q <= (BREG == 2) ? b1_q : b_in;
    end
    if (RSTC) c_q <= 48'd0; else if (CEC) c_q <= C;
    if (RSTD) d_q <= 27'd0; else if (CED) d_q <= D;
  end
  wire [29:0] a_path = (AREG == 0) ? a_in : a2_q;
  wire [17:0] b_path = (BREG == 0) ? b_in : b2_q;
  wire [47:0] c_path = CREG ? c_q : C;
  wire [26:0] d_path = DREG ? d_q : D;
  assign ACOUT = (AREG == 2 && ACASCREG == 1) ? a1_q : a_path;
  assign BCOUT = (BREG == 2 && BCASCREG == 1) ? b1_q : b_path;

  // --------------------------------------------- pre-adder and multiplier
  wire [26:0] a_mult = inmode[1] ? 27'd0 : a_path[26:0];
  wire [26:0] d_gate = inmode[2] ? d_path : 27'd0;
  wire [26:0] ad = inmode[3] ? d_gate - a_mult : d_gate + a_mult;
  reg  [26:0] ad_q = 27'd0;
  always @(posedge CLK) begin
    if (RSTD) ad_q <= 27'd0; else if (CEAD) ad_q <= ad;
  end
  wire [26:0] ad_path = ADREG ? ad_q : ad;
  wire [26:0] mul_a = (AMULTSEL == "AD") ? ad_path : a_mult;
  wire [17:0] mul_b = (BMULTSEL == "AD") ? ad_path[17:0] : b_path;
  wire signed [44:0] m_full = $signed(mul_a) * $signed(mul_b);
  wire [47:0] m = {{3{m_full[44]}}, m_full};
  reg  [47:0] m_q = 48'd0;
  always @(posedge CLK) begin
    if (RSTM) m_q <= 48'd0; else if (CEM) m_q <= m;
  end
  wire [47:0] m_path = MREG ? m_q : m;

  // ------------------------------------------------------------ ALU
  reg [47:0] p_q = 48'd0;
  wire [47:0] p_fb = p_q;  // P feedback is the P register
  reg [47:0] x, y, z, w;
  reg        cin;
  reg [47:0] alu;
  always @* begin
    case (opmode[1:0])
      2'b00: x = 48'd0;
      2'b01: x = m_path;
      2'b10: x = p_fb;
      default: x = {a_path, b_path};
    endcase
    case (opmode[3:2])
      2'b00: y = 48'd0;
      2'b01: y = 48'd0;  // the M partial products are summed into x above
      2'b10: y = {48{1'b1}};
      default: y = c_path;
    endcase
    case (opmode[6:4])
      3'b000: z = 48'd0;
      3'b001: z = PCIN;
      3'b010: z = p_fb;
      3'b011: z = c_path;
      3'b100: z = p_fb;
      3'b101: z = {{17{PCIN[47]}}, PCIN[47:17]};
      3'b110: z = {{17{p_fb[47]}}, p_fb[47:17]};
      default: z = 48'd0;
    endcase
    case (opmode[8:7])
      2'b00: w = 48'd0;
      2'b01: w = p_fb;
      2'b10: w = RND;
      default: w = c_path;
    endcase
    case (carryinsel)
      3'b000: cin = carryin_r;
      3'b010: cin = CARRYCASCIN;
      default: cin = 1'b0;
    endcase
    case (alumode)
      4'b0000: alu = z + w + x + y + {47'd0, cin};
      4'b0001: alu = ~z + w + x + y + {47'd0, cin};
      4'b0010: alu = ~(z + w + x + y + {47'd0, cin});
      default: alu = z - (w + x + y + {47'd0, cin});
    endcase
  end

  // Dynamic control values outside the modelled subset stop the simulation
  // (checked on the clock so that settling glitches do not count).
  always @(posedge CLK) begin
    if (inmode[0] || inmode[4]) $fatal(1, "DSP48E2 model: INMODE[0]/[4] = 1 not modelled (%m)");
    if (alumode[3:2] != 2'b00) $fatal(1, "DSP48E2 model: logic ALUMODE %b not modelled (%m)", alumode);
    if ((opmode[1:0] == 2'b01) != (opmode[3:2] == 2'b01))
      $fatal(1, "DSP48E2 model: OPMODE %b uses M in only one of X/Y (%m)", opmode);
    if (opmode[6:4] == 3'b111) $fatal(1, "DSP48E2 model: OPMODE Z = 111 is illegal (%m)");
    if (carryinsel != 3'b000 && carryinsel != 3'b010)
      $fatal(1, "DSP48E2 model: CARRYINSEL %b not modelled (%m)", carryinsel);
    if (USE_MULT == "NONE" && opmode[1:0] == 2'b01)
      $fatal(1, "DSP48E2 model: M selected with USE_MULT NONE (%m)");
  end

  always @(posedge CLK) begin
    if (RSTP) p_q <= 48'd0; else if (CEP) p_q <= alu;
  end
  assign P = PREG ? p_q : alu;
  assign PCOUT = P;

  // Outputs outside the modelled subset (eqcheck.py refuses netlists that use them).
  assign CARRYCASCOUT = 1'b0;
  assign CARRYOUT = 4'd0;
  assign MULTSIGNOUT = 1'b0;
  assign OVERFLOW = 1'b0;
  assign UNDERFLOW = 1'b0;
  assign PATTERNDETECT = 1'b0;
  assign PATTERNBDETECT = 1'b0;
  assign XOROUT = 8'd0;

  wire unused = ^{MASK, PATTERN, MULTSIGNIN};
endmodule
