// float vs double: the float instantiation of the golden model against the
// double one on a larger case (I 17, H 33, T 20, B 3), same parameters and
// inputs (rounded to float once, then both run from those values).
//
// Metric, per tensor: normwise relative difference
//   max_k |float_k - double_k| / max_k |double_k|.
// Tolerances (see docs/drafts/golden.md): forward tensors 2e-6, gradients
// and per-step gate gradients 5e-6, one optimizer step 1e-6 (relative to the
// weights). float's unit roundoff is u = 6e-8. A pre-activation sums
// I + H = 50 products, the state carries through 20 steps, backward another
// 20 steps and weight gradients sum T * B = 60 outer products, so errors of
// several u are expected and were measured: over 300 seeds the worst was
// 4.1e-7 (7u) forward and 6.8e-7 (11u) backward. The limits are about 5x and
// 7x that, well below what a real float-path bug (wrong cast, lost
// precision in a whole term) produces.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "golden_test_util.hpp"

namespace farnn::golden::testing {
namespace {

constexpr double kTolForward = 2e-6;
constexpr double kTolGrad = 5e-6;
constexpr double kTolStep = 1e-6;

class Worst {
 public:
  Worst(const char* what, double tol) : what_(what), tol_(tol) {}
  template <class A, class B>
  void operator()(const std::string& name, const A& f, const B& d) {
    ASSERT_EQ(f.rows(), d.rows()) << name;
    ASSERT_EQ(f.cols(), d.cols()) << name;
    const double e = normwise_rel(f, d);
    EXPECT_LE(e, tol_) << what_ << " " << name;
    if (e > worst_) {
      worst_ = e;
      worst_name_ = name;
    }
  }
  ~Worst() {
    std::printf("  %-10s max normwise relative difference %.3e in %s (tolerance %.0e)\n", what_,
                worst_, worst_name_.c_str(), tol_);
  }

 private:
  const char* what_;
  double tol_;
  double worst_ = 0;
  std::string worst_name_ = "-";
};

// "[t]". (Built by appending: GCC 12 gives a false -Wrestrict warning for
// "[" + std::to_string(t) at -O3.)
std::string index_suffix(int t) {
  std::string s = "[";
  s += std::to_string(t);
  s += "]";
  return s;
}

void compare_float_double(CellType cell, std::uint64_t seed) {
  constexpr int kI = 17, kH = 33, kT = 20, kB = 3;
  // Round once to float so both models start from identical values.
  const Problem<float> pf = random_problem(cell, kI, kH, kT, kB, seed).cast<float>();
  const Problem<double> pd = pf.cast<double>();
  std::printf("%s float vs double, I=%d H=%d T=%d B=%d\n", cell_name(cell), kI, kH, kT, kB);

  ForwardResult<float> ff;
  ForwardResult<double> fd;
  const BackwardResult<float> bf = gradients(pf, &ff);
  const BackwardResult<double> bd = gradients(pd, &fd);
  {
    Worst fw("forward", kTolForward);
    for (int t = 0; t < kT; ++t) {
      const std::string ts = index_suffix(t);
      fw("h" + ts, ff.h[t], fd.h[t]);
      fw("gates" + ts, ff.cache.gates[t], fd.cache.gates[t]);
      fw("hp" + ts, ff.cache.hp[t], fd.cache.hp[t]);
      if (cell == CellType::kLstm) fw("c" + ts, ff.cache.c[t + 1], fd.cache.c[t + 1]);
    }
    fw("h_final", ff.h_final, fd.h_final);
    if (cell == CellType::kLstm) fw("c_final", ff.c_final, fd.c_final);
  }
  {
    Worst bw("backward", kTolGrad);
    bw("dW_ih", bf.grad.w_ih, bd.grad.w_ih);
    bw("dW_hh", bf.grad.w_hh, bd.grad.w_hh);
    bw("db_ih", bf.grad.b_ih, bd.grad.b_ih);
    bw("db_hh", bf.grad.b_hh, bd.grad.b_hh);
    for (int t = 0; t < kT; ++t) {
      const std::string ts = index_suffix(t);
      bw("dx" + ts, bf.dx[t], bd.dx[t]);
      bw("dpre_ih" + ts, bf.dpre_ih[t], bd.dpre_ih[t]);
      bw("dpre_hh" + ts, bf.dpre_hh[t], bd.dpre_hh[t]);
    }
    bw("dh0", bf.dh0, bd.dh0);
    if (cell == CellType::kLstm) bw("dc0", bf.dc0, bd.dc0);
  }
  {
    // One Adam and one SGD-momentum step from the same float gradients: the
    // update arithmetic itself in float vs double (relative to the weights).
    const LayerGrads<double> gd = {bf.grad.w_ih.cast<double>(), bf.grad.w_hh.cast<double>(),
                                   bf.grad.b_ih.cast<double>(), bf.grad.b_hh.cast<double>()};
    Worst st("opt step", kTolStep);
    const AdamOptions ao{.lr = 1e-3, .weight_decay = 1e-2};
    const SgdOptions so{.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-2};
    for (int which = 0; which < 2; ++which) {
      LayerParams<float> qf = pf.p;
      LayerParams<double> qd = pd.p;
      if (which == 0) {
        Adam<float> af(ao);
        Adam<double> ad(ao);
        af.step(qf, bf.grad);
        ad.step(qd, gd);
      } else {
        Sgd<float> sf(so);
        Sgd<double> sd(so);
        sf.step(qf, bf.grad);
        sd.step(qd, gd);
      }
      const std::string o = which == 0 ? "adam " : "sgd ";
      st(o + "w_ih", qf.w_ih, qd.w_ih);
      st(o + "w_hh", qf.w_hh, qd.w_hh);
      st(o + "b_ih", qf.b_ih, qd.b_ih);
      st(o + "b_hh", qf.b_hh, qd.b_hh);
    }
  }
}

TEST(GoldenFloat, LstmMatchesDouble) {
  compare_float_double(CellType::kLstm, 2024);
}
TEST(GoldenFloat, GruMatchesDouble) {
  compare_float_double(CellType::kGru, 2025);
}

}  // namespace
}  // namespace farnn::golden::testing
