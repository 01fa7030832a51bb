// AXI4 slave memory model (tb/common/axi_memory.hpp) driven by a tiny C++
// master bound to plain variables: bursts and fill, strobes, the address map
// (DECERR, SLVERR), injected and random errors, ordering within and across
// IDs, backpressure and outstanding limits, W before AW, the protocol checks
// and the statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "axi_memory.hpp"

namespace farnn::tb {
namespace {

using Mem = AxiMemory<16>;
using Beat = Mem::Beat;
using Resp = AxiResp;

// The bus between the master and the model, as plain variables.
struct Bus {
  bool arvalid = false, arready = false;
  Mem::Addr ar;
  bool rvalid = false, rready = true;
  Mem::RBeat r;
  bool awvalid = false, awready = false;
  Mem::Addr aw;
  bool wvalid = false, wready = false;
  Mem::WBeat w;
  bool bvalid = false, bready = true;
  Mem::BResp b;
};

Beat beat_of(uint32_t base) {
  Beat b{};
  for (size_t i = 0; i < b.size(); ++i) b[i] = base + static_cast<uint32_t>(i);
  return b;
}

class AxiMemoryTest : public ::testing::Test {
 protected:
  AxiMemoryTest() : mem_(rng_, ports(), [this](const std::string& m) { failures_.push_back(m); }) {
    mem_.set_fill(0xf111f111u);
  }

  Mem::Ports ports() {
    Mem::Ports p;
    p.arvalid = [this] { return bus_.arvalid; };
    p.ar = [this] { return bus_.ar; };
    p.set_arready = [this](bool r) { bus_.arready = r; };
    p.set_r = [this](bool v, const Mem::RBeat& r) {
      bus_.rvalid = v;
      bus_.r = r;
    };
    p.rready = [this] { return bus_.rready; };
    p.awvalid = [this] { return bus_.awvalid; };
    p.aw = [this] { return bus_.aw; };
    p.set_awready = [this](bool r) { bus_.awready = r; };
    p.wvalid = [this] { return bus_.wvalid; };
    p.w = [this] { return bus_.w; };
    p.set_wready = [this](bool r) { bus_.wready = r; };
    p.set_b = [this](bool v, const Mem::BResp& b) {
      bus_.bvalid = v;
      bus_.b = b;
    };
    p.bready = [this] { return bus_.bready; };
    return p;
  }

  static Mem::Addr addr(uint32_t id, uint64_t a, uint32_t len) {
    Mem::Addr x;
    x.id = id;
    x.addr = a;
    x.len = len;
    return x;
  }
  void read(uint32_t id, uint64_t a, uint32_t len) { ar_q_.push_back(addr(id, a, len)); }
  // One write burst of `beats` (full strobes unless given).
  void write(uint32_t id, uint64_t a, const std::vector<Beat>& beats, uint64_t strb = ~uint64_t{0}) {
    aw_q_.push_back(addr(id, a, static_cast<uint32_t>(beats.size() - 1)));
    for (size_t i = 0; i < beats.size(); ++i) w_q_.push_back({beats[i], strb, i + 1 == beats.size()});
  }

  // One cycle: the master presents its queue heads, the model drives and
  // samples, the master takes the handshakes.
  void step() {
    bus_.arvalid = !ar_q_.empty();
    if (bus_.arvalid) bus_.ar = ar_q_.front();
    bus_.awvalid = !aw_q_.empty() && cycle_ >= aw_hold_until_;
    if (bus_.awvalid) bus_.aw = aw_q_.front();
    bus_.wvalid = !w_q_.empty();
    if (bus_.wvalid) bus_.w = w_q_.front();
    if (rready_prob_ < 1.0) bus_.rready = rng_.chance(rready_prob_);
    mem_.drive();
    mem_.sample();
    arready_seen_[bus_.arready] = true;
    if (bus_.arvalid && bus_.arready) ar_q_.pop_front();
    if (bus_.awvalid && bus_.awready) aw_q_.pop_front();
    if (bus_.wvalid && bus_.wready) w_q_.pop_front();
    if (bus_.rvalid && bus_.rready) r_got_.push_back(bus_.r);
    if (bus_.bvalid && bus_.bready) b_got_.push_back(bus_.b);
    ++cycle_;
  }
  void run_until(const std::function<bool()>& done, int max_cycles = 20000) {
    for (int i = 0; i < max_cycles && !done(); ++i) step();
    ASSERT_TRUE(done()) << "timeout after " << max_cycles << " cycles";
  }
  void run_reads(size_t beats) {
    run_until([&] { return r_got_.size() >= beats; });
  }
  void run_writes(size_t bursts) {
    run_until([&] { return b_got_.size() >= bursts; });
  }
  bool failed_with(const std::string& what) const {
    return std::any_of(failures_.begin(), failures_.end(),
                       [&](const std::string& m) { return m.find(what) != std::string::npos; });
  }

