// ModelDevice: the Device API over the bit-accurate engine model. See
// model_device.hpp. Submission checks everything a command names (shape,
// bank, buffers, gate store) before queueing it; the worker thread runs the
// queue in order and reads the buffers only when a command runs, as DMA would.
#include "model_device.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "farnn/engine_abi.hpp"
#include "farnn/engine_model.hpp"

namespace farnn::driver {
namespace {

using Words = std::vector<uint32_t>;
using Clock = std::chrono::steady_clock;

// Registry of the buffers and the card memory of one device; outlives the
// device while buffers or gate stores refer to it.
struct Registry {
  std::mutex m;
  std::set<const Buffer*> buffers;
  uint64_t next_bus = 0x1'0000'0000ull;
  uint64_t card_used = 0;
};

class ModelBuffer final : public Buffer {
 public:
  ModelBuffer(std::shared_ptr<Registry> reg, float* foreign, size_t words, Access access, std::string name)
      : reg_(std::move(reg)), words_(words), access_(access), name_(std::move(name)) {
    if (foreign == nullptr) owned_.assign(words, 0.0f);
    ptr_ = foreign != nullptr ? foreign : owned_.data();
    std::lock_guard<std::mutex> lock(reg_->m);
    bus_ = reg_->next_bus;
    reg_->next_bus += (4 * words + 4095) / 4096 * 4096 + 4096;  // page aligned, a guard page between
    reg_->buffers.insert(this);
  }
  ~ModelBuffer() override {
    std::lock_guard<std::mutex> lock(reg_->m);
    reg_->buffers.erase(this);
  }
  float* data() override { return ptr_; }
  size_t size() const override { return words_; }
  Access access() const override { return access_; }
  uint64_t bus_address() const override { return bus_; }
  const std::string& name() const override { return name_; }

 private:
  std::shared_ptr<Registry> reg_;
  std::vector<float> owned_;
  float* ptr_ = nullptr;
  size_t words_;
  Access access_;
  std::string name_;
  uint64_t bus_ = 0;
};

class ModelGateStore final : public GateStore {
 public:
  ModelGateStore(std::shared_ptr<Registry> reg, const LayerShape& shape, uint64_t bytes)
      : reg_(std::move(reg)), shape_(shape), bytes_(bytes) {}
  ~ModelGateStore() override {
    std::lock_guard<std::mutex> lock(reg_->m);
    reg_->card_used -= bytes_;
  }
  uint64_t bytes() const override { return bytes_; }
  const LayerShape& capacity_shape() const override { return shape_; }
  uint64_t record_capacity() const { return static_cast<uint64_t>(shape_.packed_steps()) * shape_.hidden; }

  Words records;                       // [S][H][8] of the last FORWARD that ran
  std::optional<LayerShape> filled_by;  // the last FORWARD submitted into it

 private:
  std::shared_ptr<Registry> reg_;
  LayerShape shape_;
  uint64_t bytes_;
};

class ModelJob final : public Job {
 public:
  explicit ModelJob(std::string what) : what_(std::move(what)) {}
  bool done() const override {
    std::lock_guard<std::mutex> lock(m_);
    return done_;
  }
  JobReport wait(std::chrono::milliseconds limit) override {
    std::unique_lock<std::mutex> lock(m_);
    if (!cv_.wait_for(lock, wait_limit(limit, what_), [&] { return done_; })) {
      throw TimeoutError(what_ + ": not finished after " + std::to_string(limit.count()) +
                         " ms; the device is still working on it or on commands before it");
    }
    if (error_) std::rethrow_exception(error_);
    return report_;
  }
  void finish(const Counters& delta, std::exception_ptr error, Clock::time_point started = {},
              Clock::time_point finished = {}) {
    std::lock_guard<std::mutex> lock(m_);
    report_ = {what_, delta, started, finished, {}, {}};
    error_ = error;
    done_ = true;
    cv_.notify_all();
  }
  const std::string& what() const { return what_; }

