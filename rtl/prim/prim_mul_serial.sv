// Serial unsigned multiplier for setup arithmetic (extents, start addresses):
// product = a * b, one bit of b a cycle (shift and add), no DSP and no deep
// logic: each cycle is one ProdWidth-bit add and a shift. It stops as soon as
// the bits of b left are all zero: busy_o is high for max(1, bit length of
// b) cycles after the start cycle, and the product is ready when it is low
// again. A start while busy restarts it.
`default_nettype none

module prim_mul_serial #(
  parameter int unsigned AWidth    = 32,
  parameter int unsigned BWidth    = 16,
  parameter int unsigned ProdWidth = 64  // the product is taken mod 2^ProdWidth
) (
  input  logic                 clk_i,
  input  logic                 rst_i,
  input  logic                 start_i,
  input  logic [AWidth-1:0]    a_i,
  input  logic [BWidth-1:0]    b_i,
  output logic                 busy_o,     // low: prod_o holds a * b of the last start
  output logic [ProdWidth-1:0] prod_o
);

  logic                 busy_q;
  logic [ProdWidth-1:0] acc_q, a_q;
  logic [BWidth-1:0]    b_q;

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      busy_q <= 1'b0;
    end else if (start_i) begin
      busy_q <= 1'b1;
    end else if (busy_q) begin
      busy_q <= (b_q >> 1) != '0;
    end
    if (start_i) begin
      acc_q <= '0;
      a_q   <= ProdWidth'(a_i);
      b_q   <= b_i;
    end else if (busy_q) begin
      if (b_q[0]) acc_q <= acc_q + a_q;
      a_q <= a_q << 1;
      b_q <= b_q >> 1;
    end
  end

  assign busy_o = busy_q;
  assign prod_o = acc_q;

endmodule

`default_nettype wire
