// Device benchmark (`make bench`): the largest LSTM and GRU layer the built
// core holds (H = max_resident_hidden, B = max_batch, T = --steps) through the
// simulated card — sim://, the Verilated farnn_core behind the mocked PCIe root
// complex, driven by CoreDevice exactly as a card is — at both link presets,
// Gen3 x16 and Gen4 x16. LOAD, FORWARD and BACKWARD run one at a time
// (Job::wait between them); the results are checked bit-exact against the
// engine model before any figure is written.
//
// Per phase: the core's busy cycles and their time at the clock `make synth`
// estimated, the span from start to finish the driver reports (device time:
// doorbell, completion and the driver's MMIO included), MACs and their
// utilization, bytes on the host link and on the card's DDR, the driver's MMIO
// accesses, and the link efficiency per direction (see link_efficiency()).
// Writes JSON (--json) and a table on stdout.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_common.hpp"
#include "farnn/device.hpp"
#include "farnn/engine_model.hpp"
#include "farnn/tensor_io.hpp"
#include "sim_device.hpp"

using namespace farnn;
using nlohmann::json;

namespace {

constexpr int kDefaultSteps = 32;
constexpr int kMaxSteps = 4096;
const char* const kPresets[] = {"gen3x16", "gen4x16"};

const char* const kSynopsis = "usage: bench_device [--steps N] [--seed N] [--json PATH] [--help]\n";
const char* const kHelp =
    "  LOAD, FORWARD and BACKWARD of the largest resident LSTM and GRU layer through\n"
    "  sim:// (the Verilated farnn_core behind the mocked PCIe link) at gen3x16 and\n"
    "  gen4x16; results checked bit-exact against the engine model.\n"
    "  --steps N    time steps per layer, 1..4096 (default 32)\n"
    "  --seed N     seed of the layer data and of the simulated card, >= 1 (default 1)\n"
    "  --json PATH  where the results go (default bench_device.json)\n"
    "  --help       this text\n"
    "exit status: 0 ok, 1 failure (a mismatch or a device error), 2 usage\n";

// A command-line mistake: the message and the usage, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  int steps = kDefaultSteps;
  uint64_t seed = 1;
  std::string json_path = "bench_device.json";
  bool help = false;
};

uint64_t parse_number(const std::string& option, const std::string& text, uint64_t lo,
                      uint64_t hi) {
  size_t used = 0;
  uint64_t v = 0;
  bool ok = !text.empty() && text[0] != '-' && text[0] != '+';
  if (ok) {
    try {
      v = std::stoull(text, &used, 10);
    } catch (const std::exception&) {
      ok = false;
    }
  }
  if (!ok || used != text.size() || v < lo || v > hi) {
    throw UsageError(option + " '" + text + "': expected an integer in " + std::to_string(lo) +
                     ".." + std::to_string(hi));
  }
  return v;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      continue;
    }
    if (arg != "--steps" && arg != "--seed" && arg != "--json") {
      throw UsageError("unknown option '" + arg + "' (known: --steps, --seed, --json, --help)");
    }
    if (i + 1 >= argc) throw UsageError(arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--steps") {
      o.steps = static_cast<int>(parse_number(arg, value, 1, kMaxSteps));
    } else if (arg == "--seed") {
      o.seed = parse_number(arg, value, 1, static_cast<uint64_t>(INT64_MAX));
    } else {
      if (value.empty()) throw UsageError("--json needs a non-empty path");
      o.json_path = value;
    }
  }
  return o;
}

// --- the layer: random data and the engine model's results ---------------------

using Words = std::vector<uint32_t>;

// n float32 words uniform in [-bound, bound], as bit patterns.
Words random_words(size_t n, double bound, std::mt19937_64& rng) {
  Words w(n);
  for (uint32_t& x : w) {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
    const float f = static_cast<float>(bound * (2 * u - 1));
    std::memcpy(&x, &f, 4);
  }
  return w;
}

struct Layer {
  LayerShape shape;
  engine::Weights w;
  Words xp, state_in, dh, carry;
  engine::ForwardResult fw;
  engine::BackwardResult bw;
};

