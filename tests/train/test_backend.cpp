// Every compute backend against plain double-precision loops: GEMM in every
// transpose combination with padded strides, row moves, sums, the optimizers
// (torch.optim formulas) and the losses (their gradients by central
// differences); operands in the backend's memory (Array). Run on the CPU
// backend, on the CPU backend with memory of its own (which fails any operand
// outside its allocations), and on the CUDA backend, which skips with the
// reason where this build or machine has none. The CUDA backend must also
// equal the CPU backend bit for bit where both compute in the same order.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends_under_test.hpp"
#include "farnn/backend.hpp"
#include "test_seed.hpp"

namespace {

using namespace farnn::train;

class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "cpu") {
      be_ = make_cpu_backend(1);
    } else if (GetParam() == "own_memory") {
      be_ = std::make_unique<farnn::test::OwnMemoryBackend>();
    } else {
      std::string why;
      be_ = farnn::test::cuda_backend_if_present(&why);
      if (!be_) GTEST_SKIP() << "CUDA backend not run: " << why;
    }
  }
  Array random_array(size_t n, std::mt19937_64& rng) {
    std::uniform_real_distribution<float> u(-1, 1);
    Array a(*be_, n);
    for (float& x : a) x = u(rng);
    return a;
  }
  Array array(const std::vector<float>& v) { return Array(*be_, v); }
  std::unique_ptr<Backend> be_;
};

TEST_P(BackendTest, GemmEveryTransposeWithStrides) {
  farnn::test::SeededRng rng(3);
  const int m = 5, n = 7, k = 4, pad = 3;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      const int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
      const int lda = a_cols + pad, ldb = b_cols + pad, ldc = n + pad;
      const Array a = random_array(static_cast<size_t>(a_rows) * lda, rng);
      const Array b = random_array(static_cast<size_t>(b_rows) * ldb, rng);
      Array c = random_array(static_cast<size_t>(m) * ldc, rng);
      const std::vector<float> c0 = c.to_vector();
      be_->gemm(ta, tb, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, 2.0f, c.data(), ldc);
      be_->synchronize();
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
          double s = 0;
          for (int p = 0; p < k; ++p) {
            s += static_cast<double>(ta ? a[p * lda + i] : a[i * lda + p]) *
                 (tb ? b[j * ldb + p] : b[p * ldb + j]);
          }
          EXPECT_NEAR(c[i * ldc + j], 0.5 * s + 2.0 * c0[i * ldc + j], 1e-5)
              << ta << tb << " " << i << "," << j;
        }
        for (int j = n; j < ldc; ++j)
          EXPECT_EQ(c[i * ldc + j], c0[i * ldc + j]) << "padding written";
      }
    }
  }
  // beta = 0 ignores what C held (NaN included); k = 0 leaves beta * C.
  Array c(*be_, 4);
  c.fill(std::nanf(""));
  const Array one = array({1, 2}), two = array({3, 4});
  be_->gemm(false, false, 2, 2, 1, 1.0f, one.data(), 1, two.data(), 2, 0.0f, c.data(), 2);
  be_->synchronize();
  EXPECT_EQ(c.to_vector(), (std::vector<float>{3, 4, 6, 8}));
  be_->gemm(false, false, 2, 2, 0, 1.0f, one.data(), 1, two.data(), 2, 0.5f, c.data(), 2);
  be_->synchronize();
  EXPECT_EQ(c.to_vector(), (std::vector<float>{1.5f, 2, 3, 4}));
}

