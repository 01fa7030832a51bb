// CoreDevice: the farnn_core driver over a Transport (see core_device.hpp).
// All state lives in Core, shared by the device, its buffers and gate stores
// (they free their memory through it) and reached weakly by its jobs; one
// mutex serializes every use of the transport.
#include "core_device.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "farnn/core_regs.hpp"
#include "farnn/engine_abi.hpp"
#include "farnn/engine_model.hpp"

namespace farnn::driver {
namespace {

namespace cr = core_regs;
using Clock = std::chrono::steady_clock;
using std::chrono::nanoseconds;

constexpr uint32_t kIrqDone = 1, kIrqError = 2;
constexpr nanoseconds kSlice = std::chrono::microseconds(20);  // device time per interrupt wait
// Idle with work queued for this long (device time) means a lost doorbell:
// 200 us, and at least 20,000 core cycles (at 1 MHz 200 us was 200 cycles,
// and selftest's FORWARD after its LOAD looked lost; with 20,000 selftest
// passes there, CTest farnn_cli_selftest_slow_clock).
constexpr nanoseconds kIdleLimit = std::chrono::microseconds(200);
constexpr double kIdleCycles = 20000;
constexpr nanoseconds kResetLimit = std::chrono::milliseconds(2);
constexpr const char* kInternal = "driver:";  // prefix of the driver's own DMA regions

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}
uint32_t field(uint32_t reg, uint32_t mask, unsigned shift) { return (reg & mask) >> shift; }
bool readable(Access a) { return static_cast<int>(a) & static_cast<int>(Access::kRead); }
bool writable(Access a) { return static_cast<int>(a) & static_cast<int>(Access::kWrite); }

struct Core;

// A range of bus addresses the core may touch, with its permission.
struct Mapping {
  uint64_t bus = 0, bytes = 0;
  bool read = false, write = false;
  std::string name;
};

class CoreBuffer final : public Buffer {
 public:
  CoreBuffer(std::shared_ptr<Core> core, float* cpu, uint64_t bus, size_t words, Access access, std::string name,
             std::optional<DmaRegion> owned)
      : core_(std::move(core)), cpu_(cpu), bus_(bus), words_(words), access_(access), name_(std::move(name)),
        owned_(owned) {}
  ~CoreBuffer() override;
  float* data() override { return cpu_; }
  size_t size() const override { return words_; }
  Access access() const override { return access_; }
  uint64_t bus_address() const override { return bus_; }
  const std::string& name() const override { return name_; }
  // unregister(): foreign memory is unmapped at once (its owner may free it);
  // the device's own memory stays allocated until the buffer goes.
  void unmap_foreign();

 private:
  std::shared_ptr<Core> core_;
  float* cpu_;
  uint64_t bus_;
  size_t words_;
  Access access_;
  std::string name_;
  std::optional<DmaRegion> owned_;  // alloc(): the region to free; register_memory(): none
  bool mapped_ = true;              // register_memory(): still mapped
};

class CoreGateStore final : public GateStore {
 public:
  CoreGateStore(std::shared_ptr<Core> core, const LayerShape& shape, uint64_t base, uint64_t bytes)
      : core_(std::move(core)), shape_(shape), base_(base), bytes_(bytes) {}
  ~CoreGateStore() override;
  uint64_t bytes() const override { return bytes_; }
  const LayerShape& capacity_shape() const override { return shape_; }
  uint64_t base() const { return base_; }
  std::optional<LayerShape> filled_by;  // the last FORWARD submitted into it

 private:
  std::shared_ptr<Core> core_;
  LayerShape shape_;
  uint64_t base_, bytes_;
};

class CoreJob final : public Job {
 public:
  CoreJob(std::weak_ptr<Core> core, std::string what) : core_(std::move(core)), what_(std::move(what)) {}
  bool done() const override;
  JobReport wait(std::chrono::milliseconds limit) override;
  uint32_t wait_progress(const BufferRef& progress, uint32_t steps,
                         std::chrono::milliseconds limit) override;

  const std::string& what() const { return what_; }
  // Called with the core's mutex held.
  void finish(const JobReport& report, std::exception_ptr error) {
    report_ = report;
    error_ = error;
    done_.store(true);
  }
  bool finished() const { return done_.load(); }
  JobReport result() const {
    if (error_) std::rethrow_exception(error_);
    return report_;
  }

 private:
  std::weak_ptr<Core> core_;
  std::string what_;
  std::atomic<bool> done_{false};
  std::exception_ptr error_;
  JobReport report_;
};

// The core's counters the driver reads (64-bit, low word first).
struct HwCounters {
  uint64_t busy = 0, macs = 0, rd = 0, wr = 0, nonfinite = 0;
};

// The core's mutex. Recursive: a finished command releases the buffers it
// held with the mutex held, and a buffer's destructor takes it. A thread that
// waits on the device through the API (a job's wait, drain) holds it, but
// between slices of the wait lets in a thread that waits for it (let_in): a
// step doorbell rung from another thread, or that thread's own wait, would
// otherwise wait for the whole wait.
class CoreMutex {
 public:
  void lock() {
    const std::thread::id me = std::this_thread::get_id();
    if (owner_.load() == me) {
      ++depth_;
      return;
    }
    acquire(me);
  }
  void unlock() {
    if (--depth_ > 0) return;
    owner_.store(std::thread::id());
    m_.unlock();
  }
  // Called by the owner between slices of a wait: where it holds the mutex
  // once (not inside another call of the driver) and other threads wait for
  // it, one of them goes first; the owner then queues for it as a waiter, so
  // a thread let in that waits itself lets the owner back in turn.
  void let_in() {
    if (depth_ != 1 || waiting_.load() == 0) return;
    const std::thread::id me = owner_.load();
    const uint64_t taken = acquisitions_.load();
    owner_.store(std::thread::id());
    depth_ = 0;
    m_.unlock();
    // A waiter is blocked on m_ and takes it at once; bounded, in case it has
    // not reached m_ yet.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
    while (acquisitions_.load() == taken && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    acquire(me);
  }

 private:
  void acquire(std::thread::id me) {
    waiting_.fetch_add(1);
    m_.lock();
    waiting_.fetch_sub(1);
    acquisitions_.fetch_add(1);
    owner_.store(me);
    depth_ = 1;
  }

  std::mutex m_;
  std::atomic<std::thread::id> owner_{};
  int depth_ = 0;  // the owner's
  std::atomic<int> waiting_{0};
  std::atomic<uint64_t> acquisitions_{0};
};

struct Pending {
  uint32_t seq;  // ring index (RING_DONE passes it when the descriptor completes)
  std::shared_ptr<CoreJob> job;
  int bank;         // FW/BW: the bank read; -1 otherwise
  int load_bank;    // LOAD: the bank (its staging image stays in use until it completes); -1 otherwise
  Counters counts;  // loads/forwards/backwards
  nanoseconds submitted;             // device time
  Clock::time_point host_submitted;  // host time
  // Its host data: held until it ends, its NaN/Inf words counted then.
  std::vector<Range> data;
  // Gated on a step doorbell (-1: not): it finishes once the doorbell counts `steps`.
  int doorbell = -1;
  uint32_t steps = 0;
};

struct Core : std::enable_shared_from_this<Core> {
  CoreMutex m;
  std::unique_ptr<Transport> t;
  CoreOptions opt;
  Capabilities caps;
  unsigned num_windows = 0;
  double clock_hz = 0;
  uint32_t version_minor = 0;  // VERSION.minor, read by check_identity()
  // Job reports place the device's work on the host's clock: a job starts when
  // it was submitted or when the one before it finished, whichever is later,
  // and lasts the device time it took (projected from cycles on sim://).
  Clock::time_point host_last_finish{};

