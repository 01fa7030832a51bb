// Black-box stub of the UltraScale+ GT reference-clock input buffer IBUFDS_GTE4
// (UG974 / UG578): I/IB the MGTREFCLK pin pair, CEB an active-low enable, O the
// reference for the transceivers, ODIV2 the same clock (REFCLK_HROW_CK_SEL =
// 2'b00) or divided by two, for fabric use. For linting only: Vivado
// uses its own library cell.
`default_nettype none

module IBUFDS_GTE4 #(
  parameter logic       REFCLK_EN_TX_PATH  = 1'b0,
  parameter logic [1:0] REFCLK_HROW_CK_SEL = 2'b00,
  parameter logic [1:0] REFCLK_ICNTL_RX    = 2'b00
) (
  input  logic I,
  input  logic IB,
  input  logic CEB,
  output logic O,
  output logic ODIV2
);
endmodule

`default_nettype wire