 private:
  std::string what_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
  JobReport report_;
};

// A command's reads and writes of host buffers, counted as they happen.
struct Traffic {
  Counters counted;
  // `words` words from ref; zeros (not counted) for an optional stream left empty.
  Words in(const BufferRef& ref, size_t words) {
    Words w(words, 0);
    in_part(ref, w, 0, words);
    return w;
  }
  void out(const BufferRef& ref, const Words& w) { out_part(ref, w, 0, w.size()); }
  // Words [first, first + n) of the stream: into dst's same words (in_part),
  // or from w's (out_part); nothing for an optional stream left empty.
  void in_part(const BufferRef& ref, Words& dst, size_t first, size_t n) {
    if (!ref || n == 0) return;
    std::memcpy(dst.data() + first, ref.buffer->data() + ref.offset + first, 4 * n);
    counted.words_read += n;
    counted.nonfinite_inputs += count_nonfinite(dst.data() + first, n);
  }
  void out_part(const BufferRef& ref, const Words& w, size_t first, size_t n) {
    if (!ref || n == 0) return;
    std::memcpy(ref.buffer->data() + ref.offset + first, w.data() + first, 4 * n);
    counted.words_written += n;
    counted.nonfinite_outputs += count_nonfinite(w.data() + first, n);
  }
};

struct BankWeights {
  CellKind cell = CellKind::kLstm;
  int hidden = 0;
  engine::Weights w;
};

class ModelDevice final : public Device {
 public:
  ModelDevice(const Capabilities& caps, int threads) : caps_(caps), threads_(threads) {
    banks_.resize(static_cast<size_t>(caps.num_banks));
    bank_shape_.resize(static_cast<size_t>(caps.num_banks));
    bank_users_.assign(static_cast<size_t>(caps.num_banks), 0);
    worker_ = std::thread([this] { run_queue(); });
  }
  ~ModelDevice() override {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
      cv_.notify_all();
    }
    worker_.join();
    for (Task& t : queue_) t.job->finish({}, std::make_exception_ptr(NotRunError(t.job->what() + ": device closed")));
  }

  const Capabilities& caps() const override { return caps_; }

  BufferPtr alloc(size_t words, Access access, const std::string& name) override {
    check_buffer_words(words, "alloc", name);
    try {
      return std::make_shared<ModelBuffer>(reg_, nullptr, words, access, name);
    } catch (const std::bad_alloc&) {
      throw CapacityError("alloc '" + name + "': the host has no " + std::to_string(words * 4) + " bytes for it");
    }
  }
  BufferPtr register_memory(float* ptr, size_t words, Access access, const std::string& name) override {
    check_registration(ptr, words, name);
    return std::make_shared<ModelBuffer>(reg_, ptr, words, access, name);
  }
  void unregister(const BufferPtr& buffer) override {
    std::lock_guard<std::mutex> lock(reg_->m);
    if (!buffer || reg_->buffers.erase(buffer.get()) == 0) {
      throw BufferError("unregister: buffer '" + (buffer ? buffer->name() : std::string("(null)")) +
                        "' is not registered with this device");
    }
  }

  GateStorePtr alloc_gate_store(const LayerShape& shape) override {
    check_shape(shape, caps_, "alloc_gate_store");
    const uint64_t bytes = static_cast<uint64_t>(shape.packed_steps()) * shape.hidden * engine::kRecordWords * 4;
    std::lock_guard<std::mutex> lock(reg_->m);
    if (reg_->card_used + bytes > caps_.card_memory_bytes) {
      throw CapacityError("alloc_gate_store " + shape.describe() + ": needs " + std::to_string(bytes) +
                          " bytes of card memory, " + std::to_string(caps_.card_memory_bytes - reg_->card_used) +
                          " of " + std::to_string(caps_.card_memory_bytes) +
                          " are free; release gate stores or shorten the sequence");
    }
    reg_->card_used += bytes;
    return std::make_shared<ModelGateStore>(reg_, shape, bytes);
  }

