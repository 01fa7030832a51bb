// Core benchmark (`make bench`): one LSTM and one GRU layer (the largest
// resident H, B = MaxBatch, T = --steps) through farnn_core's ring — LOAD,
// FORWARD, BACKWARD, one descriptor at a time — with host memory answering
// after --host-latency-ns (default 1000 ns, a PCIe round trip) and card memory
// after --card-latency-ns (default 250 ns, DDR), both converted to cycles at
// the clock `make synth` estimates (or --clock-mhz), no backpressure. Per
// phase: cycles from the doorbell to the completion word in host memory, the
// engine alone (the cycle model with ideal streams and the same gate-store
// latency), MACs and utilization, stall cycles by cause (the core's
// counters), bytes on each master, and the host read channel's efficiency
// during the LOAD. Results are checked bit-exact first. Writes JSON (--json).
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core_harness.hpp"
#include "farnn/engine_cycles.hpp"
#include "layer_case.hpp"
#include "synth_clock.hpp"

using namespace farnn;
using namespace farnn::tb;
using nlohmann::json;

namespace {

// Runs one descriptor; returns its JSON record (cycles: doorbell to completion word).
json run_phase(CoreHarness& hx, const cr::Descriptor& d, uint64_t engine_cycles, int num_pe, double clock_hz) {
  hx.wait_idle(1'000'000, "bench: before a phase");
  const CoreHarness::Counters a = hx.counters();
  hx.host().reset_stats();
  const uint64_t cycles = hx.run_timed(d, 50'000'000, "bench: phase");
  const CoreHarness::Counters b = hx.counters();
  const uint64_t macs = b.macs - a.macs;
  return json{{"cycles", cycles},
              {"engine_alone_cycles", engine_cycles},
              {"shell_overhead_cycles", static_cast<int64_t>(cycles) - static_cast<int64_t>(engine_cycles)},
              {"projected_us", static_cast<double>(cycles) / clock_hz * 1e6},
              {"macs", macs},
              {"mac_utilization", static_cast<double>(macs) / (static_cast<double>(num_pe) * static_cast<double>(cycles))},
              {"stall_cycles",
               {{"input", b.st_in - a.st_in},
                {"output", b.st_out - a.st_out},
                {"dependency", b.st_dep - a.st_dep},
                {"gate_store", b.st_store - a.st_store},
                {"step_gate", b.st_gate - a.st_gate}}},
              {"bytes",
               {{"host_read", b.host_rd - a.host_rd},
                {"host_write", b.host_wr - a.host_wr},
                {"card_read", b.card_rd - a.card_rd},
                {"card_write", b.card_wr - a.card_wr}}},
              {"host_read_channel_busy", hx.host().stats().r_efficiency()}};
}

}  // namespace

