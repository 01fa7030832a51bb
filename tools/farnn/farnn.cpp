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
#include <iomanip>
#include <map>
#include <numeric>
#include <random>
#include <set>
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
      value << std::setprecision(9) << v;  // a whole length in full (12345678, not 1.23457e+07)
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
  // An output is written beside its path and renamed over it: a link, a
  // device or a pipe there would be replaced by a plain file, not written.
  const auto st = std::filesystem::symlink_status(p, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    throw std::invalid_argument(flag + " " + path +
                                ": exists and is not a plain file (a link, device or pipe), which writing it "
                                "would replace; give a file name");
  }
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(dir, ec) || access(dir.c_str(), W_OK) != 0) {
    throw std::invalid_argument(flag + " " + path + ": cannot write into " + dir.string() +
                                " (does the folder exist?)");
  }
}

// The --config file, line by line, before CLI11 reads it: its own errors
// name neither the file nor the line ("INI was not able to parse ..."), and
// it reads some lines otherwise than TOML does (a '#' inside quotes starts
// its comment; ';' or a blank splits an unquoted value). Lines: blank, a #
// or ; comment, the [train] section, and inside it `option = value` or a
// bare `flag` (true), where the option is one of `known` (the long names;
// train.name before any section), given once, and the value one word, a number, or a
// quoted string without '#', with an optional # comment after it.
void check_config_file(const std::string& path, const std::set<std::string>& known) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;  // CLI11 says the file was not readable
  std::string line;
  std::map<std::string, int> seen;
  bool in_train = false;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto at = [&](const std::string& why) {
      return std::invalid_argument("--config " + path + ": line " + std::to_string(n) + ": " + why + ": " + line);
    };
    if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) throw at("the file starts with a byte-order mark; save it without one");
    const size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#' || line[b] == ';') continue;
    const size_t e = line.find_last_not_of(" \t\r");
    const std::string text = line.substr(b, e - b + 1);
    if (text.front() == '[') {
      if (text != "[train]") throw at("farnn reads one section, [train]");
      in_train = true;
      continue;
    }
    const size_t eq = text.find('=');
    if (eq == 0) throw at("expected option = value");
    const size_t key_end = eq == std::string::npos ? text.find_first_of(" \t#") : eq;
    std::string key = text.substr(0, key_end);
    key.erase(key.find_last_not_of(" \t") + 1);
    // Before any section the options are spelt train.name; inside [train], name.
    if (!in_train && key.rfind("train.", 0) == 0) {
      key = key.substr(6);
    } else if (!in_train) {
      throw at("an option outside the [train] section (there, spell it train." + key + ")");
    }
    if (!known.count(key)) throw at("'" + key + "' is no option of farnn train (the long names, as in --help)");
    if (seen.count(key)) throw at("'" + key + "' was given on line " + std::to_string(seen[key]) + " already");
    seen[key] = n;
    if (eq == std::string::npos) {  // a bare flag
      const size_t r = key_end == std::string::npos ? key_end : text.find_first_not_of(" \t", key_end);
      if (r != std::string::npos && text[r] != '#') throw at("expected option = value");
      continue;
    }
    const size_t v = text.find_first_not_of(" \t", eq + 1);
    if (v == std::string::npos || text[v] == '#') throw at("the value is missing");
    const char q = text[v];
    std::string rest;
    if (q == '"' || q == '\'') {
      const size_t close = text.find(q, v + 1);
      if (close == std::string::npos) throw at("a quoted value must end with its quote");
      if (text.find('#', v + 1) < close) throw at("a '#' inside quotes (the config reader takes it for a comment)");
      rest = text.substr(close + 1);
    } else {
      const size_t word = text.find_first_of(" \t#", v);
      if (text.compare(v, 1, "[") == 0) throw at("a list; every option takes one value");
      rest = word == std::string::npos ? "" : text.substr(word);
      if (text.substr(v, word - v).find(';') != std::string::npos) throw at("';' is no comment here; use '#'");
    }
    const size_t r = rest.find_first_not_of(" \t");
    if (r != std::string::npos && rest[r] != '#') throw at("more than one word after '='; quote a value with blanks");
  }
}

