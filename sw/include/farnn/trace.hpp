// A run's timeline as a Chrome/Perfetto trace (chrome://tracing, ui.perfetto.dev):
// one lane per actor (the compute backend, the host waiting, the device, and
// on a device that sees its link, the DMA in each direction), one span per
// piece of work: measured host times, projected device times on sim://.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace farnn::train {

// Lanes of the device's DMA over the host link (RnnStack draws them).
inline constexpr const char* kTraceLaneDmaToCard = "DMA host->card";
inline constexpr const char* kTraceLaneDmaToHost = "DMA card->host";

class Trace {
 public:
  using Clock = std::chrono::steady_clock;
  Trace() : origin_(Clock::now()) {}

  void span(const std::string& lane, const std::string& name, Clock::time_point start, Clock::time_point end);
  // A span from construction to destruction on `lane`; null trace: nothing.
  class Scope {
   public:
    Scope(Trace* trace, std::string lane, std::string name)
        : trace_(trace), lane_(std::move(lane)), name_(std::move(name)), start_(Clock::now()) {}
    ~Scope() {
      if (trace_) trace_->span(lane_, name_, start_, Clock::now());
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Trace* trace_;
    std::string lane_, name_;
    Clock::time_point start_;
  };

  struct Event {
    std::string lane, name;
    double start_us, duration_us;
  };
  std::vector<Event> events() const;
  // Microseconds the spans of lanes a and b overlap in total.
  double overlap_us(const std::string& a, const std::string& b) const;
  void write_json(const std::string& path) const;  // std::runtime_error naming the path on failure

 private:
  mutable std::mutex m_;
  Clock::time_point origin_;
  std::vector<Event> events_;
};

}  // namespace farnn::train
