// Fast kernels of the engine model; see engine_kernels.hpp. Written with GCC
// vector extensions (16 lanes of 32 bits) and compiled for AVX-512, AVX2 and
// the baseline x86-64 ISA, picked at run time (target_clones). The build
// keeps -ffp-contract=off, so a multiply and an add stay two roundings.
#include "engine_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "farnn/fp32.hpp"

// The 64-byte vector helpers below are always inlined into the clones; the
// ABI note GCC gives for passing such vectors between functions built for
// different ISAs does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace farnn::engine::kernels {
namespace {

using u32v = uint32_t __attribute__((vector_size(64)));
using i32v = int32_t __attribute__((vector_size(64)));
using f32v = float __attribute__((vector_size(64)));

constexpr uint32_t kNegZero = 0x80000000u;

#define FARNN_INLINE inline __attribute__((always_inline))

// fp32::flush on 16 lanes: subnormal -> zero of its sign, NaN -> canonical NaN.
// The lane masks come from a subtract and an arithmetic shift, not from vector
// compares or `?:`: GCC lowers those lane by lane for vectors wider than the
// target's registers (with them the AVX2 clone of these 64-byte vectors took
// 435 ms where it now takes 69: model:// LSTM H = 256, T = 100, FW + BW,
// one thread, bench_train).
FARNN_INLINE u32v select(u32v mask, u32v a, u32v b) { return (a & mask) | (b & ~mask); }
FARNN_INLINE u32v flush(u32v x) {
  // Exponent field 0: (field - 1) is negative.
  const i32v exp = reinterpret_cast<i32v>(x & fp32::kExpMask);
  x = select(reinterpret_cast<u32v>((exp - 1) >> 31), x & fp32::kSignMask, x);
  // Magnitude above +Inf (NaN): (+Inf - magnitude) is negative; no overflow.
  const i32v mag = reinterpret_cast<i32v>(x & ~fp32::kSignMask);
  const u32v nan = reinterpret_cast<u32v>((static_cast<int32_t>(fp32::kPosInf) - mag) >> 31);
  return select(nan, u32v{} + fp32::kCanonicalNan, x);
}
// fp32::mul_host / add_host for operands that are already flushed.
FARNN_INLINE u32v mul(u32v a, float b) { return flush(reinterpret_cast<u32v>(reinterpret_cast<f32v>(a) * b)); }
FARNN_INLINE u32v add(u32v a, u32v b) {
  return flush(reinterpret_cast<u32v>(reinterpret_cast<f32v>(a) + reinterpret_cast<f32v>(b)));
}
FARNN_INLINE u32v load(const uint32_t* p) {
  u32v v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
FARNN_INLINE void store(uint32_t* p, u32v v) { std::memcpy(p, &v, sizeof v); }

// Flushed copies of n vectors of `len` words, as floats.
std::vector<float> flushed(const uint32_t* const* v, int n, int len) {
  std::vector<float> out(static_cast<size_t>(n) * len);
  for (int s = 0; s < n; ++s)
    for (int i = 0; i < len; ++i) out[static_cast<size_t>(s) * len + i] = fp32::to_float(fp32::flush(v[s][i]));
  return out;
}

// R blocks of 16 rows for N sequences at once: R*N independent sums keep the
// adder's latency hidden, and one pass over the weights feeds N sequences.
// With S > 1, S sums per row (columns c mod S), added at the end from the one
// holding the last column on, in cyclic order. dst[i] + off + 16*r receives
// block r of sequence i.
template <int R, int N, int S>
FARNN_INLINE void forward_blocks(const uint32_t* w, int cols, const float* h, int h_stride, uint32_t* const* dst,
                                 int off) {
  u32v a[S][R][N];
  for (int s = 0; s < S; ++s)
    for (int r = 0; r < R; ++r)
      for (int i = 0; i < N; ++i) a[s][r][i] = u32v{} + kNegZero;  // -0 + p = p: the first product starts a sum
  const size_t block = static_cast<size_t>(cols) * kLanes;
  for (int c = 0; c < cols; ++c) {
    const int s = c % S;
    for (int r = 0; r < R; ++r) {
      const u32v wc = load(w + r * block + static_cast<size_t>(c) * kLanes);
      for (int i = 0; i < N; ++i) a[s][r][i] = add(a[s][r][i], mul(wc, h[i * h_stride + c]));
    }
  }
  const int last = (cols - 1) % S;
  for (int r = 0; r < R; ++r) {
    for (int i = 0; i < N; ++i) {
      u32v v = a[last][r][i];
      for (int k = 1; k < S; ++k) v = add(v, a[(last + k) % S][r][i]);
      store(dst[i] + off + r * kLanes, v);
    }
  }
}
template <int R, int N>
FARNN_INLINE void forward_blocks(int sums, const uint32_t* w, int cols, const float* h, int h_stride,
                                 uint32_t* const* dst, int off) {
  switch (sums) {
    case 1: forward_blocks<R, N, 1>(w, cols, h, h_stride, dst, off); break;
    case 2: forward_blocks<R, N, 2>(w, cols, h, h_stride, dst, off); break;
    case 4: forward_blocks<R, N, 4>(w, cols, h, h_stride, dst, off); break;
    case 8: forward_blocks<R, N, 8>(w, cols, h, h_stride, dst, off); break;
    default: throw std::invalid_argument("engine kernels: " + std::to_string(sums) + " sums a row");
  }
}

// R column blocks (at col, col+16, ...) for N sequences at once. Each chain's
// sum starts at -0 and takes its PEs' partials in order; `chain` (chains*R*N
// vectors of 16 words) holds them until the tree adds them (tree_sum's pairing).
template <int R, int N>
FARNN_INLINE void backward_blocks(const ChainMatrix& m, int num_pe, int chains, const float* d, int d_stride,
                                  uint32_t* const* dh, int col, uint32_t* chain) {
  const size_t stride = static_cast<size_t>(m.padded_cols);
  const int per_chain = num_pe / chains, pes = std::min(num_pe, m.rows);
  constexpr size_t kBlock = static_cast<size_t>(R) * N * kLanes;  // words of one chain's sums
  for (int ch = 0; ch < chains; ++ch) {
    u32v sum[R][N], part[R][N] = {};
    for (int r = 0; r < R; ++r)
      for (int i = 0; i < N; ++i) sum[r][i] = u32v{} + kNegZero;
    // PEs past the last row add -0, which leaves every flushed sum unchanged.
    for (int p = ch * per_chain; p < std::min((ch + 1) * per_chain, pes); ++p) {
      for (int k = p; k < m.rows; k += num_pe) {
        for (int r = 0; r < R; ++r) {
          const u32v w = load(&m.bw[static_cast<size_t>(k) * stride + col + r * kLanes]);
          for (int i = 0; i < N; ++i) {
            const u32v prod = mul(w, d[i * d_stride + k]);
            part[r][i] = k == p ? prod : add(part[r][i], prod);
          }
        }
      }
      for (int r = 0; r < R; ++r)
        for (int i = 0; i < N; ++i) sum[r][i] = add(sum[r][i], part[r][i]);
    }
    if (chains == 1) {
      for (int r = 0; r < R; ++r)
        for (int i = 0; i < N; ++i) store(dh[i] + col + r * kLanes, sum[r][i]);
      return;
    }
    for (int r = 0; r < R; ++r)
      for (int i = 0; i < N; ++i) store(chain + ch * kBlock + (r * N + i) * kLanes, sum[r][i]);
  }
  // The chains' adder tree: level by level, pairs (2i, 2i+1), an odd last one passed on.
  for (int n = chains; n > 1; n = (n + 1) / 2) {
    for (int i = 0; i < n / 2; ++i)
      for (size_t v = 0; v < kBlock; v += kLanes)
        store(chain + i * kBlock + v, add(load(chain + 2 * i * kBlock + v), load(chain + (2 * i + 1) * kBlock + v)));
    if (n % 2) std::copy_n(chain + (n - 1) * kBlock, kBlock, chain + (n / 2) * kBlock);
  }
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < N; ++i) store(dh[i] + col + r * kLanes, load(chain + (r * N + i) * kLanes));
}

// Sequences per pass (up to 4) and blocks per pass for them: 4, 2, 1, 1.
constexpr int blocks_for(int n) { return n == 1 ? 4 : n == 2 ? 2 : 1; }

}  // namespace

