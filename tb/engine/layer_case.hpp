// One random layer test case for the engine: PyTorch-layout weights and data
// (float32 values, so the float64 golden model sees exactly the same numbers),
// the engine's input streams derived from them (the GPU-side input projection
// xp = W_ih x + b_ih, rounded to float32), and the comparison of the engine's
// outputs with the float64 golden model, including the gradients the GPU side
// computes from the engine's delta_t.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "farnn/engine_model.hpp"
#include "farnn/golden.hpp"
#include "options.hpp"

namespace farnn::tb {

using GMat = golden::Mat<double>;

struct LayerCase {
  engine::Config cfg;
  int input = 1;
  golden::LayerParams<double> params;
  std::vector<GMat> x;   // T inputs, I x B
  GMat h0, c0;           // H x B
  std::vector<GMat> dh;  // T gradients from above, H x B
  GMat carry;            // LSTM: dL/dc_T; GRU: dL/dh_T (both H x B)
  // Engine side (bit patterns).
  engine::Weights weights;
  // With cfg.lengths the per-step arrays are packed: only steps t < length(b).
  std::vector<uint32_t> xp;           // [S][G*H] unit-major
  std::vector<uint32_t> state_in_fw;  // [B][H] (h, c) pairs or h
  std::vector<uint32_t> dh_bits;      // [S][H] (model order)
  std::vector<uint32_t> dh_stream;    // backward stream order: t = T-1..0, b, j
  std::vector<uint32_t> carry_in;     // [B][H]
};

// Index of the first word that differs (or of the shorter end), -1 if equal.
inline long first_mismatch(const std::vector<uint32_t>& expected, const std::vector<uint32_t>& actual) {
  const size_t n = std::min(expected.size(), actual.size());
  for (size_t i = 0; i < n; ++i)
    if (expected[i] != actual[i]) return static_cast<long>(i);
  return expected.size() == actual.size() ? -1 : static_cast<long>(n);
}

inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float value(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline GMat random_mat(Rng& rng, int rows, int cols, double bound) {
  GMat m(rows, cols);
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r) m(r, c) = static_cast<float>(rng.uniform(-bound, bound));
  return m;
}

inline LayerCase make_layer_case(Rng& rng, const engine::Config& cfg, int input) {
  const int H = cfg.hidden, B = cfg.batch, T = cfg.steps, G = engine::gates(cfg.cell), GH = G * H;
  const golden::CellType cell = cfg.cell == engine::Cell::kLstm ? golden::CellType::kLstm
                                                               : golden::CellType::kGru;
  LayerCase lc;
  lc.cfg = cfg;
  lc.input = input;
  const double k = 1.0 / std::sqrt(static_cast<double>(H));  // PyTorch's init range
  lc.params.cell = cell;
  lc.params.input_size = input;
  lc.params.hidden_size = H;
  lc.params.w_ih = random_mat(rng, GH, input, k);
  lc.params.w_hh = random_mat(rng, GH, H, k);
  lc.params.b_ih = random_mat(rng, GH, 1, k);
  lc.params.b_hh = random_mat(rng, GH, 1, k);
  for (int t = 0; t < T; ++t) lc.x.push_back(random_mat(rng, input, B, 1.0));
  lc.h0 = random_mat(rng, H, B, 0.5);
  lc.c0 = random_mat(rng, H, B, 0.5);
  for (int t = 0; t < T; ++t) lc.dh.push_back(random_mat(rng, H, B, 1.0));
  lc.carry = random_mat(rng, H, B, 0.5);

  lc.weights.w_hh.resize(static_cast<size_t>(GH) * H);
  lc.weights.b_hh.resize(GH);
  for (int r = 0; r < GH; ++r) {
    for (int c = 0; c < H; ++c) lc.weights.w_hh[static_cast<size_t>(r) * H + c] = bits(lc.params.w_hh(r, c));
    lc.weights.b_hh[r] = bits(lc.params.b_hh(r));
  }
  // GPU side: xp = W_ih x + b_ih, accumulated in double and rounded once.
  lc.xp.resize(static_cast<size_t>(T) * B * GH);
  for (int t = 0; t < T; ++t) {
    for (int b = 0; b < B; ++b) {
      for (int j = 0; j < H; ++j) {
        for (int g = 0; g < G; ++g) {
          const int row = g * H + j;
          double s = lc.params.b_ih(row);
          for (int i = 0; i < input; ++i) s += lc.params.w_ih(row, i) * lc.x[t](i, b);
          lc.xp[(static_cast<size_t>(t) * B + b) * GH + engine::chain_row(g, j, G)] =
              bits(static_cast<float>(s));
        }
      }
    }
  }
  for (int b = 0; b < B; ++b) {
    for (int j = 0; j < H; ++j) {
      lc.state_in_fw.push_back(bits(static_cast<float>(lc.h0(j, b))));
      if (cfg.cell == engine::Cell::kLstm) lc.state_in_fw.push_back(bits(static_cast<float>(lc.c0(j, b))));
      lc.carry_in.push_back(bits(static_cast<float>(lc.carry(j, b))));
    }
  }
  lc.dh_bits.resize(static_cast<size_t>(T) * B * H);
  for (int t = 0; t < T; ++t)
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < H; ++j)
        lc.dh_bits[(static_cast<size_t>(t) * B + b) * H + j] = bits(static_cast<float>(lc.dh[t](j, b)));
  if (!cfg.lengths.empty()) {  // keep the steps of running sequences only
    std::vector<uint32_t> xp, dh;
    for (int t = 0; t < T; ++t) {
      for (int b = 0; b < B; ++b) {
        if (t >= cfg.length(b)) continue;
        const size_t n = static_cast<size_t>(t) * B + b;
        xp.insert(xp.end(), lc.xp.begin() + static_cast<long>(n * GH), lc.xp.begin() + static_cast<long>((n + 1) * GH));
        dh.insert(dh.end(), lc.dh_bits.begin() + static_cast<long>(n * H),
                  lc.dh_bits.begin() + static_cast<long>((n + 1) * H));
      }
    }
    lc.xp = std::move(xp);
    lc.dh_bits = std::move(dh);
  }
  lc.dh_stream = engine::reverse_time(cfg, lc.dh_bits, 1);
  return lc;
}

