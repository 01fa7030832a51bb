// Trainer: checkpoints carry exactly PyTorch's parameter names, shapes and
// order (compared with a state dict PyTorch wrote), a checkpoint restores the
// same model, the loss falls on both built-in tasks, packed batches do no
// work on padding, a batch above the device's max_batch runs as several
// commands with the same results, bad datasets are refused, device work overlaps compute, and
// the trace of a sim:// run has its DMA lanes.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "backends_under_test.hpp"
#include "farnn/trainer.hpp"

namespace {

using namespace farnn;
using namespace farnn::train;

TrainConfig small_config(CellKind cell, int input, int hidden, int layers, bool bidir) {
  TrainConfig c;
  c.stack.cell = cell;
  c.stack.input = input;
  c.stack.hidden = hidden;
  c.stack.layers = layers;
  c.stack.bidirectional = bidir;
  c.outputs = 1;
  c.batch = 8;
  c.lr = 0.02f;
  return c;
}

TEST(Trainer, CheckpointNamesShapesAndOrderAreTorchs) {
  for (const char* name : {"lstm_2l_bi", "gru_2l_bi", "lstm_2l"}) {
    const io::TensorList torch_state =
        io::read_safetensors(farnn::test::reference_dir("FARNN_GRAD_REF", FARNN_GRAD_REF) + "/" +
                             name + "/W.safetensors");
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
    // (64 records: 16 FORWARDs a step run none again, so the counts are the split's.)
    auto dev = Device::open("model://?pes=3&records=64&batch=" + std::to_string(max_batch));
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

// Runs `f`, which must throw std::invalid_argument whose message holds `phrase`.
template <class F>
void expect_invalid(F f, const std::string& phrase) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one with: " << phrase;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
  }
}

TEST(Trainer, RefusesBadDatasets) {
  auto dev = Device::open("model://");
  auto be = make_cpu_backend(1);
  Trainer t(small_config(CellKind::kLstm, 2, 4, 1, false), *dev, *be);
  Dataset d = synthetic_task("adding", 8, 4, 1);
  EXPECT_NO_THROW(t.check_dataset(d, "d"));
  Dataset nan = d;
  nan.x.data[3] = std::nanf("");  // x is (8, 4, 2): flat 3 is (0, 1, 1)
  expect_invalid([&] { t.check_dataset(nan, "d"); }, "d: inputs hold a non-finite value (nan) at (0, 1, 1)");
  Dataset shape = d;
  shape.y.shape = {4, 2};
  shape.y.data.resize(8);
  EXPECT_THROW(t.check_dataset(shape, "d"), std::invalid_argument);
  Dataset len = d;
  len.lengths[0] = 9;
  EXPECT_THROW(t.check_dataset(len, "d"), std::invalid_argument);
  Dataset width = synthetic_task("sine", 8, 4, 1);  // 1 feature, the model takes 2
  EXPECT_THROW(t.check_dataset(width, "d"), std::invalid_argument);
  // Per-step targets past a sequence's length are padding the loss never
  // reads: anything goes there (PyTorch pads labels with -100); inside, a
  // bad value is named by its position. Inputs are checked everywhere.
  Trainer one(small_config(CellKind::kLstm, 1, 4, 1, false), *dev, *be);
  Dataset pad = synthetic_task("sine", 8, 4, 1);  // y is (8, 4, 1)
  pad.lengths = {8, 3, 8, 8};
  pad.y.data[(5 * 4 + 1) * 1] = std::nanf("");  // step 5 of sequence 1: padding
  EXPECT_NO_THROW(one.check_dataset(pad, "p"));
  pad.y.data[(2 * 4 + 1) * 1] = std::nanf("");  // step 2 of sequence 1: read
  expect_invalid([&] { one.check_dataset(pad, "p"); }, "p: targets hold a non-finite value (nan) at (2, 1, 0)");
  Dataset pad_x = synthetic_task("sine", 8, 4, 1);
  pad_x.lengths = {8, 3, 8, 8};
  pad_x.x.data[5 * 4 + 1] = std::nanf("");  // padding, but it enters the input GEMM
  expect_invalid([&] { one.check_dataset(pad_x, "p"); }, "p: inputs hold a non-finite value (nan) at (5, 1, 0)");
  EXPECT_THROW(synthetic_task("mnist", 8, 4, 1), std::invalid_argument);
}

// The order of what the host does, one log for the device and the backend:
// "submit FORWARD 0" (the k-th FORWARD), "wait FORWARD 0" (its first wait),
// "gemm ta tb m n k". The host runs on one thread, so the log's order does
// not depend on how fast the device is: it shows which compute the host
// issues while a device command is outstanding.
struct HostLog {
  std::vector<std::string> lines;
  std::function<void()> on_gemm;  // called before each GEMM runs
  size_t find(const std::string& line, int nth = 0) const {
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i] == line && nth-- == 0) return i;
    ADD_FAILURE() << "'" << line << "' not in the log";
    return lines.size();
  }
  // Lines from `from` on that start with `head` and end with `tail`.
  std::vector<size_t> matching(size_t from, const std::string& head,
                               const std::string& tail) const {
    std::vector<size_t> at;
    for (size_t i = from; i < lines.size(); ++i)
      if (lines[i].starts_with(head) && lines[i].ends_with(tail)) at.push_back(i);
    return at;
  }
};

