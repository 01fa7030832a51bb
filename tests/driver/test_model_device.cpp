// ModelDevice (model://) through the Device API: results bit-identical to the
// engine model run on the whole batch (random shapes, lengths, banks, thread
// counts; seeds in the test names), every argument check with its error type
// and message, DMA faults, failure/reset, NaN counting, two threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "device_test_util.hpp"
#include "test_seed.hpp"

namespace {

using namespace farnn;
using namespace farnn::devtest;

TEST(ModelDevice, OpensWithOptionsAndReportsCapabilities) {
  auto dev = Device::open("model://?pes=8&hidden=64&batch=3&banks=3&threads=2");
  const Capabilities& c = dev->caps();
  EXPECT_EQ(c.kind, "model");
  EXPECT_EQ(c.num_pe, 8);
  EXPECT_EQ(c.max_hidden, 64);
  EXPECT_EQ(c.max_batch, 3);
  EXPECT_EQ(c.num_banks, 3);
  EXPECT_EQ(c.weight_depth, 32 * 64);  // ceil(4*64/8) rows of 64 words
  EXPECT_EQ(c.max_resident_hidden(CellKind::kLstm), 64);
  EXPECT_EQ(c.clock_mhz, 0);
  auto small = Device::open("model://?pes=4&hidden=64&depth=100");
  // LSTM: ceil(4H/4)*H <= 100 -> H = 10; GRU: ceil(3H/4)*H <= 100 -> H = 11.
  EXPECT_EQ(small->caps().max_resident_hidden(CellKind::kLstm), 10);
  EXPECT_EQ(small->caps().max_resident_hidden(CellKind::kGru), 11);
}

TEST(ModelDevice, RefusesBadUris) {
  expect_error<UnavailableError>([] { Device::open("sim://?pes=8"); }, "this build simulates one farnn_core");
  expect_error<UnavailableError>([] { Device::open("pcie://0000:ff:1f.7"); }, "no PCI device 0000:ff:1f.7");
  expect_error<UnavailableError>([] { Device::open("fpga://x"); }, "unknown device kind 'fpga'");
  expect_error<UnavailableError>([] { Device::open("model"); }, "not a device URI");
  expect_error<UnavailableError>([] { Device::open("model://?pes"); }, "not key=value");
  expect_error<UnavailableError>([] { Device::open("model://?pes=2&pes=4"); }, "given twice");
  // A stray '&' at either end or doubled is refused alike (a trailing one was taken).
  for (const char* u : {"model://?pes=2&", "model://?&pes=2", "model://?pes=2&&hidden=8", "model://?"}) {
    expect_error<UnavailableError>([u] { Device::open(u); }, "an empty option (a stray '&' or '?')");
  }
  // Values are percent-decoded (%34 is '4'); a bad escape is refused.
  EXPECT_EQ(Device::open("model://?pes=%34")->caps().num_pe, 4);
  expect_error<UnavailableError>([] { Device::open("model://?pes=4%2"); }, "'%2' in '4%2' is not a percent escape");
  expect_error<UnavailableError>([] { Device::open("model://?pes=%g4"); }, "'%g4' in '%g4' is not a percent escape");
  expect_error<UnavailableError>([] { Device::open("model://card0"); }, "takes no target");
  expect_error<InvalidArgumentError>([] { Device::open("model://?pes=0"); }, "pes=0 must be an integer from 1 to 65536");
  expect_error<InvalidArgumentError>([] { Device::open("model://?pes=4x"); }, "pes=4x must be an integer from 1");
  // Values beyond the bounds (once cut to 32 bits: 2^32 became 0 PEs, a
  // division by zero) and signs or blanks that stol would have taken.
  expect_error<InvalidArgumentError>([] { Device::open("model://?pes=4294967296"); }, "pes=4294967296 must be");
  expect_error<InvalidArgumentError>([] { Device::open("model://?pes=+4"); }, "pes=+4 must be");
  expect_error<InvalidArgumentError>([] { Device::open("model://?pes= 4"); }, "pes= 4 must be");
  expect_error<InvalidArgumentError>([] { Device::open("model://?chains=4294967296"); }, "chains=4294967296 must be");
  expect_error<InvalidArgumentError>([] { Device::open("model://?banks=1000000000"); }, "from 1 to 64");
  expect_error<InvalidArgumentError>([] { Device::open("model://?hidden=1000000"); }, "from 1 to 8192");
  expect_error<InvalidArgumentError>([] { Device::open("model://?batch=4294967297"); }, "from 1 to 4096");
  expect_error<InvalidArgumentError>([] { Device::open("model://?threads=4294967297"); }, "from 1 to 1024");
  expect_error<InvalidArgumentError>([] { Device::open("model://?records=4294967296"); }, "records=4294967296 must");
  expect_error<InvalidArgumentError>([] { Device::open("model://?card_mib=17592186044416"); }, "card_mib=");
  expect_error<InvalidArgumentError>([] { Device::open("model://?depth=99999999999999999999"); }, "depth=");
  // The bounds themselves open.
  EXPECT_EQ(Device::open("model://?pes=65536&chains=65536&hidden=8192")->caps().num_pe, 65536);
  expect_error<InvalidArgumentError>([] { Device::open("model://?speed=9"); }, "unknown option 'speed'");
  expect_error<InvalidArgumentError>([] { Device::open("model://?pes=4&chains=3"); }, "chains=3 does not divide pes=4");
}

// Random layers, bit for bit against the engine model on the whole batch, in
// one chain or (even PE counts) two: the chains set the backward's order.
TEST(ModelDevice, MatchesEngineModelOnRandomLayers) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    farnn::test::SeededRng rng(seed);
    const int pes = 1 + static_cast<int>(rng() % 7);
    const int chains = pes % 2 == 0 && rng() % 2 ? 2 : 1;
    const int threads = 1 + static_cast<int>(rng() % 3);
    auto dev = Device::open("model://?pes=" + std::to_string(pes) + "&chains=" + std::to_string(chains) +
                            "&hidden=24&batch=5&threads=" + std::to_string(threads));
    EXPECT_EQ(dev->caps().num_chains, chains);
    const LayerShape s = random_shape(rng, 24, 5);
    const LayerData d = make_layer(s, pes, rng, chains);
    const int bank = static_cast<int>(rng() % 2);
    const DeviceRun r = run_layer(*dev, d, bank);
    expect_same(d, r, "seed " + std::to_string(seed) + " " + s.describe() + " pes " + std::to_string(pes));
    // Counters count work done.
    const uint64_t macs = static_cast<uint64_t>(s.packed_steps()) * s.gates() * s.hidden * s.hidden;
    EXPECT_EQ(r.fw.macs, macs);
    EXPECT_EQ(r.bw.macs, macs);
    EXPECT_EQ(r.fw.forwards, 1u);
    EXPECT_EQ(r.bw.backwards, 1u);
    EXPECT_EQ(r.fw.words_read, d.xp.size() + d.state_in.size());
    EXPECT_EQ(r.fw.words_written, d.fw.h.size() + d.fw.state_out.size());
    EXPECT_EQ(r.bw.words_read, d.dh.size() + d.carry.size());
    EXPECT_EQ(r.bw.words_written, d.bw.delta.size() + d.bw.state_out.size());
    const Counters total = dev->counters();
    EXPECT_EQ(total.loads, 1u);
    EXPECT_EQ(total.macs, 2 * macs);
    EXPECT_EQ(total.nonfinite_inputs, 0u);
  }
}

