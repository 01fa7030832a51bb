// Engine fault testbench: every way a command can go wrong ends with its named
// status within a bound, and the command after it is bit-exact with the model.
//   framing   each input stream (weights; state, xp in FORWARD; state, dh in
//             BACKWARD) with words missing (early `last`), surplus words, no
//             `last`, and words missing without a `last` (watchdog): the status
//             and stream are named, the surplus is dropped, never left for the
//             next command; the final needed Xp/dh word (no `last`: a surplus
//             follows) held until the watchdog's cycle, one cycle before and
//             one after: the surplus is dropped whichever cause ends it;
//   abort     abort_i at random cycles of LOAD, FORWARD and BACKWARD (every
//             phase, set-up included): ERR_ABORTED within flush_cycles + 2, then
//             the interrupted work redone bit-exactly (a BACKWARD is retried on
//             the surviving gate store, with the aborted one's gate-store
//             responses still arriving);
//   stalls    a gate store that stops answering (FORWARD writes, BACKWARD
//             reads) and permanent backpressure on every output: ERR_TIMEOUT
//             naming the port;
//   reset     rst_i in the middle of a BACKWARD with gate-store reads
//             outstanding, with a memory that obeys the reset contract and one
//             that answers anyway (stray responses are dropped, no hang).
// Options: --suite framing|abort|stalls|reset|all, --aborts N (default 240),
//          --seed N, --trace [file].
#include <cstdio>
#include <string>

#include "layer_run.hpp"

