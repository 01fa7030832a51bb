// Cycle model of the recurrent engine: how many cycles a FORWARD or BACKWARD
// command takes, from acceptance to done, when its streams are ideal (every
// input word offered at once, every output taken at once) and the gate store
// answers after a fixed latency. It replays the sequencer's issue rules token
// by token (not cycle by cycle), with the latencies of the PE chain and the
// activation unit written out as named terms below, so it runs in microseconds
// for any size. `make test` checks it against the Verilated engine exactly
// (tb/engine/tb_engine_speed.cpp): a slower token spacing, an extra stall or a
// longer pipeline anywhere fails that test.
#pragma once

#include <cstdint>

#include "farnn/engine_model.hpp"

namespace farnn::engine {

struct EngineTiming {
  int num_pe = 4;
  int mul_latency = 2;
  int add_latency = 3;
  int mem_latency = 1;  // gate store: request accepted -> response offered, cycles
  int fifo_depth = 64;  // the engine's stream FIFOs: 2^ceil(log2(2*MaxHidden)) entries
  int weight_lanes = 16;  // words per weight-stream beat
  int num_chains = 1;     // pe_chain's chains of num_pe / num_chains PEs
  int row_lanes = 0;      // BW delta rows a ROW token carries; 0: the engine's default (row_lanes())
  int res_lanes = 0;      // FW result lanes of the chain; 0: the engine's default (res_lanes())
  int xp_words = 4;       // Xp words a beat: 4 (a unit a beat, the engine's default) or 1
  bool red_adder = false; // RedAdder: the backward reduction on an adder of its own per PE
  int chain_len() const { return num_pe / num_chains; }
  int lanes() const;      // row_lanes, or the default for this geometry
  int result_lanes() const;  // res_lanes, or the default for this geometry
};

// The engine's default ResLanes: 4 where NumPe is a multiple of 4 (results
// leave the chains 4 rows a cycle, the activation unit takes a unit a cycle),
// else 1.
inline int res_lanes(int num_pe) { return num_pe % 4 == 0 ? 4 : 1; }

// The engine's default RowLanes (engine_pkg::row_lanes): 4 where it leaves the
// smaller backward skews (chains of a multiple of 4 PEs), else 1.
int row_lanes(int num_pe, int num_chains, int add_latency);

// Entries of the engine's stream FIFOs for a MaxHidden: 2^ceil(log2(2*MaxHidden)).
inline int stream_fifo_depth(int max_hidden) {
  int d = 1;
  while (d < 2 * max_hidden) d *= 2;
  return d;
}

// Register levels of pe_chain's trees (engine_pkg::bcast_depth / join_depth):
// the broadcast to the chain heads (fan-out 4) and the join of the chain tails
// (binary; an adder of add_latency per level in BW).
int bcast_depth(int num_chains);
int join_depth(int num_chains);

// Issue rules of the sequencer (rtl/engine/sequencer.sv, S_DERIVE), shared by
// the model and the documentation of the schedule.
struct Schedule {
  int num_gates, rows, rows_floor, spacing_fw, spacing_step, result_gap;
  // FW with several sums a row: the last element's final adds' span after it
  // (engine_pkg::fw_sums_clear, 0 with one sum), the least distance between
  // two steps' last ELEMs (fw_last_gap), and the offsets after a step's last
  // ELEM that the next step's ELEMs skip (fw_step_holes, bit d: d cycles).
  int sums_clear, last_gap;
  uint64_t step_holes;
  // BW: the ROW token grid (lines of groups, pitch apart) or row order
  // (engine_pkg::bw_row_order: a chain's groups, then the next chain's), the
  // chains the last wave reaches, the spans of a full and of the last wave,
  // and the spacings.
  bool row_order;
  int row_lanes, lines, pitch, chains_last, span_full, span_last, spacing_bw, reduce_gap, after_reduce;
  int fw_sums;  // sums per row forward (engine::fw_sums)
  static Schedule of(const Config& cfg, const EngineTiming& t);
};

// Cycles of a LOAD (the loader's cnt_load_cycles), beats offered every cycle:
// set-up, one sub-beat per cycle, the weight bus drain.
uint64_t load_cycles(const Config& cfg, const EngineTiming& t);

// Cycles from command acceptance to done (the engine's cnt_cycles), ideal streams.
// forward_cycles throws std::invalid_argument where a command would hold more
// step descriptors than the engine's descriptor FIFO (kStepDescriptors).
uint64_t forward_cycles(const Config& cfg, const EngineTiming& t);
uint64_t backward_cycles(const Config& cfg, const EngineTiming& t);

// The step descriptors (slot, last/final flag) a FORWARD command holds at
// once, between a step's first ELEM and its unit 0 at the activation unit (an
// upper bound), and what the engine's FIFO holds: engine.sv's u_desc_fifo,
// Depth 8 plus its output register.
constexpr int kStepDescriptors = 9;
int forward_descriptors(const Config& cfg, const EngineTiming& t);

}  // namespace farnn::engine
