// Table ROM of the sigmoid / tanh unit: act_pkg::LUT_DEPTH (4096) words of
// act_pkg::LUT_WIDTH (54) bits, {D[k], Y[k]}, loaded with $readmemh from
// `FARNN_ACT_LUT_MEM (rtl/act/act_sigmoid_lut.mem, written by tools/act_lut_gen;
// the build passes its absolute path). One registered read port with a read
// enable: the output register holds while en_i is low. No reset, so it maps
// onto block RAM (6 RAMB36 as 4K x 9 on UltraScale+).
// Latency: 1 cycle. Throughput: one read per cycle.
`default_nettype none

`ifndef FARNN_ACT_LUT_MEM
`define FARNN_ACT_LUT_MEM "act_sigmoid_lut.mem"
`endif

module act_lut_rom (
  input  logic                                clk_i,
  input  logic                                en_i,
  input  logic [act_pkg::LUT_ADDR_WIDTH-1:0] addr_i,
  output logic [act_pkg::LUT_WIDTH-1:0]      data_o
);

  (* rom_style = "block" *) logic [act_pkg::LUT_WIDTH-1:0] rom [act_pkg::LUT_DEPTH];
  logic [act_pkg::LUT_WIDTH-1:0] data_q;

  initial begin
    $readmemh(`FARNN_ACT_LUT_MEM, rom);
  end

  // Block-RAM read template: the enable is the RAM's read enable.
  always_ff @(posedge clk_i) begin
    if (en_i) data_q <= rom[addr_i];
  end

  assign data_o = data_q;

`ifndef SYNTHESIS
  initial begin
    if (act_pkg::LUT_DEPTH != (1 << act_pkg::LUT_ADDR_WIDTH)) begin
      $error("act_lut_rom: LUT_DEPTH must be 2^LUT_ADDR_WIDTH");
    end
  end
`endif

endmodule

`default_nettype wire