TEST_P(BackendTest, RowMovesAndSums) {
  const Array src = array({1, 2, 3, 10, 20, 30, 100, 200, 300});  // 3 rows of 3
  Array dst = array(std::vector<float>(8, 7.0f));                 // 2 rows of stride 4
  const int index[2] = {2, -1};
  be_->copy_rows(src.data(), 3, dst.data(), 4, 2, 2, index, 0.0f);
  be_->synchronize();
  EXPECT_EQ(dst.to_vector(), (std::vector<float>{100, 200, 7, 7, 0, 0, 7, 7}));
  be_->copy_rows(src.data(), 3, dst.data(), 4, 2, 2, nullptr, 1.0f);
  be_->synchronize();
  EXPECT_EQ(dst.to_vector(), (std::vector<float>{101, 202, 7, 7, 10, 20, 7, 7}));
  Array sums = array({1, 1, 1});
  be_->column_sums(src.data(), 3, 3, 3, sums.data(), 1.0f);
  be_->synchronize();
  EXPECT_EQ(sums.to_vector(), (std::vector<float>{112, 223, 334}));
  Array c(*be_, 4);
  const Array bias = array({1, 2});
  be_->add_row_vector(c.data(), 2, 2, 2, bias.data());
  be_->synchronize();
  EXPECT_EQ(c.to_vector(), (std::vector<float>{1, 2, 1, 2}));
  EXPECT_DOUBLE_EQ(be_->sum_squares(src.data(), 3), 14.0);
}

TEST_P(BackendTest, OptimizersFollowTorchFormulas) {
  farnn::test::SeededRng rng(8);
  const size_t n = 6;
  Array p = random_array(n, rng);
  std::vector<double> ref(p.begin(), p.end()), buf(n, 0);
  Array mom(*be_, n);
  const SgdConfig sgd{0.1f, 0.9f};
  for (int step = 1; step <= 4; ++step) {
    const Array g = random_array(n, rng);
    be_->sgd_step(p.data(), g.data(), mom.data(), n, sgd, step == 1);
    be_->synchronize();
    for (size_t i = 0; i < n; ++i) {
      buf[i] = step == 1 ? g[i] : 0.9 * buf[i] + g[i];
      ref[i] -= 0.1 * buf[i];
      EXPECT_NEAR(p[i], ref[i], 1e-6) << "sgd step " << step;
    }
  }
  Array q = random_array(n, rng);
  std::vector<double> rq(q.begin(), q.end()), m(n, 0), v(n, 0);
  Array fm(*be_, n), fv(*be_, n);
  const AdamConfig adam{0.01f, 0.9f, 0.999f, 1e-8f};
  for (int step = 1; step <= 5; ++step) {
    const Array g = random_array(n, rng);
    be_->adam_step(q.data(), g.data(), fm.data(), fv.data(), n, adam, step);
    be_->synchronize();
    for (size_t i = 0; i < n; ++i) {
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
      const double mh = m[i] / (1 - std::pow(0.9, step)), vh = v[i] / (1 - std::pow(0.999, step));
      rq[i] -= 0.01 * mh / (std::sqrt(vh) + 1e-8);
      EXPECT_NEAR(q[i], rq[i], 1e-5) << "adam step " << step;
    }
  }
}

TEST_P(BackendTest, LossGradientsMatchCentralDifferences) {
  farnn::test::SeededRng rng(4);
  Array y = random_array(6, rng);
  const Array t = random_array(6, rng);
  Array dy(*be_, 6), scratch(*be_, 6), dz(*be_, 6);
  be_->mse(y.data(), t.data(), 6, dy.data(), 1.0f);
  const Array labels = array({2, 0});  // 2 rows of 3 classes
  be_->cross_entropy(y.data(), labels.data(), 2, 3, dz.data(), 1.0f);
  for (size_t i = 0; i < 6; ++i) {
    const float h = 1e-2f, keep = y[i];
    y[i] = keep + h;
    const double mp = be_->mse(y.data(), t.data(), 6, scratch.data(), 1.0f);
    const double cp = be_->cross_entropy(y.data(), labels.data(), 2, 3, scratch.data(), 1.0f);
    y[i] = keep - h;
    const double mm = be_->mse(y.data(), t.data(), 6, scratch.data(), 1.0f);
    const double cm = be_->cross_entropy(y.data(), labels.data(), 2, 3, scratch.data(), 1.0f);
    y[i] = keep;
    EXPECT_NEAR(dy[i], (mp - mm) / (2 * h), 1e-3) << "mse " << i;
    EXPECT_NEAR(dz[i], (cp - cm) / (2 * h), 1e-3) << "cross-entropy " << i;
  }
  const Array bad = array({0, 3});
  try {
    be_->cross_entropy(y.data(), bad.data(), 2, 3, dz.data(), 1.0f);
    ADD_FAILURE() << "label 3 of 3 classes accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("label 3.000000 of row 1 is not a class index 0..2"),
              std::string::npos)
        << e.what();
  }
}

