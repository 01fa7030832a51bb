// Gradient check of the golden model's backward pass against central finite
// differences, in double, at odd sizes (input 3, hidden 5, T 7, batch 2).
//
// Loss: L = sum_t <G_t, h_t> + <G_h, h_T> + <G_c, c_T> (no G_c term for GRU)
// with fixed random G's, so the per-step dh, dL/dh_T and dL/dc_T inputs of
// backward() are all exercised. Every entry of dW_ih, dW_hh, db_ih, db_hh,
// dx, dh0 and dc0 is checked.
//
// Numeric derivative of one entry v: the fourth-order central difference
// (five-point stencil)
//   n = (L(v - 2h) - 8 L(v - h) + 8 L(v + h) - L(v + 2h)) / (12 h),  h = 1e-3.
// Its truncation error is h^4 / 30 * L^(5) ~ 1e-14, its rounding error about
// eps * |L| / h ~ 1e-12 for |L| ~ 3 (the plain 3-point difference would need
// h ~ 1e-5 and leave ~1e-10).
//
// Relative error: rel(a, n) = |a - n| / max(|a|, |n|, kFloor), kFloor = 1e-6,
// i.e. relative to the larger of the two, and absolute (scaled by 1e6) for
// entries smaller than 1e-6 where the finite difference's ~1e-12 absolute
// error would dominate. Required: rel <= 1e-6 for every entry.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "golden_test_util.hpp"
#include "test_seed.hpp"

namespace farnn::golden::testing {
namespace {

constexpr double kStep = 1e-3;
constexpr double kFloor = 1e-6;
constexpr double kTol = 1e-6;

double rel_error(double a, double n) {
  return std::abs(a - n) / std::max({std::abs(a), std::abs(n), kFloor});
}

// Five-point central difference of the loss with respect to `v`, which must
// live inside `pr`; v is restored afterwards.
double numeric_derivative(Problem<double>& pr, double& v) {
  const double v0 = v;
  auto at = [&](double d) {
    v = v0 + d;
    return loss(pr);
  };
  const double n = (at(-2 * kStep) - 8 * at(-kStep) + 8 * at(kStep) - at(2 * kStep)) / (12 * kStep);
  v = v0;
  return n;
}

struct Stats {
  double max_rel = 0;
  double max_abs = 0;
  double max_grad = 0;
  int entries = 0;
  int below_floor = 0;
};

// Compares every entry of `analytic` with the numeric derivative with respect
// to the same entry of `param` (same shape, same storage order).
template <class M>
Stats check_tensor(const std::string& name, Problem<double>& pr, M& param, const M& analytic) {
  EXPECT_EQ(param.rows(), analytic.rows()) << name;
  EXPECT_EQ(param.cols(), analytic.cols()) << name;
  Stats s;
  for (Eigen::Index k = 0; k < param.size(); ++k) {
    const double a = analytic.data()[k];
    const double n = numeric_derivative(pr, param.data()[k]);
    const double rel = rel_error(a, n);
    EXPECT_LE(rel, kTol) << name << " entry " << k << " (row " << k % param.rows() << ", col "
                         << k / param.rows() << "): analytic " << a << ", numeric " << n;
    s.max_rel = std::max(s.max_rel, rel);
    s.max_abs = std::max(s.max_abs, std::abs(a - n));
    s.max_grad = std::max(s.max_grad, std::abs(a));
    s.below_floor += std::abs(a) < kFloor ? 1 : 0;
    ++s.entries;
  }
  std::printf("  %-8s %4d entries  max|grad| %.3e  max abs err %.3e  max rel err %.3e%s\n",
              name.c_str(), s.entries, s.max_grad, s.max_abs, s.max_rel,
              s.below_floor ? "  (some below floor)" : "");
  return s;
}

void run_gradcheck(CellType cell, std::uint64_t seed) {
  constexpr int kI = 3, kH = 5, kT = 7, kB = 2;
  Problem<double> pr = random_problem(cell, kI, kH, kT, kB, seed);
  const BackwardResult<double> bw = gradients(pr);
  std::printf("%s gradient check, I=%d H=%d T=%d B=%d, L=%.6f\n", cell_name(cell), kI, kH, kT, kB,
              loss(pr));

  double worst = 0;
  int entries = 0;
  auto take = [&](const Stats& s) {
    worst = std::max(worst, s.max_rel);
    entries += s.entries;
    // The check must not be vacuous: gradients of order one, almost none tiny.
    EXPECT_GT(s.max_grad, 1e-2);
    EXPECT_EQ(s.below_floor, 0);
  };
  take(check_tensor("dW_ih", pr, pr.p.w_ih, bw.grad.w_ih));
  take(check_tensor("dW_hh", pr, pr.p.w_hh, bw.grad.w_hh));
  take(check_tensor("db_ih", pr, pr.p.b_ih, bw.grad.b_ih));
  take(check_tensor("db_hh", pr, pr.p.b_hh, bw.grad.b_hh));
  for (int t = 0; t < kT; ++t) {
    take(check_tensor("dx[" + std::to_string(t) + "]", pr, pr.x[t], bw.dx[t]));
  }
  take(check_tensor("dh0", pr, pr.h0, bw.dh0));
  if (cell == CellType::kLstm) {
    take(check_tensor("dc0", pr, pr.c0, bw.dc0));
  } else {
    EXPECT_EQ(bw.dc0.size(), 0);
  }
  std::printf("%s: %d entries, max relative error %.3e (tolerance %.0e)\n", cell_name(cell),
              entries, worst, kTol);
  ::testing::Test::RecordProperty("max_rel_error", std::to_string(worst));
}

TEST(GoldenGradcheck, Lstm) {
  run_gradcheck(CellType::kLstm, 0x15d1);
}
TEST(GoldenGradcheck, Gru) {
  run_gradcheck(CellType::kGru, 0x6e0);
}

// Saturated gates (weights 4x PyTorch's bound) stress the activation
// derivatives; same tolerance.
TEST(GoldenGradcheck, LstmLargeWeights) {
  constexpr int kI = 3, kH = 5, kT = 7, kB = 2;
  Problem<double> pr = random_problem(CellType::kLstm, kI, kH, kT, kB, 77);
  farnn::test::SeededRng rng(78);
  pr.p = LayerParams<double>::random(CellType::kLstm, kI, kH, rng, 4.0);
  const BackwardResult<double> bw = gradients(pr);
  check_tensor("dW_ih", pr, pr.p.w_ih, bw.grad.w_ih);
  check_tensor("dW_hh", pr, pr.p.w_hh, bw.grad.w_hh);
  check_tensor("dh0", pr, pr.h0, bw.dh0);
  check_tensor("dc0", pr, pr.c0, bw.dc0);
}

TEST(GoldenGradcheck, GruLargeWeights) {
  constexpr int kI = 3, kH = 5, kT = 7, kB = 2;
  Problem<double> pr = random_problem(CellType::kGru, kI, kH, kT, kB, 91);
  farnn::test::SeededRng rng(92);
  pr.p = LayerParams<double>::random(CellType::kGru, kI, kH, rng, 4.0);
  const BackwardResult<double> bw = gradients(pr);
  check_tensor("dW_ih", pr, pr.p.w_ih, bw.grad.w_ih);
  check_tensor("dW_hh", pr, pr.p.w_hh, bw.grad.w_hh);
  check_tensor("db_hh", pr, pr.p.b_hh, bw.grad.b_hh);
  check_tensor("dh0", pr, pr.h0, bw.dh0);
}

}  // namespace
}  // namespace farnn::golden::testing