  // internal DMA
  DmaRegion ring{}, wb{}, lengths{}, zeros{}, discard{};
  std::vector<DmaRegion> staging;  // per bank: weight image
  size_t lengths_stride = 0;       // bytes per ring slot

  // registry
  std::map<const Buffer*, Mapping> buffers;
  bool windows_dirty = true;
  std::map<uint64_t, uint64_t> card;  // gate stores: base -> bytes

  // ring state
  uint32_t ctrl = 0;
  uint32_t tail = 0, done = 0;
  std::deque<Pending> pending;
  nanoseconds last_progress{0};
  nanoseconds last_finish{0};
  HwCounters hw_last;
  std::string failure;  // first error since reset(); later commands do not run
  bool link_lost = false;

  // bookkeeping as submitted
  std::vector<BankShape> bank_shape;
  std::vector<int> bank_users;
  Counters totals;  // loads/forwards/backwards/failed

  // ---- registers
  uint32_t rd(uint32_t a) { return t->read32(a); }
  void wr(uint32_t a, uint32_t v) { t->write32(a, v); }
  uint64_t rd64(uint32_t a) {
    const uint64_t lo = rd(a);
    return lo | (uint64_t{rd(a + 4)} << 32);
  }
  void wr64(uint32_t a, uint64_t v) {
    wr(a, static_cast<uint32_t>(v));
    wr(a + 4, static_cast<uint32_t>(v >> 32));
  }
  uint32_t wb_word() const { return std::atomic_ref<uint32_t>(*static_cast<uint32_t*>(wb.cpu)).load(); }
  void set_wb_word(uint32_t v) { std::atomic_ref<uint32_t>(*static_cast<uint32_t*>(wb.cpu)).store(v); }
  uint64_t cycles(nanoseconds d) const { return static_cast<uint64_t>(static_cast<double>(d.count()) * 1e-9 * clock_hz); }
  std::string where() const { return caps.kind + " device"; }

  // ---- bring-up
  void open() {
    check_identity();
    read_caps();
    soft_reset("open");  // whatever a previous user left is discarded
    const size_t max_state = static_cast<size_t>(caps.max_batch) * caps.max_hidden * 2 * 4;
    ring = t->alloc_dma(size_t{opt.ring_entries} * cr::kDescBytes, std::string(kInternal) + "ring");
    wb = t->alloc_dma(64, std::string(kInternal) + "write-back");
    lengths_stride = (static_cast<size_t>(caps.max_batch) * 4 + 63) / 64 * 64;
    lengths = t->alloc_dma(lengths_stride * opt.ring_entries, std::string(kInternal) + "lengths");
    zeros = t->alloc_dma(max_state, std::string(kInternal) + "zero state");
    discard = t->alloc_dma(max_state, std::string(kInternal) + "discarded state");
    size_t image = 64;
    for (CellKind cell : {CellKind::kLstm, CellKind::kGru}) {
      const int h = caps.max_resident_hidden(cell);
      if (h > 0) image = std::max(image, image_words(cell, h) * 4);
    }
    for (int b = 0; b < caps.num_banks; ++b) {
      staging.push_back(t->alloc_dma(image, std::string(kInternal) + "weights bank " + std::to_string(b)));
    }
    bank_shape.assign(static_cast<size_t>(caps.num_banks), std::nullopt);
    bank_users.assign(static_cast<size_t>(caps.num_banks), 0);
    program();
  }

  void check_identity() {
    const uint32_t id = rd(cr::kRegId);
    if (id == 0xffffffffu) {
      throw LinkError(t->describe() + ": registers read all ones: the link is down or the card does not answer; "
                      "check the card (lspci), its power and the bitstream");
    }
    if (id != cr::kIdValue) {
      throw UnavailableError(t->describe() + ": not a farnn_core: ID reads " + hex(id) + ", expected " +
                             hex(cr::kIdValue) + " ('FARN'); is the right bitstream loaded?");
    }
    const uint32_t v = rd(cr::kRegVersion);
    const uint32_t major = field(v, cr::kVersionMajorMask, cr::kVersionMajorShift);
    const uint32_t minor = field(v, cr::kVersionMinorMask, cr::kVersionMinorShift);
    version_minor = minor;
    if (major != cr::kVersionMajorValue) {
      throw UnavailableError(t->describe() + ": the core is farnn_core " + std::to_string(major) + "." +
                             std::to_string(minor) + ", this driver speaks version " +
                             std::to_string(cr::kVersionMajorValue) +
                             ".x; load a matching bitstream or use the driver built with it");
    }
  }

  void read_caps() {
    const uint32_t c0 = rd(cr::kRegCaps0), c1 = rd(cr::kRegCaps1), c2 = rd(cr::kRegCaps2), c3 = rd(cr::kRegCaps3);
    const uint32_t c4 = rd(cr::kRegCaps4);
    // CAPS5 came with VERSION 1.1; a 1.0 core is one chain.
    const uint32_t c5 = version_minor >= 1 ? rd(cr::kRegCaps5) : 1u;
    caps.kind = opt.kind;
    caps.num_pe = static_cast<int>(field(c0, cr::kCaps0NumPeMask, cr::kCaps0NumPeShift));
    caps.num_chains = static_cast<int>(field(c5, cr::kCaps5NumChainsMask, cr::kCaps5NumChainsShift));
    caps.red_adder = field(c5, cr::kCaps5RedAdderMask, cr::kCaps5RedAdderShift) != 0;
    caps.num_banks = static_cast<int>(field(c0, cr::kCaps0NumBanksMask, cr::kCaps0NumBanksShift));
    caps.weight_lanes = static_cast<int>(field(c0, cr::kCaps0WeightLanesMask, cr::kCaps0WeightLanesShift));
    caps.max_hidden = static_cast<int>(field(c1, cr::kCaps1MaxHiddenMask, cr::kCaps1MaxHiddenShift));
    caps.max_batch = static_cast<int>(field(c1, cr::kCaps1MaxBatchMask, cr::kCaps1MaxBatchShift));
    caps.weight_depth = static_cast<int>(c2);
    const uint32_t cells = field(c3, cr::kCaps3CellsMask, cr::kCaps3CellsShift);
    caps.lstm = (cells >> static_cast<int>(cr::Cell::kLstm)) & 1u;
    caps.gru = (cells >> static_cast<int>(cr::Cell::kGru)) & 1u;
    caps.max_steps = 65535;  // the descriptor's 16-bit steps field
    caps.forward_records = engine::kForwardRecords;  // the sequencer's, fixed by the VERSION major
    // The gate store's address space bounds card memory; a board with less DDR says so (card_mib).
    const uint32_t store_bits = field(c4, cr::kCaps4StoreAddrWidthMask, cr::kCaps4StoreAddrWidthShift);
    num_windows = field(c3, cr::kCaps3NumWindowsMask, cr::kCaps3NumWindowsShift);
    const uint64_t space = store_bits >= 64 ? ~0ull : 1ull << store_bits;
    caps.card_memory_bytes = opt.card_bytes ? std::min(opt.card_bytes, space) : space;
    clock_hz = opt.clock_hz > 0 ? opt.clock_hz : t->link().core_clock_hz;
    if (!(clock_hz > 0)) clock_hz = rd(cr::kRegClockKhz) * 1e3;
    if (!(clock_hz > 0)) {
      throw UnavailableError(t->describe() + ": the core's clock is unknown (CLOCK_KHZ reads 0); pass core_mhz= "
                             "in the device URI");
    }
    caps.clock_mhz = clock_hz / 1e6;
    if (caps.num_pe < 1 || caps.num_banks < 1 || caps.max_hidden < 1 || caps.max_batch < 1 || num_windows < 1 ||
        caps.num_chains < 1 || caps.num_pe % caps.num_chains != 0) {
      throw UnavailableError(t->describe() + ": CAPS registers read " + hex(c0) + " " + hex(c1) + " " + hex(c2) + " " +
                             hex(c3) + " ... " + hex(c5) + ", which describe no usable core");
    }
    std::ostringstream os;
    os << t->describe() << "; core: " << caps.num_pe << " PEs in " << caps.num_chains
       << (caps.num_chains == 1 ? " chain, " : " chains, ") << caps.num_banks << " banks of "
       << caps.weight_depth << " words per PE, hidden <= " << caps.max_hidden << ", batch <= " << caps.max_batch
       << ", " << num_windows << " windows, " << clock_hz / 1e6 << " MHz";
    caps.description = os.str();
  }

