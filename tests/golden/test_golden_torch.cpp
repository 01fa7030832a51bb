// Cross-check against PyTorch 1.13 (torch.nn.LSTM / torch.nn.GRU, float64,
// I=3, H=2, T=3, B=2). torch_reference.py ran PyTorch once and wrote its
// parameters, inputs, outputs, gradients and optimizer results into
// torch_reference.inc, so this test needs no torch.
//
// Loss: L = sum_t <G_t, out_t> + <G_h, h_n> + <G_c, c_n> (no G_c for GRU).
// Optimizers: three steps each of SGD with momentum + dampening + weight
// decay, SGD Nesterov, Adam with weight decay and Adam AMSGrad, every step at
// the gradient of L at the current parameters (state carries over).
//
// Tolerance: |golden - torch| <= 1e-12 * max(1, |torch|) for every entry.
// Both sides are float64 evaluations of the same formulas in slightly
// different operation orders, so they differ by a few ulps (~1e-16 here).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "golden_test_util.hpp"
#include "torch_reference.inc"

namespace farnn::golden::testing {
namespace {

constexpr double kTol = 1e-12;
constexpr int kI = torch_ref::kInput;
constexpr int kH = torch_ref::kHidden;
constexpr int kT = torch_ref::kSteps;
constexpr int kB = torch_ref::kBatch;

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

MatD mat(const double* d, int rows, int cols) {
  return Eigen::Map<const RowMajor>(d, rows, cols);
}
Vec<double> vec(const double* d, int n) {
  return Eigen::Map<const Vec<double>>(d, n);
}

// PyTorch (steps, B, F) tensor -> `steps` matrices F x B (one column per sequence).
std::vector<MatD> seq(const double* d, int steps, int feat) {
  std::vector<MatD> v;
  for (int t = 0; t < steps; ++t) v.push_back(mat(d + t * kB * feat, kB, feat).transpose());
  return v;
}
// PyTorch (1, B, H) state -> H x B.
MatD state(const double* d) {
  return seq(d, 1, kH)[0];
}

LayerParams<double> params(CellType cell, const double* w_ih, const double* w_hh,
                           const double* b_ih, const double* b_hh) {
  const int gh = gate_count(cell) * kH;
  LayerParams<double> p;
  p.cell = cell;
  p.input_size = kI;
  p.hidden_size = kH;
  p.w_ih = mat(w_ih, gh, kI);
  p.w_hh = mat(w_hh, gh, kH);
  p.b_ih = vec(b_ih, gh);
  p.b_hh = vec(b_hh, gh);
  return p;
}

struct TorchCase {
  Problem<double> pr;
  std::vector<MatD> out;
  MatD h_n, c_n;
  double loss = 0;
  LayerGrads<double> grad;
  std::vector<MatD> grad_x;
  MatD grad_h0, grad_c0;
  std::map<std::string, LayerParams<double>> after;  // optimizer name -> parameters
};

#define FARNN_TORCH_PARAMS(cell, ns) \
  params(cell, ns::weight_ih_l0, ns::weight_hh_l0, ns::bias_ih_l0, ns::bias_hh_l0)
#define FARNN_TORCH_COMMON(c, cell, ns)                                           \
  do {                                                                            \
    c.pr.p = FARNN_TORCH_PARAMS(cell, ns);                                        \
    c.pr.x = seq(ns::x, kT, kI);                                                  \
    c.pr.h0 = state(ns::h0);                                                      \
    c.pr.g = seq(ns::g_out, kT, kH);                                              \
    c.pr.g_h = state(ns::g_h);                                                    \
    c.out = seq(ns::out, kT, kH);                                                 \
    c.h_n = state(ns::h_n);                                                       \
    c.loss = ns::loss;                                                            \
    c.grad = LayerGrads<double>::zeros_like(c.pr.p);                              \
    c.grad.w_ih = mat(ns::grad_weight_ih_l0, c.pr.p.w_ih.rows(), kI);             \
    c.grad.w_hh = mat(ns::grad_weight_hh_l0, c.pr.p.w_hh.rows(), kH);             \
    c.grad.b_ih = vec(ns::grad_bias_ih_l0, static_cast<int>(c.pr.p.b_ih.rows())); \
    c.grad.b_hh = vec(ns::grad_bias_hh_l0, static_cast<int>(c.pr.p.b_hh.rows())); \
    c.grad_x = seq(ns::grad_x, kT, kI);                                           \
    c.grad_h0 = state(ns::grad_h0);                                               \
    c.after["sgd_momentum"] = FARNN_TORCH_PARAMS(cell, ns::sgd_momentum);         \
    c.after["sgd_nesterov"] = FARNN_TORCH_PARAMS(cell, ns::sgd_nesterov);         \
    c.after["adam"] = FARNN_TORCH_PARAMS(cell, ns::adam);                         \
    c.after["adam_amsgrad"] = FARNN_TORCH_PARAMS(cell, ns::adam_amsgrad);         \
  } while (0)

TorchCase lstm_case() {
  TorchCase c;
  FARNN_TORCH_COMMON(c, CellType::kLstm, torch_ref::lstm);
  c.pr.c0 = state(torch_ref::lstm::c0);
  c.pr.g_c = state(torch_ref::lstm::g_c);
  c.c_n = state(torch_ref::lstm::c_n);
  c.grad_c0 = state(torch_ref::lstm::grad_c0);
  return c;
}

TorchCase gru_case() {
  TorchCase c;
  FARNN_TORCH_COMMON(c, CellType::kGru, torch_ref::gru);
  return c;
}

// The same optimizer configurations as OPTIMIZERS in torch_reference.py.
const std::map<std::string, SgdOptions> kSgd = {
    {"sgd_momentum", {.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01}},
    {"sgd_nesterov", {.lr = 0.05, .momentum = 0.8, .weight_decay = 0.02, .nesterov = true}},
};
const std::map<std::string, AdamOptions> kAdam = {
    {"adam", {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.01}},
    {"adam_amsgrad",
     {.lr = 0.02, .beta1 = 0.8, .beta2 = 0.5, .eps = 1e-6, .weight_decay = 0.0, .amsgrad = true}},
};

class Compare {
 public:
  template <class A, class B>
  void operator()(const std::string& name, const A& golden, const B& torch) {
    ASSERT_EQ(golden.rows(), torch.rows()) << name;
    ASSERT_EQ(golden.cols(), torch.cols()) << name;
    for (Eigen::Index r = 0; r < golden.rows(); ++r) {
      for (Eigen::Index c = 0; c < golden.cols(); ++c) {
        const double g = golden(r, c), t = torch(r, c);
        const double err = std::abs(g - t) / std::max(1.0, std::abs(t));
        worst_ = std::max(worst_, err);
        EXPECT_LE(err, kTol) << name << "(" << r << ", " << c << "): golden " << g << ", torch "
                             << t;
      }
    }
  }
  void params(const std::string& name, const LayerParams<double>& golden,
              const LayerParams<double>& torch) {
    (*this)(name + " weight_ih_l0", golden.w_ih, torch.w_ih);
    (*this)(name + " weight_hh_l0", golden.w_hh, torch.w_hh);
    (*this)(name + " bias_ih_l0", golden.b_ih, torch.b_ih);
    (*this)(name + " bias_hh_l0", golden.b_hh, torch.b_hh);
  }
  double worst() const { return worst_; }

