// tb_dma: the shell's DMA movers -- reader 0 (OutWords 4, word-aligned
// commands: items on the beat's 4-word grid with the command's first and last
// word marked, ID 0), reader 1 (OutWords 16, ID 1), writer 0 (ID 0), writer 1 (InWords 4, ID 1; half its
// commands wide: 4-word items, 16-byte aligned) -- through axi_rd_mux
// and axi_wr_mux onto one AXI4 port served by AxiMemory<16>
// (tb/dma/dma_tb_top.sv). The read area is read-only and holds random words;
// the write area is read/write and starts out as the fill pattern; every
// write command gets its own byte range there.
// Suites (--suite):
//   random      random commands (4 B .. --max-bytes, mid-beat starts, ranges
//               straddling 4 KiB, cmd_last) on all four movers at once, queued
//               back to back, with random idle cycles on every command and
//               input stream, random backpressure on every output and AXI
//               channel, random latencies, out-of-order (and interleaved)
//               responses across IDs; then the same without stress.
//   errors      per round, SLVERR/DECERR on a random beat of one mover's
//               command (injected, or the command runs off its area): err_o
//               with the failing burst's address and response, no data from
//               the failing beat on, done_o only for the commands before it,
//               abort -> idle within a bound after the mover's last response;
//               the other movers and the next rounds stay bit-exact.
//   abort       per round, abort_i on random movers at random points with
//               traffic in flight -> idle within the bound, then bit-exact.
//   outstanding one-beat commands at 300 cycles of latency, AR/AW often
//               refused: every mover keeps exactly its MaxOutstanding bursts
//               in flight.
//   efficiency  one 1 MiB read on reader 1 at 250 cycles of read latency, no
//               backpressure: R busy >= 90 % of the cycles from the first AR to
//               the last beat; reader 0 delivers and writer 0 takes one word
//               per cycle on a 64 KiB command.
// Every suite checks every item and every written byte bit-exact, `last`
// placement, WSTRB (bytes outside every write command keep the fill pattern),
// done_o counts and data present at done_o, idle_o never high while an
// accepted command is unfinished, round-robin fairness of both muxes, AXI protocol (the model: no
// burst across 4 KiB, legal LEN/SIZE/BURST, WLAST, stable payloads) and the
// outstanding limits per ID. Parameters come from the FARNN_PARAM_* macros.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "Vdma_tb_top.h"
#include "axi_memory.hpp"
#include "options.hpp"
#include "stream.hpp"
#include "testbench.hpp"

namespace farnn::tb {
namespace {

using Top = Vdma_tb_top;
using Mem = AxiMemory<16>;
using Beat = Mem::Beat;
using FailFn = std::function<void(const std::string&)>;

constexpr uint64_t kReadBase = 0x00ab'0000'0000ull;  // above 4 GiB: the upper address bits matter
constexpr uint64_t kReadSize = 4ull << 20;
constexpr uint64_t kWriteBase = 0x00cd'0000'0000ull;
constexpr uint64_t kWriteSize = 256ull << 20;
constexpr uint32_t kFill = 0x5aa5c33cu;  // never-written memory (the write area's pre-fill)

struct Params {
  int rd_fifo = FARNN_PARAM_RdFifoBeats;
  int rd_outstanding = FARNN_PARAM_RdMaxOutstanding;
  int wr_fifo = FARNN_PARAM_WrFifoBeats;
  int wr_outstanding = FARNN_PARAM_WrMaxOutstanding;
  int max_burst = FARNN_PARAM_MaxBurstBeats;
  std::string describe() const {
    return "RdFifoBeats=" + std::to_string(rd_fifo) + " RdMaxOutstanding=" + std::to_string(rd_outstanding) +
           " WrFifoBeats=" + std::to_string(wr_fifo) + " WrMaxOutstanding=" + std::to_string(wr_outstanding) +
           " MaxBurstBeats=" + std::to_string(max_burst);
  }
};

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

template <std::size_t N>
Beat beat_of(const VlWide<N>& w) {
  Beat b{};
  for (size_t i = 0; i < N; ++i) b[i] = w[i];
  return b;
}
void set_wide(VlWide<16>& w, const Beat& b) {
  for (size_t i = 0; i < b.size(); ++i) w[i] = b[i];
}

struct ReadCmd {
  uint64_t addr = 0;
  uint32_t bytes = 0;
  bool last = false;
};
struct WriteCmd {
  uint64_t addr = 0;
  uint32_t bytes = 0;
  bool wide = false;  // items of the writer's InWords words (cmd_wide_i)
};
// One input item of a writer: 1 word, or InWords for a wide command.
using WriteItem = std::vector<uint32_t>;
// Drives a writer's data port (32 bits, or a wide one) from an item.
inline void set_item(uint32_t& port, const WriteItem& w) { port = w.at(0); }
template <std::size_t N>
void set_item(VlWide<N>& port, const WriteItem& w) {
  for (std::size_t i = 0; i < N; ++i) port[i] = i < w.size() ? w[i] : 0;
}
// One output item of a reader (OutWords words; the rest zero) and the first
// and last of its words that belong to the command (out_lo_o, out_hi_o).
struct Item {
  Beat words{};
  bool last = false;
  int lo = 0, hi = 0;
  bool operator==(const Item&) const = default;
};

struct ReaderPins {
  std::function<void(bool)> set_abort;
  std::function<bool()> idle, cmd_ready, out_valid, out_ready, out_last, err, arvalid;
  std::function<void(bool, const ReadCmd&)> set_cmd;
  std::function<void(bool)> set_out_ready;
  std::function<Beat()> out_data;
  std::function<int()> out_lo, out_hi;
  std::function<uint64_t()> err_addr;
  std::function<int()> err_resp;
  bool word_aligned = false;  // commands at any 4-byte address (WordAligned)
};
struct WriterPins {
  std::function<void(bool)> set_abort;
  std::function<bool()> idle, cmd_ready, in_ready, done, err, awvalid, wvalid;
  std::function<void(bool, const WriteCmd&)> set_cmd;
  std::function<void(bool, const WriteItem&)> set_in;
  std::function<uint64_t()> err_addr;
  std::function<int()> err_resp;
  int in_words = 1;  // InWords of the writer
};

// A reader's command source, output sink and monitor, and its expected items
// (read from memory when the command is queued: the read area never changes).
// Without an error, idle_o must stay low while an accepted command has items
// still to come.
class ReaderPort : public Component {
 public:
  ReaderPort(std::string name, uint32_t id, int out_words, Rng& rng, const Mem& mem, ReaderPins pins, FailFn fail)
      : name_(std::move(name)),
        id_(id),
        out_words_(out_words),
        mem_(mem),
        pins_(std::move(pins)),
        fail_(std::move(fail)),
        cmd_(rng, 0.0, pins_.set_cmd, pins_.cmd_ready),
        out_(rng, 0.0, pins_.set_out_ready, pins_.out_valid, [this] { return item(); },
             [this](const Item& it) { on_item(it); }),
        mon_(name_ + " out", pins_.out_valid, pins_.out_ready, [this] { return item(); }, fail_) {}

