// Always-flowing sigmoid / tanh lanes for fixed-latency dataflow pipelines:
// NumLanes lanes, lane l computes sigmoid (Funcs[l] = 0) or tanh (1) of
// x_i[l], a new input every cycle, its result exactly act_pkg::ACT_LATENCY
// cycles later on y_o[l]. Each lane is an fp_act_pipe with the handshake tied
// off; lanes 2t and 2t+1 share table t (act_lut_rom, one port each), so
// NumLanes lanes hold ceil(NumLanes / 2) tables.
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
  localparam int unsigned AddrWidth = act_pkg::LUT_ADDR_WIDTH;
  localparam int unsigned WordWidth = act_pkg::LUT_WIDTH;

  // Table ports, port p of table t at index NumPorts * t + p (lane l on port l).
  logic [NumTables*NumPorts-1:0]           lut_en;
  logic [NumTables*NumPorts*AddrWidth-1:0] lut_addr;
  logic [NumTables*NumPorts*WordWidth-1:0] lut_data;

  for (genvar l = 0; l < NumTables * NumPorts; l++) begin : g_lane
    if (l < NumLanes) begin : g_used
      logic unused_ready, unused_valid;
      logic [0:0] unused_tag;

      fp_act_pipe #(
        .TagWidth(1)
      ) u_pipe (
        .clk_i,
        .rst_i,
        .in_valid_i (1'b1),
        .in_ready_o (unused_ready),
        .x_i        (x_i[l*32 +: 32]),
        .func_i     (Funcs[l]),
        .tag_i      (1'b0),
        .out_valid_o(unused_valid),
        .out_ready_i(1'b1),
        .y_o        (y_o[l*32 +: 32]),
        .tag_o      (unused_tag),
        .lut_en_o   (lut_en[l]),
        .lut_addr_o (lut_addr[l*AddrWidth +: AddrWidth]),
        .lut_data_i (lut_data[l*WordWidth +: WordWidth])
      );
    end else begin : g_idle
      logic unused_data;
      assign lut_en[l] = 1'b0;
      assign lut_addr[l*AddrWidth +: AddrWidth] = '0;
      assign unused_data = ^lut_data[l*WordWidth +: WordWidth];
    end
  end

  for (genvar t = 0; t < NumTables; t++) begin : g_table
    act_lut_rom u_lut (
      .clk_i,
      .en_i  (lut_en[t*NumPorts +: NumPorts]),
      .addr_i(lut_addr[t*NumPorts*AddrWidth +: NumPorts*AddrWidth]),
      .data_o(lut_data[t*NumPorts*WordWidth +: NumPorts*WordWidth])
    );
  end

`ifndef SYNTHESIS
  initial begin
    if (NumLanes < 1) $error("df_act: NumLanes must be at least 1");
  end
`endif

endmodule

`default_nettype wire