  size_t image_words(CellKind cell, int hidden) const {
    engine::Config cfg{engine_cell(cell), hidden, 1, 1, caps.num_pe};
    engine::Weights w;
    w.w_hh.assign(static_cast<size_t>(cfg.gate_rows()) * hidden, 0);
    w.b_hh.assign(static_cast<size_t>(cfg.gate_rows()), 0);
    return engine::load_image(cfg, w, {caps.num_pe, caps.weight_lanes}).size();
  }

  // Ring, write-back, watchdog and interrupts (after open or a link recovery).
  void program() {
    wr64(cr::kRegRingBase, ring.bus);
    wr(cr::kRegRingSize, opt.ring_entries);
    wr64(cr::kRegRingWbAddr, wb.bus);
    const uint64_t wd = std::max<uint64_t>(1, cycles(std::chrono::duration_cast<nanoseconds>(
                                                  std::chrono::duration<double, std::micro>(opt.watchdog_us))));
    wr(cr::kRegWatchdog, static_cast<uint32_t>(std::min<uint64_t>(wd, 0xffffffffu)));
    sync_ring();
    ctrl = cr::kCtrlEnableMask | cr::kCtrlIrqDoneEnMask | cr::kCtrlIrqErrorEnMask;
    wr(cr::kRegCtrl, ctrl);
    windows_dirty = true;
    hw_last = read_hw();
    t->take_dma_activity();
  }

  void sync_ring() {
    const uint32_t head = rd(cr::kRegRingHead);
    tail = done = head;
    wr(cr::kRegRingTail, tail);
    set_wb_word(head);
    wr(cr::kRegIrqStatus, kIrqDone | kIrqError);
    last_progress = last_finish = t->now();
  }

  // CTRL.soft_reset and wait (bounded) until the core is idle again.
  void soft_reset(const std::string& why) {
    wr(cr::kRegCtrl, ctrl | cr::kCtrlSoftResetMask);
    const nanoseconds start = t->now();
    for (;;) {
      const uint32_t st = rd(cr::kRegStatus);
      if (st == 0xffffffffu) throw LinkError(where() + ": " + why + ": registers read all ones during a soft reset");
      if (!(st & (cr::kStatusResettingMask | cr::kStatusHaltedMask | cr::kStatusBusyMask))) break;
      if (t->now() - start > kResetLimit) {
        // The core ends a soft reset once every DMA beat it has issued is
        // answered: a link or host that holds one back holds the reset.
        const std::string again = why == "open"    ? "open the device again"
                                  : why == "close" ? "the next open resets it again"
                                                   : "call reset() again";
        throw TimeoutError(where() + ": " + why + ": the core did not finish its soft reset within " +
                           std::to_string(kResetLimit.count() / 1000000) + " ms (STATUS " + hex(st) +
                           "): it waits for host-memory accesses the link has not answered; " + again +
                           " once the link moves, and power-cycle or reprogram the card only if it never finishes");
      }
      t->wait_interrupt(0, kSlice);
    }
    if (ring.cpu != nullptr) sync_ring();
  }

  HwCounters read_hw() {
    return {rd64(cr::kRegCntBusyCycles), rd64(cr::kRegCntMacs), rd64(cr::kRegCntHostRdBytes),
            rd64(cr::kRegCntHostWrBytes), rd64(cr::kRegCntNonfinite)};
  }

  // ---- windows: every mapping covered, merged to num_windows ranges
  void write_windows() {
    std::vector<Mapping> m;
    for (const DmaRegion* r : {&ring, &wb, &lengths, &zeros, &discard}) m.push_back({r->bus, r->bytes, true, true, ""});
    for (const DmaRegion& r : staging) m.push_back({r.bus, r.bytes, true, false, ""});
    for (const auto& [b, map] : buffers) m.push_back(map);
    std::sort(m.begin(), m.end(), [](const Mapping& a, const Mapping& b) { return a.bus < b.bus; });
    while (m.size() > num_windows) {  // close the smallest gap
      size_t best = 0;
      uint64_t gap = ~0ull;
      for (size_t i = 0; i + 1 < m.size(); ++i) {
        const uint64_t end = m[i].bus + m[i].bytes;
        const uint64_t g = m[i + 1].bus > end ? m[i + 1].bus - end : 0;
        if (g < gap) gap = g, best = i;
      }
      Mapping& a = m[best];
      const Mapping& b = m[best + 1];
      a.bytes = std::max(a.bus + a.bytes, b.bus + b.bytes) - a.bus;
      a.read = a.read || b.read;
      a.write = a.write || b.write;
      m.erase(m.begin() + static_cast<long>(best) + 1);
    }
    for (unsigned i = 0; i < num_windows; ++i) {
      const Mapping w = i < m.size() ? m[i] : Mapping{};
      wr(cr::kRegWinCtrl(i), 0);  // off while it changes
      wr64(cr::kRegWinBase(i), w.bus);
      wr64(cr::kRegWinSize(i), w.bytes);
      wr(cr::kRegWinCtrl(i), (w.read ? cr::kWinCtrlReadMask : 0u) | (w.write ? cr::kWinCtrlWriteMask : 0u));
    }
    windows_dirty = false;
  }