class LoggedJob : public Job {
 public:
  LoggedJob(JobPtr job, HostLog& log, std::string what)
      : job_(std::move(job)), log_(log), what_(std::move(what)) {}
  bool done() const override { return job_->done(); }
  JobReport wait(std::chrono::milliseconds limit) override {
    if (!waited_) log_.lines.push_back("wait " + what_);
    waited_ = true;
    return job_->wait(limit);
  }
  uint32_t wait_progress(const BufferRef& progress, uint32_t steps,
                         std::chrono::milliseconds limit) override {
    log_.lines.push_back("progress " + what_ + " " + std::to_string(steps));
    return job_->wait_progress(progress, steps, limit);
  }

 private:
  JobPtr job_;
  HostLog& log_;
  std::string what_;
  bool waited_ = false;
};

class LoggedDevice : public Device {
 public:
  LoggedDevice(Device& dev, HostLog& log) : dev_(dev), log_(log) {}
  const Capabilities& caps() const override { return dev_.caps(); }
  BufferPtr alloc(size_t words, Access access, const std::string& name) override {
    return dev_.alloc(words, access, name);
  }
  BufferPtr register_memory(float* ptr, size_t words, Access access,
                            const std::string& name) override {
    return dev_.register_memory(ptr, words, access, name);
  }
  void unregister(const BufferPtr& buffer) override { dev_.unregister(buffer); }
  GateStorePtr alloc_gate_store(const LayerShape& shape) override {
    return dev_.alloc_gate_store(shape);
  }
  JobPtr load(int bank, const LayerShape& shape, BufferRef w_hh, BufferRef b_hh) override {
    return logged(dev_.load(bank, shape, w_hh, b_hh), "LOAD", loads_);
  }
  JobPtr forward(const ForwardArgs& args) override {
    gates_.push_back(args.sync.ready);
    progress_.push_back(args.sync.progress);
    steps_["FORWARD " + std::to_string(forwards_)] = args.shape.steps;
    return logged(dev_.forward(args), "FORWARD", forwards_);
  }
  // The steps a logged command ("FORWARD 3") runs: its shape's.
  int steps(const std::string& command) const { return steps_.at(command); }
  // The ready-steps word of the k-th FORWARD as the device would read it now.
  std::optional<uint32_t> gate(size_t k) const { return word(gates_, k); }
  // The k-th FORWARD's progress word (the steps it has done) as it reads now.
  std::optional<uint32_t> progress(size_t k) const { return word(progress_, k); }
  JobPtr backward(const BackwardArgs& args) override {
    backward_progress_.push_back(args.sync.progress);
    steps_["BACKWARD " + std::to_string(backwards_)] = args.shape.steps;
    return logged(dev_.backward(args), "BACKWARD", backwards_);
  }
  // The k-th BACKWARD's progress word as it reads now.
  std::optional<uint32_t> backward_progress(size_t k) const { return word(backward_progress_, k); }
  void ring_step_doorbell(int index, uint32_t count) override {
    dev_.ring_step_doorbell(index, count);
  }
  void drain(std::chrono::milliseconds limit) override { dev_.drain(limit); }
  Counters counters() const override { return dev_.counters(); }
  void reset() override { dev_.reset(); }

 private:
  JobPtr logged(JobPtr job, const char* op, int& count) {
    const std::string what = std::string(op) + " " + std::to_string(count++);
    log_.lines.push_back("submit " + what);
    return std::make_shared<LoggedJob>(std::move(job), log_, what);
  }
  static std::optional<uint32_t> word(const std::vector<BufferRef>& refs, size_t k) {
    if (k >= refs.size() || !refs[k]) return std::nullopt;
    return refs[k].load_word();
  }
  Device& dev_;
  HostLog& log_;
  int loads_ = 0, forwards_ = 0, backwards_ = 0;
  std::vector<BufferRef> gates_, progress_, backward_progress_;
  std::map<std::string, int> steps_;
};

// The log line of a GEMM call: "gemm ta tb m n k".
std::string gemm_line(bool ta, bool tb, int m, int n, int k) {
  return "gemm " + std::to_string(ta) + " " + std::to_string(tb) + " " + std::to_string(m) + " " +
         std::to_string(n) + " " + std::to_string(k);
}