Layer make_layer(const LayerShape& s, int num_pe, int num_chains, std::mt19937_64& rng) {
  Layer l;
  l.shape = s;
  const size_t G = s.gates(), H = s.hidden, S = s.packed_steps(), B = s.batch,
               SW = state_words(s.cell);
  l.w.w_hh = random_words(G * H * H, 1.0 / std::sqrt(static_cast<double>(H)), rng);
  l.w.b_hh = random_words(G * H, 1.0 / std::sqrt(static_cast<double>(H)), rng);
  l.xp = random_words(S * H * G, 1.0, rng);
  l.state_in = random_words(B * H * SW, 0.5, rng);
  l.dh = random_words(S * H, 1.0, rng);
  l.carry = random_words(B * H, 0.5, rng);
  const engine::Config cfg = driver::engine_config(s, num_pe, num_chains);
  l.fw = engine::forward(cfg, l.w, l.xp, l.state_in);
  l.bw = engine::backward(cfg, l.w, l.fw.records, l.dh, l.carry);
  return l;
}

BufferPtr buffer_of(Device& dev, const Words& w, Access access, const std::string& name) {
  BufferPtr b = dev.alloc(w.size(), access, name);
  std::memcpy(b->data(), w.data(), 4 * w.size());
  return b;
}

// Throws naming the first word where `buf` differs from the engine model.
void check_same(const BufferPtr& buf, const Words& want, const std::string& where) {
  Words got(want.size());
  std::memcpy(got.data(), buf->data(), 4 * got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      char msg[160];
      std::snprintf(msg, sizeof msg, ": word %zu of %zu is 0x%08x, the engine model says 0x%08x", i,
                    want.size(), got[i], want[i]);
      throw std::runtime_error("bench_device: " + where + " differs from the engine model" + msg);
    }
  }
}

// --- one phase ---------------------------------------------------------------

struct PhaseContext {
  const Capabilities& caps;
  sim::SimTransport& transport;
  const sim::PcieLink& link;
  std::string cell, preset;
};

// Share of the link's goodput in one direction the phase used: the bytes it
// moved that way over what the preset's goodput could move in the phase's
// projected time (its busy cycles at the core clock). Low values are expected:
// the core streams at most one 64-byte beat per cycle on each channel and
// spends most of a step computing, not moving data.
double link_efficiency(uint64_t bytes, double seconds, double goodput) {
  return seconds > 0 ? static_cast<double>(bytes) / (seconds * goodput) : 0.0;
}

json run_phase(const PhaseContext& cx, const std::string& phase,
               const std::function<JobPtr()>& submit) {
  const sim::LinkStats a = cx.transport.stats();
  const JobReport r = submit()->wait();
  const sim::LinkStats b = cx.transport.stats();
  const uint64_t cycles = r.delta.cycles;
  const double clock_hz = cx.caps.clock_mhz * 1e6;
  const double seconds = static_cast<double>(cycles) / clock_hz;
  const double wall_us = std::chrono::duration<double, std::micro>(r.finished - r.started).count();
  const uint64_t host_rd = b.read_bytes - a.read_bytes, host_wr = b.write_bytes - a.write_bytes;
  const double util =
      cycles ? static_cast<double>(r.delta.macs) / (static_cast<double>(cx.caps.num_pe) * cycles)
             : 0;
  return json{
      {"cell", cx.cell},
      {"preset", cx.preset},
      {"phase", phase},
      {"what", r.what},
      {"cycles", cycles},
      {"projected_us", seconds * 1e6},
      {"wall_us", wall_us},
      {"macs", r.delta.macs},
      {"mac_utilization", util},
      {"host_bytes", {{"read", host_rd}, {"write", host_wr}}},
      {"host_bursts",
       {{"read", b.read_bursts - a.read_bursts}, {"write", b.write_bursts - a.write_bursts}}},
      {"card_bytes",
       {{"read", b.card_read_bytes - a.card_read_bytes},
        {"write", b.card_write_bytes - a.card_write_bytes}}},
      {"mmio", {{"reads", b.mmio_reads - a.mmio_reads}, {"writes", b.mmio_writes - a.mmio_writes}}},
      {"link_efficiency",
       {{"read", link_efficiency(host_rd, seconds, cx.link.read_goodput())},
        {"write", link_efficiency(host_wr, seconds, cx.link.write_goodput())}}},
      {"read_channel_busy",
       cycles ? static_cast<double>(b.r_busy_cycles - a.r_busy_cycles) / static_cast<double>(cycles)
              : 0.0}};
}