// Tolerance of the engine against the float64 golden model, per tensor: the
// largest difference, divided by the tensor's largest magnitude (floored at 1).
// The engine rounds every operation to float32 (unfused MAC: two roundings per
// product) and approximates sigmoid/tanh to <= 1e-6 absolute. Over the 144
// configurations of the engine suites (H up to 130, T up to 37, both cells,
// both parameterizations, 3 seeds) the worst measured error was 6.5e-7 (dW_hh);
// 1e-5 leaves a margin of 15 while an order or index mistake shows up at 1e-2.
constexpr double kGoldenTolerance = 1e-5;

struct GoldenReport {
  double worst = 0.0;
  std::string worst_name;
};

inline double normalized_error(const GMat& engine, const GMat& golden) {
  const double scale = std::max(1.0, golden.cwiseAbs().maxCoeff());
  return (engine - golden).cwiseAbs().maxCoeff() / scale;
}

template <class TB>
void check_against_golden(TB& tb, const LayerCase& lc, const std::vector<uint32_t>& h_stream,
                          const std::vector<uint32_t>& fw_state, const std::vector<uint32_t>& delta_stream,
                          const std::vector<uint32_t>& bw_state) {
  const engine::Config& cfg = lc.cfg;
  const int H = cfg.hidden, B = cfg.batch, T = cfg.steps, G = engine::gates(cfg.cell);
  const bool lstm = cfg.cell == engine::Cell::kLstm;
  const auto fw = golden::forward(lc.params, lc.x, lc.h0, lc.c0);
  const auto bw = golden::backward(fw.cache, lc.dh, lstm ? GMat() : lc.carry, lstm ? lc.carry : GMat());

  GoldenReport rep;
  auto check = [&](const std::string& name, const GMat& e, const GMat& g) {
    const double err = normalized_error(e, g);
    if (err > rep.worst) {
      rep.worst = err;
      rep.worst_name = name;
    }
    if (!(err <= kGoldenTolerance)) {
      tb.fail("vs float64 golden: " + name + " normalized error " + std::to_string(err) + " > " +
              std::to_string(kGoldenTolerance));
    }
  };
  // Forward outputs.
  std::vector<GMat> h(T + 1, GMat(H, B));
  h[0] = lc.h0;
  for (int t = 0; t < T; ++t)
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < H; ++j) h[t + 1](j, b) = value(h_stream[(static_cast<size_t>(t) * B + b) * H + j]);
  for (int t = 0; t < T; ++t) check("h_" + std::to_string(t), h[t + 1], fw.h[t]);
  if (lstm) {
    GMat c(H, B);
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < H; ++j) c(j, b) = value(fw_state[(static_cast<size_t>(b) * H + j) * 2 + 1]);
    check("c_T", c, fw.c_final);
  }
  // Gate gradients, then what the GPU side derives from them.
  std::vector<GMat> d_ih(T, GMat(G * H, B)), d_hh(T, GMat(G * H, B));
  size_t n = 0;
  for (int t = T - 1; t >= 0; --t) {
    for (int b = 0; b < B; ++b) {
      for (int j = 0; j < H; ++j, n += 4) {
        for (int g = 0; g < G; ++g) {
          d_ih[t](g * H + j, b) = value(delta_stream[n + g]);
          d_hh[t](g * H + j, b) = value(delta_stream[n + g]);
        }
        if (!lstm) d_hh[t](2 * H + j, b) = value(delta_stream[n + 3]);
      }
    }
  }
  GMat dw_ih = GMat::Zero(G * H, lc.input), dw_hh = GMat::Zero(G * H, H);
  GMat db_ih = GMat::Zero(G * H, 1), db_hh = GMat::Zero(G * H, 1);
  for (int t = 0; t < T; ++t) {
    check("delta_ih_" + std::to_string(t), d_ih[t], bw.dpre_ih[t]);
    check("delta_hh_" + std::to_string(t), d_hh[t], bw.dpre_hh[t]);
    dw_ih += d_ih[t] * lc.x[t].transpose();
    dw_hh += d_hh[t] * h[t].transpose();
    db_ih += d_ih[t].rowwise().sum();
    db_hh += d_hh[t].rowwise().sum();
    check("dx_" + std::to_string(t), lc.params.w_ih.transpose() * d_ih[t], bw.dx[t]);
  }
  check("dW_ih", dw_ih, bw.grad.w_ih);
  check("dW_hh", dw_hh, bw.grad.w_hh);
  check("db_ih", db_ih, bw.grad.b_ih);
  check("db_hh", db_hh, bw.grad.b_hh);
  GMat dh0(H, B), dc0(H, B);
  const int sw = engine::state_words(cfg.cell);
  for (int b = 0; b < B; ++b) {
    for (int j = 0; j < H; ++j) {
      dh0(j, b) = value(bw_state[(static_cast<size_t>(b) * H + j) * sw]);
      if (lstm) dc0(j, b) = value(bw_state[(static_cast<size_t>(b) * H + j) * 2 + 1]);
    }
  }
  check("dh0", dh0, bw.dh0);
  if (lstm) check("dc0", dc0, bw.dc0);
  std::printf("    vs float64 golden: worst normalized error %.2e (%s), tolerance %.0e\n", rep.worst,
              rep.worst_name.c_str(), kGoldenTolerance);
}

