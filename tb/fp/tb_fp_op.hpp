// Testbench body shared by tb_fp_add and tb_fp_mul: drives a binary32
// operator (fp_add / fp_mul, same ports) with every pair of special values
// and then random operand pairs (tests/fp32/fp32_vectors.hpp distributions),
// through phases of random input idle cycles and output backpressure,
// including phases with neither. Checks:
//   - every result and tag bit-exactly against the C++ model (Scoreboard);
//   - the output obeys AXI-Stream rules (HandshakeMonitor);
//   - latency: never below Latency, exactly Latency for an item that saw no
//     backpressure between entering and leaving;
//   - throughput: in phases without idle cycles and without backpressure an
//     input is accepted every cycle (and, by the latency check, a result
//     leaves every cycle); in_ready_o is high whenever out_ready_i is;
//   - mid-run resets: items in flight are discarded, the pipe comes out of
//     reset empty (no output valid) and restarts cleanly.
// Options: --vectors N (random pairs, default 10^6), --seed, --trace.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "farnn/fp32.hpp"
#include "fp32_vectors.hpp"
#include "options.hpp"
#include "scoreboard.hpp"
#include "stream.hpp"
#include "testbench.hpp"

namespace farnn::tb::fp {

struct OpIn {
  uint32_t a = 0;
  uint32_t b = 0;
  uint32_t tag = 0;
};

// An operator result; a and b are filled in for messages only.
struct OpOut {
  uint32_t a = 0;
  uint32_t b = 0;
  uint32_t y = 0;
  uint32_t tag = 0;
  bool operator==(const OpOut& o) const { return y == o.y && tag == o.tag; }
};

inline std::string hex32(uint32_t x) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", x);
  return buf;
}

// A component made of two callbacks.
class Probe : public Component {
 public:
  std::function<void()> on_drive;
  std::function<void()> on_sample;
  void drive() override {
    if (on_drive) on_drive();
  }
  void sample() override {
    if (on_sample) on_sample();
  }
};

struct OpConfig {
  std::string name;       // e.g. "tb_fp_add_l3"
  std::string op_symbol;  // "+" or "*"
  std::function<uint32_t(uint32_t, uint32_t)> model;
  bool is_mul = false;
  unsigned latency = 1;
  unsigned tag_width = 1;
};