// Two banks hold two layers at once; each command reads its own.
TEST(ModelDevice, TwoBanksHoldTwoLayers) {
  farnn::test::SeededRng rng(77);
  auto dev = Device::open("model://?pes=3&hidden=16&batch=4");
  const LayerData lstm = make_layer({CellKind::kLstm, 9, 2, 5, {5, 3}}, 3, rng);
  const LayerData gru = make_layer({CellKind::kGru, 12, 3, 4, {}}, 3, rng);
  const DeviceRun a = run_layer(*dev, lstm, 0);
  const DeviceRun b = run_layer(*dev, gru, 1);
  expect_same(lstm, a, "bank 0");
  expect_same(gru, b, "bank 1");
}

// A LOAD holds weights, named and checked by cell and hidden alone: the
// batch, steps and lengths of its shape are not used (a trainer loads with a
// placeholder), not even when the device could not run them, and the
// FORWARD with the real shape runs bit-exact on what it loaded.
TEST(ModelDevice, LoadTakesCellAndHiddenAlone) {
  farnn::test::SeededRng rng(78);
  auto dev = Device::open("model://?pes=3&hidden=16&batch=4");
  const LayerData d = make_layer({CellKind::kLstm, 9, 2, 5, {5, 3}}, 3, rng);
  const LayerShape& s = d.shape;
  BufferPtr w = buffer_of(*dev, d.w.w_hh, Access::kRead, "w_hh"), b = buffer_of(*dev, d.w.b_hh, Access::kRead, "b_hh");
  dev->load(1, {CellKind::kLstm, 9, 4096, 0, {7, 0, 9}}, {w}, {b})->wait();
  expect_error<CapacityError>([&] { dev->load(0, {CellKind::kLstm, 17, 1, 1, {}}, {w}, {b}); },
                              "LOAD LSTM H=17 bank 0: hidden 17 is above the device's maximum 16");
  BufferPtr xp = buffer_of(*dev, d.xp, Access::kRead, "xp"), st = buffer_of(*dev, d.state_in, Access::kRead, "state_in");
  BufferPtr h = dev->alloc(s.packed_steps() * 9, Access::kWrite, "h"), so = dev->alloc(2 * 9 * 2, Access::kWrite, "so");
  dev->forward({s, 1, {xp}, {st}, {h}, {so}, dev->alloc_gate_store(s)})->wait();
  EXPECT_EQ(words_of(h, 0, s.packed_steps() * 9), d.fw.h);
  EXPECT_EQ(words_of(so, 0, 2 * 9 * 2), d.fw.state_out);
}