class LoggedBackend : public farnn::test::ForwardingBackend {
 public:
  LoggedBackend(Backend& be, HostLog& log) : ForwardingBackend(be), log_(log) {}

 protected:
  void on_gemm(bool ta, bool tb, int m, int n, int k) override {
    log_.lines.push_back(gemm_line(ta, tb, m, n, k));
    if (log_.on_gemm) log_.on_gemm();
  }

 private:
  HostLog& log_;
};

// A device opened from `uri` and a one-thread CPU backend, both logging into `log`.
struct LoggedRun {
  explicit LoggedRun(const std::string& uri)
      : real(Device::open(uri)), cpu(make_cpu_backend(1)), dev(*real, log), be(*cpu, log) {}
  std::unique_ptr<Device> real;
  std::unique_ptr<Backend> cpu;
  HostLog log;
  LoggedDevice dev;
  LoggedBackend be;
};

// Both overlaps of the schedule, each on its own. Forward: a bidirectional
// layer's reverse-direction input GEMM is issued after the forward
// direction's FORWARD is submitted and before the host waits for it.
// Backward: layer 1's weight-gradient GEMMs are issued while layer 0's
// BACKWARD is outstanding (submitted, not yet waited for). With I = 3 and
// H = 4 every GEMM shape names its layer. The device (an asynchronous
// model://) then runs the command while the host computes; the trace shows
// its FORWARD and BACKWARD spans.
TEST(Trainer, DeviceWorkOverlapsCompute) {
  LoggedRun run("model://?pes=4&threads=1");
  const HostLog& log = run.log;
  Trace trace;
  const int I = 3, H = 4, T = 5, B = 2, S = T * B;
  Trainer t(small_config(CellKind::kLstm, I, H, 2, true), run.dev, run.be, &trace);
  const Dataset data = {{{T, B, I}, std::vector<float>(T * B * I, 0.5f)}, {{B, 1}, {1, 2}}, {}};
  t.step(data, {0, 1});
  // Forward: layer 0's reverse direction (FORWARD 1) computes its input GEMM
  // (in chunks of rows x 4H x I) while FORWARD 0 is outstanding.
  const std::vector<size_t> reverse_input =
      log.matching(log.find("submit FORWARD 1"), "gemm 0 1 ", " 16 3");
  ASSERT_FALSE(reverse_input.empty());
  EXPECT_LT(log.find("submit FORWARD 0"), reverse_input.front());
  EXPECT_LT(reverse_input.front(), log.find("wait FORWARD 0"));
  // Backward: BACKWARD 0, 1 are layer 1's (forward, reverse: the opposite
  // of its forward order), 2, 3 layer 0's (reverse, forward). Layer 0's
  // first is queued, gated, before layer 1's last is waited for, and its dh
  // follows that one's progress; layer 1's W_ih gradient GEMM (4H x 2H over
  // the S packed steps) runs once both of layer 0's are queued, before the
  // wait for them.
  const size_t grad_l1 = log.find(gemm_line(true, false, 4 * H, 2 * H, S));
  EXPECT_LT(log.find("submit BACKWARD 2"), log.find("wait BACKWARD 1"));
  EXPECT_LT(log.find("progress BACKWARD 1 " + std::to_string(T)), log.find("wait BACKWARD 1"));
  EXPECT_LT(log.find("submit BACKWARD 3"), grad_l1);
  EXPECT_LT(grad_l1, log.find("wait BACKWARD 2"));
  // Layer 0's own gradient GEMMs come after its BACKWARDs: nothing is left to overlap.
  EXPECT_GT(log.find(gemm_line(true, false, 4 * H, I, S)), log.find("wait BACKWARD 3"));
  // The device lane names each command's layer and direction.
  bool fw = false, bw = false;
  for (const Trace::Event& e : trace.events()) {
    fw |= e.lane == "device" && e.name.starts_with("FORWARD") && e.name.ends_with(" (l0)");
    bw |= e.lane == "device" && e.name.starts_with("BACKWARD") && e.name.ends_with(" (l1 reverse)");
  }
  EXPECT_TRUE(fw && bw);
}