  Rng rng_{7};
  Bus bus_;
  std::vector<std::string> failures_;
  Mem mem_;
  std::deque<Mem::Addr> ar_q_, aw_q_;
  std::deque<Mem::WBeat> w_q_;
  std::vector<Mem::RBeat> r_got_;
  std::vector<Mem::BResp> b_got_;
  uint64_t cycle_ = 0, aw_hold_until_ = 0;
  double rready_prob_ = 1.0;
  bool arready_seen_[2] = {false, false};
};

TEST_F(AxiMemoryTest, ReadBurstReturnsDataAndFillPastIt) {
  std::vector<uint32_t> words(20);
  for (size_t i = 0; i < words.size(); ++i) words[i] = 0x1000 + static_cast<uint32_t>(i);
  mem_.write_words(0x2000, words);
  read(3, 0x2000, 1);
  run_reads(2);
  ASSERT_TRUE(failures_.empty()) << failures_[0];
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(r_got_[0].data[i], words[i]);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(r_got_[1].data[i], i < 4 ? words[16 + i] : 0xf111f111u);
  EXPECT_EQ(r_got_[0].id, 3u);
  EXPECT_FALSE(r_got_[0].last);
  EXPECT_TRUE(r_got_[1].last);
  EXPECT_EQ(r_got_[1].resp, Resp::kOkay);
  EXPECT_EQ(mem_.stats().read_beats, 2u);
  EXPECT_EQ(mem_.stats().read_bytes, 128u);
  EXPECT_EQ(mem_.stats().read_bursts, 1u);
}

TEST_F(AxiMemoryTest, WriteStoresOnlyStrobedBytes) {
  write(1, 0x4000, {beat_of(0x100), beat_of(0x200)}, 0x00000000000000f0ull);
  run_writes(1);
  ASSERT_TRUE(failures_.empty()) << failures_[0];
  EXPECT_EQ(b_got_[0].resp, Resp::kOkay);
  EXPECT_EQ(b_got_[0].id, 1u);
  const auto got = mem_.read_words(0x4000, 32);
  for (size_t i = 0; i < 32; ++i) {
    const uint32_t expect = i == 1 ? 0x101u : i == 17 ? 0x201u : 0xf111f111u;
    EXPECT_EQ(got[i], expect) << "word " << i;
  }
  EXPECT_EQ(mem_.stats().write_bytes, 8u);
  EXPECT_EQ(mem_.stats().write_beats, 2u);
  EXPECT_EQ(mem_.stats().write_bursts, 1u);
}

TEST_F(AxiMemoryTest, BurstCrossing4KiBIsReported) {
  read(0, 0x0fc0, 0);  // ends exactly at the boundary: legal
  run_reads(1);
  EXPECT_TRUE(failures_.empty());
  read(0, 0x0fc0, 1);
  run_reads(3);
  EXPECT_TRUE(failed_with("AR id 0 addr 0xfc0 len 1: burst crosses a 4 KiB boundary"));
  failures_.clear();
  write(2, 0x1f80, {beat_of(0), beat_of(0), beat_of(0)});
  run_writes(1);
  EXPECT_TRUE(failed_with("AW id 2 addr 0x1f80 len 2: burst crosses a 4 KiB boundary"));
}

TEST_F(AxiMemoryTest, IllegalLenSizeAndBurstTypeAreReported) {
  Mem::Addr a = addr(0, 0x0, 256);
  a.size = 5;
  a.burst = 2;
  ar_q_.push_back(a);
  step();
  EXPECT_TRUE(failed_with("LEN > 255"));
  EXPECT_TRUE(failed_with("SIZE 5 is not the full width (6)"));
  EXPECT_TRUE(failed_with("unsupported burst type 2"));
}

TEST_F(AxiMemoryTest, DecerrOutsideEveryRegion) {
  mem_.add_region(0x10000, 0x80, Mem::Access::kReadWrite);
  read(0, 0x10000, 3);  // beats 2 and 3 are past the region
  run_reads(4);
  EXPECT_EQ(r_got_[0].resp, Resp::kOkay);
  EXPECT_EQ(r_got_[1].resp, Resp::kOkay);
  EXPECT_EQ(r_got_[2].resp, Resp::kDecErr);
  EXPECT_EQ(r_got_[3].resp, Resp::kDecErr);
  EXPECT_EQ(r_got_[3].data[0], Mem::kPoison);
  write(0, 0x20000, {beat_of(5)});
  run_writes(1);
  EXPECT_EQ(b_got_[0].resp, Resp::kDecErr);
  EXPECT_TRUE(mem_.memory().lines().empty()) << "a DECERR write must not store";
  ASSERT_EQ(mem_.errors().size(), 3u);
  EXPECT_EQ(mem_.errors()[0].beat_addr, 0x10080u);
  EXPECT_EQ(mem_.errors()[0].burst_addr, 0x10000u);
  EXPECT_TRUE(mem_.errors()[2].write);
  EXPECT_TRUE(failures_.empty()) << "an error response is not a protocol failure";
}

TEST_F(AxiMemoryTest, SlverrOnWriteToReadOnlyRegionDoesNotWrite) {
  mem_.add_region(0x8000, 0x1000, Mem::Access::kReadOnly);
  mem_.add_region(0x9000, 0x1000, Mem::Access::kReadWrite);
  write(4, 0x8040, {beat_of(9)});
  write(4, 0x9040, {beat_of(9)});
  run_writes(2);
  EXPECT_EQ(b_got_[0].resp, Resp::kSlvErr);
  EXPECT_EQ(b_got_[1].resp, Resp::kOkay);
  EXPECT_EQ(mem_.read_words(0x8040, 1)[0], 0xf111f111u);
  EXPECT_EQ(mem_.read_words(0x9040, 1)[0], 9u);
  read(4, 0x8040, 0);
  run_reads(1);
  EXPECT_EQ(r_got_[0].resp, Resp::kOkay);
}

TEST_F(AxiMemoryTest, InjectedErrorHitsTheChosenBeatOnce) {
  // Beat 3 of the second of three 4-beat bursts; reads by ID 1 only.
  const uint64_t beat = 0x3000 + 4 * 64 + 3 * 64;
  mem_.inject_error(beat, beat + 64, Resp::kSlvErr, 1, Mem::Dir::kRead, 1);
  read(0, 0x3000 + 4 * 64, 3);  // other ID: untouched
  for (int b = 0; b < 3; ++b) read(1, 0x3000 + 4 * 64 * static_cast<uint64_t>(b), 3);
  read(1, 0x3000 + 4 * 64, 3);  // the rule is used up
  run_reads(20);
  for (size_t i = 0; i < r_got_.size(); ++i) {
    EXPECT_EQ(r_got_[i].resp, i == 11 ? Resp::kSlvErr : Resp::kOkay) << "beat " << i;
  }
  ASSERT_EQ(mem_.errors().size(), 1u);
  EXPECT_EQ(mem_.errors()[0].burst_addr, 0x3100u);
  EXPECT_EQ(mem_.errors()[0].beat_addr, beat);
  EXPECT_EQ(mem_.errors()[0].id, 1u);

  // A write: the burst answers the beat's error, the beat is not stored, the others are.
  mem_.inject_error(0x5040, 0x5080, Resp::kDecErr, 1, Mem::Dir::kWrite);
  write(2, 0x5000, {beat_of(0x10), beat_of(0x20), beat_of(0x30)});
  run_writes(1);
  EXPECT_EQ(b_got_[0].resp, Resp::kDecErr);
  EXPECT_EQ(mem_.read_words(0x5000, 1)[0], 0x10u);
  EXPECT_EQ(mem_.read_words(0x5040, 1)[0], 0xf111f111u);
  EXPECT_EQ(mem_.read_words(0x5080, 1)[0], 0x30u);
  EXPECT_EQ(mem_.errors().back().beat_addr, 0x5040u);
}

TEST_F(AxiMemoryTest, RandomErrorsAreReproducibleFromTheSeed) {
  auto run = [&](uint64_t seed) {
    mem_.set_random_errors(0.3, seed, Mem::Dir::kRead);
    const size_t start = r_got_.size();
    for (int b = 0; b < 8; ++b) read(0, 0x6000 + 0x100 * static_cast<uint64_t>(b), 3);
    run_reads(start + 32);
    std::vector<Resp> r;
    for (size_t i = start; i < r_got_.size(); ++i) r.push_back(r_got_[i].resp);
    return r;
  };
  const auto a = run(11), b = run(11), c = run(12);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_GT(std::count(a.begin(), a.end(), Resp::kOkay), 0);
  EXPECT_LT(std::count(a.begin(), a.end(), Resp::kOkay), 32);
}

// Bursts of 2 beats on 4 IDs with random latencies; the address names the burst.
class OrderTest : public AxiMemoryTest {
 protected:
  void issue(int n) {
    for (int i = 0; i < n; ++i) {
      const uint32_t id = static_cast<uint32_t>(i % 4);
      const uint64_t a = 0x10000 + 0x80 * static_cast<uint64_t>(i);
      mem_.write_words(a, std::vector<uint32_t>(32, static_cast<uint32_t>(i)));
      read(id, a, 1);
      order_.push_back(i);
      id_of_[i] = id;
    }
    run_reads(2 * static_cast<size_t>(n));
    ASSERT_TRUE(failures_.empty()) << failures_[0];
  }
  std::vector<int> order_;
  std::map<int, uint32_t> id_of_;
};

TEST_F(OrderTest, InOrderAcrossIdsWithoutReorder) {
  Mem::Timing t;
  t.read_latency_min = 1;
  t.read_latency_max = 40;
  mem_.set_timing(t);
  issue(40);
  for (size_t i = 0; i < r_got_.size(); ++i) EXPECT_EQ(r_got_[i].data[0], i / 2) << "beat " << i;
}

TEST_F(OrderTest, OutOfOrderAcrossIdsInOrderWithinAnId) {
  Mem::Timing t;
  t.read_latency_min = 1;
  t.read_latency_max = 40;
  t.reorder = true;
  mem_.set_timing(t);
  issue(40);
  std::map<uint32_t, uint32_t> last_of_id;
  bool out_of_order = false;
  uint32_t prev = 0;
  for (size_t i = 0; i < r_got_.size(); i += 2) {
    const uint32_t burst = r_got_[i].data[0];
    EXPECT_EQ(r_got_[i + 1].data[0], burst) << "bursts do not interleave without `interleave`";
    EXPECT_EQ(r_got_[i].id, id_of_[static_cast<int>(burst)]);
    if (last_of_id.count(r_got_[i].id)) {
      EXPECT_GT(burst, last_of_id[r_got_[i].id]) << "order within an ID";
    }
    last_of_id[r_got_[i].id] = burst;
    out_of_order |= i > 0 && burst < prev;
    prev = burst;
  }
  EXPECT_TRUE(out_of_order) << "expected some responses out of order across IDs";
}

TEST_F(OrderTest, InterleavedBeatsAcrossIds) {
  Mem::Timing t;
  t.read_latency_min = 1;
  t.read_latency_max = 40;
  t.reorder = true;
  t.interleave = true;
  mem_.set_timing(t);
  issue(40);
  std::map<uint32_t, int> beats_of_burst;
  bool interleaved = false;
  for (size_t i = 0; i < r_got_.size(); ++i) {
    const uint32_t burst = r_got_[i].data[0];
    EXPECT_EQ(r_got_[i].last, beats_of_burst[burst]++ == 1);
    interleaved |= r_got_[i].last && (i == 0 || r_got_[i - 1].data[0] != burst);
  }
  EXPECT_TRUE(interleaved);
}

TEST_F(AxiMemoryTest, BackpressureAndOutstandingLimits) {
  Mem::Timing t;
  t.read_latency_min = 2;
  t.read_latency_max = 30;
  t.write_latency_min = 2;
  t.write_latency_max = 30;
  t.ar_stall = t.aw_stall = t.w_stall = 0.5;
  t.r_gap = t.b_gap = 0.5;
  t.max_reads = 2;
  t.max_writes = 3;
  mem_.set_timing(t);
  rready_prob_ = 0.6;
  for (int i = 0; i < 20; ++i) {
    write(0, 0x7000 + 0x100 * static_cast<uint64_t>(i), {beat_of(64u * i), beat_of(64u * i + 32)});
  }
  run_writes(20);
  for (int i = 0; i < 20; ++i) read(0, 0x7000 + 0x100 * static_cast<uint64_t>(i), 1);
  run_reads(40);
  ASSERT_TRUE(failures_.empty()) << failures_[0];
  for (size_t i = 0; i < 40; ++i) EXPECT_EQ(r_got_[i].data, beat_of(32u * static_cast<uint32_t>(i)));
  EXPECT_EQ(mem_.stats().max_reads_outstanding, 2);
  EXPECT_EQ(mem_.stats().max_writes_outstanding, 3);
  EXPECT_EQ(mem_.stats().max_reads_by_id.at(0), 2);
  EXPECT_TRUE(arready_seen_[0] && arready_seen_[1]);
  EXPECT_TRUE(mem_.idle());
}

TEST_F(AxiMemoryTest, WBeforeAwIsAccepted) {
  aw_hold_until_ = 10;
  write(0, 0x9000, {beat_of(1), beat_of(2)});
  run_writes(1);
  ASSERT_TRUE(failures_.empty()) << failures_[0];
  EXPECT_EQ(mem_.read_words(0x9040, 1)[0], 2u);
  mem_.finish();
  EXPECT_TRUE(failures_.empty());
}

TEST_F(AxiMemoryTest, WBeatsWithoutAwAreReportedAtFinish) {
  w_q_.push_back({beat_of(0), ~uint64_t{0}, true});
  for (int i = 0; i < 5; ++i) step();
  mem_.finish();
  EXPECT_TRUE(failed_with("1 W beats without AW"));
}

TEST_F(AxiMemoryTest, WlastOnTheWrongBeatIsReported) {
  aw_q_.push_back(addr(0, 0xa000, 1));
  w_q_.push_back({beat_of(0), ~uint64_t{0}, true});
  w_q_.push_back({beat_of(0), ~uint64_t{0}, false});
  run_until([&] { return w_q_.empty(); });
  EXPECT_TRUE(failed_with("WLAST set on beat 0"));
  EXPECT_TRUE(failed_with("WLAST missing on beat 1"));
}

TEST_F(AxiMemoryTest, ValidDroppedOrPayloadChangedWhileStalledIsReported) {
  Mem::Timing t;
  t.max_reads = 0;   // AR never ready
  t.w_stall = 1.0;   // W never ready
  t.aw_stall = 1.0;  // AW never ready
  mem_.set_timing(t);
  read(0, 0x0, 0);
  step();
  ar_q_.clear();  // withdraws a stalled AR
  step();
  EXPECT_TRUE(failed_with("AR valid dropped while stalled"));
  write(0, 0x0, {beat_of(0)});
  step();
  w_q_.front().data[3] ^= 1;
  aw_q_.front().addr = 0x40;
  step();
  EXPECT_TRUE(failed_with("W payload changed while stalled"));
  EXPECT_TRUE(failed_with("AW payload changed while stalled"));
}

TEST_F(AxiMemoryTest, LatencyAndEfficiencyStatistics) {
  Mem::Timing t;
  t.read_latency_min = t.read_latency_max = 10;
  mem_.set_timing(t);
  read(0, 0xc000, 15);
  run_reads(16);
  const auto& s = mem_.stats();
  EXPECT_EQ(s.latency_min, 10u);
  EXPECT_EQ(s.latency_max, 10u);
  EXPECT_EQ(s.r_busy_cycles, 16u);
  EXPECT_EQ(s.last_r_cycle - s.first_ar_cycle + 1, 26u);  // 10 cycles of latency, 16 beats
  EXPECT_DOUBLE_EQ(s.r_efficiency(), 16.0 / 26.0);
}

}  // namespace
}  // namespace farnn::tb
