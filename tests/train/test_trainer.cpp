// Trainer: checkpoints carry exactly PyTorch's parameter names, shapes and
// order (compared with a state dict PyTorch wrote), a checkpoint restores the
// same model, the loss falls on both built-in tasks, packed batches do no
// work on padding, a batch above the device's max_batch runs as several
// commands with the same results, bad datasets are refused, device work overlaps compute, and
// the trace of a sim:// run has its DMA lanes.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "farnn/trainer.hpp"

namespace {

using namespace farnn;
using namespace farnn::train;

TrainConfig small_config(CellKind cell, int input, int hidden, int layers, bool bidir) {
  TrainConfig c;
  c.stack = {cell, input, hidden, layers, bidir};
  c.outputs = 1;
  c.batch = 8;
  c.lr = 0.02f;
  return c;
}

TEST(Trainer, CheckpointNamesShapesAndOrderAreTorchs) {
  for (const char* name : {"lstm_2l_bi", "gru_2l_bi", "lstm_2l"}) {
    const io::TensorList torch_state = io::read_safetensors(std::string(FARNN_GRAD_REF) + "/" + name + "/W.safetensors");
    const bool gru = std::string(name).rfind("gru", 0) == 0, bidir = std::string(name).find("bi") != std::string::npos;
    const int64_t hidden = torch_state[1].second.shape[1], input = torch_state[0].second.shape[1];
    auto dev = Device::open("model://");
    auto be = make_cpu_backend(1);
    Trainer t(small_config(gru ? CellKind::kGru : CellKind::kLstm, static_cast<int>(input), static_cast<int>(hidden),
                           2, bidir),
              *dev, *be);
    const io::TensorList ours = t.state();
    ASSERT_EQ(ours.size(), torch_state.size() + 2) << name;
    for (size_t i = 0; i < torch_state.size(); ++i) {
      EXPECT_EQ(ours[i].first, torch_state[i].first) << name;
      EXPECT_EQ(ours[i].second.shape, torch_state[i].second.shape) << name << " " << ours[i].first;
    }
    EXPECT_EQ(ours[torch_state.size()].first, "head.weight");
    EXPECT_EQ(ours[torch_state.size() + 1].first, "head.bias");
  }
}

TEST(Trainer, LossFallsAndACheckpointRestoresTheModel) {
  auto dev = Device::open("model://?pes=4");
  auto be = make_cpu_backend(1);
  const Dataset data = synthetic_task("sine", 20, 32, 5);
  Trainer t(small_config(CellKind::kLstm, 1, 8, 1, false), *dev, *be);
  std::vector<int> all(32);
  for (int i = 0; i < 32; ++i) all[static_cast<size_t>(i)] = i;
  const double before = t.evaluate(data, all);
  for (int epoch = 0; epoch < 10; ++epoch)
    for (int k = 0; k < 4; ++k) t.step(data, std::vector<int>(all.begin() + 8 * k, all.begin() + 8 * (k + 1)));
  const double after = t.evaluate(data, all);
  EXPECT_LT(after, 0.3 * before) << before << " -> " << after;
  Trainer u(small_config(CellKind::kLstm, 1, 8, 1, false), *dev, *be);
  u.load_state(t.state(), "checkpoint");
  EXPECT_EQ(u.evaluate(data, all), after);  // bit for bit: same arithmetic, same order
  io::TensorList broken = t.state();
  broken.back().second.shape = {2};
  broken.back().second.data = {0, 0};
  EXPECT_THROW(u.load_state(broken, "checkpoint"), std::invalid_argument);
}

TEST(Trainer, PackedBatchesSkipPadding) {
  auto dev = Device::open("model://?pes=2");
  auto be = make_cpu_backend(1);
  const Dataset data = synthetic_task("adding", 16, 8, 2);
  Trainer t(small_config(CellKind::kGru, 2, 6, 1, true), *dev, *be);
  std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
  t.step(data, all);
  long packed = 0;
  for (int n : data.lengths) packed += n;
  EXPECT_LT(packed, 16 * 8);  // the task has unequal lengths
  // Two directions, FORWARD and BACKWARD: MACs = 2 * 2 * packed * G*H*H.
  EXPECT_EQ(dev->counters().macs, static_cast<uint64_t>(4 * packed * 3 * 6 * 6));
}

// A batch of 7 on devices that take 4 or 2 slots a command: 2 or 4 FORWARDs
// and BACKWARDs per layer-direction, the same losses, parameters and MACs as
// one command of 7 (a slot's arithmetic does not depend on its neighbours).
TEST(Trainer, BatchesAboveTheDeviceMaximumAreSplit) {
  const Dataset data = synthetic_task("adding", 12, 7, 9);
  const std::vector<int> all = {0, 1, 2, 3, 4, 5, 6};
  std::vector<io::TensorList> states;
  std::vector<double> losses;
  for (const int max_batch : {8, 4, 2}) {
    auto dev = Device::open("model://?pes=3&batch=" + std::to_string(max_batch));
    auto be = make_cpu_backend(1);
    TrainConfig c = small_config(CellKind::kLstm, 2, 5, 2, true);
    c.batch = 7;
    Trainer t(c, *dev, *be);
    const StepStats st = t.step(data, all);
    losses.push_back(st.loss);
    states.push_back(t.state());
    // 2 layers x 2 directions, a command per group.
    const uint64_t commands = static_cast<uint64_t>(4 * ((7 + max_batch - 1) / max_batch));
    EXPECT_EQ(dev->counters().forwards, commands) << max_batch;
    EXPECT_EQ(dev->counters().backwards, commands) << max_batch;
    long packed = 0;
    for (int n : data.lengths) packed += n;
    EXPECT_EQ(dev->counters().macs, static_cast<uint64_t>(8 * packed * 4 * 5 * 5)) << max_batch;
  }
  for (size_t k = 1; k < states.size(); ++k) {
    EXPECT_EQ(losses[k], losses[0]);  // the forward is bit for bit the same
    ASSERT_EQ(states[k].size(), states[0].size());
    // The weight-gradient GEMMs sum over the packed steps, whose order
    // follows the groups: the updated parameters agree to float rounding.
    for (size_t i = 0; i < states[0].size(); ++i) {
      EXPECT_LE(io::max_relative_error(states[k][i].second, states[0][i].second), 1e-6)
          << k << " " << states[0][i].first;
    }
  }
  // sim:// takes 4 slots a command: the trainer's default batch of 8 runs on it.
  auto sim = Device::open("sim://?seed=2");
  auto be = make_cpu_backend(1);
  TrainConfig c = small_config(CellKind::kGru, 2, 4, 1, false);
  Trainer t(c, *sim, *be);
  const Dataset eight = synthetic_task("adding", 5, 8, 4);
  EXPECT_TRUE(std::isfinite(t.step(eight, {0, 1, 2, 3, 4, 5, 6, 7}).loss));
  EXPECT_EQ(sim->counters().forwards, 2u);
}

TEST(Trainer, RefusesBadDatasets) {
  auto dev = Device::open("model://");
  auto be = make_cpu_backend(1);
  Trainer t(small_config(CellKind::kLstm, 2, 4, 1, false), *dev, *be);
  Dataset d = synthetic_task("adding", 8, 4, 1);
  EXPECT_NO_THROW(t.check_dataset(d, "d"));
  Dataset nan = d;
  nan.x.data[3] = std::nanf("");
  EXPECT_THROW(t.check_dataset(nan, "d"), std::invalid_argument);
  Dataset shape = d;
  shape.y.shape = {4, 2};
  shape.y.data.resize(8);
  EXPECT_THROW(t.check_dataset(shape, "d"), std::invalid_argument);
  Dataset len = d;
  len.lengths[0] = 9;
  EXPECT_THROW(t.check_dataset(len, "d"), std::invalid_argument);
  Dataset width = synthetic_task("sine", 8, 4, 1);  // 1 feature, the model takes 2
  EXPECT_THROW(t.check_dataset(width, "d"), std::invalid_argument);
  EXPECT_THROW(synthetic_task("mnist", 8, 4, 1), std::invalid_argument);
}

// A bidirectional layer's reverse-direction input GEMM runs while the device
// runs the forward direction: the trace shows device and compute spans overlapping.
TEST(Trainer, DeviceWorkOverlapsCompute) {
  auto dev = Device::open("model://?pes=4&threads=1");
  auto be = make_cpu_backend(1);
  Trace trace;
  TrainConfig c = small_config(CellKind::kLstm, 64, 64, 2, true);
  Trainer t(c, *dev, *be, &trace);
  const Dataset data = {{{20, 4, 64}, std::vector<float>(20 * 4 * 64, 0.5f)}, {{4, 1}, {1, 2, 3, 4}}, {}};
  t.step(data, {0, 1, 2, 3});
  EXPECT_GT(trace.overlap_us("device", "compute"), 0.0);
  bool fw = false, bw = false;
  for (const Trace::Event& e : trace.events()) {
    fw |= e.lane == "device" && e.name.rfind("FORWARD", 0) == 0;
    bw |= e.lane == "device" && e.name.rfind("BACKWARD", 0) == 0;
  }
  EXPECT_TRUE(fw && bw);
}

// On sim:// the trace has a lane per DMA direction: each FORWARD reads xp
// and writes h, each BACKWARD reads dh and writes delta, inside its span.
TEST(Trainer, SimTraceHasALanePerDmaDirection) {
  auto dev = Device::open("sim://?seed=5");
  auto be = make_cpu_backend(1);
  Trace trace;
  TrainConfig c = small_config(CellKind::kGru, 1, 8, 1, false);
  c.batch = 2;
  Trainer t(c, *dev, *be, &trace);
  t.step(synthetic_task("sine", 6, 2, 3), {0, 1});
  std::map<std::string, Trace::Event> device;
  for (const Trace::Event& e : trace.events()) {
    if (e.lane == "device") device.emplace(e.name, e);
  }
  int fw = 0, bw = 0;
  for (const Trace::Event& e : trace.events()) {
    if (e.lane != kTraceLaneDmaToCard && e.lane != kTraceLaneDmaToHost) continue;
    const std::string what = e.name.substr(0, e.name.find(": "));
    ASSERT_TRUE(device.count(what)) << e.name;
    const Trace::Event& d = device.at(what);
    EXPECT_GE(e.start_us, d.start_us - 1e-3) << e.name;
    EXPECT_LE(e.start_us + e.duration_us, d.start_us + d.duration_us + 1e-3) << e.name;
    fw += what.rfind("FORWARD", 0) == 0;
    bw += what.rfind("BACKWARD", 0) == 0;
  }
  EXPECT_EQ(fw, 2);  // one FORWARD, both directions
  EXPECT_EQ(bw, 2);
}

}  // namespace
