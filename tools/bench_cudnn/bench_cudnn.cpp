// The GPU baseline of the training-step benchmark: one layer of cuDNN's LSTM
// or GRU, FP32, trained for one step the way bench_train runs it (input size
// I = H, T steps, B sequences, zero initial state): cudnnRNNForward in
// training mode, cudnnRNNBackwardData_v8 and cudnnRNNBackwardWeights_v8, each
// timed with CUDA events, for the algorithms STANDARD and PERSIST_STATIC
// (a configuration cuDNN refuses is recorded with its status, not timed).
// Math is FP32 on the FMA units (CUDNN_FMA_MATH), or with --math tf32
// CUDNN_DEFAULT_MATH, which lets A100 and newer use TF32 tensor cores
// (PyTorch's choice when torch.backends.cudnn.allow_tf32 is on, its default). Without a GPU it
// writes the reason into the JSON and exits 0, so `make bench` runs anywhere.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using json = nlohmann::json;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// A cuDNN status other than success, with the call that returned it.
struct CudnnError : std::runtime_error {
  CudnnError(cudnnStatus_t s, const char* what)
      : std::runtime_error(std::string(what) + ": " + cudnnGetErrorString(s)), status(s) {}
  cudnnStatus_t status;
};

void check(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw CudnnError(s, what);
}

