// farnn: the command-line tool.
//   farnn info    [--device URI]                  what the device is, its link, registers, ring, windows
//   farnn selftest [--device URI] [--fault F]      bring-up checks, one verdict line each
//   farnn grad    --weights W --input x --grad-output dy --cell C --hidden H --layers L
//                 [--bidirectional] [--lengths l.npy] [--device URI] --out out.safetensors
//   --fault KIND[:AFTER[:STALL_US]] (selftest, grad; sim:// only) arms one injected fault, e.g.
//                 read_error:200 or stall:50:300 (the fault hits the host-memory beat after AFTER)
//   farnn compare A.safetensors B.safetensors [--rtol R]   every tensor of B in A, within R * max|B|
//   farnn train   (--task sine|adding | --x X.npy --y Y.npy [--lengths l.npy]) --cell C --hidden H ...
//                 [--config run.toml]: the same options as `key = value` lines (flags given win)
// Bad input ends with one line "farnn: error: ..." and exit status 2; output
// files are written whole (a temporary file, then a rename) or not at all.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>

#include "farnn/grad.hpp"
#include "farnn/trainer.hpp"

namespace {

using namespace farnn;
using namespace farnn::train;

struct ModelFlags {
  std::string cell = "lstm";
  int hidden = 0;
  int layers = 1;
  bool bidirectional = false;
  int gemm_chunks = StackConfig{}.gemm_chunks;
  void add(CLI::App& app, bool hidden_required) {
    app.add_option("--cell", cell, "lstm or gru")->check(CLI::IsMember({"lstm", "gru"}));
    auto* h = app.add_option("--hidden", hidden, "hidden size H")->check(CLI::Range(1, 1 << 20));
    if (hidden_required) h->required();
    app.add_option("--layers", layers, "stacked layers")->check(CLI::Range(1, 1024));
    app.add_flag("--bidirectional", bidirectional, "two directions per layer");
    app.add_option("--gemm-chunks", gemm_chunks,
                   "parts over time of each input GEMM; the device starts on the first")
        ->check(CLI::Range(1, 65535))
        ->capture_default_str();
  }
  StackConfig config(int input) const {
    StackConfig c;
    c.cell = cell == "gru" ? CellKind::kGru : CellKind::kLstm;
    c.input = input;
    c.hidden = hidden;
    c.layers = layers;
    c.bidirectional = bidirectional;
    c.gemm_chunks = gemm_chunks;
    return c;
  }
};

// Per-sequence lengths from `path` (float32 or an integer dtype), one per
// sequence, each in 1..steps; the errors name the file.
std::vector<int> read_lengths(const std::string& path, const io::Tensor& x) {
  if (path.empty() || x.shape.size() != 3) return {};
  const int64_t steps = x.shape[0], count = x.shape[1];
  const io::Tensor t = io::read_npy(path, io::NpyValues::kWholeNumbers);
  if (t.shape != std::vector<int64_t>{count}) {
    throw std::invalid_argument(path + ": lengths must have shape (" + std::to_string(count) + ",), got " +
                                t.shape_string());
  }
  std::vector<int> out;
  for (size_t i = 0; i < t.data.size(); ++i) {
    const float v = t.data[i];
    if (!(v >= 1) || v != std::floor(v) || v > static_cast<float>(steps)) {
      std::ostringstream value;
      value << v;
      throw std::invalid_argument(path + ": length " + value.str() + " of sequence " + std::to_string(i) +
                                  " is not a whole number in 1.." + std::to_string(steps) +
                                  " (the input's T)");
    }
    out.push_back(static_cast<int>(v));
  }
  return out;
}

// An output's folder must exist and be writable: checked before a command
// runs, so that a typo in one path does not cost the run and the other outputs.
void check_output_path(const std::string& path, const std::string& flag) {
  if (path.empty()) return;
  const std::filesystem::path p(path);
  std::error_code ec;  // a path that cannot be inspected counts as no folder
  if (std::filesystem::is_directory(p, ec)) {
    throw std::invalid_argument(flag + " " + path + ": is a folder; give a file name");
  }
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(dir, ec) || access(dir.c_str(), W_OK) != 0) {
    throw std::invalid_argument(flag + " " + path + ": cannot write into " + dir.string() +
                                " (does the folder exist?)");
  }
}

