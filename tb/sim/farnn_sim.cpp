// farnn_sim: one LSTM (or GRU) layer, forward and backward, on the Verilated
// recurrent engine alone, with random stalls on every stream and the gate store.
// Prints what the engine computed, its bit-exact agreement with the
// bit-accurate model, its error against the float64 golden model, and the
// cycles and MAC utilization of each phase.
// Options: --cell lstm|gru --hidden N --input N --batch N --steps N --seed N --trace [file]
#include <cmath>
#include <cstdio>
#include <string>

#include "layer_run.hpp"

namespace {

using namespace farnn;
using namespace farnn::tb;

void report_match(const char* what, const std::vector<uint32_t>& expected, const std::vector<uint32_t>& actual,
                  size_t& total_bad) {
  const size_t bad = count_mismatches(expected, actual);
  total_bad += bad;
  std::printf("  %-22s %7zu words  %s\n", what, actual.size(),
              bad == 0 ? "bit-exact with the model" : ("MISMATCH: " + std::to_string(bad) + " words differ").c_str());
}

void report_phase(const char* name, const CommandResult& r, uint64_t macs, int num_pe) {
  const Counters& c = r.counters;
  std::printf("  %-9s %9llu cycles  %10llu MACs  utilization %5.1f%%  stalls: input %llu, output %llu, "
              "dependency %llu, gate store %llu; weight words moved %llu\n",
              name, static_cast<unsigned long long>(c.cycles), static_cast<unsigned long long>(macs),
              100.0 * utilization(macs, num_pe, c.cycles), static_cast<unsigned long long>(c.stall_input),
              static_cast<unsigned long long>(c.stall_output), static_cast<unsigned long long>(c.stall_dep),
              static_cast<unsigned long long>(c.stall_store), static_cast<unsigned long long>(c.weight_words));
}

}  // namespace

int main(int argc, char** argv) {
  return run_main(argc, argv, "farnn_sim", [](const Options& opt) {
    opt.allow({"cell", "hidden", "batch", "steps", "input"});
    const std::string cell_name = opt.get_string("cell", "lstm");
    if (cell_name != "lstm" && cell_name != "gru") {
      throw std::invalid_argument("--cell must be lstm or gru (got '" + cell_name + "')");
    }
    EngineHarness hx(opt, "farnn_sim");
    const EngineParams& p = hx.params();
    const engine::Cell cell = cell_name == "gru" ? engine::Cell::kGru : engine::Cell::kLstm;
    const engine::Config cfg{cell, static_cast<int>(opt.get_int("hidden", 8 * p.num_pe)),
                             static_cast<int>(opt.get_int("batch", 1)), static_cast<int>(opt.get_int("steps", 16)),
                             p.num_pe};
    const int input = static_cast<int>(opt.get_int("input", 24));
    std::printf("FARNN: one %s layer, forward and backward, on the Verilated recurrent engine\n",
                cell == engine::Cell::kLstm ? "LSTM" : "GRU");
    std::printf("engine: %s\n", p.describe().c_str());
    std::printf("layer:  input %d, hidden %d, batch %d, steps %d\n", input, cfg.hidden, cfg.batch, cfg.steps);

    Rng rng(opt.seed());
    const LayerCase lc = make_layer_case(rng, cfg, input);
    Stress stress;
    stress.in_idle = 0.05;
    stress.out_stall = 0.1;
    stress.mem_req_stall = 0.1;
    stress.mem_rsp_stall = 0.1;
    stress.mem_min_latency = 10;
    stress.mem_max_latency = 40;
    hx.set_stress(stress);
    std::printf("streams: 5%% idle input cycles, 10%% output backpressure, gate store latency 10..40 cycles\n\n");

    const LayerRun r = run_layer(hx, lc);
    for (const CommandResult* c : {&r.load, &r.fw, &r.bw}) {
      if (!c->ok()) throw std::runtime_error("engine command failed: " + c->describe());
    }
    size_t bad = 0;
    std::printf("forward:\n");
    report_match("h_t", r.model_fw.h, r.fw.h, bad);
    report_match("final (h, c)", r.model_fw.state_out, r.fw.state_out, bad);
    report_match("gate-store records", r.model_fw.records, r.stored, bad);
    std::printf("  h_T[0..3] of sequence 0:");
    for (int j = 0; j < std::min(4, cfg.hidden); ++j) {
      std::printf(" %+.6f", value(r.fw.h[(static_cast<size_t>(cfg.steps - 1) * cfg.batch) * cfg.hidden + j]));
    }
    std::printf("\nbackward:\n");
    report_match("delta_t", r.expected_delta, r.bw.delta, bad);
    report_match("(dh0, dc0)", r.model_bw.state_out, r.bw.state_out, bad);
    std::printf("  dh0[0..3] of sequence 0:");
    for (int j = 0; j < std::min(4, cfg.hidden); ++j) {
      std::printf(" %+.6f", value(r.bw.state_out[static_cast<size_t>(j) * engine::state_words(cell)]));
    }
    std::printf("\nagainst the float64 golden model (outputs, gate gradients, dW, db, dx, dh0, dc0):\n");
    check_against_golden(hx.tb(), lc, r.fw.h, r.fw.state_out, r.bw.delta, r.bw.state_out);
    std::printf("\ncounters (per command):\n");
    report_phase("load", r.load, 0, p.num_pe);
    report_phase("forward", r.fw, r.useful_macs, p.num_pe);
    report_phase("backward", r.bw, r.useful_macs, p.num_pe);
    std::printf("\n");
    if (bad != 0) throw std::runtime_error(std::to_string(bad) + " words differ from the bit-accurate model");
  });
}
