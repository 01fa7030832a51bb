// farnn_core testbench: layers through the command ring, bit-exact against
// the engine model, with random latency, backpressure and out-of-order
// responses on both AXI masters and random AXI-Lite timing.
//   --suite layers   random LSTM/GRU layers (H odd and even, B 1..MaxBatch,
//                    mixed lengths) on two banks: LOAD, LOAD, FW, BW, FW, BW
//                    in one ring submission; results, RING_DONE, counters;
//   --suite faults   each fault class at random points, then soft reset and a
//                    bit-exact layer: unknown op, reserved bit, window read /
//                    write / straddle refusals, SLVERR/DECERR on host reads
//                    (descriptor, xp, weights) and writes (h, write-back) and
//                    on the card (gate-store write and read), misaligned
//                    address, bad length, watchdog, a WAIT's own watchdog
//                    (doorbell and polled word: not sooner than its limit),
//                    BACKWARD without its FORWARD, CTRL.abort, bad ring
//                    size; each with the error interrupt;
//   --suite signal   WAIT on a doorbell written late, WAIT on a polled word,
//                    SIGNAL, FORWARD gated per step on a doorbell written late
//                    and at random by a simulated GPU, progress words, the
//                    completion interrupt and its acknowledge;
//   --suite extents  per-step streams packed and strided (a stride per step),
//                    FORWARD and BACKWARD, LSTM and GRU: every stream's window
//                    check at exactly its extent passes (bit-exact, the gaps
//                    of a strided output untouched) and 4 bytes short fails;
//   --suite checks   every field check of the descriptor decode (a bit each
//                    op leaves unused, H, B, T, the store's extent, every
//                    address's alignment) with its error, kind and address,
//                    and which of two failing checks is reported;
//   --suite speed    a full-size layer with DDR-like card latency and
//                    backpressure: no gate-store stall, and the shell adds at
//                    most a few host round trips per command (cycle checks).
// Every wait has a cycle bound and fails with a named error.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core_layer.hpp"

using namespace farnn;
using namespace farnn::tb;