// The --config file, line by line, before CLI11 reads it (its own errors
// name neither the file nor the line, and call it INI): each line blank, a
// # comment, a [section] or key = value, a quoted value closed by its quote.
void check_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return;  // CLI11 says the file was not readable
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto at = [&](const std::string& why) {
      return std::invalid_argument("--config " + path + ": line " + std::to_string(n) + ": " + why + ": " + line);
    };
    const size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    const size_t e = line.find_last_not_of(" \t\r");
    const std::string text = line.substr(b, e - b + 1);
    if (text.front() == '[') {
      if (text.back() != ']' || text.size() < 3) throw at("a section is [name]");
      continue;
    }
    const size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0) throw at("expected key = value");
    const size_t v = text.find_first_not_of(" \t", eq + 1);
    if (v == std::string::npos) throw at("the value is missing");
    const char q = text[v];
    if ((q == '"' || q == '\'') && (text.size() - v < 2 || text.back() != q)) throw at("a quoted value must end with its quote");
  }
}

// Opens the device and arms --fault (KIND[:AFTER[:STALL_US]]) on it.
std::unique_ptr<Device> open_device(const std::string& uri, const std::string& fault) {
  auto dev = Device::open(uri);
  if (fault.empty()) return dev;
  FaultPlan plan;
  std::vector<std::string> parts;
  std::stringstream ss(fault);
  for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
  if (parts.empty() || parts.size() > 3) {
    throw std::invalid_argument("--fault " + fault + ": expected KIND[:AFTER[:STALL_US]]");
  }
  plan.kind = parse_fault_kind(parts[0]);
  // AFTER: decimal digits; STALL_US: a plain decimal number of microseconds up to a minute.
  auto plain = [](const std::string& s, bool point) {
    int points = 0;
    for (char ch : s) {
      if (ch == '.' && point) ++points;
      else if (ch < '0' || ch > '9') return false;
    }
    return !s.empty() && s.size() <= 18 && points <= 1 && s != ".";
  };
  if (parts.size() > 1) {
    if (!plain(parts[1], false)) {
      throw std::invalid_argument("--fault " + fault + ": AFTER must be a count of beats in decimal digits, got '" +
                                  parts[1] + "'");
    }
    plan.after = std::stoull(parts[1]);
  }
  if (parts.size() > 2) {
    if (!plain(parts[2], true) || std::stod(parts[2]) > 60e6) {
      throw std::invalid_argument("--fault " + fault + ": STALL_US must be a number of microseconds from 0 to 60000000, got '" +
                                  parts[2] + "'");
    }
    plan.stall_us = std::stod(parts[2]);
  }
  dev->inject_fault(plan);
  return dev;
}

// After a command run with --fault: a fault that never hit means the check the
// user asked for did not happen. Returns the exit status to use.
int fault_verdict(const Device& dev, const std::string& fault, int status) {
  if (fault.empty() || !dev.fault_armed()) return status;
  std::fflush(stdout);  // the run's report first, then why it failed
  std::fprintf(stderr,
               "farnn: --fault %s never hit: the run moved fewer host-memory beats than AFTER (or rang no doorbell); "
               "give a smaller AFTER\n",
               fault.c_str());
  return 1;
}

int cmd_selftest(const std::string& uri, const std::string& fault) {
  auto dev = open_device(uri, fault);
  int failed = 0;
  for (const Device::SelfCheck& c : dev->self_test()) {
    std::printf("%s  %s: %s\n", c.ok ? "PASS" : "FAIL", c.name.c_str(), c.detail.c_str());
    failed += !c.ok;
  }
  std::printf("farnn selftest %s: %s\n", uri.c_str(), failed ? (std::to_string(failed) + " check(s) FAILED").c_str() : "all checks passed");
  return fault_verdict(*dev, fault, failed ? 1 : 0);
}

