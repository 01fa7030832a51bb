// Valid/ready stream components (AXI-Stream rules: transfer on valid && ready,
// valid never waits for ready, data stable while stalled):
//   StreamSource<T>     drives a DUT input stream from a queue, inserting random
//                       idle cycles between items (and, on request, a fixed
//                       pause before one item);
//   StreamSink<T>       accepts a DUT output stream with random backpressure;
//   HandshakeMonitor<T> checks a DUT output obeys the rules (valid and data held
//                       while stalled) and counts transfers.
// Signals are bound with small lambdas so one class serves every port type.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>

#include "options.hpp"
#include "testbench.hpp"

namespace farnn::tb {

template <class T>
class StreamSource : public Component {
 public:
  using DriveFn = std::function<void(bool valid, const T& data)>;
  using ReadyFn = std::function<bool()>;

  StreamSource(Rng& rng, double idle_prob, DriveFn drive, ReadyFn ready)
      : rng_(rng), idle_prob_(idle_prob), drive_fn_(std::move(drive)), ready_fn_(std::move(ready)) {}

  void push(const T& item) { queue_.push_back(item); }
  // Withdraws everything not yet accepted (e.g. the inputs of a refused command).
  void clear() {
    queue_.clear();
    valid_ = false;
    hold_cycles_ = 0;
  }
  // Presents nothing for `cycles` cycles once `sent` items (counted over the
  // source's life, as sent()) have been accepted: places one item at a chosen
  // cycle, e.g. in the cycle a watchdog ends the command.
  void hold_after(uint64_t sent, uint64_t cycles) {
    hold_at_ = sent;
    hold_cycles_ = cycles;
  }
  void set_idle_prob(double p) { idle_prob_ = p; }
  // True when every pushed item has been accepted.
  bool done() const { return queue_.empty() && !valid_; }
  size_t pending() const { return queue_.size() + (valid_ ? 1 : 0); }
  uint64_t sent() const { return sent_; }

  void drive() override {
    if (!valid_ && hold_cycles_ > 0 && sent_ == hold_at_) {
      --hold_cycles_;
    } else if (!valid_ && !queue_.empty() && !rng_.chance(idle_prob_)) {
      current_ = queue_.front();
      queue_.pop_front();
      valid_ = true;
    }
    drive_fn_(valid_, current_);
  }
  void sample() override {
    if (valid_ && ready_fn_()) {
      valid_ = false;
      ++sent_;
    }
  }

 private:
  Rng& rng_;
  double idle_prob_;
  DriveFn drive_fn_;
  ReadyFn ready_fn_;
  std::deque<T> queue_;
  T current_{};
  bool valid_ = false;
  uint64_t sent_ = 0;
  uint64_t hold_at_ = 0;      // hold_after(): when sent_ reaches this count,
  uint64_t hold_cycles_ = 0;  // present nothing for this many more cycles
};

template <class T>
class StreamSink : public Component {
 public:
  using ReadyDriveFn = std::function<void(bool ready)>;
  using ValidFn = std::function<bool()>;
  using DataFn = std::function<T()>;
  using ReceiveFn = std::function<void(const T&)>;

  StreamSink(Rng& rng, double stall_prob, ReadyDriveFn ready, ValidFn valid, DataFn data,
             ReceiveFn on_receive = {})
      : rng_(rng),
        stall_prob_(stall_prob),
        ready_fn_(std::move(ready)),
        valid_fn_(std::move(valid)),
        data_fn_(std::move(data)),
        on_receive_(std::move(on_receive)) {}

  void set_stall_prob(double p) { stall_prob_ = p; }
  std::deque<T>& received() { return received_; }
  uint64_t count() const { return count_; }

  void drive() override {
    ready_ = !rng_.chance(stall_prob_);
    ready_fn_(ready_);
  }
  void sample() override {
    if (ready_ && valid_fn_()) {
      T item = data_fn_();
      ++count_;
      if (on_receive_) {
        on_receive_(item);
      } else {
        received_.push_back(item);
      }
    }
  }

 private:
  Rng& rng_;
  double stall_prob_;
  ReadyDriveFn ready_fn_;
  ValidFn valid_fn_;
  DataFn data_fn_;
  ReceiveFn on_receive_;
  std::deque<T> received_;
  bool ready_ = false;
  uint64_t count_ = 0;
};

// Checks one stream's AXI-Stream rules each cycle; register it after the sink
// that drives the stream's ready so it sees this cycle's ready.
template <class T>
class HandshakeMonitor : public Component {
 public:
  using BoolFn = std::function<bool()>;
  using DataFn = std::function<T()>;
  using FailFn = std::function<void(const std::string&)>;

  HandshakeMonitor(std::string name, BoolFn valid, BoolFn ready, DataFn data, FailFn fail)
      : name_(std::move(name)),
        valid_fn_(std::move(valid)),
        ready_fn_(std::move(ready)),
        data_fn_(std::move(data)),
        fail_fn_(std::move(fail)) {}

  uint64_t transfers() const { return transfers_; }
  // While set, a stalled valid may be withdrawn (a command being aborted
  // discards its output); data must still hold while valid stays high.
  void set_allow_withdraw(bool allow) { allow_withdraw_ = allow; }

  // A reset may legally drop a stalled valid.
  void on_reset() override { stalled_ = false; }

  void sample() override {
    const bool valid = valid_fn_();
    const bool ready = ready_fn_();
    if (stalled_ && !valid && allow_withdraw_) stalled_ = false;
    if (stalled_) {
      if (!valid) fail_fn_(name_ + ": valid dropped while stalled (valid must wait for ready)");
      if (!(data_fn_() == held_)) fail_fn_(name_ + ": data changed while stalled");
    }
    stalled_ = valid && !ready;
    if (stalled_) held_ = data_fn_();
    if (valid && ready) ++transfers_;
  }

 private:
  std::string name_;
  BoolFn valid_fn_;
  BoolFn ready_fn_;
  DataFn data_fn_;
  FailFn fail_fn_;
  bool stalled_ = false;
  bool allow_withdraw_ = false;
  T held_{};
  uint64_t transfers_ = 0;
};

}  // namespace farnn::tb
