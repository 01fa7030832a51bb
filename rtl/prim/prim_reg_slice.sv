// Register slice (skid buffer): a valid/ready stage whose outputs, ready
// included, all come from registers, so no combinational path crosses it in
// either direction. An item goes to the main register when it is empty or
// handing its item over, else to the skid register; the input is ready while
// the skid register is empty, so one item a cycle passes at full rate.
// empty_o: neither register holds an item.
// Latency: 1 cycle. Throughput: one item per cycle.
`default_nettype none

module prim_reg_slice #(
  parameter int unsigned Width = 32
) (
  input  logic             clk_i,
  input  logic             rst_i,
  input  logic             in_valid_i,
  output logic             in_ready_o,
  input  logic [Width-1:0] in_data_i,
  output logic             out_valid_o,
  input  logic             out_ready_i,
  output logic [Width-1:0] out_data_o,
  output logic             empty_o
);

  logic             main_valid_q, skid_valid_q, ready_q;
  logic [Width-1:0] main_q, skid_q;

  // in_ready_o is !skid_valid_q from a register of its own (ready_q): no
  // inverter between the slice and the producer's handshake logic.
  assign in_ready_o  = ready_q;
  assign out_valid_o = main_valid_q;
  assign out_data_o  = main_q;
  assign empty_o     = !main_valid_q && !skid_valid_q;

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      main_valid_q <= 1'b0;
      skid_valid_q <= 1'b0;
      ready_q      <= 1'b1;
    end else if (!main_valid_q || out_ready_i) begin
      // The main register takes the skid's item first, else the input's.
      main_valid_q <= skid_valid_q || in_valid_i;
      skid_valid_q <= 1'b0;
      ready_q      <= 1'b1;
    end else if (in_valid_i && !skid_valid_q) begin
      skid_valid_q <= 1'b1;
      ready_q      <= 1'b0;
    end
  end
  always_ff @(posedge clk_i) begin
    if (!main_valid_q || out_ready_i) main_q <= skid_valid_q ? skid_q : in_data_i;
    if (main_valid_q && !out_ready_i && !skid_valid_q) skid_q <= in_data_i;
  end

`ifndef SYNTHESIS
  // A held output keeps its item; the skid register only fills behind a full main register.
  logic             held_q;
  logic [Width-1:0] held_data_q;
  always_ff @(posedge clk_i) begin
    held_q      <= !rst_i && main_valid_q && !out_ready_i;
    held_data_q <= main_q;
    if (!rst_i) begin
      assert (!held_q || (main_valid_q && main_q == held_data_q))
      else $error("prim_reg_slice: output dropped or changed while stalled");
      assert (!skid_valid_q || main_valid_q) else $error("prim_reg_slice: skid register full, main empty");
      assert (ready_q == !skid_valid_q) else $error("prim_reg_slice: ready_q differs from !skid_valid_q");
    end
  end
`endif

endmodule

`default_nettype wire
