// AXI4 slave memory model serving one master: Words x 32-bit data (16 for a
// 512-bit bus; a beat is std::array<uint32_t, Words>), 64-bit addresses, INCR
// bursts of full-width beats. Signals are bound through the lambdas of Ports,
// so one class serves any Verilated model (or plain variables in a unit test).
//
//  - Memory: sparse and byte-addressed (SparseMemory, 64-byte lines); bytes
//    never written read as a fill word (not a failure: a DMA reads whole beats
//    past a buffer's end).
//  - Regions: add_region(base, size, access). A beat outside every region
//    answers DECERR (a PCIe root complex's "unsupported request"); a write to
//    a read-only region, or a read of a write-only one, answers SLVERR; a beat
//    that answers an error is not written. Until the first add_region the
//    whole address space is read/write.
//  - Target (set_target): a BeatTarget takes the place of the sparse memory
//    and the regions: it decodes every beat (OKAY, or the error it answers)
//    and holds the bytes (a mocked PCIe root complex mapping bus pages to
//    host memory).
//  - Injected errors: inject_error() on the beats of an address range (per
//    direction and ID, a number of times), or set_random_errors() with a
//    per-beat probability and its own seed. Error beats of a read carry
//    kPoison data; a write burst answers its first non-OKAY beat's response.
//  - Timing (set_timing): read latency from AR accepted to the first R beat
//    offered, write latency from the burst's last W beat (and its AW) to B
//    offered, random backpressure on AR/AW/W (ready low), random gaps on R/B
//    (valid delayed), limits on outstanding reads and writes (AR/AW ready stay
//    low at the limit). Responses are in order within an ID; with `reorder`
//    they leave in a random order across IDs (a random pick among the IDs
//    whose head response is due), with `interleave` R beats of different IDs
//    also interleave. W may arrive before its AW (up to max_early_w beats).
//    A rate limit (r_beats_per_cycle, w_beats_per_cycle; 0 = none) spaces R
//    and W beats as a link narrower than the bus does; stall_until() holds
//    every channel (no new handshake, no new response) until a cycle.
//  - Protocol checks, failing through FailFn with a named message: a burst
//    crossing a 4 KiB boundary, LEN > 255, SIZE not the full width, a burst
//    type other than INCR, WLAST on the wrong beat, valid dropped or payload
//    changed while stalled on AR, AW and W, and (in finish()) W beats that
//    never got an AW.
//  - Statistics (stats()): beats, bytes and bursts each way, outstanding
//    high-water marks (total and per ID), first-beat latency, the cycles in
//    which R moved a beat and the window from the first AR to the last R beat
//    (DMA efficiency), and a log of every error response (errors()).
//
// Step it in a Testbench like any Component: drive() sets AR/AW/W ready and
// R/B valid for this cycle, sample() takes the handshakes at the edge. A reset
// of the master drops every burst in flight; memory and statistics stay.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "options.hpp"
#include "testbench.hpp"

namespace farnn::tb {

enum class AxiResp : uint8_t { kOkay = 0, kExOkay = 1, kSlvErr = 2, kDecErr = 3 };

inline const char* axi_resp_name(AxiResp r) {
  switch (r) {
    case AxiResp::kOkay: return "OKAY";
    case AxiResp::kExOkay: return "EXOKAY";
    case AxiResp::kSlvErr: return "SLVERR";
    case AxiResp::kDecErr: return "DECERR";
  }
  return "?";
}

// Sparse byte-addressed memory in 64-byte lines; unwritten bytes read as the
// fill word (byte i of an address = byte (i mod 4) of the word, little-endian).
class SparseMemory {
 public:
  static constexpr uint64_t kLineBytes = 64;
  using Line = std::array<uint8_t, kLineBytes>;

  explicit SparseMemory(uint32_t fill = 0) : fill_(fill) {}

  void set_fill(uint32_t fill) { fill_ = fill; }
  uint32_t fill() const { return fill_; }
  uint8_t fill_byte(uint64_t addr) const { return static_cast<uint8_t>(fill_ >> (8 * (addr & 3))); }

