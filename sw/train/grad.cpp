// compute_grad: `farnn grad` without the files; see farnn/grad.hpp.
#include "farnn/grad.hpp"

#include <cmath>
#include <stdexcept>

namespace farnn::train {

io::TensorList compute_grad(StackConfig config, Device& device, Backend& backend, const GradInputs& in,
                            Trace* trace) {
  if (in.x.shape.size() != 3) {
    throw std::invalid_argument(in.x_name + ": input must be (T, B, I), got shape " + in.x.shape_string());
  }
  const int T = static_cast<int>(in.x.shape[0]), B = static_cast<int>(in.x.shape[1]);
  config.input = static_cast<int>(in.x.shape[2]);
  if (T < 1 || B < 1 || config.input < 1) {
    throw std::invalid_argument(in.x_name + ": every dimension of (T, B, I) must be >= 1, got " +
                                in.x.shape_string());
  }
  RnnStack stack(config, device, backend, trace);
  stack.set_params(in.weights, in.weights_name);
  const int64_t dh = config.output();
  if (in.dy.shape != std::vector<int64_t>{T, B, dh}) {
    io::Tensor want;
    want.shape = {T, B, dh};
    throw std::invalid_argument(in.dy_name + ": grad-output has shape " + in.dy.shape_string() + ", expected " +
                                want.shape_string() + " (T, B, directions*hidden)");
  }
  const StackOutput out = stack.forward(in.x.data, T, B, in.lengths);
  const std::vector<float> dx = stack.backward(in.dy.data);
  const int64_t LD = static_cast<int64_t>(config.layers) * config.directions();
  io::TensorList result = {{"y", {{T, B, dh}, out.y}}, {"h_n", {{LD, B, config.hidden}, out.h_n}}};
  if (config.cell == CellKind::kLstm) result.push_back({"c_n", {{LD, B, config.hidden}, out.c_n}});
  result.push_back({"dx", {{T, B, config.input}, dx}});
  for (auto& g : stack.grad_tensors("grad.")) result.push_back(std::move(g));
  return result;
}

}  // namespace farnn::train
