// sim:// (CoreDevice over SimTransport: the Verilated farnn_core behind the
// mocked PCIe root complex) through the Device API: bit-identical to the
// engine model and to model:// on random layers (seeds in the test names),
// capabilities and URI checks, counters that count the work done, every
// fault class at random injection points -> a named error, recovery, and
// the next command bit-exact.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "core_device.hpp"
#include "device_test_util.hpp"
#include "farnn/core_regs.hpp"
#include "sim_device.hpp"
#include "test_seed.hpp"

namespace {

using namespace farnn;
using namespace farnn::devtest;

namespace cr = core_regs;

// The Verilated core's PEs and chains (the chains set the backward's order).
const sim::BuiltCore kCore = sim::built_core();

// A random layer and the engine model's results for the built core.
LayerData core_layer(const LayerShape& s, std::mt19937_64& rng) {
  return make_layer(s, kCore.num_pe, rng, kCore.num_chains);
}

std::unique_ptr<Device> open_sim(const std::string& options = "") {
  return Device::open("sim://?" + (options.empty() ? std::string("seed=7") : options.substr(1)));
}

TEST(SimDevice, OpensAndReportsTheBuiltCore) {
  auto dev = open_sim();
  const Capabilities& c = dev->caps();
  const sim::BuiltCore& b = kCore;
  EXPECT_EQ(c.kind, "sim");
  EXPECT_EQ(c.num_pe, b.num_pe);
  EXPECT_EQ(c.num_chains, b.num_chains);  // CAPS5
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
  // Bounded: a clock typed in Hz once ran the open for minutes; card_mib
  // shifted past 64 bits became 1 MiB.
  expect_error<InvalidArgumentError>([] { Device::open("sim://?core_mhz=250000000"); }, "from 1 to 1000");
  expect_error<InvalidArgumentError>([] { Device::open("sim://?card_mib=17592186044417"); }, "from 1 to 65536");
  expect_error<InvalidArgumentError>([] { Device::open("sim://?watchdog_us=0"); }, "watchdog_us=0 must be");
  // The seed's bound itself opens (numbers were cut at 18 digits, 2^62 has 19).
  EXPECT_NO_THROW(Device::open("sim://?seed=4611686018427387904"));
  expect_error<InvalidArgumentError>([] { Device::open("sim://?seed=4611686018427387905"); }, "seed=4611686018427387905 must be");
  auto dev = Device::open("sim://?pes=4&hidden=32&batch=4&pcie=gen4x16&core_mhz=250");
  EXPECT_DOUBLE_EQ(dev->caps().clock_mhz, 250.0);
  EXPECT_NE(dev->caps().description.find("gen4x16"), std::string::npos);
}

// Random layers (cell, H, B, T, lengths; banks alternating) on sim:// and
// model://: both bit-identical to the engine model; MACs counted as done.
void random_layers(uint64_t seed, int count) {
  farnn::test::SeededRng rng(seed);
  auto dev = open_sim("&seed=" + std::to_string(seed + 100));
  auto model = Device::open(dev->caps().model_uri());
  for (int i = 0; i < count; ++i) {
    const LayerShape s = random_shape(rng, dev->caps().max_hidden, dev->caps().max_batch);
    const LayerData d = core_layer(s, rng);
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

TEST(SimDevice, RandomLayersMatchTheModelBitForBit_Seed1) { random_layers(1, 6); }
TEST(SimDevice, RandomLayersMatchTheModelBitForBit_Seed2) { random_layers(2, 8); }

TEST(SimDevice, BadArgumentsAreRefusedClearly) {
  auto dev = open_sim();
  farnn::test::SeededRng rng(3);
  LayerShape s;
  s.hidden = 8;
  s.batch = 2;
  s.steps = 3;
  LayerShape big = s;
  big.hidden = dev->caps().max_hidden + 1;
  expect_error<CapacityError>([&] { dev->alloc_gate_store(big); }, "above the device's maximum");
  LayerShape wide = s;
  wide.batch = dev->caps().max_batch + 1;
  expect_error<CapacityError>([&] { dev->alloc_gate_store(wide); }, "split the batch");
  const LayerData d = core_layer(s, rng);
  const size_t G = s.gates(), H = s.hidden, S = s.packed_steps();
  BufferPtr w = buffer_of(*dev, d.w.w_hh, Access::kRead, "w_hh");
  BufferPtr b = buffer_of(*dev, d.w.b_hh, Access::kRead, "b_hh");
  auto model = Device::open("model://?pes=4");
  BufferPtr foreign = model->alloc(G * H, Access::kRead, "model's");
  expect_error<BufferError>([&] { dev->load(0, s, {w}, {foreign}); }, "not registered with this device");
  BufferPtr small = dev->alloc(G * H * H - 1, Access::kRead, "small");
  expect_error<BufferError>([&] { dev->load(0, s, {small}, {b}); }, "needs " + std::to_string(G * H * H));
  dev->load(0, s, {w}, {b})->wait();
  BufferPtr xp = buffer_of(*dev, d.xp, Access::kRead, "xp");
  BufferPtr h = dev->alloc(S * H, Access::kRead, "h read-only");
  GateStorePtr store = dev->alloc_gate_store(s);
  expect_error<BufferError>([&] { dev->forward({s, 0, {xp}, {}, {h}, {}, store}); }, "registered read-only");
  BufferPtr h2 = dev->alloc(S * H, Access::kWrite, "h");
  expect_error<InvalidArgumentError>([&] { dev->forward({s, 1, {xp}, {}, {h2}, {}, store}); }, "holds no weights");
  // A queued FORWARD holds its bank: a LOAD into it is refused, the other bank is free.
  BufferPtr st = buffer_of(*dev, d.state_in, Access::kRead, "state_in");
  JobPtr fw = dev->forward({s, 0, {xp}, {st}, {h2}, {}, store});
  expect_error<BankBusyError>([&] { dev->load(0, s, {w}, {b}); }, "still in use");
  dev->load(1, s, {w}, {b})->wait();
  fw->wait();
  EXPECT_EQ(words_of(h2, 0, S * H), d.fw.h);
  // A BACKWARD on a bank other than its FORWARD's matches no record the core
  // keeps: the core refuses it, the error says what to do, and names no
  // address (the engine's refusal has no stream).
  BufferPtr dh = buffer_of(*dev, d.dh, Access::kRead, "dh");
  BufferPtr delta = dev->alloc(S * H * kDeltaWords, Access::kWrite, "delta");
  JobPtr bw = dev->backward({s, 1, store, {dh}, {}, {delta}, {}});
  const std::string msg = expect_error<CommandError>([&] { bw->wait(); }, "ERR_NO_FORWARD");
  EXPECT_NE(msg.find("newest 8"), std::string::npos) << msg;
  EXPECT_NE(msg.find("run its FORWARD again"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("STREAM_NONE"), std::string::npos) << msg;
  dev->reset();
  dev->load(0, s, {w}, {b})->wait();
  dev->forward({s, 0, {xp}, {st}, {h2}, {}, store})->wait();
  dev->backward({s, 0, store, {dh}, {}, {delta}, {}})
      ->wait();  // the same BACKWARD on its bank runs
}

// A command holds the buffers it names until it ends: the caller may drop
// its handles right after submitting, and the command still reads them.
TEST(SimDevice, ACommandKeepsItsBuffersUntilItEnds) {
  auto dev = open_sim();
  farnn::test::SeededRng rng(12);
  const LayerShape s{CellKind::kLstm, 8, 2, 4, {}};
  const LayerData d = core_layer(s, rng);
  const size_t H = s.hidden, S = s.packed_steps();
  BufferPtr h = dev->alloc(S * H, Access::kWrite, "h");
  JobPtr fw;
  {
    BufferPtr w = buffer_of(*dev, d.w.w_hh, Access::kRead, "w_hh"),
              b = buffer_of(*dev, d.w.b_hh, Access::kRead, "b");
    BufferPtr xp = buffer_of(*dev, d.xp, Access::kRead, "xp"),
              st = buffer_of(*dev, d.state_in, Access::kRead, "st");
    dev->load(0, s, {w}, {b});
    fw = dev->forward({s, 0, {xp}, {st}, {h}, {}, dev->alloc_gate_store(s)});
  }
  fw->wait();
  EXPECT_EQ(words_of(h, 0, S * H), d.fw.h);
}

// Foreign memory (as a GPU allocation would be) registered for xp and h;
// drain() waits for everything; unregister() refuses later use and unmaps.
TEST(SimDevice, RegisteredMemoryDrainAndUnregister) {
  sim::SimTransport* link = nullptr;
  auto dev = sim::open_sim_device(driver::Uri::parse("sim://?seed=7"), &link);
  farnn::test::SeededRng rng(9);
  LayerShape s;
  s.cell = CellKind::kGru;
  s.hidden = 12;
  s.batch = 3;
  s.steps = 5;
  const LayerData d = core_layer(s, rng);
  const size_t H = s.hidden, S = s.packed_steps();
  std::vector<float> xp_mem(d.xp.size() + 1), h_mem(S * H + 3, -1.0f);
  std::memcpy(xp_mem.data() + 1, d.xp.data(), 4 * d.xp.size());  // not page aligned, at a word offset
  BufferPtr xp = dev->register_memory(xp_mem.data(), xp_mem.size(), Access::kRead, "gpu xp");
  BufferPtr h = dev->register_memory(h_mem.data(), h_mem.size(), Access::kWrite, "gpu h");
  BufferPtr w = buffer_of(*dev, d.w.w_hh, Access::kRead, "w_hh"), b = buffer_of(*dev, d.w.b_hh, Access::kRead, "b");
  BufferPtr st = buffer_of(*dev, d.state_in, Access::kRead, "st");
  const Counters before = dev->counters();
  dev->load(1, s, {w}, {b});
  dev->forward({s, 1, {xp, 1}, {st}, {h, 2}, {}, dev->alloc_gate_store(s)});
  dev->drain();
  const Counters after = dev->counters();
  EXPECT_EQ(after.loads - before.loads, 1u);
  EXPECT_EQ(after.forwards - before.forwards, 1u);
  EXPECT_EQ(after.macs - before.macs, static_cast<uint64_t>(S) * s.gates() * H * H);
  // Every host write the core made: h, the final state (into the driver's
  // discard area: the command named none) and a completion word per command.
  EXPECT_EQ(after.words_written - before.words_written, S * H + s.batch * H + 2);
  Words got(S * H);
  std::memcpy(got.data(), h_mem.data() + 2, 4 * got.size());
  EXPECT_EQ(got, d.fw.h);
  EXPECT_EQ(h_mem[0], -1.0f);
  EXPECT_EQ(h_mem[1], -1.0f);
  EXPECT_EQ(h_mem[S * H + 2], -1.0f) << "written past the range";
  EXPECT_EQ(link->stats().stray_write_bytes, 0u) << "a write outside every mapped range";
  dev->unregister(h);
  expect_error<BufferError>([&] { dev->unregister(h); }, "not registered");
  expect_error<BufferError>([&] { dev->forward({s, 1, {xp, 1}, {st}, {h, 2}, {}, dev->alloc_gate_store(s)}); },
                            "not registered with this device");
}

// Every command's report carries its DMA over the host link per direction,
// inside its own span: together they account for every byte the link moved.
TEST(SimDevice, ReportsPlaceEachCommandsLinkDmaInsideItsSpan) {
  sim::SimTransport* link = nullptr;
  auto dev = sim::open_sim_device(driver::Uri::parse("sim://?seed=3"), &link);
  farnn::test::SeededRng rng(12);
  const LayerData d = core_layer({CellKind::kLstm, 12, 2, 4, {4, 3}}, rng);
  const LayerShape& s = d.shape;
  const size_t H = s.hidden, S = s.packed_steps();
  BufferPtr w = buffer_of(*dev, d.w.w_hh, Access::kRead, "w_hh"), b = buffer_of(*dev, d.w.b_hh, Access::kRead, "b");
  BufferPtr xp = buffer_of(*dev, d.xp, Access::kRead, "xp"), dh = buffer_of(*dev, d.dh, Access::kRead, "dh");
  BufferPtr h = dev->alloc(S * H, Access::kWrite, "h"), delta = dev->alloc(S * H * kDeltaWords, Access::kWrite, "d");
  GateStorePtr store = dev->alloc_gate_store(s);
  const sim::LinkStats before = link->stats();
  std::vector<JobReport> reports;
  reports.push_back(dev->load(0, s, {w}, {b})->wait());
  reports.push_back(dev->forward({s, 0, {xp}, {}, {h}, {}, store})->wait());
  reports.push_back(dev->backward({s, 0, store, {dh}, {}, {delta}, {}})->wait());
  const sim::LinkStats after = link->stats();
  uint64_t to_card = 0, to_host = 0;
  for (const JobReport& r : reports) {
    for (const JobReport::Dma* dma : {&r.to_card, &r.to_host}) {
      EXPECT_GT(dma->bytes, 0u) << r.what;
      EXPECT_GE(dma->first, r.started) << r.what;
      EXPECT_LE(dma->first, dma->last) << r.what;
      EXPECT_LE(dma->last, r.finished) << r.what;
    }
    // The link carries the command's data words and the driver's own
    // (descriptor, lengths, completion word) on top.
    EXPECT_GE(r.to_card.bytes, 4 * r.delta.words_read) << r.what;
    EXPECT_GE(r.to_host.bytes, 4 * r.delta.words_written) << r.what;
    to_card += r.to_card.bytes;
    to_host += r.to_host.bytes;
  }
  EXPECT_EQ(to_card, after.read_bytes - before.read_bytes);
  EXPECT_EQ(to_host, after.write_bytes - before.write_bytes);
  EXPECT_GE(reports[1].to_card.bytes, 4 * d.xp.size()) << "FORWARD reads xp";
  EXPECT_GE(reports[2].to_host.bytes, 4 * S * H * kDeltaWords) << "BACKWARD writes delta";
  EXPECT_GE(reports[1].to_card.first, reports[0].finished) << "FORWARD's reads come after the LOAD";
}

TEST(SimDevice, NonFiniteDataPropagatesAndIsCounted) {
  auto dev = open_sim();
  farnn::test::SeededRng rng(4);
  LayerShape s;
  s.hidden = 4;
  s.steps = 2;
  LayerData d = core_layer(s, rng);
  d.xp[0] = 0x7fc00000u;  // NaN
  d.dh[3] = 0xff800000u;  // -Inf
  const engine::Config cfg = engine_config(s, kCore.num_pe, kCore.num_chains);
  d.fw = engine::forward(cfg, d.w, d.xp, d.state_in);
  d.bw = engine::backward(cfg, d.w, d.fw.records, d.dh, d.carry);
  const Counters before = dev->counters();
  const DeviceRun r = run_layer(*dev, d, 0);
  expect_same(d, r, "NaN in xp");
  // The NaN/Inf words each command read and wrote, as the model counts them.
  const auto bad = [](const std::vector<const Words*>& arrays) {
    uint64_t n = 0;
    for (const Words* w : arrays)
      for (uint32_t x : *w) n += (x & 0x7f800000u) == 0x7f800000u;
    return n;
  };
  EXPECT_EQ(r.fw.nonfinite_inputs, 1u);
  EXPECT_EQ(r.bw.nonfinite_inputs, 1u);
  EXPECT_GT(r.fw.nonfinite_outputs, 0u);
  EXPECT_EQ(r.fw.nonfinite_outputs, bad({&d.fw.h, &d.fw.state_out}));
  EXPECT_EQ(r.bw.nonfinite_outputs, bad({&d.bw.delta, &d.bw.state_out}));
  const Counters after = dev->counters();
  EXPECT_EQ(after.nonfinite_inputs - before.nonfinite_inputs, 2u);
  EXPECT_EQ(after.nonfinite_outputs - before.nonfinite_outputs,
            r.fw.nonfinite_outputs + r.bw.nonfinite_outputs);
  auto model = Device::open(dev->caps().model_uri());
  const DeviceRun m = run_layer(*model, d, 0);
  EXPECT_EQ(r.fw.nonfinite_outputs, m.fw.nonfinite_outputs);
  EXPECT_EQ(r.bw.nonfinite_outputs, m.bw.nonfinite_outputs);
  EXPECT_EQ(dev->counters().failed, 0u);
}

TEST(SimDevice, TwoThreadsShareOneDevice) {
  auto dev = open_sim();
  std::vector<std::thread> threads;
  std::vector<int> good(2, 0);
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      farnn::test::SeededRng rng(40 + t);
      for (int i = 0; i < 3; ++i) {
        LayerShape s = random_shape(rng, 16, 4);
        const LayerData d = core_layer(s, rng);
        try {
          const DeviceRun r = run_layer(*dev, d, t);  // each thread its own bank
          good[t] += r.h == d.fw.h && r.delta == d.bw.delta && r.dstate == d.bw.state_out;
        } catch (const std::exception& e) {
          ADD_FAILURE() << "thread " << t << ": " << e.what();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good[0], 3);
  EXPECT_EQ(good[1], 3);
}

uint32_t word(const BufferPtr& b, size_t i) {
  return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(b->data() + i)).load();
}
void set_word(const BufferPtr& b, size_t i, uint32_t v) {
  std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(b->data() + i)).store(v);
}

// FORWARD gated on a polled word, BACKWARD on a step doorbell, both reporting
// progress every step: no step runs before its input is ready, the progress
// word follows the ready count (Job::wait_progress waits for it), and the
// results are bit-exact.
TEST(SimDevice, StepSyncGatesInputsAndReportsProgress) {
  auto dev = open_sim();
  farnn::test::SeededRng rng(6);
  LayerShape s;
  s.hidden = 8;
  s.batch = 2;
  s.steps = 6;
  s.lengths = {6, 4};
  const LayerData d = core_layer(s, rng);
  const size_t G = s.gates(), H = s.hidden, S = s.packed_steps(), B = s.batch, W = state_words(s.cell);
  BufferPtr w = buffer_of(*dev, d.w.w_hh, Access::kRead, "w_hh");
  BufferPtr bias = buffer_of(*dev, d.w.b_hh, Access::kRead, "b_hh");
  dev->load(0, s, {w}, {bias})->wait();
  BufferPtr xp = buffer_of(*dev, d.xp, Access::kRead, "xp"), st = buffer_of(*dev, d.state_in, Access::kRead, "st");
  BufferPtr h = dev->alloc(S * H, Access::kWrite, "h"), so = dev->alloc(B * H * W, Access::kWrite, "so");
  BufferPtr sync = dev->alloc(2, Access::kReadWrite, "sync");  // word 0: ready, word 1: progress
  GateStorePtr store = dev->alloc_gate_store(s);
  set_word(sync, 0, 0);
  set_word(sync, 1, 0xffffffffu);
  JobPtr fw = dev->forward({s, 0, {xp}, {st}, {h}, {so}, store, 0, {{sync, 0}, -1, {sync, 1}, 1}});
  EXPECT_THROW(fw->wait(std::chrono::milliseconds(20)), TimeoutError);
  EXPECT_EQ(word(sync, 1), 0xffffffffu) << "a step ran before its input was ready";
  set_word(sync, 0, 2);
  // wait_progress advances the simulation until the word reaches the count,
  // and times out while the gate holds the command below it.
  set_word(sync, 1, 0);
  EXPECT_EQ(fw->wait_progress({sync, 1}, 2), 2u);
  EXPECT_THROW(fw->wait_progress({sync, 1}, 3, std::chrono::milliseconds(20)), TimeoutError);
  EXPECT_THROW(fw->wait(std::chrono::milliseconds(20)), TimeoutError);
  EXPECT_EQ(word(sync, 1), 2u) << "progress after two ready steps";
  set_word(sync, 0, 6);
  EXPECT_EQ(fw->wait_progress({sync, 1}, 6), 6u);
  fw->wait();
  EXPECT_EQ(word(sync, 1), 6u);
  EXPECT_EQ(fw->wait_progress({sync, 1}, 100), 6u) << "an ended command returns its word";
  EXPECT_EQ(words_of(h, 0, S * H), d.fw.h);
  BufferPtr dh = buffer_of(*dev, d.dh, Access::kRead, "dh"), carry = buffer_of(*dev, d.carry, Access::kRead, "c");
  BufferPtr delta = dev->alloc(S * H * kDeltaWords, Access::kWrite, "delta"), ds = dev->alloc(B * H * W, Access::kWrite, "ds");
  dev->ring_step_doorbell(1, 0);
  JobPtr bw = dev->backward({s, 0, store, {dh}, {carry}, {delta}, {ds}, 0, {{}, 1, {sync, 1}, 1}});
  EXPECT_THROW(bw->wait(std::chrono::milliseconds(20)), TimeoutError);
  EXPECT_EQ(word(sync, 1), 6u) << "a backward step ran before its input was ready";
  dev->ring_step_doorbell(1, 3);
  EXPECT_THROW(bw->wait(std::chrono::milliseconds(20)), TimeoutError);
  EXPECT_EQ(word(sync, 1), 3u) << "progress after three ready steps";
  dev->ring_step_doorbell(1, 6);
  bw->wait();
  EXPECT_EQ(words_of(delta, 0, S * H * kDeltaWords), d.bw.delta);
  EXPECT_EQ(words_of(ds, 0, B * H * W), d.bw.state_out);
  expect_error<InvalidArgumentError>([&] { dev->ring_step_doorbell(4, 1); }, "does not exist");
  expect_error<InvalidArgumentError>(
      [&] { dev->forward({s, 0, {xp}, {st}, {h}, {so}, store, 0, {{sync, 0}, 2, {}, 1}}); }, "not both");
  (void)G;
}

// A FORWARD on `bank`: its weights loaded and buffers registered by the
// constructor, submitted by submit() gated on step doorbell 0 (or not gated).
struct GatedForward {
  LayerShape s{CellKind::kLstm, 8, 1, 4, {}};
  LayerData d;
  BufferPtr xp, st, h, so;
  GateStorePtr store;
  JobPtr job;
  int bank;
  GatedForward(Device& dev, uint64_t seed, int bank_ = 0, int steps = 4) : bank(bank_) {
    s.steps = steps;
    farnn::test::SeededRng rng(seed);
    d = core_layer(s, rng);
    dev.load(bank, s, {buffer_of(dev, d.w.w_hh, Access::kRead, "w_hh")},
             {buffer_of(dev, d.w.b_hh, Access::kRead, "b_hh")})->wait();
    xp = buffer_of(dev, d.xp, Access::kRead, "xp");
    st = buffer_of(dev, d.state_in, Access::kRead, "st");
    h = dev.alloc(s.packed_steps() * s.hidden, Access::kWrite, "h");
    so = dev.alloc(s.hidden * state_words(s.cell), Access::kWrite, "so");
    store = dev.alloc_gate_store(s);
  }
  GatedForward& submit(Device& dev, bool gated = true) {
    if (gated) dev.ring_step_doorbell(0, 0);
    job = dev.forward({s, bank, {xp}, {st}, {h}, {so}, store, 0, gated ? StepSync{{}, 0, {}, 1} : StepSync{}});
    return *this;
  }
};

// A thread waiting on a gated command lets another thread ring its doorbell
// (the wait once held the driver's mutex throughout: the ring came back when
// the wait timed out); a buffer registered while the gate holds the queue
// is refused at once (rewriting the windows waits for the queue), and a
// device closed with the gate shut fails the job at once, saying why (it
// waited 30 s). Each step is bounded, so a hang fails the test.
TEST(SimDevice, GatedCommandsLetOtherThreadsInAndFailFast) {
  auto dev = open_sim();
  GatedForward g(*dev, 21);
  g.submit(*dev);
  const auto t0 = std::chrono::steady_clock::now();
  std::thread ringer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    dev->ring_step_doorbell(0, 4);
  });
  EXPECT_NO_THROW(g.job->wait(std::chrono::seconds(30)));
  ringer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(words_of(g.h, 0, g.s.packed_steps() * g.s.hidden), g.d.fw.h);

  GatedForward g2(*dev, 22);
  g2.submit(*dev);
  BufferPtr h2 = dev->alloc(g2.s.packed_steps() * g2.s.hidden, Access::kWrite, "h2");  // new: windows to rewrite
  BufferPtr so2 = dev->alloc(g2.s.hidden * state_words(g2.s.cell), Access::kWrite, "so2");
  GateStorePtr store2 = dev->alloc_gate_store(g2.s);
  expect_error<InvalidArgumentError>([&] { dev->forward({g2.s, 0, {g2.xp}, {g2.st}, {h2}, {so2}, store2}); },
                                     "waits on step doorbell 0 (rung to 0 of its 4 steps): ring it first");
  dev->ring_step_doorbell(0, 4);
  g2.job->wait(std::chrono::seconds(30));
  EXPECT_EQ(words_of(g2.h, 0, g2.s.packed_steps() * g2.s.hidden), g2.d.fw.h);

  GatedForward g3(*dev, 23);
  g3.submit(*dev);
  JobPtr held = g3.job;
  const auto t1 = std::chrono::steady_clock::now();
  dev.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - t1, std::chrono::seconds(10));
  expect_error<NotRunError>([&] { held->wait(std::chrono::seconds(1)); }, "device closed while");
  expect_error<NotRunError>([&] { held->wait(std::chrono::seconds(1)); }, "waits on step doorbell 0");
}