  // ---- the ring
  // `lengths`: a FORWARD/BACKWARD's shape, whose per-slot lengths go to the
  // staging of the ring slot the descriptor takes (free once the ring has room).
  void push(cr::Descriptor d, Pending p, const LayerShape* lengths = nullptr) {
    if (!failure.empty()) {
      p.job->finish(JobReport{p.job->what(), {}, {}, {}, {}, {}}, std::make_exception_ptr(NotRunError(
                                         p.job->what() + ": not run, an earlier command failed (" + failure +
                                         "); call reset()")));
      return;
    }
    if (d.gate_enable && !d.gate_poll) {
      p.doorbell = d.gate_select;
      p.steps = d.steps;
    }
    if (windows_dirty) {
      wait_until([&] { return pending.empty(); }, Clock::now() + std::chrono::minutes(10), "window update");
      if (!failure.empty()) return push(d, std::move(p), lengths);
      write_windows();
    }
    wait_until([&] { return tail - done < opt.ring_entries; }, Clock::now() + std::chrono::minutes(10), "ring space");
    if (!failure.empty()) return push(d, std::move(p), lengths);
    if (lengths != nullptr) {
      auto* slot = reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(this->lengths.cpu) +
                                               size_t{tail % opt.ring_entries} * lengths_stride);
      for (int b = 0; b < lengths->batch; ++b) slot[b] = static_cast<uint32_t>(lengths->length(b));
      d.addr0 = this->lengths.bus + uint64_t{tail % opt.ring_entries} * lengths_stride;
    }
    const auto words = d.encode();
    std::memcpy(static_cast<uint8_t*>(ring.cpu) + size_t{tail % opt.ring_entries} * cr::kDescBytes, words.data(),
                cr::kDescBytes);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // descriptor in memory before the doorbell
    p.seq = tail;
    p.submitted = t->now();
    p.host_submitted = Clock::now();
    if (p.bank >= 0) ++bank_users[static_cast<size_t>(p.bank)];
    if (pending.empty()) last_progress = p.submitted;
    pending.push_back(std::move(p));
    ++tail;
    wr(cr::kRegRingTail, tail);
  }

  // A command submitted now would wait, in push(), for the queue to empty
  // (the address windows are rewritten then) or for ring space; a queued
  // command waiting on a doorbell only this caller can ring would make that
  // wait last for ever. Refused before the command changes anything.
  void refuse_if_gate_holds_queue(const std::string& what) {
    const Pending* q = waiting_on_doorbell();  // retires what finished first: `done` is current below
    const bool must_wait = windows_dirty || tail - done >= opt.ring_entries;
    if (q != nullptr && must_wait) {
      throw InvalidArgumentError(what + ": " +
                                 (windows_dirty ? std::string("buffers registered or freed since the queued commands "
                                                              "were submitted need the address windows rewritten, "
                                                              "which waits for the queue to empty")
                                                : std::string("the command ring is full")) +
                                 ", and " + doorbell_wait(*q) +
                                 ": ring it first, or register the buffers before submitting the gated command");
    }
  }

  // The first queued command that waits on a step doorbell not yet rung to
  // its steps, or none (what has finished is retired first).
  const Pending* waiting_on_doorbell() {
    progress();
    for (const Pending& q : pending) {
      if (q.doorbell >= 0 && rd(cr::kRegStepDoorbell(static_cast<unsigned>(q.doorbell))) < q.steps) return &q;
    }
    return nullptr;
  }
  std::string doorbell_wait(const Pending& q) {
    return q.job->what() + " waits on step doorbell " + std::to_string(q.doorbell) + " (rung to " +
           std::to_string(rd(cr::kRegStepDoorbell(static_cast<unsigned>(q.doorbell)))) + " of its " +
           std::to_string(q.steps) + " steps)";
  }

  // Retires what the write-back word says is done.
  void progress() {
    const uint32_t now_done = wb_word();
    if (now_done == done) return;
    bool any = false;
    while (!pending.empty() && static_cast<int32_t>(now_done - pending.front().seq) > 0) {
      retire(pending.front(), pending.size() == 1 || static_cast<int32_t>(now_done - pending[1].seq) <= 0);
      pending.pop_front();
      any = true;
    }
    done = now_done;
    if (any) last_progress = t->now();
  }

  void release(const Pending& p) {
    if (p.bank >= 0 && bank_users[static_cast<size_t>(p.bank)] > 0) --bank_users[static_cast<size_t>(p.bank)];
  }

  // A completed descriptor; the counters moved since the last completion are
  // its (`last`: the newest of those seen together reads them).
  void retire(const Pending& p, bool last) {
    Counters d = p.counts;
    count_nonfinite(p.data, d);
    const nanoseconds now = t->now();
    DmaActivity dma;
    if (last) {
      dma = t->take_dma_activity();
      const HwCounters hw = read_hw();
      d.cycles = hw.busy - hw_last.busy;
      d.macs = hw.macs - hw_last.macs;
      d.words_read = (hw.rd - hw_last.rd) / 4;
      d.words_written = (hw.wr - hw_last.wr) / 4;
      d.busy_seconds = static_cast<double>(d.cycles) / clock_hz;
      hw_last = hw;
    }
    accumulate(d);
    const nanoseconds start = std::max(p.submitted, last_finish);
    last_finish = now;
    const Clock::time_point host_start = std::max(p.host_submitted, host_last_finish);
    host_last_finish = host_start + std::chrono::duration_cast<Clock::duration>(now - start);
    release(p);
    // Device time -> the host clock this job's span is drawn on.
    const auto host = [&](nanoseconds at) { return host_start + std::chrono::duration_cast<Clock::duration>(at - start); };
    const auto on_host = [&](const DmaWindow& w) {
      return w.bytes ? JobReport::Dma{w.bytes, host(w.first), host(w.last)} : JobReport::Dma{};
    };
    p.job->finish({p.job->what(), d, host_start, host_last_finish, on_host(dma.to_card), on_host(dma.to_host)},
                  nullptr);
  }

  void accumulate(const Counters& d) {
    totals.loads += d.loads;
    totals.forwards += d.forwards;
    totals.backwards += d.backwards;
    totals.nonfinite_inputs += d.nonfinite_inputs;
    totals.nonfinite_outputs += d.nonfinite_outputs;
  }

  // The pending command at ring index `seq`; the head where none is.
  const Pending& pending_at(uint32_t seq) const {
    for (const Pending& p : pending) {
      if (p.seq == seq) return p;
    }
    return pending.front();
  }

  // Fails the command `failed` (the head where null) with `error`, the rest
  // with NotRunError, and remembers the failure. A LOAD runs beside the
  // FORWARD or BACKWARD ahead of it, so the one at fault need not be the head;
  // a fault stops every command the core holds.
  void fail_all(std::exception_ptr error, const std::string& message, const Pending* failed = nullptr) {
    if (!failed && !pending.empty()) failed = &pending.front();
    for (Pending& p : pending) {
      release(p);
      ++totals.failed;
      const std::exception_ptr e =
          &p == failed ? error
                       : std::make_exception_ptr(NotRunError(
                             p.job->what() +
                             (static_cast<int32_t>(p.seq - failed->seq) < 0
                                  ? ": stopped unfinished by a fault in a later command ("
                                  : ": not run, an earlier command failed (") +
                             message + "); call reset()"));
      p.job->finish({p.job->what(), {}, p.host_submitted, Clock::now(), {}, {}}, e);
    }
    pending.clear();
    if (failure.empty()) failure = message;
  }