  void write_bytes(uint64_t addr, const uint8_t* src, size_t n) {
    while (n != 0) {
      const uint64_t off = addr % kLineBytes;
      const size_t k = std::min<size_t>(n, kLineBytes - off);
      std::memcpy(line(addr - off).data() + off, src, k);
      addr += k;
      src += k;
      n -= k;
    }
  }
  void read_bytes(uint64_t addr, uint8_t* dst, size_t n) const {
    while (n != 0) {
      const uint64_t off = addr % kLineBytes;
      const size_t k = std::min<size_t>(n, kLineBytes - off);
      auto it = lines_.find(addr - off);
      for (size_t i = 0; i < k; ++i) dst[i] = it != lines_.end() ? it->second[off + i] : fill_byte(addr + i);
      addr += k;
      dst += k;
      n -= k;
    }
  }
  void write_words(uint64_t addr, const std::vector<uint32_t>& words) {
    write_bytes(addr, reinterpret_cast<const uint8_t*>(words.data()), words.size() * 4);
  }
  std::vector<uint32_t> read_words(uint64_t addr, size_t n) const {
    std::vector<uint32_t> w(n);
    read_bytes(addr, reinterpret_cast<uint8_t*>(w.data()), n * 4);
    return w;
  }
  // The lines ever written (key: line address).
  const std::unordered_map<uint64_t, Line>& lines() const { return lines_; }
  void clear() { lines_.clear(); }

 private:
  Line& line(uint64_t base) {
    auto [it, fresh] = lines_.try_emplace(base);
    if (fresh) {
      for (uint64_t i = 0; i < kLineBytes; ++i) it->second[i] = fill_byte(base + i);
    }
    return it->second;
  }

  uint32_t fill_;
  std::unordered_map<uint64_t, Line> lines_;
};

// What the beats of an AxiMemory reach instead of its own sparse memory.
class BeatTarget {
 public:
  virtual ~BeatTarget() = default;
  // The response of a beat of n bytes at addr: OKAY when it may be accessed.
  virtual AxiResp decode(bool write, uint64_t addr, size_t n) = 0;
  virtual void read(uint64_t addr, uint8_t* dst, size_t n) = 0;
  virtual void write(uint64_t addr, const uint8_t* src, size_t n) = 0;
};

template <size_t Words>
class AxiMemory : public Component {
  static_assert(Words >= 1 && Words <= 16 && (Words & (Words - 1)) == 0,
                "AxiMemory: Words must be 1, 2, 4, 8 or 16 (32..512-bit data)");

 public:
  static constexpr uint64_t kBeatBytes = Words * 4;
  static constexpr uint32_t kFullSize = std::countr_zero(kBeatBytes);  // AxSIZE of a full beat
  static constexpr uint32_t kPoison = 0xdeadbeef;                       // data of an error beat
  using Beat = std::array<uint32_t, Words>;

  // AR or AW payload.
  struct Addr {
    uint32_t id = 0;
    uint64_t addr = 0;
    uint32_t len = 0;  // beats - 1
    uint32_t size = kFullSize;
    uint32_t burst = 1;  // INCR
    bool operator==(const Addr&) const = default;
  };
  struct WBeat {
    Beat data{};
    uint64_t strb = 0;  // bit i: byte i of the beat
    bool last = false;
    bool operator==(const WBeat&) const = default;
  };
  struct RBeat {
    uint32_t id = 0;
    Beat data{};
    AxiResp resp = AxiResp::kOkay;
    bool last = false;
  };
  struct BResp {
    uint32_t id = 0;
    AxiResp resp = AxiResp::kOkay;
  };
  // A channel group whose functions are left empty (AR+R, or AW+W+B) is absent.
  struct Ports {
    std::function<bool()> arvalid;
    std::function<Addr()> ar;  // read only while arvalid
    std::function<void(bool)> set_arready;
    std::function<void(bool, const RBeat&)> set_r;  // valid, payload
    std::function<bool()> rready;
    std::function<bool()> awvalid;
    std::function<Addr()> aw;
    std::function<void(bool)> set_awready;
    std::function<bool()> wvalid;
    std::function<WBeat()> w;
    std::function<void(bool)> set_wready;
    std::function<void(bool, const BResp&)> set_b;
    std::function<bool()> bready;
  };
  using FailFn = std::function<void(const std::string&)>;

