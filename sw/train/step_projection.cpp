// The projected training step with the schedule's overlap; see
// farnn/step_projection.hpp.
#include "farnn/step_projection.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <stdexcept>

namespace farnn::train {

double HostPhases::total() const {
  return before_load + weight_prep + std::accumulate(parts.begin(), parts.end(), 0.0) +
         before_backward + after_backward;
}

namespace {

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

HostPhases host_phases(const std::vector<Trace::Event>& events, int steps, double host_compute_us) {
  HostPhases h;
  double spans = 0;
  for (const Trace::Event& e : events) {
    if (e.lane != "compute") continue;
    spans += e.duration_us;
    const std::string& n = e.name;
    const size_t part = starts_with(n, "input GEMM") ? n.find(", part ") : std::string::npos;
    if (part != std::string::npos) {
      // "input GEMM l0, part 2/4 (steps 5-9)"
      int k = 0, of = 0, first = 0, last = 0;
      if (std::sscanf(n.c_str() + part, ", part %d/%d (steps %d-%d)", &k, &of, &first, &last) !=
              4 ||
          k < 1 || k > of || last < first) {
        throw std::runtime_error("host_phases: cannot read the part and steps of '" + n + "'");
      }
      h.parts.resize(static_cast<size_t>(of), 0.0);
      h.part_steps.resize(static_cast<size_t>(of), 0);
      h.parts[static_cast<size_t>(k - 1)] += e.duration_us;
      h.part_steps[static_cast<size_t>(k - 1)] = last - first + 1;
    } else if (n == "batch" || n == "pack x") {
      h.before_load += e.duration_us;
    } else if (starts_with(n, "input GEMM")) {
      h.weight_prep += e.duration_us;  // "input GEMM l0, weights"
    } else if (starts_with(n, "dx GEMM") || starts_with(n, "gradient GEMMs") ||
               n == "clip and update") {
      h.after_backward += e.duration_us;
    } else {
      h.before_backward += e.duration_us;
    }
  }
  const double n = std::max(1, steps);
  for (double* v : {&h.before_load, &h.weight_prep, &h.before_backward, &h.after_backward}) *v /= n;
  for (double& p : h.parts) p /= n;
  h.after_backward += std::max(0.0, host_compute_us - spans / n);
  return h;
}

StepProjection project_step(const HostPhases& host, const DeviceTimes& device) {
  if (host.parts.size() != host.part_steps.size()) {
    throw std::invalid_argument("project_step: " + std::to_string(host.parts.size()) + " parts, " +
                                std::to_string(host.part_steps.size()) + " step counts");
  }
  const double steps = std::accumulate(host.part_steps.begin(), host.part_steps.end(), 0.0);
  double t = host.before_load;  // the host's clock
  const double load_end = t + device.load;
  t += host.weight_prep;
  double fw = load_end;  // the FORWARD's progress: the time it has read its published steps by
  for (size_t k = 0; k < host.parts.size(); ++k) {
    t += host.parts[k];  // part k published
    const double share = steps > 0 ? host.part_steps[k] / steps : 1.0 / host.parts.size();
    fw = std::max(fw, t) + device.forward * share;
  }
  if (host.parts.empty()) fw = std::max(fw, t) + device.forward;
  t = std::max(t, fw) + host.before_backward;  // wait for the FORWARD, then the head and dh
  t += device.backward;                        // the BACKWARD, waited for
  t += host.after_backward;
  StepProjection p;
  p.step_us = t;
  p.host_us = host.total();
  p.device_us = device.load + device.forward + device.backward;
  p.exposed_device_us = p.step_us - p.host_us;
  p.overlapped_us = p.device_us - p.exposed_device_us;
  return p;
}

}  // namespace farnn::train