void print_header() {
  std::printf("%-4s %-7s %-8s %9s %9s %9s %8s %6s %9s %9s %9s %9s %5s %5s %7s %7s %6s\n", "cell",
              "preset", "phase", "cycles", "proj_us", "wall_us", "MACs", "util", "host_rd_B",
              "host_wr_B", "card_rd_B", "card_wr_B", "mmioR", "mmioW", "eff_rd", "eff_wr",
              "r_busy");
}

void print_row(const json& j) {
  std::printf(
      "%-4s %-7s %-8s %9llu %9.2f %9.2f %8llu %5.1f%% %9llu %9llu %9llu %9llu %5llu %5llu %6.2f%% "
      "%6.2f%% %5.1f%%\n",
      j["cell"].get<std::string>().c_str(), j["preset"].get<std::string>().c_str(),
      j["phase"].get<std::string>().c_str(), j["cycles"].get<unsigned long long>(),
      j["projected_us"].get<double>(), j["wall_us"].get<double>(),
      j["macs"].get<unsigned long long>(), 100 * j["mac_utilization"].get<double>(),
      j["host_bytes"]["read"].get<unsigned long long>(),
      j["host_bytes"]["write"].get<unsigned long long>(),
      j["card_bytes"]["read"].get<unsigned long long>(),
      j["card_bytes"]["write"].get<unsigned long long>(),
      j["mmio"]["reads"].get<unsigned long long>(), j["mmio"]["writes"].get<unsigned long long>(),
      100 * j["link_efficiency"]["read"].get<double>(),
      100 * j["link_efficiency"]["write"].get<double>(),
      100 * j["read_channel_busy"].get<double>());
  std::fflush(stdout);
}

// LOAD, FORWARD, BACKWARD of the largest resident `cell` layer on a fresh
// sim:// device at `preset`; appends the three records to `results`.
// `clock_mhz` gets the device's clock (caps.clock_mhz).
void run_layer(CellKind cell, const std::string& preset, const Options& opt, json& results,
               json& presets, double& clock_mhz) {
  sim::SimTransport* transport = nullptr;
  const std::string uri = "sim://?pcie=" + preset + "&seed=" + std::to_string(opt.seed);
  std::unique_ptr<Device> dev = sim::open_sim_device(driver::Uri::parse(uri), &transport);
  const Capabilities& caps = dev->caps();
  clock_mhz = caps.clock_mhz;
  const sim::PcieLink& link = transport->config().link;
  presets[preset] = {{"describe", link.describe()},
                     {"read_goodput_gbps", link.read_goodput() / 1e9},
                     {"write_goodput_gbps", link.write_goodput() / 1e9}};

  LayerShape s;
  s.cell = cell;
  s.hidden = caps.max_resident_hidden(cell);
  s.batch = caps.max_batch;
  s.steps = opt.steps;
  // The same data at both presets: the generator depends on the seed and the cell only.
  std::mt19937_64 rng(opt.seed * 2 + (cell == CellKind::kGru ? 1 : 0));
  const Layer l = make_layer(s, caps.num_pe, caps.num_chains, rng);
  const size_t G = s.gates(), H = s.hidden, S = s.packed_steps(), B = s.batch,
               SW = state_words(s.cell);

  Words wb = l.w.w_hh;
  wb.insert(wb.end(), l.w.b_hh.begin(), l.w.b_hh.end());
  BufferPtr weights = buffer_of(*dev, wb, Access::kRead, "weights");
  BufferPtr xp = buffer_of(*dev, l.xp, Access::kRead, "xp");
  BufferPtr st = buffer_of(*dev, l.state_in, Access::kRead, "state_in");
  BufferPtr h = dev->alloc(S * H, Access::kWrite, "h");
  BufferPtr so = dev->alloc(B * H * SW, Access::kWrite, "state_out");
  BufferPtr dh = buffer_of(*dev, l.dh, Access::kRead, "dh");
  BufferPtr carry = buffer_of(*dev, l.carry, Access::kRead, "carry");
  BufferPtr delta = dev->alloc(S * H * kDeltaWords, Access::kWrite, "delta");
  BufferPtr ds = dev->alloc(B * H * SW, Access::kWrite, "dstate");
  GateStorePtr store = dev->alloc_gate_store(s);

  const PhaseContext cx{caps, *transport, link, cell_kind_name(cell), preset};
  const std::string where =
      std::string(cell_kind_name(cell)) + " at " + preset + " (" + s.describe() + ")";
  json phases = json::array();
  phases.push_back(run_phase(cx, "load", [&] {
    return dev->load(0, s, {weights, 0}, {weights, G * H * H});
  }));
  phases.push_back(run_phase(cx, "forward", [&] {
    return dev->forward({s, 0, {xp}, {st}, {h}, {so}, store});
  }));
  phases.push_back(run_phase(cx, "backward", [&] {
    return dev->backward({s, 0, store, {dh}, {carry}, {delta}, {ds}});
  }));
  // No figure from a wrong run.
  check_same(h, l.fw.h, where + ": FORWARD h");
  check_same(so, l.fw.state_out, where + ": FORWARD state_out");
  check_same(delta, l.bw.delta, where + ": BACKWARD delta");
  check_same(ds, l.bw.state_out, where + ": BACKWARD dstate");
  for (json& p : phases) {
    p["hidden"] = s.hidden;
    p["batch"] = s.batch;
    p["steps"] = s.steps;
    print_row(p);
    results.push_back(std::move(p));
  }
}