// The input GEMM runs in gemm_chunks parts over time, after the FORWARDs it
// feeds are queued (each gated on a ready-steps word it polls): 3 sequences
// on a device of 2 slots are 2 FORWARDs, and 4 chunks of each group's rows
// are 8 GEMMs between their submission and the wait for them. The chunked
// step gives the same result as one GEMM, on model:// and on sim://, whose
// core really reads the word before each step.
TEST(Trainer, InputGemmRunsInChunksTheDeviceReadsAsTheyArrive) {
  const int H = 4, T = 8, B = 3;
  const Dataset data = synthetic_task("adding", T, B, 6);
  std::vector<double> losses;
  std::vector<io::TensorList> states;
  for (const int chunks : {4, 1}) {
    LoggedRun run("model://?pes=4&batch=2");
    HostLog& log = run.log;
    TrainConfig c = small_config(CellKind::kGru, 2, H, 1, false);
    c.stack.gemm_chunks = chunks;
    Trainer t(c, run.dev, run.be);
    std::set<uint32_t> open;  // FORWARD 0's gate as each GEMM starts
    log.on_gemm = [&] {
      if (const auto g = run.dev.gate(0)) open.insert(*g);
    };
    losses.push_back(t.step(data, {0, 1, 2}).loss);
    // Each chunk is published before the next is computed: 0, 2, 4, 6 ready
    // steps (of 8) as the chunks start, 8 after the last.
    const std::set<uint32_t> want =
        chunks == 4 ? std::set<uint32_t>{0, 2, 4, 6, 8} : std::set<uint32_t>{0, 8};
    EXPECT_EQ(open, want);
    states.push_back(t.state());
    const std::vector<size_t> gemms = log.matching(0, "gemm 0 1 ", " 12 2");  // rows x 3H x I
    // A GEMM per group and chunk [t0, t1) in which one of the group's sequences runs.
    size_t expected = 0;
    for (const std::vector<int>& group : {std::vector<int>{0, 1}, std::vector<int>{2}}) {
      for (int k = 0; k < chunks; ++k) {
        bool runs = false;
        for (int n : group) runs |= data.lengths[static_cast<size_t>(n)] > T * k / chunks;
        expected += runs;
      }
    }
    EXPECT_EQ(gemms.size(), expected);
    ASSERT_FALSE(gemms.empty());
    EXPECT_LT(log.find("submit FORWARD 1"), gemms.front());
    EXPECT_LT(gemms.back(), log.find("wait FORWARD 0"));
  }
  EXPECT_EQ(losses[0], losses[1]);
  for (size_t i = 0; i < states[0].size(); ++i) {
    EXPECT_LE(io::max_relative_error(states[0][i].second, states[1][i].second), 1e-6)
        << states[0][i].first;
  }
  // sim://: the same step, bit for bit the model's device results (same loss).
  auto sim = Device::open("sim://?seed=3");
  auto model = Device::open(sim->caps().model_uri());
  std::vector<double> on;
  for (Device* dev : {sim.get(), model.get()}) {
    auto be = make_cpu_backend(1);
    TrainConfig c = small_config(CellKind::kLstm, 2, H, 2, false);
    c.stack.gemm_chunks = 3;
    Trainer t(c, *dev, *be);
    on.push_back(t.step(data, {0, 1, 2}).loss);
  }
  EXPECT_EQ(on[0], on[1]);
}

// The streaming tests' batch: 2 sequences of T = 64 steps of I = 3 features
// (a FORWARD of ~500 us of device time on sim://), for a 2-layer LSTM of H =
// 32; and the runs they compare: sim:// in 8 parts, its model in 8 and in 1.
constexpr int kStreamI = 3, kStreamH = 32, kStreamT = 64, kStreamB = 2;
Dataset streaming_batch() {
  Dataset data = synthetic_task("sine", kStreamT, kStreamB, 4);
  data.x = {{kStreamT, kStreamB, kStreamI},
            std::vector<float>(static_cast<size_t>(kStreamT) * kStreamB * kStreamI, 0.25f)};
  return data;
}
const std::vector<std::pair<std::string, int>> kStreamRuns = {
    {"sim://?seed=2", 8},
    {"model://?pes=4&chains=2&hidden=32&batch=4", 8},  // sim://'s model
    {"model://?pes=4&chains=2&hidden=32&batch=4", 1}};

// From now on, as each GEMM of any rows by n by k ("gemm ta tb rows n k")
// starts, appends what `word` reads then; any other GEMM goes to the hook
// installed before.
void record_at_gemms(HostLog& log, bool ta, bool tb, int n, int k,
                     std::function<std::optional<uint32_t>()> word, std::vector<uint32_t>& seen) {
  const std::string head = "gemm " + std::to_string(ta) + " " + std::to_string(tb) + " ";
  const std::string tail = " " + std::to_string(n) + " " + std::to_string(k);
  log.on_gemm = [&log, head, tail, word = std::move(word), &seen, before = log.on_gemm] {
    const std::string& last = log.lines.back();
    if (last.starts_with(head) && last.ends_with(tail))
      seen.push_back(word().value_or(0));
    else if (before)
      before();
  };
}

// The progress of a command as each of the `chunks` parts that follow it
// starts: rising to all T steps and, on sim:// (whose time advances only
// while the host waits), the first part started once the first part's steps
// were done, before the command's last.
void expect_parts_follow(const std::vector<uint32_t>& parts, int T, int chunks, bool sim,
                         const std::string& waited_in_full) {
  ASSERT_EQ(parts.size(), static_cast<size_t>(chunks));
  EXPECT_TRUE(std::is_sorted(parts.begin(), parts.end()));
  EXPECT_EQ(parts.back(), static_cast<uint32_t>(T));
  if (!sim) return;
  EXPECT_GE(parts.front(), static_cast<uint32_t>(T / chunks));
  EXPECT_LT(parts.front(), static_cast<uint32_t>(T)) << waited_in_full;
}

