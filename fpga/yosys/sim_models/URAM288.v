// Behavioural simulation model of the UltraScale+ URAM288 UltraRAM, written
// for the FARNN post-synthesis equivalence check (fpga/yosys/eqcheck.py):
// Yosys 0.23 ships only a black box for it (cells_xtra.v).
//
// Scope: what Yosys 0.23 memory_libmap + urams_map.v produce (UG573,
// "UltraRAM"): 4096 x 72 bits, two ports on one clock, each doing a read or
// a write a cycle (RDB_WR = 1 writes), byte-wide write enables (BWE: nine
// bytes of 8 bits, PARITY_INDEPENDENT; or eight bytes of 8 bits with their
// parity bits 64..71, PARITY_INTERLEAVED); in one cycle port A's operation
// comes first and port B's second, so B reads what A writes that cycle and A
// reads the word before B's write; a port that writes keeps its output (no
// change); EN low keeps it too; RST (RST_MODE SYNC) clears the output at the
// clock edge whatever EN is; contents and outputs start at zero.
// Not modelled (stops the simulation with $fatal): the input and output
// pipeline registers (IREG_PRE, OREG), an asynchronous reset that is ever
// asserted (RST_MODE ASYNC on a port whose RST stays low is fine), cascade, ECC,
// sleep, an inverted clock, an address above 4095.
`timescale 1ns/1ps
module URAM288 #(
  parameter BWE_MODE_A = "PARITY_INTERLEAVED",
  parameter BWE_MODE_B = "PARITY_INTERLEAVED",
  parameter EN_AUTO_SLEEP_MODE = "FALSE",
  parameter IREG_PRE_A = "FALSE",
  parameter IREG_PRE_B = "FALSE",
  parameter [0:0] IS_CLK_INVERTED = 1'b0,
  parameter OREG_A = "TRUE",
  parameter OREG_B = "TRUE",
  parameter RST_MODE_A = "SYNC",
  parameter RST_MODE_B = "SYNC"
) (
  input  [22:0] ADDR_A,
  input  [8:0]  BWE_A,
  input         EN_A,
  input         RDB_WR_A,
  input         INJECT_DBITERR_A,
  input         INJECT_SBITERR_A,
  input         RST_A,
  input  [71:0] DIN_A,
  output reg [71:0] DOUT_A,
  input  [22:0] ADDR_B,
  input  [8:0]  BWE_B,
  input         EN_B,
  input         RDB_WR_B,
  input         INJECT_DBITERR_B,
  input         INJECT_SBITERR_B,
  input         RST_B,
  input  [71:0] DIN_B,
  output reg [71:0] DOUT_B,
  input         CLK,
  input         SLEEP
);
  reg [71:0] mem [0:4095];
  integer i;

  initial begin
    if (IREG_PRE_A != "FALSE" || IREG_PRE_B != "FALSE" || OREG_A != "FALSE" || OREG_B != "FALSE")
      $fatal(1, "URAM288 model: pipeline registers (IREG_PRE, OREG) are not modelled");
    if ((RST_MODE_A != "SYNC" && RST_MODE_A != "ASYNC") || (RST_MODE_B != "SYNC" && RST_MODE_B != "ASYNC"))
      $fatal(1, "URAM288 model: unknown RST_MODE");
    if (EN_AUTO_SLEEP_MODE != "FALSE") $fatal(1, "URAM288 model: auto sleep is not modelled");
    if (IS_CLK_INVERTED != 1'b0) $fatal(1, "URAM288 model: an inverted clock is not modelled");
    if ((BWE_MODE_A != "PARITY_INDEPENDENT" && BWE_MODE_A != "PARITY_INTERLEAVED") ||
        (BWE_MODE_B != "PARITY_INDEPENDENT" && BWE_MODE_B != "PARITY_INTERLEAVED"))
      $fatal(1, "URAM288 model: unknown BWE_MODE");
    for (i = 0; i < 4096; i = i + 1) mem[i] = 72'd0;
    DOUT_A = 72'd0;
    DOUT_B = 72'd0;
  end

  // The bits a write enable mask covers in a mode.
  function [71:0] bit_mask(input [8:0] bwe, input independent);
    integer k;
    begin
      bit_mask = 72'd0;
      for (k = 0; k < 8; k = k + 1) begin
        if (bwe[k]) bit_mask[8*k +: 8] = 8'hff;
        if (!independent && bwe[k]) bit_mask[64 + k] = 1'b1;
      end
      if (independent && bwe[8]) bit_mask[71:64] = 8'hff;
    end
  endfunction

  always @(posedge CLK) begin
    if (SLEEP || INJECT_DBITERR_A || INJECT_SBITERR_A || INJECT_DBITERR_B || INJECT_SBITERR_B)
      $fatal(1, "URAM288 model: sleep and error injection are not modelled");
    if ((RST_MODE_A == "ASYNC" && RST_A) || (RST_MODE_B == "ASYNC" && RST_B))
      $fatal(1, "URAM288 model: an asynchronous reset is not modelled");
    if ((EN_A && ADDR_A[22:12] != 11'd0) || (EN_B && ADDR_B[22:12] != 11'd0))
      $fatal(1, "URAM288 model: an address above 4095 (cascade) is not modelled");
    // Port A, then port B, on the array as port A left it.
    if (RST_A) DOUT_A <= 72'd0;
    else if (EN_A && !RDB_WR_A) DOUT_A <= mem[ADDR_A[11:0]];
    if (EN_A && RDB_WR_A)
      mem[ADDR_A[11:0]] = (mem[ADDR_A[11:0]] & ~bit_mask(BWE_A, BWE_MODE_A == "PARITY_INDEPENDENT")) |
                          (DIN_A & bit_mask(BWE_A, BWE_MODE_A == "PARITY_INDEPENDENT"));
    if (RST_B) DOUT_B <= 72'd0;
    else if (EN_B && !RDB_WR_B) DOUT_B <= mem[ADDR_B[11:0]];
    if (EN_B && RDB_WR_B)
      mem[ADDR_B[11:0]] = (mem[ADDR_B[11:0]] & ~bit_mask(BWE_B, BWE_MODE_B == "PARITY_INDEPENDENT")) |
                          (DIN_B & bit_mask(BWE_B, BWE_MODE_B == "PARITY_INDEPENDENT"));
  end
endmodule
