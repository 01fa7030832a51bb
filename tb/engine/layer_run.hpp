// One layer on the Verilated engine: LOAD, FORWARD, BACKWARD for a LayerCase,
// next to the bit-accurate model's results for the same inputs. Shared by the
// engine testbench (which asserts), `make sim` (which reports) and the
// benchmark (which measures).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine_harness.hpp"
#include "layer_case.hpp"

namespace farnn::tb {

struct LayerRun {
  CommandResult load, fw, bw;
  engine::ForwardResult model_fw;
  engine::BackwardResult model_bw;
  std::vector<uint32_t> load_image;      // the weight stream (beats, flat)
  std::vector<uint32_t> stored;         // gate store after FW, [T][B][H][8]
  std::vector<uint32_t> expected_delta;  // model delta in the stream's order
  uint64_t useful_macs = 0;              // per phase
};

constexpr uint64_t kStoreBase = 0x10000;

// Generous bound on a command's cycles: the work plus per-step overheads,
// scaled for the slowest stream stress.
inline uint64_t cycle_budget(const engine::Config& c, const EngineParams& p) {
  const uint64_t gh = static_cast<uint64_t>(c.gate_rows());
  const uint64_t rows = (gh + p.num_pe - 1) / p.num_pe;
  const uint64_t per_step = std::max<uint64_t>(rows, 8) * c.hidden + gh * 4 + 64ull * p.num_pe + 400;
  return 20000 + 20 * per_step * c.steps * c.batch + 40 * (gh * (c.hidden + 1));
}

// The command of one phase of a layer case: its configuration and streams.
inline EngineCommand layer_command(const LayerCase& lc, Op op, const engine::LoadLayout& layout, int bank = 0,
                                   uint32_t watchdog = 0) {
  const engine::Config& cfg = lc.cfg;
  EngineCommand c;
  c.op = op;
  c.bank = bank;
  c.cell = static_cast<int>(cfg.cell);
  c.hidden = cfg.hidden;
  c.batch = cfg.batch;
  c.steps = cfg.steps;
  c.lengths = cfg.lengths;
  c.store_base = kStoreBase;
  c.store_size = static_cast<uint64_t>(cfg.packed_steps()) * cfg.hidden * 32;
  c.watchdog = watchdog;
  if (op == Op::kLoad) c.weights = engine::load_image(cfg, lc.weights, layout);
  if (op == Op::kForward) {
    c.state_in = lc.state_in_fw;
    c.xp = lc.xp;
  }
  if (op == Op::kBackward) {
    c.state_in = lc.carry_in;
    c.dh = lc.dh_stream;
  }
  return c;
}

// A layer case with the model's results, for tests that run its phases one
// by one (and around faults).
struct ModelLayer {
  LayerCase lc;
  engine::ForwardResult fw;
  engine::BackwardResult bw;
  std::vector<uint32_t> expected_delta;  // the delta stream's order
};

inline ModelLayer model_layer(const engine::Config& cfg, uint64_t seed, int input) {
  Rng rng(seed);
  ModelLayer l;
  l.lc = make_layer_case(rng, cfg, input);
  l.fw = engine::forward(as_built(cfg), l.lc.weights, l.lc.xp, l.lc.state_in_fw);
  l.bw = engine::backward(as_built(cfg), l.lc.weights, l.fw.records, l.lc.dh_bits, l.lc.carry_in);
  l.expected_delta = engine::reverse_time(cfg, l.bw.delta, engine::kDeltaWords);
  return l;
}

// Fails unless `actual` is `expected`, word for word.
inline void expect_words(EngineHarness& hx, const std::string& what, const std::vector<uint32_t>& expected,
                         const std::vector<uint32_t>& actual) {
  const long at = first_mismatch(expected, actual);
  if (at >= 0) {
    hx.tb().fail(what + " not bit-exact: first difference at word " + std::to_string(at) + " of " +
                 std::to_string(expected.size()) + " (got " + std::to_string(actual.size()) + " words)");
  }
}

// A FORWARD / BACKWARD of a model layer that ended OK with the model's outputs.
inline void expect_forward(EngineHarness& hx, const ModelLayer& l, const CommandResult& r, const std::string& ctx) {
  if (!r.ok()) hx.tb().fail(ctx + ": FORWARD ended with " + r.describe());
  expect_words(hx, ctx + ": h", l.fw.h, r.h);
  expect_words(hx, ctx + ": final state", l.fw.state_out, r.state_out);
}
inline void expect_backward(EngineHarness& hx, const ModelLayer& l, const CommandResult& r, const std::string& ctx) {
  if (!r.ok()) hx.tb().fail(ctx + ": BACKWARD ended with " + r.describe());
  expect_words(hx, ctx + ": delta", l.expected_delta, r.delta);
  expect_words(hx, ctx + ": dh0/dc0", l.bw.state_out, r.state_out);
}

inline LayerRun run_layer(EngineHarness& hx, const LayerCase& lc) {
  const engine::Config& cfg = lc.cfg;
  const uint64_t budget = cycle_budget(cfg, hx.params());
  LayerRun r;
  r.model_fw = engine::forward(as_built(cfg), lc.weights, lc.xp, lc.state_in_fw);
  r.model_bw = engine::backward(as_built(cfg), lc.weights, r.model_fw.records, lc.dh_bits, lc.carry_in);
  r.expected_delta = engine::reverse_time(cfg, r.model_bw.delta, engine::kDeltaWords);
  r.useful_macs = static_cast<uint64_t>(cfg.packed_steps()) * cfg.gate_rows() * cfg.hidden;

  const EngineCommand load = layer_command(lc, Op::kLoad, hx.params().layout());
  r.load_image = load.weights;
  r.load = hx.run(load, budget);
  r.fw = hx.run(layer_command(lc, Op::kForward, hx.params().layout()), budget);
  r.stored.assign(r.model_fw.records.size(), 0);
  for (size_t n = 0; n < r.stored.size() / 8; ++n) {
    const auto it = hx.memory().contents().find(kStoreBase + n * 32);
    if (it == hx.memory().contents().end()) continue;  // left 0: shows up as a mismatch
    for (int w = 0; w < 8; ++w) r.stored[n * 8 + w] = it->second[w];
  }

  r.bw = hx.run(layer_command(lc, Op::kBackward, hx.params().layout()), budget);
  return r;
}

inline size_t count_mismatches(const std::vector<uint32_t>& expected, const std::vector<uint32_t>& actual) {
  size_t bad = expected.size() > actual.size() ? expected.size() - actual.size() : actual.size() - expected.size();
  for (size_t i = 0; i < std::min(expected.size(), actual.size()); ++i) bad += expected[i] != actual[i];
  return bad;
}

inline bool nonfinite(uint32_t x) { return (x & 0x7f800000u) == 0x7f800000u; }

// Hidden units whose outputs hold a NaN or an infinity, as the engine counts
// them: forward h words; backward units with any such delta word, and dh0.
inline uint64_t nonfinite_units_fw(const engine::ForwardResult& fw) {
  return static_cast<uint64_t>(std::count_if(fw.h.begin(), fw.h.end(), nonfinite));
}
inline uint64_t nonfinite_units_bw(const engine::BackwardResult& bw, engine::Cell cell) {
  uint64_t n = 0;
  for (size_t u = 0; u < bw.delta.size(); u += engine::kDeltaWords) {
    n += std::any_of(bw.delta.begin() + u, bw.delta.begin() + u + engine::kDeltaWords, nonfinite);
  }
  for (size_t u = 0; u < bw.state_out.size(); u += engine::state_words(cell)) n += nonfinite(bw.state_out[u]);
  return n;
}

inline double utilization(uint64_t macs, int num_pe, uint64_t cycles) {
  return cycles == 0 ? 0.0 : static_cast<double>(macs) / (static_cast<double>(num_pe) * cycles);
}

}  // namespace farnn::tb
