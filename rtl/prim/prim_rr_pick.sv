// Round-robin pick (combinational): among the requesters in req_i, the first
// one after last_i (the one granted last), else the first one from 0. any_o
// says whether anyone requests; grant_o is only meaningful with it.
`default_nettype none

module prim_rr_pick #(
  parameter int unsigned N = 2,
  localparam int unsigned W = (N > 1) ? $clog2(N) : 1
) (
  input  logic [N-1:0] req_i,
  input  logic [W-1:0] last_i,
  output logic         any_o,
  output logic [W-1:0] grant_o
);

  logic         any_next;
  logic [W-1:0] first_req, next_req;

  always_comb begin
    any_o     = 1'b0;
    any_next  = 1'b0;
    first_req = '0;
    next_req  = '0;
    for (int i = N - 1; i >= 0; i--) begin
      if (req_i[i]) begin
        any_o     = 1'b1;
        first_req = W'(i);
        if (32'(i) > 32'(last_i)) begin
          any_next = 1'b1;
          next_req = W'(i);
        end
      end
    end
    grant_o = any_next ? next_req : first_req;
  end

endmodule

`default_nettype wire
