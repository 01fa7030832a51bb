// Sigmoid / tanh unit: NumLanes (1 or 2) independent lanes, each a full unit
// with its own valid/ready handshake and tag (fp_act_pipe), sharing one
// dual-port table (act_lut_rom, one port per lane; lane 1 costs no table).
// Lane l uses bit l of the valid/ready/func vectors and word l of x_i, y_o,
// tag_i and tag_o; results are bit-exact to farnn::act::sigmoid / tanh (see
// fp_act_pipe for the method).
// Latency: act_pkg::ACT_LATENCY = 8 cycles. Throughput: one result per lane per cycle.
`default_nettype none

module fp_act #(
  parameter int unsigned TagWidth = 1,
  parameter int unsigned NumLanes = 1
) (
  input  logic                         clk_i,
  input  logic                         rst_i,
  input  logic [NumLanes-1:0]          in_valid_i,
  output logic [NumLanes-1:0]          in_ready_o,
  input  logic [NumLanes*32-1:0]       x_i,
  input  logic [NumLanes-1:0]          func_i,     // 0 = sigmoid, 1 = tanh
  input  logic [NumLanes*TagWidth-1:0] tag_i,
  output logic [NumLanes-1:0]          out_valid_o,
  input  logic [NumLanes-1:0]          out_ready_i,
  output logic [NumLanes*32-1:0]       y_o,
  output logic [NumLanes*TagWidth-1:0] tag_o
);

  localparam int unsigned NumPorts = act_pkg::LUT_PORTS;
  localparam int unsigned AddrWidth = act_pkg::LUT_ADDR_WIDTH;
  localparam int unsigned WordWidth = act_pkg::LUT_WIDTH;

  logic [NumPorts-1:0]           lut_en;
  logic [NumPorts*AddrWidth-1:0] lut_addr;
  logic [NumPorts*WordWidth-1:0] lut_data;

  for (genvar l = 0; l < NumPorts; l++) begin : g_lane
    if (l < NumLanes) begin : g_used
      fp_act_pipe #(
        .TagWidth(TagWidth)
      ) u_pipe (
        .clk_i,
        .rst_i,
        .in_valid_i (in_valid_i[l]),
        .in_ready_o (in_ready_o[l]),
        .x_i        (x_i[l*32 +: 32]),
        .func_i     (func_i[l]),
        .tag_i      (tag_i[l*TagWidth +: TagWidth]),
        .out_valid_o(out_valid_o[l]),
        .out_ready_i(out_ready_i[l]),
        .y_o        (y_o[l*32 +: 32]),
        .tag_o      (tag_o[l*TagWidth +: TagWidth]),
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

  act_lut_rom u_lut (
    .clk_i,
    .en_i  (lut_en),
    .addr_i(lut_addr),
    .data_o(lut_data)
  );

`ifndef SYNTHESIS
  initial begin
    if (NumLanes < 1 || NumLanes > NumPorts) $error("fp_act: NumLanes must be 1 or 2");
  end
`endif

endmodule

`default_nettype wire
