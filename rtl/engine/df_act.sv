// Always-flowing sigmoid / tanh lanes for fixed-latency dataflow pipelines:
// NumLanes lanes, lane l computes sigmoid (Funcs[l] = 0) or tanh (1) of
// x_i[l], a new input every cycle, its result exactly act_pkg::ACT_LATENCY
// cycles later on y_o[l]. Lanes 2t and 2t+1 are the two lanes of fp_act t
// (one table, one port each) with their handshakes tied off, so NumLanes
// lanes hold ceil(NumLanes / 2) tables.
// Latency: act_pkg::ACT_LATENCY. Throughput: one result per lane per cycle.
`default_nettype none

module df_act #(
  parameter int unsigned NumLanes = 1,
  parameter logic [NumLanes-1:0] Funcs = '0
) (
  input  logic                   clk_i,
  input  logic                   rst_i,
  input  logic [NumLanes*32-1:0] x_i,
  output logic [NumLanes*32-1:0] y_o
);

  localparam int unsigned NumPorts = act_pkg::LUT_PORTS;
  localparam int unsigned NumTables = (NumLanes + NumPorts - 1) / NumPorts;

  for (genvar t = 0; t < NumTables; t++) begin : g_table
    localparam int unsigned First = t * NumPorts;
    localparam int unsigned Lanes = (NumLanes - First < NumPorts) ? NumLanes - First : NumPorts;
    logic [Lanes-1:0] unused_ready, unused_valid, unused_tag;

    fp_act #(
      .TagWidth(1),
      .NumLanes(Lanes)
    ) u_act (
      .clk_i,
      .rst_i,
      .in_valid_i ({Lanes{1'b1}}),
      .in_ready_o (unused_ready),
      .x_i        (x_i[First*32 +: Lanes*32]),
      .func_i     (Funcs[First +: Lanes]),
      .tag_i      ('0),
      .out_valid_o(unused_valid),
      .out_ready_i({Lanes{1'b1}}),
      .y_o        (y_o[First*32 +: Lanes*32]),
      .tag_o      (unused_tag)
    );
  end

`ifndef SYNTHESIS
  initial begin
    if (NumLanes < 1) $error("df_act: NumLanes must be at least 1");
  end
`endif

endmodule

`default_nettype wire
