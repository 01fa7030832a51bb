// Engine speed test: the cycles of every LOAD, FORWARD and BACKWARD, with ideal
// streams and a gate store of fixed latency, must equal the analytic schedule
// of sw/lib/engine_cycles.cpp exactly. A wider token spacing, an extra stall,
// a longer pipeline or a lost overlap changes the count and fails here (not
// only in a benchmark). The runs are also checked bit-exact against the model
// and their measured counters against the work: MACs = T*B*G*H*H in each
// direction (counted from the PEs' MAC enables), weight words = G*H*H + G*H
// in LOAD and none written during FORWARD/BACKWARD (counted at the weight and
// bias RAM write ports).
// Shapes: LSTM and GRU; H = 1, NumPe+1, 2*NumPe and the largest up to
// 8*NumPe; B = 1 and MaxBatch; T = 1 and 7, and T = 7 with mixed lengths
// (7, 1, 4, 6, ...); gate-store latency 1 and 30. Where the build holds
// H = 8*NumPe, the schedule of the benchmark's run there (B = 1, T = 100)
// must reach 95 % MAC utilization both ways (the engine-v2 target).
// Options: --seed N, --trace [file].
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "farnn/engine_cycles.hpp"
#include "layer_run.hpp"

namespace farnn::tb {
namespace {

void check_counts(EngineHarness& hx, const std::string& ctx, const char* what, uint64_t got, uint64_t want) {
  if (got != want) {
    hx.tb().fail(ctx + ": " + what + " " + std::to_string(got) + ", expected " + std::to_string(want));
  }
}

}  // namespace
}  // namespace farnn::tb

int main(int argc, char** argv) {
  using namespace farnn;
  using namespace farnn::tb;
  return run_main(argc, argv, "tb_engine_speed", [](const Options& opt) {
    opt.allow({});
    EngineHarness hx(opt, "tb_engine_speed");
    const EngineParams& p = hx.params();
    std::printf("engine %s\n", p.describe().c_str());
    Rng rng(opt.seed());
    int checked = 0;
    for (int mem : {1, 30}) {
      Stress ideal;
      ideal.mem_min_latency = ideal.mem_max_latency = mem;
      hx.set_stress(ideal);
      const engine::EngineTiming timing = p.timing(mem);
      for (engine::Cell cell : {engine::Cell::kLstm, engine::Cell::kGru}) {
        const int h_max =
            engine::max_resident_hidden(cell, p.num_pe, p.weight_depth, std::min(p.max_hidden, 8 * p.num_pe));
        // H = NumPe: G rows a PE (< 5: 2 sums a row where H >= 2); NumPe/G and
        // 2*NumPe/G: one and two rows a PE, the most sums (up to 8 and 4, at most
        // H); B = 1 and B > 1.
        const int g = engine::gates(cell);
        std::vector<int> hs = {1, std::clamp(p.num_pe / g, 1, h_max), std::clamp(2 * p.num_pe / g, 1, h_max),
                               std::min(p.num_pe, h_max), std::min(p.num_pe + 1, h_max),
                               std::min(2 * p.num_pe, h_max), h_max};
        std::sort(hs.begin(), hs.end());
        hs.erase(std::unique(hs.begin(), hs.end()), hs.end());
        for (int h : hs) {
          for (int b : {1, p.max_batch}) {
            for (int t : {1, 7, -7}) {  // -7: T = 7 with mixed lengths
              if (t < 0 && b < 2) continue;
              engine::Config cfg{cell, h, b, std::abs(t), p.num_pe};
              if (t < 0) {
                static const int kMixed[] = {7, 1, 4, 6, 2, 7, 3, 5};
                for (int i = 0; i < b; ++i) cfg.lengths.push_back(kMixed[i % 8]);
              }
              const LayerCase lc = make_layer_case(rng, cfg, 3);
              const LayerRun r = run_layer(hx, lc);
              char buf[128];
              std::snprintf(buf, sizeof buf, "%s H=%d B=%d T=%d%s gate-store latency %d", engine::cell_name(cell), h,
                            b, std::abs(t), t < 0 ? " mixed lengths" : "", mem);
              const std::string ctx = buf;
              if (!r.load.ok() || !r.fw.ok() || !r.bw.ok()) hx.tb().fail(ctx + ": a command failed");
              if (first_mismatch(r.model_fw.h, r.fw.h) >= 0 || first_mismatch(r.expected_delta, r.bw.delta) >= 0 ||
                  first_mismatch(r.model_bw.state_out, r.bw.state_out) >= 0) {
                hx.tb().fail(ctx + ": not bit-exact with the model");
              }
              check_counts(hx, ctx, "LOAD cycles", r.load.counters.cycles, engine::load_cycles(cfg, timing));
              check_counts(hx, ctx, "FORWARD cycles", r.fw.counters.cycles, engine::forward_cycles(cfg, timing));
              check_counts(hx, ctx, "BACKWARD cycles", r.bw.counters.cycles, engine::backward_cycles(cfg, timing));
              check_counts(hx, ctx, "FORWARD MACs", r.fw.counters.macs, r.useful_macs);
              check_counts(hx, ctx, "BACKWARD MACs", r.bw.counters.macs, r.useful_macs);
              check_counts(hx, ctx, "LOAD weight words", r.load.counters.weight_words, engine::load_words(cfg));
              check_counts(hx, ctx, "weight words written during FORWARD", r.fw.counters.weight_words, 0);
              check_counts(hx, ctx, "weight words written during BACKWARD", r.bw.counters.weight_words, 0);
              std::printf("  %-38s LOAD %6llu  FW %7llu cycles (%5.1f%%)  BW %7llu cycles (%5.1f%%)  = schedule\n",
                          ctx.c_str(), static_cast<unsigned long long>(r.load.counters.cycles),
                          static_cast<unsigned long long>(r.fw.counters.cycles),
                          100.0 * utilization(r.useful_macs, p.num_pe, r.fw.counters.cycles),
                          static_cast<unsigned long long>(r.bw.counters.cycles),
                          100.0 * utilization(r.useful_macs, p.num_pe, r.bw.counters.cycles));
              ++checked;
            }
          }
        }
      }
    }
    std::printf("  %d configurations: LOAD, FORWARD and BACKWARD cycles equal the analytic schedule\n", checked);

    // The engine-v2 target on this build, where it holds H = 8*NumPe: batch 1
    // at >= 95 % MAC utilization forward and backward, LSTM and GRU, for the
    // `make bench` run (T = 100, gate store 30). From the schedule, which the
    // runs above hold this RTL to (H = 8*NumPe is among them, at T = 7).
    const engine::EngineTiming bench = p.timing(30);
    for (engine::Cell cell : {engine::Cell::kLstm, engine::Cell::kGru}) {
      const int h = 8 * p.num_pe;
      if (engine::max_resident_hidden(cell, p.num_pe, p.weight_depth, p.max_hidden) < h) continue;
      const engine::Config cfg = as_built({cell, h, 1, 100, p.num_pe});
      const uint64_t macs = 100ull * engine::gates(cell) * h * h;
      const double fw = utilization(macs, p.num_pe, engine::forward_cycles(cfg, bench));
      const double bw = utilization(macs, p.num_pe, engine::backward_cycles(cfg, bench));
      std::printf("  target %s H=%d B=1 T=100: FW %.1f%%  BW %.1f%%  (>= 95%%)\n", engine::cell_name(cell), h,
                  100.0 * fw, 100.0 * bw);
      if (fw < 0.95 || bw < 0.95) hx.tb().fail(std::string(engine::cell_name(cell)) + " H = 8*NumPe under 95 %");
    }
  });
}
