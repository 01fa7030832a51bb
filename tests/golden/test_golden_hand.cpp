// Hand-checked tiny cases: input 1, hidden 1, batch 1, T = 1 and 2. The
// expected outputs and gradients are computed here by scalar formulas written
// out by hand (plain doubles, no Eigen), independent of the model's code.
// Tolerance: 1e-14 absolute on values of order one (the two computations
// differ only in rounding, a few ulps).
#include <gtest/gtest.h>

#include <cmath>

#include "golden_test_util.hpp"

namespace farnn::golden::testing {
namespace {

constexpr double kTol = 1e-14;

double sig(double a) {
  return 1.0 / (1.0 + std::exp(-a));
}

// Scalar layer: w_ih, w_hh, b_ih, b_hh have one entry per gate.
struct Scalar {
  double wi[4], wh[4], bi[4], bh[4];
};

LayerParams<double> to_params(CellType cell, const Scalar& s) {
  const int gates = gate_count(cell);
  LayerParams<double> p = LayerParams<double>::zeros(cell, 1, 1);
  for (int k = 0; k < gates; ++k) {
    p.w_ih(k, 0) = s.wi[k];
    p.w_hh(k, 0) = s.wh[k];
    p.b_ih(k) = s.bi[k];
    p.b_hh(k) = s.bh[k];
  }
  return p;
}

MatD m1(double v) {
  return MatD::Constant(1, 1, v);
}

// Zero weights and biases: every sigmoid gate is exactly 1/2 and tanh(0) = 0.
TEST(GoldenHand, LstmZeroWeights) {
  const auto p = LayerParams<double>::zeros(CellType::kLstm, 1, 1);
  const auto f = forward(p, {m1(0.7)}, m1(0.3), m1(1.0));
  // c1 = 0.5 * 1 + 0.5 * tanh(0) = 0.5, h1 = 0.5 * tanh(0.5)
  EXPECT_DOUBLE_EQ(f.c_final(0, 0), 0.5);
  EXPECT_NEAR(f.h_final(0, 0), 0.23105857863000487, kTol);
  EXPECT_NEAR(f.cache.gates[0](0, 0), 0.5, kTol);
  EXPECT_NEAR(f.cache.gates[0](2, 0), 0.0, kTol);
}

TEST(GoldenHand, GruZeroWeights) {
  const auto p = LayerParams<double>::zeros(CellType::kGru, 1, 1);
  const auto f = forward(p, {m1(0.7)}, m1(0.3));
  // r = z = 0.5, n = tanh(0) = 0, h1 = 0.5 * 0 + 0.5 * 0.3
  EXPECT_NEAR(f.h_final(0, 0), 0.15, kTol);
  EXPECT_EQ(f.c_final.size(), 0);
}

// ---------------------------------------------------------------------------
// LSTM, scalar formulas.

const Scalar kLstm = {
    {0.6, -0.4, 0.9, 0.3}, {-0.5, 0.7, 0.2, -0.8}, {0.1, 0.5, -0.3, 0.2}, {-0.2, 0.3, 0.4, -0.1}};

struct LstmStep {
  double x, h, c;     // inputs of the step
  double i, f, g, o;  // gates
  double c1, h1;      // new state
};

LstmStep lstm_step(const Scalar& s, double x, double h, double c) {
  LstmStep st{x, h, c, 0, 0, 0, 0, 0, 0};
  st.i = sig(s.wi[0] * x + s.bi[0] + s.wh[0] * h + s.bh[0]);
  st.f = sig(s.wi[1] * x + s.bi[1] + s.wh[1] * h + s.bh[1]);
  st.g = std::tanh(s.wi[2] * x + s.bi[2] + s.wh[2] * h + s.bh[2]);
  st.o = sig(s.wi[3] * x + s.bi[3] + s.wh[3] * h + s.bh[3]);
  st.c1 = st.f * c + st.i * st.g;
  st.h1 = st.o * std::tanh(st.c1);
  return st;
}

struct LstmGrad {
  double dpre[4];     // d/d pre-activation of i, f, g, o
  double dx, dh, dc;  // gradients flowing to x, h, c of the step
};

// dh1, dc1: total gradient arriving at the step's outputs h1, c1.
LstmGrad lstm_step_back(const Scalar& s, const LstmStep& st, double dh1, double dc1) {
  LstmGrad g{};
  const double tc = std::tanh(st.c1);
  const double dc = dc1 + dh1 * st.o * (1 - tc * tc);  // total dL/dc1
  g.dpre[0] = dc * st.g * st.i * (1 - st.i);           // dL/di * sigma'
  g.dpre[1] = dc * st.c * st.f * (1 - st.f);           // dL/df * sigma'
  g.dpre[2] = dc * st.i * (1 - st.g * st.g);           // dL/dg * tanh'
  g.dpre[3] = dh1 * tc * st.o * (1 - st.o);            // dL/do * sigma'
  g.dx = s.wi[0] * g.dpre[0] + s.wi[1] * g.dpre[1] + s.wi[2] * g.dpre[2] + s.wi[3] * g.dpre[3];
  g.dh = s.wh[0] * g.dpre[0] + s.wh[1] * g.dpre[1] + s.wh[2] * g.dpre[2] + s.wh[3] * g.dpre[3];
  g.dc = dc * st.f;
  return g;
}

TEST(GoldenHand, LstmOneStep) {
  const double x = 0.8, h0 = -0.3, c0 = 0.6;
  const double g_out = 0.7, g_h = -0.4, g_c = 0.9;  // L = g_out h1 + g_h h1 + g_c c1
  const LstmStep st = lstm_step(kLstm, x, h0, c0);
  const LstmGrad gr = lstm_step_back(kLstm, st, g_out + g_h, g_c);

  const auto p = to_params(CellType::kLstm, kLstm);
  const auto f = forward(p, {m1(x)}, m1(h0), m1(c0));
  EXPECT_NEAR(f.h[0](0, 0), st.h1, kTol);
  EXPECT_NEAR(f.h_final(0, 0), st.h1, kTol);
  EXPECT_NEAR(f.c_final(0, 0), st.c1, kTol);
  const double gates[4] = {st.i, st.f, st.g, st.o};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(f.cache.gates[0](k, 0), gates[k], kTol) << "gate " << k;

  const auto b = backward(f.cache, {m1(g_out)}, m1(g_h), m1(g_c));
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(b.dpre_ih[0](k, 0), gr.dpre[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.dpre_hh[0](k, 0), gr.dpre[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.w_ih(k, 0), gr.dpre[k] * x, kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.w_hh(k, 0), gr.dpre[k] * h0, kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.b_ih(k), gr.dpre[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.b_hh(k), gr.dpre[k], kTol) << "gate " << k;
  }
  EXPECT_NEAR(b.dx[0](0, 0), gr.dx, kTol);
  EXPECT_NEAR(b.dh0(0, 0), gr.dh, kTol);
  EXPECT_NEAR(b.dc0(0, 0), gr.dc, kTol);
}

TEST(GoldenHand, LstmTwoSteps) {
  const double x[2] = {0.8, -0.5}, h0 = -0.3, c0 = 0.6;
  const double g_out[2] = {0.7, -0.2}, g_h = -0.4, g_c = 0.9;
  const LstmStep s1 = lstm_step(kLstm, x[0], h0, c0);
  const LstmStep s2 = lstm_step(kLstm, x[1], s1.h1, s1.c1);
  const LstmGrad g2 = lstm_step_back(kLstm, s2, g_out[1] + g_h, g_c);
  const LstmGrad g1 = lstm_step_back(kLstm, s1, g_out[0] + g2.dh, g2.dc);

  const auto p = to_params(CellType::kLstm, kLstm);
  const auto f = forward(p, {m1(x[0]), m1(x[1])}, m1(h0), m1(c0));
  EXPECT_NEAR(f.h[0](0, 0), s1.h1, kTol);
  EXPECT_NEAR(f.h[1](0, 0), s2.h1, kTol);
  EXPECT_NEAR(f.c_final(0, 0), s2.c1, kTol);
  EXPECT_NEAR(f.cache.c[1](0, 0), s1.c1, kTol);

  const auto b = backward(f.cache, {m1(g_out[0]), m1(g_out[1])}, m1(g_h), m1(g_c));
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(b.dpre_ih[0](k, 0), g1.dpre[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.dpre_ih[1](k, 0), g2.dpre[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.w_ih(k, 0), g1.dpre[k] * x[0] + g2.dpre[k] * x[1], kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.w_hh(k, 0), g1.dpre[k] * h0 + g2.dpre[k] * s1.h1, kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.b_ih(k), g1.dpre[k] + g2.dpre[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.b_hh(k), g1.dpre[k] + g2.dpre[k], kTol) << "gate " << k;
  }
  EXPECT_NEAR(b.dx[0](0, 0), g1.dx, kTol);
  EXPECT_NEAR(b.dx[1](0, 0), g2.dx, kTol);
  EXPECT_NEAR(b.dh0(0, 0), g1.dh, kTol);
  EXPECT_NEAR(b.dc0(0, 0), g1.dc, kTol);
}

// ---------------------------------------------------------------------------
// GRU, scalar formulas (PyTorch form: reset gate applied to W_hn h + b_hn).

const Scalar kGru = {
    {0.6, -0.4, 0.9, 0}, {-0.5, 0.7, 0.8, 0}, {0.1, 0.5, -0.3, 0}, {-0.2, 0.3, 0.4, 0}};

struct GruStep {
  double x, h;
  double r, z, n, hn;  // gates and hn = w_hn h + b_hn
  double h1;
};

GruStep gru_step(const Scalar& s, double x, double h) {
  GruStep st{x, h, 0, 0, 0, 0, 0};
  st.r = sig(s.wi[0] * x + s.bi[0] + s.wh[0] * h + s.bh[0]);
  st.z = sig(s.wi[1] * x + s.bi[1] + s.wh[1] * h + s.bh[1]);
  st.hn = s.wh[2] * h + s.bh[2];
  st.n = std::tanh(s.wi[2] * x + s.bi[2] + st.r * st.hn);
  st.h1 = (1 - st.z) * st.n + st.z * st.h;
  return st;
}

struct GruGrad {
  double dpre[3];  // d/d pre-activation of r, z, n
  double dhn;      // d/d hn = dpre_n * r
  double dx, dh;
};

GruGrad gru_step_back(const Scalar& s, const GruStep& st, double dh1) {
  GruGrad g{};
  const double dn = dh1 * (1 - st.z);
  const double dz = dh1 * (st.h - st.n);
  g.dpre[2] = dn * (1 - st.n * st.n);
  g.dhn = g.dpre[2] * st.r;
  g.dpre[0] = g.dpre[2] * st.hn * st.r * (1 - st.r);
  g.dpre[1] = dz * st.z * (1 - st.z);
  g.dx = s.wi[0] * g.dpre[0] + s.wi[1] * g.dpre[1] + s.wi[2] * g.dpre[2];
  g.dh = dh1 * st.z + s.wh[0] * g.dpre[0] + s.wh[1] * g.dpre[1] + s.wh[2] * g.dhn;
  return g;
}

TEST(GoldenHand, GruOneStep) {
  const double x = 0.8, h0 = -0.3;
  const double g_out = 0.7, g_h = -0.4;
  const GruStep st = gru_step(kGru, x, h0);
  const GruGrad gr = gru_step_back(kGru, st, g_out + g_h);

  const auto p = to_params(CellType::kGru, kGru);
  const auto f = forward(p, {m1(x)}, m1(h0));
  EXPECT_NEAR(f.h_final(0, 0), st.h1, kTol);
  EXPECT_NEAR(f.cache.gates[0](0, 0), st.r, kTol);
  EXPECT_NEAR(f.cache.gates[0](1, 0), st.z, kTol);
  EXPECT_NEAR(f.cache.gates[0](2, 0), st.n, kTol);
  EXPECT_NEAR(f.cache.hn(0)(0, 0), st.hn, kTol);

  const auto b = backward(f.cache, {m1(g_out)}, m1(g_h));
  const double dhh[3] = {gr.dpre[0], gr.dpre[1], gr.dhn};
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(b.dpre_ih[0](k, 0), gr.dpre[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.dpre_hh[0](k, 0), dhh[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.w_ih(k, 0), gr.dpre[k] * x, kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.w_hh(k, 0), dhh[k] * h0, kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.b_ih(k), gr.dpre[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.b_hh(k), dhh[k], kTol) << "gate " << k;
  }
  EXPECT_NEAR(b.dhn(0)(0, 0), gr.dhn, kTol);
  EXPECT_NEAR(b.dx[0](0, 0), gr.dx, kTol);
  EXPECT_NEAR(b.dh0(0, 0), gr.dh, kTol);
  EXPECT_EQ(b.dc0.size(), 0);
}

TEST(GoldenHand, GruTwoSteps) {
  const double x[2] = {0.8, -0.5}, h0 = -0.3;
  const double g_out[2] = {0.7, -0.2}, g_h = -0.4;
  const GruStep s1 = gru_step(kGru, x[0], h0);
  const GruStep s2 = gru_step(kGru, x[1], s1.h1);
  const GruGrad g2 = gru_step_back(kGru, s2, g_out[1] + g_h);
  const GruGrad g1 = gru_step_back(kGru, s1, g_out[0] + g2.dh);

  const auto p = to_params(CellType::kGru, kGru);
  const auto f = forward(p, {m1(x[0]), m1(x[1])}, m1(h0));
  EXPECT_NEAR(f.h[0](0, 0), s1.h1, kTol);
  EXPECT_NEAR(f.h[1](0, 0), s2.h1, kTol);

  const auto b = backward(f.cache, {m1(g_out[0]), m1(g_out[1])}, m1(g_h));
  const double dhh1[3] = {g1.dpre[0], g1.dpre[1], g1.dhn};
  const double dhh2[3] = {g2.dpre[0], g2.dpre[1], g2.dhn};
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(b.dpre_ih[0](k, 0), g1.dpre[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.dpre_ih[1](k, 0), g2.dpre[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.dpre_hh[1](k, 0), dhh2[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.w_ih(k, 0), g1.dpre[k] * x[0] + g2.dpre[k] * x[1], kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.w_hh(k, 0), dhh1[k] * h0 + dhh2[k] * s1.h1, kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.b_ih(k), g1.dpre[k] + g2.dpre[k], kTol) << "gate " << k;
    EXPECT_NEAR(b.grad.b_hh(k), dhh1[k] + dhh2[k], kTol) << "gate " << k;
  }
  EXPECT_NEAR(b.dx[0](0, 0), g1.dx, kTol);
  EXPECT_NEAR(b.dx[1](0, 0), g2.dx, kTol);
  EXPECT_NEAR(b.dh0(0, 0), g1.dh, kTol);
}

// ---------------------------------------------------------------------------
// Optimizers on a 1x1 layer, update rules written out by hand.

TEST(GoldenHand, SgdPlainAndMomentum) {
  auto p = LayerParams<double>::zeros(CellType::kGru, 1, 1);
  p.w_ih(0, 0) = 0.5;
  auto g = LayerGrads<double>::zeros_like(p);
  g.w_ih(0, 0) = 0.2;

  auto q = p;
  Sgd<double> plain({.lr = 0.1, .weight_decay = 0.01});
  plain.step(q, g);
  EXPECT_NEAR(q.w_ih(0, 0), 0.5 - 0.1 * (0.2 + 0.01 * 0.5), kTol);

  // momentum 0.9, dampening 0.5: buf1 = g1, buf2 = 0.9 buf1 + 0.5 g2.
  Sgd<double> mom({.lr = 0.1, .momentum = 0.9, .dampening = 0.5});
  mom.step(p, g);
  const double p1 = 0.5 - 0.1 * 0.2;
  EXPECT_NEAR(p.w_ih(0, 0), p1, kTol);
  g.w_ih(0, 0) = -0.3;
  mom.step(p, g);
  EXPECT_NEAR(p.w_ih(0, 0), p1 - 0.1 * (0.9 * 0.2 + 0.5 * -0.3), kTol);
  EXPECT_EQ(mom.steps(), 2);
}

TEST(GoldenHand, AdamTwoSteps) {
  auto p = LayerParams<double>::zeros(CellType::kGru, 1, 1);
  p.w_hh(1, 0) = 0.5;
  auto g = LayerGrads<double>::zeros_like(p);
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.1;
  Adam<double> adam({.lr = lr, .beta1 = b1, .beta2 = b2, .eps = eps, .weight_decay = wd});

  double w = 0.5, m = 0, v = 0;
  const double grads[2] = {0.3, -0.05};
  for (int k = 1; k <= 2; ++k) {
    g.w_hh(1, 0) = grads[k - 1];
    adam.step(p, g);
    const double gk = grads[k - 1] + wd * w;
    m = b1 * m + (1 - b1) * gk;
    v = b2 * v + (1 - b2) * gk * gk;
    const double m_hat = m / (1 - std::pow(b1, k));
    const double v_hat = v / (1 - std::pow(b2, k));
    // Textbook form; the model computes sqrt(v) / sqrt(1 - b2^k) + eps as
    // PyTorch does, equal up to rounding.
    w -= lr * m_hat / (std::sqrt(v_hat) + eps);
    EXPECT_NEAR(p.w_hh(1, 0), w, kTol) << "step " << k;
  }
  // Entries with zero gradient and zero weight stay put.
  EXPECT_EQ(p.w_ih(0, 0), 0.0);
}

}  // namespace
}  // namespace farnn::golden::testing