  struct Timing {
    int read_latency_min = 1, read_latency_max = 1;    // AR accepted -> first R beat offered
    int write_latency_min = 1, write_latency_max = 1;  // last W beat matched with its AW -> B offered
    double ar_stall = 0.0, aw_stall = 0.0, w_stall = 0.0;  // probability of ready low in a cycle
    double r_gap = 0.0, b_gap = 0.0;                       // probability of holding back a response
    int max_reads = 16, max_writes = 16;  // outstanding bursts accepted (AR/AW ready low at the limit)
    int max_early_w = 256;                // W beats accepted ahead of their AW
    double r_beats_per_cycle = 0.0;       // most R beats per cycle on average; 0 = no limit
    double w_beats_per_cycle = 0.0;       // most W beats per cycle on average; 0 = no limit
    bool reorder = false;                 // responses out of order across IDs
    bool interleave = false;              // with reorder: R beats of different IDs interleave
  };
  enum class Access { kReadOnly, kWriteOnly, kReadWrite };
  enum class Dir { kRead, kWrite, kBoth };

  struct Stats {
    uint64_t read_bursts = 0, read_beats = 0, read_bytes = 0;
    uint64_t write_bursts = 0, write_beats = 0, write_bytes = 0;  // write_bytes: strobed bytes stored
    int max_reads_outstanding = 0, max_writes_outstanding = 0;
    std::map<uint32_t, int> max_reads_by_id, max_writes_by_id;
    uint64_t latency_min = UINT64_MAX, latency_max = 0, latency_sum = 0;  // AR accepted -> first R beat
    uint64_t r_busy_cycles = 0;                     // cycles in which R moved a beat
    uint64_t first_ar_cycle = 0, last_r_cycle = 0;  // valid once read_beats > 0
    double latency_mean() const { return read_bursts ? double(latency_sum) / double(read_bursts) : 0.0; }
    // Share of the cycles from the first AR accepted to the last R beat in which R moved a beat.
    double r_efficiency() const {
      return read_beats ? double(r_busy_cycles) / double(last_r_cycle - first_ar_cycle + 1) : 0.0;
    }
  };
  struct ErrorEvent {
    bool write = false;
    uint32_t id = 0;
    uint64_t burst_addr = 0;  // AxADDR of the burst
    uint64_t beat_addr = 0;   // the (first) failing beat
    AxiResp resp = AxiResp::kOkay;
    uint64_t cycle = 0;  // R beat or B transferred
  };

  AxiMemory(Rng& rng, Ports ports, FailFn fail)
      : rng_(rng), p_(std::move(ports)), fail_(std::move(fail)), err_rng_(0) {}

  // --- memory contents ---
  SparseMemory& memory() { return mem_; }
  const SparseMemory& memory() const { return mem_; }
  void set_fill(uint32_t fill) { mem_.set_fill(fill); }
  void write_bytes(uint64_t addr, const uint8_t* src, size_t n) { mem_.write_bytes(addr, src, n); }
  void read_bytes(uint64_t addr, uint8_t* dst, size_t n) const { mem_.read_bytes(addr, dst, n); }
  void write_words(uint64_t addr, const std::vector<uint32_t>& w) { mem_.write_words(addr, w); }
  std::vector<uint32_t> read_words(uint64_t addr, size_t n) const { return mem_.read_words(addr, n); }

  // Beats go to `target` (kept alive by the caller) instead of the memory and regions; nullptr: back.
  void set_target(BeatTarget* target) { target_ = target; }

  // --- address map and errors ---
  // base and size are multiples of the beat size; a beat must lie in one region.
  void add_region(uint64_t base, uint64_t size, Access access) {
    if (base % kBeatBytes != 0 || size % kBeatBytes != 0 || size == 0) {
      throw std::invalid_argument("AxiMemory::add_region: base and size must be non-zero multiples of " +
                                  std::to_string(kBeatBytes) + " bytes");
    }
    regions_.push_back({base, size, access});
  }
  // The next `count` beats (count < 0: every beat) of direction `dir` (and ID
  // `id`, or any when id < 0) that overlap [lo, hi) answer `resp`.
  void inject_error(uint64_t lo, uint64_t hi, AxiResp resp, int count, Dir dir = Dir::kBoth, int id = -1) {
    rules_.push_back({lo, hi, resp, count, dir, id});
  }
  // Every beat of direction `dir` answers SLVERR or DECERR (even odds) with probability `prob`.
  void set_random_errors(double prob, uint64_t seed, Dir dir = Dir::kBoth) {
    random_prob_ = prob;
    random_dir_ = dir;
    err_rng_ = Rng(seed);
  }
  void clear_errors() {
    rules_.clear();
    random_prob_ = 0.0;
  }