int main(int argc, char** argv) {
  return run_main(argc, argv, "bench_core", [](const Options& opt) {
    opt.allow({"steps", "clock-mhz", "json", "host-latency-ns", "card-latency-ns"});
    const bool given = opt.has("clock-mhz");
    const double clock_hz = (given ? opt.get_double("clock-mhz", 0) : synth_clock_mhz()) * 1e6;
    if (!(clock_hz > 0)) throw std::invalid_argument("--clock-mhz must be positive");
    const int steps = static_cast<int>(opt.get_int("steps", 32));
    if (steps < 1 || steps > 4096) throw std::invalid_argument("--steps must be in 1..4096");
    const double host_ns = opt.get_double("host-latency-ns", 1000), card_ns = opt.get_double("card-latency-ns", 250);
    const int host_lat = std::max(1, static_cast<int>(std::lround(host_ns * 1e-9 * clock_hz)));
    const int card_lat = std::max(1, static_cast<int>(std::lround(card_ns * 1e-9 * clock_hz)));

    Stress stress;
    stress.read_latency_min = stress.read_latency_max = host_lat;
    stress.stall = 0.0;
    stress.reorder = false;
    CoreHarness hx(opt, "bench_core", stress);
    CoreHarness::Mem::Timing card = hx.card().timing();
    card.read_latency_min = card.read_latency_max = card_lat;
    card.write_latency_min = card.write_latency_max = card_lat;
    hx.card().set_timing(card);
    hx.setup_ring();
    const CoreParams& p = hx.params();

    json out{{"benchmark", "core"},
             {"num_pe", p.num_pe},
             {"max_hidden", p.max_hidden},
             {"max_batch", p.max_batch},
             {"clock_mhz", clock_hz / 1e6},
             {"clock_source", given ? "--clock-mhz" : "make synth estimate (docs/capacity.md)"},
             {"host_read_latency_cycles", host_lat},
             {"card_latency_cycles", card_lat},
             {"configs", json::array()}};
    for (engine::Cell cell : {engine::Cell::kLstm, engine::Cell::kGru}) {
      engine::Config cfg;
      cfg.cell = cell;
      cfg.num_pe = p.num_pe;
      cfg.hidden = engine::max_resident_hidden(cell, p.num_pe, p.weight_depth, p.max_hidden);
      cfg.batch = p.max_batch;
      cfg.steps = steps;
      Rng rng(opt.seed());
      LayerCase lc = make_layer_case(rng, cfg, 8);
      const auto fw = engine::forward(cfg, lc.weights, lc.xp, lc.state_in_fw);
      const auto bw = engine::backward(cfg, lc.weights, fw.records, lc.dh_bits, lc.carry_in);
      const auto image = engine::load_image(cfg, lc.weights, p.layout());

      cr::Descriptor ld;
      ld.op = cr::Op::kLoad;
      ld.cell = cell == engine::Cell::kLstm ? cr::Cell::kLstm : cr::Cell::kGru;
      ld.hidden = static_cast<uint16_t>(cfg.hidden);
      ld.addr0 = hx.alloc_words(image, 64);
      ld.len0 = static_cast<uint32_t>(image.size() * 4);
      cr::Descriptor f;
      f.op = cr::Op::kForward;
      f.cell = ld.cell;
      f.hidden = ld.hidden;
      f.batch = static_cast<uint16_t>(cfg.batch);
      f.steps = static_cast<uint16_t>(cfg.steps);
      f.addr0 = hx.alloc_words(std::vector<uint32_t>(static_cast<size_t>(cfg.batch), static_cast<uint32_t>(steps)));
      f.in_addr = hx.alloc_words(lc.xp);
      f.out_addr = hx.alloc(fw.h.size() * 4);
      f.state_in_addr = hx.alloc_words(lc.state_in_fw);
      f.state_out_addr = hx.alloc(fw.state_out.size() * 4);
      f.store_base = 0x10000;
      f.store_size = static_cast<uint64_t>(cfg.packed_steps()) * cfg.hidden * 32;
      cr::Descriptor b = f;
      b.op = cr::Op::kBackward;
      b.in_addr = hx.alloc_words(lc.dh_bits);
      b.out_addr = hx.alloc(bw.delta.size() * 4);
      b.state_in_addr = hx.alloc_words(lc.carry_in);
      b.state_out_addr = hx.alloc(bw.state_out.size() * 4);

      engine::EngineTiming t;
      t.num_pe = p.num_pe;
      t.mul_latency = FARNN_PARAM_MulLatency;
      t.add_latency = FARNN_PARAM_AddLatency;
      t.mem_latency = card_lat;
      t.fifo_depth = 1 << static_cast<int>(std::ceil(std::log2(2.0 * p.max_hidden)));
      t.weight_lanes = p.weight_lanes;
      const uint64_t macs = static_cast<uint64_t>(cfg.packed_steps()) * cfg.gate_rows() * cfg.hidden;
      json load = run_phase(hx, ld, engine::load_cycles(cfg, t), p.num_pe, clock_hz);
      load["weight_bytes"] = image.size() * 4;
      load["dma_efficiency"] = static_cast<double>(image.size() * 4) / (64.0 * load["cycles"].get<double>());
      json jf = run_phase(hx, f, engine::forward_cycles(cfg, t), p.num_pe, clock_hz);
      json jb = run_phase(hx, b, engine::backward_cycles(cfg, t), p.num_pe, clock_hz);
      // No figure from a wrong run.
      if (hx.host().read_words(f.out_addr, fw.h.size()) != fw.h ||
          hx.host().read_words(b.out_addr, bw.delta.size()) != bw.delta ||
          hx.host().read_words(b.state_out_addr, bw.state_out.size()) != bw.state_out)
        hx.tb().fail(std::string("bench: ") + engine::cell_name(cell) + " results not bit-exact");
      jf["useful_macs"] = macs;
      jb["useful_macs"] = macs;
      out["configs"].push_back(json{{"cell", engine::cell_name(cell)},
                                    {"hidden", cfg.hidden},
                                    {"batch", cfg.batch},
                                    {"steps", cfg.steps},
                                    {"load", load},
                                    {"forward", jf},
                                    {"backward", jb}});
      std::cout << engine::cell_name(cell) << " H" << cfg.hidden << " B" << cfg.batch << " T" << steps
                << ": LOAD " << load["cycles"] << " cycles (DMA " << load["dma_efficiency"] << "), FW "
                << jf["cycles"] << " (engine alone " << jf["engine_alone_cycles"] << "), BW " << jb["cycles"]
                << " (engine alone " << jb["engine_alone_cycles"] << ")" << std::endl;
    }
    const std::string path = opt.get_string("json", "bench_core.json");
    std::ofstream(path) << out.dump(2) << "\n";
    std::cout << "bench_core: wrote " << path << std::endl;
  });
}