// NaN and Inf propagate as IEEE arithmetic does, are counted, and are no error.
TEST(ModelDevice, CountsNonFiniteData) {
  farnn::test::SeededRng rng(5);
  auto dev = Device::open("model://?pes=2&hidden=8");
  LayerShape s{CellKind::kLstm, 4, 1, 3, {}};
  LayerData d = make_layer(s, 2, rng);
  d.xp[5] = 0x7fc00000u;   // NaN
  d.xp[20] = 0x7f800000u;  // +Inf
  const engine::Config cfg = engine_config(s, 2);
  d.fw = engine::forward(cfg, d.w, d.xp, d.state_in);
  d.bw = engine::backward(cfg, d.w, d.fw.records, d.dh, d.carry);
  const DeviceRun r = run_layer(*dev, d, 0);
  expect_same(d, r, "nan");
  EXPECT_EQ(r.fw.nonfinite_inputs, 2u);
  uint64_t bad_out = 0;
  for (const Words* w : {&d.fw.h, &d.fw.state_out}) {
    for (uint32_t x : *w) bad_out += (x & 0x7f800000u) == 0x7f800000u;
  }
  EXPECT_GT(bad_out, 0u);
  EXPECT_EQ(r.fw.nonfinite_outputs, bad_out);
}

class ModelDeviceArgs : public ::testing::Test {
 protected:
  void SetUp() override {
    dev = Device::open("model://?pes=4&hidden=16&batch=2&card_mib=1");
    shape = {CellKind::kLstm, 8, 2, 4, {}};
    w = dev->alloc(4 * 8 * 8 + 4 * 8, Access::kRead, "w");
    xp = dev->alloc(8 * 8 * 4, Access::kRead, "xp");
    h = dev->alloc(8 * 8, Access::kWrite, "h");
    dh = dev->alloc(8 * 8, Access::kRead, "dh");
    delta = dev->alloc(8 * 8 * 4, Access::kWrite, "delta");
    store = dev->alloc_gate_store(shape);
  }
  JobPtr load(int bank = 0) { return dev->load(bank, shape, {w}, {w, 4 * 8 * 8}); }
  ForwardArgs fw() { return {shape, 0, {xp}, {}, {h}, {}, store}; }
  BackwardArgs bw() { return {shape, 0, store, {dh}, {}, {delta}, {}}; }

