// The engine's parameters as built (the FARNN_PARAM_* macros CMake passes
// with each Verilated model), for every testbench and benchmark of a block
// that holds the engine: the engine's own and farnn_core's.
#pragma once

#include <string>

#include "farnn/engine_cycles.hpp"
#include "farnn/engine_model.hpp"

namespace farnn::tb {

struct EngineParams {
  int num_pe = FARNN_PARAM_NumPe;
  int weight_depth = FARNN_PARAM_WeightDepth;  // per bank
  int num_banks = FARNN_PARAM_NumBanks;
  int weight_lanes = FARNN_PARAM_WeightLanes;
  int max_hidden = FARNN_PARAM_MaxHidden;
  int max_batch = FARNN_PARAM_MaxBatch;
  int mul_latency = FARNN_PARAM_MulLatency;
  int add_latency = FARNN_PARAM_AddLatency;
  engine::LoadLayout layout() const { return {num_pe, weight_lanes}; }
  int fifo_depth() const {  // the engine's stream FIFOs
    int d = 1;
    while (d < 2 * max_hidden) d *= 2;
    return d;
  }
  // The cycle model's view of this engine, with a gate store answering after mem_latency cycles.
  engine::EngineTiming timing(int mem_latency) const {
    return {num_pe, mul_latency, add_latency, mem_latency, fifo_depth(), weight_lanes};
  }
  std::string describe() const {
    return "NumPe=" + std::to_string(num_pe) + " WeightDepth=" + std::to_string(weight_depth) +
           " NumBanks=" + std::to_string(num_banks) + " WeightLanes=" + std::to_string(weight_lanes) +
           " MaxHidden=" + std::to_string(max_hidden) + " MaxBatch=" + std::to_string(max_batch) +
           " MulLatency=" + std::to_string(mul_latency) + " AddLatency=" + std::to_string(add_latency);
  }
};

}  // namespace farnn::tb