  void add_to(Testbench<Top>& tb) {
    tb.add(cmd_);
    tb.add(out_);
    tb.add(mon_);
    tb.add(*this);
  }
  const std::string& name() const { return name_; }
  uint32_t id() const { return id_; }
  int out_words() const { return out_words_; }
  // Bytes a command's address and length are a multiple of.
  uint64_t cmd_unit() const { return pins_.word_aligned ? 4 : 4ull * static_cast<uint64_t>(out_words_); }
  const ReaderPins& pins() const { return pins_; }
  void set_stress(double cmd_idle, double out_stall) {
    cmd_.set_idle_prob(cmd_idle);
    out_.set_stall_prob(out_stall);
  }

  // The command's items on the grid of OutWords words (the memory's words
  // around a word-aligned command's ends included), its ends marked.
  void issue(const ReadCmd& c) {
    const uint64_t step = 4ull * static_cast<uint64_t>(out_words_), end = c.addr + c.bytes;
    uint64_t n = 0;
    for (uint64_t a = c.addr / step * step; a < end; a += step, ++n) {
      Expected e;
      const auto w = mem_.read_words(a, static_cast<size_t>(out_words_));
      std::copy(w.begin(), w.end(), e.item.words.begin());
      e.item.last = c.last && a + step >= end;
      e.item.lo = a < c.addr ? static_cast<int>((c.addr - a) / 4) : 0;
      e.item.hi = a + step > end ? static_cast<int>((end - a) / 4) - 1 : out_words_ - 1;
      e.addr = a;
      e.seq = next_seq_++;
      e.cmd = cmds_;
      expect_.push_back(e);
    }
    ++cmds_;
    items_ += n;
    cmd_items_.push_back(n);
    cmd_.push(c);
  }
  bool finished() const { return expect_.empty() && cmd_.done(); }
  uint64_t items() const { return items_; }
  uint64_t delivered() const { return delivered_; }
  // Sequence number of the next item expected (the next one issued when none is pending).
  uint64_t next_seq() const { return expect_.empty() ? next_seq_ : expect_.front().seq; }
  // The first pending item at or after `from` whose beat overlaps [lo, hi).
  uint64_t first_seq_in(uint64_t from, uint64_t lo, uint64_t hi) const {
    for (const auto& e : expect_) {
      const uint64_t beat = e.addr & ~uint64_t{63};
      if (e.seq >= from && beat < hi && beat + 64 > lo) return e.seq;
    }
    fail_(name_ + ": no pending item in [" + hex(lo) + ", " + hex(hi) + ")");
    return 0;
  }
  // abort_i: the commands not yet taken and every pending item are dropped;
  // the output may withdraw a stalled item.
  void drop_all() {
    cmd_.clear();
    expect_.clear();
    cmd_items_.clear();
    accepted_ = 0;
    mon_.set_allow_withdraw(true);
  }
  void settle() { mon_.set_allow_withdraw(false); }

  // After the sink: this cycle's item is counted; idle_o is checked against
  // the commands accepted before this edge.
  void sample() override {
    if (pins_.idle() && !pins_.err() && accepted_ != 0) {
      fail_(name_ + ": idle_o high with " + std::to_string(cmd_items_.front()) + " items of an accepted command to come");
    }
    accepted_ += cmd_.sent() - last_sent_;
    last_sent_ = cmd_.sent();
  }

 private:
  struct Expected {
    Item item;
    uint64_t addr = 0, seq = 0, cmd = 0;
  };

  Item item() const {
    Item it;
    it.words = pins_.out_data();
    it.last = pins_.out_last();
    it.lo = pins_.out_lo();
    it.hi = pins_.out_hi();
    return it;
  }
  std::string describe(const Item& it) const {
    std::ostringstream os;
    os << std::hex;
    for (int i = 0; i < out_words_; ++i) os << (i ? " " : "") << it.words[static_cast<size_t>(i)];
    os << " words " << std::dec << it.lo << ".." << it.hi << (it.last ? " last" : "");
    return os.str();
  }
  void on_item(const Item& it) {
    if (expect_.empty()) {
      fail_(name_ + ": item delivered with none expected (after " + std::to_string(delivered_) +
            " items; an abort or error must stop delivery): " + describe(it));
    }
    const Expected& e = expect_.front();
    if (!(e.item == it)) {
      fail_(name_ + ": item #" + std::to_string(e.seq) + " (command #" + std::to_string(e.cmd) + ", address " +
            hex(e.addr) + "): expected " + describe(e.item) + ", got " + describe(it));
    }
    expect_.pop_front();
    ++delivered_;
    if (--cmd_items_.front() == 0) {
      cmd_items_.pop_front();
      --accepted_;
    }
  }

  std::string name_;
  uint32_t id_;
  int out_words_;
  const Mem& mem_;
  ReaderPins pins_;
  FailFn fail_;
  StreamSource<ReadCmd> cmd_;
  StreamSink<Item> out_;
  HandshakeMonitor<Item> mon_;
  std::deque<Expected> expect_;
  std::deque<uint64_t> cmd_items_;  // items still to come, per pending command
  uint64_t accepted_ = 0;           // pending commands the reader has taken
  uint64_t last_sent_ = 0;
  uint64_t next_seq_ = 0, cmds_ = 0, items_ = 0, delivered_ = 0;
};

// A writer's command and data sources and its done_o checker: each pulse
// completes the oldest pending command, whose bytes must be in memory by then;
// without an error, idle_o must stay low while an accepted command is not done.
class WriterPort : public Component {
 public:
  struct Written {
    WriteCmd cmd;
    std::vector<uint32_t> data;
  };

  WriterPort(std::string name, uint32_t id, Rng& rng, const Mem& mem, WriterPins pins, FailFn fail)
      : name_(std::move(name)),
        id_(id),
        mem_(mem),
        pins_(std::move(pins)),
        fail_(std::move(fail)),
        cmd_(rng, 0.0, pins_.set_cmd, pins_.cmd_ready),
        in_(rng, 0.0, pins_.set_in, pins_.in_ready) {}

  void add_to(Testbench<Top>& tb) {
    tb.add(cmd_);
    tb.add(in_);
    tb.add(*this);
  }
  const std::string& name() const { return name_; }
  uint32_t id() const { return id_; }
  const WriterPins& pins() const { return pins_; }
  void set_stress(double cmd_idle, double in_idle) {
    cmd_.set_idle_prob(cmd_idle);
    in_.set_idle_prob(in_idle);
  }

