// tb_unit_gather: the per-step reader's repacker (rtl/core/unit_gather.sv)
// against a reference that concatenates the stream's words and cuts them
// into units. Each round picks a unit size (1..4) and a few commands of
// whole units, each starting at a random word of the 4-word grid and cut into
// items as dma_reader delivers a word-aligned command (first and last item
// partial, in_lo_i/in_hi_i marking them; the words around them random junk),
// half of them ending with `last`. Random idle cycles on the items, random
// backpressure on the units; one round in four is aborted at a random cycle
// with words in flight, and the next round must be exact. Checks: every unit
// bit-exact, lanes at and above the size zero, `last` on exactly the unit
// holding a command's last word, the output held while stalled, the gather
// empty between rounds. Speed (a cycle check): without idle or stall, one unit
// a cycle from the first unit to the last at every size, and the first unit
// one cycle after the first item.
#include <array>
#include <cstdint>
#include <deque>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "Vunit_gather.h"
#include "options.hpp"
#include "stream.hpp"
#include "testbench.hpp"

namespace farnn::tb {
namespace {

using Tb = Testbench<Vunit_gather>;

struct Item {
  std::array<uint32_t, 4> words{};
  int lo = 0, hi = 3;
  bool last = false;
};
struct Unit {
  std::array<uint32_t, 4> words{};
  bool last = false;
  bool operator==(const Unit&) const = default;
};

std::string describe(const Unit& u) {
  std::ostringstream os;
  os << std::hex << u.words[0] << " " << u.words[1] << " " << u.words[2] << " " << u.words[3]
     << (u.last ? " last" : "");
  return os.str();
}

class Bench {
 public:
  explicit Bench(const Options& opt)
      : rng_(opt.seed() ^ 0x2545f4914f6cdd1dull),
        tb_(opt, "tb_unit_gather"),
        src_(rng_, 0.0,
             [this](bool v, const Item& it) {
               auto& d = tb_.dut();
               d.in_valid_i = v;
               for (int j = 0; j < 4; ++j) d.in_data_i[j] = it.words[static_cast<size_t>(j)];
               d.in_lo_i = static_cast<uint8_t>(it.lo);
               d.in_hi_i = static_cast<uint8_t>(it.hi);
               d.in_last_i = it.last;
             },
             [this] { return tb_.dut().in_ready_o != 0; }),
        sink_(rng_, 0.0, [this](bool r) { tb_.dut().out_ready_i = r; },
              [this] { return tb_.dut().out_valid_o != 0; }, [this] { return unit(); },
              [this](const Unit& u) { on_unit(u); }),
        mon_("unit_gather out", [this] { return tb_.dut().out_valid_o != 0; },
             [this] { return tb_.dut().out_ready_i != 0; }, [this] { return unit(); },
             [this](const std::string& m) { tb_.fail(m); }) {
    tb_.dut().abort_i = 0;
    tb_.dut().size_i = 4;
    tb_.add(src_);
    tb_.add(sink_);
    tb_.add(mon_);
    tb_.reset();
  }

  Tb& tb() { return tb_; }
  Rng& rng() { return rng_; }

  // Queues `cmds` commands of 1..max_units units of `size` words, each from a
  // random word of the grid, half of them ending with `last`.
  void queue(int size, int cmds, int max_units) {
    for (int c = 0; c < cmds; ++c) {
      const int units = static_cast<int>(rng_.range(1, max_units));
      const int lo = static_cast<int>(rng_.range(0, 3));
      queue_command(size, units, lo, rng_.chance(0.5));
    }
  }
  // One command: its items on the 4-word grid from word `lo` (the words
  // around it junk), and the units it must come out as.
  void queue_command(int size, int units, int lo, bool last) {
    tb_.dut().size_i = static_cast<uint8_t>(size);
    size_ = size;
    std::vector<uint32_t> words(static_cast<size_t>(units * size));
    for (auto& w : words) w = rng_.u32();
    size_t i = 0;
    while (i < words.size()) {
      Item it;
      for (auto& w : it.words) w = rng_.u32();
      it.lo = lo;
      int j = lo;
      for (; j < 4 && i < words.size(); ++j, ++i) it.words[static_cast<size_t>(j)] = words[i];
      it.hi = j - 1;
      it.last = last && i == words.size();
      src_.push(it);
      lo = 0;
    }
    for (int u = 0; u < units; ++u) {
      Unit e;
      for (int j = 0; j < size; ++j) e.words[static_cast<size_t>(j)] = words[static_cast<size_t>(u * size + j)];
      e.last = last && u == units - 1;
      expect_.push_back(e);
    }
  }
  void stress(double idle, double stall) {
    src_.set_idle_prob(idle);
    sink_.set_stall_prob(stall);
  }
  bool done() const { return expect_.empty() && src_.done(); }
  uint64_t units() const { return units_; }
  uint64_t first_unit_cycle() const { return first_unit_; }
  uint64_t last_unit_cycle() const { return last_unit_; }
  void mark() { first_unit_ = 0; }