  JobPtr load(int bank, const LayerShape& shape, BufferRef w_hh, BufferRef b_hh) override {
    const std::string what = "LOAD " + shape.describe_weights() + " bank " + std::to_string(bank);
    check_bank(bank, caps_, what);
    check_shape(shape, caps_, what, ShapeUse::kWeights);
    const size_t gh = static_cast<size_t>(shape.gates()) * shape.hidden;
    const std::vector<Range> ranges = load_ranges(shape, w_hh, b_hh);
    check_ranges(ranges, what, mine());
    std::lock_guard<std::mutex> lock(m_);
    if (bank_users_[static_cast<size_t>(bank)] > 0) {
      throw BankBusyError(what + ": bank " + std::to_string(bank) + " is still in use by " +
                          std::to_string(bank_users_[static_cast<size_t>(bank)]) +
                          " queued or running command(s); load the other bank or wait for them");
    }
    bank_shape_[static_cast<size_t>(bank)] = std::make_pair(shape.cell, shape.hidden);
    return submit(what, -1, ranges, [this, bank, shape, w_hh, b_hh, gh] {
      Traffic io;
      BankWeights bw{shape.cell, shape.hidden, {io.in(w_hh, gh * shape.hidden), io.in(b_hh, gh)}};
      io.counted.loads = 1;
      std::lock_guard<std::mutex> lock(bank_m_);
      banks_[static_cast<size_t>(bank)] = std::move(bw);
      return io.counted;
    });
  }

  JobPtr forward(const ForwardArgs& a) override {
    const LayerShape& s = a.shape;
    const std::string what = checked_command("FORWARD", s, a.bank, caps_);
    const auto [S, H, G, SW, B] = Dims(s);
    const std::vector<Range> ranges = forward_ranges(a, what);
    check_ranges(ranges, what, mine());
    auto store = checked_store(a.store, s, what);
    std::lock_guard<std::mutex> lock(m_);
    check_bank_holds(bank_shape_[static_cast<size_t>(a.bank)], s, a.bank, what);
    store->filled_by = s;
    return submit(what, a.bank, ranges, [this, a, store, S, H, G, SW, B] {
      const LayerShape& s = a.shape;
      void_records(store.get());
      const engine::Config cfg = driver::engine_config(s, caps_.num_pe, caps_.num_chains);
      Traffic io;
      Words xp(S * H * G, 0);
      const Words state_in = io.in(a.state_in, B * H * SW);
      const engine::StepHooks hooks = stream_steps(cfg, a.sync, false, io, a.xp, xp, H * G, a.h, H);
      const engine::Weights& w = bank(a.bank).w;
      engine::ForwardResult r = engine::forward(cfg, w, xp, state_in, threads_, &hooks);
      io.out(a.state_out, r.state_out);
      store->records = std::move(r.records);
      add_record({store.get(), s, a.bank});
      io.counted.forwards = 1;
      io.counted.macs = Dims(s).macs();
      return io.counted;
    });
  }

  JobPtr backward(const BackwardArgs& a) override {
    const LayerShape& s = a.shape;
    const std::string what = checked_command("BACKWARD", s, a.bank, caps_);
    const auto [S, H, G, SW, B] = Dims(s);
    const std::vector<Range> ranges = backward_ranges(a, what);
    check_ranges(ranges, what, mine());
    auto store = checked_store(a.store, s, what);
    std::lock_guard<std::mutex> lock(m_);
    check_bank_holds(bank_shape_[static_cast<size_t>(a.bank)], s, a.bank, what);
    check_store_filled(store->filled_by, s, what);
    return submit(what, a.bank, ranges, [this, a, store, S, H, B, what] {
      const LayerShape& s = a.shape;
      check_record({store.get(), s, a.bank}, what);
      const engine::Config cfg = driver::engine_config(s, caps_.num_pe, caps_.num_chains);
      Traffic io;
      Words dh(S * H, 0);
      const Words carry = io.in(a.carry_in, B * H);
      const engine::StepHooks hooks =
          stream_steps(cfg, a.sync, true, io, a.dh, dh, H, a.delta, H * engine::kDeltaWords);
      const engine::Weights& w = bank(a.bank).w;
      const engine::BackwardResult r =
          engine::backward(cfg, w, store->records, dh, carry, threads_, &hooks);
      io.out(a.dstate, r.state_out);
      io.counted.backwards = 1;
      io.counted.macs = Dims(s).macs();
      return io.counted;
    });
  }

