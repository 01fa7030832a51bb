// Trace: spans collected in memory, written as Chrome trace-event JSON.
#include "farnn/trace.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "farnn/tensor_io.hpp"

namespace farnn::train {

void Trace::span(const std::string& lane, const std::string& name, Clock::time_point start, Clock::time_point end) {
  const double s = std::chrono::duration<double, std::micro>(start - origin_).count();
  const double d = std::chrono::duration<double, std::micro>(end - start).count();
  std::lock_guard<std::mutex> lock(m_);
  events_.push_back({lane, name, s, std::max(0.0, d)});
}

std::vector<Trace::Event> Trace::events() const {
  std::lock_guard<std::mutex> lock(m_);
  return events_;
}

double Trace::overlap_us(const std::string& a, const std::string& b) const {
  const std::vector<Event> ev = events();
  double total = 0;
  for (const Event& x : ev) {
    if (x.lane != a) continue;
    for (const Event& y : ev) {
      if (y.lane != b) continue;
      const double lo = std::max(x.start_us, y.start_us);
      const double hi = std::min(x.start_us + x.duration_us, y.start_us + y.duration_us);
      if (hi > lo) total += hi - lo;
    }
  }
  return total;
}

void Trace::write_json(const std::string& path) const {
  const std::vector<Event> ev = events();
  std::map<std::string, int> lanes;
  nlohmann::json out = nlohmann::json::array();
  for (const Event& e : ev) {
    const auto [it, added] = lanes.emplace(e.lane, static_cast<int>(lanes.size()) + 1);
    if (added) {
      out.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", it->second},
                     {"args", {{"name", e.lane}}}});
    }
    out.push_back({{"name", e.name}, {"cat", e.lane}, {"ph", "X"}, {"pid", 1}, {"tid", it->second},
                   {"ts", e.start_us}, {"dur", e.duration_us}});
  }
  io::write_file_atomic(path, nlohmann::json{{"traceEvents", out}, {"displayTimeUnit", "ms"}}.dump() + "\n");
}

}  // namespace farnn::train