// The shapes a suite runs: H in {1, one row a PE (NumPe / G: the forward's
// most sums a row), odd not a multiple of NumPe, a multiple of NumPe, the
// largest that fits}, input size != H, T in {1, 2, 37}, B in {1,
// MaxBatch}; each seed covers every (H, T) pair and alternates B so that three
// seeds cover every (H, T, B). --hidden/--batch/--steps/--input pick one case.
struct CaseShape {
  int hidden, batch, steps, input;
};

template <class Params>
std::vector<CaseShape> case_shapes(const Options& opt, const Params& p, engine::Cell cell) {
  if (opt.has("hidden")) {
    const int h = static_cast<int>(opt.get_int("hidden", 1));
    return {{h, static_cast<int>(opt.get_int("batch", 1)), static_cast<int>(opt.get_int("steps", 1)),
             static_cast<int>(opt.get_int("input", h + 3))}};
  }
  const int h_max = engine::max_resident_hidden(cell, p.num_pe, p.weight_depth, p.max_hidden);
  int odd = p.num_pe + 3;
  if (odd % 2 == 0) ++odd;
  odd = std::min(odd, h_max);
  const int multiple = std::min(2 * p.num_pe, h_max);
  std::vector<CaseShape> shapes;
  const int seed_parity = static_cast<int>(opt.seed() % 2);
  int n = 0;
  const int one_row = std::max(1, std::min(p.num_pe / engine::gates(cell), h_max));
  for (int h : {1, one_row, odd, multiple, h_max}) {
    for (int t : {1, 2, 37}) {
      const int b = ((n++ + seed_parity) % 2 == 0) ? 1 : p.max_batch;
      shapes.push_back({h, b, t, h + 3});
    }
  }
  return shapes;
}

}  // namespace farnn::tb
