// CpuBackend: the compute backend on the host, Eigen for the GEMMs
// (OpenMP-parallel when built with it), plain loops for the rest.
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "farnn/backend.hpp"

namespace farnn::train {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::OuterStride<>;
using ConstMap = Eigen::Map<const RowMat, 0, Stride>;
using MutMap = Eigen::Map<RowMat, 0, Stride>;

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads) {
    const int n = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    Eigen::setNbThreads(n);
  }
  std::string name() const override { return "cpu (Eigen, " + std::to_string(Eigen::nbThreads()) + " threads)"; }

  std::shared_ptr<float> allocate(size_t n) override {
    return std::shared_ptr<float>(new float[n](), std::default_delete<float[]>());
  }

  void gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) override {
    if (m <= 0 || n <= 0) return;
    MutMap C(c, m, n, Stride(ldc));
    if (beta == 0.0f) C.setZero();
    else if (beta != 1.0f) C *= beta;
    if (k <= 0) return;
    const ConstMap A(a, ta ? k : m, ta ? m : k, Stride(lda));
    const ConstMap B(b, tb ? n : k, tb ? k : n, Stride(ldb));
    if (ta && tb) C.noalias() += alpha * (A.transpose() * B.transpose());
    else if (ta) C.noalias() += alpha * (A.transpose() * B);
    else if (tb) C.noalias() += alpha * (A * B.transpose());
    else C.noalias() += alpha * (A * B);
  }

  void copy_rows(const float* src, int src_stride, float* dst, int dst_stride, int rows, int cols, const int* index,
                 float beta) override {
    for (int i = 0; i < rows; ++i) {
      float* d = dst + static_cast<size_t>(i) * dst_stride;
      const int from = index ? index[i] : i;
      if (beta == 0.0f) {
        if (from < 0) std::fill(d, d + cols, 0.0f);
        else std::memcpy(d, src + static_cast<size_t>(from) * src_stride, sizeof(float) * cols);
      } else {
        const float* s = from < 0 ? nullptr : src + static_cast<size_t>(from) * src_stride;
        for (int c = 0; c < cols; ++c) d[c] = beta * d[c] + (s ? s[c] : 0.0f);
      }
    }
  }

  void add_row_vector(float* c, int rows, int cols, int ldc, const float* bias) override {
    for (int i = 0; i < rows; ++i) {
      float* r = c + static_cast<size_t>(i) * ldc;
      for (int j = 0; j < cols; ++j) r[j] += bias[j];
    }
  }

  void column_sums(const float* a, int rows, int cols, int lda, float* out, float beta) override {
    for (int j = 0; j < cols; ++j) out[j] = beta == 0.0f ? 0.0f : beta * out[j];
    for (int i = 0; i < rows; ++i) {
      const float* r = a + static_cast<size_t>(i) * lda;
      for (int j = 0; j < cols; ++j) out[j] += r[j];
    }
  }

  double sum_squares(const float* x, size_t n) override {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
    return s;
  }

  void scale(float* x, size_t n, float factor) override {
    for (size_t i = 0; i < n; ++i) x[i] *= factor;
  }

  void sgd_step(float* p, const float* g, float* buf, size_t n, const SgdConfig& c, bool first) override {
    for (size_t i = 0; i < n; ++i) {
      float d = g[i];
      if (c.momentum != 0.0f) {
        buf[i] = first ? d : c.momentum * buf[i] + d;
        d = buf[i];
      }
      p[i] -= c.lr * d;
    }
  }

  void adam_step(float* p, const float* g, float* m, float* v, size_t n, const AdamConfig& c, long step) override {
    const double bc1 = 1.0 - std::pow(static_cast<double>(c.beta1), static_cast<double>(step));
    const double bc2 = 1.0 - std::pow(static_cast<double>(c.beta2), static_cast<double>(step));
    const float step_size = static_cast<float>(c.lr / bc1);
    const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
    for (size_t i = 0; i < n; ++i) {
      m[i] = c.beta1 * m[i] + (1.0f - c.beta1) * g[i];
      v[i] = c.beta2 * v[i] + (1.0f - c.beta2) * g[i] * g[i];
      p[i] -= step_size * m[i] / (std::sqrt(v[i]) / bc2_sqrt + c.eps);
    }
  }

  double mse(const float* y, const float* t, size_t n, float* dy, float grad_scale) override {
    double s = 0;
    for (size_t i = 0; i < n; ++i) {
      const float d = y[i] - t[i];
      s += static_cast<double>(d) * d;
      dy[i] = grad_scale * 2.0f * d / static_cast<float>(n);
    }
    return n ? s / static_cast<double>(n) : 0.0;
  }

  double cross_entropy(const float* logits, const float* labels, int rows, int classes, float* dy,
                       float grad_scale) override {
    double total = 0;
    for (int i = 0; i < rows; ++i) {
      const float* z = logits + static_cast<size_t>(i) * classes;
      float* d = dy + static_cast<size_t>(i) * classes;
      const int label = static_cast<int>(labels[i]);
      if (label < 0 || label >= classes || static_cast<float>(label) != labels[i]) {
        throw std::invalid_argument("cross_entropy: label " + std::to_string(labels[i]) + " of row " +
                                    std::to_string(i) + " is not a class index 0.." + std::to_string(classes - 1));
      }
      const float zmax = *std::max_element(z, z + classes);
      double sum = 0;
      for (int c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(z[c] - zmax));
      total += std::log(sum) - static_cast<double>(z[label] - zmax);
      for (int c = 0; c < classes; ++c) {
        const double pc = std::exp(static_cast<double>(z[c] - zmax)) / sum;
        d[c] = grad_scale * static_cast<float>(pc - (c == label ? 1.0 : 0.0));
      }
    }
    return total;
  }

  void synchronize() override {}
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int threads) { return std::make_unique<CpuBackend>(threads); }

}  // namespace farnn::train