 private:
  double worst_ = 0;
};

void check_forward_backward(const TorchCase& c) {
  Compare cmp;
  ForwardResult<double> f;
  const BackwardResult<double> b = gradients(c.pr, &f);
  const bool lstm = c.pr.p.cell == CellType::kLstm;
  for (int t = 0; t < kT; ++t) cmp("out[" + std::to_string(t) + "]", f.h[t], c.out[t]);
  cmp("h_n", f.h_final, c.h_n);
  if (lstm) cmp("c_n", f.c_final, c.c_n);
  EXPECT_NEAR(loss(c.pr), c.loss, kTol * std::max(1.0, std::abs(c.loss)));
  cmp("grad weight_ih_l0", b.grad.w_ih, c.grad.w_ih);
  cmp("grad weight_hh_l0", b.grad.w_hh, c.grad.w_hh);
  cmp("grad bias_ih_l0", b.grad.b_ih, c.grad.b_ih);
  cmp("grad bias_hh_l0", b.grad.b_hh, c.grad.b_hh);
  for (int t = 0; t < kT; ++t) cmp("grad x[" + std::to_string(t) + "]", b.dx[t], c.grad_x[t]);
  cmp("grad h0", b.dh0, c.grad_h0);
  if (lstm) cmp("grad c0", b.dc0, c.grad_c0);
  std::printf("%s vs torch: forward + backward, max error %.3e (tolerance %.0e)\n",
              cell_name(c.pr.p.cell), cmp.worst(), kTol);
  ::testing::Test::RecordProperty("max_error", std::to_string(cmp.worst()));
}

template <class Opt, class Options>
void check_optimizer(const TorchCase& c, const std::string& name, const Options& options) {
  Problem<double> pr = c.pr;
  Opt opt(options);
  for (int k = 0; k < torch_ref::kOptSteps; ++k) opt.step(pr.p, gradients(pr).grad);
  Compare cmp;
  cmp.params(name, pr.p, c.after.at(name));
  std::printf("%s vs torch: %s, %d steps, max error %.3e (tolerance %.0e)\n",
              cell_name(c.pr.p.cell), name.c_str(), torch_ref::kOptSteps, cmp.worst(), kTol);
  // The step really moved the parameters (the comparison is not vacuous).
  EXPECT_GT((pr.p.w_hh - c.pr.p.w_hh).cwiseAbs().maxCoeff(), 1e-3) << name;
}

void check_optimizers(const TorchCase& c) {
  for (const auto& [name, o] : kSgd) check_optimizer<Sgd<double>>(c, name, o);
  for (const auto& [name, o] : kAdam) check_optimizer<Adam<double>>(c, name, o);
}

TEST(GoldenTorch, LstmForwardBackward) {
  check_forward_backward(lstm_case());
}
TEST(GoldenTorch, GruForwardBackward) {
  check_forward_backward(gru_case());
}
TEST(GoldenTorch, LstmOptimizers) {
  check_optimizers(lstm_case());
}
TEST(GoldenTorch, GruOptimizers) {
  check_optimizers(gru_case());
}

}  // namespace
}  // namespace farnn::golden::testing