// Sizes past one thread block and one grid: each call's result equal to the
// CPU backend's bit for bit where the CPU backend fixes the order (row moves,
// row vectors, column sums, scaling, optimizers, the MSE gradient), within
// float rounding where the order is free (GEMM, double-precision sums).
TEST_P(BackendTest, LargeCallsEqualTheCpuBackend) {
  auto cpu = make_cpu_backend(1);
  farnn::test::SeededRng rng(11);
  const int rows = 1500, cols = 1030;
  const size_t n = static_cast<size_t>(rows) * cols;
  const Array a = random_array(n, rng), b = random_array(n, rng);
  std::vector<int> index(static_cast<size_t>(rows));
  for (int i = 0; i < rows; ++i) index[static_cast<size_t>(i)] = (i * 7) % rows - (i % 5 == 0);
  const auto both = [&](const char* what, auto&& call) {
    Array mine = array(b.to_vector());
    std::vector<float> ref = b.to_vector();
    const double r1 = call(*be_, a.data(), mine.data());
    const double r2 = call(*cpu, a.to_vector().data(), ref.data());
    be_->synchronize();
    EXPECT_EQ(mine.to_vector(), ref) << what;
    EXPECT_NEAR(r1, r2, 1e-9 * std::abs(r2)) << what;
  };
  both("copy_rows", [&](Backend& be, const float* x, float* y) {
    be.copy_rows(x, cols, y, cols, rows, cols - 3, index.data(), 0.5f);
    return 0.0;
  });
  both("column_sums", [&](Backend& be, const float* x, float* y) {
    be.column_sums(x, rows, cols, cols, y, 0.25f);
    return 0.0;
  });
  both("add_row_vector", [&](Backend& be, const float* x, float* y) {
    be.add_row_vector(y, rows, cols, cols, x);
    return 0.0;
  });
  both("scale", [&](Backend& be, const float*, float* y) {
    be.scale(y, n, 0.37f);
    return be.sum_squares(y, n);
  });
  both("adam_step", [&](Backend& be, const float* x, float* y) {
    Array m(be, n), v(be, n);
    for (long step = 1; step <= 3; ++step) be.adam_step(y, x, m.data(), v.data(), n, {}, step);
    be.synchronize();
    return static_cast<double>(m[n - 1]);
  });
  both("mse", [&](Backend& be, const float* x, float* y) {
    Array target(be, n);
    return be.mse(x, target.data(), n, y, 0.5f);
  });
  // GEMM: 1500 x 1030 by its transpose's first 64 rows, each sum within float rounding.
  Array c(*be_, static_cast<size_t>(rows) * 64);
  std::vector<float> c_ref(c.size());
  be_->gemm(false, true, rows, 64, cols, 1.0f, a.data(), cols, a.data(), cols, 0.0f, c.data(), 64);
  cpu->gemm(false, true, rows, 64, cols, 1.0f, a.to_vector().data(), cols, a.to_vector().data(),
            cols, 0.0f, c_ref.data(), 64);
  be_->synchronize();
  for (size_t i = 0; i < c.size(); ++i)
    ASSERT_NEAR(c[i], c_ref[i], 1e-4f * std::max(1.0f, std::abs(c_ref[i]))) << i;
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendTest, ::testing::Values("cpu", "own_memory", "cuda"),
                         [](const auto& info) { return info.param; });

}  // namespace