  void ring_step_doorbell(int index, uint32_t count) override {
    check_doorbell(index);
    doorbells_[static_cast<size_t>(index)].store(count);
  }

  void drain(std::chrono::milliseconds limit) override {
    std::unique_lock<std::mutex> lock(m_);
    if (!idle_cv_.wait_for(lock, wait_limit(limit, "drain"), [&] { return queue_.empty() && !running_; })) {
      throw TimeoutError("drain: " + std::to_string(queue_.size() + (running_ ? 1 : 0)) +
                         " command(s) still unfinished after " + std::to_string(limit.count()) + " ms");
    }
  }

  Counters counters() const override {
    std::lock_guard<std::mutex> lock(m_);
    return counters_;
  }

  void reset() override {
    std::unique_lock<std::mutex> lock(m_);
    for (Task& t : queue_) {
      t.job->finish({}, std::make_exception_ptr(NotRunError(t.job->what() + ": dropped by reset()")));
    }
    queue_.clear();
    idle_cv_.wait(lock, [&] { return !running_; });  // the running command ends on its own (bounded work)
    failure_.clear();
    records_.clear();  // as the core's soft reset clears them
    std::fill(bank_users_.begin(), bank_users_.end(), 0);
    std::fill(bank_shape_.begin(), bank_shape_.end(), std::nullopt);
    std::lock_guard<std::mutex> bank_lock(bank_m_);
    std::fill(banks_.begin(), banks_.end(), std::nullopt);
  }

