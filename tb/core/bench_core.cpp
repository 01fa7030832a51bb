// Core benchmark (`make bench`): one LSTM and one GRU layer (the largest
// resident H, B = MaxBatch, T = --steps) through farnn_core's ring — LOAD,
// FORWARD, BACKWARD, one descriptor at a time — with host memory answering
// after --host-latency-ns (default 1000 ns, a PCIe round trip) and card memory
// after --card-latency-ns (default 250 ns, DDR), both converted to cycles at
// the clock `make synth` estimates (or --clock-mhz), no backpressure. Per
// phase: cycles from the doorbell to the completion word in host memory, the
// engine alone (the cycle model with ideal streams and the same gate-store
// latency), MACs and utilization, stall cycles by cause (the core's
// counters), bytes on each master, and the host read channel's efficiency
// during the LOAD. Results are checked bit-exact first. Writes JSON (--json).
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core_layer.hpp"
#include "synth_clock.hpp"

using namespace farnn;
using namespace farnn::tb;
using nlohmann::json;

namespace {

// Runs one descriptor; returns its JSON record (cycles: doorbell to completion word).
json run_phase(CoreHarness& hx, const cr::Descriptor& d, uint64_t engine_cycles, int num_pe, double clock_hz) {
  hx.wait_idle(1'000'000, "bench: before a phase");
  const CoreHarness::Counters a = hx.counters();
  hx.host().reset_stats();
  const uint64_t cycles = hx.run_timed(d, 50'000'000, "bench: phase");
  const CoreHarness::Counters b = hx.counters();
  const uint64_t macs = b.macs - a.macs;
  return json{{"cycles", cycles},
              {"engine_alone_cycles", engine_cycles},
              {"shell_overhead_cycles", static_cast<int64_t>(cycles) - static_cast<int64_t>(engine_cycles)},
              {"projected_us", static_cast<double>(cycles) / clock_hz * 1e6},
              {"macs", macs},
              {"mac_utilization", static_cast<double>(macs) / (static_cast<double>(num_pe) * static_cast<double>(cycles))},
              {"stall_cycles",
               {{"input", b.st_in - a.st_in},
                {"output", b.st_out - a.st_out},
                {"dependency", b.st_dep - a.st_dep},
                {"gate_store", b.st_store - a.st_store},
                {"step_gate", b.st_gate - a.st_gate}}},
              {"bytes",
               {{"host_read", b.host_rd - a.host_rd},
                {"host_write", b.host_wr - a.host_wr},
                {"card_read", b.card_rd - a.card_rd},
                {"card_write", b.card_wr - a.card_wr}}},
              {"host_read_channel_busy", hx.host().stats().r_efficiency()}};
}

}  // namespace

int main(int argc, char** argv) {
  return run_main(argc, argv, "bench_core", [](const Options& opt) {
    opt.allow({"steps", "clock-mhz", "json", "host-latency-ns", "card-latency-ns"});
    const bool given = opt.has("clock-mhz");
    const double clock_hz = (given ? opt.get_double("clock-mhz", 0) : synth_clock_mhz()) * 1e6;
    if (!(clock_hz > 0)) throw std::invalid_argument("--clock-mhz must be positive");
    const int steps = static_cast<int>(opt.get_int("steps", 32));
    if (steps < 1 || steps > 4096) throw std::invalid_argument("--steps must be in 1..4096");
    const double host_ns = opt.get_double("host-latency-ns", 1000), card_ns = opt.get_double("card-latency-ns", 250);
    const int host_lat = std::max(1, static_cast<int>(std::lround(host_ns * 1e-9 * clock_hz)));
    const int card_lat = std::max(1, static_cast<int>(std::lround(card_ns * 1e-9 * clock_hz)));

    CoreHarness hx(opt, "bench_core");
    hx.set_fixed_latency(host_lat, card_lat, 0.0);
    hx.setup_ring();
    const EngineParams& p = hx.params();
    const engine::EngineTiming t = p.timing(card_lat);

    json out{{"benchmark", "core"},
             {"num_pe", p.num_pe},
             {"max_hidden", p.max_hidden},
             {"max_batch", p.max_batch},
             {"clock_mhz", clock_hz / 1e6},
             {"clock_source", given ? "--clock-mhz" : "make synth estimate (docs/capacity.md)"},
             {"host_read_latency_cycles", host_lat},
             {"card_latency_cycles", card_lat},
             {"configs", json::array()}};
    for (engine::Cell cell : {engine::Cell::kLstm, engine::Cell::kGru}) {
      const engine::Config cfg = full_config(p, cell, steps);
      const HostLayer l = place_layer(hx, cfg, 0, 0x10000);
      const uint64_t macs = static_cast<uint64_t>(cfg.packed_steps()) * cfg.gate_rows() * cfg.hidden;
      json load = run_phase(hx, load_desc(l), engine::load_cycles(cfg, t), p.num_pe, clock_hz);
      load["weight_bytes"] = l.weight_bytes;
      json jf = run_phase(hx, run_desc(l, false), engine::forward_cycles(cfg, t), p.num_pe, clock_hz);
      json jb = run_phase(hx, run_desc(l, true), engine::backward_cycles(cfg, t), p.num_pe, clock_hz);
      // No figure from a wrong run.
      const std::string bad = layer_mismatch(hx, l);
      if (!bad.empty()) hx.tb().fail(std::string("bench: ") + engine::cell_name(cell) + ": " + bad);
      jf["useful_macs"] = macs;
      jb["useful_macs"] = macs;
      out["configs"].push_back(json{{"cell", engine::cell_name(cell)},
                                    {"hidden", cfg.hidden},
                                    {"batch", cfg.batch},
                                    {"steps", cfg.steps},
                                    {"load", load},
                                    {"forward", jf},
                                    {"backward", jb}});
      std::cout << engine::cell_name(cell) << " H" << cfg.hidden << " B" << cfg.batch << " T" << steps
                << ": LOAD " << load["cycles"] << " cycles, FW "
                << jf["cycles"] << " (engine alone " << jf["engine_alone_cycles"] << "), BW " << jb["cycles"]
                << " (engine alone " << jb["engine_alone_cycles"] << ")" << std::endl;
    }
    const std::string path = opt.get_string("json", "bench_core.json");
    std::ofstream(path) << out.dump(2) << "\n";
    std::cout << "bench_core: wrote " << path << std::endl;
  });
}
