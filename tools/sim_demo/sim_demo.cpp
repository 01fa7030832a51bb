// `make sim`: the FARNN demo. Trains a 2-layer LSTM on the noisy-sine task
// and then a bidirectional GRU on the adding problem (packed batches) with
// the recurrence on sim:// — the Verilated farnn_core behind the mocked PCIe
// root complex, through the host driver — and the GEMMs and updates on the
// CPU backend. Every step runs a second time on model:// (the bit-accurate
// engine model) and the two must agree bit for bit: the loss, the gradient
// norm, and at the end every parameter. Writes the loss curves (CSV, SVG)
// and a trace of the sim run, and ends with the device's figures: cycles,
// MAC utilization, projected device time per step at the clock `make synth`
// estimates on PCIe Gen3 x16, bytes moved.
// Options: --out DIR (default build/sim), --epochs N, --samples N, --seed N.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_common.hpp"
#include "farnn/backend.hpp"
#include "farnn/tensor_io.hpp"
#include "farnn/trace.hpp"
#include "farnn/trainer.hpp"
#include "sim_device.hpp"

namespace {

using namespace farnn;
using namespace farnn::train;

struct Run {
  const char* title;
  const char* task;
  CellKind cell;
  int hidden, layers;
  bool bidirectional;
  int steps, samples, epochs;
};

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Trains `r` on sim:// and model:// side by side; returns the mismatches.
int train_both(const Run& r, const std::string& out, uint64_t seed) {
  sim::SimTransport* link = nullptr;
  auto sim = sim::open_sim_device(driver::Uri::parse("sim://?pcie=gen3x16&seed=" + std::to_string(seed)), &link);
  auto model = Device::open(sim->caps().model_uri() + "&threads=1");
  const Dataset data = synthetic_task(r.task, r.steps, r.samples, seed);
  TrainConfig cfg;
  cfg.stack.cell = r.cell;
  cfg.stack.input = data.features();
  cfg.stack.hidden = r.hidden;
  cfg.stack.layers = r.layers;
  cfg.stack.bidirectional = r.bidirectional;
  cfg.batch = sim->caps().max_batch;
  cfg.epochs = r.epochs;
  cfg.seed = seed;
  cfg.validate();
  auto be_sim = make_cpu_backend(1), be_model = make_cpu_backend(1);
  Trace trace;
  Trainer on_sim(cfg, *sim, *be_sim, &trace), on_model(cfg, *model, *be_model);
  on_sim.check_dataset(data, r.task);
  std::printf("\n%s: %s, %d layer(s)%s, hidden %d, %d samples x %d steps, batch %d, %d epoch(s)\n", r.title,
              cell_kind_name(r.cell), r.layers, r.bidirectional ? " x 2 directions" : "", r.hidden, r.samples,
              r.steps, cfg.batch, r.epochs);
  const Counters c0 = sim->counters();
  const sim::LinkStats l0 = link->stats();
  int bad = 0, n = 0;
  std::vector<double> losses;
  std::string csv = "step,loss\n";
  for (int e = 0; e < r.epochs; ++e) {
    for (int first = 0; first < r.samples; first += cfg.batch) {
      std::vector<int> idx;
      for (int i = first; i < std::min(first + cfg.batch, r.samples); ++i) idx.push_back(i);
      const StepStats a = on_sim.step(data, idx), b = on_model.step(data, idx);
      const bool same = same_bits(a.loss, b.loss) && same_bits(a.grad_norm, b.grad_norm);
      bad += !same;
      losses.push_back(a.loss);
      csv += std::to_string(++n) + "," + std::to_string(a.loss) + "\n";
      std::printf("  step %3d  loss %.6f  grad norm %8.4f  %s\n", n, a.loss, a.grad_norm,
                  same ? "sim:// == model:// bit for bit" : "MISMATCH with model://");
    }
  }
  const io::TensorList ps = on_sim.state(), pm = on_model.state();
  size_t params = 0, differ = 0;
  for (size_t i = 0; i < ps.size(); ++i) {
    params += ps[i].second.data.size();
    differ += ps[i].first != pm[i].first ||
              std::memcmp(ps[i].second.data.data(), pm[i].second.data.data(), 4 * ps[i].second.data.size()) != 0;
  }
  bad += differ != 0;
  std::printf("  parameters after training: %zu tensors, %zu values, %s\n", ps.size(), params,
              differ ? "DIFFER from model://" : "bit-identical to model://");
  const Counters c1 = sim->counters();
  const sim::LinkStats l1 = link->stats();
  const double clock = sim->caps().clock_mhz * 1e6;
  const uint64_t cycles = c1.cycles - c0.cycles, macs = c1.macs - c0.macs;
  std::printf("  device (sim://, %d PEs at %.0f MHz, PCIe gen3x16): %llu FORWARD, %llu BACKWARD, %llu LOAD; "
              "%llu busy cycles, %llu MACs, MAC utilization %.1f %%\n",
              sim->caps().num_pe, clock / 1e6, static_cast<unsigned long long>(c1.forwards - c0.forwards),
              static_cast<unsigned long long>(c1.backwards - c0.backwards),
              static_cast<unsigned long long>(c1.loads - c0.loads), static_cast<unsigned long long>(cycles),
              static_cast<unsigned long long>(macs),
              100.0 * static_cast<double>(macs) / (sim->caps().num_pe * static_cast<double>(cycles)));
  std::printf("  projected device time per training step: %.1f us; host link: %.1f KiB read, %.1f KiB written, "
              "%llu MMIO reads, %llu MMIO writes; card memory: %.1f KiB written, %.1f KiB read\n",
              static_cast<double>(cycles) / clock * 1e6 / n, (l1.read_bytes - l0.read_bytes) / 1024.0,
              (l1.write_bytes - l0.write_bytes) / 1024.0, static_cast<unsigned long long>(l1.mmio_reads - l0.mmio_reads),
              static_cast<unsigned long long>(l1.mmio_writes - l0.mmio_writes),
              (l1.card_write_bytes - l0.card_write_bytes) / 1024.0, (l1.card_read_bytes - l0.card_read_bytes) / 1024.0);
  const std::string stem = out + "/" + cell_kind_name(r.cell);
  write_loss_svg(stem + "_loss.svg", losses, r.title);
  io::write_file_atomic(stem + "_loss.csv", csv);
  trace.write_json(stem + "_trace.json");
  std::printf("  wrote %s_loss.svg, %s_loss.csv, %s_trace.json\n", stem.c_str(), stem.c_str(), stem.c_str());
  if (losses.size() >= 4 && !(losses.back() < losses.front())) {
    std::printf("  the loss did not fall\n");
    ++bad;
  }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out = "build/sim";
  int epochs = 2, samples = 32;
  uint64_t seed = 1;
  CLI::App app{"FARNN demo: training through sim://, every step checked against model://"};
  app.add_option("--out", out, "folder for the loss curves and the trace")->capture_default_str();
  app.add_option("--epochs", epochs, "epochs of the LSTM run")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--samples", samples, "training sequences")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  // Checked as a signed number (an unsigned check took -1 as 2^64 - 1); sim:// takes 1 to 2^62.
  app.add_option("--seed", seed, "data and initialization seed, 1 to 2^62 (what sim:// takes)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 62))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    std::filesystem::create_directories(out);
    std::printf("FARNN demo: training through sim:// (%s), each step checked against model://; seed %llu\n",
                sim::built_core().describe().c_str(), static_cast<unsigned long long>(seed));
    const Run runs[] = {
        {"2-layer LSTM, noisy sine", "sine", CellKind::kLstm, 32, 2, false, 16, samples, epochs},
        {"bidirectional GRU, adding problem", "adding", CellKind::kGru, 16, 1, true, 12, std::max(4, samples / 2), 1},
    };
    int bad = 0;
    for (const Run& r : runs) bad += train_both(r, out, seed);
    std::printf("\n%s\n", bad ? "sim_demo: FAILED (see above)" : "sim_demo: every step bit-identical to model://");
    return bad ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sim_demo: error: %s\n", e.what());
    return 2;
  }
}