 private:
  // A command's streams step by step, as the core moves them: step k's rows
  // of the input stream (`in_words` words a packed row) are read once the
  // gate counts k + 1 ready steps; its rows of the output stream are written
  // when it ends, then the progress word (every `sync.every` steps and after
  // the last). FORWARD's step k is time k, BACKWARD's time T-1-k.
  engine::StepHooks stream_steps(const engine::Config& cfg, const StepSync& sync, bool backward,
                                 Traffic& io, const BufferRef& in, Words& in_words, size_t in_row,
                                 const BufferRef& out, size_t out_row) {
    const char* op = backward ? "BACKWARD" : "FORWARD";
    const auto rows = [cfg, backward](int k) {
      const int t = backward ? cfg.steps - 1 - k : k;
      return std::make_pair(static_cast<size_t>(cfg.steps_before(t)),
                            static_cast<size_t>(cfg.active_at(t)));
    };
    engine::StepHooks hooks;
    hooks.input = [this, rows, sync, op, &io, in, &in_words, in_row](int k) {
      await_step(sync, k + 1, op);
      const auto [first, n] = rows(k);
      io.in_part(in, in_words, first * in_row, n * in_row);
    };
    hooks.done = [rows, sync, &io, out, out_row, steps = cfg.steps](int k, const Words& w) {
      const auto [first, n] = rows(k);
      io.out_part(out, w, first * out_row, n * out_row);
      if (sync.progress && ((k + 1) % std::max(1, sync.every) == 0 || k + 1 == steps)) {
        sync.progress.store_word(static_cast<uint32_t>(k + 1));
      }
    };
    return hooks;
  }
  // Waits until the gate counts `steps` ready steps (bounded: a producer that
  // stops is an error).
  void await_step(const StepSync& sync, int steps, const char* op) {
    if (!sync.gated()) return;
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    for (;;) {
      const uint32_t count = sync.ready ? sync.ready.load_word()
                                        : doorbells_[static_cast<size_t>(sync.doorbell)].load();
      if (static_cast<int32_t>(count - static_cast<uint32_t>(steps)) >= 0) return;
      if (Clock::now() > deadline) {
        throw TimeoutError(std::string(op) + ": the input gate stayed at " + std::to_string(count) + " of " +
                           std::to_string(steps) + " ready steps for 60 s");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  // The engine's FORWARD records, kept as the core keeps them: a FORWARD
  // voids the records of its gate store as it starts and, once it ends, adds
  // its own as the newest; only the newest caps_.forward_records stay, and a
  // BACKWARD runs only if one of them is its FORWARD's (same shape, lengths,
  // bank and gate store). Only the worker touches them, and reset() while
  // no command runs.
  struct Record {
    const ModelGateStore* store;
    LayerShape shape;
    int bank;
    bool operator==(const Record& o) const {
      return store == o.store && shape == o.shape && bank == o.bank;
    }
  };
  void void_records(const ModelGateStore* store) {
    std::erase_if(records_, [store](const Record& r) { return r.store == store; });
  }
  void add_record(Record r) {
    records_.push_front(std::move(r));
    if (records_.size() > static_cast<size_t>(caps_.forward_records)) records_.pop_back();
  }
  void check_record(const Record& r, const std::string& what) const {
    if (std::find(records_.begin(), records_.end(), r) != records_.end()) return;
    throw CommandError(
        what +
        ": ERR_NO_FORWARD (backward without the matching forward); a BACKWARD must match a "
        "FORWARD among the device's newest " +
        std::to_string(caps_.forward_records) +
        " (same shape, lengths, bank and gate store): run its FORWARD again first");
  }

  struct Task {
    std::shared_ptr<ModelJob> job;
    int bank;  // the bank a FORWARD/BACKWARD reads; -1 for LOAD
    std::vector<BufferPtr> buffers;  // every buffer it reads or writes
    std::function<Counters()> run;
  };

  std::function<bool(const Buffer*)> mine() const {
    return [reg = reg_](const Buffer* b) {
      std::lock_guard<std::mutex> lock(reg->m);
      return reg->buffers.count(b) > 0;
    };
  }



  std::shared_ptr<ModelGateStore> checked_store(const GateStorePtr& p, const LayerShape& s, const std::string& what) {
    auto store = std::dynamic_pointer_cast<ModelGateStore>(p);
    if (!store) throw BufferError(what + ": gate store is missing or belongs to another device");
    const uint64_t need = static_cast<uint64_t>(s.packed_steps()) * s.hidden;
    if (need > store->record_capacity()) {
      throw BufferError(what + ": needs " + std::to_string(need) + " gate-store records, the store holds " +
                        std::to_string(store->record_capacity()) + " (sized for " +
                        store->capacity_shape().describe() + ")");
    }
    return store;
  }

  const BankWeights& bank(int b) {
    std::lock_guard<std::mutex> lock(bank_m_);
    return *banks_[static_cast<size_t>(b)];
  }

  // Called with m_ held.
  JobPtr submit(const std::string& what, int bank, const std::vector<Range>& ranges, std::function<Counters()> run) {
    auto job = std::make_shared<ModelJob>(what);
    if (bank >= 0) ++bank_users_[static_cast<size_t>(bank)];
    std::vector<BufferPtr> buffers;
    for (const Range& r : ranges) buffers.push_back(r.ref.buffer);
    queue_.push_back({job, bank, std::move(buffers), std::move(run)});
    cv_.notify_all();
    return job;
  }

  void run_queue() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      Task task = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
      const std::string failure = failure_;
      lock.unlock();
      Counters delta;
      std::exception_ptr error;
      const auto start = Clock::now();
      if (!failure.empty()) {
        error = std::make_exception_ptr(NotRunError(task.job->what() + ": not run, an earlier command failed (" +
                                                    failure + "); call reset()"));
      } else {
        try {
          // A buffer unregistered after submission is a DMA fault: nothing runs.
          for (const BufferPtr& b : task.buffers) {
            if (!mine()(b.get())) {
              throw CommandError(task.job->what() + ": DMA fault: buffer '" + b->name() +
                                 "' was unregistered before the command ran; nothing was read or written");
            }
          }
          delta = task.run();
        } catch (const DeviceError&) {
          error = std::current_exception();
        } catch (const std::exception& e) {
          error = std::make_exception_ptr(CommandError(task.job->what() + ": " + e.what()));
        }
      }
      const auto end = Clock::now();
      delta.busy_seconds = std::chrono::duration<double>(end - start).count();
      lock.lock();
      if (error && failure.empty()) {
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          failure_ = e.what();
        }
      }
      if (error) ++counters_.failed;
      accumulate(delta);
      if (task.bank >= 0 && bank_users_[static_cast<size_t>(task.bank)] > 0) --bank_users_[static_cast<size_t>(task.bank)];
      running_ = false;
      task.job->finish(delta, error, start, end);
      idle_cv_.notify_all();
    }
  }