ChainMatrix::ChainMatrix(const std::vector<uint32_t>& u_chain, int rows_, int cols_)
    : rows(rows_), cols(cols_), blocks((rows_ + kLanes - 1) / kLanes),
      padded_cols((cols_ + kLanes - 1) / kLanes * kLanes) {
  if (rows < 1 || cols < 1 || u_chain.size() != static_cast<size_t>(rows) * cols) {
    throw std::invalid_argument("engine kernels: U has " + std::to_string(u_chain.size()) + " words, not " +
                                std::to_string(rows) + " x " + std::to_string(cols));
  }
  fw.assign(static_cast<size_t>(blocks) * cols * kLanes, 0);
  bw.assign(static_cast<size_t>(rows) * padded_cols, 0);
  for (int k = 0; k < rows; ++k) {
    for (int c = 0; c < cols; ++c) {
      const uint32_t x = fp32::flush(u_chain[static_cast<size_t>(k) * cols + c]);
      fw[(static_cast<size_t>(k / kLanes) * cols + c) * kLanes + k % kLanes] = x;
      bw[static_cast<size_t>(k) * padded_cols + c] = x;
    }
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void forward_rows(const ChainMatrix& m, int sums,
                                                                              const uint32_t* const* h,
                                                                              uint32_t* const* acc, int n, int q0,
                                                                              int q1) {
  const std::vector<float> hf = flushed(h, n, m.cols);
  const size_t block = static_cast<size_t>(m.cols) * kLanes;
  const int full = std::min(q1, m.rows / kLanes);  // blocks q < full have 16 real rows
  for (int s = 0; s < n; s += 4) {
    const int ns = std::min(4, n - s), group = blocks_for(ns);
    const float* hs = &hf[static_cast<size_t>(s) * m.cols];
    uint32_t* const* out = acc + s;
    int q = q0;
    for (; q + group <= full; q += group) {
      const uint32_t* w = &m.fw[static_cast<size_t>(q) * block];
      switch (ns) {
        case 4: forward_blocks<1, 4>(sums, w, m.cols, hs, m.cols, out, q * kLanes); break;
        case 3: forward_blocks<1, 3>(sums, w, m.cols, hs, m.cols, out, q * kLanes); break;
        case 2: forward_blocks<2, 2>(sums, w, m.cols, hs, m.cols, out, q * kLanes); break;
        default: forward_blocks<4, 1>(sums, w, m.cols, hs, m.cols, out, q * kLanes); break;
      }
    }
    for (; q < q1; ++q) {  // the rest one block at a time; the last may be partial
      const uint32_t* w = &m.fw[static_cast<size_t>(q) * block];
      std::vector<uint32_t> tail(static_cast<size_t>(ns) * kLanes);
      uint32_t* t[4];
      for (int i = 0; i < ns; ++i) t[i] = &tail[static_cast<size_t>(i) * kLanes];
      switch (ns) {
        case 4: forward_blocks<1, 4>(sums, w, m.cols, hs, m.cols, t, 0); break;
        case 3: forward_blocks<1, 3>(sums, w, m.cols, hs, m.cols, t, 0); break;
        case 2: forward_blocks<1, 2>(sums, w, m.cols, hs, m.cols, t, 0); break;
        default: forward_blocks<1, 1>(sums, w, m.cols, hs, m.cols, t, 0); break;
      }
      const int rows = std::min(kLanes, m.rows - q * kLanes);
      for (int i = 0; i < ns; ++i) std::copy_n(t[i], rows, out[i] + q * kLanes);
    }
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void backward_cols(const ChainMatrix& m, int num_pe,
                                                                               int num_chains,
                                                                               const uint32_t* const* delta,
                                                                               uint32_t* const* dh, int n, int c0,
                                                                               int c1) {
  if (num_chains < 1 || num_pe % num_chains != 0) {
    throw std::invalid_argument("engine kernels: " + std::to_string(num_chains) + " chains do not divide " +
                                std::to_string(num_pe) + " PEs");
  }
  std::vector<uint32_t> chain(static_cast<size_t>(num_chains) * 4 * kLanes);  // R*N <= 4 below
  const std::vector<float> df = flushed(delta, n, m.rows);
  for (int s = 0; s < n; s += 4) {
    const int ns = std::min(4, n - s), group = blocks_for(ns);
    const float* ds = &df[static_cast<size_t>(s) * m.rows];
    uint32_t* const* out = dh + s;
    int col = c0;
    for (; col + group * kLanes <= c1; col += group * kLanes) {
      switch (ns) {
        case 4: backward_blocks<1, 4>(m, num_pe, num_chains, ds, m.rows, out, col, chain.data()); break;
        case 3: backward_blocks<1, 3>(m, num_pe, num_chains, ds, m.rows, out, col, chain.data()); break;
        case 2: backward_blocks<2, 2>(m, num_pe, num_chains, ds, m.rows, out, col, chain.data()); break;
        default: backward_blocks<4, 1>(m, num_pe, num_chains, ds, m.rows, out, col, chain.data()); break;
      }
    }
    for (; col < c1; col += kLanes) {
      switch (ns) {
        case 4: backward_blocks<1, 4>(m, num_pe, num_chains, ds, m.rows, out, col, chain.data()); break;
        case 3: backward_blocks<1, 3>(m, num_pe, num_chains, ds, m.rows, out, col, chain.data()); break;
        case 2: backward_blocks<1, 2>(m, num_pe, num_chains, ds, m.rows, out, col, chain.data()); break;
        default: backward_blocks<1, 1>(m, num_pe, num_chains, ds, m.rows, out, col, chain.data()); break;
      }
    }
  }
}

}  // namespace farnn::engine::kernels
