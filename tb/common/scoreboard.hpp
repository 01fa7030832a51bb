// In-order scoreboard: expected values are queued, observed values are checked
// against the head of the queue with a comparator; a formatter turns values
// into text for the failure message. finish() fails if expectations remain.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <sstream>
#include <string>

namespace farnn::tb {

template <class T>
class Scoreboard {
 public:
  using EqualFn = std::function<bool(const T& expected, const T& actual)>;
  using FormatFn = std::function<std::string(const T&)>;
  using FailFn = std::function<void(const std::string&)>;

  Scoreboard(std::string name, FailFn fail, FormatFn format,
             EqualFn equal = [](const T& a, const T& b) { return a == b; })
      : name_(std::move(name)), fail_(std::move(fail)), format_(std::move(format)),
        equal_(std::move(equal)) {}

  void expect(const T& v) { expected_.push_back(v); }
  // Drops every outstanding expectation (e.g. items lost to a reset).
  void clear() { expected_.clear(); }
  size_t outstanding() const { return expected_.size(); }
  uint64_t checked() const { return checked_; }

  void observe(const T& actual) {
    if (expected_.empty()) {
      fail_(name_ + ": unexpected output #" + std::to_string(checked_) + ": " + format_(actual));
      return;
    }
    const T exp = expected_.front();
    expected_.pop_front();
    if (!equal_(exp, actual)) {
      std::ostringstream os;
      os << name_ << ": mismatch at output #" << checked_ << ": expected " << format_(exp)
         << ", got " << format_(actual);
      fail_(os.str());
    }
    ++checked_;
  }

  void finish() const {
    if (!expected_.empty()) {
      fail_(name_ + ": " + std::to_string(expected_.size()) + " expected outputs never arrived (first: " +
            format_(expected_.front()) + ")");
    }
  }

 private:
  std::string name_;
  FailFn fail_;
  FormatFn format_;
  EqualFn equal_;
  std::deque<T> expected_;
  uint64_t checked_ = 0;
};

}  // namespace farnn::tb
