// fp_pipe_stage: one optional register stage (cut point) of the FP operator
// pipelines fp_add / fp_mul, valid/ready handshake in the fpnew manner.
//   Enable = 1: a register slice. Valid bit reset, data not reset (it may pack
//               into DSP/SRL registers); in_ready_o = out_ready_i | ~valid,
//               so a bubble is filled even while the output is stalled.
//               Latency 1 cycle, throughput one item per cycle.
//   Enable = 0: plain wires (latency 0); clk_i/rst_i unused.
// With out_ready_i tied to 1 the handshake folds away: the data register
// loads on in_valid_i and the valid bit follows in_valid_i.
`default_nettype none

module fp_pipe_stage #(
  parameter int unsigned Width  = 1,
  parameter bit          Enable = 1'b1
) (
  input  logic             clk_i,
  input  logic             rst_i,
  input  logic             in_valid_i,
  output logic             in_ready_o,
  input  logic [Width-1:0] in_data_i,
  output logic             out_valid_o,
  input  logic             out_ready_i,
  output logic [Width-1:0] out_data_o
);

  if (Enable) begin : g_reg
    logic             valid_d, valid_q;
    logic [Width-1:0] data_d, data_q;

    always_comb begin
      in_ready_o = out_ready_i | ~valid_q;
      valid_d    = valid_q;
      data_d     = data_q;
      if (in_ready_o) begin
        valid_d = in_valid_i;
        if (in_valid_i) data_d = in_data_i;
      end
    end

    always_ff @(posedge clk_i) begin
      if (rst_i) valid_q <= 1'b0;
      else valid_q <= valid_d;
    end

    always_ff @(posedge clk_i) begin
      data_q <= data_d;
    end

    assign out_valid_o = valid_q;
    assign out_data_o  = data_q;

`ifndef SYNTHESIS
    // A stalled output holds its valid and its data.
    assert property (@(posedge clk_i) (!rst_i && out_valid_o && !out_ready_i) |=>
                     (out_valid_o && out_data_o == $past(out_data_o)))
    else $error("fp_pipe_stage: output changed while stalled");
`endif
  end else begin : g_wire
    assign in_ready_o  = out_ready_i;
    assign out_valid_o = in_valid_i;
    assign out_data_o  = in_data_i;

    logic unused_clk_rst;
    assign unused_clk_rst = clk_i ^ rst_i;
  end

endmodule

`default_nettype wire
