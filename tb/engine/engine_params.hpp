// The engine's parameters as built (the FARNN_PARAM_* macros CMake passes
// with each Verilated model), for every testbench and benchmark of a block
// that holds the engine: the engine's own and farnn_core's.
#pragma once

#include <string>

#include "farnn/engine_cycles.hpp"
#include "farnn/engine_model.hpp"

// A build that does not name NumChains has one chain (the RTL's default).
#ifndef FARNN_PARAM_NumChains
#define FARNN_PARAM_NumChains 1
#endif
// A build that does not name RowLanes takes engine_pkg::row_lanes (0 here).
#ifndef FARNN_PARAM_RowLanes
#define FARNN_PARAM_RowLanes 0
#endif

// A build that does not name ResLanes takes the engine's default
// (engine::res_lanes, 0 here); one that does not name XpWords has the
// engine's 4 (as farnn_core builds it: a unit a beat from its gather).
#ifndef FARNN_PARAM_ResLanes
#define FARNN_PARAM_ResLanes 0
#endif
#ifndef FARNN_PARAM_XpWords
#define FARNN_PARAM_XpWords 4
#endif
// A build that does not name RedAdder reduces on the MAC adder (the RTL's default).
#ifndef FARNN_PARAM_RedAdder
#define FARNN_PARAM_RedAdder 0
#endif

namespace farnn::tb {

struct EngineParams {
  int num_pe = FARNN_PARAM_NumPe;
  int num_chains = FARNN_PARAM_NumChains;
  int weight_depth = FARNN_PARAM_WeightDepth;  // per bank
  int num_banks = FARNN_PARAM_NumBanks;
  int weight_lanes = FARNN_PARAM_WeightLanes;
  int max_hidden = FARNN_PARAM_MaxHidden;
  int max_batch = FARNN_PARAM_MaxBatch;
  int mul_latency = FARNN_PARAM_MulLatency;
  int add_latency = FARNN_PARAM_AddLatency;
  int row_lanes = FARNN_PARAM_RowLanes;  // 0: the default for the geometry
  int res_lanes = FARNN_PARAM_ResLanes;  // 0: the default for NumPe
  int xp_words = FARNN_PARAM_XpWords;    // Xp words a beat (1 or 4)
  bool red_adder = FARNN_PARAM_RedAdder != 0;  // BW reduction on an adder of its own per PE
  engine::LoadLayout layout() const { return {num_pe, weight_lanes}; }
  int fifo_depth() const { return engine::stream_fifo_depth(max_hidden); }  // the engine's stream FIFOs
  // The cycle model's view of this engine, with a gate store answering after mem_latency cycles.
  engine::EngineTiming timing(int mem_latency) const {
    return {num_pe,     mul_latency, add_latency, mem_latency, fifo_depth(), weight_lanes,
            num_chains, row_lanes,   res_lanes,   xp_words,     red_adder};
  }
  std::string describe() const {
    return "NumPe=" + std::to_string(num_pe) + " NumChains=" + std::to_string(num_chains) + " WeightDepth=" + std::to_string(weight_depth) +
           " NumBanks=" + std::to_string(num_banks) + " WeightLanes=" + std::to_string(weight_lanes) +
           " MaxHidden=" + std::to_string(max_hidden) + " MaxBatch=" + std::to_string(max_batch) +
           " MulLatency=" + std::to_string(mul_latency) + " AddLatency=" + std::to_string(add_latency) +
           " RowLanes=" + std::to_string(timing(1).lanes()) + " ResLanes=" + std::to_string(timing(1).result_lanes()) +
           " XpWords=" + std::to_string(xp_words) + " RedAdder=" + std::to_string(red_adder ? 1 : 0);
  }
};

// A model configuration as this engine computes it (its chains' reduction order).
inline engine::Config as_built(engine::Config cfg) {
  cfg.num_chains = FARNN_PARAM_NumChains;
  return cfg;
}

}  // namespace farnn::tb
