// The batch slots whose sequence is still running at time step t (length > t)
// in a packed batch, and how many there are. Combinational.
`default_nettype none

module running_slots #(
  parameter int unsigned MaxBatch = 4
) (
  input  logic [MaxBatch*16-1:0] lengths_i,  // per slot
  input  logic [15:0]            batch_i,    // slots in use
  input  logic [15:0]            t_i,
  output logic [MaxBatch-1:0]    mask_o,
  output logic [15:0]            count_o
);

  always_comb begin
    count_o = '0;
    for (int b = 0; b < MaxBatch; b++) begin
      mask_o[b] = (b < 32'(batch_i)) && (lengths_i[b*16 +: 16] > t_i);
      count_o   = count_o + 16'(mask_o[b]);
    end
  end

endmodule

`default_nettype wire
