// Fast kernels of the engine model's two matrix-vector products, bit-identical
// to the operator-by-operator definitions chain_forward / chain_backward
// (farnn/engine_model.hpp): the same unfused multiply and add, in the same
// order per output, each result flushed (subnormal -> signed zero, NaN ->
// canonical NaN). They differ only in how the work is laid out: SIMD lanes
// over independent outputs (16 chain rows forward, 16 columns backward),
// several sequences per pass over the weights, and a share of the outputs per
// thread. tests/engine/test_engine_model.cpp checks them against the
// definitions on random data with subnormals, infinities and NaNs.
#pragma once

#include <cstdint>
#include <vector>

namespace farnn::engine::kernels {

inline constexpr int kLanes = 16;

// U in chain rows (rows x cols, row-major) rearranged for the kernels, every
// word flushed once: `fw` holds blocks of 16 rows, column by column
// (fw[(q*cols + c)*16 + l] = U[16q + l][c], zero rows past the end); `bw`
// holds the rows padded to a multiple of 16 columns.
struct ChainMatrix {
  int rows = 0, cols = 0, blocks = 0, padded_cols = 0;
  std::vector<uint32_t> fw, bw;
  ChainMatrix(const std::vector<uint32_t>& u_chain, int rows, int cols);
};

// FW: for every sequence s < n and chain row k in blocks [q0, q1):
//   acc[s][k] = ((U[k][0]*h[s][0] + U[k][1]*h[s][1]) + ...), or with `sums`
// (engine::fw_sums: 1, 2, 4 or 8) sums over the columns c mod sums, added
// the one holding column cols-1 first, then the others in cyclic order.
// h[s] holds cols words; acc[s] at least 16*q1 words.
void forward_rows(const ChainMatrix& m, int sums, const uint32_t* const* h, uint32_t* const* acc, int n, int q0,
                  int q1);

// BW over columns [c0, c1) (multiples of 16, c1 <= padded_cols): for every
// sequence s < n, dh[s][c] = the chains' adder tree (engine::tree_sum) over
// chain sums (((-0 + partial_p[c]) + partial_p+1[c]) + ...), chain q holding
// PEs q*P/chains .. (q+1)*P/chains - 1; partial_p[c] = sum over rows
// k = p, p+P, ... in order of U[k][c]*delta[s][k]. dh[s] holds padded_cols words.
void backward_cols(const ChainMatrix& m, int num_pe, int num_chains, const uint32_t* const* delta,
                   uint32_t* const* dh, int n, int c0, int c1);

}  // namespace farnn::engine::kernels