// One direction: layer 1's input GEMM follows layer 0's FORWARD step by step.
// Layer 1's FORWARD is queued (gated) while layer 0's runs, and each part of
// its input GEMM waits only for the layer-0 steps it reads: on sim://, whose
// core writes its progress word as it goes and whose time advances only
// while the host waits, the first part runs while layer 0 has steps left,
// from the run's first step on (every buffer exists before its first
// command: a new one would wait for the core to go idle). model:// streams
// the same way but runs freely, so there the counts are timing's.
// The loss equals that of one part, which waits for all of layer 0, bit for bit.
TEST(Trainer, NextLayersInputGemmFollowsTheDevicesProgress) {
  const int I = kStreamI, H = kStreamH, T = kStreamT;
  const Dataset data = streaming_batch();
  std::vector<double> losses;
  for (const auto& [uri, chunks] : kStreamRuns) {
    {
      SCOPED_TRACE(uri + ", " + std::to_string(chunks) + " parts");
      LoggedRun run(uri);
      HostLog& log = run.log;
      TrainConfig c = small_config(CellKind::kLstm, I, H, 2, false);
      c.stack.gemm_chunks = chunks;
      Trainer t(c, run.dev, run.be);
      std::vector<uint32_t> seen;  // FORWARD 0's progress as each of layer 1's input GEMMs starts
      record_at_gemms(
          log, false, true, 4 * H, H, [&] { return run.dev.progress(0); }, seen);
      losses.push_back(t.step(data, {0, 1}).loss);  // the run's first step
      expect_parts_follow(seen, T, chunks, uri.starts_with("sim"),
                          "layer 1 waited for all of layer 0");
      // Layer 1's FORWARD is queued before layer 0's is waited for, and so
      // is each part's wait for layer 0's steps.
      EXPECT_LT(log.find("submit FORWARD 1"), log.find("wait FORWARD 0"));
      EXPECT_LT(log.find("progress FORWARD 0 " + std::to_string(T / chunks)),
                log.find("wait FORWARD 0"));
      if (uri.starts_with("sim")) {
        // A batch of other lengths (fewer packed steps) reuses the buffers,
        // so its layers stream too (FORWARDs 2 and 3).
        Dataset shorter = data;
        shorter.lengths = {T, T / 2};
        seen.clear();
        record_at_gemms(
            log, false, true, 4 * H, H, [&] { return run.dev.progress(2); }, seen);
        EXPECT_TRUE(std::isfinite(t.step(shorter, {0, 1}).loss));
        ASSERT_EQ(seen.size(), static_cast<size_t>(chunks));
        EXPECT_LT(seen.front(), static_cast<uint32_t>(T))
            << "a new packed size stopped the streaming";
      }
    }
  }
  for (double l : losses) EXPECT_EQ(l, losses[0]);
}