  // The ring halted: decode the fault, fail the commands, soft-reset.
  void on_halt() {
    progress();
    const uint32_t st = rd(cr::kRegStatus);
    const uint32_t info = rd(cr::kRegFaultInfo);
    const uint32_t desc = rd(cr::kRegFaultDesc);
    const uint64_t addr = rd64(cr::kRegFaultAddr);
    const auto err = static_cast<cr::Error>(field(st, cr::kStatusErrorMask, cr::kStatusErrorShift));
    const auto kind = static_cast<cr::FaultKind>(field(info, cr::kFaultInfoKindMask, cr::kFaultInfoKindShift));
    const auto stream = static_cast<cr::Stream>(field(info, cr::kFaultInfoStreamMask, cr::kFaultInfoStreamShift));
    // FAULT_DESC names the command at fault (a LOAD beside a running FORWARD, say).
    const Pending* failed = pending.empty() ? nullptr : &pending_at(desc);
    std::ostringstream os;
    os << (failed ? failed->job->what() : std::string("descriptor ") + std::to_string(desc))
       << ": the " << where() << " failed it with " << cr::to_string(err) << " (" << cr::describe(err) << ")";
    // The engine's faults (its watchdog, its refusals) name the stream it
    // waited on or refused but log no address; a WAIT's watchdog logs the word it polled.
    const bool engine_fault = kind == cr::FaultKind::kEngine ||
                              (kind == cr::FaultKind::kTimeout && stream != cr::Stream::kWaitPoll);
    if (kind != cr::FaultKind::kNone && stream == cr::Stream::kNone) {
      os << "; " << cr::to_string(kind);  // no stream: no address to name
    } else if (kind != cr::FaultKind::kNone && engine_fault) {
      os << "; " << cr::to_string(kind) << " on stream " << cr::to_string(stream) << " (the engine's fault: no address)";
    } else if (kind != cr::FaultKind::kNone) {
      os << "; " << cr::to_string(kind) << " on stream " << cr::to_string(stream) << " at " << hex(addr) << " ("
         << locate(addr, stream == cr::Stream::kGateStore) << ")";
    }
    if (err == cr::Error::kNoForward) {
      os << "; a BACKWARD must match a FORWARD among the core's newest " << caps.forward_records
         << " (same shape, lengths, bank and gate store): run its FORWARD again first";
    }
    os << "; the core was reset";
    const std::string msg = os.str();
    std::exception_ptr e;
    if (err == cr::Error::kTimeout || err == cr::Error::kAborted) {
      e = std::make_exception_ptr(TimeoutError(msg + "; the device made no progress within its watchdog"));
    } else if (err == cr::Error::kBus || err == cr::Error::kWindow) {
      e = std::make_exception_ptr(DmaError(msg));
    } else {
      e = std::make_exception_ptr(CommandError(msg));
    }
    fail_all(e, msg, failed);
    soft_reset("after " + std::string(cr::to_string(err)));
  }

  nanoseconds idle_limit() const {
    if (!(clock_hz > 0)) return kIdleLimit;
    const auto cycles = nanoseconds(static_cast<int64_t>(kIdleCycles / clock_hz * 1e9));
    return std::max(kIdleLimit, cycles);
  }

  std::string locate(uint64_t addr, bool card_memory) const {
    if (card_memory) return "card memory";
    for (const auto& [b, m] : buffers) {
      if (addr >= m.bus && addr < m.bus + m.bytes) {
        return "in buffer '" + m.name + "', word " + std::to_string((addr - m.bus) / 4);
      }
    }
    for (const DmaRegion* r : {&ring, &wb, &lengths, &zeros, &discard}) {
      if (addr >= r->bus && addr < r->bus + r->bytes) return "in the driver's own memory";
    }
    for (size_t b = 0; b < staging.size(); ++b) {
      if (addr >= staging[b].bus && addr < staging[b].bus + staging[b].bytes) {
        return "in the driver's weight image for bank " + std::to_string(b);
      }
    }
    return "in no registered buffer";
  }

  void on_link_down(const std::string& context) {
    const std::string msg = where() + ": the link went down (registers read all ones) during " + context;
    fail_all(std::make_exception_ptr(LinkError(msg + "; the device was reset")), msg);
    relink();
  }

  // After a link down: bring it back and program the core again.
  void relink() {
    link_lost = true;
    if (!t->recover_link()) return;  // reset() tries again
    check_identity();
    soft_reset("link recovery");
    program();
    link_lost = false;
  }

  // The core is idle with descriptors queued: did it ever see the doorbell?
  void on_idle_with_work() {
    const uint32_t seen = rd(cr::kRegRingTail);
    std::string msg = pending.front().job->what() + ": the " + where() + " is idle with " +
                      std::to_string(pending.size()) + " command(s) queued; ";
    if (seen != tail) {
      msg += "RING_TAIL reads " + std::to_string(seen) + " but the driver wrote " + std::to_string(tail) +
             ": the doorbell was lost on the link; the core was reset";
    } else {
      msg += "RING_TAIL reads " + std::to_string(seen) + " as written, RING_DONE " + std::to_string(rd(cr::kRegRingDone)) +
             ": the core did not start them; the core was reset";
    }
    fail_all(std::make_exception_ptr(TimeoutError(msg)), msg);
    soft_reset("idle ring");
  }

  // Waits on interrupts until `ready()` or a failure; throws TimeoutError at
  // the host deadline. `open`: a wait of the API, which lets other threads
  // use the device between its slices (CoreMutex::let_in).
  template <class Ready>
  void wait_until(Ready ready, Clock::time_point deadline, const std::string& what, bool open = false) {
    int quiet = 0;
    while (!ready() && !pending.empty() && failure.empty()) {
      if (open) {
        m.let_in();
        if (ready() || pending.empty() || !failure.empty()) break;
      }
      if (Clock::now() > deadline) {
        throw TimeoutError(what + ": not finished by the host deadline; the device is still working (call wait "
                           "again, or reset())");
      }
      const uint32_t fired = t->wait_interrupt(kIrqDone | kIrqError, kSlice);
      if (fired) wr(cr::kRegIrqStatus, fired);
      progress();
      if (!fired && ++quiet < 8 && !pending.empty()) continue;
      quiet = 0;
      if (pending.empty()) continue;
      const uint32_t st = rd(cr::kRegStatus);
      if (st == 0xffffffffu && rd(cr::kRegId) == 0xffffffffu) {
        on_link_down(what);
      } else if (st & cr::kStatusHaltedMask) {
        on_halt();
      } else if (!(st & cr::kStatusBusyMask) && t->now() - last_progress > idle_limit()) {
        progress();
        if (!pending.empty()) on_idle_with_work();
      }
    }
  }

  void wait_job(const CoreJob& job, Clock::time_point deadline) {
    wait_until([&] { return job.finished(); }, deadline, job.what(), true);
  }

  // ---- reset() of the API
  void reset() {
    const std::string msg = "dropped by reset()";
    for (Pending& p : pending) {
      release(p);
      p.job->finish(JobReport{p.job->what(), {}, {}, {}, {}, {}},
                    std::make_exception_ptr(NotRunError(p.job->what() + ": " + msg)));
    }
    pending.clear();
    if (link_lost) {
      relink();
      if (link_lost) throw LinkError(where() + ": the link is still down after a reset; check the card");
    } else {
      soft_reset("reset()");
    }
    hw_last = read_hw();
    t->take_dma_activity();
    failure.clear();
    std::fill(bank_users.begin(), bank_users.end(), 0);
    std::fill(bank_shape.begin(), bank_shape.end(), std::nullopt);
  }

