// AXI4-Lite master driving a DUT's slave port (32-bit data), for register
// blocks such as core_regs. Signals are bound through the lambdas of Ports, so
// one class serves any Verilated model; axil_slave_ports(dut) binds the
// standard s_axil_* names.
//
//  - Queue reads and writes (queue_read / queue_write); each is issued in order
//    on its channels. AW, W and AR are driven independently, each with random
//    idle cycles before its valid (so AW comes before, after or together with
//    its W); B and R see random backpressure (ready low). Timing sets the
//    probabilities per channel, set_stress() all of them at once.
//  - Every response (data, resp) is recorded as a Result: handed to the
//    completion callback (on_done) or kept in results().
//  - Blocking helpers for tests: read()/write() tick the Testbench until their
//    transaction completes and fail unless the response is OKAY; read_resp()/
//    write_resp() return the Result whatever the response. Each fails with a
//    named error after a cycle bound instead of hanging.
//  - Protocol checks on the slave's outputs, failing through FailFn: BVALID and
//    RVALID held until taken with BRESP, RDATA and RRESP stable meanwhile; no B
//    before both the AW and the W of its write were taken, no R before its AR.
//  - Stats: transactions, the AW/W order seen, stalled response cycles.
// A reset of the DUT (Component::on_reset) drops every queued and in-flight
// transaction: their results never come.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <sstream>
#include <string>
#include <utility>

#include "options.hpp"
#include "testbench.hpp"

namespace farnn::tb {

class AxilMaster : public Component {
 public:
  static constexpr uint8_t kOkay = 0, kExOkay = 1, kSlvErr = 2, kDecErr = 3;
  static constexpr uint64_t kDefaultTimeout = 100000;  // cycles a blocking helper waits

  struct Ports {
    std::function<void(bool valid, uint32_t addr)> set_aw;
    std::function<bool()> awready;
    std::function<void(bool valid, uint32_t data, uint8_t strb)> set_w;
    std::function<bool()> wready;
    std::function<void(bool ready)> set_bready;
    std::function<bool()> bvalid;
    std::function<uint8_t()> bresp;
    std::function<void(bool valid, uint32_t addr)> set_ar;
    std::function<bool()> arready;
    std::function<void(bool ready)> set_rready;
    std::function<bool()> rvalid;
    std::function<uint32_t()> rdata;
    std::function<uint8_t()> rresp;
  };
  using FailFn = std::function<void(const std::string&)>;

  // Per-cycle probabilities: idle = a valid waits another cycle before it is
  // raised; stall = ready low on a response channel.
  struct Timing {
    double aw_idle = 0.0, w_idle = 0.0, ar_idle = 0.0;
    double b_stall = 0.0, r_stall = 0.0;
  };

  struct Result {
    uint64_t id = 0;  // from queue_read / queue_write, in queueing order
    bool write = false;
    uint32_t addr = 0;
    uint32_t data = 0;  // write: the data written; read: the data returned
    uint8_t strb = 0;   // write strobes (reads: 0)
    uint8_t resp = kOkay;
    uint64_t queued = 0;  // cycle queued and cycle the response was taken
    uint64_t done = 0;
  };
  using DoneFn = std::function<void(const Result&)>;

  struct Stats {
    uint64_t writes = 0, reads = 0;                            // responses taken
    uint64_t aw_before_w = 0, w_before_aw = 0, aw_with_w = 0;  // order of each write's AW and W
    uint64_t b_stalled = 0, r_stalled = 0;                     // cycles a response waited for ready
  };

  AxilMaster(Rng& rng, Ports ports, FailFn fail)
      : rng_(rng), p_(std::move(ports)), fail_(std::move(fail)) {}

  void set_timing(const Timing& t) { timing_ = t; }
  void set_stress(double p) { timing_ = Timing{p, p, p, p, p}; }
  const Timing& timing() const { return timing_; }
  // Results go to `f` instead of results() (blocking helpers keep their own).
  void on_done(DoneFn f) { on_done_ = std::move(f); }
  std::deque<Result>& results() { return results_; }
  const Stats& stats() const { return stats_; }

  uint64_t queue_write(uint32_t addr, uint32_t data, uint8_t strb = 0xf) {
    writes_.push_back(Txn{next_id_, addr, data, strb, cycle_});
    return next_id_++;
  }
  uint64_t queue_read(uint32_t addr) {
    reads_.push_back(Txn{next_id_, addr, 0, 0, cycle_});
    return next_id_++;
  }
  // Nothing queued or waiting for a response.
  bool idle() const { return writes_.empty() && reads_.empty(); }