  // --- timing, statistics ---
  void set_timing(const Timing& t) { t_ = t; }
  const Timing& timing() const { return t_; }
  // No handshake on AR/AW/W and no new R/B response before `cycle` (a link stall).
  void stall_until(uint64_t cycle) { stall_until_ = cycle; }
  const Stats& stats() const { return stats_; }
  void reset_stats() { stats_ = Stats{}; }
  const std::vector<ErrorEvent>& errors() const { return errors_; }
  void clear_error_log() { errors_.clear(); }
  uint64_t now() const { return now_; }
  int outstanding_reads() const { return static_cast<int>(reads_.size()); }
  int outstanding_writes() const { return writes_outstanding_; }
  int outstanding_reads(uint32_t id) const { return count_id(reads_by_id_, id); }
  int outstanding_writes(uint32_t id) const { return count_id(writes_by_id_, id); }
  bool idle() const { return reads_.empty() && writes_outstanding_ == 0 && w_q_.empty(); }

  // End-of-test protocol checks: every W beat must have found its AW.
  void finish() {
    if (!w_q_.empty()) fail(std::to_string(w_q_.size()) + " W beats without AW");
  }

  void on_reset() override {
    reads_.clear();
    aw_q_.clear();
    w_q_.clear();
    b_q_.clear();
    reads_by_id_.clear();
    writes_by_id_.clear();
    writes_outstanding_ = 0;
    r_valid_ = b_valid_ = r_active_ = false;
    ar_hold_ = {};
    aw_hold_ = {};
    w_hold_ = {};
  }

  void drive() override {
    const bool stalled = now_ < stall_until_;
    if (p_.arvalid) {
      ar_ready_ = !stalled && outstanding_reads() < t_.max_reads && !rng_.chance(t_.ar_stall);
      p_.set_arready(ar_ready_);
      if (!r_valid_ && !stalled && has_credit(t_.r_beats_per_cycle, r_credit_)) offer_r();
      p_.set_r(r_valid_, r_beat_);
    }
    if (p_.awvalid) {
      aw_ready_ = !stalled && writes_outstanding_ < t_.max_writes && !rng_.chance(t_.aw_stall);
      w_ready_ = !stalled && static_cast<int>(w_q_.size()) < t_.max_early_w &&
                 has_credit(t_.w_beats_per_cycle, w_credit_) && !rng_.chance(t_.w_stall);
      p_.set_awready(aw_ready_);
      p_.set_wready(w_ready_);
      if (!b_valid_ && !stalled) offer_b();
      p_.set_b(b_valid_, b_resp_);
    }
  }

  void sample() override {
    if (p_.arvalid) {
      const bool arvalid = p_.arvalid();
      check_hold(ar_hold_, arvalid, ar_ready_, p_.ar, "AR");
      if (r_valid_ && p_.rready()) complete_r();
      if (arvalid && ar_ready_) accept_ar(p_.ar());
    }
    if (p_.awvalid) {
      const bool awvalid = p_.awvalid(), wvalid = p_.wvalid();
      check_hold(aw_hold_, awvalid, aw_ready_, p_.aw, "AW");
      check_hold(w_hold_, wvalid, w_ready_, p_.w, "W");
      if (b_valid_ && p_.bready()) complete_b();
      if (awvalid && aw_ready_) accept_aw(p_.aw());
      if (wvalid && w_ready_) {
        w_q_.push_back(p_.w());
        w_credit_ -= 1.0;
      }
      match_writes();
    }
    refill(t_.r_beats_per_cycle, r_credit_);
    refill(t_.w_beats_per_cycle, w_credit_);
    ++now_;
  }

 private:
  struct Region {
    uint64_t base, size;
    Access access;
  };
  struct Rule {
    uint64_t lo, hi;
    AxiResp resp;
    int count;
    Dir dir;
    int id;
  };
  struct ReadBurst {
    uint64_t seq;
    Addr a;
    uint64_t accepted, due;
    uint32_t next = 0;  // next beat
  };
  struct WriteBurst {
    Addr a;
    uint32_t next = 0;
    AxiResp resp = AxiResp::kOkay;
    uint64_t err_beat = 0;
  };
  struct PendingB {
    BResp b;
    uint64_t due, addr, err_beat;
  };
  template <class T>
  struct Hold {
    bool stalled = false;
    T held{};
  };

