// engine_scale: the cycle model (sw/lib/engine_cycles.cpp) at device-scale
// design points that cannot be Verilated in reasonable time. For each point
// (name, NumPe, NumChains, and `red` where the PEs reduce on an adder of their
// own: the engine's RedAdder), LSTM and GRU, H in {64, 128, 256, 512, 1024} and
// B in {1, 4, 16}, T = 20: FORWARD and BACKWARD cycles per step, the MAC bound
// per step (G*H*H*B / NumPe), MAC utilization and microseconds per step at the
// clock `make synth` estimates (or --clock-mhz). The latencies are the P16 and
// P256 builds' (MulLatency 3, AddLatency 4, gate store 30 cycles). The model is
// the one `make test` checks cycle-exact against every Verilated engine build.
// Besides the command's cycles per step (fill and final drain included), it
// gives the steady cycles per step: what a step adds to a running command,
// (cycles at 2T - cycles at T) / T, and its overhead above the MAC bound.
//   engine_scale --point vu9p:816:51 --point u250:1136:71
//                --point p1024r:1024:64:red --json out.json   (one command line)
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "farnn/engine_cycles.hpp"
#include "synth_clock.hpp"

namespace {

using namespace farnn;
using nlohmann::json;

// The latencies of the P16 and P256 builds, and the gate store of make bench.
constexpr int kMulLatency = 3, kAddLatency = 4, kStoreLatency = 30, kSteps = 20;

struct Point {
  std::string name;
  int pes = 0, chains = 0;
  bool red_adder = false;
};

Point parse_point(const std::string& s) {
  const size_t a = s.find(':'), b = s.find(':', a == std::string::npos ? a : a + 1);
  if (a == std::string::npos || b == std::string::npos)
    throw std::invalid_argument("--point " + s + ": expected NAME:PES:CHAINS");
  Point p{s.substr(0, a)};
  const size_t c = s.find(':', b + 1);
  if (c != std::string::npos) {
    if (s.substr(c + 1) != "red") throw std::invalid_argument("--point " + s + ": the fourth field may only be `red`");
    p.red_adder = true;
  }
  try {
    size_t used = 0;
    const std::string chains = s.substr(b + 1, c == std::string::npos ? std::string::npos : c - b - 1);
    p.pes = std::stoi(s.substr(a + 1, b - a - 1));
    p.chains = std::stoi(chains, &used);
    if (used != chains.size()) throw std::invalid_argument(chains);
  } catch (const std::exception&) {
    throw std::invalid_argument("--point " + s + ": PES and CHAINS must be integers");
  }
  if (p.pes < 1 || p.chains < 1) throw std::invalid_argument("--point " + s + ": PES and CHAINS must be >= 1");
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> specs;
  std::string json_path = "engine_scale.json";
  double clock_mhz = 0;
  CLI::App app{"FARNN engine cycle model at device-scale design points"};
  app.add_option("--point", specs, "NAME:PES:CHAINS[:red] (repeat for several; red: RedAdder)")->required();
  app.add_option("--json", json_path, "output file");
  app.add_option("--clock-mhz", clock_mhz, "clock for the projected times (default: the make synth estimate)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<Point> points;
    for (const std::string& spec : specs) points.push_back(parse_point(spec));
    const bool given = clock_mhz > 0;
    if (!given) clock_mhz = tb::synth_clock_mhz();
    json out{{"benchmark", "engine_scale"},
             {"model", "sw/lib/engine_cycles.cpp"},
             {"clock_mhz", clock_mhz},
             {"clock_source", given ? "--clock-mhz" : "make synth estimate (docs/capacity.md)"},
             {"steps", kSteps},
             {"mul_latency", kMulLatency},
             {"add_latency", kAddLatency},
             {"gate_store_latency", kStoreLatency},
             {"points", json::array()}};
    for (const Point& pt : points) {
      json rows = json::array();
      for (engine::Cell cell : {engine::Cell::kLstm, engine::Cell::kGru}) {
        for (int h : {64, 128, 256, 512, 1024}) {
          for (int b : {1, 4, 16}) {
            const engine::Config cfg{cell, h, b, kSteps, pt.pes}, cfg2{cell, h, b, 2 * kSteps, pt.pes};
            engine::EngineTiming t{pt.pes, kMulLatency, kAddLatency, kStoreLatency,
                                   engine::stream_fifo_depth(h), 16, pt.chains};
            t.red_adder = pt.red_adder;
            const uint64_t fw_t = engine::forward_cycles(cfg, t), bw_t = engine::backward_cycles(cfg, t);
            const double fw = static_cast<double>(fw_t) / kSteps, bw = static_cast<double>(bw_t) / kSteps;
            const double fw_steady = static_cast<double>(engine::forward_cycles(cfg2, t) - fw_t) / kSteps;
            const double bw_steady = static_cast<double>(engine::backward_cycles(cfg2, t) - bw_t) / kSteps;
            const double bound = static_cast<double>(engine::gates(cell)) * h * h * b / pt.pes;
            auto phase = [&](double per_step, double steady) {
              return json{{"cycles_per_step", per_step},
                          {"mac_utilization", bound / per_step},
                          {"us_per_step", per_step / clock_mhz},
                          {"steady_cycles_per_step", steady},
                          {"steady_overhead_per_step", steady - bound}};
            };
            rows.push_back(json{{"cell", engine::cell_name(cell)},
                                {"hidden", h},
                                {"batch", b},
                                {"mac_bound_per_step", bound},
                                {"forward", phase(fw, fw_steady)},
                                {"backward", phase(bw, bw_steady)}});
            std::printf("%-6s P=%4d C=%3d %-4s H=%4d B=%2d  FW %8.0f cyc/step %5.1f%% %8.2f us (steady %8.0f)  "
                        "BW %8.0f cyc/step %5.1f%% %8.2f us (steady %8.0f)\n",
                        pt.name.c_str(), pt.pes, pt.chains, engine::cell_name(cell), h, b, fw, 100 * bound / fw,
                        fw / clock_mhz, fw_steady, bw, 100 * bound / bw, bw / clock_mhz, bw_steady);
          }
        }
      }
      out["points"].push_back(json{{"name", pt.name},
                                   {"num_pe", pt.pes},
                                   {"num_chains", pt.chains},
                                   {"red_adder", pt.red_adder},
                                   {"rows", rows}});
    }
    std::ofstream(json_path) << out.dump(2) << "\n";
    std::printf("wrote %s\n", json_path.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine_scale: %s\n", e.what());
    return 1;
  }
}
