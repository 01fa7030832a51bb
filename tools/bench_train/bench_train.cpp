// Training-step benchmark, the FARNN half (`make bench` runs it through
// bench_train.py, which adds the PyTorch baseline and the ratios).
//
// One training step = forward of a one-layer LSTM or GRU (input size I = H)
// over T steps and B sequences, a linear head (1 output) with MSE loss,
// backward, and a plain SGD update - exactly what the trainer runs for
// `farnn train`. Per configuration it reports:
//   cpu:    measured on this machine: model:// (the bit-accurate engine model
//           as the device) with the CPU backend (--backend cuda: the CUDA
//           backend, on a GPU machine), wall time per step, split into
//           host compute (backend GEMMs, layout moves, head, update) and the
//           time the host waited for the device;
//   hybrid: projected for a card: device commands from the cycle model
//           (sw/lib/engine_cycles.cpp) at the NumPe and clock given (the
//           capacity model's design point and the `make synth` estimate), the
//           weights LOADed every step (they change every update), the host
//           link's DMA per command from the PCIe model (sim/pcie_link.hpp)
//           capped at the core's 64-byte beat per cycle,
//           and the host compute measured above, phase by phase from the
//           step's trace, placed as the trainer's schedule orders them
//           (farnn/step_projection.hpp): the LOAD beside the weight prep, the
//           FORWARD beside the input GEMM's later parts. The JSON also gives
//           the sum with nothing overlapped (no_overlap_ms, an upper bound).
// Writes JSON (--json); a table on stdout.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "farnn/backend.hpp"
#include "farnn/device.hpp"
#include "farnn/engine_cycles.hpp"
#include "farnn/step_projection.hpp"
#include "farnn/trainer.hpp"
#include "pcie_link.hpp"

using namespace farnn;
using nlohmann::json;

