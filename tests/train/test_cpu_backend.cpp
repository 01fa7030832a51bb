// CpuBackend against plain double-precision loops: GEMM in every transpose
// combination with padded strides, row moves, sums, the optimizers
// (torch.optim formulas) and the losses (their gradients by central differences).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "farnn/backend.hpp"
#include "test_seed.hpp"

namespace {

using namespace farnn::train;

std::vector<float> random_vec(size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

TEST(CpuBackend, GemmEveryTransposeWithStrides) {
  auto be = make_cpu_backend(2);
  farnn::test::SeededRng rng(3);
  const int m = 5, n = 7, k = 4, pad = 3;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      const int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
      const int lda = a_cols + pad, ldb = b_cols + pad, ldc = n + pad;
      const auto a = random_vec(static_cast<size_t>(a_rows) * lda, rng);
      const auto b = random_vec(static_cast<size_t>(b_rows) * ldb, rng);
      auto c = random_vec(static_cast<size_t>(m) * ldc, rng);
      const auto c0 = c;
      be->gemm(ta, tb, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, 2.0f, c.data(), ldc);
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
          double s = 0;
          for (int p = 0; p < k; ++p) {
            s += static_cast<double>(ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
          }
          EXPECT_NEAR(c[i * ldc + j], 0.5 * s + 2.0 * c0[i * ldc + j], 1e-5) << ta << tb << " " << i << "," << j;
        }
        for (int j = n; j < ldc; ++j) EXPECT_EQ(c[i * ldc + j], c0[i * ldc + j]) << "padding written";
      }
    }
  }
}

TEST(CpuBackend, RowMovesAndSums) {
  auto be = make_cpu_backend(1);
  const std::vector<float> src = {1, 2, 3, 10, 20, 30, 100, 200, 300};  // 3 rows of 3
  std::vector<float> dst(8, 7.0f);                                      // 2 rows of stride 4
  const int index[2] = {2, -1};
  be->copy_rows(src.data(), 3, dst.data(), 4, 2, 2, index, 0.0f);
  EXPECT_EQ(dst, (std::vector<float>{100, 200, 7, 7, 0, 0, 7, 7}));
  be->copy_rows(src.data(), 3, dst.data(), 4, 2, 2, nullptr, 1.0f);
  EXPECT_EQ(dst, (std::vector<float>{101, 202, 7, 7, 10, 20, 7, 7}));
  std::vector<float> sums = {1, 1, 1};
  be->column_sums(src.data(), 3, 3, 3, sums.data(), 1.0f);
  EXPECT_EQ(sums, (std::vector<float>{112, 223, 334}));
  std::vector<float> c = {0, 0, 0, 0};
  const float bias[2] = {1, 2};
  be->add_row_vector(c.data(), 2, 2, 2, bias);
  EXPECT_EQ(c, (std::vector<float>{1, 2, 1, 2}));
  EXPECT_DOUBLE_EQ(be->sum_squares(src.data(), 3), 14.0);
}

TEST(CpuBackend, OptimizersFollowTorchFormulas) {
  auto be = make_cpu_backend(1);
  farnn::test::SeededRng rng(8);
  const size_t n = 6;
  auto p = random_vec(n, rng);
  std::vector<double> ref(p.begin(), p.end()), buf(n, 0);
  std::vector<float> mom(n, 0);
  const SgdConfig sgd{0.1f, 0.9f};
  for (int step = 1; step <= 4; ++step) {
    const auto g = random_vec(n, rng);
    be->sgd_step(p.data(), g.data(), mom.data(), n, sgd, step == 1);
    for (size_t i = 0; i < n; ++i) {
      buf[i] = step == 1 ? g[i] : 0.9 * buf[i] + g[i];
      ref[i] -= 0.1 * buf[i];
      EXPECT_NEAR(p[i], ref[i], 1e-6) << "sgd step " << step;
    }
  }
  auto q = random_vec(n, rng);
  std::vector<double> rq(q.begin(), q.end()), m(n, 0), v(n, 0);
  std::vector<float> fm(n, 0), fv(n, 0);
  const AdamConfig adam{0.01f, 0.9f, 0.999f, 1e-8f};
  for (int step = 1; step <= 5; ++step) {
    const auto g = random_vec(n, rng);
    be->adam_step(q.data(), g.data(), fm.data(), fv.data(), n, adam, step);
    for (size_t i = 0; i < n; ++i) {
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
      const double mh = m[i] / (1 - std::pow(0.9, step)), vh = v[i] / (1 - std::pow(0.999, step));
      rq[i] -= 0.01 * mh / (std::sqrt(vh) + 1e-8);
      EXPECT_NEAR(q[i], rq[i], 1e-5) << "adam step " << step;
    }
  }
}

TEST(CpuBackend, LossGradientsMatchCentralDifferences) {
  auto be = make_cpu_backend(1);
  farnn::test::SeededRng rng(4);
  auto y = random_vec(6, rng);
  const auto t = random_vec(6, rng);
  std::vector<float> dy(6), scratch(6);
  be->mse(y.data(), t.data(), 6, dy.data(), 1.0f);
  const std::vector<float> labels = {2, 0};  // 2 rows of 3 classes
  std::vector<float> dz(6);
  be->cross_entropy(y.data(), labels.data(), 2, 3, dz.data(), 1.0f);
  for (size_t i = 0; i < 6; ++i) {
    const float h = 1e-2f, keep = y[i];
    y[i] = keep + h;
    const double mp = be->mse(y.data(), t.data(), 6, scratch.data(), 1.0f);
    const double cp = be->cross_entropy(y.data(), labels.data(), 2, 3, scratch.data(), 1.0f);
    y[i] = keep - h;
    const double mm = be->mse(y.data(), t.data(), 6, scratch.data(), 1.0f);
    const double cm = be->cross_entropy(y.data(), labels.data(), 2, 3, scratch.data(), 1.0f);
    y[i] = keep;
    EXPECT_NEAR(dy[i], (mp - mm) / (2 * h), 1e-3) << "mse " << i;
    EXPECT_NEAR(dz[i], (cp - cm) / (2 * h), 1e-3) << "cross-entropy " << i;
  }
  const std::vector<float> bad = {3, 0};
  EXPECT_THROW(be->cross_entropy(y.data(), bad.data(), 2, 3, dz.data(), 1.0f), std::invalid_argument);
}

}  // namespace
