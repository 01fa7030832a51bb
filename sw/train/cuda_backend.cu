// CudaBackend: the compute backend on an NVIDIA GPU (GPU 0). cuBLAS runs the
// GEMMs (FP32, no TF32); CUDA kernels run the row moves, sums, losses and
// optimizers with the CPU backend's formulas and, where the CPU backend
// accumulates in a fixed order (column sums) or element by element (row
// moves, optimizers, the gradient of the MSE), in the same order, so those
// results equal the CPU backend's (this file is built with -fmad=false, as
// the host code with -ffp-contract=off). Memory is CUDA managed memory: the
// host, and a device that runs on host threads (model://, sim://), read and
// write it at the same addresses as the GPU, which needs a GPU with
// concurrent managed access (Linux, Pascal or newer). Every call returns when
// its work is done; the overlap the trainer builds is between this backend
// and the FPGA device. Index arrays are host memory, copied per call. Freed
// arrays are pooled by size for the next allocation of that size.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "farnn/backend.hpp"

namespace farnn::train {
namespace {

constexpr int kThreads = 256;
constexpr size_t kMaxBlocks = 4096;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("cuda backend: ") + what + ": " + cudaGetErrorString(e));
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuda backend: ") + what + ": " +
                             cublasGetStatusString(s));
}

unsigned blocks_for(size_t n) {
  return static_cast<unsigned>(
      std::max<size_t>(1, std::min(kMaxBlocks, (n + kThreads - 1) / kThreads)));
}

// Grid-stride loop over e in [0, n).
#define FARNN_FOR_EACH(e, n)                                                           \
  for (size_t e = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < (n); \
       e += static_cast<size_t>(gridDim.x) * blockDim.x)

__global__ void scale_rows_kernel(float* c, int rows, int cols, int ldc, float beta) {
  FARNN_FOR_EACH(e, static_cast<size_t>(rows) * cols) {
    float* x = c + e / cols * ldc + e % cols;
    *x = beta == 0.0f ? 0.0f : beta * *x;
  }
}

__global__ void copy_rows_kernel(const float* src, int ss, float* dst, int ds, int rows, int cols,
                                 const int* index, float beta) {
  FARNN_FOR_EACH(e, static_cast<size_t>(rows) * cols) {
    const size_t i = e / cols, c = e % cols;
    const int from = index ? index[i] : static_cast<int>(i);
    const float v = from < 0 ? 0.0f : src[static_cast<size_t>(from) * ss + c];
    float* d = dst + i * ds + c;
    *d = beta == 0.0f ? v : beta * *d + v;
  }
}

__global__ void add_row_vector_kernel(float* c, int rows, int cols, int ldc, const float* bias) {
  FARNN_FOR_EACH(e, static_cast<size_t>(rows) * cols) {
    c[e / cols * ldc + e % cols] += bias[e % cols];
  }
}

// One thread per column, rows in order: the CPU backend's summation order.
__global__ void column_sums_kernel(const float* a, int rows, int cols, int lda, float* out,
                                   float beta) {
  FARNN_FOR_EACH(j, static_cast<size_t>(cols)) {
    float s = beta == 0.0f ? 0.0f : beta * out[j];
    for (int i = 0; i < rows; ++i) s += a[static_cast<size_t>(i) * lda + j];
    out[j] = s;
  }
}

// Adds a block's sum of `v` over its threads into *total.
__device__ void block_add(double v, double* total) {
  __shared__ double part[kThreads];
  part[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, part[0]);
}

__global__ void sum_squares_kernel(const float* x, size_t n, double* total) {
  double s = 0;
  FARNN_FOR_EACH(i, n) {
    s += static_cast<double>(x[i]) * x[i];
  }
  block_add(s, total);
}

__global__ void scale_kernel(float* x, size_t n, float factor) {
  FARNN_FOR_EACH(i, n) {
    x[i] *= factor;
  }
}

__global__ void sgd_kernel(float* p, const float* g, float* buf, size_t n, float lr, float momentum,
                           bool first) {
  FARNN_FOR_EACH(i, n) {
    float d = g[i];
    if (momentum != 0.0f) {
      buf[i] = first ? d : momentum * buf[i] + d;
      d = buf[i];
    }
    p[i] -= lr * d;
  }
}

__global__ void adam_kernel(float* p, const float* g, float* m, float* v, size_t n, float beta1,
                            float beta2, float eps, float step_size, float bc2_sqrt) {
  FARNN_FOR_EACH(i, n) {
    m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
    v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
    p[i] -= step_size * m[i] / (sqrtf(v[i]) / bc2_sqrt + eps);
  }
}

__global__ void mse_kernel(const float* y, const float* t, size_t n, float* dy, float grad_scale,
                           double* total) {
  double s = 0;
  FARNN_FOR_EACH(i, n) {
    const float d = y[i] - t[i];
    s += static_cast<double>(d) * d;
    dy[i] = grad_scale * 2.0f * d / static_cast<float>(n);
  }
  block_add(s, total);
}

