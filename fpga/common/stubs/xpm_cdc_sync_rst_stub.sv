// Black-box stub of the Xilinx parameterized macro xpm_cdc_sync_rst (UG974): a
// reset level synchronized into dest_clk by DEST_SYNC_FF flops (asserted and
// released synchronously), initial value INIT. For linting only: Vivado
// uses its own library.
`default_nettype none

module xpm_cdc_sync_rst #(
  parameter int DEST_SYNC_FF   = 4,
  parameter int INIT           = 1,
  parameter int INIT_SYNC_FF   = 0,
  parameter int SIM_ASSERT_CHK = 0
) (
  input  logic src_rst,
  input  logic dest_clk,
  output logic dest_rst
);
endmodule

`default_nettype wire