// Bidirectional: the layers run their directions in alternating order, so
// each layer's first direction follows the direction the layer below ran
// last, step by step: layer 1 runs reverse then forward, following layer 0's
// reverse (FORWARD 1); layer 2 runs forward then reverse, following layer
// 1's forward (FORWARD 3). Each layer's second direction starts with its
// input complete. Backward, the same down the stack in the opposite order:
// BACKWARDs 0, 1 are layer 2's reverse and forward; layer 1's forward
// (BACKWARD 2) follows BACKWARD 1, then its reverse (3) runs; layer 0's
// reverse (4) follows BACKWARD 3. On sim:// the first parts run while the
// command followed has steps left; the losses of two steps equal the
// model's and those of one part (at this shape, 16 rows a part, the parts'
// GEMMs round as the whole one does; in general they need not: training.md).
TEST(Trainer, BidirectionalLayersFollowTheDirectionBelow) {
  const int I = kStreamI, H = kStreamH, T = kStreamT;
  const Dataset data = streaming_batch();
  std::vector<std::vector<double>> losses;
  for (const auto& [uri, chunks] : kStreamRuns) {
    SCOPED_TRACE(uri + ", " + std::to_string(chunks) + " parts");
    LoggedRun run(uri);
    HostLog& log = run.log;
    TrainConfig c = small_config(CellKind::kLstm, I, H, 3, true);
    c.stack.gemm_chunks = chunks;
    Trainer t(c, run.dev, run.be);
    const size_t n = static_cast<size_t>(chunks);
    // As each part of layers 1 and 2's input GEMMs starts (2 directions
    // each): the progress of the direction below that layer 1, then 2, follows.
    std::vector<uint32_t> seen;
    record_at_gemms(
        log, false, true, 4 * H, 2 * H,
        [&] { return run.dev.progress(seen.size() < 2 * n ? 1 : 3); }, seen);
    // As each dh GEMM of layers 1 and 0 starts (the first direction's other
    // half in whole, its parts, then the second direction's two halves): the
    // progress of the BACKWARD that the first direction follows.
    std::vector<uint32_t> seen_bw;
    record_at_gemms(
        log, false, false, H, 4 * H,
        [&] { return run.dev.backward_progress(seen_bw.size() < n + 3 ? 1 : 3); }, seen_bw);
    losses.push_back({t.step(data, {0, 1}).loss});
    const bool sim = uri.starts_with("sim");
    ASSERT_EQ(seen_bw.size(), 2 * (n + 3));
    for (const size_t first : {size_t{1}, n + 4}) {
      SCOPED_TRACE("backward into layer " + std::to_string(first == 1 ? 1 : 0));
      expect_parts_follow({seen_bw.begin() + static_cast<long>(first),
                           seen_bw.begin() + static_cast<long>(first + n)},
                          T, chunks, sim, "waited for all of the BACKWARD above");
      EXPECT_EQ(seen_bw[first + n], static_cast<uint32_t>(T))
          << "the second direction's dh before its BACKWARD ended";
    }
    ASSERT_EQ(seen.size(), 4 * n);
    for (const size_t first : {size_t{0}, 2 * n}) {
      SCOPED_TRACE("layer " + std::to_string(first == 0 ? 1 : 2));
      expect_parts_follow(
          {seen.begin() + static_cast<long>(first), seen.begin() + static_cast<long>(first + n)}, T,
          chunks, sim, "waited for all of the direction below");
      for (size_t k = first + n; k < first + 2 * n; ++k)
        EXPECT_EQ(seen[k], static_cast<uint32_t>(T))
            << "the second direction's input was incomplete";
    }
    for (const std::string op : {"FORWARD ", "BACKWARD "}) {
      for (const auto& [follower, followed] : {std::pair{"2", "1"}, std::pair{"4", "3"}}) {
        EXPECT_LT(log.find("submit " + op + follower), log.find("wait " + op + followed));
        EXPECT_LT(log.find("progress " + op + followed + " " + std::to_string(T / chunks)),
                  log.find("wait " + op + followed));
      }
    }
    log.on_gemm = nullptr;
    losses.back().push_back(t.step(data, {0, 1}).loss);
  }
  for (const std::vector<double>& l : losses) EXPECT_EQ(l, losses[0]);
}

// Backward, one direction: layer 0's BACKWARD is queued (gated) while layer
// 1's runs, and layer 1's dx GEMM (layer 0's dh) runs in parts that follow
// layer 1's progress, latest steps first: on sim:// the first part runs while
// layer 1 has steps left. The next step's loss (after the update) is the
// same bit for bit with one part and on the model.
TEST(Trainer, LowerLayersDhFollowsTheDevicesBackwardProgress) {
  const int I = kStreamI, H = kStreamH, T = kStreamT, B = kStreamB;
  const Dataset data = streaming_batch();
  std::vector<double> losses;
  for (const auto& [uri, chunks] : kStreamRuns) {
    SCOPED_TRACE(uri + ", " + std::to_string(chunks) + " parts");
    LoggedRun run(uri);
    HostLog& log = run.log;
    TrainConfig c = small_config(CellKind::kLstm, I, H, 2, false);
    c.stack.gemm_chunks = chunks;
    Trainer t(c, run.dev, run.be);
    t.step(data, {0, 1});  // BACKWARDs 0 (layer 1) and 1 (layer 0); the buffers now exist
    const size_t from = log.lines.size();
    std::vector<uint32_t> seen;  // BACKWARD 2's progress as each part of layer 1's dx GEMM starts
    record_at_gemms(
        log, false, false, H, 4 * H, [&] { return run.dev.backward_progress(2); }, seen);
    t.step(data, {0, 1});
    log.on_gemm = nullptr;
    expect_parts_follow(seen, T, chunks, uri.starts_with("sim"),
                        "layer 0's dh waited for all of layer 1");
    // Each part's rows: T / chunks steps of both sequences.
    EXPECT_EQ(log.matching(from, gemm_line(false, false, B * T / chunks, H, 4 * H), "").size(),
              static_cast<size_t>(chunks));
    EXPECT_LT(log.find("submit BACKWARD 3"), log.find("wait BACKWARD 2"));
    EXPECT_LT(log.find("progress BACKWARD 2 " + std::to_string(T / chunks)),
              log.find("wait BACKWARD 2"));
    losses.push_back(t.step(data, {0, 1}).loss);
  }
  for (double l : losses) EXPECT_EQ(l, losses[0]);
}

