// Helpers shared by the golden-model tests: random problems, the scalar test
// loss, error metrics.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "farnn/golden.hpp"
#include "test_seed.hpp"

namespace farnn::golden::testing {

using MatD = Mat<double>;

// A layer plus inputs and the weights of the test loss
//   L = sum_t <g[t], h_{t+1}> + <g_h, h_T> + <g_c, c_T>   (no g_c term for GRU)
// so dL/dh_t = g[t], dL/dh_T = g_h, dL/dc_T = g_c.
template <class S>
struct Problem {
  LayerParams<S> p;
  std::vector<Mat<S>> x;
  Mat<S> h0, c0;
  std::vector<Mat<S>> g;
  Mat<S> g_h, g_c;

  template <class T>
  Problem<T> cast() const {
    Problem<T> out;
    out.p = p.template cast<T>();
    for (const auto& m : x) out.x.push_back(m.template cast<T>());
    out.h0 = h0.template cast<T>();
    out.c0 = c0.template cast<T>();
    for (const auto& m : g) out.g.push_back(m.template cast<T>());
    out.g_h = g_h.template cast<T>();
    out.g_c = g_c.template cast<T>();
    return out;
  }
};

inline std::vector<MatD> random_seq(int steps, int rows, int cols, double bound,
                                    std::mt19937_64& rng) {
  std::vector<MatD> v;
  for (int t = 0; t < steps; ++t) v.push_back(random_uniform<double>(rows, cols, bound, rng));
  return v;
}

inline Problem<double> random_problem(CellType cell, int input, int hidden, int steps, int batch,
                                      std::uint64_t seed) {
  farnn::test::SeededRng rng(seed);
  Problem<double> pr;
  pr.p = LayerParams<double>::random(cell, input, hidden, rng);
  pr.x = random_seq(steps, input, batch, 1.0, rng);
  pr.h0 = random_uniform<double>(hidden, batch, 0.5, rng);
  if (cell == CellType::kLstm) pr.c0 = random_uniform<double>(hidden, batch, 0.5, rng);
  pr.g = random_seq(steps, hidden, batch, 1.0, rng);
  pr.g_h = random_uniform<double>(hidden, batch, 1.0, rng);
  if (cell == CellType::kLstm) pr.g_c = random_uniform<double>(hidden, batch, 1.0, rng);
  return pr;
}

template <class S>
S dot(const Mat<S>& a, const Mat<S>& b) {
  return (a.array() * b.array()).sum();
}

template <class S>
S loss(const Problem<S>& pr) {
  const ForwardResult<S> f = forward(pr.p, pr.x, pr.h0, pr.c0);
  S l = 0;
  for (size_t t = 0; t < f.h.size(); ++t) l += dot(pr.g[t], f.h[t]);
  l += dot(pr.g_h, f.h_final);
  if (pr.p.cell == CellType::kLstm) l += dot(pr.g_c, f.c_final);
  return l;
}

template <class S>
BackwardResult<S> gradients(const Problem<S>& pr, ForwardResult<S>* fw_out = nullptr) {
  ForwardResult<S> f = forward(pr.p, pr.x, pr.h0, pr.c0);
  BackwardResult<S> b = backward(f.cache, pr.g, pr.g_h, pr.g_c);
  if (fw_out) *fw_out = std::move(f);
  return b;
}

// Normwise relative difference of two same-shaped tensors:
//   max_k |a_k - b_k| / max_k |b_k|   (b is the reference).
template <class A, class B>
double normwise_rel(const A& a, const B& ref) {
  const double scale = ref.template cast<double>().cwiseAbs().maxCoeff();
  const double diff =
      (a.template cast<double>() - ref.template cast<double>()).cwiseAbs().maxCoeff();
  return scale > 0 ? diff / scale : diff;
}

}  // namespace farnn::golden::testing