  void fail(const std::string& msg) { fail_("axi memory: " + msg); }

  static std::string hex(uint64_t v) {
    std::ostringstream os;
    os << "0x" << std::hex << v;
    return os.str();
  }
  static int count_id(const std::map<uint32_t, int>& m, uint32_t id) {
    auto it = m.find(id);
    return it == m.end() ? 0 : it->second;
  }
  static uint64_t beat_addr(const Addr& a, uint32_t beat) {
    return (a.addr & ~(kBeatBytes - 1)) + uint64_t{beat} * kBeatBytes;
  }
  int latency(int lo, int hi) { return static_cast<int>(rng_.range(lo, hi)); }

  // Rate limit: a beat may move while at least one beat of credit is left;
  // credit grows by the rate each cycle, up to two beats (no long bursts above the rate).
  static bool has_credit(double rate, double credit) { return rate <= 0.0 || credit >= 1.0; }
  static void refill(double rate, double& credit) { credit = rate <= 0.0 ? 0.0 : std::min(credit + rate, 2.0); }

  template <class T>
  void check_hold(Hold<T>& h, bool valid, bool ready, const std::function<T()>& payload, const char* ch) {
    if (h.stalled) {
      if (!valid) {
        fail(std::string(ch) + " valid dropped while stalled (valid must wait for ready)");
      } else if (!(payload() == h.held)) {
        fail(std::string(ch) + " payload changed while stalled");
      }
    }
    h.stalled = valid && !ready;
    if (h.stalled) h.held = payload();
  }

  void check_burst(const Addr& a, const char* ch) {
    const std::string what = std::string(ch) + " id " + std::to_string(a.id) + " addr " + hex(a.addr) +
                             " len " + std::to_string(a.len);
    if (a.len > 255) fail(what + ": LEN > 255");
    if (a.size != kFullSize) {
      fail(what + ": SIZE " + std::to_string(a.size) + " is not the full width (" + std::to_string(kFullSize) + ")");
    }
    if (a.burst != 1) fail(what + ": unsupported burst type " + std::to_string(a.burst) + " (INCR only)");
    const uint64_t last_byte = beat_addr(a, a.len) + kBeatBytes - 1;
    if ((a.addr >> 12) != (last_byte >> 12)) fail(what + ": burst crosses a 4 KiB boundary");
  }

  bool dir_matches(Dir d, bool write) const { return d == Dir::kBoth || (d == Dir::kWrite) == write; }

  // The response of one beat: address map, then injected rules, then random errors.
  AxiResp beat_resp(bool write, uint32_t id, uint64_t addr) {
    if (target_ != nullptr) {
      const AxiResp r = target_->decode(write, addr, kBeatBytes);
      if (r != AxiResp::kOkay) return r;
    } else if (!regions_.empty()) {
      const Region* hit = nullptr;
      for (const auto& r : regions_) {
        if (addr >= r.base && addr + kBeatBytes <= r.base + r.size) hit = &r;
      }
      if (hit == nullptr) return AxiResp::kDecErr;
      if (hit->access == (write ? Access::kReadOnly : Access::kWriteOnly)) return AxiResp::kSlvErr;
    }
    for (auto& r : rules_) {
      if (r.count != 0 && dir_matches(r.dir, write) && (r.id < 0 || static_cast<uint32_t>(r.id) == id) &&
          addr < r.hi && addr + kBeatBytes > r.lo) {
        if (r.count > 0) --r.count;
        return r.resp;
      }
    }
    if (random_prob_ > 0.0 && dir_matches(random_dir_, write) && err_rng_.chance(random_prob_)) {
      return err_rng_.chance(0.5) ? AxiResp::kSlvErr : AxiResp::kDecErr;
    }
    return AxiResp::kOkay;
  }