// Streaming with unequal groups: sim:// takes 4 sequences a command, so a
// batch of 6 is 2 groups, the second's longest sequence (4 or 5) shorter than
// the batch's T (8); the batches change lengths from step to step. Every wait
// for a command's progress asks for at most that command's steps (a command
// counts only its group's), and 3 steps give the model's losses and
// parameters bit for bit, one-direction and bidirectional (whose 12
// FORWARDs a step run some again, as both keep the records of 8).
TEST(Trainer, StreamedGroupsOfUnequalLengthsEqualTheModel) {
  const int T = 8;
  Dataset data = synthetic_task("adding", T, 12, 5);
  const std::vector<std::vector<int>> lengths = {
      {8, 3, 7, 1, 5, 2}, {2, 8, 8, 4, 3, 4}, {1, 1, 8, 2, 5, 5}};
  for (const bool bidirectional : {false, true}) {
    SCOPED_TRACE(bidirectional ? "bidirectional" : "one direction");
    std::vector<std::vector<double>> losses;
    std::vector<io::TensorList> states;
    for (const std::string uri : {"sim://?seed=4", "model://?pes=4&chains=2&hidden=32&batch=4"}) {
      SCOPED_TRACE(uri);
      LoggedRun run(uri);
      TrainConfig c = small_config(CellKind::kGru, 2, 6, 3, bidirectional);
      c.batch = 6;
      c.stack.gemm_chunks = 3;
      Trainer t(c, run.dev, run.be);
      losses.emplace_back();
      for (size_t s = 0; s < lengths.size(); ++s) {
        data.lengths.assign(12, T);
        std::copy(lengths[s].begin(), lengths[s].end(), data.lengths.begin());
        const size_t from = run.log.lines.size();
        losses.back().push_back(t.step(data, {0, 1, 2, 3, 4, 5}).loss);
        int shorter = 0;  // waits on a command of the shorter group
        for (size_t at : run.log.matching(from, "progress ", "")) {
          const std::string& line = run.log.lines[at];
          const size_t space = line.rfind(' ');
          const std::string command = line.substr(9, space - 9);
          const int target = std::stoi(line.substr(space + 1)), steps = run.dev.steps(command);
          EXPECT_GE(target, 1) << line;
          EXPECT_LE(target, steps) << line << " (the command runs " << steps << " steps)";
          shorter += steps < T;
        }
        EXPECT_GT(shorter, 0) << "no wait on the shorter group";
      }
      states.push_back(t.state());
    }
    EXPECT_EQ(losses[0], losses[1]);
    ASSERT_EQ(states[0].size(), states[1].size());
    for (size_t i = 0; i < states[0].size(); ++i)
      EXPECT_EQ(states[0][i].second.data, states[1][i].second.data) << states[0][i].first;
  }
}

// The core keeps the records of its newest 8 FORWARDs, and a BACKWARD must
// match one. A 5-layer stack on a batch of 6 (2 groups on sim://) runs 10
// FORWARDs a step: before the BACKWARDs of layer 0, whose records are gone,
// the stack runs those 2 FORWARDs again, on sim:// and on the model, which
// keeps its records as the core does. The results equal those of a model
// keeping 64 records (which runs nothing again) bit for bit.
TEST(Trainer, ForwardsWhoseRecordsTheDeviceDroppedRunAgain) {
  const Dataset data = synthetic_task("adding", 5, 6, 7);
  std::vector<double> losses;
  std::vector<io::TensorList> states;
  for (const std::string uri : {"sim://?seed=6", "model://?pes=4&chains=2&hidden=32&batch=4",
                                "model://?pes=4&chains=2&hidden=32&batch=4&records=64"}) {
    SCOPED_TRACE(uri);
    auto dev = Device::open(uri);
    auto be = make_cpu_backend(1);
    TrainConfig c = small_config(CellKind::kGru, 2, 4, 5, false);
    c.batch = 6;
    Trainer t(c, *dev, *be);
    for (int s = 0; s < 2; ++s) losses.push_back(t.step(data, {0, 1, 2, 3, 4, 5}).loss);
    states.push_back(t.state());
    const bool all = uri.ends_with("records=64");
    EXPECT_EQ(dev->caps().forward_records, all ? 64 : 8);
    EXPECT_EQ(dev->counters().forwards, all ? 20u : 24u);
    EXPECT_EQ(dev->counters().backwards, 20u);
  }
  for (size_t run = 1; run < 3; ++run) {
    EXPECT_EQ(losses[2 * run], losses[0]);
    EXPECT_EQ(losses[2 * run + 1], losses[1]);
    for (size_t i = 0; i < states[0].size(); ++i)
      EXPECT_EQ(states[run][i].second.data, states[0][i].second.data) << states[0][i].first;
  }
}