template <class Model>
void run_fp_op(const Options& opt, const OpConfig& cfg) {
  const auto t_start = std::chrono::steady_clock::now();
  Testbench<Model> tb(opt, cfg.name);
  Model& dut = tb.dut();
  Rng rng(opt.seed());
  fp32::testvec::Gen gen(opt.seed() * 0x9E3779B97F4A7C15ull + 1);
  const uint64_t num_random = static_cast<uint64_t>(opt.get_int("vectors", 1000000));
  const uint32_t tag_mask = cfg.tag_width >= 32 ? 0xFFFFFFFFu : ((1u << cfg.tag_width) - 1u);
  auto fail = [&tb](const std::string& msg) { tb.fail(msg); };

  // ---- environment
  StreamSource<OpIn> src(
      rng, 0.0,
      [&](bool valid, const OpIn& x) {
        dut.in_valid_i = valid;
        // Idle cycles carry garbage: the DUT must ignore data without valid.
        dut.a_i = valid ? x.a : rng.u32();
        dut.b_i = valid ? x.b : rng.u32();
        dut.tag_i = (valid ? x.tag : rng.u32()) & tag_mask;
      },
      [&] { return dut.in_ready_o != 0; });

  auto format = [&cfg](const OpOut& r) {
    return hex32(r.a) + " " + cfg.op_symbol + " " + hex32(r.b) + " = " + hex32(r.y) +
           " tag=" + std::to_string(r.tag);
  };
  std::unique_ptr<Scoreboard<OpOut>> sb;
  uint64_t checked = 0;  // over all scoreboards (one per reset epoch)
  auto new_scoreboard = [&] {
    if (sb) checked += sb->checked();
    sb = std::make_unique<Scoreboard<OpOut>>(cfg.name + " results", fail, format);
  };
  new_scoreboard();

  struct InFlight {
    uint64_t cycle;
    uint32_t a, b;
  };
  std::deque<InFlight> in_flight;
  uint64_t last_stall_cycle = 0;  // last cycle out_ready_i was low
  bool any_stall = false;
  uint64_t latency_exact = 0;  // results whose latency was checked to be exactly Latency
  uint64_t max_latency = 0;

  StreamSink<OpOut> sink(
      rng, 0.0, [&](bool ready) { dut.out_ready_i = ready; }, [&] { return dut.out_valid_o != 0; },
      [&] {
        return OpOut{0, 0, dut.y_o, static_cast<uint32_t>(dut.tag_o)};
      },
      [&](const OpOut& got) {
        if (dut.rst_i) return;  // an output taken during reset is void
        OpOut r = got;
        if (!in_flight.empty()) {
          const InFlight f = in_flight.front();
          in_flight.pop_front();
          r.a = f.a;
          r.b = f.b;
          const uint64_t lat = tb.cycle() - f.cycle;
          max_latency = std::max(max_latency, lat);
          if (lat < cfg.latency) {
            fail("latency " + std::to_string(lat) + " < " + std::to_string(cfg.latency) + " for " +
                 format(r));
          }
          if (!any_stall || last_stall_cycle < f.cycle) {
            if (lat != cfg.latency) {
              fail("latency " + std::to_string(lat) + " != " + std::to_string(cfg.latency) +
                   " without backpressure for " + format(r));
            }
            ++latency_exact;
          }
        }
        sb->observe(r);
      });

  // Flow phases (no idle, no backpressure): every offered input is taken.
  bool flow_phase = false;
  uint64_t flow_cycles = 0;
  uint64_t flow_accepted = 0;

  Probe probe;
  probe.on_sample = [&] {
    if (dut.rst_i) return;
    if (!dut.out_ready_i) {
      last_stall_cycle = tb.cycle();
      any_stall = true;
    } else if (!dut.in_ready_o) {
      fail("in_ready_o low while out_ready_i is high");
    }
    if (flow_phase && dut.in_valid_i) {
      ++flow_cycles;
      if (!dut.in_ready_o) fail("input refused in a phase without backpressure");
    }
    if (dut.in_valid_i && dut.in_ready_o) {
      const uint32_t a = dut.a_i;
      const uint32_t b = dut.b_i;
      const uint32_t tag = static_cast<uint32_t>(dut.tag_i);
      sb->expect(OpOut{a, b, cfg.model(a, b), tag});
      in_flight.push_back({tb.cycle(), a, b});
      if (flow_phase) ++flow_accepted;
    }
  };

  HandshakeMonitor<OpOut> out_mon(
      cfg.name + " output", [&] { return dut.out_valid_o != 0; },
      // During reset the output may legally drop: treat it as not stalled.
      [&] { return dut.out_ready_i != 0 || dut.rst_i != 0; },
      [&] {
        return OpOut{0, 0, dut.y_o, static_cast<uint32_t>(dut.tag_o)};
      },
      fail);

  tb.add(src);
  tb.add(sink);
  tb.add(probe);
  tb.add(out_mon);

  // ---- helpers
  uint64_t pushed = 0;
  auto push = [&](uint32_t a, uint32_t b) {
    src.push({a, b, static_cast<uint32_t>(rng.u32()) & tag_mask});
    ++pushed;
  };
  auto push_random = [&](uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) {
      const int kind = static_cast<int>(rng.range(0, fp32::testvec::Gen::kNumKinds - 1));
      const auto [a, b] = cfg.is_mul ? gen.mul_pair(kind) : gen.add_pair(kind);
      push(a, b);
    }
  };
  auto run_source = [&](const std::string& what) {
    tb.run_until([&] { return src.done(); }, 200 * (src.pending() + 100), what);
  };
  auto set_probs = [&](double idle, double stall) {
    src.set_idle_prob(idle);
    sink.set_stall_prob(stall);
    flow_phase = idle == 0.0 && stall == 0.0;
  };
  uint64_t resets = 0;
  uint64_t discarded = 0;
  auto mid_run_reset = [&] {
    if (in_flight.empty()) fail("mid-run reset: expected items in flight");
    discarded += in_flight.size();
    tb.reset(3);
    if (dut.out_valid_o) fail("output valid right after reset");
    if (!dut.in_ready_o) fail("in_ready_o low right after reset");
    in_flight.clear();
    new_scoreboard();
    any_stall = false;
    ++resets;
  };

  // ---- run
  tb.reset();
  if (dut.out_valid_o) fail("output valid after the initial reset");

  // 1. Every pair of special values, light idle and backpressure.
  const auto specials = fp32::testvec::special_values();
  set_probs(0.2, 0.2);
  for (uint32_t a : specials) {
    for (uint32_t b : specials) push(a, b);
  }
  const uint64_t special_pairs = pushed;
  run_source("special pairs");

  // 2. Random pairs through phases of (idle, backpressure); two phases end
  // with a reset while items are in flight (one stalled, one streaming).
  struct Phase {
    double idle, stall, share;
    bool reset_after;
  };
  const std::vector<Phase> phases = {
      {0.0, 0.0, 0.15, false}, {0.3, 0.0, 0.10, false},  {0.0, 0.3, 0.10, false},
      {0.5, 0.5, 0.10, true},  {0.05, 0.9, 0.05, false}, {0.9, 0.05, 0.05, false},
      {0.0, 0.0, 0.15, true},  {0.1, 0.1, 0.10, false},  {-1.0, -1.0, 0.20, false},
  };
  for (const Phase& ph : phases) {
    const uint64_t n = static_cast<uint64_t>(ph.share * static_cast<double>(num_random));
    if (ph.idle < 0.0) {
      // Probabilities redrawn every 1000 items (0 included).
      for (uint64_t done = 0; done < n; done += 1000) {
        const double choices[] = {0.0, 0.0, 0.1, 0.5, 0.8};
        set_probs(choices[rng.range(0, 4)], choices[rng.range(0, 4)]);
        push_random(std::min<uint64_t>(1000, n - done));
        run_source("random phase");
      }
    } else {
      set_probs(ph.idle, ph.stall);
      push_random(n);
      run_source("phase idle=" + std::to_string(ph.idle) + " stall=" + std::to_string(ph.stall));
      if (ph.reset_after) {
        // Let the pipe fill up, then reset with results still inside.
        mid_run_reset();
        push_random(1000);
        run_source("after reset");
      }
    }
  }
  // Top up what the phase shares rounded away: at least num_random random pairs.
  if (pushed < special_pairs + num_random) {
    set_probs(0.0, 0.0);
    push_random(special_pairs + num_random - pushed);
    run_source("final random pairs");
  }

  // 3. Drain, then idle a while: nothing more may come out.
  set_probs(0.0, 0.0);
  tb.run_until([&] { return in_flight.empty(); }, 1000, "drain");
  for (int i = 0; i < 20; ++i) tb.tick();
  sb->finish();
  checked += sb->checked();

  const uint64_t expected = pushed - discarded;
  if (checked != expected) {
    fail("checked " + std::to_string(checked) + " results, expected " + std::to_string(expected));
  }
  if (flow_accepted != flow_cycles) fail("flow phases: inputs refused");
  if (latency_exact == 0) fail("no result was checked for exact latency");

  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  std::cout << cfg.name << ": Latency=" << cfg.latency << " TagWidth=" << cfg.tag_width
            << ": checked " << checked << " results (" << special_pairs << " special pairs, "
            << (pushed - special_pairs) << " random), " << resets << " mid-run resets ("
            << discarded << " items discarded), " << latency_exact
            << " with exact latency, max latency " << max_latency << ", flow phases "
            << flow_accepted << " inputs in " << flow_cycles << " cycles, " << tb.cycle()
            << " cycles, " << secs << " s" << std::endl;
}

}  // namespace farnn::tb::fp