// Two threads in waits: A waits for a long ungated FORWARD and then rings
// the doorbell that B's gated FORWARD, queued behind it, waits on. B comes
// in while A waits and drives the simulation; A's command ends during B's
// wait, and B must let A back so that A can return and ring: both end in
// seconds (a hand-off that did not queue A for its return kept B's wait to
// its limit).
TEST(SimDevice, TwoWaitingThreadsHandTheDeviceBackAndForth) {
  auto dev = open_sim();
  GatedForward a(*dev, 31, 0, 500);
  GatedForward b(*dev, 32, 1);
  a.submit(*dev, false);
  b.submit(*dev);
  const auto t0 = std::chrono::steady_clock::now();
  std::thread waiter_a([&] {
    EXPECT_NO_THROW(a.job->wait(std::chrono::seconds(30)));
    dev->ring_step_doorbell(0, 4);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // A is in its wait
  std::thread waiter_b([&] { EXPECT_NO_THROW(b.job->wait(std::chrono::seconds(30))); });
  waiter_a.join();
  waiter_b.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(words_of(a.h, 0, a.s.packed_steps() * a.s.hidden), a.d.fw.h);
  EXPECT_EQ(words_of(b.h, 0, b.s.packed_steps() * b.s.hidden), b.d.fw.h);
}

// Wait limits up to milliseconds::max() mean "for ever" (now + limit once
// overflowed and timed out at once); a negative one is refused.
TEST(SimDevice, WaitLimitsSaturate) {
  auto dev = open_sim();
  farnn::test::SeededRng rng(24);
  const LayerData d = core_layer({CellKind::kGru, 4, 1, 2, {}}, rng);
  BufferPtr w = buffer_of(*dev, d.w.w_hh, Access::kRead, "w_hh");
  BufferPtr b = buffer_of(*dev, d.w.b_hh, Access::kRead, "b_hh");
  JobPtr load = dev->load(0, {CellKind::kGru, 4, 1, 2, {}}, {w}, {b});
  expect_error<InvalidArgumentError>([&] { load->wait(std::chrono::milliseconds(-1)); }, "wait limit is negative");
  EXPECT_NO_THROW(load->wait(std::chrono::milliseconds::max()));
  EXPECT_NO_THROW(dev->drain(std::chrono::milliseconds::max()));
}

// The core's FORWARD records through the driver, with the same case as the
// model's (ModelDevice.KeepsTheNewestForwardRecordsAsTheCore).
TEST(SimDevice, KeepsTheNewestForwardRecords) {
  auto dev = open_sim();
  farnn::test::SeededRng rng(12);
  EXPECT_EQ(dev->caps().forward_records, engine::kForwardRecords);
  // The core's model (farnn info's model: line) keeps as many.
  EXPECT_NE(dev->caps().model_uri().find("&records=8"), std::string::npos)
      << dev->caps().model_uri();
  EXPECT_EQ(Device::open(dev->caps().model_uri())->caps().forward_records, engine::kForwardRecords);
  check_forward_records(*dev, rng);
}

// Two sim:// devices in one process, each closed while the other is open,
// in both orders, all on one thread: each runs a layer bit-exact, and
// every close returns (the second device's Verilated context, made current
// on the thread, once freed made the first one's close hang). The thread is
// waited for with a deadline, so a hang fails the test instead of hanging it;
// a thread that finished is joined, so none outlives the test (a detached one
// could still be exiting while the process tears GoogleTest down).
TEST(SimDevice, TwoDevicesInOneProcessCloseInEitherOrder) {
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  std::thread worker([done = std::move(done)]() mutable {
    farnn::test::SeededRng rng(9);
    const LayerData d = core_layer({CellKind::kLstm, 4, 1, 2, {}}, rng);
    for (const bool first_closes_first : {false, true}) {
      auto a = Device::open("sim://?seed=4");
      auto b = Device::open("sim://?seed=5");
      expect_same(d, run_layer(*a, d, 0), "first device");
      expect_same(d, run_layer(*b, d, 0), "second device");
      if (first_closes_first) a.reset();
      b.reset();
      a.reset();
    }
    done.set_value();
  });
  if (finished.wait_for(std::chrono::seconds(120)) != std::future_status::ready) {
    ADD_FAILURE() << "closing two sim:// devices hung";
    std::fflush(nullptr);
    std::_Exit(1);  // the hung thread cannot be joined
  }
  worker.join();
}

// A transport shared by two drivers in turn; cut() makes it a dead link for the
// first (a process that crashed stops touching the card).
class SharedLink final : public Transport {
 public:
  explicit SharedLink(std::shared_ptr<sim::SimTransport> s) : s_(std::move(s)) {}
  void cut() { cut_ = true; }
  // A register that reads `v` instead of the card's value (another core's).
  void override_register(uint32_t o, uint32_t v) { over_[o] = v; }
  // From the (n+1)-th soft reset on, STATUS reads halted and resetting: a
  // core whose soft reset never ends.
  void stick_after_resets(int n) { resets_left_ = n; }
  bool was_read(uint32_t o) const { return read_.count(o) != 0; }
  std::string describe() const override { return s_->describe(); }
  LinkInfo link() const override { return s_->link(); }
  uint32_t read32(uint32_t o) override {
    read_.insert(o);
    if (cut_) return 0xffffffffu;
    const auto it = over_.find(o);
    return it != over_.end() ? it->second : s_->read32(o);
  }
  void write32(uint32_t o, uint32_t v) override {
    if (o == core_regs::kRegCtrl && (v & core_regs::kCtrlSoftResetMask) && resets_left_ >= 0 && resets_left_-- == 0) {
      override_register(core_regs::kRegStatus, core_regs::kStatusHaltedMask | core_regs::kStatusResettingMask);
    }
    if (!cut_) s_->write32(o, v);
  }
  DmaRegion alloc_dma(size_t n, const std::string& name) override { return s_->alloc_dma(n, name); }
  void free_dma(const DmaRegion& r) override { s_->free_dma(r); }
  uint64_t map_foreign(void* p, size_t n, const std::string& name) override { return s_->map_foreign(p, n, name); }
  void unmap_foreign(uint64_t bus, size_t n) override { s_->unmap_foreign(bus, n); }
  uint32_t wait_interrupt(uint32_t v, std::chrono::nanoseconds t) override {
    return cut_ ? 0 : s_->wait_interrupt(v, t);
  }
  std::chrono::nanoseconds now() const override { return s_->now(); }
  bool recover_link() override { return !cut_ && s_->recover_link(); }

 private:
  std::shared_ptr<sim::SimTransport> s_;
  bool cut_ = false;
  std::map<uint32_t, uint32_t> over_;
  std::set<uint32_t> read_;
  int resets_left_ = -1;
};

// VERSION decides what the driver reads: another major is refused by name; a
// 1.0 core has no CAPS5 (one chain), so the driver must not read it.
TEST(SimDevice, VersionDecidesWhatTheDriverReads) {
  sim::SimConfig cfg;
  cfg.core_clock_hz = sim::synth_clock_mhz() * 1e6;
  auto card = std::make_shared<sim::SimTransport>(cfg);
  {
    auto link = std::make_unique<SharedLink>(card);
    link->override_register(cr::kRegVersion, 0x00020001u);
    expect_error<UnavailableError>([&] { driver::open_core_device(std::move(link), driver::CoreOptions{}); },
                                   "the core is farnn_core 2.1, this driver speaks version 1.x");
  }
  {
    auto link = std::make_unique<SharedLink>(card);
    SharedLink* l = link.get();
    link->override_register(cr::kRegVersion, 0x00010000u);
    link->override_register(cr::kRegCaps5, 0x10007u);  // what a 1.0 map may hold there
    auto dev = driver::open_core_device(std::move(link), driver::CoreOptions{});
    EXPECT_EQ(dev->caps().num_chains, 1);
    EXPECT_FALSE(dev->caps().red_adder);
    EXPECT_FALSE(l->was_read(cr::kRegCaps5));
  }
  {
    auto link = std::make_unique<SharedLink>(card);
    SharedLink* l = link.get();
    auto dev = driver::open_core_device(std::move(link), driver::CoreOptions{});
    EXPECT_EQ(dev->caps().num_chains, kCore.num_chains);
    EXPECT_FALSE(dev->caps().red_adder);  // the P4 core reduces on the MAC adder
    EXPECT_TRUE(l->was_read(cr::kRegCaps5));
  }
  {  // a 1.1 core built with RedAdder: CAPS5 bit 16
    auto link = std::make_unique<SharedLink>(card);
    link->override_register(cr::kRegCaps5, (1u << cr::kCaps5RedAdderShift) | static_cast<uint32_t>(kCore.num_chains));
    auto dev = driver::open_core_device(std::move(link), driver::CoreOptions{});
    EXPECT_TRUE(dev->caps().red_adder);
    EXPECT_EQ(dev->caps().num_chains, kCore.num_chains);
  }
}

// A core whose soft reset never ends (STATUS stays halted and resetting, as
// when the link holds a beat back): self_test() still returns a verdict for
// every check; the check the failed reset followed says the device did not
// recover, and the checks after it are not run (the reset's error once
// escaped self_test, and farnn selftest printed no verdict).
TEST(SimDevice, SelfTestReportsADeviceThatDoesNotRecover) {
  sim::SimConfig cfg;
  cfg.core_clock_hz = sim::synth_clock_mhz() * 1e6;
  auto card = std::make_shared<sim::SimTransport>(cfg);
  auto link = std::make_unique<SharedLink>(card);
  SharedLink* l = link.get();
  auto dev = driver::open_core_device(std::move(link), driver::CoreOptions{});
  l->stick_after_resets(1);  // self_test's first reset ends; the one after the scratch check does not
  const std::vector<Device::SelfCheck> v = dev->self_test();
  ASSERT_EQ(v.size(), 6u);
  // The scratch register needs no command and passes; the reset after it fails.
  EXPECT_FALSE(v[0].ok);
  EXPECT_EQ(v[0].detail.rfind("5 patterns written and read back; the device did not recover: ", 0), 0u) << v[0].detail;
  EXPECT_NE(v[0].detail.find("did not finish its soft reset within 2 ms"), std::string::npos) << v[0].detail;
  for (size_t i = 1; i < v.size(); ++i) {
    EXPECT_FALSE(v[i].ok) << v[i].name;
    EXPECT_EQ(v[i].detail, "not run: the reset after check 'scratch register' failed") << v[i].name;
  }
  // A device that does not recover from the first reset runs no check.
  const std::vector<Device::SelfCheck> again = dev->self_test();
  ASSERT_EQ(again.size(), 6u);
  for (const Device::SelfCheck& c : again) {
    EXPECT_FALSE(c.ok) << c.name;
    EXPECT_EQ(c.detail.rfind("not run: the reset before the first check failed: ", 0), 0u) << c.detail;
  }
}

TEST(SimDevice, ADeviceLeftMidCommandIsResetByTheNextOpen) {
  sim::SimConfig cfg;
  cfg.core_clock_hz = sim::synth_clock_mhz() * 1e6;
  auto card = std::make_shared<sim::SimTransport>(cfg);
  farnn::test::SeededRng rng(5);
  LayerShape s;
  s.hidden = 16;
  s.batch = 3;
  s.steps = 6;
  const LayerData d = core_layer(s, rng);
  auto link1 = std::make_unique<SharedLink>(card);
  SharedLink* first = link1.get();
  driver::CoreOptions opt;
  auto dev1 = driver::open_core_device(std::move(link1), opt);
  // The first user queues LOAD and FORWARD, lets the card start, and "crashes".
  const size_t H = s.hidden, S = s.packed_steps();
  BufferPtr w = buffer_of(*dev1, d.w.w_hh, Access::kRead, "w_hh");
  BufferPtr b = buffer_of(*dev1, d.w.b_hh, Access::kRead, "b_hh");
  BufferPtr xp = buffer_of(*dev1, d.xp, Access::kRead, "xp");
  BufferPtr h = dev1->alloc(S * H, Access::kWrite, "h");
  dev1->load(0, s, {w}, {b});
  dev1->forward({s, 0, {xp}, {}, {h}, {}, dev1->alloc_gate_store(s)});
  // The card is mid-command after 2,000 core cycles (the FORWARD alone takes
  // over 4,600), at whatever clock `make synth` estimates: a wait fixed in µs
  // outlasted the whole command once the clock reached 200 MHz.
  const double mid_us = 2000.0 / sim::synth_clock_mhz();
  card->wait_interrupt(0, std::chrono::microseconds(static_cast<long>(mid_us) + 1));
  EXPECT_NE(card->read32(core_regs::kRegStatus) & core_regs::kStatusBusyMask, 0u);
  first->cut();
  // The next user opens the same card: it resets it and runs bit-exact.
  auto dev2 = driver::open_core_device(std::make_unique<SharedLink>(card), opt);
  expect_same(d, run_layer(*dev2, d, 0), "after the first user crashed");
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
      // The engine's watchdog logs a stream, not an address: none is named.
      return dynamic_cast<const TimeoutError*>(&e) && has("ERR_TIMEOUT") && !has(" at 0x0 ");
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
  farnn::test::SeededRng rng(seed);
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
  const LayerData d = core_layer(s, rng);
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
    EXPECT_EQ(sim->stats().stray_write_bytes, 0u) << where << ": a write outside every mapped range";
  }
  EXPECT_GE(hits, kind == FaultKind::kStall ? 5 : kind == FaultKind::kUnmapPage ? 10 : 15) << fault_kind_name(kind) << ": too few injections hit";
}

// A LOAD of bank 1 runs beside the FORWARD on bank 0 queued ahead of it. A
// read error on the LOAD's weights is the LOAD's error (FAULT_DESC names
// it), and the FORWARD it stopped says so; the error once named the FORWARD,
// the ring's head, as the command at fault.
TEST(SimDeviceFaults, AFaultIsNamedOnTheCommandAtFault) {
  farnn::test::SeededRng rng(31);
  sim::SimTransport* sim = nullptr;
  auto dev = sim::open_sim_device(driver::Uri::parse("sim://?seed=31&watchdog_us=100&cto_us=20"), &sim);
  LayerShape s;
  s.hidden = 16;
  s.batch = 2;
  s.steps = 8;
  const LayerData d = core_layer(s, rng);
  const size_t H = s.hidden, S = s.packed_steps(), B = s.batch;
  BufferPtr w = buffer_of(*dev, d.w.w_hh, Access::kRead, "w_hh"), b = buffer_of(*dev, d.w.b_hh, Access::kRead, "b_hh");
  BufferPtr xp = buffer_of(*dev, d.xp, Access::kRead, "xp"), st = buffer_of(*dev, d.state_in, Access::kRead, "state_in");
  BufferPtr h = dev->alloc(S * H, Access::kWrite, "h"), so = dev->alloc(B * H * 2, Access::kWrite, "state_out");
  GateStorePtr store = dev->alloc_gate_store(s);
  int load_faults = 0, stopped = 0;
  for (uint64_t after = 0; after < 400 && (load_faults < 3 || stopped < 1); after += 7) {
    dev->load(0, s, {w}, {b})->wait();
    dev->inject_fault({FaultKind::kReadError, after, 0});
    JobPtr fw = dev->forward({s, 0, {xp}, {st}, {h}, {so}, store});
    JobPtr ld = dev->load(1, s, {w}, {b});
    std::string fw_error, ld_error;
    try {
      ld->wait();
    } catch (const DeviceError& e) {
      ld_error = e.what();
    }
    try {
      fw->wait();
    } catch (const DeviceError& e) {
      fw_error = e.what();
    }
    const std::string where = "read error after " + std::to_string(after) + " beats: ";
    if (ld_error.find("STREAM_WEIGHTS") != std::string::npos && ld_error.find("weight image for bank 1") != std::string::npos) {
      ++load_faults;
      EXPECT_EQ(ld_error.rfind("LOAD LSTM H=16 bank 1: the sim device failed it with ERR_BUS", 0), 0u)
          << where << ld_error;
      if (!fw_error.empty()) {
        ++stopped;
        EXPECT_EQ(fw_error.rfind("FORWARD LSTM H=16 B=2 T=8 bank 0: stopped unfinished by a fault in a later command (LOAD", 0), 0u)
            << where << fw_error;
      }
    }
    // Whichever failed, the FORWARD never carries the LOAD's weight fault as its own.
    if (fw_error.rfind("FORWARD LSTM H=16 B=2 T=8 bank 0: the sim device failed it", 0) == 0) {
      EXPECT_EQ(fw_error.find("STREAM_WEIGHTS"), std::string::npos) << where << fw_error;
    }
    if (!fw_error.empty() || !ld_error.empty()) dev->reset();
    dev->inject_fault({FaultKind::kReadError, ~uint64_t{0} >> 2, 0});  // a point no run reaches: disarmed
  }
  EXPECT_GE(load_faults, 1) << "no injection point hit the LOAD beside the FORWARD";
  EXPECT_GE(stopped, 1) << "no fault on the LOAD stopped the FORWARD ahead of it";
  dev->reset();
  expect_same(d, run_layer(*dev, d, 1), "after the faults");
}

TEST(SimDeviceFaults, CompletionTimeout) { fault_sweep(FaultKind::kCompletionTimeout, 11); }

// A completion timeout on a command's very last read fails that command; the
// next ones run clean and bit-exact (the error does not wait for the next read).
TEST(SimDeviceFaults, CompletionTimeoutOnTheLastReadStaysWithItsCommand) {
  farnn::test::SeededRng rng(21);
  sim::SimTransport* sim = nullptr;
  auto dev =
      sim::open_sim_device(driver::Uri::parse("sim://?seed=21&watchdog_us=100&cto_us=20"), &sim);
  const LayerShape s{CellKind::kLstm, 8, 2, 3, {}};
  const LayerData d = core_layer(s, rng);
  const uint64_t before = sim->stats().read_bytes;
  expect_same(d, run_layer(*dev, d, 0), "clean run");
  const uint64_t reads = (sim->stats().read_bytes - before) / 64;
  ASSERT_GT(reads, 1u);
  dev->inject_fault({FaultKind::kCompletionTimeout, reads - 1, 0});
  try {
    run_layer(*dev, d, 0);
    ADD_FAILURE() << "the run whose last read timed out ended without an error";
  } catch (const DmaError& e) {
    EXPECT_TRUE(sim->fault_hit());
    EXPECT_TRUE(expected_error(FaultKind::kCompletionTimeout, e)) << e.what();
  }
  dev->reset();
  expect_same(d, run_layer(*dev, d, 1), "the first run after the fault");
  expect_same(d, run_layer(*dev, d, 0), "the second run after the fault");
}
TEST(SimDeviceFaults, ReadError) { fault_sweep(FaultKind::kReadError, 12); }
TEST(SimDeviceFaults, WriteError) { fault_sweep(FaultKind::kWriteError, 13); }
TEST(SimDeviceFaults, Stall) { fault_sweep(FaultKind::kStall, 14); }
TEST(SimDeviceFaults, UnmapPage) { fault_sweep(FaultKind::kUnmapPage, 15); }
TEST(SimDeviceFaults, LostDoorbell) { fault_sweep(FaultKind::kLostDoorbell, 16); }
TEST(SimDeviceFaults, LinkDown) { fault_sweep(FaultKind::kLinkDown, 17); }

}  // namespace
