// Leading-zero count of a 32-bit word as a balanced tree: pairs of groups
// merge level by level (2, 4, 8, 16, 32 bits), each group carrying whether
// any of its bits is set and the leading zeros within it; a group takes its
// high half's count when that half has a bit set, else the low half's with
// the high half's width added (its top bit). Five 2:1 levels, where a
// priority loop over the bits maps to a chain as long as the word (7 LUT
// levels at 28 bits in the flat engine; with the tree `fp_add_l4` went from
// 6 levels to 5, docs/decisions.md).
// count_o: leading zeros of x_i (0..31); 31 when x_i is zero (a caller that
// needs another value for zero tests the zero itself).
// Combinational.
`default_nettype none

module prim_lzc32 (
  input  logic [31:0] x_i,
  output logic [4:0]  count_o
);

  logic [15:0] any1, cnt1;  // 16 groups of 2 bits: any set, 1-bit count
  logic [7:0]  any2;        // 8 groups of 4 bits, 2-bit counts
  logic [15:0] cnt2;
  logic [3:0]  any3;        // 4 groups of 8 bits, 3-bit counts
  logic [11:0] cnt3;
  logic [1:0]  any4;        // 2 groups of 16 bits, 4-bit counts
  logic [7:0]  cnt4;

  always_comb begin
    for (int g = 0; g < 16; g++) begin
      any1[g] = x_i[2*g+1] | x_i[2*g];
      cnt1[g] = !x_i[2*g+1];
    end
    for (int g = 0; g < 8; g++) begin
      any2[g]        = any1[2*g+1] | any1[2*g];
      cnt2[2*g +: 2] = any1[2*g+1] ? {1'b0, cnt1[2*g+1]} : {1'b1, cnt1[2*g]};
    end
    for (int g = 0; g < 4; g++) begin
      any3[g]        = any2[2*g+1] | any2[2*g];
      cnt3[3*g +: 3] = any2[2*g+1] ? {1'b0, cnt2[2*(2*g+1) +: 2]} : {1'b1, cnt2[2*(2*g) +: 2]};
    end
    for (int g = 0; g < 2; g++) begin
      any4[g]        = any3[2*g+1] | any3[2*g];
      cnt4[4*g +: 4] = any3[2*g+1] ? {1'b0, cnt3[3*(2*g+1) +: 3]} : {1'b1, cnt3[3*(2*g) +: 3]};
    end
    count_o = any4[1] ? {1'b0, cnt4[7:4]} : {1'b1, cnt4[3:0]};
  end

  logic unused_any;
  assign unused_any = any4[0];  // the low half's flag: its count is taken either way

endmodule

`default_nettype wire