  ~Core() {
    if (!t) return;
    for (const DmaRegion* r : {&ring, &wb, &lengths, &zeros, &discard}) {
      if (r->cpu) t->free_dma(*r);
    }
    for (const DmaRegion& r : staging) t->free_dma(r);
  }
};

// Called with the core's mutex held.
void CoreBuffer::unmap_foreign() {
  if (owned_ || !mapped_ || words_ == 0) return;
  core_->t->unmap_foreign(bus_, words_ * 4);
  mapped_ = false;
}

CoreBuffer::~CoreBuffer() {
  std::lock_guard<CoreMutex> lock(core_->m);
  core_->buffers.erase(this);
  core_->windows_dirty = true;
  if (owned_) {
    core_->t->free_dma(*owned_);
  } else {
    unmap_foreign();
  }
}

CoreGateStore::~CoreGateStore() {
  std::lock_guard<CoreMutex> lock(core_->m);
  core_->card.erase(base_);
}

bool CoreJob::done() const {
  if (done_.load()) return true;
  if (auto core = core_.lock()) {
    std::lock_guard<CoreMutex> lock(core->m);
    core->progress();
  }
  return done_.load();
}

// As the base, but through the core's waits, so simulated time advances.
uint32_t CoreJob::wait_progress(const BufferRef& progress, uint32_t steps,
                                std::chrono::milliseconds limit) {
  if (!progress) throw InvalidArgumentError("wait_progress: no progress word given");
  if (progress.load_word() < steps && !done_.load()) {
    if (auto core = core_.lock()) {
      std::lock_guard<CoreMutex> lock(core->m);
      core->wait_until([&] { return progress.load_word() >= steps || done_.load(); },
                       Clock::now() + wait_limit(limit, what_), what_, true);
    }
  }
  return progress.load_word();
}

JobReport CoreJob::wait(std::chrono::milliseconds limit) {
  if (!done_.load()) {
    auto core = core_.lock();
    if (!core) throw NotRunError(what_ + ": the device was closed before it finished");
    std::lock_guard<CoreMutex> lock(core->m);
    core->wait_job(*this, Clock::now() + wait_limit(limit, what_));
  }
  return result();
}

class CoreDevice final : public Device {
 public:
  explicit CoreDevice(std::shared_ptr<Core> core) : core_(std::move(core)) {}
  ~CoreDevice() override {
    std::lock_guard<CoreMutex> lock(core_->m);
    std::string why = "device closed";
    try {
      if (const Pending* q = core_->waiting_on_doorbell()) {
        why = "device closed while " + core_->doorbell_wait(*q);  // nobody can ring it now
        core_->soft_reset("close");  // the core lets go of the buffers before they are released
      } else {
        core_->wait_until([] { return false; }, Clock::now() + std::chrono::seconds(30), "close");
      }
    } catch (const DeviceError&) {
    }
    core_->fail_all(std::make_exception_ptr(NotRunError(why)), why);
  }

  const Capabilities& caps() const override { return core_->caps; }

  BufferPtr alloc(size_t words, Access access, const std::string& name) override {
    check_buffer_words(words, "alloc", name);
    std::lock_guard<CoreMutex> lock(core_->m);
    const DmaRegion r = core_->t->alloc_dma(std::max<size_t>(words, 1) * 4, name);
    return add(std::make_shared<CoreBuffer>(core_, static_cast<float*>(r.cpu), r.bus, words, access, name, r));
  }

  BufferPtr register_memory(float* ptr, size_t words, Access access, const std::string& name) override {
    check_registration(ptr, words, name);
    std::lock_guard<CoreMutex> lock(core_->m);
    const uint64_t bus = words > 0 ? core_->t->map_foreign(ptr, words * 4, name) : 0;
    return add(std::make_shared<CoreBuffer>(core_, ptr, bus, words, access, name, std::nullopt));
  }

  void unregister(const BufferPtr& buffer) override {
    std::lock_guard<CoreMutex> lock(core_->m);
    if (!buffer || core_->buffers.erase(buffer.get()) == 0) {
      throw BufferError("unregister: buffer '" + (buffer ? buffer->name() : std::string("(null)")) +
                        "' is not registered with this device");
    }
    core_->windows_dirty = true;
    // A queued command that still reaches foreign memory faults (DECERR), never touches it after this.
    static_cast<CoreBuffer*>(buffer.get())->unmap_foreign();
  }

  GateStorePtr alloc_gate_store(const LayerShape& shape) override {
    check_shape(shape, core_->caps, "alloc_gate_store");
    const uint64_t bytes = static_cast<uint64_t>(shape.packed_steps()) * shape.hidden * engine::kRecordWords * 4;
    const uint64_t size = (bytes + 4095) / 4096 * 4096;
    std::lock_guard<CoreMutex> lock(core_->m);
    uint64_t base = 0, used = 0;
    for (const auto& [b, n] : core_->card) {  // first fit
      if (b - base >= size) break;
      base = b + n;
    }
    for (const auto& [b, n] : core_->card) used += n;
    if (base + size > core_->caps.card_memory_bytes) {
      throw CapacityError("alloc_gate_store " + shape.describe() + ": needs " + std::to_string(bytes) +
                          " bytes of card memory, " + std::to_string(core_->caps.card_memory_bytes - used) + " of " +
                          std::to_string(core_->caps.card_memory_bytes) +
                          " are free (or fragmented); release gate stores or shorten the sequence");
    }
    core_->card[base] = size;
    return std::make_shared<CoreGateStore>(core_, shape, base, size);
  }

  JobPtr load(int bank, const LayerShape& shape, BufferRef w_hh, BufferRef b_hh) override {
    const std::string what = "LOAD " + shape.describe_weights() + " bank " + std::to_string(bank);
    check_bank(bank, core_->caps, what);
    check_shape(shape, core_->caps, what, ShapeUse::kWeights);
    const size_t gh = static_cast<size_t>(shape.gates()) * shape.hidden;
    std::lock_guard<CoreMutex> lock(core_->m);
    core_->refuse_if_gate_holds_queue(what);
    const std::vector<Range> ranges = load_ranges(shape, w_hh, b_hh);
    check_ranges(ranges, what, mine());
    if (core_->bank_users[static_cast<size_t>(bank)] > 0) {
      throw BankBusyError(what + ": bank " + std::to_string(bank) + " is still in use by " +
                          std::to_string(core_->bank_users[static_cast<size_t>(bank)]) +
                          " queued or running command(s); load the other bank or wait for them");
    }
    // The bank's staging image is free once an earlier LOAD of it has completed.
    core_->wait_until([&] { return !loading(bank); }, Clock::now() + std::chrono::minutes(10), what);
    engine::Config cfg{engine_cell(shape.cell), shape.hidden, 1, 1, core_->caps.num_pe};
    engine::Weights w;
    w.w_hh.resize(gh * shape.hidden);
    w.b_hh.resize(gh);
    std::memcpy(w.w_hh.data(), w_hh.buffer->data() + w_hh.offset, 4 * w.w_hh.size());
    std::memcpy(w.b_hh.data(), b_hh.buffer->data() + b_hh.offset, 4 * w.b_hh.size());
    const auto image = engine::load_image(cfg, w, {core_->caps.num_pe, core_->caps.weight_lanes});
    const DmaRegion& st = core_->staging[static_cast<size_t>(bank)];
    std::memcpy(st.cpu, image.data(), image.size() * 4);
    cr::Descriptor d;
    d.op = cr::Op::kLoad;
    d.irq = true;
    d.cell = desc_cell(shape.cell);
    d.bank = static_cast<uint8_t>(bank);
    d.hidden = static_cast<uint16_t>(shape.hidden);
    d.addr0 = st.bus;
    d.len0 = static_cast<uint32_t>(image.size() * 4);
    core_->bank_shape[static_cast<size_t>(bank)] = std::make_pair(shape.cell, shape.hidden);
    Counters c;
    c.loads = 1;
    return submit(d, what, -1, bank, c, ranges);
  }

