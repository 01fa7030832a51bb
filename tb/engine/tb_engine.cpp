// Engine testbench: one LSTM/GRU layer forward and backward on the Verilated
// engine, compared bit for bit with the engine's bit-accurate model (every h_t,
// the final state, every gate-store record, every delta_t, dh0, dc0), with
// random idle cycles on every input stream, random backpressure on every output
// stream and a gate-store memory with random latency and backpressure. Also
// checks the counters (useful MACs, zero weight traffic in backward) and that
// every illegal configuration ends with its error status instead of hanging.
//
// Options: --suite errors|cases|lengths (default all; errors includes NaN/Inf
//          data, lengths the packed batches), --cell lstm|gru|both,
//          --hidden N --batch N --steps N --input N (one case instead of the suite),
//          --seed N, --trace [file].
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "layer_run.hpp"

namespace farnn::tb {
namespace {

using engine::Cell;

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

// Fails on the first word that differs, naming the stream and its position.
void expect_equal(EngineHarness& hx, const std::string& what, const std::vector<uint32_t>& expected,
                  const std::vector<uint32_t>& actual, const std::function<std::string(size_t)>& where) {
  if (expected.size() != actual.size()) {
    hx.tb().fail(what + ": expected " + std::to_string(expected.size()) + " words, got " +
                 std::to_string(actual.size()));
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != actual[i]) {
      hx.tb().fail(what + " differs at " + where(i) + ": expected " + hex(expected[i]) + " got " +
                   hex(actual[i]));
    }
  }
}

Stress random_stress(Rng& rng) {
  static const double kIdle[] = {0.0, 0.1, 0.5};
  static const double kStall[] = {0.0, 0.2, 0.6};
  Stress s;
  s.in_idle = kIdle[rng.range(0, 2)];
  s.out_stall = kStall[rng.range(0, 2)];
  s.mem_req_stall = kStall[rng.range(0, 2)];
  s.mem_rsp_stall = kStall[rng.range(0, 2)];
  s.mem_min_latency = static_cast<int>(rng.range(1, 4));
  s.mem_max_latency = s.mem_min_latency + static_cast<int>(rng.range(0, 40));
  return s;
}

void run_case(EngineHarness& hx, const engine::Config& cfg, int input, uint64_t case_seed) {
  Rng rng(case_seed);
  const LayerCase lc = make_layer_case(rng, cfg, input);
  const int H = cfg.hidden, B = cfg.batch, T = cfg.steps;
  const Stress stress = random_stress(rng);
  hx.set_stress(stress);
  std::printf("  case %s H=%d I=%d B=%d T=%d  stress idle=%.1f stall=%.1f mem=%.1f/%.1f lat %d..%d\n",
              engine::cell_name(cfg.cell), H, input, B, T, stress.in_idle, stress.out_stall,
              stress.mem_req_stall, stress.mem_rsp_stall, stress.mem_min_latency, stress.mem_max_latency);

  const LayerRun r = run_layer(hx, lc);
  if (!r.load.ok()) hx.tb().fail("LOAD ended with " + r.load.describe());
  if (r.load.counters.weight_words != engine::load_words(cfg)) hx.tb().fail("LOAD weight word count wrong");
  if (!r.fw.ok()) hx.tb().fail("FORWARD ended with " + r.fw.describe());
  expect_equal(hx, "h_t", r.model_fw.h, r.fw.h, [&](size_t i) {
    return "t=" + std::to_string(i / (B * H)) + " b=" + std::to_string(i / H % B) +
           " j=" + std::to_string(i % H);
  });
  expect_equal(hx, "final state", r.model_fw.state_out, r.fw.state_out,
               [&](size_t i) { return "word " + std::to_string(i); });
  expect_equal(hx, "gate store", r.model_fw.records, r.stored, [&](size_t i) {
    return "record " + std::to_string(i / 8) + " word " + std::to_string(i % 8);
  });
  if (r.fw.counters.macs != r.useful_macs) hx.tb().fail("FORWARD MAC count wrong");
  if (r.fw.counters.weight_words != 0) hx.tb().fail("FORWARD moved weight words");
  if (!r.bw.ok()) hx.tb().fail("BACKWARD ended with " + r.bw.describe());
  expect_equal(hx, "delta_t", r.expected_delta, r.bw.delta, [&](size_t i) {
    const size_t unit = i / 4, step = unit / (B * H);
    return "t=" + std::to_string(T - 1 - static_cast<int>(step)) + " b=" + std::to_string(unit / H % B) +
           " j=" + std::to_string(unit % H) + " word " + std::to_string(i % 4);
  });
  expect_equal(hx, "dh0/dc0", r.model_bw.state_out, r.bw.state_out,
               [&](size_t i) { return "word " + std::to_string(i); });
  if (r.bw.counters.macs != r.useful_macs) hx.tb().fail("BACKWARD MAC count wrong");
  if (r.bw.counters.weight_words != 0) hx.tb().fail("BACKWARD moved weight words");

  if (cfg.lengths.empty()) check_against_golden(hx.tb(), lc, r.fw.h, r.fw.state_out, r.bw.delta, r.bw.state_out);
  const int p = hx.params().num_pe;
  std::printf("    bit-exact: %zu h, %zu records, %zu delta, %zu state words; FW %llu cycles "
              "(util %.1f%%), BW %llu cycles (util %.1f%%)\n",
              r.fw.h.size(), r.stored.size() / 8, r.bw.delta.size(),
              r.fw.state_out.size() + r.bw.state_out.size(),
              static_cast<unsigned long long>(r.fw.counters.cycles),
              100.0 * utilization(r.useful_macs, p, r.fw.counters.cycles),
              static_cast<unsigned long long>(r.bw.counters.cycles),
              100.0 * utilization(r.useful_macs, p, r.bw.counters.cycles));
}

struct Bad {
  const char* what;
  Op op;
  int cell, hidden, batch, steps;
  uint64_t size;
  Status status;
  uint64_t base = 0x1000;
};

// An illegal request ends quickly with its status, takes no stream data and
// produces no output.
void expect_refusal(EngineHarness& hx, const Bad& b) {
  EngineCommand c;
  c.op = b.op;
  c.cell = b.cell;
  c.hidden = b.hidden;
  c.batch = b.batch;
  c.steps = b.steps;
  c.store_size = b.size;
  c.store_base = b.base;
  c.weights.assign(8, 0x3f800000u);
  c.state_in.assign(8, 0);
  c.xp.assign(8, 0);
  c.dh.assign(8, 0);
  const CommandResult r = hx.run(c, 2000);
  if (r.status != b.status) {
    hx.tb().fail(std::string("illegal request '") + b.what + "': " + r.describe() + ", expected " +
                 engine::status_name(static_cast<int>(b.status)));
  }
  if (!r.h.empty() || !r.delta.empty() || !r.state_out.empty()) {
    hx.tb().fail(std::string("illegal request '") + b.what + "' produced output");
  }
  std::printf("  refused: %-34s %s after %llu cycles\n", b.what,
              engine::status_name(static_cast<int>(r.status)).c_str(), static_cast<unsigned long long>(r.latency));
}

// NaN and infinity in the data are not errors: they propagate as IEEE says,
// bit-exactly as in the model, and the engine counts the affected units.
void run_nonfinite_case(EngineHarness& hx, engine::Cell cell) {
  const EngineParams& p = hx.params();
  const int h = std::min(p.num_pe + 1, engine::max_resident_hidden(cell, p.num_pe, p.weight_depth, p.max_hidden));
  const engine::Config cfg{cell, h, std::min(2, p.max_batch), 4, p.num_pe};
  Rng rng(99);
  LayerCase lc = make_layer_case(rng, cfg, 5);
  const int gh = cfg.gate_rows();
  lc.xp[static_cast<size_t>(1) * cfg.batch * gh + 2] = 0x7fc00001u;     // a signalling-payload NaN, t=1
  lc.xp[static_cast<size_t>(2) * cfg.batch * gh + gh + 1] = 0xff800000u;  // -Inf into a gate, t=2, b=1
  lc.dh_stream[3] = 0x7f800000u;                                          // +Inf gradient
  lc.dh_bits.assign(lc.dh_bits.size(), 0);
  for (int t = cfg.steps - 1, i = 0; t >= 0; --t)  // keep the model's copy in step with the stream
    for (int b = 0; b < cfg.batch; ++b)
      for (int j = 0; j < cfg.hidden; ++j, ++i)
        lc.dh_bits[(static_cast<size_t>(t) * cfg.batch + b) * cfg.hidden + j] = lc.dh_stream[i];
  const LayerRun r = run_layer(hx, lc);
  expect_equal(hx, "h_t with NaN/Inf", r.model_fw.h, r.fw.h, [](size_t i) { return std::to_string(i); });
  expect_equal(hx, "records with NaN/Inf", r.model_fw.records, r.stored,
               [](size_t i) { return std::to_string(i); });
  expect_equal(hx, "delta_t with NaN/Inf", r.expected_delta, r.bw.delta,
               [](size_t i) { return std::to_string(i); });
  expect_equal(hx, "dh0/dc0 with NaN/Inf", r.model_bw.state_out, r.bw.state_out,
               [](size_t i) { return std::to_string(i); });
  const uint64_t fw_bad = nonfinite_units_fw(r.model_fw), bw_bad = nonfinite_units_bw(r.model_bw, cell);
  if (fw_bad == 0 || bw_bad == 0) hx.tb().fail("the injected NaN/Inf did not reach the outputs");
  if (r.fw.counters.nonfinite_units != fw_bad || r.bw.counters.nonfinite_units != bw_bad) {
    hx.tb().fail("non-finite unit counters " + std::to_string(r.fw.counters.nonfinite_units) + "/" +
                 std::to_string(r.bw.counters.nonfinite_units) + ", expected " + std::to_string(fw_bad) +
                 "/" + std::to_string(bw_bad));
  }
  std::printf("  NaN/Inf in xp and dh (%s): bit-exact, %llu FW and %llu BW units flagged\n",
              engine::cell_name(cell), static_cast<unsigned long long>(fw_bad),
              static_cast<unsigned long long>(bw_bad));
}

// Packed batches: every sequence with its own length. Each pattern runs FW and
// BW bit-exact against the model (whose packing test proves each sequence
// equals a batch of one at its own length), with the MAC counter equal to the
// real work only (sum of the lengths * G*H*H).
void run_lengths_suite(EngineHarness& hx, uint64_t seed) {
  const EngineParams& p = hx.params();
  Rng rng(seed);
  const int T = 6, B = p.max_batch;
  std::vector<std::pair<const char*, std::vector<int>>> patterns;
  if (B == 1) {
    patterns = {{"one sequence, all steps", {T}}, {"one sequence, shorter than T", {T - 2}}};
  } else {
    std::vector<int> equal(B, T), one(B, T), desc(B), unsorted(B), shorter(B, T - 3);
    one[B / 2] = 1;
    for (int b = 0; b < B; ++b) desc[b] = std::max(1, T - b * 2);
    for (int b = 0; b < B; ++b) unsorted[b] = static_cast<int>(rng.range(1, T));
    unsorted[0] = std::max(unsorted[0], 2);
    shorter[B - 1] = 1;
    patterns = {{"all equal", equal}, {"one of length 1", one}, {"descending", desc},
                {"unsorted random", unsorted}, {"all shorter than T", shorter}};
  }
  for (engine::Cell cell : {engine::Cell::kLstm, engine::Cell::kGru}) {
    for (const auto& [name, lengths] : patterns) {
      engine::Config cfg{cell, std::min(p.max_hidden, p.num_pe + 3), B, T, p.num_pe};
      cfg.lengths = lengths;
      const LayerCase lc = make_layer_case(rng, cfg, 4);
      hx.set_stress(random_stress(rng));
      const LayerRun r = run_layer(hx, lc);
      const std::string ctx = std::string(engine::cell_name(cell)) + " lengths " + name;
      if (!r.load.ok() || !r.fw.ok() || !r.bw.ok()) hx.tb().fail(ctx + ": a command failed: " + r.fw.describe() +
                                                                  " / " + r.bw.describe());
      expect_equal(hx, ctx + ": h", r.model_fw.h, r.fw.h, [](size_t i) { return std::to_string(i); });
      expect_equal(hx, ctx + ": final states", r.model_fw.state_out, r.fw.state_out,
                   [](size_t i) { return std::to_string(i); });
      expect_equal(hx, ctx + ": gate store", r.model_fw.records, r.stored, [](size_t i) { return std::to_string(i); });
      expect_equal(hx, ctx + ": delta", r.expected_delta, r.bw.delta, [](size_t i) { return std::to_string(i); });
      expect_equal(hx, ctx + ": dh0/dc0", r.model_bw.state_out, r.bw.state_out,
                   [](size_t i) { return std::to_string(i); });
      if (r.fw.counters.macs != r.useful_macs || r.bw.counters.macs != r.useful_macs) {
        hx.tb().fail(ctx + ": MAC counters " + std::to_string(r.fw.counters.macs) + "/" +
                     std::to_string(r.bw.counters.macs) + ", real work " + std::to_string(r.useful_macs));
      }
      std::string lens;
      for (int l : lengths) lens += std::to_string(l) + " ";
      std::printf("  %-4s %-20s lengths %-12s bit-exact; %llu real MACs each way, util FW %.1f%% BW %.1f%%\n",
                  engine::cell_name(cell), name, lens.c_str(), static_cast<unsigned long long>(r.useful_macs),
                  100.0 * utilization(r.useful_macs, p.num_pe, r.fw.counters.cycles),
                  100.0 * utilization(r.useful_macs, p.num_pe, r.bw.counters.cycles));
    }
  }
  // Lengths outside 1..T are refused before any work.
  const engine::Config cfg{engine::Cell::kLstm, 2, B, 3, p.num_pe};
  Rng r2(5);
  const LayerCase lc = make_layer_case(r2, cfg, 3);
  if (!hx.run(layer_command(lc, Op::kLoad, p.layout()), 20000).ok()) hx.tb().fail("load for the length refusals refused");
  for (int bad : {0, 4}) {
    EngineCommand c;
    c.op = Op::kForward;
    c.hidden = 2;
    c.batch = B;
    c.steps = 3;
    c.store_size = 1ull << 30;
    c.lengths.assign(B, 3);
    c.lengths[B - 1] = bad;
    c.state_in.assign(8, 0);
    c.xp.assign(8, 0);
    const CommandResult res = hx.run(c, 2000);
    if (res.status != Status::kBadLength) hx.tb().fail("length " + std::to_string(bad) + " not refused: " + res.describe());
  }
  std::printf("  refused: lengths 0 and T+1 (ERR_BAD_LENGTH)\n");
}

// Every illegal configuration the engine can be asked for, before and after
// weights are loaded.
void run_error_suite(EngineHarness& hx) {
  const EngineParams& p = hx.params();
  const uint64_t big = 1ull << 30;
  // Smallest LSTM hidden size whose rows do not fit the weight RAM, if any.
  int over_capacity = 0;
  for (int h = 1; h <= p.max_hidden; ++h) {
    if (engine::bank_words_per_pe(engine::Cell::kLstm, h, p.num_pe) > p.weight_depth) {
      over_capacity = h;
      break;
    }
  }
  std::vector<Bad> cases = {
      {"forward before any load", Op::kForward, 0, 2, 1, 1, big, Status::kNoWeights},
      {"backward before any forward", Op::kBackward, 0, 2, 1, 1, big, Status::kNoWeights},
      {"bad opcode", static_cast<Op>(3), 0, 2, 1, 1, big, Status::kBadCommand},
      {"bad cell type", Op::kLoad, 2, 2, 1, 1, big, Status::kBadCell},
      {"hidden size 0", Op::kLoad, 0, 0, 1, 1, big, Status::kHiddenZero},
      {"hidden above MaxHidden", Op::kLoad, 1, p.max_hidden + 1, 1, 1, big, Status::kHiddenTooLarge},
      {"hidden far above", Op::kForward, 0, 65535, 1, 1, big, Status::kHiddenTooLarge},
  };
  if (over_capacity > 0) {
    cases.push_back({"LSTM rows beyond the weight RAM", Op::kLoad, 0, over_capacity, 1, 1, big,
                     Status::kHiddenTooLarge});
  }
  for (const Bad& b : cases) expect_refusal(hx, b);

  // With weights loaded (H=2 LSTM), the batch/steps/store checks and the
  // backward-needs-matching-forward check.
  const engine::Config cfg{Cell::kLstm, 2, 1, 1, p.num_pe};
  Rng rng(7);
  const LayerCase lc = make_layer_case(rng, cfg, 3);
  if (!hx.run(layer_command(lc, Op::kLoad, p.layout()), 20000).ok()) hx.tb().fail("load for the error suite refused");
  const std::vector<Bad> after_load = {
      {"batch 0", Op::kForward, 0, 2, 0, 1, big, Status::kBatchZero},
      {"batch above MaxBatch", Op::kForward, 0, 2, p.max_batch + 1, 1, big, Status::kBatchTooLarge},
      {"steps 0", Op::kForward, 0, 2, 1, 0, big, Status::kStepsZero},
      {"gate store base misaligned", Op::kForward, 0, 2, 1, 1, big, Status::kStoreMisaligned, 0x1010},
      {"gate store window wraps", Op::kForward, 0, 2, 1, 1, 1ull << 39, Status::kStoreWrap,
       (1ull << 40) - (1ull << 38)},
      {"gate store too small", Op::kForward, 0, 2, 1, 4, 4 * 2 * 32 - 32, Status::kStoreTooSmall},
      {"forward for other weights (GRU)", Op::kForward, 1, 2, 1, 1, big, Status::kNoWeights},
      {"forward for other hidden size", Op::kForward, 0, 1, 1, 1, big, Status::kNoWeights},
      {"backward without forward", Op::kBackward, 0, 2, 1, 1, big, Status::kNoForward},
  };
  for (const Bad& b : after_load) expect_refusal(hx, b);
  // A forward with T=1, then a backward that asks for T=2: refused.
  EngineCommand fwc;
  fwc.op = Op::kForward;
  fwc.hidden = 2;
  fwc.store_size = big;
  fwc.state_in = lc.state_in_fw;
  fwc.xp = lc.xp;
  if (!hx.run(fwc, 50000).ok()) hx.tb().fail("forward in the error suite refused");
  // A backward must name the forward's window, batch and steps; each other
  // value is refused (and none of them disturbs the stored forward).
  struct Mismatch {
    const char* what;
    int batch, steps;
    uint64_t base;
  };
  const uint64_t other_base = fwc.store_base + 32 * 64;
  for (const Mismatch& m : {Mismatch{"backward with other steps", 1, 2, fwc.store_base},
                            Mismatch{"backward with other batch", 2, 1, fwc.store_base},
                            Mismatch{"backward with other gate-store base", 1, 1, other_base}}) {
    if (m.batch > p.max_batch) continue;
    EngineCommand bwc = fwc;
    bwc.op = Op::kBackward;
    bwc.batch = m.batch;
    bwc.steps = m.steps;
    bwc.store_base = m.base;
    bwc.xp.clear();
    const CommandResult r = hx.run(bwc, 2000);
    if (r.status != Status::kNoForward) hx.tb().fail(std::string(m.what) + " not refused: " + r.describe());
    std::printf("  refused: %-34s %s\n", m.what, engine::status_name(static_cast<int>(r.status)).c_str());
  }
  // The matching backward still runs.
  EngineCommand bwc = fwc;
  bwc.op = Op::kBackward;
  bwc.xp.clear();
  bwc.state_in = lc.carry_in;
  bwc.dh = lc.dh_stream;
  const CommandResult ok = hx.run(bwc, 50000);
  if (!ok.ok()) hx.tb().fail("matching backward after the refusals: " + ok.describe());
}

}  // namespace
}  // namespace farnn::tb

