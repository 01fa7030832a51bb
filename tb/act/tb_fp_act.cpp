// Testbench of fp_act (rtl/act/fp_act.sv): every result bit-exact against the
// C++ model farnn::act::sigmoid / tanh, the tag carried with its item, in order,
// on each of its NumLanes lanes (with 2 lanes, two units share one dual-port
// table: every phase below runs on both lanes at once, each lane with its own
// source, sink, idle cycles and backpressure, so a stall of one lane must hold
// only its own table port).
//
// Phases:
//   1. directed values with no idle cycles and no backpressure: every special
//      and boundary value (+-0, subnormals, +-Inf, NaNs, the saturation
//      thresholds, the clamps 16 (sigmoid) and 8 (tanh), 2^-24 / 2^-25, the
//      ends of tanh's small-argument path (2^-8) and of its correction
//      (2^-15), every table knot k/256 and k/512, each with its neighbours,
//      both signs);
//      checks the latency is exactly act_pkg::ACT_LATENCY and that in_ready_o
//      never drops (one result per lane per cycle; lane 1 takes the items in
//      reverse order, so the two table ports read different knots);
//   2. random items (--items, default 10^6: uniform bit patterns, values in
//      [-20, 20], log-uniform magnitudes, values around the boundaries and the
//      knots), sigmoid and tanh interleaved at random, in segments with random
//      idle cycles on the input and random backpressure on the output, drawn
//      per lane;
//   3. a reset in the middle of segment 4 while items are in flight and
//      stalled: the pipeline must come out empty and carry on.
// A HandshakeMonitor checks each output stream's AXI-Stream rules throughout.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <functional>
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Vfp_act.h"
#include "farnn/activation.hpp"
#include "options.hpp"
#include "scoreboard.hpp"
#include "stream.hpp"
#include "testbench.hpp"

#ifndef FARNN_PARAM_TagWidth
#define FARNN_PARAM_TagWidth 1
#endif
#ifndef FARNN_PARAM_NumLanes
#define FARNN_PARAM_NumLanes 1
#endif