  // Picks among the head responses of each ID that are due (only the oldest
  // one in order mode); -1 when none is due.
  template <class Q, class DueFn, class IdFn>
  int pick(const Q& q, DueFn due, IdFn id_of) {
    std::vector<int> due_heads;
    std::vector<uint32_t> seen;
    for (size_t i = 0; i < q.size(); ++i) {
      const uint32_t id = id_of(q[i]);
      if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
      seen.push_back(id);
      if (due(q[i]) <= now_) due_heads.push_back(static_cast<int>(i));
      if (!t_.reorder) break;
    }
    if (due_heads.empty()) return -1;
    return due_heads[static_cast<size_t>(rng_.range(0, static_cast<long long>(due_heads.size()) - 1))];
  }

  int find_read(uint64_t seq) const {
    for (size_t i = 0; i < reads_.size(); ++i) {
      if (reads_[i].seq == seq) return static_cast<int>(i);
    }
    return -1;
  }

  void offer_r() {
    int i = -1;
    if (r_active_ && !(t_.reorder && t_.interleave)) {
      i = find_read(r_active_seq_);  // a started burst finishes before another one starts
    } else {
      i = pick(reads_, [](const ReadBurst& b) { return b.due; }, [](const ReadBurst& b) { return b.a.id; });
    }
    if (i < 0 || rng_.chance(t_.r_gap)) return;
    const ReadBurst& b = reads_[static_cast<size_t>(i)];
    const uint64_t addr = beat_addr(b.a, b.next);
    r_beat_.id = b.a.id;
    r_beat_.resp = beat_resp(false, b.a.id, addr);
    // A target that stalled the link while answering (a completion timeout,
    // a stall) holds this beat back; it is offered, and answered, again once
    // the stall is over.
    if (now_ < stall_until_) return;
    r_beat_.last = b.next == b.a.len;
    if (r_beat_.resp == AxiResp::kOkay) {
      auto* dst = reinterpret_cast<uint8_t*>(r_beat_.data.data());
      if (target_ != nullptr) {
        target_->read(addr, dst, kBeatBytes);
      } else {
        mem_.read_bytes(addr, dst, kBeatBytes);
      }
    } else {
      r_beat_.data.fill(kPoison);
    }
    r_valid_ = true;
    r_seq_ = b.seq;
  }

  void complete_r() {
    const int i = find_read(r_seq_);
    ReadBurst& b = reads_[static_cast<size_t>(i)];
    if (b.next == 0) {
      const uint64_t lat = now_ - b.accepted;
      stats_.latency_min = std::min(stats_.latency_min, lat);
      stats_.latency_max = std::max(stats_.latency_max, lat);
      stats_.latency_sum += lat;
    }
    ++stats_.read_beats;
    r_credit_ -= 1.0;
    stats_.read_bytes += kBeatBytes;
    ++stats_.r_busy_cycles;
    stats_.last_r_cycle = now_;
    if (r_beat_.resp != AxiResp::kOkay) {
      errors_.push_back({false, b.a.id, b.a.addr, beat_addr(b.a, b.next), r_beat_.resp, now_});
    }
    if (b.next == b.a.len) {
      --reads_by_id_[b.a.id];
      reads_.erase(reads_.begin() + i);
      r_active_ = false;
    } else {
      ++b.next;
      r_active_ = true;
      r_active_seq_ = b.seq;
    }
    r_valid_ = false;
  }

  void accept_ar(const Addr& a) {
    check_burst(a, "AR");
    if (stats_.read_bursts == 0) stats_.first_ar_cycle = now_;
    ++stats_.read_bursts;
    const uint64_t due = now_ + static_cast<uint64_t>(latency(t_.read_latency_min, t_.read_latency_max));
    reads_.push_back({seq_++, a, now_, due});
    const int n = ++reads_by_id_[a.id];
    stats_.max_reads_outstanding = std::max(stats_.max_reads_outstanding, outstanding_reads());
    stats_.max_reads_by_id[a.id] = std::max(stats_.max_reads_by_id[a.id], n);
  }

  void accept_aw(const Addr& a) {
    check_burst(a, "AW");
    aw_q_.push_back({a});
    ++writes_outstanding_;
    const int n = ++writes_by_id_[a.id];
    stats_.max_writes_outstanding = std::max(stats_.max_writes_outstanding, writes_outstanding_);
    stats_.max_writes_by_id[a.id] = std::max(stats_.max_writes_by_id[a.id], n);
  }

