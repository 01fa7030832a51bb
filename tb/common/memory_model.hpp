// Memory model serving a simple in-order request/response master (the gate
// store port): requests are accepted with random backpressure, answered in
// order after a random latency, and responses wait for the master's ready.
// Every request (read or write) gets exactly one response. Accesses outside
// the registered window or misaligned fail the test; reading a word that was
// never written fails too (it would be silent corruption in hardware).
// A reset of the master resets this side too (requests in flight are dropped:
// the engine's reset contract). set_mute(true) models a memory that stops
// answering: requests are still taken, responses wait until unmuted.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <sstream>
#include <string>
#include <unordered_map>

#include "options.hpp"
#include "testbench.hpp"

namespace farnn::tb {

template <size_t Words>
class MemoryModel : public Component {
 public:
  using Line = std::array<uint32_t, Words>;
  struct Request {
    bool write = false;
    uint64_t addr = 0;
    Line data{};
  };
  struct Ports {
    std::function<bool()> req_valid;
    std::function<Request()> req;          // sampled when req_valid
    std::function<void(bool)> set_req_ready;
    std::function<void(bool, const Line&)> set_rsp;  // valid, data
    std::function<bool()> rsp_ready;
  };
  using FailFn = std::function<void(const std::string&)>;

  MemoryModel(Rng& rng, Ports ports, FailFn fail) : rng_(rng), p_(std::move(ports)), fail_(std::move(fail)) {}

  void set_window(uint64_t base, uint64_t size) {
    base_ = base;
    size_ = size;
  }
  // Probability of refusing a request / of a response not being ready; latency range.
  void set_stress(double req_stall, double rsp_stall, int min_latency, int max_latency) {
    req_stall_ = req_stall;
    rsp_stall_ = rsp_stall;
    min_lat_ = min_latency;
    max_lat_ = max_latency;
  }
  void set_mute(bool mute) { mute_ = mute; }
  // A far side that ignores the master's reset (breaks the contract): requests
  // in flight are still answered afterwards.
  void set_keep_on_reset(bool keep) { keep_on_reset_ = keep; }
  const std::unordered_map<uint64_t, Line>& contents() const { return mem_; }
  size_t outstanding() const { return pending_.size(); }
  uint64_t reads() const { return reads_; }
  uint64_t writes() const { return writes_; }
  bool idle() const { return pending_.empty(); }

  void on_reset() override {
    if (keep_on_reset_) return;
    pending_.clear();
    rsp_valid_ = false;
  }

  void drive() override {
    req_ready_ = !rng_.chance(req_stall_);
    p_.set_req_ready(req_ready_);
    // A response once offered stays offered until taken (valid never waits for ready).
    rsp_valid_ = !pending_.empty() && pending_.front().due <= now_ &&
                 (rsp_valid_ || (!mute_ && !rng_.chance(rsp_stall_)));
    p_.set_rsp(rsp_valid_, rsp_valid_ ? pending_.front().data : Line{});
  }

  void sample() override {
    if (rsp_valid_ && p_.rsp_ready()) {
      pending_.pop_front();
      rsp_valid_ = false;
    }
    if (req_ready_ && p_.req_valid()) accept(p_.req());
    ++now_;
  }

 private:
  struct Pending {
    uint64_t due;
    Line data;
  };

  void accept(const Request& r) {
    constexpr uint64_t kBytes = Words * 4;
    if (r.addr % kBytes != 0 || r.addr < base_ || r.addr + kBytes > base_ + size_) {
      std::ostringstream os;
      os << "memory: " << (r.write ? "write" : "read") << " at 0x" << std::hex << r.addr
         << " outside window [0x" << base_ << ", 0x" << base_ + size_ << ") or misaligned";
      fail_(os.str());
    }
    Pending p;
    p.due = now_ + static_cast<uint64_t>(rng_.range(min_lat_, max_lat_));
    if (!pending_.empty() && p.due < pending_.back().due) p.due = pending_.back().due;  // in order
    if (r.write) {
      mem_[r.addr] = r.data;
      ++writes_;
    } else {
      auto it = mem_.find(r.addr);
      if (it == mem_.end()) {
        std::ostringstream os;
        os << "memory: read of never-written address 0x" << std::hex << r.addr;
        fail_(os.str());
      }
      p.data = it->second;
      ++reads_;
    }
    pending_.push_back(p);
  }

  Rng& rng_;
  Ports p_;
  FailFn fail_;
  std::unordered_map<uint64_t, Line> mem_;
  std::deque<Pending> pending_;
  uint64_t base_ = 0, size_ = 0, now_ = 0, reads_ = 0, writes_ = 0;
  double req_stall_ = 0.0, rsp_stall_ = 0.0;
  int min_lat_ = 1, max_lat_ = 1;
  bool req_ready_ = false, rsp_valid_ = false, mute_ = false, keep_on_reset_ = false;
};

}  // namespace farnn::tb
