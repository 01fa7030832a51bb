// The compute backends the trainer tests run on, and the test backends behind
// them. ForwardingBackend passes every call to another backend, first telling
// a hook which float operands the call names (pointer and extent in floats);
// one derived backend logs the GEMMs (test_trainer.cpp), OwnMemoryBackend
// fails any operand outside the memory it allocated (what a backend with
// memory of its own, CUDA, needs). backends_under_test(): cpu, own memory, and
// cuda where present. reference_dir(): a reference folder, movable by
// environment variable.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "farnn/backend.hpp"

namespace farnn::test {

struct Operand {
  const char* what;
  const float* data;
  size_t floats;  // the extent the call touches
};

class ForwardingBackend : public train::Backend {
 public:
  explicit ForwardingBackend(train::Backend& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  std::shared_ptr<float> allocate(size_t n) override { return inner_.allocate(n); }
  bool needs_own_memory() const override { return inner_.needs_own_memory(); }

  void gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
            const float* b, int ldb, float beta, float* c, int ldc) override {
    on_gemm(ta, tb, m, n, k);
    operands("gemm", {{"a", a, extent(ta ? k : m, ta ? m : k, lda)},
                      {"b", b, extent(tb ? n : k, tb ? k : n, ldb)},
                      {"c", c, extent(m, n, ldc)}});
    inner_.gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void copy_rows(const float* src, int ss, float* dst, int ds, int rows, int cols, const int* index,
                 float beta) override {
    int src_rows = index ? 0 : rows;
    for (int i = 0; index && i < rows; ++i) src_rows = std::max(src_rows, index[i] + 1);
    operands("copy_rows",
             {{"src", src, extent(src_rows, cols, ss)}, {"dst", dst, extent(rows, cols, ds)}});
    inner_.copy_rows(src, ss, dst, ds, rows, cols, index, beta);
  }
  void add_row_vector(float* c, int rows, int cols, int ldc, const float* bias) override {
    operands("add_row_vector", {{"c", c, extent(rows, cols, ldc)}, {"bias", bias, size(cols)}});
    inner_.add_row_vector(c, rows, cols, ldc, bias);
  }
  void column_sums(const float* a, int rows, int cols, int lda, float* out, float beta) override {
    operands("column_sums", {{"a", a, extent(rows, cols, lda)}, {"out", out, size(cols)}});
    inner_.column_sums(a, rows, cols, lda, out, beta);
  }
  double sum_squares(const float* x, size_t n) override {
    operands("sum_squares", {{"x", x, n}});
    return inner_.sum_squares(x, n);
  }
  void scale(float* x, size_t n, float f) override {
    operands("scale", {{"x", x, n}});
    inner_.scale(x, n, f);
  }
  void sgd_step(float* p, const float* g, float* buf, size_t n, const train::SgdConfig& c,
                bool first) override {
    operands("sgd_step", {{"p", p, n}, {"g", g, n}, {"momentum", buf, c.momentum != 0 ? n : 0}});
    inner_.sgd_step(p, g, buf, n, c, first);
  }
  void adam_step(float* p, const float* g, float* m, float* v, size_t n, const train::AdamConfig& c,
                 long step) override {
    operands("adam_step", {{"p", p, n}, {"g", g, n}, {"m", m, n}, {"v", v, n}});
    inner_.adam_step(p, g, m, v, n, c, step);
  }
  double mse(const float* y, const float* t, size_t n, float* dy, float s) override {
    operands("mse", {{"y", y, n}, {"target", t, n}, {"dy", dy, n}});
    return inner_.mse(y, t, n, dy, s);
  }
  double cross_entropy(const float* l, const float* y, int rows, int classes, float* dy,
                       float s) override {
    const size_t all = size(rows) * size(classes);
    operands("cross_entropy", {{"logits", l, all}, {"labels", y, size(rows)}, {"dy", dy, all}});
    return inner_.cross_entropy(l, y, rows, classes, dy, s);
  }
  void synchronize() override { inner_.synchronize(); }

 protected:
  virtual void on_gemm(bool /*ta*/, bool /*tb*/, int /*m*/, int /*n*/, int /*k*/) {}
  virtual void operands(const char* /*call*/, std::initializer_list<Operand> /*list*/) {}
  train::Backend& inner() { return inner_; }

 private:
  static size_t size(int n) { return n > 0 ? static_cast<size_t>(n) : 0; }
  // Floats from the first element of `rows` rows of `cols` at stride `ld` to the last.
  static size_t extent(int rows, int cols, int ld) {
    return rows > 0 && cols > 0 ? size(rows - 1) * size(ld) + size(cols) : 0;
  }
  train::Backend& inner_;
};

// A one-thread CPU backend that calls its memory its own
// (needs_own_memory()), as a CUDA backend does: the trainer must then hand it
// only memory it allocated (device buffers included, registered with the
// device), and every operand outside that memory fails the test, naming the
// call and the operand.
class OwnMemoryBackend : private std::unique_ptr<train::Backend>, public ForwardingBackend {
 public:
  OwnMemoryBackend()
      : std::unique_ptr<train::Backend>(train::make_cpu_backend(1)),
        ForwardingBackend(**this),
        live_(std::make_shared<Live>()) {}
  std::string name() const override { return "cpu, own memory"; }
  bool needs_own_memory() const override { return true; }
  std::shared_ptr<float> allocate(size_t n) override {
    std::shared_ptr<float> mem = inner().allocate(n);
    std::lock_guard<std::mutex> lock(live_->m);
    live_->ranges[mem.get()] = n;
    // The deleter forgets the range (on whichever thread drops the last pointer).
    return std::shared_ptr<float>(mem.get(), [live = live_, mem](float* p) {
      std::lock_guard<std::mutex> lock(live->m);
      live->ranges.erase(p);
    });
  }
  int violations() const { return violations_; }