  template <class Model>
  Result read_resp(Testbench<Model>& tb, uint32_t addr, uint64_t max_cycles = kDefaultTimeout) {
    return wait(tb, queue_read(addr), max_cycles, "AXI-Lite read of 0x" + hex(addr));
  }
  template <class Model>
  Result write_resp(Testbench<Model>& tb, uint32_t addr, uint32_t data, uint8_t strb = 0xf,
                    uint64_t max_cycles = kDefaultTimeout) {
    return wait(tb, queue_write(addr, data, strb), max_cycles,
                "AXI-Lite write of 0x" + hex(data) + " to 0x" + hex(addr));
  }
  template <class Model>
  uint32_t read(Testbench<Model>& tb, uint32_t addr, uint64_t max_cycles = kDefaultTimeout) {
    const Result r = read_resp(tb, addr, max_cycles);
    if (r.resp != kOkay)
      tb.fail("AXI-Lite read of 0x" + hex(addr) + " answered " + resp_name(r.resp));
    return r.data;
  }
  template <class Model>
  void write(Testbench<Model>& tb, uint32_t addr, uint32_t data, uint8_t strb = 0xf,
             uint64_t max_cycles = kDefaultTimeout) {
    const Result r = write_resp(tb, addr, data, strb, max_cycles);
    if (r.resp != kOkay) {
      tb.fail("AXI-Lite write of 0x" + hex(data) + " to 0x" + hex(addr) + " answered " +
              resp_name(r.resp));
    }
  }
  // Ticks until every queued transaction has completed.
  template <class Model>
  void drain(Testbench<Model>& tb, uint64_t max_cycles = kDefaultTimeout) {
    tb.run_until([this] { return idle(); }, max_cycles,
                 "AXI-Lite: " + std::to_string(writes_.size()) + " writes and " +
                     std::to_string(reads_.size()) + " reads to complete");
  }

  static const char* resp_name(uint8_t r) {
    switch (r) {
      case kOkay:
        return "OKAY";
      case kExOkay:
        return "EXOKAY";
      case kSlvErr:
        return "SLVERR";
      case kDecErr:
        return "DECERR";
    }
    return "?";
  }

  void drive() override {
    if (!aw_valid_ && aw_next_ < writes_.size() && !rng_.chance(timing_.aw_idle)) aw_valid_ = true;
    if (!w_valid_ && w_next_ < writes_.size() && !rng_.chance(timing_.w_idle)) w_valid_ = true;
    if (!ar_valid_ && ar_next_ < reads_.size() && !rng_.chance(timing_.ar_idle)) ar_valid_ = true;
    b_ready_ = !rng_.chance(timing_.b_stall);
    r_ready_ = !rng_.chance(timing_.r_stall);
    p_.set_aw(aw_valid_, aw_valid_ ? writes_[aw_next_].addr : 0);
    p_.set_w(w_valid_, w_valid_ ? writes_[w_next_].data : 0, w_valid_ ? writes_[w_next_].strb : 0);
    p_.set_ar(ar_valid_, ar_valid_ ? reads_[ar_next_].addr : 0);
    p_.set_bready(b_ready_);
    p_.set_rready(r_ready_);
  }

  void sample() override {
    ++cycle_;
    // Responses first: a B or R offered in the cycle its request is taken is a violation.
    sample_b();
    sample_r();
    if (aw_valid_ && p_.awready()) {
      aw_valid_ = false;
      writes_[aw_next_++].a_cycle = cycle_;
    }
    if (w_valid_ && p_.wready()) {
      w_valid_ = false;
      writes_[w_next_++].w_cycle = cycle_;
    }
    if (ar_valid_ && p_.arready()) {
      ar_valid_ = false;
      reads_[ar_next_++].a_cycle = cycle_;
    }
  }

  void on_reset() override {
    writes_.clear();
    reads_.clear();
    aw_next_ = w_next_ = ar_next_ = 0;
    aw_valid_ = w_valid_ = ar_valid_ = false;
    b_stalled_ = r_stalled_ = false;
  }

 private:
  struct Txn {
    uint64_t id;
    uint32_t addr, data;
    uint8_t strb;
    uint64_t queued;
    uint64_t a_cycle = 0, w_cycle = 0;  // cycles its AW (AR for a read) and W were taken
  };

  static std::string hex(uint64_t v) {
    std::ostringstream os;
    os << std::hex << v;
    return os.str();
  }