  std::unique_ptr<Device> dev;
  LayerShape shape;
  BufferPtr w, xp, h, dh, delta;
  GateStorePtr store;
};

TEST_F(ModelDeviceArgs, RefusesShapesOutsideCapacity) {
  LayerShape big = shape;
  big.hidden = 17;
  expect_error<CapacityError>([&] { dev->load(0, big, {w}, {w}); }, "hidden 17 is above the device's maximum 16");
  big = shape;
  big.batch = 3;
  expect_error<CapacityError>([&] { dev->alloc_gate_store(big); }, "batch 3 is above the device's maximum 2");
  big = shape;
  big.hidden = 0;
  expect_error<InvalidArgumentError>([&] { dev->forward({big, 0, {xp}, {}, {h}, {}, store}); },
                                     "must be >= 1");
  big = shape;
  big.lengths = {4, 5};
  expect_error<InvalidArgumentError>([&] { dev->alloc_gate_store(big); }, "length 5 of sequence 1 is outside 1..4");
  big.lengths = {4};
  expect_error<InvalidArgumentError>([&] { dev->alloc_gate_store(big); }, "1 lengths for a batch of 2");
  auto tight = Device::open("model://?pes=4&hidden=64&depth=100");
  BufferPtr tw = tight->alloc(4 * 11 * 11 + 44, Access::kRead, "w");
  expect_error<CapacityError>([&] { tight->load(0, {CellKind::kLstm, 11, 1, 1, {}}, {tw}, {tw, 4 * 11 * 11}); },
                              "largest resident lstm hidden size is 10");
  expect_error<InvalidArgumentError>([&] { dev->load(2, shape, {w}, {w}); }, "bank 2 does not exist");
}

// Sizes past 64 GiB (once wrapped in the byte count, or a bare bad_alloc)
// and pointers off a float boundary are refused by name, on the model and
// on the Verilated core alike.
TEST(ModelDevice, RefusesAbsurdBuffersAsTheCoreDoes) {
  for (const char* uri : {"model://", "sim://"}) {
    SCOPED_TRACE(uri);
    auto dev = Device::open(uri);
    expect_error<CapacityError>([&] { dev->alloc(SIZE_MAX / 4 + 2, Access::kRead, "huge"); },
                                "alloc 'huge': 4611686018427387905 words is more than a buffer may hold");
    expect_error<CapacityError>([&] { dev->alloc(size_t{1} << 40, Access::kRead, "big"); }, "alloc 'big'");
    alignas(8) float mem[8] = {};
    float* off = reinterpret_cast<float*>(reinterpret_cast<char*>(mem) + 1);
    expect_error<BufferError>([&] { dev->register_memory(off, 4, Access::kRead, "odd"); },
                              "register_memory 'odd': the pointer is not aligned to a float");
  }
}