namespace {

engine::Config random_config(Rng& rng, const EngineParams& p, engine::Cell cell) {
  engine::Config c;
  c.cell = cell;
  c.num_pe = p.num_pe;
  const int hmax = engine::max_resident_hidden(cell, p.num_pe, p.weight_depth, p.max_hidden);
  c.hidden = static_cast<int>(rng.range(1, std::min(hmax, 12)));
  c.batch = static_cast<int>(rng.range(1, p.max_batch));
  c.steps = static_cast<int>(rng.range(1, 5));
  c.lengths.resize(static_cast<size_t>(c.batch));
  for (auto& l : c.lengths) l = static_cast<int>(rng.range(1, c.steps));
  c.lengths[static_cast<size_t>(rng.range(0, c.batch - 1))] = c.steps;  // T is a real length
  return c;
}

uint64_t budget(const engine::Config& c) {
  return 400000 + 4000ull * c.steps * c.batch * c.hidden * engine::gates(c.cell);
}

// A fresh random layer (LOAD, FW, BW) submitted and checked: the core works.
void run_one_layer(CoreHarness& hx, const std::string& ctx, uint64_t store_base = 0x10000) {
  const auto cfg = random_config(hx.rng(), hx.params(), hx.rng().chance(0.5) ? engine::Cell::kLstm
                                                                             : engine::Cell::kGru);
  HostLayer l = place_layer(hx, cfg, static_cast<int>(hx.rng().range(0, hx.params().num_banks - 1)), store_base);
  hx.push(load_desc(l));
  hx.push(run_desc(l, false));
  hx.push(run_desc(l, true));
  hx.ring_doorbell();
  if (!hx.wait_done(hx.tail(), budget(cfg), ctx)) hx.tb().fail(ctx + ": halted: " + hx.fault().describe());
  expect_layer(hx, l, ctx);
}

// ------------------------------------------------------------ layers suite
void suite_layers(CoreHarness& hx, int count) {
  hx.setup_ring();
  uint64_t descs = 0;
  for (int n = 0; n < count; ++n) {
    const auto c1 = random_config(hx.rng(), hx.params(), (n % 2) ? engine::Cell::kGru : engine::Cell::kLstm);
    const auto c2 = random_config(hx.rng(), hx.params(), (n % 2) ? engine::Cell::kLstm : engine::Cell::kGru);
    const int b1 = 0, b2 = hx.params().num_banks > 1 ? 1 : 0;
    HostLayer l1 = place_layer(hx, c1, b1, 0x10000);
    HostLayer l2 = place_layer(hx, c2, b2, 0x800000);
    hx.push(load_desc(l1));
    if (b2 != b1) hx.push(load_desc(l2));
    hx.push(run_desc(l1, false));
    hx.push(run_desc(l1, true));
    if (b2 == b1) hx.push(load_desc(l2));
    hx.push(run_desc(l2, false));
    hx.push(run_desc(l2, true));
    descs += 6;
    hx.ring_doorbell();
    const std::string ctx = "layers #" + std::to_string(n) + " (" + engine::cell_name(c1.cell) + " H" +
                            std::to_string(c1.hidden) + " B" + std::to_string(c1.batch) + " T" +
                            std::to_string(c1.steps) + ", " + engine::cell_name(c2.cell) + " H" +
                            std::to_string(c2.hidden) + " B" + std::to_string(c2.batch) + " T" +
                            std::to_string(c2.steps) + ")";
    if (!hx.wait_done(hx.tail(), budget(c1) + budget(c2), ctx)) hx.tb().fail(ctx + ": halted: " + hx.fault().describe());
    expect_layer(hx, l1, ctx + " layer 1");
    expect_layer(hx, l2, ctx + " layer 2");
    std::cout << ctx << ": bit-exact" << std::endl;
  }
  // Counters count what happened.
  hx.wait_idle(100000, "layers");
  const uint64_t done = hx.rd64(cr::kRegCntDescDone);
  if (done != descs) hx.tb().fail("CNT_DESC_DONE " + std::to_string(done) + ", expected " + std::to_string(descs));
  if (hx.rd(cr::kRegRingDone) != hx.tail()) hx.tb().fail("RING_DONE differs from the tail");
  const uint64_t rd_bytes = hx.rd64(cr::kRegCntHostRdBytes), wr_bytes = hx.rd64(cr::kRegCntHostWrBytes);
  if (rd_bytes != hx.host().stats().read_beats * 64)
    hx.tb().fail("CNT_HOST_RD_BYTES " + std::to_string(rd_bytes) + " != beats the memory served x 64");
  if (wr_bytes != hx.host().stats().write_bytes)
    hx.tb().fail("CNT_HOST_WR_BYTES " + std::to_string(wr_bytes) + " != bytes the memory stored");
  if (hx.rd64(cr::kRegCntCardWrBytes) != hx.card().stats().write_bytes)
    hx.tb().fail("CNT_CARD_WR_BYTES differs from the card memory's count");
  if (hx.rd64(cr::kRegCntMacs) == 0) hx.tb().fail("CNT_MACS is 0 after layers ran");
  std::cout << "layers: " << count << " pairs, " << descs << " descriptors, host bytes read " << rd_bytes
            << ", written " << wr_bytes << ", MACs " << hx.rd64(cr::kRegCntMacs) << std::endl;
}

// ------------------------------------------------------------ faults suite
struct FaultCase {
  std::string name;
  cr::Error error;
  cr::FaultKind kind;
  // Sets up the fault around a placed layer and pushes descriptors; returns
  // the fault address expected (or ~0 when any).
  std::function<uint64_t(CoreHarness&, HostLayer&)> arm;
  int stream = -1;  // the stream the fault log must name (-1: not checked)
  // A watchdog's limit: the ring must halt no sooner than this many cycles
  // after the doorbell and not much later (0: not checked).
  uint64_t watchdog = 0;
};

void expect_fault(CoreHarness& hx, const FaultCase& fc, uint64_t addr, const std::string& ctx) {
  hx.wait_halted(2'000'000, ctx);
  const auto f = hx.fault();
  if (f.error != static_cast<uint32_t>(fc.error) || f.kind != static_cast<uint32_t>(fc.kind) ||
      (addr != ~0ull && f.addr != addr) || (fc.stream >= 0 && f.stream != static_cast<uint32_t>(fc.stream))) {
    hx.tb().fail(ctx + ": got " + f.describe() + "; expected error " + cr::to_string(fc.error) + ", kind " +
                 cr::to_string(fc.kind) + (addr != ~0ull ? ", addr 0x" + CoreHarness::hex(addr) : "") +
                 (fc.stream >= 0 ? ", stream " + std::to_string(fc.stream) : ""));
  }
  // The error interrupt: requested (CTRL.irq_error_en is set), acknowledged, cleared.
  if (!(hx.dut().irq_req_o & 2)) hx.tb().fail(ctx + ": no error interrupt requested");
  hx.dut().irq_ack_i = 2;
  hx.tb().tick();
  hx.dut().irq_ack_i = 0;
  hx.tb().tick();
  if (hx.dut().irq_req_o & 2) hx.tb().fail(ctx + ": error interrupt still requested after its acknowledge");
  hx.wr(cr::kRegIrqStatus, 2);
  std::cout << ctx << ": " << f.describe() << std::endl;
}

constexpr uint32_t kWaitWatchdog = 3000;  // cycles

// A WAIT until a doorbell (addr0 = 0, gate_select) or a polled word (addr0)
// reaches value, under a watchdog (0: the WATCHDOG register's).
cr::Descriptor wait_desc(uint64_t addr0, unsigned gate_select, uint32_t value, uint32_t watchdog = 0) {
  cr::Descriptor w;
  w.op = cr::Op::kWait;
  w.addr0 = addr0;
  w.gate_select = gate_select;
  w.value = value;
  w.watchdog = watchdog;
  return w;
}

void suite_faults(CoreHarness& hx, int rounds) {
  hx.setup_ring(cr::kCtrlIrqErrorEnMask);
  auto layer = [&](CoreHarness& h) {
    const auto cfg = random_config(h.rng(), h.params(), h.rng().chance(0.5) ? engine::Cell::kLstm
                                                                           : engine::Cell::kGru);
    return place_layer(h, cfg, 0, 0x10000);
  };
  std::vector<FaultCase> cases = {
      {"unknown op", cr::Error::kDescOp, cr::FaultKind::kDescOp,
       [](CoreHarness& h, HostLayer& l) {
         auto w = run_desc(l, false).encode();
         w[0] = (w[0] & ~0xffu) | static_cast<uint32_t>(h.rng().range(6, 255));
         h.push_words(w);
         return ~0ull;
       }},
      {"reserved bit", cr::Error::kDescField, cr::FaultKind::kDescField,
       [](CoreHarness& h, HostLayer& l) {
         auto w = load_desc(l).encode();
         w[31] |= 1u << h.rng().range(0, 31);  // word 31 is unused by every op
         h.push_words(w);
         return ~0ull;
       }},
      {"xp outside windows", cr::Error::kWindow, cr::FaultKind::kWindowRead,
       [](CoreHarness& h, HostLayer& l) {
         h.push(load_desc(l));
         auto d = run_desc(l, false);
         d.in_addr = 0x1000;  // no window covers it
         h.push(d);
         return uint64_t{0x1000};
       },
       static_cast<int>(cr::Stream::kXp)},
      {"h into a read-only window", cr::Error::kWindow, cr::FaultKind::kWindowWrite,
       [](CoreHarness& h, HostLayer& l) {
         const uint64_t ro = 0x7000'0000ull;
         h.set_window(1, ro, 1 << 20, true, false);
         h.host().add_region(ro, 1 << 20, CoreHarness::Mem::Access::kReadWrite);
         h.push(load_desc(l));
         auto d = run_desc(l, false);
         d.out_addr = ro;
         h.push(d);
         return ro;
       },
       static_cast<int>(cr::Stream::kH)},
      {"xp straddles the window's end", cr::Error::kWindow, cr::FaultKind::kWindowRead,
       [](CoreHarness& h, HostLayer& l) {
         const uint64_t edge = 0x7100'0000ull;
         h.set_window(2, edge, 4096, true, true);
         h.host().add_region(edge, 8192, CoreHarness::Mem::Access::kReadWrite);
         h.push(load_desc(l));
         auto d = run_desc(l, false);
         d.in_addr = edge + 4096 - 4;  // one word inside, the rest beyond
         h.push(d);
         return edge + 4096 - 4;
       }},
      {"SLVERR on an xp read", cr::Error::kBus, cr::FaultKind::kBusReadSlverr,
       [](CoreHarness& h, HostLayer& l) {
         // xp alone in its page, the error on a random beat of it.
         l.xp = h.alloc_words(l.lc.xp, 4096);
         const uint64_t beats = (l.lc.xp.size() * 4 + 63) / 64;
         const uint64_t at = l.xp + static_cast<uint64_t>(h.rng().range(0, static_cast<long long>(beats) - 1)) * 64;
         h.host().inject_error(at, at + 4, AxiResp::kSlvErr, 1, CoreHarness::Mem::Dir::kRead);
         h.push(load_desc(l));
         h.push(run_desc(l, false));
         return ~0ull;  // the reader names the failing burst's address
       },
       static_cast<int>(cr::Stream::kXp)},
      {"DECERR on an h write", cr::Error::kBus, cr::FaultKind::kBusWriteDecerr,
       [](CoreHarness& h, HostLayer& l) {
         // h alone in its page (no other stream shares the failing beat), the error on a random word.
         l.h = h.alloc(l.fw.h.size() * 4, 4096);
         const uint64_t at = l.h + 4 * static_cast<uint64_t>(h.rng().range(0, static_cast<long long>(l.fw.h.size()) - 1));
         h.host().inject_error(at, at + 4, AxiResp::kDecErr, 1, CoreHarness::Mem::Dir::kWrite);
         h.push(load_desc(l));
         h.push(run_desc(l, false));
         return ~0ull;
       },
       static_cast<int>(cr::Stream::kH)},
      {"SLVERR on a weight read", cr::Error::kBus, cr::FaultKind::kBusReadSlverr,
       [](CoreHarness& h, HostLayer& l) {
         const long long beats = (l.weight_bytes + 63) / 64;
         const uint64_t at = l.weights + static_cast<uint64_t>(h.rng().range(0, beats - 1)) * 64;
         h.host().inject_error(at, at + 64, AxiResp::kSlvErr, 1, CoreHarness::Mem::Dir::kRead);
         h.push(load_desc(l));
         return ~0ull;
       },
       static_cast<int>(cr::Stream::kWeights)},
      {"SLVERR on the gate store", cr::Error::kBus, cr::FaultKind::kBusWriteSlverr,
       [](CoreHarness& h, HostLayer& l) {
         h.card().inject_error(l.store, l.store + 64, AxiResp::kSlvErr, 1, CoreHarness::Mem::Dir::kWrite);
         h.push(load_desc(l));
         h.push(run_desc(l, false));
         return ~0ull;
       },
       static_cast<int>(cr::Stream::kGateStore)},
      {"DECERR on a descriptor fetch", cr::Error::kBus, cr::FaultKind::kBusReadDecerr,
       [](CoreHarness& h, HostLayer& l) {
         const uint64_t at = h.next_desc_addr() + 64 * static_cast<uint64_t>(h.rng().range(0, 1));
         h.host().inject_error(at, at + 4, AxiResp::kDecErr, 1, CoreHarness::Mem::Dir::kRead);
         h.push(load_desc(l));
         return ~0ull;
       },
       static_cast<int>(cr::Stream::kDesc)},
      {"SLVERR on a gate-store read", cr::Error::kBus, cr::FaultKind::kBusReadSlverr,
       [](CoreHarness& h, HostLayer& l) {
         const uint64_t records = static_cast<uint64_t>(l.cfg.packed_steps()) * l.cfg.hidden;
         const uint64_t at = l.store + 32 * static_cast<uint64_t>(h.rng().range(0, static_cast<long long>(records) - 1));
         h.card().inject_error(at, at + 4, AxiResp::kSlvErr, 1, CoreHarness::Mem::Dir::kRead);
         h.push(load_desc(l));
         h.push(run_desc(l, false));
         h.push(run_desc(l, true));
         return ~0ull;
       },
       static_cast<int>(cr::Stream::kGateStore)},
      {"SLVERR on the completion write-back", cr::Error::kBus, cr::FaultKind::kBusWriteSlverr,
       [](CoreHarness& h, HostLayer& l) {
         h.host().inject_error(h.wb_addr(), h.wb_addr() + 4, AxiResp::kSlvErr, 1, CoreHarness::Mem::Dir::kWrite);
         h.push(load_desc(l));
         return h.wb_addr();
       },
       static_cast<int>(cr::Stream::kSignal)},
      {"misaligned xp", cr::Error::kAlign, cr::FaultKind::kAlign,
       [](CoreHarness& h, HostLayer& l) {
         auto d = run_desc(l, false);
         d.in_addr += 2;
         h.push(d);
         return ~0ull;
       }},
      {"BACKWARD delta not 16-byte aligned", cr::Error::kAlign, cr::FaultKind::kAlign,
       [](CoreHarness& h, HostLayer& l) {
         h.push(load_desc(l));
         h.push(run_desc(l, false));
         auto d = run_desc(l, true);
         d.out_addr += 4 * static_cast<uint64_t>(h.rng().range(1, 3));
         h.push(d);
         return d.out_addr;
       }},
      {"length above T", cr::Error::kBadLength, cr::FaultKind::kDescField,
       [](CoreHarness& h, HostLayer& l) {
         h.host().write_words(l.lengths, {static_cast<uint32_t>(l.cfg.steps + 1)});
         h.push(load_desc(l));
         h.push(run_desc(l, false));
         return l.lengths;
       },
       static_cast<int>(cr::Stream::kLengths)},
      {"watchdog (xp never gated open)", cr::Error::kTimeout, cr::FaultKind::kTimeout,
       [](CoreHarness& h, HostLayer& l) {
         h.wr(cr::kRegStepDoorbell(3), 0);
         h.push(load_desc(l));
         auto d = run_desc(l, false);
         d.gate_enable = true;
         d.gate_select = 3;
         d.watchdog = 2000;
         h.push(d);
         return ~0ull;
       },
       static_cast<int>(cr::Stream::kXp)},
      // A WAIT under its own watchdog: on a doorbell that stays below its
      // value, and on a polled word that does.
      {"WAIT watchdog (doorbell)", cr::Error::kTimeout, cr::FaultKind::kTimeout,
       [](CoreHarness& h, HostLayer&) {
         h.wr(cr::kRegStepDoorbell(2), 6);
         h.push(wait_desc(0, 2, 7, kWaitWatchdog));
         return 0ull;
       },
       static_cast<int>(cr::Stream::kWaitPoll), kWaitWatchdog},
      {"WAIT watchdog (polled word)", cr::Error::kTimeout, cr::FaultKind::kTimeout,
       [](CoreHarness& h, HostLayer&) {
         const uint64_t word = h.alloc(4);
         h.host().write_words(word, {0});
         h.push(wait_desc(word, 0, 1, kWaitWatchdog));
         return word;
       },
       static_cast<int>(cr::Stream::kWaitPoll), kWaitWatchdog},
      {"BACKWARD without its FORWARD", cr::Error::kNoForward, cr::FaultKind::kEngine,
       [](CoreHarness& h, HostLayer& l) {
         h.push(load_desc(l));
         auto d = run_desc(l, true);
         d.store_base += 0x100000;  // not where a forward stored
         h.push(d);
         return ~0ull;
       }},
  };
  for (int r = 0; r < rounds; ++r) {
    for (const auto& fc : cases) {
      const std::string ctx = "faults round " + std::to_string(r) + ": " + fc.name;
      HostLayer l = layer(hx);
      const uint64_t addr = fc.arm(hx, l);
      const uint64_t start = hx.tb().cycle();
      hx.ring_doorbell();
      expect_fault(hx, fc, addr, ctx);
      const uint64_t took = hx.tb().cycle() - start;
      // The ring is fetched over the host link first (and halts are polled):
      // a few thousand cycles beyond the watchdog at most.
      if (fc.watchdog != 0 && (took < fc.watchdog || took > fc.watchdog + 4000))
        hx.tb().fail(ctx + ": halted " + std::to_string(took) + " cycles after the doorbell under a watchdog of " +
                     std::to_string(fc.watchdog));
      hx.host().clear_errors();
      hx.card().clear_errors();
      hx.soft_reset();
      run_one_layer(hx, ctx + ", then a layer after soft reset");
    }
    // CTRL.abort while a layer runs, at a random point.
    {
      const std::string ctx = "faults round " + std::to_string(r) + ": CTRL.abort";
      HostLayer l = layer(hx);
      hx.push(load_desc(l));
      hx.push(run_desc(l, false));
      hx.ring_doorbell();
      const int wait = static_cast<int>(hx.rng().range(0, 3000));
      for (int i = 0; i < wait; ++i) hx.tb().tick();
      hx.wr(cr::kRegCtrl, hx.rd(cr::kRegCtrl) | 2u);
      FaultCase fc{"abort", cr::Error::kAborted, cr::FaultKind::kAbort, {}};
      expect_fault(hx, fc, ~0ull, ctx);
      hx.soft_reset();
      run_one_layer(hx, ctx + ", then a layer after soft reset");
    }
  }
  // A bad ring size halts with ERR_RING; fixing it and a soft reset recover.
  hx.wr(cr::kRegRingSize, 12);
  HostLayer l = layer(hx);
  hx.push(load_desc(l));
  hx.ring_doorbell();
  expect_fault(hx, {"ring", cr::Error::kRing, cr::FaultKind::kRing, {}}, ~0ull, "faults: ring size 12");
  hx.wr(cr::kRegRingSize, CoreHarness::kRingEntries);
  hx.soft_reset();
  run_one_layer(hx, "faults: a layer after the ring was fixed");
}

// ------------------------------------------------------------ checks suite
// Every field check of the dispatcher's decode, with its error, fault kind
// and address (the descriptor's own, or the field's for LOAD's address and
// length, BACKWARD's delta and a WAIT/SIGNAL address), and their order where
// a descriptor fails more than one. A bit an op does not use is tried in
// every op, most often a bit another op uses; each fault is followed by a
// soft reset, and a bit-exact layer ends the suite.
void suite_checks(CoreHarness& hx) {
  hx.setup_ring(cr::kCtrlIrqErrorEnMask);
  const EngineParams& p = hx.params();
  HostLayer l = place_layer(hx, random_config(hx.rng(), p, engine::Cell::kLstm), 0, 0x10000);
  const uint64_t word = hx.alloc(4);
  auto op_desc = [&](cr::Op op) {
    switch (op) {
      case cr::Op::kLoad:
        return load_desc(l);
      case cr::Op::kForward:
        return run_desc(l, false);
      case cr::Op::kBackward:
        return run_desc(l, true);
      case cr::Op::kWait:
        return wait_desc(word, 0, 1, kWaitWatchdog);
      case cr::Op::kSignal: {
        cr::Descriptor d;
        d.op = cr::Op::kSignal;
        d.addr0 = word;
        d.value = 7;
        return d;
      }
      default:
        return cr::Descriptor{};
    }
  };
  auto run = [&](bool bw) { return run_desc(l, bw); };
  auto bad = [&](const std::string& name, const cr::DescWords& w, cr::Error e, cr::FaultKind k,
                 std::optional<uint64_t> field_addr = std::nullopt) {
    const uint64_t at = field_addr ? *field_addr : hx.next_desc_addr();
    hx.push_words(w);
    hx.ring_doorbell();
    expect_fault(hx, {name, e, k, {}, static_cast<int>(cr::Stream::kDesc)}, at, "checks: " + name);
    hx.soft_reset();
  };
  const auto field = cr::FaultKind::kDescField;
  const auto align = cr::FaultKind::kAlign;
  const cr::Op ops[] = {cr::Op::kNop,      cr::Op::kLoad, cr::Op::kForward,
                        cr::Op::kBackward, cr::Op::kWait, cr::Op::kSignal};
  // A bit each op leaves unused: 6 a op, 4 of them a bit another op uses.
  for (const cr::Op op : ops) {
    const cr::DescWords used = cr::desc_used_bits(op);
    std::vector<std::pair<unsigned, unsigned>> other, none;  // (word, bit)
    for (unsigned w = 0; w < cr::kDescWords; ++w) {
      for (unsigned b = 0; b < 32; ++b) {
        if ((used[w] >> b) & 1u) continue;
        bool elsewhere = false;
        for (const cr::Op o : ops) elsewhere |= ((cr::desc_used_bits(o)[w] >> b) & 1u) != 0;
        (elsewhere ? other : none).emplace_back(w, b);
      }
    }
    for (int i = 0; i < 6; ++i) {
      const auto& from = (i < 4 || none.empty()) ? other : none;
      const auto [w, b] =
          from[static_cast<size_t>(hx.rng().range(0, static_cast<long long>(from.size()) - 1))];
      cr::DescWords d = op_desc(op).encode();
      d[w] |= 1u << b;
      bad(std::string(cr::to_string(op)) + " with word " + std::to_string(w) + " bit " +
              std::to_string(b) + " set",
          d, cr::Error::kDescField, field);
    }
  }
  const bool bw = hx.rng().chance(0.5);
  auto with = [&](auto change) {
    cr::Descriptor d = run(bw);
    change(d);
    return d.encode();
  };
  const uint16_t big_h = static_cast<uint16_t>(hx.rng().range(p.max_hidden + 1, 65535));
  const uint16_t big_b = static_cast<uint16_t>(hx.rng().range(p.max_batch + 1, 65535));
  const uint64_t wrap = 1ull << hx.rng().range(48, 63);  // beyond the card master's address space
  bad("H = 0", with([](cr::Descriptor& d) { d.hidden = 0; }), cr::Error::kHiddenZero, field);
  bad("H above MaxHidden", with([&](cr::Descriptor& d) { d.hidden = big_h; }),
      cr::Error::kHiddenTooLarge, field);
  bad("B = 0", with([](cr::Descriptor& d) { d.batch = 0; }), cr::Error::kBatchZero, field);
  bad("B above MaxBatch", with([&](cr::Descriptor& d) { d.batch = big_b; }),
      cr::Error::kBatchTooLarge, field);
  bad("T = 0", with([](cr::Descriptor& d) { d.steps = 0; }), cr::Error::kStepsZero, field);
  bad("store base beyond the card", with([&](cr::Descriptor& d) { d.store_base |= wrap; }),
      cr::Error::kStoreWrap, field);
  bad("store size beyond the card", with([&](cr::Descriptor& d) { d.store_size |= wrap; }),
      cr::Error::kStoreWrap, field);
  // Every address and stride of a run, a word's bytes off (the gate and
  // progress words only where the descriptor uses them).
  const uint64_t off = static_cast<uint64_t>(hx.rng().range(1, 3));
  const std::vector<std::pair<std::string, std::function<void(cr::Descriptor&)>>> misaligned = {
      {"lengths", [&](cr::Descriptor& d) { d.addr0 += off; }},
      {"input", [&](cr::Descriptor& d) { d.in_addr += off; }},
      {"output", [&](cr::Descriptor& d) { d.out_addr += off; }},
      {"state in", [&](cr::Descriptor& d) { d.state_in_addr += off; }},
      {"state out", [&](cr::Descriptor& d) { d.state_out_addr += off; }},
      {"input stride", [&](cr::Descriptor& d) { d.in_stride = 64 + static_cast<uint32_t>(off); }},
      {"output stride", [&](cr::Descriptor& d) { d.out_stride = 64 + static_cast<uint32_t>(off); }},
      {"polled gate word",
       [&](cr::Descriptor& d) {
         d.gate_enable = d.gate_poll = true;
         d.gate_addr = word + off;
       }},
      {"progress word",
       [&](cr::Descriptor& d) {
         d.progress_every = 1;
         d.progress_addr = word + off;
       }},
  };
  for (const auto& [name, change] : misaligned)
    bad("misaligned " + name, with(change), cr::Error::kAlign, align);
  // BACKWARD writes delta a unit (16 bytes) an item; the fault names out_addr.
  const uint64_t unit_off = 4 * static_cast<uint64_t>(hx.rng().range(1, 3));
  cr::Descriptor b = run(true);
  b.out_addr += unit_off;
  bad("BACKWARD delta off a unit", b.encode(), cr::Error::kAlign, align, b.out_addr);
  b = run(true);
  b.out_stride = 64 + static_cast<uint32_t>(unit_off);
  bad("BACKWARD delta stride off a unit", b.encode(), cr::Error::kAlign, align, b.out_addr);
  // LOAD: a length or address off the weight beat; the fault names addr0.
  const uint32_t beat = 4u * static_cast<uint32_t>(p.weight_lanes);
  cr::Descriptor ld = load_desc(l);
  ld.len0 = 0;
  bad("LOAD of 0 bytes", ld.encode(), cr::Error::kAlign, align, ld.addr0);
  ld = load_desc(l);
  ld.len0 += 4;
  bad("LOAD length off the beat", ld.encode(), cr::Error::kAlign, align, ld.addr0);
  if (beat > 4) {
    ld = load_desc(l);
    ld.addr0 += 4;
    bad("LOAD address off the beat", ld.encode(), cr::Error::kAlign, align, ld.addr0);
  }
  for (const cr::Op op : {cr::Op::kWait, cr::Op::kSignal}) {
    cr::Descriptor d = op_desc(op);
    d.addr0 += off;
    bad(std::string(cr::to_string(op)) + " address misaligned", d.encode(), cr::Error::kAlign,
        align, d.addr0);
  }
  // Two checks failing: the first in the decode's order is reported.
  cr::DescWords w = with([](cr::Descriptor& d) { d.hidden = 0; });
  w[0] = (w[0] & ~0xffu) | static_cast<uint32_t>(hx.rng().range(6, 255));
  w[31] |= 1u;
  bad("unknown op and a reserved bit", w, cr::Error::kDescOp, cr::FaultKind::kDescOp);
  w = with([](cr::Descriptor& d) { d.hidden = 0; });
  w[30] |= 1u << hx.rng().range(0, 31);
  bad("a reserved bit and H = 0", w, cr::Error::kDescField, field);
  bad("H = 0 and B = 0", with([](cr::Descriptor& d) { d.hidden = d.batch = 0; }),
      cr::Error::kHiddenZero, field);
  bad("H too large and B too large", with([&](cr::Descriptor& d) {
        d.hidden = big_h;
        d.batch = big_b;
      }),
      cr::Error::kHiddenTooLarge, field);
  bad("B too large and T = 0", with([&](cr::Descriptor& d) {
        d.batch = big_b;
        d.steps = 0;
      }),
      cr::Error::kBatchTooLarge, field);
  bad("T = 0 and the store beyond the card", with([&](cr::Descriptor& d) {
        d.steps = 0;
        d.store_base |= wrap;
      }),
      cr::Error::kStepsZero, field);
  bad("the store beyond the card and a misaligned input", with([&](cr::Descriptor& d) {
        d.store_size |= wrap;
        d.in_addr += off;
      }),
      cr::Error::kStoreWrap, field);
  b = run(true);
  b.out_addr += unit_off;
  b.state_in_addr += off;
  bad("a misaligned state and BACKWARD delta off a unit", b.encode(), cr::Error::kAlign, align);
  ld = load_desc(l);
  ld.len0 = 0;
  cr::DescWords lw = ld.encode();
  lw[9] |= 1u << hx.rng().range(0, 31);  // word 9 is unused by every op
  bad("LOAD: a reserved bit and 0 bytes", lw, cr::Error::kDescField, field);
  run_one_layer(hx, "checks: a layer after the refusals");
}

// ------------------------------------------------------------ signal suite
void suite_signal(CoreHarness& hx) {
  hx.setup_ring(cr::kCtrlIrqDoneEnMask);
  // WAIT on doorbell 1 for value 5; the "GPU" writes 3, then 5, late.
  hx.wr(cr::kRegStepDoorbell(1), 0);
  hx.push(wait_desc(0, 1, 5));
  cr::Descriptor nop;
  nop.op = cr::Op::kNop;
  hx.push(nop);
  const uint64_t flag = hx.alloc(4);
  cr::Descriptor s;
  s.op = cr::Op::kSignal;
  s.addr0 = flag;
  s.value = 0xc0ffee;
  s.irq = true;
  hx.push(s);
  hx.ring_doorbell();
  for (int i = 0; i < 2000; ++i) hx.tb().tick();
  if (hx.host().read_words(flag, 1)[0] == 0xc0ffee) hx.tb().fail("signal: SIGNAL ran before its WAIT was met");
  hx.wr(cr::kRegStepDoorbell(1), 3);
  for (int i = 0; i < 2000; ++i) hx.tb().tick();
  if (hx.host().read_words(flag, 1)[0] == 0xc0ffee) hx.tb().fail("signal: WAIT met at 3 < 5");
  hx.wr(cr::kRegStepDoorbell(1), 5);
  if (!hx.wait_done(hx.tail(), 100000, "signal: WAIT + SIGNAL")) hx.tb().fail("signal: halted");
  if (hx.host().read_words(flag, 1)[0] != 0xc0ffee) hx.tb().fail("signal: SIGNAL value not written");
  // The completion interrupt: requested, acknowledged, cleared.
  for (int i = 0; i < 2000 && !(hx.dut().irq_req_o & 1); ++i) hx.tb().tick();
  if (!(hx.dut().irq_req_o & 1)) hx.tb().fail("signal: no completion interrupt after SIGNAL with irq");
  hx.dut().irq_ack_i = 1;
  hx.tb().tick();
  hx.dut().irq_ack_i = 0;
  hx.tb().tick();
  if (hx.dut().irq_req_o & 1) hx.tb().fail("signal: interrupt still requested after its acknowledge");
  hx.wr(cr::kRegIrqStatus, 1);
  if (hx.rd(cr::kRegIrqStatus) & 1) hx.tb().fail("signal: IRQ_STATUS.done not cleared by writing 1");

  // WAIT on a polled word in host memory.
  const uint64_t word = hx.alloc(4);
  hx.host().write_words(word, {0});
  hx.push(wait_desc(word, 0, 2));
  hx.ring_doorbell();
  for (int i = 0; i < 3000; ++i) hx.tb().tick();
  if (hx.rd(cr::kRegRingDone) == hx.tail()) hx.tb().fail("signal: polled WAIT completed before the word reached 2");
  hx.host().write_words(word, {2});
  if (!hx.wait_done(hx.tail(), 100000, "signal: polled WAIT")) hx.tb().fail("signal: halted on polled WAIT");

  // FORWARD gated per step on doorbell 0; the GPU publishes steps late and at
  // random; progress every 2 steps; then BACKWARD gated on a polled word.
  for (int n = 0; n < 3; ++n) {
    auto cfg = random_config(hx.rng(), hx.params(), n % 2 ? engine::Cell::kGru : engine::Cell::kLstm);
    cfg.steps = static_cast<int>(hx.rng().range(3, 6));
    for (auto& len : cfg.lengths) len = static_cast<int>(hx.rng().range(1, cfg.steps));
    cfg.lengths[0] = cfg.steps;
    HostLayer l = place_layer(hx, cfg, 0, 0x10000);
    const uint64_t progress = hx.alloc(4), bw_progress = hx.alloc(4), gate_word = hx.alloc(4);
    hx.host().write_words(progress, {0xffffffffu});
    hx.host().write_words(bw_progress, {0xffffffffu});
    hx.host().write_words(gate_word, {0});
    hx.wr(cr::kRegStepDoorbell(0), 0);
    hx.push(load_desc(l));
    auto f = run_desc(l, false);
    f.gate_enable = true;
    f.gate_select = 0;
    f.progress_every = 2;
    f.progress_addr = progress;
    hx.push(f);
    auto b = run_desc(l, true);
    b.gate_enable = true;
    b.gate_poll = true;
    b.gate_addr = gate_word;
    b.progress_every = 1;
    b.progress_addr = bw_progress;
    hx.push(b);
    hx.ring_doorbell();
    const std::string ctx = "signal: gated layer " + std::to_string(n);
    // The GPU side: publishes xp steps one at a time at random intervals and
    // checks that h never runs ahead of what it published.
    uint32_t published = 0, bw_published = 0, last_progress = 0;
    for (uint64_t c = 0;; ++c) {
      if (c > budget(cfg) * 4) hx.tb().fail(ctx + ": not done");
      if (published < static_cast<uint32_t>(cfg.steps) && hx.rng().chance(0.002)) {
        hx.wr(cr::kRegStepDoorbell(0), ++published);
      }
      if (bw_published < static_cast<uint32_t>(cfg.steps) && hx.rng().chance(0.002)) {
        hx.host().write_words(gate_word, {++bw_published});
      }
      if ((c & 127) == 0) {
        const uint32_t p = hx.host().read_words(progress, 1)[0];
        if (p != 0xffffffffu) {
          if (p > published) hx.tb().fail(ctx + ": progress " + std::to_string(p) + " ahead of " +
                                          std::to_string(published) + " steps published");
          if (p < last_progress) hx.tb().fail(ctx + ": progress went backwards");
          last_progress = p;
        }
        const uint32_t done = hx.host().read_words(hx.wb_addr(), 1)[0];
        if (done != 0xffffffffu && static_cast<int32_t>(done - hx.tail()) >= 0) break;
        if (hx.dut_halted()) hx.tb().fail(ctx + ": halted: " + hx.fault().describe());
      }
      hx.tb().tick();
    }
    const int maxlen = *std::max_element(cfg.lengths.begin(), cfg.lengths.end());
    if (hx.host().read_words(progress, 1)[0] != static_cast<uint32_t>(maxlen))
      hx.tb().fail(ctx + ": final FW progress " + std::to_string(hx.host().read_words(progress, 1)[0]) +
                   ", expected " + std::to_string(maxlen));
    if (hx.host().read_words(bw_progress, 1)[0] != static_cast<uint32_t>(maxlen))
      hx.tb().fail(ctx + ": final BW progress wrong");
    if (hx.rd64(cr::kRegCntStallGate) == 0) hx.tb().fail(ctx + ": CNT_STALL_GATE is 0 with late doorbells");
    expect_layer(hx, l, ctx);
    std::cout << ctx << ": bit-exact, progress " << maxlen << " steps" << std::endl;
  }
}

// ----------------------------------------------------------- extents suite
// The per-step streams in the padded layout (a stride per step) and the exact
// byte extent the dispatcher checks for every stream of a FORWARD and a
// BACKWARD, LSTM and GRU, packed and strided. The extents are computed here
// from the descriptor's rules, independently of the RTL:
//   per-step, strided: (maxlen - 1) * stride + B * words * 4
//   per-step, packed:  (sum of the lengths) * words * 4
//   state in / out:    B * H * 8 (LSTM pairs: FW in, FW and BW out) or B * H * 4
// For each stream, placed alone in a memory region outside window 0, a window
// of exactly its extent lets the command run bit-exact, and one 4 bytes
// shorter halts the ring with ERR_WINDOW at the stream's address.
// Words per sequence and step of the per-step streams.
int in_words(const engine::Config& c, bool bw) { return bw ? c.hidden : c.gate_rows(); }
int out_words(const engine::Config& c, bool bw) { return bw ? 4 * c.hidden : c.hidden; }

uint64_t per_step_extent(const engine::Config& c, uint32_t stride, int words) {
  int maxlen = 0;
  for (int b = 0; b < c.batch; ++b) maxlen = std::max(maxlen, c.length(b));
  if (stride != 0) return uint64_t(maxlen - 1) * stride + uint64_t(c.batch) * uint64_t(words) * 4;
  return uint64_t(c.packed_steps()) * uint64_t(words) * 4;
}

uint64_t state_extent(const engine::Config& c, bool bw, bool out) {
  const bool pairs = c.cell == engine::Cell::kLstm && (out || !bw);
  return uint64_t(c.batch) * uint64_t(c.hidden) * (pairs ? 8 : 4);
}

// Packed per-step words (chunk t = the running sequences of step t) laid out
// with chunk t at t * stride bytes; the gaps hold `fill`.
std::vector<uint32_t> to_strided(const engine::Config& c, const std::vector<uint32_t>& packed, int words,
                                 uint32_t stride, uint64_t extent, uint32_t fill) {
  std::vector<uint32_t> out(extent / 4, fill);
  for (int t = 0; t < c.steps; ++t) {
    const size_t n = size_t(c.active_at(t)) * size_t(words), off = size_t(c.steps_before(t)) * size_t(words);
    if (n == 0) continue;  // steps past the longest length have no chunk
    std::copy(packed.begin() + long(off), packed.begin() + long(off + n), out.begin() + long(t * (stride / 4)));
  }
  return out;
}

std::vector<uint32_t> from_strided(const engine::Config& c, const std::vector<uint32_t>& strided, int words,
                                   uint32_t stride) {
  std::vector<uint32_t> out;
  for (int t = 0; t < c.steps; ++t) {
    const size_t n = size_t(c.active_at(t)) * size_t(words);
    if (n == 0) continue;
    const auto at = strided.begin() + long(t * (stride / 4));
    out.insert(out.end(), at, at + long(n));
  }
  return out;
}

void suite_extents(CoreHarness& hx) {
  hx.setup_ring(cr::kCtrlIrqErrorEnMask);
  constexpr uint64_t kAlone = 0x7200'0000ull, kAloneSize = 1ull << 20;  // outside window 0
  hx.host().add_region(kAlone, kAloneSize, CoreHarness::Mem::Access::kReadWrite);
  const char* names[4] = {"in", "out", "state in", "state out"};
  const int streams[2][4] = {
      {static_cast<int>(cr::Stream::kXp), static_cast<int>(cr::Stream::kH), static_cast<int>(cr::Stream::kStateIn),
       static_cast<int>(cr::Stream::kStateOut)},
      {static_cast<int>(cr::Stream::kDh), static_cast<int>(cr::Stream::kDelta),
       static_cast<int>(cr::Stream::kStateIn), static_cast<int>(cr::Stream::kStateOut)}};
  int runs = 0;
  for (int n = 0; n < 32; ++n) {
    const int strided = n & 1, bw = (n >> 1) & 1, s = (n >> 2) & 3;
    const engine::Cell cell = (n >> 4) ? engine::Cell::kGru : engine::Cell::kLstm;
    auto cfg = random_config(hx.rng(), hx.params(), cell);
    // Every length below T now and then: the extents and the backward's start
    // follow the longest length, not T.
    cfg.steps += static_cast<int>(hx.rng().range(0, 2));
    HostLayer l = place_layer(hx, cfg, 0, 0x10000);
    // Strides (0: packed): at least a full batch's chunk, plus 0..3 words (delta: 16-byte units).
    uint32_t in_stride = 0, out_stride = 0;
    if (strided) {
      in_stride = uint32_t(cfg.batch * in_words(cfg, bw) * 4 + 4 * hx.rng().range(0, 3));
      out_stride = uint32_t(cfg.batch * out_words(cfg, bw) * 4 + (bw ? 16 : 4) * hx.rng().range(0, 3));
    }
    const std::string ctx = std::string("extents: ") + (bw ? "BACKWARD " : "FORWARD ") + engine::cell_name(cell) +
                            " H" + std::to_string(cfg.hidden) + " B" + std::to_string(cfg.batch) + " T" +
                            std::to_string(cfg.steps) + (strided ? ", strided" : ", packed") + ", " +
                            names[s];
    // Every per-step stream of the command in the layout (fresh buffers
    // in window 0; the one under test moves to kAlone below).
    const int iw = in_words(cfg, bw), ow = out_words(cfg, bw);
    const uint64_t in_ext = per_step_extent(cfg, in_stride, iw);
    const uint64_t out_ext = per_step_extent(cfg, out_stride, ow);
    const auto& in_packed = bw ? l.lc.dh_bits : l.lc.xp;
    const auto in_image = strided ? to_strided(cfg, in_packed, iw, in_stride, in_ext, 0x7fc00001u)
                                      : in_packed;
    const uint64_t ext[4] = {in_ext, out_ext, state_extent(cfg, bw != 0, false), state_extent(cfg, bw != 0, true)};
    uint64_t addr[4];
    for (int k = 0; k < 4; ++k) {
      const uint64_t align = (k == 1 && bw) ? 16 : 4;
      addr[k] = (k == s) ? kAlone + align * uint64_t(hx.rng().range(1, 4)) : hx.alloc(ext[k], align);
    }
    hx.host().write_words(addr[0], in_image);
    hx.host().write_words(addr[2], bw ? l.lc.carry_in : l.lc.state_in_fw);
    const std::vector<uint32_t> poison(ext[1] / 4, 0x7fc0dead);
    hx.host().write_words(addr[1], poison);
    auto d = run_desc(l, bw != 0);
    d.in_addr = addr[0];
    d.out_addr = addr[1];
    d.state_in_addr = addr[2];
    d.state_out_addr = addr[3];
    d.in_stride = in_stride;
    d.out_stride = out_stride;
    const bool write = s == 1 || s == 3;
    // The command (after its LOAD, and for BACKWARD its FORWARD) with the
    // stream under test alone in window 1, `bytes` long.
    const auto submit = [&](uint64_t bytes) {
      hx.set_window(1, addr[s], bytes, !write, write);
      hx.push(load_desc(l));
      if (bw) hx.push(run_desc(l, false));
      hx.push(d);
      hx.ring_doorbell();
    };
    // One word short: refused before anything moves.
    submit(ext[s] - 4);
    expect_fault(hx, {"short window", cr::Error::kWindow,
                      write ? cr::FaultKind::kWindowWrite : cr::FaultKind::kWindowRead, {}, streams[bw][s]},
                 addr[s], ctx + ", window 4 bytes short");
    hx.soft_reset();
    // Exactly the extent: the command runs, bit-exact.
    submit(ext[s]);
    if (!hx.wait_done(hx.tail(), budget(cfg) * 2, ctx)) hx.tb().fail(ctx + ": halted: " + hx.fault().describe());
    const auto out_raw = hx.host().read_words(addr[1], ext[1] / 4);
    const auto& out_expected = bw ? l.bw.delta : l.fw.h;
    const auto out_got = strided ? from_strided(cfg, out_raw, ow, out_stride) : out_raw;
    const auto state_got = hx.host().read_words(addr[3], ext[3] / 4);
    const auto& state_expected = bw ? l.bw.state_out : l.fw.state_out;
    const long at = first_mismatch(out_expected, out_got), at_s = first_mismatch(state_expected, state_got);
    if (at >= 0) hx.tb().fail(ctx + ": per-step output word " + std::to_string(at) + " not bit-exact");
    if (at_s >= 0) hx.tb().fail(ctx + ": final state word " + std::to_string(at_s) + " not bit-exact");
    if (strided) {  // the gaps between the chunks are left alone
      std::vector<uint32_t> expect_raw = to_strided(cfg, out_expected, ow, out_stride, ext[1], 0x7fc0dead);
      const long g = first_mismatch(expect_raw, out_raw);
      if (g >= 0) hx.tb().fail(ctx + ": output word " + std::to_string(g) + " of the strided layout written");
    }
    hx.set_window(1, 0, 0, false, false);
    ++runs;
    std::cout << ctx << ": extent " << ext[s] << " bytes exact, 4 short refused; bit-exact" << std::endl;
  }
  std::cout << "extents: " << runs << " streams" << std::endl;
}

// ------------------------------------------------------------- speed suite
// Speed is a test: LOAD, FORWARD and BACKWARD of a full-size layer alone,
// host reads answered after kHostLat cycles, card memory after kCardLat
// cycles (250 ns at 300 MHz) with random backpressure on every card channel.
// The gate store must move two records per card beat and stall the engine no
// longer than the cycle model says a card of twice kCardLat would cost it
// (the prefetch covers the latency except where steps need more records than
// the record FIFO holds within one latency: the backward's first steps, which
// do no MACs; the card's random backpressure and store_axi's 3 cycles make
// the latency the engine sees longer than kCardLat, hence the factor; a
// prefetch that ran fewer records ahead would stall every step and fail it),
// and the shell may add at most kRoundTrips host round trips
// plus kSlack cycles to the engine's own schedule (the cycle model with
// ideal streams) per command. Two layers per cell: the full-size one, and
// one whose forward the streams bound (H = 5, B = 3, T = 100: 15 units a
// step where the MACs take 25 cycles a sequence; GRU's 45 words a step put
// every other step's Xp chunk off the 16-byte grid): its Xp must come a unit
// a cycle, as the model takes it (a word a cycle would add 2,400-2,700
// cycles). Its records come a unit at a time, further apart than the
// adapter's 8-cycle pairing window, so the two-records-a-beat check is the
// full-size layers'.
void suite_speed(CoreHarness& hx) {
  constexpr int kHostLat = 100, kCardLat = 75, kRoundTrips = 5, kSlack = 150;
  hx.set_fixed_latency(kHostLat, kCardLat, 0.2);
  hx.setup_ring();
  const EngineParams& p = hx.params();
  const engine::EngineTiming t = p.timing(kCardLat);
  std::vector<engine::Config> layers;
  for (engine::Cell cell : {engine::Cell::kLstm, engine::Cell::kGru}) {
    layers.push_back(full_config(p, cell, 12));
    engine::Config small = layers.back();
    small.hidden = std::min(5, p.max_hidden);
    small.batch = std::min(3, p.max_batch);
    small.steps = 100;
    layers.push_back(small);
  }
  for (const engine::Config& cfg : layers) {
    const bool full = cfg.steps == 12;
    HostLayer l = place_layer(hx, cfg, 0, 0x10000);
    const std::string ctx = std::string("speed: ") + engine::cell_name(cfg.cell) + " H" + std::to_string(cfg.hidden) +
                            " B" + std::to_string(cfg.batch) + " T" + std::to_string(cfg.steps);
    const uint64_t bound = kRoundTrips * kHostLat + kSlack;
    struct Phase {
      const char* name;
      cr::Descriptor d;
      uint64_t engine;
      uint64_t latency_cost;  // cycles a card of twice kCardLat costs the engine (model)
    };
    const uint64_t bw_cost =
        engine::backward_cycles(cfg, p.timing(2 * kCardLat)) - engine::backward_cycles(cfg, p.timing(1));
    for (const Phase& ph : {Phase{"LOAD", load_desc(l), engine::load_cycles(cfg, t), 0},
                            Phase{"FORWARD", run_desc(l, false), engine::forward_cycles(cfg, t), 0},
                            Phase{"BACKWARD", run_desc(l, true), engine::backward_cycles(cfg, t), bw_cost}}) {
      const auto a = hx.counters();
      const auto card_a = hx.card().stats();
      const uint64_t cycles = hx.run_timed(ph.d, 10 * ph.engine + 100000, ctx + " " + ph.name);
      const auto b = hx.counters();
      const auto card_b = hx.card().stats();
      // Two records to a beat: FORWARD writes and BACKWARD reads half as many beats as records.
      const uint64_t beats = card_b.write_beats - card_a.write_beats + card_b.read_beats - card_a.read_beats;
      const uint64_t records = static_cast<uint64_t>(cfg.packed_steps()) * cfg.hidden;
      std::cout << ctx << " " << ph.name << ": " << cycles << " cycles, engine alone " << ph.engine
                << ", gate-store stalls " << b.st_store - a.st_store << " (model, twice the card latency: "
                << ph.latency_cost << "), card beats " << beats << std::endl;
      if (full && ph.d.op != cr::Op::kLoad && beats > (records + 1) / 2)
        hx.tb().fail(ctx + " " + ph.name + ": " + std::to_string(beats) + " card beats for " + std::to_string(records) +
                     " records (two to a beat: at most " + std::to_string((records + 1) / 2) + ")");
      if (cycles > ph.engine + bound)
        hx.tb().fail(ctx + " " + ph.name + ": " + std::to_string(cycles) + " cycles, more than the engine's " +
                     std::to_string(ph.engine) + " + " + std::to_string(bound));
      if (b.st_store - a.st_store > ph.latency_cost)
        hx.tb().fail(ctx + " " + ph.name + ": the gate store stalled the engine for " +
                     std::to_string(b.st_store - a.st_store) + " cycles, more than the model's " +
                     std::to_string(ph.latency_cost) + " for a card of twice its latency");
    }
    expect_layer(hx, l, ctx);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return run_main(argc, argv, "tb_core", [](const Options& opt) {
    opt.allow({"suite", "count"});
    const std::string suite = opt.get_string("suite", "layers");
    CoreHarness hx(opt, "tb_core_" + suite);
    // ID first: the driver's identity check.
    if (hx.rd(cr::kRegId) != cr::kIdValue) hx.tb().fail("ID register is not the FARNN magic");
    if (suite == "layers") {
      suite_layers(hx, static_cast<int>(opt.get_int("count", 3)));
    } else if (suite == "faults") {
      suite_faults(hx, static_cast<int>(opt.get_int("count", 1)));
    } else if (suite == "signal") {
      suite_signal(hx);
    } else if (suite == "speed") {
      suite_speed(hx);
    } else if (suite == "extents") {
      suite_extents(hx);
    } else if (suite == "checks") {
      suite_checks(hx);
    } else {
      throw std::invalid_argument("unknown --suite " + suite +
                                  " (layers, faults, signal, speed, extents, checks)");
    }
    std::cout << "tb_core " << suite << ": " << hx.tb().cycle() << " cycles" << std::endl;
  });
}
