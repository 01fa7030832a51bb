// Black-box stub of the Xilinx parameterized macro xpm_cdc_array_single (UG974):
// WIDTH independent single-bit synchronizers of DEST_SYNC_FF flops into
// dest_clk, with an optional input register in src_clk (SRC_INPUT_REG). The
// macro carries its own timing exceptions (ASYNC_REG, max delay). For
// linting (Verilator) only: Vivado uses its own library.
`default_nettype none

module xpm_cdc_array_single #(
  parameter int DEST_SYNC_FF   = 4,
  parameter int INIT_SYNC_FF   = 0,
  parameter int SIM_ASSERT_CHK = 0,
  parameter int SRC_INPUT_REG  = 1,
  parameter int WIDTH          = 2
) (
  input  logic             src_clk,
  input  logic [WIDTH-1:0] src_in,
  input  logic             dest_clk,
  output logic [WIDTH-1:0] dest_out
);
endmodule

`default_nettype wire