  JobPtr forward(const ForwardArgs& a) override {
    const LayerShape& s = a.shape;
    const std::string what = checked_command("FORWARD", s, a.bank, core_->caps);
    const std::vector<Range> ranges = forward_ranges(a, what);
    std::lock_guard<CoreMutex> lock(core_->m);
    core_->refuse_if_gate_holds_queue(what);
    check_ranges(ranges, what, mine());
    auto store = checked_store(a.store, s, what);
    check_bank_holds(core_->bank_shape[static_cast<size_t>(a.bank)], s, a.bank, what);
    store->filled_by = s;
    cr::Descriptor d = run_desc(s, a.bank, a.watchdog_cycles, a.sync, *store);
    d.op = cr::Op::kForward;
    d.in_addr = bus(a.xp);
    d.out_addr = bus(a.h);
    d.state_in_addr = a.state_in ? bus(a.state_in) : core_->zeros.bus;
    d.state_out_addr = a.state_out ? bus(a.state_out) : core_->discard.bus;
    Counters c;
    c.forwards = 1;
    return submit(d, what, a.bank, -1, c, ranges, &s);
  }

  JobPtr backward(const BackwardArgs& a) override {
    const LayerShape& s = a.shape;
    const std::string what = checked_command("BACKWARD", s, a.bank, core_->caps);
    const std::vector<Range> ranges = backward_ranges(a, what);
    std::lock_guard<CoreMutex> lock(core_->m);
    core_->refuse_if_gate_holds_queue(what);
    check_ranges(ranges, what, mine());
    auto store = checked_store(a.store, s, what);
    check_bank_holds(core_->bank_shape[static_cast<size_t>(a.bank)], s, a.bank, what);
    check_store_filled(store->filled_by, s, what);
    cr::Descriptor d = run_desc(s, a.bank, a.watchdog_cycles, a.sync, *store);
    d.op = cr::Op::kBackward;
    d.in_addr = bus(a.dh);
    d.out_addr = bus(a.delta);
    d.state_in_addr = a.carry_in ? bus(a.carry_in) : core_->zeros.bus;
    d.state_out_addr = a.dstate ? bus(a.dstate) : core_->discard.bus;
    Counters c;
    c.backwards = 1;
    return submit(d, what, a.bank, -1, c, ranges, &s);
  }

  void ring_step_doorbell(int index, uint32_t count) override {
    check_doorbell(index);
    std::lock_guard<CoreMutex> lock(core_->m);
    core_->wr(cr::kRegStepDoorbell(static_cast<unsigned>(index)), count);
  }

  void drain(std::chrono::milliseconds limit) override {
    const std::shared_ptr<Core> core = core_;  // another thread may close the device while this one waits
    std::lock_guard<CoreMutex> lock(core->m);
    core->wait_until([&] { return core->pending.empty(); }, Clock::now() + wait_limit(limit, "drain"), "drain",
                     true);
  }

  Counters counters() const override {
    std::lock_guard<CoreMutex> lock(core_->m);
    Counters c = core_->totals;
    if (core_->link_lost) return c;
    const HwCounters hw = core_->read_hw();
    c.cycles = hw.busy;
    c.macs = hw.macs;
    c.words_read = hw.rd / 4;
    c.words_written = hw.wr / 4;
    c.busy_seconds = static_cast<double>(hw.busy) / core_->clock_hz;
    return c;
  }

  void reset() override {
    std::lock_guard<CoreMutex> lock(core_->m);
    core_->reset();
  }

  void inject_fault(const FaultPlan& plan) override {
    if (!core_->opt.inject) Device::inject_fault(plan);
    std::lock_guard<CoreMutex> lock(core_->m);
    core_->opt.inject(plan);
  }

  bool fault_armed() const override {
    if (!core_->opt.fault_armed) return false;
    std::lock_guard<CoreMutex> lock(core_->m);
    return core_->opt.fault_armed();
  }

  // The core's own checks in front of every device's layer checks.
  std::vector<NamedCheck> self_checks() override {
    std::vector<NamedCheck> checks;
    checks.push_back({"scratch register", [this] {
      std::lock_guard<CoreMutex> lock(core_->m);
      for (uint32_t v : {0xa5a5a5a5u, 0x5a5a5a5au, 0xffffffffu, 0x00000000u, 0x12345678u}) {
        core_->wr(cr::kRegScratch, v);
        const uint32_t got = core_->rd(cr::kRegScratch);
        if (got != v) throw DeviceError("wrote " + hex(v) + ", read " + hex(got));
      }
      return std::string("5 patterns written and read back");
    }});
    // A host word the core writes (SIGNAL), then one it waits on (WAIT polls
    // it): both directions of the host master. Each check has a buffer of its
    // own, so a fault that takes one's page away fails that check alone; they
    // live as long as the checks, past the reset after a failed one (a command
    // it left queued may still write its word until then).
    const BufferPtr signal_word = alloc(16, Access::kReadWrite, "selftest SIGNAL word");
    const BufferPtr wait_word = alloc(16, Access::kReadWrite, "selftest WAIT word");
    checks.push_back({"DMA write (SIGNAL to host memory)", [this, word = signal_word] {
      cr::Descriptor d;
      d.op = cr::Op::kSignal;
      d.addr0 = word->bus_address();
      d.value = 0xc0ffee01u;
      run_raw(d, "SIGNAL");
      uint32_t got;
      std::memcpy(&got, word->data(), 4);
      if (got != d.value) throw DeviceError("the word reads " + hex(got) + ", expected " + hex(d.value));
      return "the core wrote " + hex(d.value) + " at " + hex(d.addr0);
    }});
    checks.push_back({"DMA read (WAIT on a host word)", [this, word = wait_word] {
      const uint32_t v = 0x00abcdefu;
      std::memcpy(word->data() + 1, &v, 4);
      cr::Descriptor d;
      d.op = cr::Op::kWait;
      d.addr0 = word->bus_address() + 4;
      d.value = v;
      d.watchdog = static_cast<uint32_t>(core_->clock_hz * 1e-3);  // 1 ms
      run_raw(d, "WAIT");
      return "the core read " + hex(v) + " at " + hex(d.addr0);
    }});
    checks.push_back({"window refusal", [this] {
      cr::Descriptor d;
      d.op = cr::Op::kSignal;
      d.addr0 = 0x40;  // below every mapping: in no window
      d.value = 1;
      try {
        run_raw(d, "SIGNAL outside the windows");
      } catch (const DmaError& e) {
        if (std::string(e.what()).find("ERR_WINDOW") == std::string::npos) throw;
        return std::string("a write to 0x40 was refused with ERR_WINDOW");
      }
      throw DeviceError("a write to 0x40, outside every window, was not refused");
    }});
    for (NamedCheck& c : Device::self_checks()) checks.push_back(std::move(c));
    return checks;
  }

