// prim_reg_slice testbench: the register slice (skid buffer) that farnn_core
// puts at its parts' boundaries. Checked against a queue model:
//   - every item comes out once, in order, unchanged (random idle cycles on
//     the input and random backpressure on the output, in phases from
//     nearly free to nearly blocked on either side);
//   - its outputs are registers: in_ready_o, out_valid_o, out_data_o and
//     empty_o do not move when in_valid_i, in_data_i or out_ready_i change
//     within a cycle;
//   - in_ready_o is high exactly while it holds at most one item, empty_o
//     exactly while it holds none, and an item taken by an empty slice is
//     at its output the next cycle (latency 1);
//   - one item a cycle passes with a free input and output (throughput);
//   - a reset in the middle of a stream empties it (nothing held comes out).
#include <cstdint>
#include <deque>
#include <string>

#include "Vprim_reg_slice.h"
#include "stream.hpp"
#include "testbench.hpp"

#ifndef FARNN_PARAM_Width
#define FARNN_PARAM_Width 40
#endif

namespace {

using farnn::tb::Rng;
using Tb = farnn::tb::Testbench<Vprim_reg_slice>;

constexpr unsigned kWidth = FARNN_PARAM_Width;
static_assert(kWidth >= 1 && kWidth <= 64, "items up to 64 bits");
constexpr uint64_t kMask = kWidth >= 64 ? ~0ull : (1ull << kWidth) - 1;

// Each cycle, with the inputs driven and the outputs settled: the slice's
// outputs must not depend on this cycle's inputs, and its held count (items
// taken minus items given) decides in_ready_o and empty_o.
class RegisteredOutputs : public farnn::tb::Component {
 public:
  explicit RegisteredOutputs(Tb& tb) : tb_(tb) {}

  void on_reset() override { held_ = 0; }
  void sample() override {
    auto& d = tb_.dut();
    if (d.rst_i) {
      held_ = 0;
      return;
    }
    const auto snap = [&] {
      return std::to_string(d.in_ready_o) + "/" + std::to_string(d.out_valid_o) + "/" +
             std::to_string(static_cast<uint64_t>(d.out_data_o)) + "/" + std::to_string(d.empty_o);
    };
    const std::string before = snap();
    const bool v = d.in_valid_i, r = d.out_ready_i;
    const uint64_t x = d.in_data_i;
    d.in_valid_i = !v;
    d.out_ready_i = !r;
    d.in_data_i = ~x & kMask;
    d.eval();
    const std::string flipped = snap();
    d.in_valid_i = v;
    d.out_ready_i = r;
    d.in_data_i = x;
    d.eval();
    if (flipped != before) {
      tb_.fail("outputs (in_ready/out_valid/out_data/empty) moved with this cycle's inputs: " + before + " -> " +
               flipped);
    }
    if (d.in_ready_o != (held_ <= 1)) {
      tb_.fail("in_ready_o " + std::to_string(d.in_ready_o) + " with " + std::to_string(held_) + " items held");
    }
    if (d.empty_o != (held_ == 0)) {
      tb_.fail("empty_o " + std::to_string(d.empty_o) + " with " + std::to_string(held_) + " items held");
    }
    if (d.out_valid_o != (held_ > 0)) {
      tb_.fail("out_valid_o " + std::to_string(d.out_valid_o) + " with " + std::to_string(held_) + " items held");
    }
    const bool in_fire = d.in_valid_i && d.in_ready_o;
    const bool out_fire = d.out_valid_o && d.out_ready_i;
    held_ += (in_fire ? 1 : 0) - (out_fire ? 1 : 0);
  }

 private:
  Tb& tb_;
  int held_ = 0;
};

struct Env {
  Tb& tb;
  Rng& rng;
  farnn::tb::StreamSource<uint64_t> src;
  farnn::tb::StreamSink<uint64_t> sink;
  farnn::tb::HandshakeMonitor<uint64_t> mon;
  RegisteredOutputs regs;