  void issue(const WriteCmd& c, Rng& rng) {
    Written w{c, std::vector<uint32_t>(c.bytes / 4)};
    for (auto& x : w.data) x = rng.u32();
    cmd_.push(c);
    const size_t n = c.wide ? static_cast<size_t>(pins_.in_words) : 1;
    for (size_t i = 0; i < w.data.size(); i += n) in_.push(WriteItem(w.data.begin() + i, w.data.begin() + i + n));
    pending_.push_back(std::move(w));
    ++issued_;
    words_ += c.bytes / 4;
  }
  bool finished() const { return pending_.empty() && cmd_.done() && in_.done(); }
  uint64_t issued() const { return issued_; }
  uint64_t dones() const { return dones_; }
  uint64_t words() const { return words_; }
  uint64_t items_taken() const { return in_.sent(); }
  const std::vector<Written>& completed() const { return completed_; }
  void drop_all() {
    cmd_.clear();
    in_.clear();
    pending_.clear();
    accepted_ = 0;
  }

  void sample() override {
    if (pins_.done()) {
      if (accepted_ == 0) fail_(name_ + ": done_o with no accepted command pending (after an abort or error?)");
      const Written& w = pending_.front();
      check(w, "at done_o");
      completed_.push_back(w);
      pending_.pop_front();
      --accepted_;
      ++dones_;
    }
    if (pins_.idle() && !pins_.err() && accepted_ != 0) {
      fail_(name_ + ": idle_o high with an accepted command not done");
    }
    accepted_ += cmd_.sent() - last_sent_;
    last_sent_ = cmd_.sent();
  }
  void check(const Written& w, const std::string& when) const {
    const auto got = mem_.read_words(w.cmd.addr, w.data.size());
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != w.data[i]) {
        fail_(name_ + ": command at " + hex(w.cmd.addr) + " (" + std::to_string(w.cmd.bytes) + " B), word " +
              std::to_string(i) + " at " + hex(w.cmd.addr + 4 * i) + " " + when + ": expected " + hex(w.data[i]) +
              ", memory holds " + hex(got[i]));
      }
    }
  }

 private:
  std::string name_;
  uint32_t id_;
  const Mem& mem_;
  WriterPins pins_;
  FailFn fail_;
  StreamSource<WriteCmd> cmd_;
  StreamSource<WriteItem> in_;
  std::deque<Written> pending_;
  std::vector<Written> completed_;
  uint64_t accepted_ = 0;  // pending commands the writer has taken
  uint64_t last_sent_ = 0;
  uint64_t issued_ = 0, dones_ = 0, words_ = 0;
};

// Round-robin fairness of both muxes: while a mover's AR (AW) waits at its
// mux, the mux grants the other port at most once.
class ArbitrationMonitor : public Component {
 public:
  ArbitrationMonitor(Top& dut, FailFn fail) : dut_(dut), fail_(std::move(fail)) {}
  void on_reset() override {
    for (auto* p : {ar_passed_, aw_passed_}) p[0] = p[1] = 0;
  }
  void sample() override {
    check(dut_.rd_arvalid_o, dut_.rd_arready_o, ar_passed_, "reader");
    check(dut_.wr_awvalid_o, dut_.wr_awready_o, aw_passed_, "writer");
  }

 private:
  void check(unsigned valid, unsigned ready, int* passed, const char* who) {
    for (unsigned i = 0; i < 2; ++i) {
      const unsigned other = 1 - i;
      if (!((valid >> i) & 1) || ((ready >> i) & 1)) {
        passed[i] = 0;
      } else if (((valid & ready) >> other) & 1 && ++passed[i] > 1) {
        fail_(std::string(who) + " " + std::to_string(i) + ": its request waited through " +
              std::to_string(passed[i]) + " grants to the other port (round robin broken)");
      }
    }
  }
  Top& dut_;
  FailFn fail_;
  int ar_passed_[2] = {0, 0}, aw_passed_[2] = {0, 0};
};

struct Stress {
  double cmd_idle = 0.0, in_idle = 0.0, out_stall = 0.0;
  Mem::Timing mem;
  std::string describe() const {
    std::ostringstream os;
    os.precision(2);
    os << "cmd idle " << cmd_idle << ", in idle " << in_idle << ", out stall " << out_stall << "; read latency "
       << mem.read_latency_min << ".." << mem.read_latency_max << ", write latency " << mem.write_latency_min
       << ".." << mem.write_latency_max << ", AR/AW/W stall " << mem.ar_stall << "/" << mem.aw_stall << "/"
       << mem.w_stall << ", R/B gaps " << mem.r_gap << "/" << mem.b_gap << ", max reads/writes "
       << mem.max_reads << "/" << mem.max_writes << (mem.reorder ? ", reorder" : "")
       << (mem.interleave ? ", interleave" : "");
    return os.str();
  }
};

Stress random_stress(Rng& rng) {
  Stress s;
  s.cmd_idle = rng.uniform(0.0, 0.6);
  s.in_idle = rng.uniform(0.0, 0.5);
  s.out_stall = rng.uniform(0.0, 0.6);
  auto& t = s.mem;
  t.read_latency_min = static_cast<int>(rng.range(1, 20));
  t.read_latency_max = t.read_latency_min + static_cast<int>(rng.range(0, 80));
  t.write_latency_min = static_cast<int>(rng.range(1, 20));
  t.write_latency_max = t.write_latency_min + static_cast<int>(rng.range(0, 80));
  t.ar_stall = rng.uniform(0.0, 0.5);
  t.aw_stall = rng.uniform(0.0, 0.5);
  t.w_stall = rng.uniform(0.0, 0.5);
  t.r_gap = rng.uniform(0.0, 0.4);
  t.b_gap = rng.uniform(0.0, 0.4);
  t.max_reads = static_cast<int>(rng.range(1, 20));
  t.max_writes = static_cast<int>(rng.range(1, 20));
  t.max_early_w = static_cast<int>(rng.range(1, 64));
  t.reorder = true;
  t.interleave = rng.chance(0.5);
  return s;
}

// Latencies only: commands and data back to back, no backpressure.
Stress calm_stress(Rng& rng) {
  Stress s;
  s.mem.read_latency_min = static_cast<int>(rng.range(1, 10));
  s.mem.read_latency_max = s.mem.read_latency_min + static_cast<int>(rng.range(0, 40));
  s.mem.write_latency_min = s.mem.write_latency_max = 4;
  s.mem.reorder = true;
  return s;
}

class DmaBench {
 public:
  static constexpr int kMovers = 4;  // reader 0, reader 1, writer 0, writer 1

  DmaBench(const Options& opt, const std::string& name, uint32_t max_bytes)
      : rng_(opt.seed() ^ 0x6a09e667f3bcc908ull),
        tb_(opt, name),
        max_bytes_(max_bytes),
        mem_(rng_, mem_ports(), fail_fn()),
        r0_("reader 0", 0, 4, rng_, mem_, reader_pins<0>(), fail_fn()),
        r1_("reader 1", 1, 16, rng_, mem_, reader_pins<1>(), fail_fn()),
        w0_("writer 0", 0, rng_, mem_, writer_pins<0>(), fail_fn()),
        w1_("writer 1", 1, rng_, mem_, writer_pins<1>(), fail_fn()),
        arb_(dut(), fail_fn()) {
    for (auto* r : readers()) r->pins().set_abort(false);
    for (auto* w : writers()) w->pins().set_abort(false);
    mem_.set_fill(kFill);
    mem_.add_region(kReadBase, kReadSize, Mem::Access::kReadOnly);
    mem_.add_region(kWriteBase, kWriteSize, Mem::Access::kReadWrite);
    std::vector<uint32_t> words(kReadSize / 4);
    for (auto& w : words) w = rng_.u32();
    mem_.write_words(kReadBase, words);
    r0_.add_to(tb_);
    r1_.add_to(tb_);
    w0_.add_to(tb_);
    w1_.add_to(tb_);
    tb_.add(mem_);
    tb_.add(arb_);
    tb_.reset();
  }