  // Pairs W beats with their AWs (in AW order) and stores the strobed bytes.
  void match_writes() {
    while (!aw_q_.empty() && !w_q_.empty()) {
      WriteBurst& b = aw_q_.front();
      const WBeat w = w_q_.front();
      w_q_.pop_front();
      const bool final = b.next == b.a.len;
      const uint64_t addr = beat_addr(b.a, b.next);
      if (w.last != final) {
        fail("WLAST " + std::string(w.last ? "set" : "missing") + " on beat " + std::to_string(b.next) +
             " of AW id " + std::to_string(b.a.id) + " addr " + hex(b.a.addr) + " len " + std::to_string(b.a.len));
      }
      const AxiResp resp = beat_resp(true, b.a.id, addr);
      if (resp == AxiResp::kOkay) {
        const auto* bytes = reinterpret_cast<const uint8_t*>(w.data.data());
        for (uint64_t i = 0; i < kBeatBytes;) {  // each run of strobed bytes at once
          uint64_t end = i;
          while (end < kBeatBytes && ((w.strb >> end) & 1)) ++end;
          if (end > i && target_ != nullptr) target_->write(addr + i, bytes + i, end - i);
          if (end > i && target_ == nullptr) mem_.write_bytes(addr + i, bytes + i, end - i);
          i = end + 1;
        }
        stats_.write_bytes += static_cast<uint64_t>(std::popcount(w.strb & strb_mask()));
      } else if (b.resp == AxiResp::kOkay) {
        b.resp = resp;
        b.err_beat = addr;
      }
      ++stats_.write_beats;
      if (final) {
        const uint64_t due = now_ + static_cast<uint64_t>(latency(t_.write_latency_min, t_.write_latency_max));
        b_q_.push_back({{b.a.id, b.resp}, due, b.a.addr, b.err_beat});
        ++stats_.write_bursts;
        aw_q_.pop_front();
      } else {
        ++b.next;
      }
    }
  }
  static constexpr uint64_t strb_mask() { return kBeatBytes == 64 ? ~uint64_t{0} : (uint64_t{1} << kBeatBytes) - 1; }

  void offer_b() {
    const int i = pick(b_q_, [](const PendingB& b) { return b.due; }, [](const PendingB& b) { return b.b.id; });
    if (i < 0 || rng_.chance(t_.b_gap)) return;
    b_sel_ = static_cast<size_t>(i);
    b_resp_ = b_q_[b_sel_].b;
    b_valid_ = true;
  }

  void complete_b() {
    const PendingB& b = b_q_[b_sel_];
    if (b.b.resp != AxiResp::kOkay) errors_.push_back({true, b.b.id, b.addr, b.err_beat, b.b.resp, now_});
    --writes_by_id_[b.b.id];
    --writes_outstanding_;
    b_q_.erase(b_q_.begin() + static_cast<long>(b_sel_));
    b_valid_ = false;
  }

  Rng& rng_;
  Ports p_;
  FailFn fail_;
  Rng err_rng_;
  SparseMemory mem_;
  BeatTarget* target_ = nullptr;
  uint64_t stall_until_ = 0;
  double r_credit_ = 0.0, w_credit_ = 0.0;
  Timing t_;
  Stats stats_;
  std::vector<Region> regions_;
  std::vector<Rule> rules_;
  double random_prob_ = 0.0;
  Dir random_dir_ = Dir::kBoth;
  std::vector<ErrorEvent> errors_;

  std::deque<ReadBurst> reads_;  // accepted, not finished, in AR order
  std::deque<WriteBurst> aw_q_;  // AW accepted, W beats still to come
  std::deque<WBeat> w_q_;        // W beats waiting for their AW
  std::deque<PendingB> b_q_;     // every beat stored, B not yet sent
  std::map<uint32_t, int> reads_by_id_, writes_by_id_;
  int writes_outstanding_ = 0;  // AW accepted, B not yet sent
  uint64_t now_ = 0, seq_ = 0;

  bool ar_ready_ = false, aw_ready_ = false, w_ready_ = false;
  bool r_valid_ = false, r_active_ = false, b_valid_ = false;
  uint64_t r_seq_ = 0, r_active_seq_ = 0;
  size_t b_sel_ = 0;
  RBeat r_beat_;
  BResp b_resp_;
  Hold<Addr> ar_hold_, aw_hold_;
  Hold<WBeat> w_hold_;
};

}  // namespace farnn::tb
