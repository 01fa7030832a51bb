// Compute backends: the batched half of FARNN's schedule (input GEMMs over the
// whole sequence, gradient GEMMs, data movement between layouts, the loss and
// the optimizer update). The trainer calls only this interface; the device
// (farnn/device.hpp) runs the recurrence.
//
// Operands are float32 arrays in the backend's memory, row-major with an
// explicit row stride (leading dimension). The CPU backend's memory is host
// memory, so the trainer can hand the same arrays to a Device as registered
// buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace farnn::train {

struct SgdConfig {
  float lr = 0.01f;
  float momentum = 0.0f;
};

struct AdamConfig {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // C[m][n] = alpha * op(A) op(B) + beta * C, op(X) = X or X^T; row-major with
  // leading dimensions lda, ldb, ldc (as cblas_sgemm with CblasRowMajor).
  virtual void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                    const float* b, int ldb, float beta, float* c, int ldc) = 0;
  // dst row i = (beta * dst row i) + src row index[i] (index null: row i;
  // index[i] < 0: a zero row). Rows have `cols` floats; strides in floats.
  virtual void copy_rows(const float* src, int src_stride, float* dst, int dst_stride, int rows, int cols,
                         const int* index, float beta) = 0;
  // c row i += bias (cols floats), for `rows` rows of stride ldc.
  virtual void add_row_vector(float* c, int rows, int cols, int ldc, const float* bias) = 0;
  // out[j] = beta * out[j] + sum over rows i of a[i][j].
  virtual void column_sums(const float* a, int rows, int cols, int lda, float* out, float beta) = 0;
  // sum of x[i]^2 in double.
  virtual double sum_squares(const float* x, size_t n) = 0;
  virtual void scale(float* x, size_t n, float factor) = 0;
  // Optimizer steps, torch.optim semantics (SGD with momentum: buf = g on the
  // first step, else momentum * buf + g; Adam with bias correction at `step`, 1-based).
  virtual void sgd_step(float* p, const float* g, float* momentum_buf, size_t n, const SgdConfig& c,
                        bool first_step) = 0;
  virtual void adam_step(float* p, const float* g, float* m, float* v, size_t n, const AdamConfig& c,
                         long step) = 0;
  // Mean squared error over n values: returns mean((y - t)^2) and writes its
  // gradient times `grad_scale` into dy.
  virtual double mse(const float* y, const float* target, size_t n, float* dy, float grad_scale) = 0;
  // Softmax cross-entropy over `rows` rows of `classes` logits and integer
  // labels (as floats): returns the summed loss, dy = (softmax - onehot) * grad_scale.
  virtual double cross_entropy(const float* logits, const float* labels, int rows, int classes, float* dy,
                               float grad_scale) = 0;
  // Waits for queued work (a no-op for synchronous backends).
  virtual void synchronize() = 0;
};

// Eigen, multithreaded over the GEMMs (`threads` <= 0: all cores).
std::unique_ptr<Backend> make_cpu_backend(int threads = 0);

// The backends this build has, by the name `farnn train --backend` takes.
std::vector<std::string> backend_names();
// The backend called `name` (std::invalid_argument listing backend_names()
// for any other name).
std::unique_ptr<Backend> make_backend(const std::string& name, int threads = 0);

}  // namespace farnn::train
