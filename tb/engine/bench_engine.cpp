// Engine benchmark (`make bench`): LSTM and GRU, hidden sizes from 2*NumPe to
// the largest that fits (or --hidden A,B,...), batch 1 and MaxBatch, T = 100
// (--steps), ideal streams (no idle input, no backpressure) and a gate store
// with a fixed 30-cycle latency. Per phase it also gives the cycles of one
// step, the MAC bound of one step (G*H*H*B/NumPe) and the overhead between them.
// For every configuration it records, per phase, cycles, useful MACs, MAC
// utilization = MACs / (NumPe * cycles) (the cycle count runs from command
// acceptance to done, so it includes every step turnaround, the activation
// latency and the final drain), stall cycles by cause, bytes moved on each
// stream, the cycles of the analytic schedule (sw/lib/engine_cycles.cpp; equal
// to the measured ones under these ideal streams, `make test` checks it), and
// the projected time and throughput at the clock `make synth` estimates (the
// figure it writes into docs/capacity.md) or --clock-mhz. Outputs
// are checked bit-exact against the model so that no figure comes from a
// wrong run. Writes JSON (--json FILE).
#include <fstream>
#include <nlohmann/json.hpp>

#include "farnn/engine_cycles.hpp"

#include "layer_run.hpp"
#include "synth_clock.hpp"