  Testbench<Top>& tb() { return tb_; }
  Top& dut() { return tb_.dut(); }
  Rng& rng() { return rng_; }
  Mem& mem() { return mem_; }
  const Params& params() const { return p_; }
  std::array<ReaderPort*, 2> readers() { return {&r0_, &r1_}; }
  std::array<WriterPort*, 2> writers() { return {&w0_, &w1_}; }
  [[noreturn]] void fail(const std::string& m) { tb_.fail(m); }

  void apply(const Stress& s) {
    for (auto* r : readers()) r->set_stress(s.cmd_idle, s.out_stall);
    for (auto* w : writers()) w->set_stress(s.cmd_idle, s.in_idle);
    mem_.set_timing(s.mem);
  }

  // Random lengths are log-uniform in [4 * words, max_bytes_], a multiple of 4 * words.
  uint32_t random_bytes(int out_words) {
    const double lo = std::log(4.0 * out_words), hi = std::log(static_cast<double>(max_bytes_));
    const auto b = static_cast<uint32_t>(std::exp(rng_.uniform(lo, hi)));
    const uint32_t unit = 4u * static_cast<uint32_t>(out_words);
    return std::max(unit, b / unit * unit);
  }
  // A random read in the read area; one in four straddles a 4 KiB boundary.
  // A word-aligned reader's commands start and end at any word.
  ReadCmd random_read(const ReaderPort& r) {
    const uint64_t unit = r.cmd_unit();
    ReadCmd c;
    c.bytes = random_bytes(static_cast<int>(unit / 4));
    c.last = rng_.chance(0.5);
    const uint64_t span = (kReadSize - c.bytes) / unit;
    c.addr = kReadBase + unit * static_cast<uint64_t>(rng_.range(0, static_cast<long long>(span)));
    if (rng_.chance(0.25) && c.bytes > unit) {
      const uint64_t boundary = (c.addr | 0xfff) + 1;
      const uint64_t back = unit * static_cast<uint64_t>(rng_.range(1, static_cast<long long>(c.bytes / unit) - 1));
      if (boundary - back >= kReadBase && boundary - back + c.bytes <= kReadBase + kReadSize) c.addr = boundary - back;
    }
    return c;
  }
  // A fresh range of the write area after the previous one (gap 0..256 B, so
  // neighbours may share a beat); one in four straddles a 4 KiB boundary.
  // Half the commands of a writer with wide items are wide (16-byte units).
  WriteCmd random_write(const WriterPort& w) {
    WriteCmd c;
    c.wide = w.pins().in_words > 1 && rng_.chance(0.5);
    const int words = c.wide ? w.pins().in_words : 1;
    const uint64_t unit = 4ull * static_cast<uint64_t>(words);
    c.bytes = random_bytes(words);
    uint64_t a = (write_cursor_ + unit - 1) / unit * unit + unit * static_cast<uint64_t>(rng_.range(0, 64 / words));
    if (rng_.chance(0.25) && c.bytes > unit) {
      a = ((a | 0xfff) + 1) -
          unit * static_cast<uint64_t>(rng_.range(1, std::min<long long>(c.bytes / unit - 1, 4096 / unit - 1)));
      if (a < write_cursor_) a += 4096;
    }
    c.addr = a;
    write_cursor_ = a + c.bytes;
    if (write_cursor_ > kWriteBase + kWriteSize / 2) fail("write area exhausted: lower --cmds or --max-bytes");
    return c;
  }
  void issue_write(WriterPort& w, const WriteCmd& c) {
    ranges_.emplace_back(c.addr, c.addr + c.bytes);
    w.issue(c, rng_);
  }
  // `n` random commands on every mover.
  void issue_random(int n) {
    for (int i = 0; i < n; ++i) {
      for (auto* r : readers()) r->issue(random_read(*r));
      for (auto* w : writers()) issue_write(*w, random_write(*w));
    }
  }

  bool finished() {
    for (auto* r : readers()) {
      if (!r->finished()) return false;
    }
    for (auto* w : writers()) {
      if (!w->finished()) return false;
    }
    return true;
  }
  // A cycle bound generous for any stress: 300 cycles per beat or word of work.
  uint64_t bound() {
    uint64_t work = 0;
    for (auto* r : readers()) work += r->items();
    for (auto* w : writers()) work += w->words();
    return 300 * (work - work_at_bound_) + 100000;
  }
  void mark_work() {
    work_at_bound_ = 0;
    for (auto* r : readers()) work_at_bound_ += r->items();
    for (auto* w : writers()) work_at_bound_ += w->words();
  }
  // Items delivered, words taken and commands done so far, on all movers.
  uint64_t progress() {
    uint64_t n = 0;
    for (auto* r : readers()) n += r->delivered();
    for (auto* w : writers()) n += w->items_taken() + w->dones();
    return n;
  }
  // Runs until every command is done, failing after bound() cycles or after
  // kStall cycles without progress (a hang).
  void run_to_completion(const std::string& what) {
    constexpr uint64_t kStall = 50000;
    uint64_t last = progress(), since = tb_.cycle();
    tb_.run_until(
        [&] {
          if (progress() != last) {
            last = progress();
            since = tb_.cycle();
          } else if (tb_.cycle() - since > kStall) {
            fail(what + ": no progress for " + std::to_string(kStall) + " cycles");
          }
          return finished();
        },
        bound(), what);
    mark_work();
  }

  // Mover m: 0, 1 readers; 2, 3 writers.
  static std::string mover_name(int m) {
    return m < 2 ? "reader " + std::to_string(m) : "writer " + std::to_string(m - 2);
  }
  bool idle(int m) { return m < 2 ? readers()[m]->pins().idle() : writers()[m - 2]->pins().idle(); }
  bool err(int m) { return m < 2 ? readers()[m]->pins().err() : writers()[m - 2]->pins().err(); }
  uint64_t err_addr(int m) { return m < 2 ? readers()[m]->pins().err_addr() : writers()[m - 2]->pins().err_addr(); }
  int err_resp(int m) { return m < 2 ? readers()[m]->pins().err_resp() : writers()[m - 2]->pins().err_resp(); }
  // A request or response of mover m still on its way (mover, mux or memory).
  bool busy_on_bus(int m) {
    const uint32_t id = static_cast<uint32_t>(m % 2);
    if (m < 2) {
      return readers()[m]->pins().arvalid() || mem_.outstanding_reads(id) != 0 ||
             (dut().m_axi_arvalid && dut().m_axi_arid == id);
    }
    const auto& p = writers()[m - 2]->pins();
    return p.awvalid() || p.wvalid() || mem_.outstanding_writes(id) != 0 ||
           (dut().m_axi_awvalid && dut().m_axi_awid == id);
  }
  // Mover m has bursts accepted by the memory and not yet answered.
  bool in_flight(int m) {
    const uint32_t id = static_cast<uint32_t>(m % 2);
    return m < 2 ? mem_.outstanding_reads(id) != 0 : mem_.outstanding_writes(id) != 0;
  }
  // Cycles a mover may take to go idle after its last request or response
  // leaves the bus (counted from the cycle after): a reader at once; a writer
  // drops up to WrFifoBeats + 1 buffered beats at one a cycle.
  uint64_t idle_bound(int m) const {
    return m < 2 ? 2 : static_cast<uint64_t>(p_.wr_fifo) + 3;
  }