int cmd_info(const std::string& uri) {
  auto dev = Device::open(uri);
  const Capabilities& c = dev->caps();
  std::printf("device:        %s (%s)\n", uri.c_str(), c.kind.c_str());
  std::printf("description:   %s\n", c.description.c_str());
  std::printf("PEs:           %d in %d chain%s\nbanks:         %d (%d words per PE each)\n", c.num_pe, c.num_chains,
              c.num_chains == 1 ? "" : "s", c.num_banks, c.weight_depth);
  if (c.kind != "model")
    std::printf("reduction:     %s\n", c.red_adder ? "an adder of its own per PE" : "on the MAC adder");
  std::printf("max hidden:    %d (resident: LSTM %d, GRU %d)\n", c.max_hidden,
              c.max_resident_hidden(CellKind::kLstm), c.max_resident_hidden(CellKind::kGru));
  std::printf("max batch:     %d\nmax steps:     %d\ncard memory:   %llu MiB\n", c.max_batch, c.max_steps,
              static_cast<unsigned long long>(c.card_memory_bytes >> 20));
  if (c.forward_records > 0)
    std::printf("FW records:    %d (a BACKWARD needs its FORWARD among the newest)\n",
                c.forward_records);
  std::printf("model:         %s\n", c.model_uri().c_str());
  if (c.clock_mhz > 0) std::printf("clock:         %.1f MHz\n", c.clock_mhz);
  else std::printf("clock:         none (the model reports results, not time)\n");
  const auto lines = dev->status_report();
  for (size_t i = 1; i < lines.size(); ++i) std::printf("%s\n", lines[i].c_str());
  return 0;
}

int cmd_grad(const ModelFlags& m, const std::string& uri, const std::string& fault,
             const std::string& backend_name, const std::string& weights, const std::string& input,
             const std::string& grad_output, const std::string& lengths, const std::string& out) {
  check_output_path(out, "--out");
  GradInputs in;
  in.weights = io::read_safetensors(weights);
  // A farnn train checkpoint also holds the linear head, which grad has no
  // use for: left out, and said so.
  const auto head = std::remove_if(in.weights.begin(), in.weights.end(),
                                   [](const auto& t) { return t.first == "head.weight" || t.first == "head.bias"; });
  if (head != in.weights.end()) {
    std::fprintf(stderr, "farnn grad: %s: leaving out the linear head (head.weight, head.bias)\n", weights.c_str());
    in.weights.erase(head, in.weights.end());
  }
  in.x = io::read_npy(input);
  in.dy = io::read_npy(grad_output);
  in.weights_name = weights;
  in.x_name = input;
  in.dy_name = grad_output;
  if (in.x.shape.size() != 3) throw std::invalid_argument(input + ": input must be (T, B, I), got " + in.x.shape_string());
  in.lengths = read_lengths(lengths, in.x);
  for (const auto& [name, t] : in.weights) {
    if (!std::all_of(t.data.begin(), t.data.end(), [](float v) { return std::isfinite(v); })) {
      throw std::invalid_argument(weights + ": tensor '" + name + "' holds a non-finite value (NaN or Inf)");
    }
  }
  for (const io::Tensor* t : {&in.x, &in.dy}) {
    for (float v : t->data) {
      if (!std::isfinite(v)) {
        throw std::invalid_argument((t == &in.x ? input : grad_output) + ": holds a non-finite value (NaN or Inf)");
      }
    }
  }
  auto backend = make_backend(backend_name);
  auto dev = open_device(uri, fault);
  const io::TensorList result = compute_grad(m.config(1), *dev, *backend, in);
  io::write_safetensors(out, result);
  std::printf("farnn grad: %zu tensors -> %s\n", result.size(), out.c_str());
  return fault_verdict(*dev, fault, 0);
}

int cmd_compare(const std::string& a_path, const std::string& b_path, double rtol) {
  if (!(rtol >= 0) || !std::isfinite(rtol)) throw std::invalid_argument("--rtol must be a finite number >= 0");
  const io::TensorList a = io::read_safetensors(a_path), b = io::read_safetensors(b_path);
  if (b.empty()) throw std::invalid_argument(b_path + ": holds no tensors, so there is nothing to compare");
  int bad = 0;
  for (const auto& [name, want] : b) {
    const auto it = std::find_if(a.begin(), a.end(), [&](const auto& t) { return t.first == name; });
    if (it == a.end()) {
      std::printf("%-32s missing from %s  MISMATCH\n", name.c_str(), a_path.c_str());
      ++bad;
      continue;
    }
    const io::Tensor& have = it->second;
    if (have.shape != want.shape) {
      std::printf("%-32s shape %s, expected %s  MISMATCH\n", name.c_str(), have.shape_string().c_str(),
                  want.shape_string().c_str());
      ++bad;
      continue;
    }
    const double rel = io::max_relative_error(have, want);
    const bool ok = rel <= rtol;
    bad += !ok;
    std::printf("%-32s max|a-b|/max|b| = %.3e  %s\n", name.c_str(), rel, ok ? "ok" : "MISMATCH");
  }
  std::printf("farnn compare: %zu tensors, %d outside %.1e\n", b.size(), bad, rtol);
  return bad ? 1 : 0;
}