namespace {

struct Options {
  std::vector<std::string> cells = {"lstm", "gru"};
  std::vector<int> hidden = {64, 256, 1024};
  std::vector<int> batch = {1, 4, 16};
  int steps = 100;
  int threads = 0;
  double min_time = 1.0;  // seconds of measured steps per configuration
  int pes = 0;
  int chain_length = 16;  // PEs per chain of the projected card (1: one chain of all)
  double clock_mhz = 0;
  std::string link = "gen3x16";
  std::string design_point = "given on the command line";
  std::string json_path = "bench_train.json";
  std::string backend = "cpu";
};

engine::Cell engine_cell(const std::string& cell) { return cell == "lstm" ? engine::Cell::kLstm : engine::Cell::kGru; }

// The CPU path: wall time per step, and the part the host spent waiting for the device.
json measure_cpu(const Options& o, const std::string& cell, int H, int B, int threads) {
  train::TrainConfig cfg;
  cfg.stack.cell = cell == "lstm" ? CellKind::kLstm : CellKind::kGru;
  cfg.stack.input = cfg.stack.hidden = H;
  cfg.outputs = 1;
  cfg.loss = "mse";
  cfg.optimizer = "sgd";
  cfg.lr = 0.01f;
  cfg.momentum = 0.0f;
  cfg.clip = 0.0f;
  cfg.batch = B;
  cfg.epochs = 1;
  train::Dataset data;
  const size_t T = static_cast<size_t>(o.steps);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  data.x = {{o.steps, B, H}, std::vector<float>(T * B * H)};
  data.y = {{o.steps, B, 1}, std::vector<float>(T * B)};
  for (float& v : data.x.data) v = normal(rng);
  for (float& v : data.y.data) v = normal(rng);
  std::vector<int> index(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b) index[static_cast<size_t>(b)] = b;

  const int pes = o.pes > 0 ? o.pes : 4;
  auto dev = Device::open("model://?pes=" + std::to_string(pes) + "&hidden=" + std::to_string(H) +
                          "&batch=" + std::to_string(B) + "&threads=" + std::to_string(threads));
  auto backend = train::make_backend(o.backend, threads);
  train::Trace trace;
  train::Trainer trainer(cfg, *dev, *backend, &trace);
  trainer.step(data, index);  // warm-up: allocations, first LOAD
  const size_t first_event = trace.events().size();
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  int n = 0;
  double elapsed = 0;
  while (n < 1 || elapsed < o.min_time) {
    trainer.step(data, index);
    ++n;
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  const std::vector<train::Trace::Event> ev = trace.events();
  double wait_us = 0;
  for (size_t i = first_event; i < ev.size(); ++i)
    if (ev[i].lane == "host") wait_us += ev[i].duration_us;
  const double step_ms = 1e3 * elapsed / n, wait_ms = wait_us / 1e3 / n;
  const train::HostPhases ph =
      train::host_phases(std::vector<train::Trace::Event>(
                             ev.begin() + static_cast<std::ptrdiff_t>(first_event), ev.end()),
                         n, 1e3 * (step_ms - wait_ms));
  return {{"backend", backend->name()},
          {"host_phases_us",
           {{"before_load", ph.before_load},
            {"weight_prep", ph.weight_prep},
            {"input_gemm_parts", ph.parts},
            {"part_steps", ph.part_steps},
            {"before_backward", ph.before_backward},
            {"after_backward", ph.after_backward}}},
          {"steps_measured", n},
          {"step_ms", step_ms},
          {"device_wait_ms", wait_ms},
          {"host_compute_ms", step_ms - wait_ms}};
}

// Time of one device command on a card: the core's cycles at the clock, or
// its DMA when that is slower (the streams overlap the computation), plus one
// read round trip before the first input word arrives. A direction moves at
// the link's goodput or at the core's one 64-byte beat per cycle, whichever
// is lower.
double command_us(uint64_t cycles, double clock_mhz, double in_bytes, double out_bytes, const sim::PcieLink& link) {
  const double compute = static_cast<double>(cycles) / clock_mhz;
  const double beats = 64.0 * clock_mhz * 1e6;
  const double dma = std::max(in_bytes / std::min(link.read_goodput(), beats),
                              out_bytes / std::min(link.write_goodput(), beats)) * 1e6;
  return std::max(compute, dma) + link.read_latency_ns / 1e3;
}

// The projected card's PEs in chains of o.chain_length (its NumPe rounded
// down to a multiple, as engine_scale's design points), or one chain.
std::pair<int, int> projected_chains(const Options& o) {
  if (o.chain_length <= 1 || o.pes < o.chain_length) return {o.pes, 1};
  const int chains = o.pes / o.chain_length;
  return {chains * o.chain_length, chains};
}

json project_hybrid(const Options& o, const std::string& cell, int H, int B, const json& cpu) {
  const sim::PcieLink link = sim::PcieLink::preset(o.link);
  const auto [pes, chains] = projected_chains(o);
  engine::Config cfg{engine_cell(cell), H, B, o.steps, pes};
  cfg.num_chains = chains;
  engine::EngineTiming t;
  t.num_pe = pes;
  t.num_chains = chains;
  t.xp_words = 4;  // the engine's Xp a unit a beat (farnn_core still reads a word a beat)
  t.fifo_depth = engine::stream_fifo_depth(H);
  const sim::DdrModel ddr;
  t.mem_latency = static_cast<int>(std::ceil(ddr.latency_max_ns * o.clock_mhz / 1e3));
  const uint64_t fw = engine::forward_cycles(cfg, t), bw = engine::backward_cycles(cfg, t);
  const uint64_t load = engine::load_cycles(cfg, t);
  const double G = engine::gates(cfg.cell), S = static_cast<double>(o.steps) * B, SW = engine::state_words(cfg.cell);
  const double macs_step = G * H * H * S;  // one command's recurrent MACs
  // Host-link bytes per command (the gate store stays on the card's DDR).
  const double load_in = 4.0 * engine::load_words(cfg);
  const double fw_in = 4.0 * (S * G * H + B * H * SW), fw_out = 4.0 * (S * H + B * H * SW);
  const double bw_in = 4.0 * (S * H + B * H), bw_out = 4.0 * (S * 4 * H + B * H * SW);
  const double load_us = command_us(load, o.clock_mhz, load_in, 0, link);
  const double fw_us = command_us(fw, o.clock_mhz, fw_in, fw_out, link);
  const double bw_us = command_us(bw, o.clock_mhz, bw_in, bw_out, link);
  const double device_ms = (load_us + fw_us + bw_us) / 1e3;
  const double host_compute_ms = cpu["host_compute_ms"].get<double>();
  // The schedule's overlap: the measured host phases against these commands.
  const json& hp = cpu["host_phases_us"];
  train::HostPhases ph;
  ph.before_load = hp["before_load"];
  ph.weight_prep = hp["weight_prep"];
  ph.parts = hp["input_gemm_parts"].get<std::vector<double>>();
  ph.part_steps = hp["part_steps"].get<std::vector<int>>();
  ph.before_backward = hp["before_backward"];
  ph.after_backward = hp["after_backward"];
  const train::StepProjection sp = train::project_step(ph, {load_us, fw_us, bw_us});
  return {{"num_pe", pes},
          {"num_chains", chains},
          {"clock_mhz", o.clock_mhz},
          {"link", link.name},
          {"cycles", {{"load", load}, {"forward", fw}, {"backward", bw}}},
          {"mac_utilization",
           {{"forward", macs_step / (static_cast<double>(fw) * pes)},
            {"backward", macs_step / (static_cast<double>(bw) * pes)}}},
          {"dma_bytes", {{"in", load_in + fw_in + bw_in}, {"out", fw_out + bw_out}}},
          {"us", {{"load", load_us}, {"forward", fw_us}, {"backward", bw_us}}},
          {"device_ms", device_ms},
          {"host_compute_ms", host_compute_ms},
          {"no_overlap_ms", device_ms + host_compute_ms},
          {"step_ms", sp.step_us / 1e3},
          {"exposed_device_ms", sp.exposed_device_us / 1e3},
          {"overlapped_ms", sp.overlapped_us / 1e3}};
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"FARNN training-step benchmark: the CPU path measured, the hybrid system projected"};
  app.add_option("--cells", o.cells, "lstm and/or gru")->check(CLI::IsMember({"lstm", "gru"}))->delimiter(',');
  app.add_option("--hidden", o.hidden, "hidden sizes")->check(CLI::PositiveNumber)->delimiter(',');
  app.add_option("--batch", o.batch, "batch sizes")->check(CLI::PositiveNumber)->delimiter(',');
  app.add_option("--steps", o.steps, "sequence length T")->check(CLI::Range(2, 65535));
  app.add_option("--threads", o.threads, "threads of the CPU backend and the model device (0: all cores)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--min-time", o.min_time, "seconds of measured steps per configuration")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--pes", o.pes, "NumPe of the projected card")->required()->check(CLI::PositiveNumber);
  app.add_option("--chain-length", o.chain_length,
                 "PEs per chain of the projected card; NumPe is rounded down to a multiple (1: one chain)")
      ->check(CLI::PositiveNumber);
  app.add_option("--clock-mhz", o.clock_mhz, "core clock of the projected card")
      ->required()
      ->check(CLI::PositiveNumber);
  app.add_option("--link", o.link, "host link preset")->check(CLI::IsMember(sim::PcieLink::preset_names()));
  app.add_option("--design-point", o.design_point, "where --pes and --clock-mhz come from (recorded in the JSON)");
  app.add_option("--json", o.json_path, "output file");
  app.add_option("--backend", o.backend, "compute backend of the measured path (cpu, or cuda on a GPU machine)");
  CLI11_PARSE(app, argc, argv);
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  json results = json::array();
  const auto [pes, chains] = projected_chains(o);
  std::printf("bench_train: T = %d, I = H, %d threads; hybrid: %d PEs in %d chains at %.1f MHz, %s (%s)\n", o.steps,
              threads, pes, chains, o.clock_mhz, o.link.c_str(), o.design_point.c_str());
  std::printf("%-5s %5s %3s | %10s %10s %10s | %10s %9s %9s %10s\n", "cell", "H", "B", "cpu ms", "compute", "dev wait",
              "hybrid ms", "FW util", "BW util", "device ms");
  try {
    for (const std::string& cell : o.cells) {
      for (int H : o.hidden) {
        for (int B : o.batch) {
          const json cpu = measure_cpu(o, cell, H, B, threads);
          const json hyb = project_hybrid(o, cell, H, B, cpu);
          std::printf("%-5s %5d %3d | %10.2f %10.2f %10.2f | %10.2f %8.1f%% %8.1f%% %10.3f\n", cell.c_str(), H, B,
                      cpu["step_ms"].get<double>(), cpu["host_compute_ms"].get<double>(),
                      cpu["device_wait_ms"].get<double>(), hyb["step_ms"].get<double>(),
                      100 * hyb["mac_utilization"]["forward"].get<double>(),
                      100 * hyb["mac_utilization"]["backward"].get<double>(), hyb["device_ms"].get<double>());
          std::fflush(stdout);
          results.push_back({{"cell", cell}, {"hidden", H}, {"input", H}, {"batch", B}, {"steps", o.steps},
                             {"threads", threads}, {"cpu", cpu}, {"hybrid", hyb}});
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_train: %s\n", e.what());
    return 1;
  }
  const json doc = {{"benchmark", "training step: forward, MSE head, backward, SGD update"},
                    {"design_point", o.design_point},
                    {"units", {{"ms", "milliseconds per training step"}, {"us", "microseconds per command"}}},
                    {"results", results}};
  const std::string tmp = o.json_path + ".tmp";
  {
    std::ofstream f(tmp);
    f << doc.dump(1) << "\n";
    if (!f) {
      std::fprintf(stderr, "bench_train: cannot write %s\n", tmp.c_str());
      return 1;
    }
  }
  if (std::rename(tmp.c_str(), o.json_path.c_str()) != 0) {
    std::fprintf(stderr, "bench_train: cannot write %s\n", o.json_path.c_str());
    return 1;
  }
  return 0;
}