// A backend that fails in the middle of an input GEMM leaves no gate
// closed: the error reaches the caller at once, the FORWARDs already queued
// end, and the next step is bit for bit a fresh trainer's first step (on
// model:// and on sim://, whose gated commands have no watchdog).
TEST(Trainer, ABackendErrorMidGemmOpensTheGates) {
  const Dataset data = synthetic_task("sine", 8, 2, 4);
  for (const char* uri : {"model://?pes=4", "sim://?seed=8"}) {
    std::vector<double> first;
    for (const bool fail : {true, false}) {
      LoggedRun run(uri);
      int gemms = 0;
      run.log.on_gemm = [&] {
        if (fail && ++gemms == 2) throw std::runtime_error("the backend failed");
      };
      TrainConfig c = small_config(CellKind::kLstm, 1, 4, 1, false);
      Trainer t(c, run.dev, run.be);
      if (fail) {
        EXPECT_THROW(t.step(data, {0, 1}), std::runtime_error) << uri;
        ASSERT_GE(run.log.matching(0, "submit FORWARD 0", "").size(), 1u);
        run.dev.drain(std::chrono::seconds(60));  // the queued FORWARD has ended
      }
      first.push_back(t.step(data, {0, 1}).loss);
    }
    EXPECT_EQ(first[0], first[1]) << uri;
  }
}

// The same in a streamed bidirectional stack (3 layers, H = 4): the backend
// fails in a part of layer 1's first input GEMM ("gemm 0 1 rows 16 8": its
// FORWARD queued, gated, behind layer 0's reverse), in the backward's whole
// GEMM of the other half of layer 1's first dh ("gemm 0 0 rows 4 16", the
// first: its BACKWARD queued, gated) or in that dh's first part (the second).
// Each time the error reaches the caller, the device drains, and the next
// step is bit for bit a fresh trainer's first.
TEST(Trainer, ABackendErrorInABidirectionalStreamOpensTheGates) {
  const Dataset data = synthetic_task("sine", 8, 2, 4);
  const int H = 4;
  const std::vector<std::pair<std::string, int>> failures = {
      {"gemm 0 1 ", 1}, {"gemm 0 0 ", 1}, {"gemm 0 0 ", 2}};
  for (const char* uri : {"model://?pes=4", "sim://?seed=8"}) {
    SCOPED_TRACE(uri);
    double fresh = 0;
    {
      LoggedRun run(uri);
      Trainer t(small_config(CellKind::kLstm, 1, H, 3, true), run.dev, run.be);
      fresh = t.step(data, {0, 1}).loss;
    }
    for (const auto& [head, nth] : failures) {
      SCOPED_TRACE(head + "#" + std::to_string(nth));
      LoggedRun run(uri);
      const std::string tail = head == "gemm 0 1 " ? " 16 8" : " 4 16";
      int seen = 0;
      run.log.on_gemm = [&, head = head, nth = nth] {
        const std::string& last = run.log.lines.back();
        if (last.starts_with(head) && last.ends_with(tail) && ++seen == nth)
          throw std::runtime_error("the backend failed");
      };
      Trainer t(small_config(CellKind::kLstm, 1, H, 3, true), run.dev, run.be);
      EXPECT_THROW(t.step(data, {0, 1}), std::runtime_error);
      EXPECT_EQ(seen, nth) << "the failure point was not reached";
      run.log.on_gemm = nullptr;
      run.dev.drain(std::chrono::seconds(60));  // every queued command has ended
      EXPECT_EQ(t.step(data, {0, 1}).loss, fresh);
    }
  }
}

// Weights go into a free bank ahead of time. A 3-layer unidirectional stack
// on 2 banks: layer 1's LOAD is queued before the host waits for layer 0's
// FORWARD, layer 2's before the wait for layer 1's; backward, layer 0's
// weights (evicted by layer 2's) are loaded again before the wait for layer
// 1's BACKWARD, into the bank layer 2's BACKWARD has left.
TEST(Trainer, NextLayersWeightsLoadWhileTheDeviceRuns) {
  LoggedRun run("model://?pes=4&banks=2");
  const HostLog& log = run.log;
  Trainer t(small_config(CellKind::kLstm, 1, 4, 3, false), run.dev, run.be);
  t.step(synthetic_task("sine", 6, 2, 1), {0, 1});
  EXPECT_LT(log.find("submit LOAD 1"), log.find("wait FORWARD 0"));
  EXPECT_LT(log.find("submit LOAD 2"), log.find("wait FORWARD 1"));
  EXPECT_LT(log.find("submit BACKWARD 1"), log.find("submit LOAD 3"));
  EXPECT_LT(log.find("submit LOAD 3"), log.find("wait BACKWARD 1"));
  EXPECT_EQ(run.real->counters().loads, 4u);  // no bank loaded twice with the same weights
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