struct TrainFlags {
  std::string task, x, y, lengths, checkpoint, loss_csv, plot, trace, backend = "cpu";
  int steps = 50, samples = 256, threads = 0;
  bool quiet = false;
};

int cmd_train(const ModelFlags& m, TrainConfig cfg, const TrainFlags& f, const std::string& uri) {
  // Everything is read and checked before anything runs or is written.
  check_output_path(f.checkpoint, "--checkpoint");
  check_output_path(f.loss_csv, "--loss-csv");
  check_output_path(f.plot, "--plot");
  check_output_path(f.trace, "--trace");
  Dataset data;
  std::string source;
  if (!f.task.empty()) {
    if (!f.x.empty() || !f.y.empty()) throw std::invalid_argument("give either --task or --x/--y, not both");
    data = synthetic_task(f.task, f.steps, f.samples, cfg.seed);
    source = "task " + f.task;
  } else {
    if (f.x.empty() || f.y.empty()) throw std::invalid_argument("give --task sine|adding, or --x and --y (.npy)");
    data.x = io::read_npy(f.x);
    // Class indices (--loss ce) may come as integers.
    data.y = io::read_npy(f.y, cfg.loss == "ce" ? io::NpyValues::kWholeNumbers : io::NpyValues::kFloat32);
    source = f.x + " / " + f.y;
    data.lengths = read_lengths(f.lengths, data.x);
  }
  if (data.x.shape.size() != 3) throw std::invalid_argument(source + ": inputs must be (T, N, I), got " + data.x.shape_string());
  cfg.stack = m.config(data.features());
  if (cfg.outputs == 0) {  // from the data: mse -> last dim of the targets; ce -> max label + 1
    if (cfg.loss == "ce") {
      float mx = 0;
      for (float v : data.y.data) mx = std::max(mx, std::isfinite(v) ? v : 0.0f);
      if (mx >= static_cast<float>(TrainConfig::kMaxOutputs)) {
        throw std::invalid_argument(f.y + ": class label " + std::to_string(mx) + " is beyond the " +
                                    std::to_string(TrainConfig::kMaxOutputs) + " classes a head may have");
      }
      cfg.outputs = static_cast<int>(mx) + 1;
    } else {
      cfg.outputs = data.y.shape.empty() ? 1 : static_cast<int>(data.y.shape.back());
    }
  }
  cfg.validate();
  auto backend = make_backend(f.backend, f.threads);
  auto dev = Device::open(uri);
  Trace trace;
  Trainer trainer(cfg, *dev, *backend, f.trace.empty() ? nullptr : &trace);
  trainer.check_dataset(data, source);

  const int N = data.samples();
  const int per_epoch = (N + cfg.batch - 1) / cfg.batch;
  const bool tty = isatty(STDOUT_FILENO) && !f.quiet;
  std::printf("farnn train: %s on %s, %d samples x %d steps, batch %d, %s lr %g, device %s, backend %s\n",
              cfg.stack.describe().c_str(), source.c_str(), N, data.steps(), cfg.batch, cfg.optimizer.c_str(),
              static_cast<double>(cfg.lr), uri.c_str(), backend->name().c_str());
  std::vector<int> order(static_cast<size_t>(N));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(cfg.seed + 1);
  std::vector<double> losses;
  std::string csv = "step,epoch,loss,grad_norm\n";
  const auto start = std::chrono::steady_clock::now();
  // The checkpoint is rewritten after every epoch; should a later epoch fail,
  // the error says which epoch's state it holds.
  int saved_epoch = 0;
  try {
    for (int epoch = 1; epoch <= cfg.epochs; ++epoch) {
      std::shuffle(order.begin(), order.end(), rng);
      double sum = 0;
      for (int k = 0; k < per_epoch; ++k) {
        const std::vector<int> idx(order.begin() + k * cfg.batch,
                                   order.begin() + std::min(N, (k + 1) * cfg.batch));
        const StepStats st = trainer.step(data, idx);
        losses.push_back(st.loss);
        sum += st.loss;
        csv += std::to_string(losses.size()) + "," + std::to_string(epoch) + "," +
               std::to_string(st.loss) + "," + std::to_string(st.grad_norm) + "\n";
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (tty) {
          const int width = 30, done = (k + 1) * width / per_epoch;
          std::printf("\repoch %d/%d [%s%s] loss %.5f  %.1f steps/s ", epoch, cfg.epochs,
                      std::string(done, '#').c_str(), std::string(width - done, '.').c_str(),
                      st.loss, losses.size() / secs);
          std::fflush(stdout);
        }
      }
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (tty) std::printf("\n");
      std::printf("epoch %d/%d  mean loss %.6f  %.1f steps/s\n", epoch, cfg.epochs, sum / per_epoch,
                  losses.size() / secs);
      std::fflush(stdout);
      if (!f.checkpoint.empty()) {
        io::write_safetensors(f.checkpoint, trainer.state(), {{"format", "pt"}});
        saved_epoch = epoch;
      }
    }
  } catch (const std::exception& e) {
    if (saved_epoch == 0) throw;
    throw std::runtime_error(std::string(e.what()) + "; " + f.checkpoint +
                             " keeps the state after epoch " + std::to_string(saved_epoch) +
                             " of " + std::to_string(cfg.epochs));
  }
  const Counters c = dev->counters();
  std::printf("device: %llu FORWARD, %llu BACKWARD, %llu LOAD, %.3g MACs, %.3g words in, %.3g words out\n",
              static_cast<unsigned long long>(c.forwards), static_cast<unsigned long long>(c.backwards),
              static_cast<unsigned long long>(c.loads), static_cast<double>(c.macs),
              static_cast<double>(c.words_read), static_cast<double>(c.words_written));
  if (!f.loss_csv.empty()) io::write_file_atomic(f.loss_csv, csv);
  if (!f.plot.empty()) write_loss_svg(f.plot, losses, "farnn train: " + cfg.stack.describe() + " loss");
  if (!f.trace.empty()) {
    trace.write_json(f.trace);
    std::printf("trace: %s (device and compute overlap %.1f ms)\n", f.trace.c_str(),
                trace.overlap_us("device", "compute") / 1000);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"farnn: train recurrent networks with the recurrence on the FARNN engine"};
  app.require_subcommand(1);
  // `farnn train --config run.toml`: a [train] section of `option = value`
  // lines (the long option names); options on the command line win.
  app.set_config("--config", "", "read options from a TOML file: a [train] section of option = value lines");
  app.fallthrough();
  app.allow_config_extras(false);  // a misspelt key is an error, never ignored
  std::string uri = "model://";

  auto* info = app.add_subcommand("info", "what the device is");
  info->add_option("--device", uri, "device URI");

  std::string fault;
  auto* selftest = app.add_subcommand("selftest", "bring-up checks: registers, DMA, windows, LSTM and GRU vs the model");
  selftest->add_option("--device", uri, "device URI");
  selftest->add_option("--fault", fault, "inject KIND[:AFTER[:STALL_US]] (sim:// only)");

  ModelFlags gm;
  std::string weights, input, grad_output, out, lengths;
  auto* grad = app.add_subcommand("grad", "one forward and backward, to compare with PyTorch");
  grad->add_option("--weights", weights, "parameters (.safetensors, PyTorch names)")->required();
  grad->add_option("--input", input, "x (T, B, I) float32 .npy")->required();
  grad->add_option("--grad-output", grad_output, "dy (T, B, D*H) float32 .npy")->required();
  grad->add_option("--lengths", lengths, "per-sequence lengths (B,) .npy");
  grad->add_option("--out", out, "results (.safetensors)")->required();
  grad->add_option("--device", uri, "device URI");
  grad->add_option("--fault", fault, "inject KIND[:AFTER[:STALL_US]] (sim:// only)");
  std::string grad_backend = "cpu";
  grad->add_option("--backend", grad_backend, "compute backend: " + backend_list());
  gm.add(*grad, true);

  std::string a_path, b_path;
  double rtol = 1e-5;
  auto* compare = app.add_subcommand("compare", "compare every tensor of B with A: max|a-b| <= rtol * max|b|");
  compare->add_option("a", a_path, "tensors to check (.safetensors)")->required();
  compare->add_option("b", b_path, "reference (.safetensors)")->required();
  compare->add_option("--rtol", rtol, "tolerance relative to max|b| per tensor");

  ModelFlags tm;
  TrainConfig tc;
  tc.outputs = 0;
  TrainFlags tf;
  auto* tr = app.add_subcommand("train", "train an RNN stack with a linear head");
  tm.add(*tr, true);
  auto* task_opt =
      tr->add_option("--task", tf.task, "built-in data: sine or adding")->check(CLI::IsMember({"sine", "adding"}));
  auto* steps_opt =
      tr->add_option("--steps", tf.steps, "sequence length of the built-in task")->check(CLI::Range(2, 65535));
  auto* samples_opt =
      tr->add_option("--samples", tf.samples, "sequences in the built-in task")->check(CLI::Range(1, 1 << 24));
  auto* x_opt = tr->add_option("--x", tf.x, "inputs (T, N, I) .npy");
  // Options of the other data source would be silently ignored: refused.
  steps_opt->excludes(x_opt);
  samples_opt->excludes(x_opt);
  tr->add_option("--y", tf.y, "targets (T, N, O) or (N, O) .npy; class indices (T, N) or (N) for --loss ce");
  tr->add_option("--lengths", tf.lengths, "per-sequence lengths (N,) .npy")->excludes(task_opt);
  tr->add_option("--outputs", tc.outputs, "head outputs (default: from the targets)");
  tr->add_option("--loss", tc.loss, "mse or ce")->check(CLI::IsMember({"mse", "ce"}));
  tr->add_option("--optimizer", tc.optimizer, "adam or sgd")->check(CLI::IsMember({"adam", "sgd"}));
  tr->add_option("--lr", tc.lr, "learning rate");
  tr->add_option("--momentum", tc.momentum, "SGD momentum");
  tr->add_option("--clip", tc.clip, "max global gradient norm (0: off)");
  tr->add_option("--batch", tc.batch, "sequences per step")->check(CLI::Range(1, 1 << 16));
  tr->add_option("--epochs", tc.epochs, "passes over the data")->check(CLI::Range(1, 1 << 20));
  // Checked as a signed number: -1 once wrapped to 2^64 - 1, the same seed as any value past 2^64.
  tr->add_option("--seed", tc.seed, "initialisation, data and shuffling seed")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 62));
  tr->add_option("--backend", tf.backend, "compute backend: " + backend_list());
  tr->add_option("--threads", tf.threads, "compute backend threads (0: all cores)")->check(CLI::Range(0, 1024));
  tr->add_option("--device", uri, "device URI");
  tr->add_option("--checkpoint", tf.checkpoint, "parameters after every epoch (.safetensors)");
  tr->add_option("--loss-csv", tf.loss_csv, "loss of every step (.csv)");
  tr->add_option("--plot", tf.plot, "loss curve (.svg)");
  tr->add_option("--trace", tf.trace, "Chrome/Perfetto trace of the run (.json)");
  tr->add_flag("--quiet", tf.quiet, "no progress bar");

  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--config" && i + 1 < argc) check_config_file(argv[i + 1]);
      if (a.rfind("--config=", 0) == 0) check_config_file(a.substr(9));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "farnn: error: %s\n", e.what());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (*info) return cmd_info(uri);
    if (*selftest) return cmd_selftest(uri, fault);
    if (*grad)
      return cmd_grad(gm, uri, fault, grad_backend, weights, input, grad_output, lengths, out);
    if (*compare) return cmd_compare(a_path, b_path, rtol);
    if (*tr) return cmd_train(tm, tc, tf, uri);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "farnn: error: %s\n", e.what());
    return 2;
  }
  return 2;
}
