// Compute backends: the batched half of FARNN's schedule (input GEMMs over the
// whole sequence, gradient GEMMs, data movement between layouts, the loss and
// the optimizer update). The trainer calls only this interface; the device
// (farnn/device.hpp) runs the recurrence.
//
// Operands are float32 arrays in the backend's memory (allocate(); Array),
// row-major with an explicit row stride (leading dimension); index arrays and
// scalars are host memory. The host reads and writes the backend's memory
// directly once synchronize() has returned. The CPU backend's memory is host
// memory, so the device's own buffers serve as operands too; a backend whose
// memory is its own (CUDA: managed memory) needs every device buffer it
// touches allocated by it and registered with the device
// (Device::register_memory), which the trainer does when
// needs_own_memory() says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
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

  // n zero floats of the backend's memory, freed with the last pointer to it.
  virtual std::shared_ptr<float> allocate(size_t n) = 0;
  // true: operands must be allocate()d memory (a device buffer the backend
  // touches is then such memory, registered with the device); false: any host
  // memory will do.
  virtual bool needs_own_memory() const { return false; }

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

// A float array in a backend's memory: what the backend's calls take as
// operands, and vector-like for the host between them.
class Array {
 public:
  Array() = default;
  Array(Backend& backend, size_t n) { resize(backend, n); }  // n zeros
  Array(Backend& backend, const std::vector<float>& values);
  // Moves only: a copy would share the memory.
  Array(Array&&) = default;
  Array& operator=(Array&&) = default;
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  float* data() { return mem_.get(); }
  const float* data() const { return mem_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  float& operator[](size_t i) { return mem_.get()[i]; }
  const float& operator[](size_t i) const { return mem_.get()[i]; }
  float* begin() { return data(); }
  float* end() { return data() + size_; }
  const float* begin() const { return data(); }
  const float* end() const { return data() + size_; }
  // n zeros in `backend`'s memory; an array that holds n floats of that
  // backend already keeps its memory and values.
  void resize(Backend& backend, size_t n);
  void fill(float value);
  std::vector<float> to_vector() const { return {begin(), end()}; }
  // The memory, for a device buffer registered over it to keep alive.
  const std::shared_ptr<float>& memory() const { return mem_; }

 private:
  const Backend* backend_ = nullptr;
  std::shared_ptr<float> mem_;
  size_t size_ = 0;
};

// Eigen, multithreaded over the GEMMs (`threads` <= 0: all cores).
std::unique_ptr<Backend> make_cpu_backend(int threads = 0);

// A backend this build has that this machine cannot run (no GPU, no driver);
// the message says what is missing.
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The backends this build has, by the name `farnn train --backend` takes:
// cpu, and cuda when the CUDA toolkit was found at configure time.
std::vector<std::string> backend_names();
// backend_names() as one line: "cpu, cuda".
std::string backend_list();
// The backend called `name` (std::invalid_argument listing backend_names()
// for any other name; BackendUnavailable when this machine cannot run it).
std::unique_ptr<Backend> make_backend(const std::string& name, int threads = 0);

}  // namespace farnn::train
