// What every backend shares: Array (vector-like backend memory) and the
// registry of backends by name (farnn train --backend).
#include "farnn/backend.hpp"

#include <algorithm>
#include <stdexcept>

namespace farnn::train {

#ifdef FARNN_HAVE_CUDA_BACKEND
std::unique_ptr<Backend> make_cuda_backend();  // cuda_backend.cu
#endif

Array::Array(Backend& backend, const std::vector<float>& values) {
  resize(backend, values.size());
  std::copy(values.begin(), values.end(), data());
}

void Array::resize(Backend& backend, size_t n) {
  if (backend_ == &backend && size_ == n && mem_) return;
  mem_ = backend.allocate(n);
  backend_ = &backend;
  size_ = n;
}

void Array::fill(float value) {
  std::fill(begin(), end(), value);
}

std::vector<std::string> backend_names() {
#ifdef FARNN_HAVE_CUDA_BACKEND
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

std::string backend_list() {
  std::string s;
  for (const std::string& n : backend_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::unique_ptr<Backend> make_backend(const std::string& name, int threads) {
  if (name == "cpu") return make_cpu_backend(threads);
#ifdef FARNN_HAVE_CUDA_BACKEND
  if (name == "cuda") return make_cuda_backend();
#endif
  throw std::invalid_argument("unknown compute backend '" + name +
                              "' (this build has: " + backend_list() + ")");
}

}  // namespace farnn::train