  void accumulate(const Counters& d) {
    counters_.loads += d.loads;
    counters_.forwards += d.forwards;
    counters_.backwards += d.backwards;
    counters_.macs += d.macs;
    counters_.words_read += d.words_read;
    counters_.words_written += d.words_written;
    counters_.nonfinite_inputs += d.nonfinite_inputs;
    counters_.nonfinite_outputs += d.nonfinite_outputs;
    counters_.busy_seconds += d.busy_seconds;
  }

  Capabilities caps_;
  int threads_;
  std::shared_ptr<Registry> reg_ = std::make_shared<Registry>();

  mutable std::mutex m_;  // queue, bookkeeping, counters
  std::condition_variable cv_, idle_cv_;
  std::deque<Task> queue_;
  bool running_ = false;
  bool stop_ = false;
  std::string failure_;  // the first error since reset(); later commands do not run
  std::vector<BankShape> bank_shape_;  // as submitted
  std::vector<int> bank_users_;                                      // queued or running FW/BW per bank
  Counters counters_;

  std::deque<Record> records_;  // the newest first
  std::mutex bank_m_;  // the banks as the worker sees them
  std::vector<std::optional<BankWeights>> banks_;
  std::array<std::atomic<uint32_t>, kStepDoorbells> doorbells_{};
  std::thread worker_;
};

}  // namespace

std::unique_ptr<Device> open_model_device(const Uri& uri) {
  uri.allow(
      {"pes", "chains", "hidden", "batch", "banks", "depth", "threads", "card_mib", "records"});
  if (!uri.target.empty()) {
    throw UnavailableError("'" + uri.text + "': model:// takes no target, only options (model://?pes=4)");
  }
  Capabilities c;
  c.kind = "model";
  // Bounds: what the model can hold in an int and in memory (a layer's
  // weights are allocated at LOAD), far above any device.
  c.num_pe = static_cast<int>(uri.positive("pes", 4, 1 << 16));
  c.num_chains = static_cast<int>(uri.positive("chains", 1, 1 << 16));
  if (c.num_pe % c.num_chains != 0) {
    throw InvalidArgumentError("'" + uri.text + "': chains=" + std::to_string(c.num_chains) + " does not divide pes=" +
                               std::to_string(c.num_pe));
  }
  c.num_banks = static_cast<int>(uri.positive("banks", 2, 64));
  c.weight_lanes = 16;
  c.max_hidden = static_cast<int>(uri.positive("hidden", 1024, 8192));
  c.max_batch = static_cast<int>(uri.positive("batch", 64, 4096));
  c.max_steps = 65535;
  const long rows = (4L * c.max_hidden + c.num_pe - 1) / c.num_pe;
  c.weight_depth = static_cast<int>(uri.positive("depth", rows * c.max_hidden, 1L << 28));
  c.card_memory_bytes = static_cast<uint64_t>(uri.positive("card_mib", 16384, 1L << 20)) << 20;
  c.forward_records = static_cast<int>(uri.positive("records", engine::kForwardRecords, 1L << 30));
  const int threads = static_cast<int>(
      uri.positive("threads", std::max(1u, std::thread::hardware_concurrency()), 1024));
  c.description = "bit-accurate engine model, " + std::to_string(c.num_pe) + " PEs in " +
                  std::to_string(c.num_chains) + (c.num_chains == 1 ? " chain, " : " chains, ") +
                  std::to_string(c.num_banks) + " banks of " + std::to_string(c.weight_depth) +
                  " words per PE, hidden <= " + std::to_string(c.max_hidden) + ", batch <= " +
                  std::to_string(c.max_batch) + ", " + std::to_string(threads) + " threads";
  return std::make_unique<ModelDevice>(c, threads);
}

}  // namespace farnn::driver
