// Simple dual-port RAM: one write port, one read port with a registered read
// (read data appears the cycle after the address; a read of the address being
// written in the same cycle returns the old word). Infers block or distributed
// RAM; no reset on the array or the read register so it maps onto RAM primitives.
// The array is split into lanes of at most 32 bits (same addresses and enables):
// Yosys 0.23 maps a RAM of 37..72 bits per block RAM to RAMB36E2 in 72-bit simple
// dual-port mode with the upper parity inputs wired to the lower ones
// (techlibs/xilinx/brams_xcu_map.v, `PORT_W_WIDTH == 71`; fixed upstream in
// YosysHQ/yosys#5833), silently losing data bits. Lanes keep every block RAM at
// 36 bits or narrower; the cost in RAM primitives is the same.
// rclr_i loads ClearValue into the read register instead (over re_i): a
// synchronous set/reset of the register's flip-flops, so that a consumer that
// sometimes wants a constant in place of the word (the PE's accumulator
// operand: the word or -0) gets it without a LUT a bit.
// Ultra = 1 marks the array (* ram_style = "ultra" *) for UltraRAM (URAM288:
// 4096 x 72, one read or write a port a cycle; Yosys maps it with
// `synth_xilinx -uram` and puts the write on the port that reads old data, so
// the same-address rule above holds). The simulated behaviour does not change.
// Latency: 1 cycle read. Throughput: one read and one write per cycle.
`default_nettype none

module prim_ram_1r1w #(
  parameter int unsigned Width = 32,
  parameter int unsigned Depth = 64,
  parameter logic [Width-1:0] ClearValue = '0,
  parameter bit Ultra = 1'b0,
  localparam int unsigned AddrWidth = (Depth > 1) ? $clog2(Depth) : 1
) (
  input  logic                 clk_i,
  input  logic                 we_i,
  input  logic [AddrWidth-1:0] waddr_i,
  input  logic [Width-1:0]     wdata_i,
  input  logic                 re_i,
  input  logic                 rclr_i,
  input  logic [AddrWidth-1:0] raddr_i,
  output logic [Width-1:0]     rdata_o
);

  localparam int unsigned LaneWidth = 32;
  localparam int unsigned NumLanes  = (Width + LaneWidth - 1) / LaneWidth;

  for (genvar l = 0; l < NumLanes; l++) begin : g_lane
    localparam int unsigned Lo = l * LaneWidth;
    localparam int unsigned W  = (Width - Lo < LaneWidth) ? Width - Lo : LaneWidth;

    logic [W-1:0] rdata_q;

    // The attribute cannot depend on a parameter: one branch per RAM style.
    if (Ultra) begin : g_ultra
      (* ram_style = "ultra" *) logic [W-1:0] mem [Depth];

      always_ff @(posedge clk_i) begin
        if (we_i) mem[waddr_i] <= wdata_i[Lo +: W];
      end

      always_ff @(posedge clk_i) begin
        if (rclr_i)    rdata_q <= ClearValue[Lo +: W];
        else if (re_i) rdata_q <= mem[raddr_i];
      end
    end else begin : g_infer
      logic [W-1:0] mem [Depth];

      always_ff @(posedge clk_i) begin
        if (we_i) mem[waddr_i] <= wdata_i[Lo +: W];
      end

      always_ff @(posedge clk_i) begin
        if (rclr_i)    rdata_q <= ClearValue[Lo +: W];
        else if (re_i) rdata_q <= mem[raddr_i];
      end
    end

    assign rdata_o[Lo +: W] = rdata_q;
  end

`ifndef SYNTHESIS
  initial begin
    if (Depth < 2) $error("prim_ram_1r1w: Depth must be at least 2");
  end
  always_ff @(posedge clk_i) begin
    if (we_i) assert (32'(waddr_i) < Depth) else $error("prim_ram_1r1w: write address out of range");
    if (re_i) assert (32'(raddr_i) < Depth) else $error("prim_ram_1r1w: read address out of range");
  end
`endif

endmodule

`default_nettype wire