namespace farnn::tb {
namespace {

constexpr unsigned kTagWidth = FARNN_PARAM_TagWidth;
constexpr uint32_t kTagMask = kTagWidth >= 32 ? 0xFFFFFFFFu : ((1u << kTagWidth) - 1);
constexpr unsigned kLanes = FARNN_PARAM_NumLanes;
constexpr uint64_t kLatency = 8;  // act_pkg::ACT_LATENCY (fp_act_pipe checks Latency against it)
static_assert(kLanes >= 1 && kLanes <= 2, "fp_act has 1 or 2 lanes");
static_assert(kLanes * kTagWidth <= 64 && kTagWidth <= 32, "tag vector must fit 64 bits");

struct In {
  uint32_t x = 0;
  bool func = false;  // false: sigmoid, true: tanh
  uint32_t tag = 0;
};

struct Out {
  uint32_t y = 0;
  uint32_t tag = 0;
  bool operator==(const Out&) const = default;
};

std::string hex(uint32_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << std::setw(8) << std::setfill('0') << v;
  return os.str();
}

std::string format(const Out& o) {
  return "y=" + hex(o.y) + " tag=" + hex(o.tag);
}

uint32_t model(const In& in) {
  return in.func ? act::tanh(in.x) : act::sigmoid(in.x);
}

uint32_t bits(float f) {
  return std::bit_cast<uint32_t>(f);
}

// A component made of two lambdas.
struct Hook : Component {
  std::function<void()> on_drive, on_sample;
  void drive() override {
    if (on_drive) on_drive();
  }
  void sample() override {
    if (on_sample) on_sample();
  }
};

// Order-preserving key of a non-NaN bit pattern (see tools/act_sweep).
uint32_t key_of(uint32_t b) {
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
uint32_t bits_of(uint32_t k) {
  return (k & 0x80000000u) ? (k ^ 0x80000000u) : ~k;
}

// Smallest input on [lo, hi] (as values) where pred holds; pred monotone.
uint32_t first_where(float lo, float hi, const std::function<bool(uint32_t)>& pred) {
  uint32_t a = key_of(bits(lo)), b = key_of(bits(hi));
  while (a < b) {
    const uint32_t m = a + (b - a) / 2;
    if (pred(bits_of(m))) {
      b = m;
    } else {
      a = m + 1;
    }
  }
  return bits_of(a);
}

// |v| moved by n ulps (not below zero), with the sign of v.
uint32_t near(uint32_t v, int n) {
  const int64_t mag = int64_t{v & 0x7FFFFFFFu} + n;
  return static_cast<uint32_t>(std::clamp<int64_t>(mag, 0, 0x7F800000)) | (v & 0x80000000u);
}

// Field [lo, lo + width) of a Verilated port (CData .. QData).
template <class P>
void put_bits(P& port, unsigned lo, unsigned width, uint64_t v) {
  const uint64_t mask = (width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1)) << lo;
  port = static_cast<P>((uint64_t{port} & ~mask) | ((v << lo) & mask));
}
template <class P>
uint64_t get_bits(const P& port, unsigned lo, unsigned width) {
  return (uint64_t{port} >> lo) & (width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1));
}

// One lane's environment: source, sink, checkers and the items in flight.
struct Lane {
  std::unique_ptr<StreamSource<In>> src;
  std::unique_ptr<StreamSink<Out>> sink;
  std::unique_ptr<Scoreboard<Out>> sb;
  std::unique_ptr<HandshakeMonitor<Out>> mon;
  std::deque<uint64_t> accepted_at;
  Hook monitor, acceptor;
};

void body(const Options& opt) {
  opt.allow({"items"});
  Rng rng(opt.seed());
  Testbench<Vfp_act> tb(opt, "tb_fp_act");
  auto& dut = tb.dut();
  const long long num_random = opt.get_int("items", 1000000);
  auto fail = [&](const std::string& m) { tb.fail(m); };

  // Boundary values: the saturation thresholds of the model, the clamps, the
  // fixed-point input step, and some ordinary points.
  const uint32_t sig_one =
      first_where(0.0f, 1e30f, [](uint32_t x) { return act::sigmoid(x) == bits(1.0f); });
  const uint32_t sig_nonzero =
      first_where(-1e30f, 0.0f, [](uint32_t x) { return act::sigmoid(x) != 0u; });
  const uint32_t tanh_one =
      first_where(0.0f, 1e30f, [](uint32_t x) { return act::tanh(x) == bits(1.0f); });
  // The last two: tanh's small-argument path ends at 2^-8, its correction at 2^-15.
  std::vector<uint32_t> boundaries = {
      sig_one,        sig_nonzero,     tanh_one,       bits(16.0f),   bits(8.0f),  bits(0x1p-24f),
      bits(0x1p-25f), bits(0x1p-23f),  bits(0x1p-26f), bits(1.0f),    bits(0.5f),  bits(2.0f),
      bits(4.0f),     bits(0x1p-126f), 0x7F7FFFFFu,    bits(32.0f),   bits(15.0f), bits(7.99f),
      bits(1e-3f),    bits(0.25f),     bits(0x1p-8f),  bits(0x1p-15f)};
  std::cout << "tb_fp_act: TagWidth=" << kTagWidth << ", sigmoid == 1.0 from "
            << std::bit_cast<float>(sig_one) << ", != 0 from " << std::bit_cast<float>(sig_nonzero)
            << ", tanh == 1.0 from " << std::bit_cast<float>(tanh_one) << std::endl;

  // ---------------------------------------------------------------- environment
  bool gate = false;  // true while the testbench holds reset: no handshakes
  bool exact_latency = false;
  uint64_t lost_in_reset = 0;
  auto lane_out = [&dut](unsigned l) {
    return Out{static_cast<uint32_t>(get_bits(dut.y_o, 32 * l, 32)),
               static_cast<uint32_t>(get_bits(dut.tag_o, kTagWidth * l, kTagWidth))};
  };
  std::vector<Lane> lanes(kLanes);
  for (unsigned l = 0; l < kLanes; ++l) {
    Lane& ln = lanes[l];
    ln.src = std::make_unique<StreamSource<In>>(
        rng, 0.0,
        [&dut, &gate, l](bool valid, const In& in) {
          put_bits(dut.in_valid_i, l, 1, valid && !gate);
          put_bits(dut.x_i, 32 * l, 32, in.x);
          put_bits(dut.func_i, l, 1, in.func);
          put_bits(dut.tag_i, kTagWidth * l, kTagWidth, in.tag);
        },
        [&dut, &gate, l] { return !gate && get_bits(dut.in_ready_o, l, 1); });
    ln.sink = std::make_unique<StreamSink<Out>>(
        rng, 0.0, [&dut, l](bool ready) { put_bits(dut.out_ready_i, l, 1, ready); },
        [&dut, &gate, l] { return !gate && get_bits(dut.out_valid_o, l, 1); },
        [&lane_out, l] { return lane_out(l); },
        [&, l](const Out& o) {
          Lane& me = lanes[l];
          if (me.accepted_at.empty()) fail("output " + format(o) + " with no input accepted");
          const uint64_t lat = tb.cycle() - me.accepted_at.front();
          me.accepted_at.pop_front();
          if (lat < kLatency || (exact_latency && lat != kLatency)) {
            fail("lane " + std::to_string(l) + ": latency " + std::to_string(lat) + ", expected " +
                 std::to_string(kLatency) + (exact_latency ? "" : " or more"));
          }
          me.sb->observe(o);
        });
    ln.monitor.on_sample = [&, l] {
      if (!gate) lanes[l].mon->sample();
    };
    // Expectations are made from what the DUT actually accepts.
    ln.acceptor.on_sample = [&, l] {
      Lane& me = lanes[l];
      if (gate || !get_bits(dut.in_valid_i, l, 1)) return;
      if (!get_bits(dut.in_ready_o, l, 1)) {
        if (exact_latency) fail("in_ready_o low with no backpressure (throughput < 1/cycle)");
        return;
      }
      const In in{static_cast<uint32_t>(get_bits(dut.x_i, 32 * l, 32)),
                  bool(get_bits(dut.func_i, l, 1)),
                  static_cast<uint32_t>(get_bits(dut.tag_i, kTagWidth * l, kTagWidth))};
      me.sb->expect(Out{model(in), in.tag});
      me.accepted_at.push_back(tb.cycle());
    };
  }
  auto fresh_checkers = [&] {
    for (unsigned l = 0; l < kLanes; ++l) {
      const std::string name = kLanes > 1 ? "fp_act lane " + std::to_string(l) : "fp_act";
      lanes[l].sb = std::make_unique<Scoreboard<Out>>(name, fail, format);
      lanes[l].mon = std::make_unique<HandshakeMonitor<Out>>(
          name + " out", [&dut, l] { return bool(get_bits(dut.out_valid_o, l, 1)); },
          [&dut, l] { return bool(get_bits(dut.out_ready_i, l, 1)); },
          [&lane_out, l] { return lane_out(l); }, fail);
      lanes[l].accepted_at.clear();
    }
  };
  fresh_checkers();
  for (auto& ln : lanes) {
    tb.add(*ln.src);
    tb.add(*ln.sink);
    tb.add(ln.monitor);
    tb.add(ln.acceptor);
  }
  auto outstanding = [&] {
    size_t n = 0;
    for (auto& ln : lanes) n += ln.sb->outstanding();
    return n;
  };
  auto all_sent = [&] {
    for (auto& ln : lanes) {
      if (!ln.src->done()) return false;
    }
    return true;
  };

  // Every lane gets `items` (lane 1 in reverse order) with its own idle and
  // stall probabilities.
  auto run_items = [&](const std::vector<In>& items, const std::vector<double>& idle,
                       const std::vector<double>& stall) {
    for (unsigned l = 0; l < kLanes; ++l) {
      lanes[l].src->set_idle_prob(idle[l]);
      lanes[l].sink->set_stall_prob(stall[l]);
      if (l == 0) {
        for (const auto& in : items) lanes[l].src->push(in);
      } else {
        for (auto it = items.rbegin(); it != items.rend(); ++it) lanes[l].src->push(*it);
      }
    }
    tb.run_until(all_sent, items.size() * 200 + 1000, "inputs to be accepted");
  };
  auto drain = [&] {
    for (auto& ln : lanes) {
      ln.src->set_idle_prob(0.0);
      ln.sink->set_stall_prob(0.0);
    }
    tb.run_until([&] { return outstanding() == 0 && all_sent(); }, 100000, "outputs to drain");
  };
  auto item = [&](uint32_t x, bool func) { return In{x, func, rng.u32() & kTagMask}; };
  const std::vector<double> no_delay(kLanes, 0.0);

  tb.reset();
  if (dut.out_valid_o) fail("out_valid_o high after reset");

  // ---------------------------------------------------- 1. directed, no stalls
  std::vector<In> directed;
  std::vector<uint32_t> specials = {0x00000000u, 0x00000001u, 0x00000002u, 0x00400000u, 0x007FFFFFu,
                                    0x00800000u, 0x00800001u, 0x7F7FFFFFu, 0x7F800000u, 0x7F800001u,
                                    0x7FBFFFFFu, 0x7FC00000u, 0x7FC00001u, 0x7FFFFFFFu};
  for (uint32_t s : specials) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      directed.push_back(item(s | sign, false));
      directed.push_back(item(s | sign, true));
    }
  }
  for (uint32_t b : boundaries) {
    for (int n = -3; n <= 3; ++n) {
      for (uint32_t sign : {0u, 0x80000000u}) {
        directed.push_back(item(near(b | sign, n), false));
        directed.push_back(item(near(b | sign, n), true));
      }
    }
  }
  for (int k = 0; k < act::kLutEntries; ++k) {  // knots of sigmoid (k/256) and tanh (k/512)
    for (float v : {k / 256.0f, k / 512.0f}) {
      for (int n = -1; n <= 1; ++n) {
        directed.push_back(
            item(near(bits(v), n) | (rng.chance(0.5) ? 0x80000000u : 0u), rng.chance(0.5)));
      }
    }
  }
  exact_latency = true;
  run_items(directed, no_delay, no_delay);
  drain();
  exact_latency = false;
  std::cout << "tb_fp_act: directed phase: " << directed.size() << " items per lane, latency "
            << kLatency << ", one per lane per cycle" << std::endl;

  // ------------------------------------------------------- 2./3. random mix
  auto random_x = [&]() -> uint32_t {
    const double p = rng.uniform(0.0, 1.0);
    const uint32_t sign = rng.chance(0.5) ? 0x80000000u : 0u;
    if (p < 0.25) return rng.u32();
    if (p < 0.60) return bits(static_cast<float>(rng.uniform(-20.0, 20.0)));
    if (p < 0.75) {  // log-uniform magnitude 2^-37 .. 2^8
      return (static_cast<uint32_t>(rng.range(90, 135)) << 23) | (rng.u32() & 0x7FFFFFu) | sign;
    }
    if (p < 0.90) {
      const uint32_t b = boundaries[rng.range(0, static_cast<long long>(boundaries.size()) - 1)];
      return near(b, static_cast<int>(rng.range(-64, 64))) | sign;
    }
    const float knot =
        static_cast<float>(rng.range(0, act::kLutEntries)) / (rng.chance(0.5) ? 256.0f : 512.0f);
    return near(bits(knot), static_cast<int>(rng.range(-4, 4))) | sign;
  };
  const double idles[] = {0.0, 0.05, 0.3, 0.7};
  const double stalls[] = {0.0, 0.1, 0.4, 0.8};
  const int segments = 10;
  for (int seg = 0; seg < segments; ++seg) {
    const long long n = num_random / segments + (seg == 0 ? num_random % segments : 0);
    std::vector<In> items;
    items.reserve(n);
    for (long long i = 0; i < n; ++i) items.push_back(item(random_x(), rng.chance(0.5)));
    std::vector<double> idle(kLanes), stall(kLanes);
    for (unsigned l = 0; l < kLanes; ++l) {
      idle[l] = idles[rng.range(0, 3)];
      stall[l] = stalls[rng.range(0, 3)];
    }
    if (seg == 4) {
      // Fill the pipelines against heavy backpressure, then reset mid-run.
      for (unsigned l = 0; l < kLanes; ++l) {
        lanes[l].src->set_idle_prob(0.0);
        lanes[l].sink->set_stall_prob(0.9);
        for (long long i = 0; i < n / 2; ++i) lanes[l].src->push(items[l == 0 ? i : n - 1 - i]);
      }
      for (int c = 0; c < 40; ++c) tb.tick();
      lost_in_reset = outstanding();
      if (lost_in_reset == 0) fail("mid-run reset: expected items in flight");
      gate = true;
      tb.reset(3);
      gate = false;
      if (dut.out_valid_o) fail("out_valid_o high after the mid-run reset");
      fresh_checkers();
      std::cout << "tb_fp_act: mid-run reset with " << lost_in_reset << " items in flight"
                << std::endl;
      items.erase(items.begin(), items.begin() + n / 2);
    }
    run_items(items, idle, stall);
  }
  drain();
  uint64_t results = 0, transfers = 0;
  for (auto& ln : lanes) {
    ln.sb->finish();
    results += ln.sink->count();
    transfers += ln.mon->transfers();
  }
  std::cout << "tb_fp_act: " << kLanes << " lane(s), " << results << " results checked bit-exact, "
            << transfers << " output transfers since the mid-run reset, " << tb.cycle() << " cycles"
            << std::endl;
}

}  // namespace
}  // namespace farnn::tb

int main(int argc, char** argv) {
  return farnn::tb::run_main(argc, argv, "tb_fp_act", farnn::tb::body);
}