TEST_F(ModelDeviceArgs, RefusesBadBuffers) {
  load()->wait();
  auto other = Device::open("model://");
  BufferPtr foreign = other->alloc(8 * 8 * 4, Access::kRead, "elsewhere");
  ForwardArgs a = fw();
  a.xp = {foreign};
  expect_error<BufferError>([&] { dev->forward(a); }, "xp buffer 'elsewhere' is not registered with this device");
  a = fw();
  a.xp = {xp, 1};
  expect_error<BufferError>([&] { dev->forward(a); }, "xp needs 256 words from offset 1, buffer 'xp' has 256");
  a = fw();
  a.h = {xp};
  expect_error<BufferError>([&] { dev->forward(a); }, "h buffer 'xp' is registered read-only");
  a = fw();
  a.xp = {};
  expect_error<BufferError>([&] { dev->forward(a); }, "xp buffer is missing");
  BufferPtr rw = dev->alloc(1000, Access::kReadWrite, "shared");
  a = fw();
  a.xp = {rw, 0};
  a.h = {rw, 200};
  expect_error<BufferError>([&] { dev->forward(a); }, "xp and h overlap in buffer 'shared'");
  a.h = {rw, 256};  // adjacent, not overlapping
  EXPECT_NO_THROW(dev->forward(a)->wait());
  // BACKWARD's delta starts on a 16-byte bus address (a unit's 4 words a beat).
  BackwardArgs b = bw();
  BufferPtr wide = dev->alloc(8 * 8 * 4 + 4, Access::kWrite, "wide");
  b.delta = {wide, 2};
  expect_error<BufferError>([&] { dev->backward(b); },
                            "delta in 'wide' at word 2 does not start on a 16-byte bus address");
  dev->unregister(xp);
  expect_error<BufferError>([&] { dev->forward(fw()); }, "xp buffer 'xp' is not registered");
  expect_error<BufferError>([&] { dev->unregister(xp); }, "is not registered with this device");
  float host[4] = {};
  expect_error<BufferError>([&] { dev->register_memory(nullptr, 4, Access::kRead, "null"); }, "null pointer");
  BufferPtr reg = dev->register_memory(host, 4, Access::kRead, "host");
  EXPECT_EQ(reg->data(), host);
  EXPECT_EQ(reg->bus_address() % 4096, 0u);
}

TEST_F(ModelDeviceArgs, ChecksBanksAndGateStores) {
  expect_error<InvalidArgumentError>([&] { dev->forward(fw()); }, "bank 0 holds no weights; LOAD it first");
  load()->wait();
  expect_error<InvalidArgumentError>([&] { dev->backward(bw()); }, "the gate store holds no FORWARD");
  LayerShape gru = shape;
  gru.cell = CellKind::kGru;
  expect_error<InvalidArgumentError>([&] { dev->forward({gru, 0, {xp}, {}, {h}, {}, store}); },
                                     "bank 0 holds LSTM H=8 weights, the command is GRU H=8");
  dev->forward(fw())->wait();
  LayerShape shorter = shape;
  shorter.lengths = {4, 2};
  expect_error<InvalidArgumentError>([&] { dev->backward({shorter, 0, store, {dh}, {}, {delta}, {}}); },
                                     "the gate store holds the FORWARD of LSTM H=8 B=2 T=4");
  LayerShape longer = shape;
  longer.steps = 5;
  BufferPtr xp5 = dev->alloc(10 * 8 * 4, Access::kRead, "xp5");
  BufferPtr h5 = dev->alloc(10 * 8, Access::kWrite, "h5");
  expect_error<BufferError>([&] { dev->forward({longer, 0, {xp5}, {}, {h5}, {}, store}); },
                            "needs 80 gate-store records, the store holds 64");
  expect_error<BufferError>([&] { dev->forward({shape, 0, {xp}, {}, {h}, {}, nullptr}); }, "gate store is missing");
  // Card memory: 1 MiB holds 1 MiB / (32 bytes per record); a larger store is refused.
  expect_error<CapacityError>([&] { dev->alloc_gate_store({CellKind::kLstm, 16, 2, 4096, {}}); },
                              "bytes of card memory");
  {
    GateStorePtr half = dev->alloc_gate_store({CellKind::kLstm, 16, 2, 1000, {}});  // 1,024,000 bytes
    expect_error<CapacityError>([&] { dev->alloc_gate_store({CellKind::kLstm, 16, 1, 100, {}}); }, "are free");
  }
  EXPECT_NO_THROW(dev->alloc_gate_store({CellKind::kLstm, 16, 1, 100, {}}));  // released with `half`
  EXPECT_NO_THROW(dev->backward(bw())->wait());
}