int run(const Options& opt) {
  const sim::BuiltCore core = sim::built_core();
  std::printf("bench_device: seed %llu, T = %d, core: %s, clock %.1f MHz (make synth estimate)\n",
              static_cast<unsigned long long>(opt.seed), opt.steps, core.describe().c_str(),
              sim::synth_clock_mhz());
  std::printf(
      "  proj_us: busy cycles at the clock; wall_us: start to finish as the driver saw it\n"
      "  (device time); eff_rd/eff_wr: bytes moved / (proj_us x the preset's goodput);\n"
      "  r_busy: cycles with a host read beat / busy cycles\n");
  print_header();
  json results = json::array();
  json presets = json::object();
  double clock_mhz = 0;
  for (const char* preset : kPresets) {
    for (CellKind cell : {CellKind::kLstm, CellKind::kGru}) {
      run_layer(cell, preset, opt, results, presets, clock_mhz);
    }
  }
  const json out{
      {"benchmark", "device"},
      {"device", "sim:// (Verilated farnn_core, mocked PCIe root complex, CoreDevice driver)"},
      {"clock_mhz", clock_mhz},
      {"clock_source", "make synth estimate (docs/capacity.md)"},
      // The most one AXI channel of the core moves: a 64-byte beat per cycle.
      {"core_beat_gbps", 64 * clock_mhz * 1e6 / 1e9},
      {"seed", opt.seed},
      {"steps", opt.steps},
      {"core", core.describe()},
      {"presets", presets},
      {"fields",
       {{"cycles", "the core's busy cycles for the command (JobReport.delta.cycles)"},
        {"projected_us", "cycles / clock_mhz"},
        {"wall_us",
         "JobReport.finished - started: device time from start to completion as the driver saw it "
         "(doorbell, polling and interrupt included)"},
        {"mac_utilization", "macs / (num_pe * cycles)"},
        {"host_bytes", "DMA payload on the host link: read = host -> card, write = card -> host"},
        {"card_bytes", "bytes on the card's DDR (the gate store)"},
        {"mmio", "the driver's BAR0 register reads and writes during the phase"},
        {"link_efficiency",
         "share of the link's goodput the phase used per direction: host bytes / (projected_us * "
         "the preset's goodput for that direction); low values are expected, the core streams at "
         "most one 64-byte beat per cycle (core_beat_gbps) and a step is mostly compute"},
        {"read_channel_busy", "cycles in which a host read beat moved / cycles"}}},
      {"results", results}};
  io::write_file_atomic(opt.json_path, out.dump(2) + "\n");  // whole or not at all
  std::printf("bench_device: all results bit-exact against the engine model; wrote %s\n",
              opt.json_path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  try {
    opt = parse_options(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "bench_device: " << e.what() << "\n" << kSynopsis << "(--help for the options)\n";
    return 2;
  }
  if (opt.help) {
    std::cout << kSynopsis << kHelp;
    return 0;
  }
  try {
    return run(opt);
  } catch (const std::exception& e) {
    const std::string m = e.what();
    std::cerr << (m.rfind("bench_device:", 0) == 0 ? "" : "bench_device: ") << m << "\n";
    return 1;
  }
}