  // Pulses abort_i for one cycle on the movers of `mask` (bit m = mover m) and
  // drops their queued commands and expectations.
  void abort(unsigned mask) {
    for (int m = 0; m < kMovers; ++m) {
      if (!((mask >> m) & 1)) continue;
      if (m < 2) {
        readers()[m]->pins().set_abort(true);
      } else {
        writers()[m - 2]->pins().set_abort(true);
      }
    }
    tb_.tick();
    for (int m = 0; m < kMovers; ++m) {
      if (!((mask >> m) & 1)) continue;
      if (m < 2) {
        readers()[m]->pins().set_abort(false);
        readers()[m]->drop_all();
      } else {
        writers()[m - 2]->pins().set_abort(false);
        writers()[m - 2]->drop_all();
      }
    }
  }
  // After abort: every mover of `mask` idle within idle_bound() cycles of its
  // last request/response on the bus, err_o clear.
  void wait_idle(unsigned mask, const std::string& what) {
    tb_.tick();  // the cycle after abort_i, in which a stalled output may be withdrawn
    uint64_t quiet[kMovers] = {};
    tb_.run_until(
        [&] {
          bool all = true;
          for (int m = 0; m < kMovers; ++m) {
            if (!((mask >> m) & 1) || idle(m)) continue;
            all = false;
            quiet[m] = busy_on_bus(m) ? 0 : quiet[m] + 1;
            if (quiet[m] > idle_bound(m)) {
              fail(what + ": " + mover_name(m) + " not idle " + std::to_string(idle_bound(m)) +
                   " cycles after its last AXI request/response");
            }
          }
          return all;
        },
        200000, what + ": movers idle after abort");
    for (int m = 0; m < kMovers; ++m) {
      if (((mask >> m) & 1) && err(m)) fail(what + ": " + mover_name(m) + " err_o still set after abort");
    }
    for (auto* r : readers()) r->settle();
  }

  // End of a suite: protocol leftovers, outstanding limits, every completed
  // write still intact and no byte outside the write commands touched.
  void final_checks() {
    mem_.finish();
    const auto& s = mem_.stats();
    for (uint32_t id = 0; id < 2; ++id) {
      auto get = [&](const std::map<uint32_t, int>& m) { return m.count(id) ? m.at(id) : 0; };
      if (get(s.max_reads_by_id) > p_.rd_outstanding) {
        fail("reader " + std::to_string(id) + " had " + std::to_string(get(s.max_reads_by_id)) +
             " bursts outstanding, more than RdMaxOutstanding");
      }
      if (get(s.max_writes_by_id) > p_.wr_outstanding) {
        fail("writer " + std::to_string(id) + " had " + std::to_string(get(s.max_writes_by_id)) +
             " bursts outstanding, more than WrMaxOutstanding");
      }
    }
    for (auto* w : writers()) {
      for (const auto& c : w->completed()) w->check(c, "at the end");
    }
    check_untouched();
    std::cout << "tb_dma: " << tb_.cycle() << " cycles; R " << s.read_beats << " beats in " << s.read_bursts
              << " bursts, W " << s.write_beats << " beats in " << s.write_bursts << " bursts; items r0/r1 "
              << r0_.delivered() << "/" << r1_.delivered() << ", commands done w0/w1 " << w0_.dones() << "/"
              << w1_.dones() << "; most outstanding per ID reads " << get_max(s.max_reads_by_id) << ", writes "
              << get_max(s.max_writes_by_id) << std::endl;
  }

 private:
  static int get_max(const std::map<uint32_t, int>& m) {
    int v = 0;
    for (const auto& [id, n] : m) v = std::max(v, n);
    return v;
  }

  void check_untouched() {
    auto r = ranges_;
    std::sort(r.begin(), r.end());
    std::vector<std::pair<uint64_t, uint64_t>> merged;
    for (const auto& x : r) {
      if (!merged.empty() && x.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, x.second);
      } else {
        merged.push_back(x);
      }
    }
    const auto& memory = mem_.memory();
    for (const auto& [line, bytes] : memory.lines()) {
      if (line < kWriteBase || line >= kWriteBase + kWriteSize) continue;
      for (uint64_t i = 0; i < SparseMemory::kLineBytes; ++i) {
        const uint64_t a = line + i;
        auto it = std::upper_bound(merged.begin(), merged.end(), std::make_pair(a, UINT64_MAX));
        const bool inside = it != merged.begin() && a < std::prev(it)->second;
        if (!inside && bytes[i] != memory.fill_byte(a)) {
          fail("byte " + hex(a) + " outside every write command was written (WSTRB): holds " + hex(bytes[i]));
        }
      }
    }
  }

  FailFn fail_fn() {
    return [this](const std::string& m) { tb_.fail(m); };
  }

  Mem::Ports mem_ports() {
    Mem::Ports p;
    p.arvalid = [this] { return dut().m_axi_arvalid != 0; };
    p.ar = [this] {
      Mem::Addr a;
      a.id = dut().m_axi_arid;
      a.addr = dut().m_axi_araddr;
      a.len = dut().m_axi_arlen;
      a.size = dut().m_axi_arsize;
      a.burst = dut().m_axi_arburst;
      return a;
    };
    p.set_arready = [this](bool r) { dut().m_axi_arready = r; };
    p.set_r = [this](bool v, const Mem::RBeat& b) {
      dut().m_axi_rvalid = v;
      dut().m_axi_rid = static_cast<uint8_t>(b.id);
      set_wide(dut().m_axi_rdata, b.data);
      dut().m_axi_rresp = static_cast<uint8_t>(b.resp);
      dut().m_axi_rlast = b.last;
    };
    p.rready = [this] { return dut().m_axi_rready != 0; };
    p.awvalid = [this] { return dut().m_axi_awvalid != 0; };
    p.aw = [this] {
      Mem::Addr a;
      a.id = dut().m_axi_awid;
      a.addr = dut().m_axi_awaddr;
      a.len = dut().m_axi_awlen;
      a.size = dut().m_axi_awsize;
      a.burst = dut().m_axi_awburst;
      return a;
    };
    p.set_awready = [this](bool r) { dut().m_axi_awready = r; };
    p.wvalid = [this] { return dut().m_axi_wvalid != 0; };
    p.w = [this] {
      Mem::WBeat w;
      w.data = beat_of(dut().m_axi_wdata);
      w.strb = dut().m_axi_wstrb;
      w.last = dut().m_axi_wlast != 0;
      return w;
    };
    p.set_wready = [this](bool r) { dut().m_axi_wready = r; };
    p.set_b = [this](bool v, const Mem::BResp& b) {
      dut().m_axi_bvalid = v;
      dut().m_axi_bid = static_cast<uint8_t>(b.id);
      dut().m_axi_bresp = static_cast<uint8_t>(b.resp);
    };
    p.bready = [this] { return dut().m_axi_bready != 0; };
    return p;
  }