  std::vector<std::string> status_report() override {
    std::lock_guard<CoreMutex> lock(core_->m);
    Core& c = *core_;
    std::vector<std::string> lines{c.caps.description};
    if (c.link_lost) return lines.push_back("link: DOWN (reset() tries to recover it)"), lines;
    const uint32_t v = c.rd(cr::kRegVersion), st = c.rd(cr::kRegStatus);
    std::ostringstream os;
    os << "core: ID " << hex(c.rd(cr::kRegId)) << ", version " << field(v, cr::kVersionMajorMask, cr::kVersionMajorShift)
       << "." << field(v, cr::kVersionMinorMask, cr::kVersionMinorShift) << ", build " << hex(c.rd(cr::kRegBuildId))
       << ", CLOCK_KHZ " << c.rd(cr::kRegClockKhz);
    lines.push_back(os.str());
    os.str("");
    os << "link: " << c.t->link().name << (c.t->link().simulated ? " (simulated)" : "") << ", core clock "
       << c.clock_hz / 1e6 << " MHz";
    lines.push_back(os.str());
    os.str("");
    os << "status: " << hex(st) << (st & cr::kStatusBusyMask ? " busy" : " idle")
       << (st & cr::kStatusHaltedMask ? " halted" : "") << ", error "
       << cr::to_string(static_cast<cr::Error>(field(st, cr::kStatusErrorMask, cr::kStatusErrorShift)));
    lines.push_back(os.str());
    os.str("");
    os << "ring: base " << hex(c.rd64(cr::kRegRingBase)) << ", " << c.rd(cr::kRegRingSize) << " entries, head "
       << c.rd(cr::kRegRingHead) << ", tail " << c.rd(cr::kRegRingTail) << ", done " << c.rd(cr::kRegRingDone)
       << ", write-back " << hex(c.rd64(cr::kRegRingWbAddr)) << "; " << c.pending.size() << " in flight";
    lines.push_back(os.str());
    const HwCounters hw = c.read_hw();
    os.str("");
    os << "counters: " << hw.busy << " busy cycles, " << hw.macs << " MACs, " << hw.rd
       << " bytes read, " << hw.wr << " bytes written, " << hw.nonfinite
       << " units with a NaN/Inf output";
    lines.push_back(os.str());
    if (c.windows_dirty && c.pending.empty()) c.write_windows();
    for (unsigned i = 0; i < c.num_windows; ++i) {
      const uint32_t wc = c.rd(cr::kRegWinCtrl(i));
      os.str("");
      os << "window " << i << ": base " << hex(c.rd64(cr::kRegWinBase(i))) << ", " << c.rd64(cr::kRegWinSize(i))
         << " bytes, " << ((wc & cr::kWinCtrlReadMask) ? "r" : "-") << ((wc & cr::kWinCtrlWriteMask) ? "w" : "-");
      lines.push_back(os.str());
    }
    return lines;
  }

 private:
  // One descriptor the Device API has no call for (selftest), run to completion.
  void run_raw(cr::Descriptor d, const std::string& what) {
    d.irq = true;
    auto job = std::make_shared<CoreJob>(core_, what);
    {
      std::lock_guard<CoreMutex> lock(core_->m);
      core_->push(d, {0, job, -1, -1, {}, {}, {}, {}});
    }
    job->wait(std::chrono::seconds(60));
  }

  static cr::Cell desc_cell(CellKind c) { return c == CellKind::kLstm ? cr::Cell::kLstm : cr::Cell::kGru; }
  static uint64_t bus(const BufferRef& r) { return r.buffer->bus_address() + 4 * r.offset; }

  BufferPtr add(std::shared_ptr<CoreBuffer> b) {
    Mapping m{b->bus_address(), b->size() * 4, readable(b->access()), writable(b->access()), b->name()};
    if (m.bytes > 0) {
      core_->buffers[b.get()] = m;
      core_->windows_dirty = true;
    }
    return b;
  }

  std::function<bool(const Buffer*)> mine() const {
    return [core = core_.get()](const Buffer* b) { return core->buffers.count(b) > 0; };
  }

  bool loading(int bank) const {
    for (const Pending& p : core_->pending) {
      if (p.load_bank == bank) return true;
    }
    return false;
  }



  std::shared_ptr<CoreGateStore> checked_store(const GateStorePtr& p, const LayerShape& s, const std::string& what) {
    auto store = std::dynamic_pointer_cast<CoreGateStore>(p);
    if (!store) throw BufferError(what + ": gate store is missing or belongs to another device");
    const uint64_t need = static_cast<uint64_t>(s.packed_steps()) * s.hidden * engine::kRecordWords * 4;
    if (need > store->bytes()) {
      throw BufferError(what + ": needs " + std::to_string(need) + " bytes of gate store, the store holds " +
                        std::to_string(store->bytes()) + " (sized for " + store->capacity_shape().describe() + ")");
    }
    return store;
  }

  // The fields FORWARD and BACKWARD share; the lengths go to the ring slot's staging.
  // A gated command without a watchdog of its own gets the longest one: its
  // waits on the producer are not a stall of the device.
  cr::Descriptor run_desc(const LayerShape& s, int bank, uint32_t watchdog, const StepSync& sync,
                          const CoreGateStore& store) {
    cr::Descriptor d;
    d.irq = true;
    d.cell = desc_cell(s.cell);
    d.bank = static_cast<uint8_t>(bank);
    d.hidden = static_cast<uint16_t>(s.hidden);
    d.batch = static_cast<uint16_t>(s.batch);
    d.steps = static_cast<uint16_t>(s.steps);
    d.watchdog = watchdog != 0 || !sync.gated() ? watchdog : 0xffffffffu;
    d.store_base = store.base();
    d.store_size = store.bytes();
    d.gate_enable = sync.gated();
    d.gate_poll = static_cast<bool>(sync.ready);
    d.gate_addr = sync.ready ? bus(sync.ready) : 0;
    d.gate_select = static_cast<uint8_t>(std::max(sync.doorbell, 0));
    if (sync.progress) {
      d.progress_every = static_cast<uint16_t>(sync.every);
      d.progress_addr = bus(sync.progress);
    }
    return d;
  }

  // `shape`: a FORWARD/BACKWARD's (its lengths are staged with the descriptor).
  JobPtr submit(const cr::Descriptor& d, const std::string& what, int bank, int load_bank,
                const Counters& counts, const std::vector<Range>& data,
                const LayerShape* shape = nullptr) {
    auto job = std::make_shared<CoreJob>(core_, what);
    core_->push(d, {0, job, bank, load_bank, counts, {}, {}, data}, shape);
    return job;
  }

  std::shared_ptr<Core> core_;
};

}  // namespace

std::unique_ptr<Device> open_core_device(std::unique_ptr<Transport> transport, const CoreOptions& options) {
  auto core = std::make_shared<Core>();
  core->t = std::move(transport);
  core->opt = options;
  core->open();
  return std::make_unique<CoreDevice>(core);
}

}  // namespace farnn::driver