// The outputs of one command (flag, path; empty = not asked for): each
// writable (check_output_path), no two the same file, and none of them one
// of the inputs (a checkpoint written over the training data destroyed it).
void check_output_paths(const std::vector<std::pair<std::string, std::string>>& outputs,
                        const std::vector<std::pair<std::string, std::string>>& inputs) {
  const auto same = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    if (std::filesystem::equivalent(a, b, ec)) return true;  // both exist: one file (links, ./, ..)
    // Else by name: absolute, links in the existing part resolved, . and .. folded.
    const auto name = [&](const std::string& p) {
      return std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec).lexically_normal();
    };
    return name(a) == name(b);
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [flag, path] = outputs[i];
    if (path.empty()) continue;
    check_output_path(path, flag);
    for (size_t j = 0; j < i; ++j) {
      if (!outputs[j].second.empty() && same(path, outputs[j].second)) {
        throw std::invalid_argument(flag + " " + path + ": the same file as " + outputs[j].first +
                                    "; give each output a file of its own");
      }
    }
    for (const auto& [in_flag, in_path] : inputs) {
      if (!in_path.empty() && same(path, in_path)) {
        throw std::invalid_argument(flag + " " + path + ": the same file as the input " + in_flag +
                                    ", which writing it would destroy");
      }
    }
  }
}