// Queues four FORWARDs on `bank` behind a gate: the first waits for step
// doorbell kHold, so all four stay queued however fast the model computes
// until release() rings it.
constexpr int kHold = 3;
std::vector<JobPtr> occupy(Device& dev, int bank, BufferPtr& keep_w, std::vector<BufferPtr>& keep) {
  const LayerShape s{CellKind::kLstm, 128, 1, 20, {}};
  keep_w = dev.alloc(4 * 128 * 129, Access::kRead, "busy_w");
  dev.load(bank, s, {keep_w}, {keep_w, 4 * 128 * 128});
  dev.ring_step_doorbell(kHold, 0);
  std::vector<JobPtr> jobs;
  for (int i = 0; i < 4; ++i) {
    keep.push_back(dev.alloc(20 * 128 * 4, Access::kRead, "busy_xp"));
    keep.push_back(dev.alloc(20 * 128, Access::kWrite, "busy_h"));
    StepSync gate;
    if (i == 0) gate.doorbell = kHold;
    jobs.push_back(dev.forward({s, bank, {keep[keep.size() - 2]}, {}, {keep.back()}, {}, dev.alloc_gate_store(s), 0,
                                gate}));
  }
  return jobs;
}
void release(Device& dev) { dev.ring_step_doorbell(kHold, 20); }

TEST(ModelDeviceQueue, RefusesLoadIntoABankInUse) {
  auto dev = Device::open("model://?pes=4&hidden=128&threads=1");
  BufferPtr w;
  std::vector<BufferPtr> keep;
  auto jobs = occupy(*dev, 0, w, keep);
  expect_error<BankBusyError>([&] { dev->load(0, {CellKind::kLstm, 128, 1, 1, {}}, {w}, {w, 4 * 128 * 128}); },
                              "bank 0 is still in use by 4 queued or running command(s)");
  JobPtr other = dev->load(1, {CellKind::kLstm, 128, 1, 1, {}}, {w}, {w, 4 * 128 * 128});  // the other bank
  expect_error<TimeoutError>([&] { jobs.back()->wait(std::chrono::milliseconds(0)); }, "not finished after 0 ms");
  release(*dev);
  dev->drain();
  EXPECT_NO_THROW(other->wait());
  EXPECT_NO_THROW(dev->load(0, {CellKind::kLstm, 128, 1, 1, {}}, {w}, {w, 4 * 128 * 128})->wait());
}