#define FARNN_DMA_READER_PINS(P)                                            \
  ReaderPins {                                                              \
    .set_abort = [this](bool a) { dut().P##_abort_i = a; },                 \
    .idle = [this] { return dut().P##_idle_o != 0; },                       \
    .cmd_ready = [this] { return dut().P##_cmd_ready_o != 0; },             \
    .out_valid = [this] { return dut().P##_out_valid_o != 0; },             \
    .out_ready = [this] { return dut().P##_out_ready_i != 0; },             \
    .out_last = [this] { return dut().P##_out_last_o != 0; },               \
    .err = [this] { return dut().P##_err_o != 0; },                         \
    .arvalid = [this] { return (dut().rd_arvalid_o >> I) & 1; },            \
    .set_cmd =                                                              \
        [this](bool v, const ReadCmd& c) {                                  \
          dut().P##_cmd_valid_i = v;                                        \
          dut().P##_cmd_addr_i = c.addr;                                    \
          dut().P##_cmd_bytes_i = c.bytes;                                  \
          dut().P##_cmd_last_i = c.last;                                    \
        },                                                                  \
    .set_out_ready = [this](bool r) { dut().P##_out_ready_i = r; },         \
    .out_data = [this] { return beat_of(dut().P##_out_data_o); },           \
    .out_lo = [this] { return static_cast<int>(dut().P##_out_lo_o); },      \
    .out_hi = [this] { return static_cast<int>(dut().P##_out_hi_o); },      \
    .err_addr = [this] { return static_cast<uint64_t>(dut().P##_err_addr_o); }, \
    .err_resp = [this] { return static_cast<int>(dut().P##_err_resp_o); },  \
    .word_aligned = I == 0,                                                 \
  }
#define FARNN_DMA_WRITER_PINS(P, W)                                         \
  WriterPins {                                                              \
    .set_abort = [this](bool a) { dut().P##_abort_i = a; },                 \
    .idle = [this] { return dut().P##_idle_o != 0; },                       \
    .cmd_ready = [this] { return dut().P##_cmd_ready_o != 0; },             \
    .in_ready = [this] { return dut().P##_in_ready_o != 0; },               \
    .done = [this] { return dut().P##_done_o != 0; },                       \
    .err = [this] { return dut().P##_err_o != 0; },                         \
    .awvalid = [this] { return (dut().wr_awvalid_o >> I) & 1; },            \
    .wvalid = [this] { return (dut().wr_wvalid_o >> I) & 1; },              \
    .set_cmd =                                                              \
        [this](bool v, const WriteCmd& c) {                                 \
          dut().P##_cmd_valid_i = v;                                        \
          dut().P##_cmd_addr_i = c.addr;                                    \
          dut().P##_cmd_bytes_i = c.bytes;                                  \
          dut().P##_cmd_wide_i = c.wide;                                    \
        },                                                                  \
    .set_in =                                                               \
        [this](bool v, const WriteItem& d) {                                \
          dut().P##_in_valid_i = v;                                         \
          if (v) set_item(dut().P##_in_data_i, d);                          \
        },                                                                  \
    .err_addr = [this] { return static_cast<uint64_t>(dut().P##_err_addr_o); }, \
    .err_resp = [this] { return static_cast<int>(dut().P##_err_resp_o); },  \
    .in_words = W,                                                          \
  }

  template <int I>
  ReaderPins reader_pins() {
    if constexpr (I == 0) {
      return FARNN_DMA_READER_PINS(r0);
    } else {
      return FARNN_DMA_READER_PINS(r1);
    }
  }
  template <int I>
  WriterPins writer_pins() {
    if constexpr (I == 0) {
      return FARNN_DMA_WRITER_PINS(w0, 1);
    } else {
      return FARNN_DMA_WRITER_PINS(w1, 4);
    }
  }
#undef FARNN_DMA_READER_PINS
#undef FARNN_DMA_WRITER_PINS

  Params p_;
  Rng rng_;
  Testbench<Top> tb_;
  uint32_t max_bytes_;
  Mem mem_;
  ReaderPort r0_, r1_;
  WriterPort w0_, w1_;
  ArbitrationMonitor arb_;
  uint64_t write_cursor_ = kWriteBase;
  uint64_t work_at_bound_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;  // every write command issued
};

// --- suites -----------------------------------------------------------------

void suite_random(DmaBench& b, int cmds) {
  const Stress heavy = random_stress(b.rng());
  std::cout << "random: " << cmds << " commands per mover under stress: " << heavy.describe() << std::endl;
  b.apply(heavy);
  b.issue_random(cmds);
  b.run_to_completion("random: commands under stress complete");
  const Stress calm = calm_stress(b.rng());
  std::cout << "random: " << cmds << " commands per mover back to back: " << calm.describe() << std::endl;
  b.apply(calm);
  b.issue_random(cmds);
  b.run_to_completion("random: back-to-back commands complete");
}

// One mover's error: where it is expected and what must follow.
struct ErrorPlan {
  int mover = 0;
  uint64_t lo = 0, hi = 0;      // the failing beat lies in [lo, hi)
  uint64_t target = 0;          // reader: seq of the first item lost; writer: commands done before it
  size_t log_from = 0;          // the memory's error log before this round
};

void suite_errors(DmaBench& b, int rounds, int cmds) {
  constexpr uint64_t kReadEnd = kReadBase + kReadSize, kWriteEnd = kWriteBase + kWriteSize;
  for (int round = 0; round < rounds; ++round) {
    Stress s = random_stress(b.rng());
    b.apply(s);
    ErrorPlan e;
    e.mover = round % DmaBench::kMovers;
    e.log_from = b.mem().errors().size();
    const bool region = b.rng().chance(0.33);  // else an injected error
    const auto resp = b.rng().chance(0.5) ? AxiResp::kSlvErr : AxiResp::kDecErr;
    const int victim_cmd = static_cast<int>(b.rng().range(0, cmds - 1));
    const uint64_t first_seq = e.mover < 2 ? b.readers()[e.mover]->next_seq() : 0;
    const uint64_t dones_before = e.mover < 2 ? 0 : b.writers()[e.mover - 2]->dones();
    std::vector<WriteCmd> victim_writes;
    for (int i = 0; i < cmds; ++i) {
      for (int m = 0; m < DmaBench::kMovers; ++m) {
        const bool victim = m == e.mover && i == victim_cmd;
        if (m < 2) {
          ReaderPort& r = *b.readers()[m];
          ReadCmd c = b.random_read(r);
          if (victim && region) {  // runs off the end of the read area: DECERR
            const uint64_t unit = r.cmd_unit();
            const uint64_t inside = unit * static_cast<uint64_t>(b.rng().range(1, 64));
            c.addr = kReadEnd - inside;
            c.bytes = static_cast<uint32_t>(inside + unit * static_cast<uint64_t>(b.rng().range(1, 64)));
            e.lo = kReadEnd;
            e.hi = UINT64_MAX;
          } else if (victim) {
            const uint64_t unit = r.cmd_unit();
            const uint64_t at = c.addr + unit * static_cast<uint64_t>(b.rng().range(0, c.bytes / unit - 1));
            e.lo = at & ~uint64_t{63};
            e.hi = e.lo + 64;
            b.mem().inject_error(e.lo, e.hi, resp, 1, Mem::Dir::kRead, m);
          }
          r.issue(c);
        } else {
          WriterPort& w = *b.writers()[m - 2];
          WriteCmd c = b.random_write(w);
          const uint64_t unit = c.wide ? 4ull * static_cast<uint64_t>(w.pins().in_words) : 4;
          if (victim && region) {  // runs off the end of the write area: DECERR
            const uint64_t inside = unit * static_cast<uint64_t>(b.rng().range(1, 512 * 4 / unit));
            c.addr = kWriteEnd - inside;
            c.bytes = static_cast<uint32_t>(inside + unit * static_cast<uint64_t>(b.rng().range(1, 512 * 4 / unit)));
            e.lo = kWriteEnd;
            e.hi = UINT64_MAX;
          } else if (victim) {
            const uint64_t at = c.addr + unit * static_cast<uint64_t>(b.rng().range(0, c.bytes / unit - 1));
            e.lo = at & ~uint64_t{63};
            e.hi = e.lo + 64;
            b.mem().inject_error(e.lo, e.hi, resp, 1, Mem::Dir::kWrite, m - 2);
          }
          if (m == e.mover) victim_writes.push_back(c);
          b.issue_write(w, c);
        }
      }
    }
    if (e.mover < 2) {
      e.target = b.readers()[e.mover]->first_seq_in(first_seq, e.lo, e.hi);
    } else {  // the first command touching the failing beat (neighbours may share it)
      uint64_t k = 0;
      while ((victim_writes[k].addr & ~uint64_t{63}) >= e.hi ||
             ((victim_writes[k].addr + victim_writes[k].bytes + 63) & ~uint64_t{63}) <= e.lo) {
        ++k;
      }
      e.target = dones_before + k;
    }
    const std::string tag = "errors round " + std::to_string(round) + " (" + DmaBench::mover_name(e.mover) + ", " +
                            (region ? "off its area" : axi_resp_name(resp)) + " at " + hex(e.lo) + ")";

    // The victim reports the error; every other mover finishes bit-exact.
    b.tb().run_until(
        [&] {
          if (!b.err(e.mover)) return false;
          for (int m = 0; m < DmaBench::kMovers; ++m) {
            if (m != e.mover && !(m < 2 ? b.readers()[m]->finished() : b.writers()[m - 2]->finished())) return false;
          }
          return true;
        },
        b.bound(), tag + ": err_o and the other movers done");
    for (int m = 0; m < DmaBench::kMovers; ++m) {
      if (m != e.mover && b.err(m)) b.fail(tag + ": " + DmaBench::mover_name(m) + " raised err_o too");
    }
    const bool write = e.mover >= 2;
    const uint32_t id = static_cast<uint32_t>(e.mover % 2);
    const auto& log = b.mem().errors();
    size_t first = e.log_from;
    while (first < log.size() && !(log[first].write == write && log[first].id == id)) ++first;
    if (first == log.size()) b.fail(tag + ": err_o without an error response on the bus");
    if (log[first].beat_addr < e.lo || log[first].beat_addr >= e.hi) {
      b.fail(tag + ": the error hit beat " + hex(log[first].beat_addr) + ", not the chosen one");
    }
    if (b.err_addr(e.mover) != log[first].burst_addr || b.err_resp(e.mover) != static_cast<int>(log[first].resp)) {
      b.fail(tag + ": err_addr_o/err_resp_o = " + hex(b.err_addr(e.mover)) + "/" +
             std::to_string(b.err_resp(e.mover)) + ", expected the failing burst " + hex(log[first].burst_addr) +
             "/" + std::to_string(static_cast<int>(log[first].resp)));
    }
    if (!write) {
      // Every item before the failing beat arrives; none from it on.
      ReaderPort& r = *b.readers()[e.mover];
      b.tb().run_until([&] { return r.next_seq() >= e.target; }, 100000, tag + ": items before the failing beat");
      for (int i = 0; i < 200; ++i) b.tb().tick();
      if (r.next_seq() != e.target || r.pins().out_valid()) {
        b.fail(tag + ": data delivered from the failing beat on (item #" + std::to_string(r.next_seq()) + ")");
      }
    } else {
      WriterPort& w = *b.writers()[e.mover - 2];
      for (int i = 0; i < 200; ++i) b.tb().tick();
      if (w.dones() != e.target) {
        b.fail(tag + ": " + std::to_string(w.dones() - dones_before) + " commands done, expected " +
               std::to_string(e.target - dones_before) + " (those before the failing burst)");
      }
    }
    b.abort(1u << e.mover);
    b.wait_idle(1u << e.mover, tag);
    b.mem().clear_errors();
    b.mark_work();
  }
  // The next commands on every mover are bit-exact.
  b.apply(random_stress(b.rng()));
  b.issue_random(cmds);
  b.run_to_completion("errors: commands after the last error complete");
}

void suite_abort(DmaBench& b, int rounds, int cmds) {
  for (int round = 0; round < rounds; ++round) {
    b.apply(random_stress(b.rng()));
    b.issue_random(static_cast<int>(b.rng().range(1, cmds)));
    const auto wait = static_cast<uint64_t>(b.rng().range(0, 3000));
    for (uint64_t c = 0; c < wait && !b.finished(); ++c) b.tb().tick();
    const auto mask = static_cast<unsigned>(b.rng().range(1, (1 << DmaBench::kMovers) - 1));
    // The movers of the mask are aborted one by one, a few cycles apart, half
    // of them once they have bursts in flight.
    for (int m = 0; m < DmaBench::kMovers; ++m) {
      if (!((mask >> m) & 1)) continue;
      const auto gap = b.rng().range(0, 20);
      for (long long c = 0; c < gap; ++c) b.tb().tick();
      if (b.rng().chance(0.5)) {
        for (int c = 0; c < 2000 && !b.in_flight(m); ++c) b.tb().tick();
      }
      b.abort(1u << m);
    }
    const std::string tag = "abort round " + std::to_string(round) + " (mask " + std::to_string(mask) + ")";
    b.wait_idle(mask, tag);
    b.run_to_completion(tag + ": the movers not aborted complete");
  }
  b.apply(random_stress(b.rng()));
  b.issue_random(cmds);
  b.run_to_completion("abort: commands after the last abort complete");
}

void suite_efficiency(DmaBench& b) {
  const Params& p = b.params();
  constexpr int kLatency = 250;  // 1 us at 250 MHz
  Stress s;
  s.mem.read_latency_min = s.mem.read_latency_max = kLatency;
  s.mem.write_latency_min = s.mem.write_latency_max = 400;
  s.mem.max_reads = s.mem.max_writes = 64;
  b.apply(s);
  b.mem().reset_stats();
  b.readers()[1]->issue({kReadBase, 1u << 20, true});
  b.run_to_completion("efficiency: the 1 MiB read");
  const auto& st = b.mem().stats();
  const uint64_t window = st.last_r_cycle - st.first_ar_cycle + 1;
  const double eff = st.r_efficiency();
  std::printf("efficiency: reader 1, 1 MiB in %llu beats, %llu cycles from the first AR to the last R beat at %d "
              "cycles of latency: R busy %.2f %% (%.2f %% after the first beat) [%s]\n",
              static_cast<unsigned long long>(st.read_beats), static_cast<unsigned long long>(window), kLatency,
              100.0 * eff, 100.0 * double(st.read_beats) / double(window - kLatency), p.describe().c_str());
  if (eff < 0.90) b.fail("efficiency: R channel busy " + std::to_string(100.0 * eff) + " % < 90 %");

  // Stream rates: reader 0 delivers an item (4 words) a cycle, and writer 0
  // takes a word a cycle.
  ReaderPort& r0 = *b.readers()[0];
  WriterPort& w0 = *b.writers()[0];
  constexpr uint32_t kBytes = 64 * 1024 - 8;
  r0.issue({kReadBase + 0x20004, kBytes, true});  // starts and ends mid-beat
  b.issue_write(w0, {kWriteBase + 0x10004, kBytes});
  uint64_t first[2] = {0, 0}, last[2] = {0, 0}, seen[2] = {r0.delivered(), w0.items_taken()};
  const uint64_t start[2] = {seen[0], seen[1]};
  b.tb().run_until(
      [&] {
        const uint64_t now[2] = {r0.delivered(), w0.items_taken()};
        for (int k = 0; k < 2; ++k) {
          if (now[k] == seen[k]) continue;
          if (first[k] == 0) first[k] = b.tb().cycle();
          last[k] = b.tb().cycle();
          seen[k] = now[k];
        }
        return b.finished();
      },
      200000, "efficiency: reader 0 and writer 0 streams");
  b.mark_work();
  for (int k = 0; k < 2; ++k) {
    const uint64_t n = seen[k] - start[k];
    const double rate = double(n) / double(last[k] - first[k] + 1);
    std::printf("efficiency: %s %llu items (%s) in %llu cycles from the first to the last: %.2f items/cycle\n",
                k ? "writer 0 took" : "reader 0 delivered", static_cast<unsigned long long>(n),
                k ? "words" : "4-word items, ends partial", static_cast<unsigned long long>(last[k] - first[k] + 1),
                rate);
    if (n != (k ? kBytes / 4 : (kBytes + 8) / 16)) b.fail("efficiency: a stream moved the wrong number of items");
    if (rate < 0.99) b.fail("efficiency: a stream ran below one item per cycle");
  }
}

// One-beat commands on every mover with 300 cycles to each response: every
// mover keeps exactly its MaxOutstanding bursts in flight, never more. AR and
// AW are often refused, so both movers queue up at each mux (round robin).
void suite_outstanding(DmaBench& b, int cmds) {
  const Params& p = b.params();
  Stress s;
  s.mem.read_latency_min = s.mem.read_latency_max = 300;
  s.mem.write_latency_min = s.mem.write_latency_max = 300;
  s.mem.ar_stall = s.mem.aw_stall = 0.7;
  s.mem.max_reads = s.mem.max_writes = 64;
  b.apply(s);
  for (int i = 0; i < cmds; ++i) {
    for (auto* r : b.readers()) {
      const uint64_t beat = static_cast<uint64_t>(b.rng().range(0, kReadSize / 64 - 1));
      r->issue({kReadBase + 64 * beat, 64, b.rng().chance(0.5)});
    }
    for (int w = 0; w < 2; ++w) {
      b.issue_write(*b.writers()[w], {kWriteBase + 128ull * static_cast<uint64_t>(i) + 64ull * static_cast<uint64_t>(w), 64});
    }
  }
  b.run_to_completion("outstanding: one-beat commands complete");
  const auto& st = b.mem().stats();
  for (uint32_t id = 0; id < 2; ++id) {
    const int rd = st.max_reads_by_id.at(id), wr = st.max_writes_by_id.at(id);
    std::printf("outstanding: reader %u had %d bursts in flight at most (RdMaxOutstanding=%d), writer %u %d "
                "(WrMaxOutstanding=%d)\n", id, rd, p.rd_outstanding, id, wr, p.wr_outstanding);
    if (rd != p.rd_outstanding || wr != p.wr_outstanding) {
      b.fail("outstanding: a mover did not keep exactly its MaxOutstanding bursts in flight");
    }
  }
}

}  // namespace
}  // namespace farnn::tb

int main(int argc, char** argv) {
  using namespace farnn::tb;
  return run_main(argc, argv, "tb_dma", [](const Options& opt) {
    opt.allow({"suite", "cmds", "rounds", "max-bytes"});
    const std::string suite = opt.get_string("suite", "random");
    const int cmds = static_cast<int>(opt.get_int("cmds", 48));
    const int rounds = static_cast<int>(opt.get_int("rounds", suite == "errors" ? 24 : 32));
    const auto max_bytes = static_cast<uint32_t>(opt.get_int("max-bytes", 65536));
    if (cmds < 1 || rounds < 1 || max_bytes < 64 || max_bytes > (1u << 24) || max_bytes % 64 != 0) {
      throw std::invalid_argument("tb_dma: --cmds and --rounds must be >= 1, --max-bytes a multiple of 64 in 64..16 MiB");
    }
    DmaBench b(opt, "tb_dma_" + suite, max_bytes);
    std::cout << "tb_dma: " << b.params().describe() << std::endl;
    if (suite == "random") {
      suite_random(b, cmds);
    } else if (suite == "errors") {
      suite_errors(b, rounds, std::max(2, cmds / 4));
    } else if (suite == "abort") {
      suite_abort(b, rounds, std::max(2, cmds / 4));
    } else if (suite == "outstanding") {
      suite_outstanding(b, 4 * cmds);
    } else if (suite == "efficiency") {
      suite_efficiency(b);
    } else {
      throw std::invalid_argument("tb_dma: unknown --suite " + suite + " (random, errors, abort, outstanding, efficiency)");
    }
    b.final_checks();
  });
}