  Env(Tb& t, Rng& r)
      : tb(t),
        rng(r),
        src(
            r, 0.3,
            [this](bool v, const uint64_t& x) {
              tb.dut().in_valid_i = v;
              tb.dut().in_data_i = x;
            },
            [this] { return tb.dut().in_ready_o != 0; }),
        sink(
            r, 0.3, [this](bool rdy) { tb.dut().out_ready_i = rdy; }, [this] { return tb.dut().out_valid_o != 0; },
            [this] { return static_cast<uint64_t>(tb.dut().out_data_o); }),
        mon(
            "out", [this] { return tb.dut().out_valid_o != 0; }, [this] { return tb.dut().out_ready_i != 0; },
            [this] { return static_cast<uint64_t>(tb.dut().out_data_o); },
            [this](const std::string& m) { tb.fail(m); }),
        regs(t) {
    tb.add(src);
    tb.add(sink);
    tb.add(mon);
    tb.add(regs);
  }
};

// Pushes n random items and checks they all come out, in order.
void stream(Env& e, std::deque<uint64_t>& expect, long long n, const std::string& phase) {
  for (long long i = 0; i < n; ++i) {
    const uint64_t x = e.rng.u64() & kMask;
    e.src.push(x);
    expect.push_back(x);
  }
  e.tb.run_until([&] { return e.src.done() && e.sink.received().size() == expect.size(); }, 200 * n + 100,
                 phase + ": every item out");
  for (size_t i = 0; i < expect.size(); ++i) {
    if (e.sink.received()[i] != expect[i]) {
      e.tb.fail(phase + ": item " + std::to_string(i) + " is " + std::to_string(e.sink.received()[i]) +
                ", expected " + std::to_string(expect[i]));
    }
  }
  e.tb.tick();
  if (!e.tb.dut().empty_o || e.tb.dut().out_valid_o) e.tb.fail(phase + ": not empty after the stream");
  e.sink.received().clear();
  expect.clear();
}

void run(const farnn::tb::Options& opt, const std::string& name) {
  Tb tb(opt, name);
  Rng rng(opt.seed());
  Env e(tb, rng);
  const long long n = opt.get_int("count", 2000);
  tb.reset();
  std::deque<uint64_t> expect;

  // Phases: input idle / output stall probabilities.
  const double phases[][2] = {{0.0, 0.0}, {0.3, 0.3}, {0.0, 0.7}, {0.7, 0.0}, {0.5, 0.5}, {0.1, 0.9}, {0.9, 0.1}};
  for (const auto& p : phases) {
    e.src.set_idle_prob(p[0]);
    e.sink.set_stall_prob(p[1]);
    stream(e, expect, n, "idle " + std::to_string(p[0]) + " stall " + std::to_string(p[1]));
  }

  // Throughput and latency: free on both sides, n items take n + 1 cycles
  // from the first one offered (one cycle through the slice).
  e.src.set_idle_prob(0.0);
  e.sink.set_stall_prob(0.0);
  for (long long i = 0; i < n; ++i) e.src.push(static_cast<uint64_t>(i) & kMask);
  const uint64_t start = tb.cycle();
  tb.run_until([&] { return e.sink.received().size() == static_cast<size_t>(n); }, 2 * n + 10, "full-rate stream");
  const uint64_t took = tb.cycle() - start;
  if (took != static_cast<uint64_t>(n) + 1) {
    tb.fail("full rate: " + std::to_string(n) + " items took " + std::to_string(took) + " cycles, expected " +
            std::to_string(n + 1));
  }
  for (long long i = 0; i < n; ++i) {
    if (e.sink.received()[static_cast<size_t>(i)] != (static_cast<uint64_t>(i) & kMask)) {
      tb.fail("full rate: item " + std::to_string(i) + " changed");
    }
  }
  e.sink.received().clear();

  // Resets with items held (the slice full, or one item in it): nothing
  // held comes out, and the next stream is exact.
  for (int k = 0; k < 40; ++k) {
    e.src.set_idle_prob(0.0);
    e.sink.set_stall_prob(1.0);
    for (int i = 0; i < 3; ++i) e.src.push(rng.u64() & kMask);
    const int fill = static_cast<int>(rng.range(1, 4));
    for (int i = 0; i < fill; ++i) tb.tick();
    e.src.clear();
    e.mon.set_allow_withdraw(true);  // the reset drops the stalled item
    tb.reset(static_cast<unsigned>(rng.range(1, 3)));
    e.mon.set_allow_withdraw(false);
    e.mon.on_reset();
    if (!tb.dut().empty_o || tb.dut().out_valid_o) tb.fail("not empty after a reset with items held");
    e.sink.received().clear();
    e.src.set_idle_prob(0.3);
    e.sink.set_stall_prob(0.3);
    stream(e, expect, 20, "after reset " + std::to_string(k));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string name = "tb_prim_reg_slice_w" + std::to_string(kWidth);
  return farnn::tb::run_main(argc, argv, name, [&](const farnn::tb::Options& opt) {
    opt.allow({"count"});
    run(opt, name);
  });
}