// One thread per row. A label that is not a class index leaves the row's
// gradient untouched and records the row (the lowest such) in *bad_row.
__global__ void cross_entropy_kernel(const float* logits, const float* labels, int rows,
                                     int classes, float* dy, float grad_scale, double* total,
                                     int* bad_row) {
  double s = 0;
  FARNN_FOR_EACH(i, static_cast<size_t>(rows)) {
    const float* z = logits + i * classes;
    float* d = dy + i * classes;
    const int label = static_cast<int>(labels[i]);
    if (!(labels[i] >= 0.0f && labels[i] < static_cast<float>(classes)) ||
        static_cast<float>(label) != labels[i]) {
      atomicMin(bad_row, static_cast<int>(i));
      continue;
    }
    float zmax = z[0];
    for (int c = 1; c < classes; ++c) zmax = fmaxf(zmax, z[c]);
    double sum = 0;
    for (int c = 0; c < classes; ++c) sum += exp(static_cast<double>(z[c] - zmax));
    s += log(sum) - static_cast<double>(z[label] - zmax);
    for (int c = 0; c < classes; ++c) {
      const double pc = exp(static_cast<double>(z[c] - zmax)) / sum;
      d[c] = grad_scale * static_cast<float>(pc - (c == label ? 1.0 : 0.0));
    }
  }
  block_add(s, total);
}

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      throw BackendUnavailable(std::string("cuda backend: no usable GPU: ") +
                               cudaGetErrorString(e) +
                               " (an NVIDIA driver and GPU are needed; use --backend cpu)");
    }
    if (count == 0) throw BackendUnavailable("cuda backend: no GPU found (use --backend cpu)");
    check(cudaSetDevice(0), "cudaSetDevice(0)");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    gpu_ = prop.name;
    if (!prop.concurrentManagedAccess) {
      throw BackendUnavailable("cuda backend: GPU 0 (" + gpu_ +
                               ") has no concurrent managed memory access, which the backend needs "
                               "(the device's host threads read its arrays while the GPU runs); "
                               "use --backend cpu");
    }
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cublasCreate(&blas_), "cublasCreate");
    check(cublasSetStream(blas_, stream_), "cublasSetStream");
    check(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");  // FP32, no TF32
    check(cudaMalloc(&scalars_, sizeof(double) + sizeof(int)), "cudaMalloc");
  }
  ~CudaBackend() override {
    cudaStreamSynchronize(stream_);
    cudaFree(index_);
    cudaFree(scalars_);
    cublasDestroy(blas_);
    cudaStreamDestroy(stream_);
  }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda (" + gpu_ + ", cuBLAS)"; }
  bool needs_own_memory() const override { return true; }

  // A dropped array goes back to a pool by size and is handed out again,
  // zeroed: cudaMallocManaged and cudaFree each wait for the whole GPU, and
  // the trainer allocates the same sizes every step.
  std::shared_ptr<float> allocate(size_t n) override {
    const size_t bytes = std::max<size_t>(n, 1) * sizeof(float);
    void* p = pool_->take(bytes);
    if (!p) {
      // Managed memory beyond what the GPU has free can hang the GPU, so such
      // a request is refused (after the pool has given back what it holds).
      size_t free_bytes = 0, total_bytes = 0;
      check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
      if (bytes > free_bytes) {
        pool_->release();
        check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
      }
      if (bytes > free_bytes) {
        throw std::runtime_error("cuda backend: an array of " + std::to_string(bytes) +
                                 " bytes does not fit the " + std::to_string(free_bytes) +
                                 " bytes free on " + gpu_ +
                                 "; use a smaller batch, sequence or model");
      }
      check(cudaMallocManaged(&p, bytes, cudaMemAttachGlobal), "cudaMallocManaged");
    }
    std::shared_ptr<float> mem(static_cast<float*>(p),
                               [pool = pool_, bytes](float* q) { pool->give(bytes, q); });
    check(cudaMemsetAsync(p, 0, bytes, stream_), "cudaMemset");
    done("allocate");
    return mem;
  }

  void gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
            const float* b, int ldb, float beta, float* c, int ldc) override {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
      scale_rows_kernel<<<blocks_for(static_cast<size_t>(m) * n), kThreads, 0, stream_>>>(
          c, m, n, ldc, beta);
      return done("gemm");
    }
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
    check(cublasSgemm(blas_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m,
                      k, &alpha, b, ldb, a, lda, &beta, c, ldc),
          "cublasSgemm");
    done("gemm");
  }

  void copy_rows(const float* src, int src_stride, float* dst, int dst_stride, int rows, int cols,
                 const int* index, float beta) override {
    if (rows <= 0 || cols <= 0) return;
    const int* dev_index = nullptr;
    if (index) {
      if (static_cast<size_t>(rows) > index_size_) {
        cudaFree(index_);
        index_ = nullptr;
        index_size_ = 0;
        check(cudaMalloc(&index_, sizeof(int) * rows), "cudaMalloc");
        index_size_ = static_cast<size_t>(rows);
      }
      check(cudaMemcpyAsync(index_, index, sizeof(int) * rows, cudaMemcpyHostToDevice, stream_),
            "copy of a row index");
      dev_index = index_;
    }
    copy_rows_kernel<<<blocks_for(static_cast<size_t>(rows) * cols), kThreads, 0, stream_>>>(
        src, src_stride, dst, dst_stride, rows, cols, dev_index, beta);
    done("copy_rows");
  }

  void add_row_vector(float* c, int rows, int cols, int ldc, const float* bias) override {
    if (rows <= 0 || cols <= 0) return;
    add_row_vector_kernel<<<blocks_for(static_cast<size_t>(rows) * cols), kThreads, 0, stream_>>>(
        c, rows, cols, ldc, bias);
    done("add_row_vector");
  }

  void column_sums(const float* a, int rows, int cols, int lda, float* out, float beta) override {
    if (cols <= 0) return;
    column_sums_kernel<<<blocks_for(static_cast<size_t>(cols)), kThreads, 0, stream_>>>(
        a, std::max(rows, 0), cols, lda, out, beta);
    done("column_sums");
  }

  double sum_squares(const float* x, size_t n) override {
    zero_scalars();
    if (n) sum_squares_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(x, n, total());
    return read_total("sum_squares");
  }

  void scale(float* x, size_t n, float factor) override {
    if (!n) return;
    scale_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(x, n, factor);
    done("scale");
  }

  void sgd_step(float* p, const float* g, float* buf, size_t n, const SgdConfig& c,
                bool first) override {
    if (!n) return;
    sgd_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(p, g, buf, n, c.lr, c.momentum, first);
    done("sgd_step");
  }

  void adam_step(float* p, const float* g, float* m, float* v, size_t n, const AdamConfig& c,
                 long step) override {
    if (!n) return;
    // The bias corrections as the CPU backend computes them, in double on the host.
    const double bc1 = 1.0 - std::pow(static_cast<double>(c.beta1), static_cast<double>(step));
    const double bc2 = 1.0 - std::pow(static_cast<double>(c.beta2), static_cast<double>(step));
    adam_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(p, g, m, v, n, c.beta1, c.beta2, c.eps,
                                                         static_cast<float>(c.lr / bc1),
                                                         static_cast<float>(std::sqrt(bc2)));
    done("adam_step");
  }

  double mse(const float* y, const float* target, size_t n, float* dy, float grad_scale) override {
    if (!n) return 0.0;
    zero_scalars();
    mse_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(y, target, n, dy, grad_scale, total());
    return read_total("mse") / static_cast<double>(n);
  }

  double cross_entropy(const float* logits, const float* labels, int rows, int classes, float* dy,
                       float grad_scale) override {
    if (rows <= 0) return 0.0;
    zero_scalars();
    const int none = rows;
    check(cudaMemcpyAsync(bad_row(), &none, sizeof(int), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpy");
    cross_entropy_kernel<<<blocks_for(static_cast<size_t>(rows)), kThreads, 0, stream_>>>(
        logits, labels, rows, classes, dy, grad_scale, total(), bad_row());
    const double loss = read_total("cross_entropy");
    int bad = rows;
    check(cudaMemcpy(&bad, bad_row(), sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (bad < rows) {
      throw std::invalid_argument("cross_entropy: label " + std::to_string(labels[bad]) +
                                  " of row " + std::to_string(bad) + " is not a class index 0.." +
                                  std::to_string(classes - 1));
    }
    return loss;
  }

  void synchronize() override { done("synchronize"); }

 private:
  // Waits for the stream; a failed launch or kernel is an error naming the call.
  void done(const char* what) {
    check(cudaGetLastError(), what);
    check(cudaStreamSynchronize(stream_), what);
  }
  double* total() { return static_cast<double*>(scalars_); }
  int* bad_row() { return reinterpret_cast<int*>(static_cast<char*>(scalars_) + sizeof(double)); }
  void zero_scalars() {
    check(cudaMemsetAsync(scalars_, 0, sizeof(double), stream_), "cudaMemset");
  }
  double read_total(const char* what) {
    double v = 0;
    check(cudaMemcpyAsync(&v, total(), sizeof(double), cudaMemcpyDeviceToHost, stream_), what);
    done(what);
    return v;
  }

  // Managed arrays no one holds, by size; freed when the last array and the
  // backend are gone.
  struct Pool {
    std::mutex m;
    std::multimap<size_t, void*> free;
    void* take(size_t bytes) {
      std::lock_guard<std::mutex> lock(m);
      const auto it = free.find(bytes);
      if (it == free.end()) return nullptr;
      void* p = it->second;
      free.erase(it);
      return p;
    }
    void give(size_t bytes, void* p) {
      std::lock_guard<std::mutex> lock(m);
      free.emplace(bytes, p);
    }
    void release() {
      std::lock_guard<std::mutex> lock(m);
      for (const auto& [bytes, p] : free) cudaFree(p);
      free.clear();
    }
    ~Pool() { release(); }
  };

  std::string gpu_;
  std::shared_ptr<Pool> pool_ = std::make_shared<Pool>();
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  void* scalars_ = nullptr;  // a double accumulator, then an int (cross-entropy's bad row)
  int* index_ = nullptr;     // the last row index copied to the GPU
  size_t index_size_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() {
  return std::make_unique<CudaBackend>();
}

}  // namespace farnn::train