  // abort_i for one cycle: what is queued or held is dropped.
  void abort() {
    mon_.set_allow_withdraw(true);
    tb_.dut().abort_i = 1;
    tb_.tick();
    tb_.dut().abort_i = 0;
    src_.clear();
    expect_.clear();
    tb_.tick();
    if (tb_.dut().out_valid_o) tb_.fail("a unit is offered after abort_i");
    mon_.set_allow_withdraw(false);
  }
  // Between rounds nothing may be held.
  void expect_empty(const std::string& ctx) {
    for (int i = 0; i < 4; ++i) tb_.tick();
    if (tb_.dut().out_valid_o) tb_.fail(ctx + ": a unit is offered with every word consumed");
  }

 private:
  Unit unit() {
    Unit u;
    const auto& d = tb_.dut();
    for (int j = 0; j < 4; ++j) u.words[static_cast<size_t>(j)] = d.out_data_o[j];
    u.last = d.out_last_o != 0;
    return u;
  }
  void on_unit(const Unit& u) {
    if (tb_.dut().abort_i) return;  // dropped with the rest
    if (expect_.empty()) tb_.fail("a unit with none expected: " + describe(u));
    if (!(u == expect_.front())) {
      tb_.fail("unit #" + std::to_string(units_) + " (size " + std::to_string(size_) + "): expected " +
               describe(expect_.front()) + ", got " + describe(u));
    }
    expect_.pop_front();
    if (first_unit_ == 0) first_unit_ = tb_.cycle();
    last_unit_ = tb_.cycle();
    ++units_;
  }

  Rng rng_;
  Tb tb_;
  StreamSource<Item> src_;
  StreamSink<Unit> sink_;
  HandshakeMonitor<Unit> mon_;
  std::deque<Unit> expect_;
  int size_ = 4;
  uint64_t units_ = 0, first_unit_ = 0, last_unit_ = 0;
};

void run_random(Bench& b, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    const int size = static_cast<int>(b.rng().range(1, 4));
    b.stress(b.rng().uniform(0.0, 0.6), b.rng().uniform(0.0, 0.6));
    b.queue(size, static_cast<int>(b.rng().range(1, 6)), static_cast<int>(b.rng().range(1, 40)));
    const std::string ctx = "round " + std::to_string(r) + " (size " + std::to_string(size) + ")";
    if (b.rng().chance(0.25)) {
      const uint64_t at = b.tb().cycle() + static_cast<uint64_t>(b.rng().range(0, 60));
      b.tb().run_until([&] { return b.done() || b.tb().cycle() >= at; }, 100000, ctx + ": the abort point");
      b.abort();
    } else {
      b.tb().run_until([&] { return b.done(); }, 100000, ctx + ": every unit");
    }
    b.expect_empty(ctx);
  }
  std::cout << "random: " << rounds << " rounds, " << b.units() << " units exact" << std::endl;
}

// One command of 300 units at each size from word 0 of the grid, without
// idle or stall: one unit a cycle from the first to the last, the first one
// cycle after its item was offered (and taken: the gather is empty).
void run_speed(Bench& b) {
  constexpr int kUnits = 300;
  b.stress(0.0, 0.0);
  for (int size = 1; size <= 4; ++size) {
    b.mark();
    const uint64_t from = b.units(), start = b.tb().cycle();
    b.queue_command(size, kUnits, 0, true);
    b.tb().run_until([&] { return b.done(); }, 10000, "the speed command");
    const uint64_t n = b.units() - from, span = b.last_unit_cycle() - b.first_unit_cycle() + 1;
    const uint64_t latency = b.first_unit_cycle() - start;  // the item is offered in cycle `start`
    std::cout << "speed: size " << size << ": " << n << " units in " << span << " cycles, the first "
              << latency << " cycle(s) after its item" << std::endl;
    if (span != n) {
      b.tb().fail("speed: size " + std::to_string(size) + ": " + std::to_string(n) + " units took " +
                  std::to_string(span) + " cycles (one a cycle expected)");
    }
    if (latency != 1) b.tb().fail("speed: the first unit came " + std::to_string(latency) + " cycles after its item");
    b.expect_empty("speed");
  }
}

}  // namespace
}  // namespace farnn::tb

int main(int argc, char** argv) {
  return farnn::tb::run_main(argc, argv, "tb_unit_gather", [](const farnn::tb::Options& opt) {
    opt.allow({"rounds"});
    farnn::tb::Bench b(opt);
    farnn::tb::run_random(b, static_cast<int>(opt.get_int("rounds", 400)));
    farnn::tb::run_speed(b);
  });
}
