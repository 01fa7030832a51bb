// RnnStack: a stacked, optionally bidirectional LSTM/GRU trained the FARNN
// way. The compute backend runs each layer's input GEMM over the whole
// (packed) sequence, the gradient GEMMs and the layout moves; the device runs
// the recurrence, FORWARD and BACKWARD, with the layer's recurrent weights in
// a bank. Parameters use PyTorch's names, shapes and layouts
// (weight_ih_l{k}[_reverse], weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}), so
// a torch.nn.LSTM/GRU state dict moves across unchanged.
//
// Batches are padded (T, B, features), seq-first as PyTorch's default, with
// per-sequence lengths (empty: all T); internally only the packed steps are
// computed (no work on padding), and padded outputs are zero. A batch above
// the device's max_batch runs as groups of at most max_batch sequences, a
// device command each; the GEMMs still see the whole batch.
//
// Schedule of one step (the overlap is real: device commands are asynchronous):
//   forward, layer by layer: each direction's FORWARD is queued gated on a
//     ready-steps word, then its input GEMM runs in StackConfig::gemm_chunks
//     parts over time, each part published as it is done, so the device starts
//     on the first part; a layer's second direction's GEMM runs while the
//     device runs its first direction; the next layer's weights go into a
//     free bank while this layer runs (a LOAD runs beside a command on
//     another bank). Layer l+1's first direction is queued while layer l's
//     last runs and each part of its input GEMM waits only for the layer-l
//     steps it reads (their progress words), not for the whole FORWARD. A
//     bidirectional stack alternates its directions' order by layer (forward
//     first on even layers), so that direction is the same in both layers.
//   backward, top layer first, each layer's directions in the opposite order
//     of its forward: layer l-1's first direction's BACKWARD is queued (gated)
//     while layer l's last runs, and the dx GEMM into its dh runs in parts
//     that follow layer l's progress, latest steps first, each part published
//     to the gate; the layer's weight-gradient GEMMs run while the device
//     runs the BACKWARDs of the layer below.
// A group's command runs its longest sequence's steps. The device buffers
// are sized for T*B rows, so that batches of other lengths reuse them (a new
// buffer waits for the device to go idle, which would stop the streaming).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "farnn/backend.hpp"
#include "farnn/device.hpp"
#include "farnn/tensor_io.hpp"
#include "farnn/trace.hpp"

namespace farnn::train {

struct StackConfig {
  CellKind cell = CellKind::kLstm;
  int input = 1;
  int hidden = 1;
  int layers = 1;
  bool bidirectional = false;
  // The input GEMM of each layer-direction runs in this many parts over time;
  // the device's FORWARD reads a step as soon as its part is published. So
  // does the dx GEMM into a layer's first backward direction's dh. (A GEMM's
  // rounding may follow its row count, so the parts may change the last bits.)
  int gemm_chunks = 4;
  int directions() const { return bidirectional ? 2 : 1; }
  int output() const { return directions() * hidden; }
  std::string describe() const;
  void validate() const;  // std::invalid_argument naming the field
};

// One parameter: PyTorch name and shape, value and gradient.
struct Param {
  std::string name;
  std::vector<int64_t> shape;
  BufferPtr value;  // device-registered (the recurrent weights are LOADed from it), backend memory
  Array grad;       // same size
  size_t size() const { return value->size(); }
  float* data() const { return value->data(); }
};

// The padded results of forward(): y (T, B, D*H), h_n and c_n (L*D, B, H; c_n LSTM only).
struct StackOutput {
  std::vector<float> y, h_n, c_n;
};

class RnnStack {
 public:
  RnnStack(const StackConfig& config, Device& device, Backend& backend, Trace* trace = nullptr);
  ~RnnStack();
  const StackConfig& config() const { return cfg_; }

  // PyTorch's default initialisation: every entry uniform in [-k, k), k = 1/sqrt(H).
  void init_uniform(uint64_t seed);
  std::vector<Param>& params() { return params_; }
  const std::vector<Param>& params() const { return params_; }
  // Every parameter from `tensors` by name, shape checked; a missing name, a
  // wrong shape or a name the stack does not have -> std::invalid_argument.
  void set_params(const io::TensorList& tensors, const std::string& source);
  io::TensorList param_tensors(const std::string& prefix = "") const;
  io::TensorList grad_tensors(const std::string& prefix = "grad.") const;

  // x: (T, B, I) padded; lengths: B values in 1..T or empty. Keeps what
  // backward needs.
  StackOutput forward(const std::vector<float>& x, int steps, int batch, const std::vector<int>& lengths);
  // dy: (T, B, D*H), the gradient of the loss with respect to y (padding
  // ignored). Sets every Param::grad; returns dx (T, B, I).
  std::vector<float> backward(const std::vector<float>& dy);

 private:
  struct Impl;
  // The bank holding unit (layer*D + direction)'s recurrent weights, loading
  // them into the least recently used bank when none does.
  int bank_for(int unit);
  // bank_for(unit) ahead of time when a bank is free of the current layer
  // (more banks than directions), so its LOAD runs beside the current commands.
  void preload(int unit);
  // Records `job` as the last command on `bank`, and for the trace with `label`.
  void used_bank(int bank, const JobPtr& job, const std::string& label);
  // Notes a FORWARD of (unit, group) on `bank` among those the device keeps
  // records of (Capabilities::forward_records: the newest that many).
  void recorded(int unit, int group, int bank);
  // Before its BACKWARD: runs the FORWARD of (unit, group) again when the
  // device no longer keeps its record (a step of more FORWARDs than that).
  void refresh_record(int unit, int group, int bank);
  // "l1 reverse"; with a group of a split batch: "l1 reverse, sequences 4-7".
  std::string unit_label(int unit, int group = -1) const;
  // Waits for a device command; every command's span goes into the trace.
  void wait_job(const JobPtr& job);
  void trace_jobs();
  StackConfig cfg_;
  Device& dev_;
  Backend& be_;
  Trace* trace_;
  std::vector<Param> params_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace farnn::train
