// One LSTM/GRU layer placed in the harness's host memory for farnn_core: its
// inputs (weight image, lengths, xp, states, dh, carry), room for its outputs,
// the model's results, the LOAD / FORWARD / BACKWARD descriptors that run it,
// and the bit-exact comparison of what the core wrote. Shared by the core
// testbench and the core benchmark.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core_harness.hpp"
#include "layer_case.hpp"

namespace farnn::tb {

struct HostLayer {
  engine::Config cfg;
  LayerCase lc;
  engine::ForwardResult fw;
  engine::BackwardResult bw;
  uint64_t weights = 0, lengths = 0, xp = 0, si_fw = 0, h = 0, so_fw = 0, dh = 0, carry = 0, delta = 0,
           so_bw = 0, store = 0;
  uint32_t weight_bytes = 0;
  int bank = 0;
};

// The largest layer the core holds: H the most that stays resident, B = MaxBatch.
inline engine::Config full_config(const EngineParams& p, engine::Cell cell, int steps) {
  engine::Config cfg;
  cfg.cell = cell;
  cfg.num_pe = p.num_pe;
  cfg.hidden = engine::max_resident_hidden(cell, p.num_pe, p.weight_depth, p.max_hidden);
  cfg.batch = p.max_batch;
  cfg.steps = steps;
  return cfg;
}

// Random data for `cfg` (seeded from the harness's generator), the model's
// results, and every buffer allocated; streams start at word offsets (delta
// at a 16-byte one, as BACKWARD requires), so most of them begin and end
// mid-beat.
inline HostLayer place_layer(CoreHarness& hx, const engine::Config& cfg, int bank, uint64_t store_base) {
  HostLayer l;
  l.cfg = cfg;
  l.bank = bank;
  Rng rng(hx.rng().u64());
  l.lc = make_layer_case(rng, cfg, 3);
  l.fw = engine::forward(as_built(cfg), l.lc.weights, l.lc.xp, l.lc.state_in_fw);
  l.bw = engine::backward(as_built(cfg), l.lc.weights, l.fw.records, l.lc.dh_bits, l.lc.carry_in);
  const auto image = engine::load_image(cfg, l.lc.weights, hx.params().layout());
  l.weights = hx.alloc_words(image, 64);
  l.weight_bytes = static_cast<uint32_t>(image.size() * 4);
  std::vector<uint32_t> lens;
  for (int b = 0; b < cfg.batch; ++b) lens.push_back(static_cast<uint32_t>(cfg.length(b)));
  l.lengths = hx.alloc_words(lens, 4);
  l.xp = hx.alloc_words(l.lc.xp, 4);
  l.si_fw = hx.alloc_words(l.lc.state_in_fw, 4);
  l.h = hx.alloc(l.fw.h.size() * 4, 4);
  l.so_fw = hx.alloc(l.fw.state_out.size() * 4, 4);
  l.dh = hx.alloc_words(l.lc.dh_bits, 4);
  l.carry = hx.alloc_words(l.lc.carry_in, 4);
  l.delta = hx.alloc(l.bw.delta.size() * 4, 16);
  l.so_bw = hx.alloc(l.bw.state_out.size() * 4, 4);
  l.store = store_base;
  return l;
}

inline cr::Cell desc_cell(engine::Cell c) { return c == engine::Cell::kLstm ? cr::Cell::kLstm : cr::Cell::kGru; }

inline cr::Descriptor load_desc(const HostLayer& l) {
  cr::Descriptor d;
  d.op = cr::Op::kLoad;
  d.cell = desc_cell(l.cfg.cell);
  d.bank = static_cast<uint8_t>(l.bank);
  d.hidden = static_cast<uint16_t>(l.cfg.hidden);
  d.addr0 = l.weights;
  d.len0 = l.weight_bytes;
  return d;
}

inline cr::Descriptor run_desc(const HostLayer& l, bool bw) {
  cr::Descriptor d;
  d.op = bw ? cr::Op::kBackward : cr::Op::kForward;
  d.cell = desc_cell(l.cfg.cell);
  d.bank = static_cast<uint8_t>(l.bank);
  d.hidden = static_cast<uint16_t>(l.cfg.hidden);
  d.batch = static_cast<uint16_t>(l.cfg.batch);
  d.steps = static_cast<uint16_t>(l.cfg.steps);
  d.addr0 = l.lengths;
  d.in_addr = bw ? l.dh : l.xp;
  d.out_addr = bw ? l.delta : l.h;
  d.state_in_addr = bw ? l.carry : l.si_fw;
  d.state_out_addr = bw ? l.so_bw : l.so_fw;
  d.store_base = l.store;
  d.store_size = static_cast<uint64_t>(l.cfg.packed_steps()) * l.cfg.hidden * 32;
  return d;
}

// The first output that differs from the model, described; empty when the
// core's h, final state, delta and dh0/dc0 are all bit-exact.
inline std::string layer_mismatch(CoreHarness& hx, const HostLayer& l) {
  const struct {
    const char* name;
    const std::vector<uint32_t>& expected;
    uint64_t addr;
  } outputs[] = {{"h", l.fw.h, l.h},
                 {"FW final state", l.fw.state_out, l.so_fw},
                 {"delta", l.bw.delta, l.delta},
                 {"dh0/dc0", l.bw.state_out, l.so_bw}};
  for (const auto& o : outputs) {
    const auto got = hx.host().read_words(o.addr, o.expected.size());
    const long at = first_mismatch(o.expected, got);
    if (at >= 0) {
      const auto i = static_cast<size_t>(at);
      return std::string(o.name) + " not bit-exact: word " + std::to_string(at) + " of " +
             std::to_string(o.expected.size()) + " is 0x" + CoreHarness::hex(got[i]) + ", expected 0x" +
             CoreHarness::hex(o.expected[i]);
    }
  }
  return {};
}

inline void expect_layer(CoreHarness& hx, const HostLayer& l, const std::string& ctx) {
  const std::string bad = layer_mismatch(hx, l);
  if (!bad.empty()) hx.tb().fail(ctx + ": " + bad);
}

}  // namespace farnn::tb
