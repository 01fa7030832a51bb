// sim:// URI options -> SimConfig and CoreOptions, then the driver.
#include "sim_device.hpp"

#include <fstream>

#include "core_device.hpp"

namespace farnn::sim {

std::unique_ptr<Device> open_sim_device(const driver::Uri& uri, SimTransport** transport) {
  uri.allow({"pcie", "core_mhz", "card_mib", "seed", "watchdog_us", "cto_us", "trace", "pes", "hidden", "batch"});
  if (!uri.target.empty()) {
    throw UnavailableError("'" + uri.text + "': sim:// takes no target, only options (sim://?pcie=gen4x16)");
  }
  const BuiltCore core = built_core();
  const struct {
    const char* key;
    int built;
  } fixed[] = {{"pes", core.num_pe}, {"hidden", core.max_hidden}, {"batch", core.max_batch}};
  for (const auto& f : fixed) {
    if (uri.options.count(f.key) && uri.positive(f.key, 0, 1L << 30) != f.built) {
      throw UnavailableError("'" + uri.text + "': this build simulates one farnn_core (" + core.describe() +
                             "); " + f.key + "=" + uri.options.at(f.key) + " is not it. Use model://?" + f.key +
                             "=" + uri.options.at(f.key) + " for the bit-accurate model of other sizes");
    }
  }
  SimConfig cfg;
  try {
    cfg.link = PcieLink::preset(uri.options.count("pcie") ? uri.options.at("pcie") : "gen3x16");
  } catch (const std::invalid_argument& e) {
    throw InvalidArgumentError("'" + uri.text + "': " + e.what());
  }
  // core_mhz: a clock the part could run (the simulation's time per cycle
  // shrinks with it, so a clock typed in Hz would run for hours).
  cfg.core_clock_hz = static_cast<double>(uri.positive("core_mhz", 0, 1000)) * 1e6;
  if (!(cfg.core_clock_hz > 0)) cfg.core_clock_hz = synth_clock_mhz() * 1e6;
  cfg.card_bytes = static_cast<uint64_t>(uri.positive("card_mib", 1024, 1L << 16)) << 20;
  cfg.seed = static_cast<uint64_t>(uri.positive("seed", 1, 1L << 62));
  cfg.cto_us = static_cast<double>(uri.positive("cto_us", 50, 10'000'000));
  if (uri.options.count("trace")) {
    cfg.trace_file = uri.options.at("trace");
    if (cfg.trace_file.empty() || !std::ofstream(cfg.trace_file, std::ios::app)) {
      throw InvalidArgumentError("'" + uri.text + "': trace=" + cfg.trace_file +
                                 ": cannot write this file (does its folder exist?)");
    }
  }
  auto t = std::make_unique<SimTransport>(cfg);
  SimTransport* raw = t.get();
  driver::CoreOptions opt;
  opt.kind = "sim";
  opt.watchdog_us = static_cast<double>(uri.positive("watchdog_us", 1000, 60'000'000));
  opt.card_bytes = cfg.card_bytes;
  opt.clock_hz = cfg.core_clock_hz;
  opt.inject = [raw](const FaultPlan& plan) { raw->inject(plan); };
  opt.fault_armed = [raw] { return raw->fault_armed(); };
  auto dev = driver::open_core_device(std::move(t), opt);
  if (transport != nullptr) *transport = raw;
  return dev;
}

}  // namespace farnn::sim
