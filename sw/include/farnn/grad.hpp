// One forward and backward of an RNN stack on the device, for comparison with
// PyTorch (`farnn grad`): x (T, B, I) and dy (T, B, D*H), zero initial state,
// loss = sum(y * dy). Returns, in PyTorch's shapes: y (T, B, D*H),
// h_n (L*D, B, H), c_n (LSTM only), dx (T, B, I) and grad.<param> for every
// parameter. Shape mismatches -> std::invalid_argument naming the file and
// the flag to check.
#pragma once

#include <string>
#include <vector>

#include "farnn/rnn_stack.hpp"

namespace farnn::train {

struct GradInputs {
  io::TensorList weights;
  io::Tensor x, dy;
  std::vector<int> lengths;                               // per sequence, or empty
  std::string weights_name = "weights", x_name = "x", dy_name = "dy";  // for messages
};

io::TensorList compute_grad(StackConfig config, Device& device, Backend& backend, const GradInputs& in,
                            Trace* trace = nullptr);

}  // namespace farnn::train