 protected:
  void operands(const char* call, std::initializer_list<Operand> list) override {
    std::lock_guard<std::mutex> lock(live_->m);
    for (const Operand& o : list) {
      if (o.floats == 0) continue;
      auto it = live_->ranges.upper_bound(o.data);
      const bool inside =
          it != live_->ranges.begin() && (--it, o.data + o.floats <= it->first + it->second);
      if (!inside) {
        ++violations_;
        ADD_FAILURE() << call << ": operand " << o.what << " (" << o.floats
                      << " floats) is not memory the backend allocated";
      }
    }
  }

 private:
  struct Live {
    std::mutex m;
    std::map<const float*, size_t> ranges;
  };
  std::shared_ptr<Live> live_;
  int violations_ = 0;
};

// A test's reference folder: the environment variable `name` when set (the
// test binary run from another checkout, as tools/gpu_checks.sh does on a GPU
// machine), else the folder compiled in.
inline std::string reference_dir(const char* name, const char* compiled) {
  const char* v = std::getenv(name);
  return v && *v ? v : compiled;
}

// The CUDA backend, or null with the reason in `why`: this build has none
// (no CUDA toolkit when it was configured) or this machine cannot run it.
inline std::unique_ptr<train::Backend> cuda_backend_if_present(std::string* why = nullptr) {
  const std::vector<std::string> names = train::backend_names();
  if (std::find(names.begin(), names.end(), "cuda") == names.end()) {
    if (why)
      *why = "this build has no CUDA backend (no CUDA toolkit was found when it was configured)";
    return nullptr;
  }
  try {
    return train::make_backend("cuda");
  } catch (const train::BackendUnavailable& e) {
    if (why) *why = e.what();
    return nullptr;
  }
}

// The backends every trainer-level test runs on: the CPU backend, the CPU
// backend with memory of its own (the trainer's path for a CUDA backend), and
// the CUDA backend where this build has one and a GPU is present.
inline std::vector<std::unique_ptr<train::Backend>> backends_under_test() {
  std::vector<std::unique_ptr<train::Backend>> list;
  list.push_back(train::make_cpu_backend(1));
  list.push_back(std::make_unique<OwnMemoryBackend>());
  if (std::unique_ptr<train::Backend> gpu = cuda_backend_if_present())
    list.push_back(std::move(gpu));
  return list;
}

}  // namespace farnn::test
