// sim:// (CoreDevice over SimTransport: the Verilated farnn_core behind the
// mocked PCIe root complex) through the Device API: bit-identical to the
// engine model and to model:// on random layers (seeds in the test names),
// capabilities and URI checks, counters that count the work done, every
// fault class at random injection points -> a named error, recovery, and
// the next command bit-exact.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>

#include "device_test_util.hpp"
#include "sim_device.hpp"

namespace {

using namespace farnn;
using namespace farnn::devtest;

constexpr int kPes = 4;

std::unique_ptr<Device> open_sim(const std::string& options = "") { return Device::open("sim://?seed=7" + options); }

TEST(SimDevice, OpensAndReportsTheBuiltCore) {
  auto dev = open_sim();
  const Capabilities& c = dev->caps();
  const sim::BuiltCore b = sim::built_core();
  EXPECT_EQ(c.kind, "sim");
  EXPECT_EQ(c.num_pe, b.num_pe);
  EXPECT_EQ(c.num_banks, b.num_banks);
  EXPECT_EQ(c.max_hidden, b.max_hidden);
  EXPECT_EQ(c.max_batch, b.max_batch);
  EXPECT_EQ(c.weight_depth, b.weight_depth);
  EXPECT_DOUBLE_EQ(c.clock_mhz, sim::synth_clock_mhz());
  EXPECT_EQ(c.card_memory_bytes, 1024ull << 20);
  EXPECT_NE(c.description.find("gen3x16"), std::string::npos) << c.description;
  const auto report = dev->status_report();
  ASSERT_GE(report.size(), 5u);
  EXPECT_NE(report[1].find("ID 0x4641524e"), std::string::npos) << report[1];
}

TEST(SimDevice, UriOptionsAreChecked) {
  expect_error<UnavailableError>([] { Device::open("sim://?pes=8"); }, "pes=8 is not it");
  expect_error<InvalidArgumentError>([] { Device::open("sim://?pcie=gen5x16"); }, "known: gen3x16, gen4x16");
  expect_error<InvalidArgumentError>([] { Device::open("sim://?speed=1"); }, "unknown option 'speed'");
  expect_error<UnavailableError>([] { Device::open("sim://card0"); }, "takes no target");
  auto dev = Device::open("sim://?pes=4&hidden=32&batch=4&pcie=gen4x16&core_mhz=250");
  EXPECT_DOUBLE_EQ(dev->caps().clock_mhz, 250.0);
  EXPECT_NE(dev->caps().description.find("gen4x16"), std::string::npos);
}

TEST(SimDevice, RandomLayersMatchTheModelBitForBit_Seed1) {
  std::mt19937_64 rng(1);
  auto dev = open_sim();
  auto model = Device::open("model://?pes=4&hidden=32&batch=4&banks=2&depth=1024");
  for (int i = 0; i < 6; ++i) {
    const LayerShape s = random_shape(rng, dev->caps().max_hidden, dev->caps().max_batch);
    const LayerData d = make_layer(s, kPes, rng);
    const int bank = i % 2;
    const DeviceRun r = run_layer(*dev, d, bank);
    expect_same(d, r, "sim " + s.describe());
    const DeviceRun m = run_layer(*model, d, bank);
    EXPECT_EQ(r.h, m.h);
    EXPECT_EQ(r.delta, m.delta);
    const uint64_t macs = static_cast<uint64_t>(s.packed_steps()) * s.gates() * s.hidden * s.hidden;
    EXPECT_EQ(r.fw.forwards, 1u);
    EXPECT_EQ(r.fw.macs, macs) << s.describe();
    EXPECT_GT(r.fw.cycles, 0u);
    EXPECT_GT(r.bw.cycles, 0u);
  }
}

// ---- faults

// The class of error each fault must end in (when it hits a command), and a
// phrase its message must hold.
bool expected_error(FaultKind k, const DeviceError& e) {
  const std::string m = e.what();
  const auto has = [&](const char* p) { return m.find(p) != std::string::npos; };
  switch (k) {
    case FaultKind::kCompletionTimeout:
    case FaultKind::kReadError:
      return dynamic_cast<const DmaError*>(&e) && has("ERR_BUS") && has("FAULT_KIND_BUS_READ_SLVERR");
    case FaultKind::kWriteError:
      return dynamic_cast<const DmaError*>(&e) && has("ERR_BUS") && has("FAULT_KIND_BUS_WRITE_SLVERR");
    case FaultKind::kUnmapPage:
      return dynamic_cast<const DmaError*>(&e) && has("ERR_BUS") && has("DECERR") && has("in buffer '");
    case FaultKind::kStall:
      return dynamic_cast<const TimeoutError*>(&e) && has("ERR_TIMEOUT");
    case FaultKind::kLostDoorbell:
      return dynamic_cast<const TimeoutError*>(&e) && has("the doorbell was lost");
    case FaultKind::kLinkDown:
      return dynamic_cast<const LinkError*>(&e) && has("the link went down");
  }
  return false;
}

// Words that no command names; they must never change.
struct Canary {
  BufferPtr buffer;
  explicit Canary(Device& dev) : buffer(dev.alloc(1024, Access::kReadWrite, "canary")) {
    for (size_t i = 0; i < 1024; ++i) buffer->data()[i] = static_cast<float>(i) + 0.5f;
  }
  bool intact() const {
    for (size_t i = 0; i < 1024; ++i)
      if (buffer->data()[i] != static_cast<float>(i) + 0.5f) return false;
    return true;
  }
};

// Each fault class at 20 random injection points over a layer's LOAD, FORWARD
// and BACKWARD: a fault that hits ends in its named error within the
// watchdog time; after reset() the same layer runs bit-exact; the canary
// buffer is untouched throughout.
void fault_sweep(FaultKind kind, uint64_t seed) {
  std::mt19937_64 rng(seed);
  sim::SimTransport* sim = nullptr;
  auto dev = sim::open_sim_device(driver::Uri::parse("sim://?seed=" + std::to_string(seed) +
                                                     "&watchdog_us=100&cto_us=20"),
                                  &sim);
  Canary canary(*dev);
  LayerShape s;
  s.cell = seed % 2 ? CellKind::kGru : CellKind::kLstm;
  s.hidden = 8;
  s.batch = 2;
  s.steps = 4;
  s.lengths = {4, 3};
  const LayerData d = make_layer(s, kPes, rng);
  // A clean run sizes the injection range (beats each way).
  const sim::LinkStats a = sim->stats();
  expect_same(d, run_layer(*dev, d, 0), "clean run");
  const sim::LinkStats b = sim->stats();
  const uint64_t reads = (b.read_bytes - a.read_bytes) / 64, writes = (b.write_bytes - a.write_bytes) / 64;
  int hits = 0;
  for (int i = 0; i < 20; ++i) {
    FaultPlan plan;
    plan.kind = kind;
    const uint64_t span = kind == FaultKind::kWriteError ? writes : kind == FaultKind::kReadError ||
                                                                            kind == FaultKind::kCompletionTimeout
                                                                        ? reads
                                                                        : reads + writes;
    plan.after = rng() % std::max<uint64_t>(span, 1);
    plan.stall_us = 10.0 + static_cast<double>(rng() % 300);  // some below the 100 us watchdog, most above
    const std::string where = std::string(fault_kind_name(kind)) + " after " + std::to_string(plan.after) +
                              " beats (seed " + std::to_string(seed) + ", point " + std::to_string(i) + ")";
    dev->inject_fault(plan);
    const auto start = sim->stats().cycles;
    try {
      expect_same(d, run_layer(*dev, d, i % 2), where + ": run without an error must be bit-exact");
      EXPECT_FALSE(sim->fault_hit() && kind != FaultKind::kStall) << where << ": the fault hit, no error came";
    } catch (const DeviceError& e) {
      ++hits;
      EXPECT_TRUE(sim->fault_hit()) << where << ": an error without the fault: " << e.what();
      EXPECT_TRUE(expected_error(kind, e)) << where << ": not the expected error: " << e.what();
      // Within the watchdog (100 us), a completion timeout (20 us), the longest stall, and the driver's checks.
      const double us = static_cast<double>(sim->stats().cycles - start) / dev->caps().clock_mhz;
      EXPECT_LT(us, 2000.0) << where << ": the error took " << us << " us of device time";
      dev->reset();
      expect_same(d, run_layer(*dev, d, i % 2), where + ": the run after reset()");
    }
    EXPECT_TRUE(canary.intact()) << where << ": a buffer no command names was written";
  }
  EXPECT_GE(hits, kind == FaultKind::kStall ? 5 : kind == FaultKind::kUnmapPage ? 10 : 15) << fault_kind_name(kind) << ": too few injections hit";
}

TEST(SimDeviceFaults, CompletionTimeout) { fault_sweep(FaultKind::kCompletionTimeout, 11); }
TEST(SimDeviceFaults, ReadError) { fault_sweep(FaultKind::kReadError, 12); }
TEST(SimDeviceFaults, WriteError) { fault_sweep(FaultKind::kWriteError, 13); }
TEST(SimDeviceFaults, Stall) { fault_sweep(FaultKind::kStall, 14); }
TEST(SimDeviceFaults, UnmapPage) { fault_sweep(FaultKind::kUnmapPage, 15); }
TEST(SimDeviceFaults, LostDoorbell) { fault_sweep(FaultKind::kLostDoorbell, 16); }
TEST(SimDeviceFaults, LinkDown) { fault_sweep(FaultKind::kLinkDown, 17); }

}  // namespace
