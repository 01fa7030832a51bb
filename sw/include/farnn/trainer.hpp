// Trainer: an RnnStack with a linear head, a loss and an optimizer, trained
// on a dataset of padded sequences; what `farnn train` runs.
//
// Data: x (T, N, I) and targets either per step (T, N, O) or per sequence
// (N, O) — the head then reads each sequence's last valid step — with
// optional lengths (N). Losses: mse, or ce (targets are class indices,
// (T, N) or (N), O = number of classes). Optimizers: SGD with momentum and
// Adam (torch.optim semantics); gradient clipping by global norm
// (torch.nn.utils.clip_grad_norm_). The head's parameters are named
// head.weight (O, D*H) and head.bias (O), next to the stack's PyTorch names.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "farnn/rnn_stack.hpp"

namespace farnn::train {

struct Dataset {
  io::Tensor x;               // (T, N, I)
  io::Tensor y;               // (T, N, O) / (N, O) for mse; (T, N) / (N) class indices for ce
  std::vector<int> lengths;   // N values in 1..T, or empty
  int steps() const { return static_cast<int>(x.shape.at(0)); }
  int samples() const { return static_cast<int>(x.shape.at(1)); }
  int features() const { return static_cast<int>(x.shape.at(2)); }
};

// Built-in tasks, so training runs with no download:
//   "sine":   predict the next value of a noisy sine wave at every step (I = 1, O = 1, mse)
//   "adding": the adding problem — sum the two marked values — with sequence
//             lengths drawn from [T/2, T] (packed batches), answered at the last step (I = 2, O = 1, mse)
Dataset synthetic_task(const std::string& name, int steps, int samples, uint64_t seed);

struct TrainConfig {
  static constexpr int kMaxOutputs = 1 << 20;  // head outputs (classes) at most
  StackConfig stack;
  int outputs = 1;             // O
  std::string loss = "mse";    // mse | ce
  std::string optimizer = "adam";  // adam | sgd
  float lr = 1e-2f;
  float momentum = 0.9f;       // sgd
  float clip = 1.0f;           // max global gradient norm, 0: off
  int batch = 8;
  int epochs = 10;
  uint64_t seed = 1;
  void validate() const;
};

struct StepStats {
  double loss = 0;
  double grad_norm = 0;  // before clipping
};

class Trainer {
 public:
  Trainer(const TrainConfig& config, Device& device, Backend& backend, Trace* trace = nullptr);
  RnnStack& stack() { return stack_; }
  const TrainConfig& config() const { return cfg_; }

  // One step on samples `index` of `data`: forward, loss, backward, clip, update.
  StepStats step(const Dataset& data, const std::vector<int>& index);
  // Loss on samples without updating.
  double evaluate(const Dataset& data, const std::vector<int>& index);

  // Every parameter, stack (PyTorch names) then head, for checkpoints.
  io::TensorList state() const;
  void load_state(const io::TensorList& tensors, const std::string& source);
  // Throws std::invalid_argument unless `data` fits this model and loss.
  void check_dataset(const Dataset& data, const std::string& source) const;

 private:
  struct Batch;
  double forward_loss(const Dataset& data, const std::vector<int>& index, bool backward, Batch& b);

  TrainConfig cfg_;
  Backend& be_;
  Trace* trace_;
  RnnStack stack_;
  Array head_w_, head_b_, head_gw_, head_gb_;
  // Optimizer state per parameter (stack params, then head weight, head bias).
  std::vector<Array> m_, v_;
  long steps_ = 0;
};

// Writes a loss curve as an SVG line plot (std::runtime_error naming the path on failure).
void write_loss_svg(const std::string& path, const std::vector<double>& losses, const std::string& title);

}  // namespace farnn::train