// A sequence longer than the device takes is refused before the run (it
// failed in the first step's FORWARD, after the banner).
void check_steps(int64_t steps, const Device& dev, const std::string& source) {
  if (steps > dev.caps().max_steps) {
    throw std::invalid_argument(source + ": sequences of " + std::to_string(steps) + " steps; the device takes at most " +
                                std::to_string(dev.caps().max_steps));
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
  check_output_paths({{"--out", out}}, {{"--weights", weights}, {"--input", input}, {"--grad-output", grad_output},
                                      {"--lengths", lengths}});
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
  check_steps(static_cast<int64_t>(in.x.shape[0]), *dev, input);
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
  std::string config;  // --config, an input too
  int steps = 50, samples = 256, threads = 0;
  bool quiet = false;
};

// The loss CSV, the plot and the trace a run asked for, of the steps that
// ran; returns "; the record of N steps is in ..." naming what it wrote.
std::string write_run_outputs(const TrainFlags& f, const TrainConfig& cfg, const std::string& csv,
                              const std::vector<double>& losses, const Trace& trace) {
  std::string wrote;
  if (!f.loss_csv.empty()) io::write_file_atomic(f.loss_csv, csv), wrote += " " + f.loss_csv;
  if (!f.plot.empty()) {
    write_loss_svg(f.plot, losses, "farnn train: " + cfg.stack.describe() + " loss");
    wrote += " " + f.plot;
  }
  if (!f.trace.empty()) trace.write_json(f.trace), wrote += " " + f.trace;
  return wrote.empty() ? "" : "; the record of its " + std::to_string(losses.size()) + " steps is in" + wrote;
}

int cmd_train(const ModelFlags& m, TrainConfig cfg, const TrainFlags& f, const std::string& uri) {
  // Everything is read and checked before anything runs or is written.
  check_output_paths({{"--checkpoint", f.checkpoint}, {"--loss-csv", f.loss_csv}, {"--plot", f.plot},
                      {"--trace", f.trace}},
                     {{"--x", f.x}, {"--y", f.y}, {"--lengths", f.lengths}, {"--config", f.config}});
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
    // MSE targets of one output per sequence may come as (N,): read as (N, 1).
    if (cfg.loss != "ce" && data.y.shape.size() == 1) data.y.shape.push_back(1);
    source = f.x + " / " + f.y;
    data.lengths = read_lengths(f.lengths, data.x);
  }
  if (data.x.shape.size() != 3) throw std::invalid_argument(source + ": inputs must be (T, N, I), got " + data.x.shape_string());
  if (data.features() < 1) throw std::invalid_argument(source + ": inputs " + data.x.shape_string() + " have no features");
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
  check_steps(data.steps(), *dev, source);
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
        char row[96];  // 9 significant digits: the loss and the norm as a float32 holds them, at any size
        std::snprintf(row, sizeof row, "%zu,%d,%.9g,%.9g\n", losses.size(), epoch, st.loss, st.grad_norm);
        csv += row;
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
      std::printf("epoch %d/%d  mean loss %.6g  %.1f steps/s\n", epoch, cfg.epochs, sum / per_epoch,
                  losses.size() / secs);
      std::fflush(stdout);
      if (!f.checkpoint.empty()) {
        io::write_safetensors(f.checkpoint, trainer.state(), {{"format", "pt"}});
        saved_epoch = epoch;
      }
    }
  } catch (const std::exception& e) {
    // The steps that ran keep their record: the loss curve and the trace of a
    // run that diverged are what tells why.
    std::string kept;
    if (!losses.empty()) {
      try {
        kept = write_run_outputs(f, cfg, csv, losses, trace);
      } catch (const std::exception& w) {
        kept = std::string("; writing the record of the steps that ran failed too: ") + w.what();
      }
    }
    if (saved_epoch > 0) {
      kept += "; " + f.checkpoint + " keeps the state after epoch " + std::to_string(saved_epoch) + " of " +
              std::to_string(cfg.epochs);
    }
    if (kept.empty()) throw;
    throw std::runtime_error(e.what() + kept);
  }
  const Counters c = dev->counters();
  std::printf("device: %llu FORWARD, %llu BACKWARD, %llu LOAD, %.3g MACs, %.3g words in, %.3g words out\n",
              static_cast<unsigned long long>(c.forwards), static_cast<unsigned long long>(c.backwards),
              static_cast<unsigned long long>(c.loads), static_cast<double>(c.macs),
              static_cast<double>(c.words_read), static_cast<double>(c.words_written));
  write_run_outputs(f, cfg, csv, losses, trace);
  if (!f.trace.empty()) {
    std::printf("trace: %s (device and compute overlap %.1f ms)\n", f.trace.c_str(),
                trace.overlap_us("device", "compute") / 1000);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Ctrl-C or SIGTERM mid-write leaves no temporary output file behind.
  io::remove_temp_file_on_stop_signals();
  CLI::App app{"farnn: train recurrent networks with the recurrence on the FARNN engine"};
  app.require_subcommand(1);
  // `farnn train --config run.toml`: a [train] section of `option = value`
  // lines (the long option names); options on the command line win.
  CLI::Option* config_opt =
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
  auto* momentum_opt = tr->add_option("--momentum", tc.momentum, "SGD momentum");
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
  // --config belongs to the top-level app (its [train] section names this
  // subcommand), so the subcommand's own help says where it goes.
  tr->footer(
      "Options may also come from a TOML file: farnn train --config FILE, a [train] section of\n"
      "option = value lines with the long names above (options on the command line win).");

  try {
    std::set<std::string> known;
    for (const CLI::Option* o : tr->get_options()) {
      for (const std::string& name : o->get_lnames()) known.insert(name);
    }
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--config" && i + 1 < argc) check_config_file(argv[i + 1], known);
      if (a.rfind("--config=", 0) == 0) check_config_file(a.substr(9), known);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "farnn: error: %s\n", e.what());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // One "farnn: error:" line, as for every other bad input.
    std::fprintf(stderr, "farnn: error: %s\nRun with --help for more information.\n", e.what());
    return 2;
  }
  try {
    if (*info) return cmd_info(uri);
    if (*selftest) return cmd_selftest(uri, fault);
    if (*grad)
      return cmd_grad(gm, uri, fault, grad_backend, weights, input, grad_output, lengths, out);
    if (*compare) return cmd_compare(a_path, b_path, rtol);
    if (*tr) {
      if (config_opt->count()) tf.config = config_opt->as<std::string>();
      // Adam keeps moments of its own: a momentum given for it would be ignored.
      if (momentum_opt->count() && tc.optimizer != "sgd") {
        throw std::invalid_argument("--momentum applies to --optimizer sgd; Adam (the default) has no such setting");
      }
      return cmd_train(tm, tc, tf, uri);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "farnn: error: %s\n", e.what());
    return 2;
  }
  return 2;
}