  void sample_b() {
    const bool valid = p_.bvalid();
    if (b_stalled_ && (!valid || p_.bresp() != b_held_)) {
      fail_("AXI-Lite: B response " + std::string(valid ? "changed" : "withdrawn") +
            " while stalled");
    }
    b_stalled_ = valid && !b_ready_;
    b_held_ = p_.bresp();
    if (!valid) return;
    if (b_stalled_) ++stats_.b_stalled;
    if (aw_next_ == 0 || w_next_ == 0) {  // the oldest write's AW or W not taken yet
      fail_("AXI-Lite: B response with no write whose AW and W were both taken");
      return;
    }
    if (!b_ready_) return;
    const Txn t = writes_.front();
    writes_.pop_front();
    --aw_next_;
    --w_next_;
    ++stats_.writes;
    if (t.a_cycle < t.w_cycle)
      ++stats_.aw_before_w;
    else if (t.w_cycle < t.a_cycle)
      ++stats_.w_before_aw;
    else
      ++stats_.aw_with_w;
    complete(Result{t.id, true, t.addr, t.data, t.strb, p_.bresp(), t.queued, cycle_});
  }

  void sample_r() {
    const bool valid = p_.rvalid();
    if (r_stalled_ && (!valid || p_.rresp() != r_resp_held_ || p_.rdata() != r_data_held_)) {
      fail_("AXI-Lite: R response " + std::string(valid ? "changed" : "withdrawn") +
            " while stalled");
    }
    r_stalled_ = valid && !r_ready_;
    r_resp_held_ = p_.rresp();
    r_data_held_ = p_.rdata();
    if (!valid) return;
    if (r_stalled_) ++stats_.r_stalled;
    if (ar_next_ == 0) {  // the oldest read's AR not taken yet
      fail_("AXI-Lite: R response with no read whose AR was taken");
      return;
    }
    if (!r_ready_) return;
    const Txn t = reads_.front();
    reads_.pop_front();
    --ar_next_;
    ++stats_.reads;
    complete(Result{t.id, false, t.addr, p_.rdata(), 0, p_.rresp(), t.queued, cycle_});
  }

  void complete(const Result& r) {
    if (waiting_ && r.id == wait_id_) {
      waited_ = r;
      waiting_ = false;
    } else if (on_done_) {
      on_done_(r);
    } else {
      results_.push_back(r);
    }
  }

  template <class Model>
  Result wait(Testbench<Model>& tb, uint64_t id, uint64_t max_cycles, const std::string& what) {
    waiting_ = true;
    wait_id_ = id;
    tb.run_until([this] { return !waiting_; }, max_cycles, what);
    return waited_;
  }

  Rng& rng_;
  Ports p_;
  FailFn fail_;
  Timing timing_;
  DoneFn on_done_;
  std::deque<Result> results_;
  Stats stats_;
  std::deque<Txn> writes_, reads_;   // queued, waiting for their response, in order
  size_t aw_next_ = 0, w_next_ = 0;  // writes_ whose AW / W were taken (the oldest first)
  size_t ar_next_ = 0;               // reads_ whose AR was taken
  bool aw_valid_ = false, w_valid_ = false, ar_valid_ = false;
  bool b_ready_ = false, r_ready_ = false;
  bool b_stalled_ = false, r_stalled_ = false;
  uint8_t b_held_ = 0, r_resp_held_ = 0;
  uint32_t r_data_held_ = 0;
  uint64_t next_id_ = 0, cycle_ = 0;
  bool waiting_ = false;
  uint64_t wait_id_ = 0;
  Result waited_;
};

// Ports of a Verilated model whose AXI4-Lite slave uses the standard s_axil_*
// names (AWPROT and ARPROT driven 0).
template <class Dut>
AxilMaster::Ports axil_slave_ports(Dut& d) {
  AxilMaster::Ports p;
  p.set_aw = [&d](bool v, uint32_t a) {
    d.s_axil_awvalid = v;
    d.s_axil_awaddr = a;
    d.s_axil_awprot = 0;
  };
  p.awready = [&d] { return d.s_axil_awready != 0; };
  p.set_w = [&d](bool v, uint32_t data, uint8_t strb) {
    d.s_axil_wvalid = v;
    d.s_axil_wdata = data;
    d.s_axil_wstrb = strb;
  };
  p.wready = [&d] { return d.s_axil_wready != 0; };
  p.set_bready = [&d](bool r) { d.s_axil_bready = r; };
  p.bvalid = [&d] { return d.s_axil_bvalid != 0; };
  p.bresp = [&d] { return static_cast<uint8_t>(d.s_axil_bresp); };
  p.set_ar = [&d](bool v, uint32_t a) {
    d.s_axil_arvalid = v;
    d.s_axil_araddr = a;
    d.s_axil_arprot = 0;
  };
  p.arready = [&d] { return d.s_axil_arready != 0; };
  p.set_rready = [&d](bool r) { d.s_axil_rready = r; };
  p.rvalid = [&d] { return d.s_axil_rvalid != 0; };
  p.rdata = [&d] { return static_cast<uint32_t>(d.s_axil_rdata); };
  p.rresp = [&d] { return static_cast<uint8_t>(d.s_axil_rresp); };
  return p;
}

}  // namespace farnn::tb