// GPU memory, freed when dropped.
class DeviceMemory {
 public:
  explicit DeviceMemory(size_t bytes) {
    check(cudaMalloc(&p_, std::max<size_t>(bytes, 4)), "cudaMalloc");
  }
  ~DeviceMemory() { cudaFree(p_); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

void fill_uniform(const DeviceMemory& m, size_t floats, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> host(floats);
  for (float& v : host) v = u(rng);
  check(cudaMemcpy(m.get(), host.data(), floats * sizeof(float), cudaMemcpyHostToDevice),
        "cudaMemcpy");
}

struct Options {
  std::vector<std::string> cells = {"lstm", "gru"};
  std::vector<int> hidden = {64, 256, 1024};
  std::vector<int> batch = {1, 4, 16};
  std::vector<std::string> algos = {"standard", "persist_static"};
  int steps = 100;
  double min_time = 0.5;
  std::string math = "fp32";
  std::string json_path = "bench_cudnn.json";
};

// cuDNN's descriptors for one configuration, destroyed together.
struct Descriptors {
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnDropoutDescriptor_t dropout = nullptr;
  cudnnRNNDataDescriptor_t x = nullptr, y = nullptr;
  cudnnTensorDescriptor_t h = nullptr;
  Descriptors() {
    check(cudnnCreateRNNDescriptor(&rnn), "cudnnCreateRNNDescriptor");
    check(cudnnCreateDropoutDescriptor(&dropout), "cudnnCreateDropoutDescriptor");
    check(cudnnCreateRNNDataDescriptor(&x), "cudnnCreateRNNDataDescriptor");
    check(cudnnCreateRNNDataDescriptor(&y), "cudnnCreateRNNDataDescriptor");
    check(cudnnCreateTensorDescriptor(&h), "cudnnCreateTensorDescriptor");
  }
  ~Descriptors() {
    cudnnDestroyTensorDescriptor(h);
    cudnnDestroyRNNDataDescriptor(y);
    cudnnDestroyRNNDataDescriptor(x);
    cudnnDestroyDropoutDescriptor(dropout);
    cudnnDestroyRNNDescriptor(rnn);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
};

// The four CUDA events around one step's three calls, destroyed together.
class Events {
 public:
  Events() {
    for (cudaEvent_t& x : e_) check(cudaEventCreate(&x), "cudaEventCreate");
  }
  ~Events() {
    for (cudaEvent_t x : e_)
      if (x) cudaEventDestroy(x);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t operator[](int i) const { return e_[i]; }

 private:
  cudaEvent_t e_[4] = {};
};

// Times one configuration: milliseconds per call of each pass, averaged over
// as many steps as fill o.min_time (at least 3, after 2 untimed).
json measure(cudnnHandle_t handle, const Options& o, const std::string& cell, int H, int B,
             const std::string& algo) {
  const int T = o.steps;
  Descriptors d;
  size_t state_bytes = 0;
  check(cudnnDropoutGetStatesSize(handle, &state_bytes), "cudnnDropoutGetStatesSize");
  DeviceMemory states(state_bytes);
  check(cudnnSetDropoutDescriptor(d.dropout, handle, 0.0f, states.get(), state_bytes, 1),
        "cudnnSetDropoutDescriptor");
  check(cudnnSetRNNDescriptor_v8(
            d.rnn, algo == "standard" ? CUDNN_RNN_ALGO_STANDARD : CUDNN_RNN_ALGO_PERSIST_STATIC,
            cell == "lstm" ? CUDNN_LSTM : CUDNN_GRU, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
            CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
            o.math == "tf32" ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH, H, H, H, 1, d.dropout,
            CUDNN_RNN_PADDED_IO_ENABLED),
        "cudnnSetRNNDescriptor_v8");
  const std::vector<int> lengths(static_cast<size_t>(B), T);
  float padding = 0.0f;
  for (cudnnRNNDataDescriptor_t desc : {d.x, d.y}) {
    check(
        cudnnSetRNNDataDescriptor(desc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                  T, B, H, lengths.data(), &padding),
        "cudnnSetRNNDataDescriptor");
  }
  const int dims[3] = {1, B, H}, strides[3] = {B * H, H, 1};
  check(cudnnSetTensorNdDescriptor(d.h, CUDNN_DATA_FLOAT, 3, dims, strides),
        "cudnnSetTensorNdDescriptor");
  size_t weight_bytes = 0, work_bytes = 0, reserve_bytes = 0;
  check(cudnnGetRNNWeightSpaceSize(handle, d.rnn, &weight_bytes), "cudnnGetRNNWeightSpaceSize");
  check(cudnnGetRNNTempSpaceSizes(handle, d.rnn, CUDNN_FWD_MODE_TRAINING, d.x, &work_bytes,
                                  &reserve_bytes),
        "cudnnGetRNNTempSpaceSizes");
  const size_t seq_floats = static_cast<size_t>(T) * B * H;
  DeviceMemory w(weight_bytes), dw(weight_bytes), work(work_bytes), reserve(reserve_bytes);
  DeviceMemory x(seq_floats * 4), y(seq_floats * 4), dy(seq_floats * 4), dx(seq_floats * 4);
  DeviceMemory seq_lengths(sizeof(int32_t) * B);
  check(cudaMemcpy(seq_lengths.get(), lengths.data(), sizeof(int32_t) * B, cudaMemcpyHostToDevice),
        "cudaMemcpy");
  fill_uniform(w, weight_bytes / 4, 1.0f / std::sqrt(static_cast<float>(H)), 1);
  fill_uniform(x, seq_floats, 1.0f, 2);
  fill_uniform(dy, seq_floats, 1.0f, 3);
  check(cudaMemset(dw.get(), 0, weight_bytes), "cudaMemset");
  const auto* lens = static_cast<const int32_t*>(seq_lengths.get());

  const Events ev;
  double ms[3] = {0, 0, 0}, elapsed = 0;
  int timed = 0;
  for (int i = 0; i < 2 || timed < 3 || elapsed < o.min_time * 1e3; ++i) {
    check(cudaEventRecord(ev[0]), "cudaEventRecord");
    check(cudnnRNNForward(handle, d.rnn, CUDNN_FWD_MODE_TRAINING, lens, d.x, x.get(), d.y, y.get(),
                          d.h, nullptr, nullptr, d.h, nullptr, nullptr, weight_bytes, w.get(),
                          work_bytes, work.get(), reserve_bytes, reserve.get()),
          "cudnnRNNForward");
    check(cudaEventRecord(ev[1]), "cudaEventRecord");
    check(cudnnRNNBackwardData_v8(handle, d.rnn, lens, d.y, y.get(), dy.get(), d.x, dx.get(), d.h,
                                  nullptr, nullptr, nullptr, d.h, nullptr, nullptr, nullptr,
                                  weight_bytes, w.get(), work_bytes, work.get(), reserve_bytes,
                                  reserve.get()),
          "cudnnRNNBackwardData_v8");
    check(cudaEventRecord(ev[2]), "cudaEventRecord");
    check(cudnnRNNBackwardWeights_v8(handle, d.rnn, CUDNN_WGRAD_MODE_ADD, lens, d.x, x.get(), d.h,
                                     nullptr, d.y, y.get(), weight_bytes, dw.get(), work_bytes,
                                     work.get(), reserve_bytes, reserve.get()),
          "cudnnRNNBackwardWeights_v8");
    check(cudaEventRecord(ev[3]), "cudaEventRecord");
    check(cudaEventSynchronize(ev[3]), "cudaEventSynchronize");
    if (i < 2) continue;  // warm-up
    float part[3];
    for (int k = 0; k < 3; ++k)
      check(cudaEventElapsedTime(&part[k], ev[k], ev[k + 1]), "cudaEventElapsedTime");
    for (int k = 0; k < 3; ++k) ms[k] += part[k];
    elapsed += part[0] + part[1] + part[2];
    ++timed;
  }
  return {{"forward_ms", ms[0] / timed},
          {"backward_data_ms", ms[1] / timed},
          {"backward_weights_ms", ms[2] / timed},
          {"step_ms", (ms[0] + ms[1] + ms[2]) / timed},
          {"steps_measured", timed}};
}

void write_json(const std::string& path, const json& j) {
  std::ofstream f(path);
  f << j.dump(2) << "\n";
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"FARNN's GPU baseline: one cuDNN LSTM/GRU layer's training step (FP32), timed"};
  app.add_option("--cells", o.cells, "lstm and/or gru")
      ->check(CLI::IsMember({"lstm", "gru"}))
      ->delimiter(',');
  app.add_option("--hidden", o.hidden, "hidden sizes (input size = hidden)")
      ->check(CLI::PositiveNumber)
      ->delimiter(',');
  app.add_option("--batch", o.batch, "batch sizes")->check(CLI::PositiveNumber)->delimiter(',');
  app.add_option("--algos", o.algos, "standard and/or persist_static")
      ->check(CLI::IsMember({"standard", "persist_static"}))
      ->delimiter(',');
  app.add_option("--steps", o.steps, "sequence length T")->check(CLI::Range(1, 65535));
  app.add_option("--min-time", o.min_time, "seconds of timed steps per configuration")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--math", o.math, "fp32 (FMA units) or tf32 (tensor cores)")
      ->check(CLI::IsMember({"fp32", "tf32"}));
  app.add_option("--json", o.json_path, "output file");
  CLI11_PARSE(app, argc, argv);

  json out = {{"benchmark", "cudnn_rnn_training_step"}, {"math", o.math}, {"steps", o.steps}};
  try {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      const std::string why = e != cudaSuccess ? cudaGetErrorString(e) : "no GPU found";
      std::printf("bench_cudnn: nothing measured: %s\n", why.c_str());
      out["skipped"] = "no usable GPU: " + why;
      write_json(o.json_path, out);
      return 0;
    }
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    cudnnHandle_t handle = nullptr;
    check(cudnnCreate(&handle), "cudnnCreate");
    out["gpu"] = prop.name;
    out["cudnn_version"] = cudnnGetVersion();
    std::printf("bench_cudnn: %s, cuDNN %zu, T = %d, I = H, %s\n", prop.name, cudnnGetVersion(),
                o.steps, o.math.c_str());
    std::printf("%-5s %5s %3s %-15s | %9s %9s %9s %9s\n", "cell", "H", "B", "algo", "fwd ms",
                "bwd-data", "bwd-w", "step ms");
    json& results = out["results"] = json::array();
    for (const std::string& cell : o.cells) {
      for (int H : o.hidden) {
        for (int B : o.batch) {
          for (const std::string& algo : o.algos) {
            json r = {{"cell", cell}, {"hidden", H},      {"input", H},
                      {"batch", B},   {"steps", o.steps}, {"algo", algo}};
            try {
              r.update(measure(handle, o, cell, H, B, algo));
              std::printf("%-5s %5d %3d %-15s | %9.3f %9.3f %9.3f %9.3f\n", cell.c_str(), H, B,
                          algo.c_str(), r["forward_ms"].get<double>(),
                          r["backward_data_ms"].get<double>(),
                          r["backward_weights_ms"].get<double>(), r["step_ms"].get<double>());
            } catch (const CudnnError& err) {
              // cuDNN 9 numbers its statuses by category: 2xxx bad parameter, 3xxx not supported.
              const int category = static_cast<int>(err.status) / 1000;
              if (category != 2 && category != 3) throw;
              r["unsupported"] = err.what();  // e.g. PERSIST_STATIC above its size limits
              std::printf("%-5s %5d %3d %-15s | refused: %s\n", cell.c_str(), H, B, algo.c_str(),
                          err.what());
            }
            std::fflush(stdout);
            results.push_back(r);
          }
        }
      }
    }
    cudnnDestroy(handle);
    write_json(o.json_path, out);
  } catch (const std::exception& e) {
    // What was measured before the failure is kept, with the failure.
    std::fprintf(stderr, "bench_cudnn: %s\n", e.what());
    out["error"] = e.what();
    try {
      write_json(o.json_path, out);
    } catch (const std::exception&) {
    }
    return 1;
  }
  return 0;
}
