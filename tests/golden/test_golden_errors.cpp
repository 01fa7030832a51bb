// Argument checking: every size mismatch at the golden model's entry points
// throws std::invalid_argument whose message names the argument and the
// expected shape. Also the small API pieces (gate_count, random, cast).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "golden_test_util.hpp"
#include "test_seed.hpp"

namespace farnn::golden::testing {
namespace {

constexpr int kI = 3, kH = 5, kT = 4, kB = 2;

// Runs f, expects std::invalid_argument, and checks that its message
// contains every one of `parts`.
void expect_invalid(const std::function<void()>& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "expected std::invalid_argument, nothing was thrown";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    for (const auto& part : parts) {
      EXPECT_NE(msg.find(part), std::string::npos)
          << "message \"" << msg << "\" does not contain \"" << part << "\"";
    }
  }
}

class GoldenErrors : public ::testing::TestWithParam<CellType> {
 protected:
  Problem<double> pr = random_problem(GetParam(), kI, kH, kT, kB, 5);
};

TEST_P(GoldenErrors, WrongInputRows) {
  pr.x[2] = MatD::Zero(kI + 1, kB);
  expect_invalid([&] { forward(pr.p, pr.x, pr.h0, pr.c0); },
                 {"forward", "x[2]", "is 4x2", "expected 3x2"});
}

TEST_P(GoldenErrors, WrongInputBatch) {
  pr.x[1] = MatD::Zero(kI, kB + 1);
  expect_invalid([&] { forward(pr.p, pr.x, pr.h0, pr.c0); }, {"x[1]", "expected 3x2"});
}

TEST_P(GoldenErrors, EmptySequence) {
  expect_invalid([&] { forward(pr.p, std::vector<MatD>{}, pr.h0, pr.c0); },
                 {"x is empty", "at least one time step"});
}

TEST_P(GoldenErrors, WrongH0Shape) {
  expect_invalid([&] { forward(pr.p, pr.x, MatD::Zero(kH, kB + 1), pr.c0); },
                 {"h0", "is 5x3", "expected 5x2"});
  expect_invalid([&] { forward(pr.p, pr.x, MatD::Zero(kB, kH), pr.c0); },
                 {"h0", "is 2x5", "expected 5x2"});
}

TEST_P(GoldenErrors, WrongParameterShape) {
  pr.p.w_hh = MatD::Zero(kH, kH);
  const std::string rows = std::to_string(gate_count(GetParam()) * kH);
  expect_invalid([&] { forward(pr.p, pr.x, pr.h0, pr.c0); },
                 {"w_hh", "is 5x5", "expected " + rows + "x5"});
}

TEST_P(GoldenErrors, WrongNumberOfDhSteps) {
  const auto f = forward(pr.p, pr.x, pr.h0, pr.c0);
  std::vector<MatD> dh = pr.g;
  dh.pop_back();
  expect_invalid([&] { backward(f.cache, dh, pr.g_h, pr.g_c); },
                 {"backward", "dh has 3 time steps", "expected T = 4"});
  dh = pr.g;
  dh.push_back(pr.g[0]);
  expect_invalid([&] { backward(f.cache, dh, pr.g_h, pr.g_c); },
                 {"dh has 5 time steps", "expected T = 4"});
}

TEST_P(GoldenErrors, WrongDhShape) {
  const auto f = forward(pr.p, pr.x, pr.h0, pr.c0);
  std::vector<MatD> dh = pr.g;
  dh[3] = MatD::Zero(kH + 2, kB);
  expect_invalid([&] { backward(f.cache, dh, pr.g_h, pr.g_c); },
                 {"dh[3]", "is 7x2", "expected 5x2"});
  expect_invalid([&] { backward(f.cache, pr.g, MatD::Zero(1, 1), pr.g_c); },
                 {"dh_final", "is 1x1", "expected 5x2"});
}

TEST_P(GoldenErrors, EmptyCache) {
  ForwardCache<double> cache;
  cache.params = pr.p;
  expect_invalid([&] { backward(cache, pr.g); }, {"cache", "forward()"});
}

TEST_P(GoldenErrors, OptimizerGradShape) {
  auto g = LayerGrads<double>::zeros_like(pr.p);
  g.b_hh = Vec<double>::Zero(3);
  const std::string rows = std::to_string(gate_count(GetParam()) * kH);
  Sgd<double> sgd({.lr = 0.1});
  expect_invalid([&] { sgd.step(pr.p, g); }, {"Sgd::step", "grad.b_hh", "expected " + rows + "x1"});
  Adam<double> adam({});
  expect_invalid([&] { adam.step(pr.p, g); }, {"Adam::step", "grad.b_hh"});
}

TEST_P(GoldenErrors, OptimizerStateBelongsToOneLayer) {
  Adam<double> adam({});
  adam.step(pr.p, LayerGrads<double>::zeros_like(pr.p));
  auto other = LayerParams<double>::zeros(GetParam(), kI + 1, kH);
  expect_invalid([&] { adam.step(other, LayerGrads<double>::zeros_like(other)); },
                 {"optimizer state", "one optimizer per layer"});
}

INSTANTIATE_TEST_SUITE_P(Cells, GoldenErrors, ::testing::Values(CellType::kLstm, CellType::kGru),
                         [](const auto& info) { return std::string(cell_name(info.param)); });

TEST(GoldenErrorsLstm, WrongC0Shape) {
  Problem<double> pr = random_problem(CellType::kLstm, kI, kH, kT, kB, 6);
  expect_invalid([&] { forward(pr.p, pr.x, pr.h0, MatD::Zero(kH - 1, kB)); },
                 {"c0", "is 4x2", "expected 5x2"});
  const auto f = forward(pr.p, pr.x, pr.h0, pr.c0);
  expect_invalid([&] { backward(f.cache, pr.g, pr.g_h, MatD::Zero(kH, 1)); },
                 {"dc_final", "expected 5x2"});
}

TEST(GoldenErrorsOptions, InvalidOptimizerOptions) {
  expect_invalid([] { Sgd<double>({.lr = -1.0}); }, {"lr must be >= 0"});
  expect_invalid([] { Sgd<double>({.lr = 0.1, .nesterov = true}); }, {"nesterov"});
  expect_invalid([] { Adam<float>({.beta2 = 1.0}); }, {"beta2 must be in [0, 1)"});
  expect_invalid([] { Adam<double>({.eps = -1e-8}); }, {"eps"});
  expect_invalid([] { LayerParams<double>::zeros(CellType::kGru, 0, 4); }, {"input_size"});
}

// --- small API checks -------------------------------------------------------

TEST(GoldenApi, GateCount) {
  EXPECT_EQ(gate_count(CellType::kLstm), 4);
  EXPECT_EQ(gate_count(CellType::kGru), 3);
}

TEST(GoldenApi, RandomInitIsPyTorchLikeAndReproducible) {
  std::mt19937_64 a(42), b(42);
  const auto p = LayerParams<double>::random(CellType::kLstm, 7, 16, a);
  const auto q = LayerParams<double>::random(CellType::kLstm, 7, 16, b);
  EXPECT_EQ(p.w_ih, q.w_ih);
  EXPECT_EQ(p.b_hh, q.b_hh);
  EXPECT_EQ(p.w_ih.rows(), 64);
  EXPECT_EQ(p.w_ih.cols(), 7);
  EXPECT_EQ(p.w_hh.cols(), 16);
  const double k = 1.0 / std::sqrt(16.0);
  for (const MatD& m : {p.w_ih, p.w_hh, MatD(p.b_ih), MatD(p.b_hh)}) {
    EXPECT_LE(m.cwiseAbs().maxCoeff(), k);
    EXPECT_GT(m.cwiseAbs().maxCoeff(), 0.9 * k);  // the range is actually used
  }
  std::mt19937_64 c(42);
  const auto s = LayerParams<double>::random(CellType::kLstm, 7, 16, c, 0.5);
  EXPECT_TRUE(s.w_ih.isApprox(0.5 * p.w_ih, 1e-15));
}

TEST(GoldenApi, CastRoundTrip) {
  farnn::test::SeededRng rng(1);
  const auto p = LayerParams<double>::random(CellType::kGru, 4, 6, rng);
  const LayerParams<float> f = p.cast<float>();
  EXPECT_EQ(f.cell, CellType::kGru);
  EXPECT_EQ(f.input_size, 4);
  EXPECT_EQ(f.hidden_size, 6);
  EXPECT_EQ(f.w_hh.cast<double>(), p.w_hh.cast<float>().cast<double>());
  const LayerParams<double> back = f.cast<double>();
  EXPECT_LE((back.w_ih - p.w_ih).cwiseAbs().maxCoeff(), 1e-7);
}

TEST(GoldenApi, EmptyStateMeansZero) {
  for (CellType cell : {CellType::kLstm, CellType::kGru}) {
    Problem<double> pr = random_problem(cell, kI, kH, kT, kB, 9);
    const auto a = forward(pr.p, pr.x);
    const auto b = forward(pr.p, pr.x, MatD::Zero(kH, kB), MatD::Zero(kH, kB));
    EXPECT_EQ(a.h_final, b.h_final) << cell_name(cell);
    const auto da = backward(a.cache, pr.g);
    const auto db = backward(b.cache, pr.g, MatD::Zero(kH, kB), MatD::Zero(kH, kB));
    EXPECT_EQ(da.grad.w_hh, db.grad.w_hh) << cell_name(cell);
    EXPECT_EQ(da.dh0, db.dh0) << cell_name(cell);
  }
}

// The per-step gradients reassemble the weight gradients (the GPU's GEMMs).
TEST(GoldenApi, PreActivationGradientsComposeWeightGradients) {
  for (CellType cell : {CellType::kLstm, CellType::kGru}) {
    Problem<double> pr = random_problem(cell, kI, kH, kT, kB, 11);
    const auto f = forward(pr.p, pr.x, pr.h0, pr.c0);
    const auto b = backward(f.cache, pr.g, pr.g_h, pr.g_c);
    MatD dw_ih = MatD::Zero(pr.p.w_ih.rows(), kI), dw_hh = MatD::Zero(pr.p.w_hh.rows(), kH);
    for (int t = 0; t < kT; ++t) {
      dw_ih += b.dpre_ih[t] * f.cache.x[t].transpose();
      dw_hh += b.dpre_hh[t] * f.cache.h[t].transpose();
      EXPECT_TRUE((pr.p.w_ih.transpose() * b.dpre_ih[t]).isApprox(b.dx[t], 1e-14));
    }
    EXPECT_TRUE(dw_ih.isApprox(b.grad.w_ih, 1e-14)) << cell_name(cell);
    EXPECT_TRUE(dw_hh.isApprox(b.grad.w_hh, 1e-14)) << cell_name(cell);
    if (cell == CellType::kLstm) {
      for (int t = 0; t < kT; ++t) EXPECT_EQ(b.dpre_ih[t], b.dpre_hh[t]);
    } else {
      for (int t = 0; t < kT; ++t) {
        const MatD r = f.cache.gates[t].topRows(kH);
        const MatD dn = b.dpre_ih[t].bottomRows(kH);
        EXPECT_TRUE(b.dhn(t).isApprox(dn.cwiseProduct(r), 1e-15));
        EXPECT_EQ(b.dpre_ih[t].topRows(2 * kH), b.dpre_hh[t].topRows(2 * kH));
      }
    }
  }
}

}  // namespace
}  // namespace farnn::golden::testing