// A buffer unregistered while its command waits is a DMA fault: the command
// fails naming it, later commands do not run, reset() recovers, and the next
// layer is bit-exact.
TEST(ModelDeviceQueue, FaultStopsTheQueueUntilReset) {
  auto dev = Device::open("model://?pes=4&hidden=128&threads=1");
  BufferPtr w;
  std::vector<BufferPtr> keep;
  occupy(*dev, 0, w, keep);
  farnn::test::SeededRng rng(9);
  const LayerShape s{CellKind::kGru, 6, 2, 3, {3, 2}};
  const LayerData d = make_layer(s, 4, rng);
  BufferPtr w1 = dev->alloc(3 * 36 + 18, Access::kRead, "w1");
  std::memcpy(w1->data(), d.w.w_hh.data(), 4 * 108);
  std::memcpy(w1->data() + 108, d.w.b_hh.data(), 4 * 18);
  JobPtr l = dev->load(1, s, {w1}, {w1, 108});
  BufferPtr xp = buffer_of(*dev, d.xp, Access::kRead, "doomed_xp");
  BufferPtr h = dev->alloc(5 * 6, Access::kWrite, "h");
  JobPtr f = dev->forward({s, 1, {xp}, {}, {h}, {}, dev->alloc_gate_store(s)});
  JobPtr f2 = dev->forward({s, 1, {buffer_of(*dev, d.xp, Access::kRead, "xp2")}, {}, {h}, {}, dev->alloc_gate_store(s)});
  dev->unregister(xp);
  release(*dev);
  EXPECT_NO_THROW(l->wait());
  expect_error<CommandError>([&] { f->wait(); }, "DMA fault: buffer 'doomed_xp' was unregistered");
  expect_error<NotRunError>([&] { f2->wait(); }, "not run, an earlier command failed");
  EXPECT_EQ(dev->counters().failed, 2u);
  expect_error<NotRunError>([&] { dev->forward({s, 1, {buffer_of(*dev, d.xp, Access::kRead, "xp3")}, {}, {h}, {},
                                                dev->alloc_gate_store(s)})->wait(); },
                            "call reset()");
  dev->reset();
  expect_error<InvalidArgumentError>([&] { dev->forward({s, 1, {buffer_of(*dev, d.xp, Access::kRead, "x")}, {}, {h},
                                                         {}, dev->alloc_gate_store(s)}); },
                                     "holds no weights");  // reset clears the banks
  const DeviceRun r = run_layer(*dev, d, 1);
  expect_same(d, r, "after reset");
}

// Two host threads share one device: submissions serialize, every result is right.
TEST(ModelDeviceQueue, TwoThreadsShareADevice) {
  auto dev = Device::open("model://?pes=2&hidden=16&batch=3&banks=2");
  std::vector<LayerData> layers(2);
  std::vector<std::vector<DeviceRun>> runs(2);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    farnn::test::SeededRng rng(100 + i);
    layers[i] = make_layer({i ? CellKind::kGru : CellKind::kLstm, 7 + i, 3, 5, {5, 2, 4}}, 2, rng);
  }
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 5; ++k) runs[i].push_back(run_layer(*dev, layers[i], i));
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 2; ++i)
    for (const DeviceRun& r : runs[i]) expect_same(layers[i], r, "thread " + std::to_string(i));
  EXPECT_EQ(dev->counters().forwards, 10u);
}

// The model keeps FORWARD records as the core does (8 by default;
// model://?records=N), so a BACKWARD that a core would refuse fails here too.
TEST(ModelDevice, KeepsTheNewestForwardRecordsAsTheCore) {
  EXPECT_EQ(Device::open("model://")->caps().forward_records, engine::kForwardRecords);
  for (const char* uri : {"model://?pes=4", "model://?pes=4&records=3"}) {
    SCOPED_TRACE(uri);
    auto dev = Device::open(uri);
    farnn::test::SeededRng rng(12);
    check_forward_records(*dev, rng);
  }
}