namespace farnn::tb {
namespace {

constexpr uint32_t kWatchdog = 4000;  // cycles without progress before ERR_TIMEOUT

// One small layer, its model results and a cycle budget.
struct Layer : ModelLayer {
  uint64_t budget = 0;
};

Layer make_layer(const engine::Config& cfg, const EngineParams& p, uint64_t seed) {
  return {model_layer(cfg, seed, 4), cycle_budget(cfg, p)};
}

Layer make_layer(EngineHarness& hx, engine::Cell cell, uint64_t seed) {
  const EngineParams& p = hx.params();
  return make_layer({cell, std::min(p.num_pe + 1, p.max_hidden), std::min(2, p.max_batch), 3, p.num_pe}, p, seed);
}

EngineCommand command(const Layer& l, Op op, const engine::LoadLayout& layout) {
  return layer_command(l.lc, op, layout, 0, kWatchdog);
}

void expect_ok(EngineHarness& hx, const CommandResult& r, const std::string& what) {
  if (!r.ok()) hx.tb().fail(what + " ended with " + r.describe());
}

// The work after a fault, checked word for word against the model.
void check_load(EngineHarness& hx, const Layer& l, const std::string& ctx) {
  const CommandResult r = hx.run(command(l, Op::kLoad, hx.params().layout()), l.budget);
  expect_ok(hx, r, ctx + ": LOAD");
  if (r.counters.weight_words != engine::load_words(l.lc.cfg)) {
    hx.tb().fail(ctx + ": LOAD wrote " + std::to_string(r.counters.weight_words) + " weight words");
  }
}
void check_forward(EngineHarness& hx, const Layer& l, const std::string& ctx) {
  expect_forward(hx, l, hx.run(command(l, Op::kForward, hx.params().layout()), l.budget), ctx + " after the fault");
}
void check_backward(EngineHarness& hx, const Layer& l, const std::string& ctx) {
  expect_backward(hx, l, hx.run(command(l, Op::kBackward, hx.params().layout()), l.budget), ctx + " after the fault");
}

void expect_status(EngineHarness& hx, const CommandResult& r, Status status, Unit unit, const std::string& ctx) {
  if (r.status != status || r.unit != unit) {
    CommandResult want;
    want.status = status;
    want.unit = unit;
    hx.tb().fail(ctx + ": ended with " + r.describe() + ", expected " + want.describe());
  }
}

// ------------------------------------------------------------------ framing
struct StreamFault {
  const char* name;
  Op op;
  Unit unit;
  Framing EngineCommand::*framing;
  int stream;  // index into inputs_left
};

// The final word a command needs on Xp (FORWARD) or dh (BACKWARD), sent
// without `last` because surplus words follow, is held `hold` cycles. Taken
// before the watchdog ends the command, it is ERR_TOO_MANY_WORDS; taken in
// the very cycle the watchdog ends it, the command ends ERR_TIMEOUT and the
// surplus must still be dropped up to its `last`; after that cycle the stream
// is closed and nothing of the frame is taken. A search over `hold` finds the
// watchdog's cycle; that cycle and its two neighbours are checked, and every
// probe is followed by a bit-exact command.
void run_final_word_at_watchdog(EngineHarness& hx, const Layer& l, const StreamFault& s) {
  const bool fw = s.op == Op::kForward;
  constexpr uint32_t kDog = 200;
  constexpr int kExtra = 3;
  enum Outcome { kSurplusFirst, kSameCycle, kClosed };
  auto probe = [&](int hold) {
    const std::string ctx = std::string(s.name) + ", final word held " + std::to_string(hold) + " cycles";
    check_load(hx, l, ctx + ", set-up");
    if (!fw) check_forward(hx, l, ctx + ", set-up");
    EngineCommand c = command(l, s.op, hx.params().layout());
    c.may_end_early = true;
    c.watchdog = kDog;
    Framing& f = c.*(s.framing);
    f.extra = kExtra;
    f.hold_final = hold;
    const CommandResult r = hx.run(c, l.budget + 4 * kDog + static_cast<uint64_t>(hold));
    const size_t left = r.inputs_left[s.stream];
    Outcome o;
    if (r.status == Status::kTooManyWords && r.unit == s.unit && left == 0) {
      o = kSurplusFirst;
    } else if (r.status == Status::kTimeout && r.unit == s.unit && left == 0) {
      o = kSameCycle;
    } else if (r.status == Status::kTimeout && r.unit == s.unit && left == 1 + kExtra) {
      o = kClosed;
    } else {
      hx.tb().fail(ctx + ": ended with " + r.describe() + " and " + std::to_string(left) +
                   " words of the frame left (a surplus must be dropped whole or not taken at all)");
    }
    fw ? check_forward(hx, l, ctx) : check_backward(hx, l, ctx);
    return o;
  };
  // The first hold at which the watchdog comes first (outcomes are ordered by
  // hold); every hold the search leaves at `lo` was probed surplus-first.
  int lo = 0, hi = static_cast<int>(l.budget + 4 * kDog);
  if (probe(lo) != kSurplusFirst) hx.tb().fail(std::string(s.name) + ": the unheld surplus was not ERR_TOO_MANY_WORDS");
  Outcome at_hi = probe(hi);
  if (at_hi != kClosed) hx.tb().fail(std::string(s.name) + ": a word held past the watchdog was taken");
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    const Outcome o = probe(mid);
    if (o == kSurplusFirst) {
      lo = mid;
    } else {
      hi = mid;
      at_hi = o;
    }
  }
  if (at_hi != kSameCycle || probe(hi + 1) != kClosed) {
    hx.tb().fail(std::string(s.name) + ": around a hold of " + std::to_string(hi) +
                 " cycles the outcomes are not surplus first / same cycle / closed");
  }
  std::printf("  framing: %s final word held %d cycles, taken in the watchdog's cycle: ERR_TIMEOUT, "
              "%d surplus words dropped; %d earlier: ERR_TOO_MANY_WORDS; %d later: not taken\n",
              s.name, hi, kExtra, lo, hi + 1);
}

void run_framing(EngineHarness& hx, uint64_t seed) {
  Rng rng(seed);
  const StreamFault streams[] = {
      {"weight (LOAD)", Op::kLoad, Unit::kWeight, &EngineCommand::f_weights, 0},
      {"state (FORWARD)", Op::kForward, Unit::kStateIn, &EngineCommand::f_state, 1},
      {"xp (FORWARD)", Op::kForward, Unit::kXp, &EngineCommand::f_xp, 2},
      {"state (BACKWARD)", Op::kBackward, Unit::kStateIn, &EngineCommand::f_state, 1},
      {"dh (BACKWARD)", Op::kBackward, Unit::kDh, &EngineCommand::f_dh, 3},
  };
  int n = 0;
  for (engine::Cell cell : {engine::Cell::kLstm, engine::Cell::kGru}) {
    const Layer l = make_layer(hx, cell, rng.u64());
    for (const StreamFault& s : streams) {
      for (int mode = 0; mode < 4; ++mode) {
        const std::string ctx = std::string(engine::cell_name(cell)) + " " + s.name;
        // Prerequisites of the faulty command.
        if (s.op != Op::kLoad) check_load(hx, l, ctx + " set-up");
        if (s.op == Op::kBackward) check_forward(hx, l, ctx + " set-up");
        EngineCommand c = command(l, s.op, hx.params().layout());
        c.may_end_early = true;
        const size_t words = s.op == Op::kLoad ? c.weights.size() / hx.params().weight_lanes  // beats
                             : s.unit == Unit::kStateIn ? c.state_in.size()
                             : s.unit == Unit::kXp      ? hx.xp_beats(c)
                                                        : c.dh.size();
        Framing& f = c.*(s.framing);
        Status want;
        Unit want_unit = s.unit;
        std::string what;
        if (mode == 0) {  // words missing, `last` early
          f.drop = static_cast<int>(rng.range(1, static_cast<long long>(words) - 1));
          want = Status::kTooFewWords;
          what = "missing " + std::to_string(f.drop) + " words";
        } else if (mode == 1) {  // surplus words, `last` on the final one
          f.extra = static_cast<int>(rng.range(1, 40));
          want = Status::kTooManyWords;
          what = std::to_string(f.extra) + " surplus words";
        } else if (mode == 2) {  // right count, no `last`: the surplus drop never ends
          f.no_last = true;
          want = Status::kTimeout;
          what = "no last";
        } else {  // words missing and no `last`: the command waits for them
          f.drop = static_cast<int>(rng.range(1, static_cast<long long>(words) - 1));
          f.no_last = true;
          want = Status::kTimeout;
          what = "missing " + std::to_string(f.drop) + " words, no last";
        }
        const CommandResult r = hx.run(c, l.budget + 4 * kWatchdog);
        expect_status(hx, r, want, want_unit, ctx + " with " + what);
        if (mode == 1 && r.inputs_left[s.stream] != 0) {
          hx.tb().fail(ctx + ": " + std::to_string(r.inputs_left[s.stream]) + " surplus words left behind");
        }
        // The engine took the whole frame (or waited for more): nothing of it
        // can reach the next command. Now the work redone, bit-exact.
        if (s.op == Op::kLoad) check_load(hx, l, ctx);
        if (s.op != Op::kBackward) check_forward(hx, l, ctx);
        check_backward(hx, l, ctx);
        std::printf("  %-5s %-17s %-28s -> %s\n", engine::cell_name(cell), s.name, what.c_str(),
                    r.describe().c_str());
        ++n;
      }
    }
  }
  std::printf("  framing: %d faults, each named and followed by a bit-exact command\n", n);

  // abort_i while a framing error is being handled (the flush, then the
  // surplus drop): the command must still end, although the surplus has no
  // `last` and the watchdog is off.
  const Layer l = make_layer(hx, engine::Cell::kLstm, rng.u64());
  check_load(hx, l, "abort during a framing flush, set-up");
  EngineCommand probe = command(l, Op::kForward, hx.params().layout());
  probe.f_xp.extra = 5;
  probe.f_xp.no_last = true;
  probe.may_end_early = true;
  probe.watchdog = 300;
  const CommandResult timed = hx.run(probe, l.budget + 4000);
  expect_status(hx, timed, Status::kTimeout, Unit::kXp, "surplus without last");
  // The error came about (watchdog + flush) before the end; abort around it.
  const uint64_t flush = abort_bound(hx.params());
  const int64_t error_at = static_cast<int64_t>(timed.latency) - 300 - static_cast<int64_t>(flush);
  int ended = 0;
  for (int64_t at = error_at - 6; at <= error_at + static_cast<int64_t>(flush) + 6; ++at) {
    check_load(hx, l, "abort during a framing flush, set-up");
    EngineCommand c = probe;
    c.watchdog = 0;
    const CommandResult r = hx.run(c, l.budget + 4000, at);
    if (r.status != Status::kAborted && r.status != Status::kTooManyWords) {
      hx.tb().fail("abort during a framing flush at " + std::to_string(at) + ": " + r.describe());
    }
    ++ended;
    check_forward(hx, l, "after an abort during a framing flush");
  }
  std::printf("  framing: abort_i at %d cycles around and inside the flush of a framing error: every command "
              "ended (surplus without last, watchdog off)\n", ended);
  run_final_word_at_watchdog(hx, l, streams[2]);  // xp (FORWARD)
  run_final_word_at_watchdog(hx, l, streams[4]);  // dh (BACKWARD)
}

// -------------------------------------------------------------------- abort
void run_aborts(EngineHarness& hx, uint64_t seed, int count) {
  Rng rng(seed);
  const uint64_t bound = abort_bound(hx.params());
  // Gate-store responses are outstanding when the abort comes.
  hx.set_stress({.in_idle = 0.1, .out_stall = 0.2, .mem_req_stall = 0.2, .mem_rsp_stall = 0.2,
                 .mem_min_latency = 5, .mem_max_latency = 60});
  const Layer layers[2] = {make_layer(hx, engine::Cell::kLstm, rng.u64()),
                           make_layer(hx, engine::Cell::kGru, rng.u64())};
  // How long each command takes here, to place aborts across all of it.
  uint64_t duration[2][3];
  for (int k = 0; k < 2; ++k) {
    for (Op op : {Op::kLoad, Op::kForward, Op::kBackward}) {
      const CommandResult r = hx.run(command(layers[k], op, hx.params().layout()), layers[k].budget);
      expect_ok(hx, r, "abort suite set-up");
      duration[k][static_cast<int>(op)] = r.latency;
    }
  }
  int aborted[3] = {}, finished = 0;
  uint64_t worst = 0;
  for (int i = 0; i < count; ++i) {
    const int k = static_cast<int>(rng.range(0, 1));
    const Layer& l = layers[k];
    const Op op = static_cast<Op>(i % 3);
    const std::string ctx = "abort #" + std::to_string(i) + " " + engine::cell_name(l.lc.cfg.cell) + " " +
                            engine::opcode_name(static_cast<int>(op));
    // The command must be legal: weights loaded (and a forward for BACKWARD).
    if (op != Op::kLoad) check_load(hx, l, ctx + " set-up");
    if (op == Op::kBackward) check_forward(hx, l, ctx + " set-up");
    const int64_t at = rng.range(0, static_cast<long long>(duration[k][static_cast<int>(op)]) + 10);
    EngineCommand c = command(l, op, hx.params().layout());
    const CommandResult r = hx.run(c, l.budget, at);
    if (r.ok()) {  // the abort came with or after done (random stalls made it quicker)
      if (r.abort_to_done > 1) hx.tb().fail(ctx + ": abort_i came before done and was ignored");
      ++finished;
    } else {
      expect_status(hx, r, Status::kAborted, Unit::kNone, ctx + " at cycle " + std::to_string(at));
      const uint64_t limit = op == Op::kLoad ? kLoadAbortBound : bound;
      if (r.abort_to_done > limit) {
        hx.tb().fail(ctx + ": done " + std::to_string(r.abort_to_done) + " cycles after abort, bound " +
                     std::to_string(limit));
      }
      worst = std::max(worst, r.abort_to_done);
      ++aborted[static_cast<int>(op)];
    }
    // Redo what was interrupted; an aborted BACKWARD is retried on the
    // gate store its forward left (no new FORWARD).
    if (op == Op::kLoad) check_load(hx, l, ctx);
    if (op != Op::kBackward) check_forward(hx, l, ctx);
    check_backward(hx, l, ctx);
  }
  hx.set_stress(Stress{});
  std::printf("  abort: %d random abort points (LOAD %d, FORWARD %d, BACKWARD %d aborted, %d after done); "
              "done at most %llu cycles after abort (bound %llu, LOAD 5); every following command bit-exact\n",
              count, aborted[0], aborted[1], aborted[2], finished, static_cast<unsigned long long>(worst),
              static_cast<unsigned long long>(bound));
}

// ------------------------------------------------------------------- stalls
void run_stalls(EngineHarness& hx, uint64_t seed) {
  Rng rng(seed);
  for (engine::Cell cell : {engine::Cell::kLstm, engine::Cell::kGru}) {
    const Layer l = make_layer(hx, cell, rng.u64());
    const std::string name = engine::cell_name(cell);
    check_load(hx, l, name + " stalls set-up");

    // A gate store that stops answering: FORWARD's writes, then BACKWARD's reads.
    hx.memory().set_mute(true);
    EngineCommand fw = command(l, Op::kForward, hx.params().layout());
    fw.may_end_early = true;
    CommandResult r = hx.run(fw, l.budget + 4 * kWatchdog);
    expect_status(hx, r, Status::kTimeout, Unit::kGateStore, name + " FORWARD, silent gate store");
    std::printf("  %-5s FORWARD, gate store never answers   -> %s\n", name.c_str(), r.describe().c_str());
    hx.memory().set_mute(false);  // the late write responses must be dropped
    check_forward(hx, l, name + " after a silent gate store");
    hx.memory().set_mute(true);
    EngineCommand bw = command(l, Op::kBackward, hx.params().layout());
    bw.may_end_early = true;
    r = hx.run(bw, l.budget + 4 * kWatchdog);
    expect_status(hx, r, Status::kTimeout, Unit::kGateStore, name + " BACKWARD, silent gate store");
    std::printf("  %-5s BACKWARD, gate store never answers  -> %s\n", name.c_str(), r.describe().c_str());
    hx.memory().set_mute(false);  // the late read responses must be dropped
    check_backward(hx, l, name + " after a silent gate store");

    // More writes than the outstanding-request counter holds, to a silent
    // store: the engine stops issuing at the counter's maximum (it must not
    // wrap and report the FORWARD done) and the watchdog names the store.
    {
      const EngineParams& p = hx.params();
      int bits = 0;
      while ((1 << bits) < p.fifo_depth() + 1) ++bits;
      const int max_outstanding = (1 << (bits + 2)) - 1;
      const int h = std::min(p.max_hidden, 8), b = p.max_batch;
      const int steps = (max_outstanding + 1) / (b * h) + 2;
      const Layer bl = make_layer({cell, h, b, steps, p.num_pe}, p, rng.u64());
      check_load(hx, bl, name + " many writes set-up");
      hx.memory().set_mute(true);
      EngineCommand c = command(bl, Op::kForward, p.layout());
      c.may_end_early = true;
      r = hx.run(c, bl.budget + 4 * kWatchdog);
      expect_status(hx, r, Status::kTimeout, Unit::kGateStore, name + " FORWARD, silent store, many writes");
      const size_t held = hx.memory().outstanding();
      if (held > static_cast<size_t>(max_outstanding)) {
        hx.tb().fail(name + ": " + std::to_string(held) + " requests outstanding, the counter holds " +
                     std::to_string(max_outstanding));
      }
      hx.memory().set_mute(false);
      check_forward(hx, bl, name + " after many writes to a silent store");
      std::printf("  %-5s FORWARD of %d records, store silent     -> %s with %zu requests outstanding (max %d)\n",
                  name.c_str(), bl.lc.cfg.packed_steps() * h, r.describe().c_str(), held, max_outstanding);
    }
    check_load(hx, l, name + " backpressure set-up");

    // Permanent backpressure on every output.
    struct Blocked {
      Op op;
      Unit unit;
    };
    for (const Blocked& b : {Blocked{Op::kForward, Unit::kH}, Blocked{Op::kForward, Unit::kStateOut},
                             Blocked{Op::kBackward, Unit::kDelta}, Blocked{Op::kBackward, Unit::kStateOut}}) {
      if (b.op == Op::kBackward) check_forward(hx, l, name + " backpressure set-up");
      hx.set_output_stall(b.unit, 1.0);
      EngineCommand c = command(l, b.op, hx.params().layout());
      c.may_end_early = true;
      r = hx.run(c, l.budget + 4 * kWatchdog);
      hx.set_output_stall(b.unit, 0.0);
      const std::string ctx = name + " " + engine::opcode_name(static_cast<int>(b.op)) + ", " +
                              engine::unit_name(static_cast<int>(b.unit)) + " blocked";
      expect_status(hx, r, Status::kTimeout, b.unit, ctx);
      std::printf("  %-5s %-36s -> %s\n", name.c_str(), (ctx.substr(name.size() + 1)).c_str(),
                  r.describe().c_str());
      if (b.op == Op::kForward) check_forward(hx, l, ctx);
      check_backward(hx, l, ctx);
    }
  }
}

// -------------------------------------------------------------------- reset
void run_resets(EngineHarness& hx, uint64_t seed) {
  Rng rng(seed);
  hx.set_stress({.mem_min_latency = 20, .mem_max_latency = 80});
  for (bool keep : {false, true}) {
    for (engine::Cell cell : {engine::Cell::kLstm, engine::Cell::kGru}) {
      const Layer l = make_layer(hx, cell, rng.u64());
      const std::string ctx = std::string(engine::cell_name(cell)) +
                              (keep ? " reset, memory answers anyway" : " reset, memory obeys the contract");
      check_load(hx, l, ctx + " set-up");
      check_forward(hx, l, ctx + " set-up");
      // Reset once the backward has reads in flight.
      EngineCommand bw = command(l, Op::kBackward, hx.params().layout());
      hx.memory().set_keep_on_reset(keep);
      const CommandResult r = hx.run(bw, l.budget, -1, 60);
      const size_t in_flight = hx.in_flight_at_reset();
      hx.memory().set_keep_on_reset(false);
      if (!r.was_reset) hx.tb().fail(ctx + ": the backward finished before the reset");
      if (in_flight == 0) hx.tb().fail(ctx + ": no gate-store read was in flight at the reset");
      hx.tb().run_until([&] { return hx.memory().idle(); }, 10000, "the stray responses");
      // Everything is gone after a reset: load, forward and backward again.
      check_load(hx, l, ctx);
      check_forward(hx, l, ctx);
      check_backward(hx, l, ctx);
      std::printf("  %-48s (%zu responses in flight): next LOAD/FORWARD/BACKWARD bit-exact\n", ctx.c_str(),
                  in_flight);
    }
  }
  hx.set_stress(Stress{});
}

}  // namespace
}  // namespace farnn::tb

int main(int argc, char** argv) {
  using namespace farnn::tb;
  return run_main(argc, argv, "tb_engine_faults", [](const Options& opt) {
    opt.allow({"suite", "aborts"});
    EngineHarness hx(opt, "tb_engine_faults");
    std::printf("engine %s\n", hx.params().describe().c_str());
    const std::string suite = opt.get_string("suite", "all");
    if (suite != "all" && suite != "framing" && suite != "abort" && suite != "stalls" && suite != "reset") {
      throw std::invalid_argument("--suite must be framing, abort, stalls, reset or all (got '" + suite + "')");
    }
    Rng rng(opt.seed());
    const uint64_t s1 = rng.u64(), s2 = rng.u64(), s3 = rng.u64(), s4 = rng.u64();
    if (suite == "all" || suite == "framing") run_framing(hx, s1);
    if (suite == "all" || suite == "abort") run_aborts(hx, s2, static_cast<int>(opt.get_int("aborts", 240)));
    if (suite == "all" || suite == "stalls") run_stalls(hx, s3);
    if (suite == "all" || suite == "reset") run_resets(hx, s4);
  });
}
