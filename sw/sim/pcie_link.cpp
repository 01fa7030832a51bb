// PCIe link presets and their goodput arithmetic (see pcie_link.hpp).
#include "pcie_link.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace farnn::sim {
namespace {

double payload_share(int payload, int overhead) { return double(payload) / double(payload + overhead); }
constexpr double kSkipShare = 4.0 / 1538.0;

}  // namespace

PcieLink PcieLink::preset(const std::string& name) {
  PcieLink l;
  l.name = name;
  if (name == "gen3x16") {
    l.gt_per_s = 8.0;
  } else if (name == "gen4x16") {
    l.gt_per_s = 16.0;
  } else {
    std::string known;
    for (const std::string& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown PCIe preset '" + name + "' (known: " + known + ")");
  }
  return l;
}

std::vector<std::string> PcieLink::preset_names() { return {"gen3x16", "gen4x16"}; }

double PcieLink::write_goodput() const {
  return raw_bytes_per_s() * (1 - kSkipShare) * payload_share(mps, mwr_overhead) * (1 - dllp_share);
}

double PcieLink::read_goodput() const {
  // Completions carry at most MPS bytes each; the read requests travel the
  // other direction and do not take from this one.
  return raw_bytes_per_s() * (1 - kSkipShare) * payload_share(std::min(mps, mrrs), cpl_overhead) *
         (1 - dllp_share);
}

std::string PcieLink::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s: %.0f GT/s x%d, MPS %d, MRRS %d; goodput %.1f GB/s write, %.1f GB/s read; read round trip "
                "%.0f ns, %d reads outstanding; MMIO read %.0f ns, write %.0f ns",
                name.c_str(), gt_per_s, lanes, mps, mrrs, write_goodput() / 1e9, read_goodput() / 1e9,
                read_latency_ns, max_outstanding_reads, mmio_read_ns, mmio_write_ns);
  return buf;
}

double beats_per_cycle(double bytes_per_s, double clock_hz) {
  const double beats = bytes_per_s / 64.0 / clock_hz;
  return beats >= 1.0 ? 0.0 : beats;
}

uint64_t cycles_of(double ns, double clock_hz) {
  constexpr uint64_t kSaturated = uint64_t{1} << 62;  // beyond any run; room left to add it to a cycle count
  const double c = std::round(ns * 1e-9 * clock_hz);
  if (!(c < static_cast<double>(kSaturated))) return kSaturated;  // and NaN
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::max(0.0, c)));
}

}  // namespace farnn::sim