// The model streams like the core: a gated FORWARD runs the steps whose
// input is ready and stops there, with their h rows written and its progress
// word counting them; a doorbell gates BACKWARD the same way, whose progress
// (every 3 steps here) comes every 3 steps and after the last. The results are
// those of the ungated command.
TEST(ModelDevice, StepSyncStreamsStepByStep) {
  auto dev = Device::open("model://?pes=4");
  farnn::test::SeededRng rng(8);
  LayerShape s;
  s.hidden = 5;
  s.batch = 2;
  s.steps = 4;
  s.lengths = {4, 2};
  const LayerData d = make_layer(s, 4, rng);
  const size_t H = s.hidden, S = s.packed_steps(), B = s.batch, W = state_words(s.cell);
  BufferPtr w = buffer_of(*dev, d.w.w_hh, Access::kRead, "w_hh"), b = buffer_of(*dev, d.w.b_hh, Access::kRead, "b");
  dev->load(0, s, {w}, {b})->wait();
  BufferPtr xp = buffer_of(*dev, d.xp, Access::kRead, "xp"), st = buffer_of(*dev, d.state_in, Access::kRead, "st");
  BufferPtr h = dev->alloc(S * H, Access::kWrite, "h"), so = dev->alloc(B * H * W, Access::kWrite, "so");
  BufferPtr sync = dev->alloc(2, Access::kReadWrite, "sync");
  auto word = [&](size_t i) -> std::atomic_ref<uint32_t> {
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(sync->data() + i));
  };
  // Packed rows before time t: steps 0 and 1 hold 2 rows each, 2 and 3 one.
  const auto rows_before = [&](int t) { return static_cast<size_t>(s.packed_index(t, 0)); };
  word(0).store(0);
  word(1).store(0xffffffffu);
  GateStorePtr store = dev->alloc_gate_store(s);
  JobPtr fw = dev->forward({s, 0, {xp}, {st}, {h}, {so}, store, 0, {{sync, 0}, -1, {sync, 1}, 1}});
  EXPECT_THROW(fw->wait(std::chrono::milliseconds(50)), TimeoutError) << "ran with no step ready";
  EXPECT_EQ(word(1).load(), 0xffffffffu) << "a step ran before its input was ready";
  word(1).store(0);
  word(0).store(3);
  EXPECT_EQ(fw->wait_progress({sync, 1}, 3), 3u);
  EXPECT_THROW(fw->wait(std::chrono::milliseconds(50)), TimeoutError) << "ran with 3 of 4 steps ready";
  EXPECT_EQ(word(1).load(), 3u);
  const std::vector<uint32_t> first3 = words_of(h, 0, rows_before(3) * H);
  EXPECT_EQ(first3, std::vector<uint32_t>(d.fw.h.begin(),
                                          d.fw.h.begin() + static_cast<long>(rows_before(3) * H)))
      << "the finished steps' h is not in host memory";
  word(0).store(4);
  EXPECT_EQ(fw->wait().delta.words_read, d.xp.size() + d.state_in.size()) << "every word read once";
  EXPECT_EQ(word(1).load(), 4u);
  EXPECT_EQ(words_of(h, 0, S * H), d.fw.h);
  EXPECT_EQ(words_of(so, 0, B * H * W), d.fw.state_out);
  BufferPtr dh = buffer_of(*dev, d.dh, Access::kRead, "dh"), c = buffer_of(*dev, d.carry, Access::kRead, "c");
  BufferPtr delta = dev->alloc(S * H * kDeltaWords, Access::kWrite, "delta");
  word(1).store(0);
  dev->ring_step_doorbell(2, 0);
  JobPtr bw = dev->backward({s, 0, store, {dh}, {c}, {delta}, {}, 0, {{}, 2, {sync, 1}, 3}});
  EXPECT_THROW(bw->wait(std::chrono::milliseconds(50)), TimeoutError);
  dev->ring_step_doorbell(2, 2);
  EXPECT_THROW(bw->wait_progress({sync, 1}, 1, std::chrono::milliseconds(50)), TimeoutError)
      << "progress before the third step";
  dev->ring_step_doorbell(2, 3);
  EXPECT_EQ(bw->wait_progress({sync, 1}, 3), 3u);
  // Times 3, 2, 1 are done: every delta row from time 1 on (packed rows 2..).
  const size_t from = rows_before(1) * H * kDeltaWords;
  EXPECT_EQ(words_of(delta, from, S * H * kDeltaWords - from),
            std::vector<uint32_t>(d.bw.delta.begin() + static_cast<long>(from), d.bw.delta.end()));
  EXPECT_THROW(bw->wait(std::chrono::milliseconds(50)), TimeoutError);
  dev->ring_step_doorbell(2, 4);
  EXPECT_EQ(bw->wait().delta.words_read, d.dh.size() + d.carry.size());
  EXPECT_EQ(word(1).load(), 4u) << "progress after the last step";
  EXPECT_EQ(words_of(delta, 0, S * H * kDeltaWords), d.bw.delta);
}

}  // namespace
