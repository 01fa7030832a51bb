// Black-box stub of the Xilinx parameterized macro xpm_cdc_pulse (UG974): a
// one-cycle pulse in src_clk becomes a one-cycle pulse in dest_clk (toggle and
// synchronizer inside); pulses must be spaced by a few cycles of the slower
// clock. For linting only: Vivado uses its own library.
`default_nettype none

module xpm_cdc_pulse #(
  parameter int DEST_SYNC_FF   = 4,
  parameter int INIT_SYNC_FF   = 0,
  parameter int REG_OUTPUT     = 0,
  parameter int RST_USED       = 1,
  parameter int SIM_ASSERT_CHK = 0
) (
  input  logic src_clk,
  input  logic src_rst,
  input  logic src_pulse,
  input  logic dest_clk,
  input  logic dest_rst,
  output logic dest_pulse
);
endmodule

`default_nettype wire