int main(int argc, char** argv) {
  using namespace farnn;
  using namespace farnn::tb;
  return run_main(argc, argv, "tb_engine", [](const Options& opt) {
    opt.allow({"suite", "cell", "hidden", "batch", "steps", "input"});
    EngineHarness hx(opt, "tb_engine");
    const EngineParams& p = hx.params();
    std::printf("engine %s\n", p.describe().c_str());
    const std::string suite = opt.get_string("suite", "all");
    if (suite == "lengths" || suite == "all") run_lengths_suite(hx, opt.seed());
    if (suite == "lengths") return;
    if (suite == "errors" || suite == "all") {
      run_error_suite(hx);
      for (engine::Cell cell : {engine::Cell::kLstm, engine::Cell::kGru}) run_nonfinite_case(hx, cell);
    }
    if (suite == "errors") return;

    const std::string cell_opt = opt.get_string("cell", "both");
    if (suite != "all" && suite != "errors" && suite != "cases" && suite != "lengths") {
      throw std::invalid_argument("--suite must be errors, cases, lengths or all (got '" + suite + "')");
    }
    if (cell_opt != "lstm" && cell_opt != "gru" && cell_opt != "both") {
      throw std::invalid_argument("--cell must be lstm, gru or both (got '" + cell_opt + "')");
    }
    std::vector<engine::Cell> cells;
    if (cell_opt != "gru") cells.push_back(engine::Cell::kLstm);
    if (cell_opt != "lstm") cells.push_back(engine::Cell::kGru);
    Rng rng(opt.seed());
    for (engine::Cell cell : cells) {
      for (const CaseShape& s : case_shapes(opt, p, cell)) {
        const engine::Config cfg{cell, s.hidden, s.batch, s.steps, p.num_pe};
        run_case(hx, cfg, s.input, rng.u64());
      }
    }
  });
}