namespace {

using namespace farnn;

using namespace farnn::tb;
using nlohmann::json;

json phase_json(const CommandResult& r, uint64_t schedule_cycles, uint64_t macs, int num_pe, int steps,
                double clock_hz, uint64_t bytes_in, uint64_t bytes_out, uint64_t store_bytes) {
  const Counters& c = r.counters;
  const double seconds = static_cast<double>(c.cycles) / clock_hz;
  const double per_step = static_cast<double>(c.cycles) / steps;
  const double bound = static_cast<double>(macs) / num_pe / steps;
  return json{{"cycles", c.cycles},
              {"schedule_cycles", schedule_cycles},
              {"cycles_per_step", per_step},
              {"mac_bound_per_step", bound},
              {"overhead_per_step", per_step - bound},
              {"macs", macs},
              {"mac_utilization", utilization(macs, num_pe, c.cycles)},
              {"stall_cycles",
               {{"input", c.stall_input}, {"output", c.stall_output}, {"dependency", c.stall_dep},
                {"gate_store", c.stall_store}}},
              {"bytes",
               {{"stream_in", bytes_in},
                {"stream_out", bytes_out},
                {"gate_store", store_bytes},
                {"weights", c.weight_words * 4}}},
              {"projected_seconds", seconds},
              {"projected_gflops", seconds > 0 ? 2.0 * static_cast<double>(macs) / seconds / 1e9 : 0.0}};
}

// A LOAD: cycles, words written (measured at the RAM ports) and the rate
// against the lanes the engine writes per cycle.
json load_json(const CommandResult& r, uint64_t schedule_cycles, int lanes) {
  const double per_cycle = r.counters.cycles ? static_cast<double>(r.counters.weight_words) / r.counters.cycles : 0;
  return json{{"cycles", r.counters.cycles},
              {"schedule_cycles", schedule_cycles},
              {"weight_words", r.counters.weight_words},
              {"weight_bytes", r.counters.weight_words * 4},
              {"lanes", lanes},
              {"words_per_cycle", per_cycle},
              {"fraction_of_lanes", per_cycle / lanes}};
}

// "32,64,200" -> {32, 64, 200}; every entry a positive integer.
std::vector<int> parse_int_list(const std::string& text, const std::string& what) {
  std::vector<int> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v < 1)
      throw std::invalid_argument(what + ": '" + item + "' is not a positive integer");
    out.push_back(v);
    at = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  return run_main(argc, argv, "bench_engine", [](const Options& opt) {
    opt.allow({"steps", "clock-mhz", "json", "hidden"});
    EngineHarness hx(opt, "bench_engine");
    const EngineParams& p = hx.params();
    const int steps = static_cast<int>(opt.get_int("steps", 100));
    const bool given = opt.has("clock-mhz");
    const double clock_hz = (given ? opt.get_double("clock-mhz", 0) : synth_clock_mhz()) * 1e6;
    if (!(clock_hz > 0)) throw std::invalid_argument("--clock-mhz must be positive");
    Stress ideal;
    ideal.mem_min_latency = ideal.mem_max_latency = 30;
    hx.set_stress(ideal);
    const engine::EngineTiming timing = p.timing(30);

    json out{{"benchmark", "engine"},
             {"params",
              {{"num_pe", p.num_pe}, {"num_chains", p.num_chains}, {"weight_depth", p.weight_depth}, {"num_banks", p.num_banks},
               {"weight_lanes", p.weight_lanes}, {"max_hidden", p.max_hidden},
               {"max_batch", p.max_batch}, {"mul_latency", p.mul_latency}, {"add_latency", p.add_latency},
               {"red_adder", p.red_adder}}},
             {"clock_mhz", clock_hz / 1e6},
             {"clock_source", given ? "--clock-mhz" : "make synth estimate (docs/capacity.md)"},
             {"steps", steps},
             {"seed", opt.seed()},
             {"configs", json::array()}};
    Rng rng(opt.seed());
    for (engine::Cell cell : {engine::Cell::kLstm, engine::Cell::kGru}) {
      const int g = engine::gates(cell);
      const int h_max = engine::max_resident_hidden(cell, p.num_pe, p.weight_depth, p.max_hidden);
      std::vector<int> hidden;
      if (opt.has("hidden")) {
        for (const int h : parse_int_list(opt.get_string("hidden", ""), "--hidden"))
          if (h <= h_max) hidden.push_back(h);
      } else {
        for (int h = 2 * p.num_pe; h < h_max; h *= 2) hidden.push_back(h);
        hidden.push_back(h_max);
      }
      for (int h : hidden) {
        for (int batch : {1, p.max_batch}) {
          const engine::Config cfg{cell, h, batch, steps, p.num_pe};
          const LayerCase lc = make_layer_case(rng, cfg, h);
          const LayerRun r = run_layer(hx, lc);
          const bool exact = r.fw.ok() && r.bw.ok() &&
                             first_mismatch(r.model_fw.h, r.fw.h) < 0 &&
                             first_mismatch(r.expected_delta, r.bw.delta) < 0 &&
                             first_mismatch(r.model_bw.state_out, r.bw.state_out) < 0;
          if (!exact) hx.tb().fail("benchmark run is not bit-exact with the model");
          const uint64_t tbh = static_cast<uint64_t>(steps) * batch * h;
          const int sw = engine::state_words(cell);
          const json fw = phase_json(r.fw, engine::forward_cycles(cfg, timing), r.useful_macs, p.num_pe, steps, clock_hz,
                                     4 * (tbh * g + static_cast<uint64_t>(batch) * h * sw),
                                     4 * (tbh + static_cast<uint64_t>(batch) * h * sw), 32 * tbh);
          const json bw = phase_json(r.bw, engine::backward_cycles(cfg, timing), r.useful_macs, p.num_pe, steps, clock_hz,
                                     4 * (tbh + static_cast<uint64_t>(batch) * h),
                                     4 * (tbh * 4 + static_cast<uint64_t>(batch) * h * sw), 32 * tbh);
          out["configs"].push_back(json{{"cell", engine::cell_name(cell)},
                                        {"hidden", h},
                                        {"batch", batch},
                                        {"steps", steps},
                                        {"bit_exact", exact},
                                        {"load", load_json(r.load, engine::load_cycles(cfg, timing),
                                                           p.layout().lanes())},
                                        {"forward", fw},
                                        {"backward", bw}});
          std::printf("  %-4s H=%4d B=%d T=%d  LOAD %6llu cycles %5.2f words/cycle  FW %9llu cycles %5.1f%%   "
                      "BW %9llu cycles %5.1f%%  (per step: FW %.0f BW %.0f, MAC bound %.0f)\n",
                      engine::cell_name(cell), h, batch, steps,
                      static_cast<unsigned long long>(r.load.counters.cycles),
                      out["configs"].back()["load"]["words_per_cycle"].get<double>(),
                      static_cast<unsigned long long>(r.fw.counters.cycles),
                      100.0 * fw["mac_utilization"].get<double>(),
                      static_cast<unsigned long long>(r.bw.counters.cycles),
                      100.0 * bw["mac_utilization"].get<double>(), fw["cycles_per_step"].get<double>(),
                      bw["cycles_per_step"].get<double>(), fw["mac_bound_per_step"].get<double>());
        }
      }
    }
    const std::string path = opt.get_string("json", "bench_engine.json");
    std::ofstream(path) << out.dump(2) << "\n";
    std::printf("wrote %s\n", path.c_str());
  });
}
