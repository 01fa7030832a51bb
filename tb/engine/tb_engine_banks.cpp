// Engine weight-bank testbench: LOADs run on the load port beside FORWARD and
// BACKWARD on the command port, each on its own bank.
//   overlap   FORWARD of layer A on bank 0 while layer B loads into bank 1,
//             BACKWARD of A on bank 0 while layer C loads into bank 1, then
//             FORWARD/BACKWARD of C on bank 1 and A again on bank 0: every
//             output bit-exact, the LOAD and the command measured to overlap;
//   refusals  a LOAD into the bank the running command uses, a command on the
//             bank being loaded (ERR_BANK_BUSY), a bank beyond NumBanks on
//             either port (ERR_BAD_BANK), a FORWARD on an empty bank;
//   records   the sequencer remembers the last FW_RECORDS forwards: two
//             forwards in separate store windows, then both backwards
//             (reverse order) bit-exact; a reload of a forward's bank keeps
//             its record; a FORWARD overlapping a window voids that record
//             (ERR_NO_FORWARD); after a void the newest FW_RECORDS records
//             stay, the oldest goes first;
//   abort     abort_i while both run: both end ERR_ABORTED, bank 0 keeps its
//             weights, the aborted bank is intact (abort before the LOAD
//             wrote) or empty until loaded again; an aborted LOAD of an
//             illegal bank number leaves every bank intact;
//   same cycle  a command and a LOAD offered together: the command first.
// With one bank (P1) only the bank-number refusals apply.
// Options: --seed N, --trace [file].
#include <cstdio>
#include <string>

#include "layer_run.hpp"

namespace farnn::tb {
namespace {

constexpr uint32_t kWatchdog = 20000;

using Layer = ModelLayer;

Layer make_layer(engine::Cell cell, int hidden, const EngineParams& p, uint64_t seed) {
  return model_layer({cell, hidden, std::min(2, p.max_batch), 4, p.num_pe}, seed, 5);
}

EngineCommand command(const Layer& l, Op op, int bank, const EngineParams& p) {
  return layer_command(l.lc, op, p.layout(), bank, kWatchdog);
}

class BankTest {
 public:
  explicit BankTest(EngineHarness& hx) : hx_(hx), p_(hx.params()) {}

  void expect(const CommandResult& r, Status s, const std::string& what) {
    if (r.status != s) {
      hx_.tb().fail(what + ": " + r.describe() + ", expected " + engine::status_name(static_cast<int>(s)));
    }
  }
  void expect_forward(const Layer& l, const CommandResult& r, const std::string& what) {
    farnn::tb::expect_forward(hx_, l, r, what);
  }
  void expect_backward(const Layer& l, const CommandResult& r, const std::string& what) {
    farnn::tb::expect_backward(hx_, l, r, what);
  }
  CommandResult run(const Layer& l, Op op, int bank) { return hx_.run(command(l, op, bank, p_), kBudget); }
  std::pair<CommandResult, CommandResult> both(const Layer& load, int load_bank, const Layer& l, Op op, int bank,
                                               bool run_first = false, int64_t abort_after = -1) {
    EngineCommand lc = command(load, Op::kLoad, load_bank, p_);
    EngineCommand c = command(l, op, bank, p_);
    lc.may_end_early = c.may_end_early = abort_after >= 0;
    return hx_.run_with_load(lc, c, kBudget, run_first, abort_after);
  }

  void overlap(uint64_t seed) {
    Rng rng(seed);
    const int h_max = std::min(p_.max_hidden, 2 * p_.num_pe + 1);
    const Layer a = make_layer(engine::Cell::kLstm, h_max, p_, rng.u64());
    const Layer b = make_layer(engine::Cell::kGru, std::max(1, h_max - 3), p_, rng.u64());
    const Layer c = make_layer(engine::Cell::kLstm, std::max(1, h_max - 1), p_, rng.u64());
    expect(run(a, Op::kLoad, 0), Status::kOk, "LOAD A into bank 0");
    auto [lb, fa] = both(b, 1, a, Op::kForward, 0);
    expect(lb, Status::kOk, "LOAD B into bank 1 beside FORWARD A");
    expect_forward(a, fa, "FORWARD A on bank 0 beside LOAD B");
    const uint64_t overlap_fw = hx_.overlap();
    auto [lc, ba] = both(c, 1, a, Op::kBackward, 0);
    expect(lc, Status::kOk, "LOAD C into bank 1 beside BACKWARD A");
    expect_backward(a, ba, "BACKWARD A on bank 0 beside LOAD C");
    const uint64_t overlap_bw = hx_.overlap();
    if (overlap_fw == 0 || overlap_bw == 0) hx_.tb().fail("the LOAD did not overlap the command");
    expect_forward(c, run(c, Op::kForward, 1), "FORWARD C on bank 1");
    expect_backward(c, run(c, Op::kBackward, 1), "BACKWARD C on bank 1");
    expect_forward(a, run(a, Op::kForward, 0), "FORWARD A on bank 0 after bank 1 was loaded twice");
    expect_backward(a, run(a, Op::kBackward, 0), "BACKWARD A on bank 0");
    std::printf("  overlap: LOAD B (%llu cycles) beside FORWARD A (%llu), LOAD C (%llu) beside BACKWARD A "
                "(%llu); %llu and %llu cycles both busy; every output bit-exact\n",
                static_cast<unsigned long long>(lb.counters.cycles), static_cast<unsigned long long>(fa.counters.cycles),
                static_cast<unsigned long long>(lc.counters.cycles), static_cast<unsigned long long>(ba.counters.cycles),
                static_cast<unsigned long long>(overlap_fw), static_cast<unsigned long long>(overlap_bw));
  }

  void refusals(uint64_t seed) {
    Rng rng(seed);
    const Layer a = make_layer(engine::Cell::kGru, std::min(p_.max_hidden, p_.num_pe + 1), p_, rng.u64());
    // Bank numbers beyond NumBanks, on both ports.
    expect(run(a, Op::kLoad, p_.num_banks), Status::kBadBank, "LOAD into bank NumBanks");
    expect(run(a, Op::kLoad, 255), Status::kBadBank, "LOAD into bank 255");
    expect(run(a, Op::kForward, p_.num_banks), Status::kBadBank, "FORWARD on bank NumBanks");
    std::printf("  refused: bank NumBanks / 255 on the load and command ports (ERR_BAD_BANK)\n");
    if (p_.num_banks < 2) return;
    expect(run(a, Op::kLoad, 0), Status::kOk, "LOAD A into bank 0");
    expect(run(a, Op::kForward, 1), Status::kNoWeights, "FORWARD on the empty bank 1");
    // A LOAD into the bank the running FORWARD uses, and a FORWARD on the bank being loaded.
    auto [l1, f1] = both(a, 0, a, Op::kForward, 0, /*run_first=*/true);
    expect(l1, Status::kBankBusy, "LOAD into the bank of the running FORWARD");
    expect_forward(a, f1, "the FORWARD beside the refused LOAD");
    auto [l2, f2] = both(a, 1, a, Op::kForward, 1);
    expect(l2, Status::kOk, "LOAD A into bank 1");
    expect(f2, Status::kBankBusy, "FORWARD on the bank being loaded");
    std::printf("  refused: LOAD into the running command's bank, command on the bank being loaded "
                "(ERR_BANK_BUSY)\n");
  }

  // A command of layer l whose gate store starts `offset` bytes after the usual base.
  CommandResult run_at(const Layer& l, Op op, int bank, uint64_t offset) {
    EngineCommand c = command(l, op, bank, p_);
    c.store_base += offset;
    return hx_.run(c, kBudget);
  }

  void records(uint64_t seed) {
    if (p_.num_banks < 2) return;
    Rng rng(seed);
    const Layer a = make_layer(engine::Cell::kLstm, std::min(p_.max_hidden, p_.num_pe + 2), p_, rng.u64());
    const Layer b = make_layer(engine::Cell::kGru, std::min(p_.max_hidden, p_.num_pe + 1), p_, rng.u64());
    const uint64_t apart = 1ull << 24;  // far beyond either store
    // A stacked model's schedule: every forward, then the backwards top-down,
    // with a reload of the bank in between (as a deep stack on two banks does).
    expect(run(a, Op::kLoad, 0), Status::kOk, "LOAD A into bank 0");
    expect(run(b, Op::kLoad, 1), Status::kOk, "LOAD B into bank 1");
    expect_forward(a, run_at(a, Op::kForward, 0, 0), "FORWARD A");
    expect_forward(b, run_at(b, Op::kForward, 1, apart), "FORWARD B in its own store window");
    expect(run(a, Op::kLoad, 0), Status::kOk, "LOAD A into bank 0 again");
    expect_backward(b, run_at(b, Op::kBackward, 1, apart), "BACKWARD B (the newer record)");
    expect_backward(a, run_at(a, Op::kBackward, 0, 0), "BACKWARD A after its bank was reloaded");
    // A FORWARD over A's window voids A's record.
    expect_forward(a, run_at(a, Op::kForward, 0, 0), "FORWARD A again");
    expect_forward(b, run_at(b, Op::kForward, 1, 64), "FORWARD B over A's window");
    expect(run_at(a, Op::kBackward, 0, 0), Status::kNoForward, "BACKWARD A after a forward overwrote its store");
    expect_backward(b, run_at(b, Op::kBackward, 1, 64), "BACKWARD B");
    // Age order survives a void: FW_RECORDS forwards in windows 0..R-1 fill
    // the table; a forward again over window 0 voids its record and records
    // anew (the newest); one more, in window R, drops the oldest (window 1),
    // not the newest (window 0).
    const int R = engine::kForwardRecords;
    const auto window = [&](int k) { return 2 * apart + static_cast<uint64_t>(k) * apart; };
    for (int k = 0; k < R; ++k)
      expect_forward(a, run_at(a, Op::kForward, 0, window(k)),
                     "FORWARD A in window " + std::to_string(k));
    expect_forward(a, run_at(a, Op::kForward, 0, window(0)), "FORWARD A in window 0 again");
    expect_forward(a, run_at(a, Op::kForward, 0, window(R)), "FORWARD A in window R");
    expect(run_at(a, Op::kBackward, 0, window(1)), Status::kNoForward,
           "BACKWARD of the oldest record (window 1)");
    expect_backward(a, run_at(a, Op::kBackward, 0, window(0)),
                    "BACKWARD of the record made after a void (window 0)");
    for (int k = 2; k <= R; ++k)
      expect_backward(a, run_at(a, Op::kBackward, 0, window(k)),
                      "BACKWARD A in window " + std::to_string(k));
    std::printf(
        "  records: two forwards then both backwards bit-exact across a reload; an overlapping "
        "FORWARD voids a record (ERR_NO_FORWARD); %d records kept newest first across a void\n",
        R);
  }

  void abort(uint64_t seed) {
    if (p_.num_banks < 2) return;
    Rng rng(seed);
    const Layer a = make_layer(engine::Cell::kLstm, std::min(p_.max_hidden, p_.num_pe + 2), p_, rng.u64());
    const Layer b = make_layer(engine::Cell::kLstm, std::min(p_.max_hidden, p_.num_pe + 2), p_, rng.u64());
    expect(run(a, Op::kLoad, 0), Status::kOk, "LOAD A into bank 0");
    const CommandResult clean = run(a, Op::kLoad, 1);  // how long a LOAD takes here
    expect(clean, Status::kOk, "LOAD A into bank 1");
    int untouched = 0;
    for (int i = 0; i < 12; ++i) {
      // abort_i while a LOAD of B into bank 1 and a FORWARD of A on bank 0 run.
      auto [l, f] = both(b, 1, a, Op::kForward, 0, false, rng.range(0, static_cast<long long>(clean.latency) / 2));
      expect(l, Status::kAborted, "LOAD aborted beside a FORWARD");
      expect(f, Status::kAborted, "FORWARD aborted beside a LOAD");
      // Bank 1 holds A, untouched if the abort came before the LOAD wrote
      // anything; otherwise it is empty. Never a mix.
      const CommandResult f1 = run(a, Op::kForward, 1);
      if (f1.ok()) {
        expect_forward(a, f1, "FORWARD A on bank 1 after an abort before the LOAD wrote");
        ++untouched;
      } else {
        expect(f1, Status::kNoWeights, "FORWARD on the bank whose LOAD was aborted");
      }
      expect_forward(a, run(a, Op::kForward, 0), "FORWARD on bank 0 after the abort");
      expect(run(a, Op::kLoad, 1), Status::kOk, "LOAD A into bank 1 after the abort");
    }
    // A LOAD of a bank beyond NumBanks aborted during its checks changes no bank.
    expect(run(a, Op::kLoad, 1), Status::kOk, "LOAD A into bank 1");
    for (int bank : {p_.num_banks, 255, 256 - p_.num_banks}) {
      EngineCommand c = command(a, Op::kLoad, bank, p_);
      c.may_end_early = true;
      expect(hx_.run(c, kBudget, 0), Status::kAborted, "LOAD of bank " + std::to_string(bank) + " aborted at once");
      expect_forward(a, run(a, Op::kForward, 0), "FORWARD on bank 0 after an aborted LOAD of another bank number");
      expect_forward(a, run(a, Op::kForward, 1), "FORWARD on bank 1 after an aborted LOAD of another bank number");
    }
    std::printf("  abort: 12 aborts of a LOAD beside a FORWARD (%d before it wrote: bank intact, the rest: bank "
                "empty), both ERR_ABORTED; aborted LOADs of illegal bank numbers leave every bank intact\n",
                untouched);
  }

  // A command and a LOAD offered in the same cycle for the same bank: the
  // engine takes the command first, so the LOAD is refused.
  void same_cycle(uint64_t seed) {
    if (p_.num_banks < 2) return;
    Rng rng(seed);
    const Layer a = make_layer(engine::Cell::kGru, std::min(p_.max_hidden, p_.num_pe + 1), p_, rng.u64());
    expect(run(a, Op::kLoad, 0), Status::kOk, "LOAD A into bank 0");
    auto [l, f] = hx_.run_same_cycle(command(a, Op::kLoad, 0, p_), command(a, Op::kForward, 0, p_), kBudget);
    expect(l, Status::kBankBusy, "LOAD offered with a FORWARD on its bank in the same cycle");
    expect_forward(a, f, "FORWARD offered with a LOAD of its bank in the same cycle");
    auto [l1, f1] = hx_.run_same_cycle(command(a, Op::kLoad, 1, p_), command(a, Op::kForward, 0, p_), kBudget);
    expect(l1, Status::kOk, "LOAD of the other bank offered with a FORWARD");
    expect_forward(a, f1, "FORWARD offered with a LOAD of the other bank");
    std::printf("  same cycle: the command port goes first (LOAD of its bank refused, of another bank taken)\n");
  }

 private:
  static constexpr uint64_t kBudget = 2000000;
  EngineHarness& hx_;
  const EngineParams& p_;
};

}  // namespace
}  // namespace farnn::tb

int main(int argc, char** argv) {
  using namespace farnn::tb;
  return run_main(argc, argv, "tb_engine_banks", [](const Options& opt) {
    opt.allow({});
    EngineHarness hx(opt, "tb_engine_banks");
    std::printf("engine %s\n", hx.params().describe().c_str());
    hx.set_stress({.in_idle = 0.1, .out_stall = 0.1, .mem_min_latency = 2, .mem_max_latency = 30});
    Rng rng(opt.seed());
    BankTest t(hx);
    const uint64_t s1 = rng.u64(), s2 = rng.u64(), s3 = rng.u64();
    if (hx.params().num_banks >= 2) t.overlap(s1);
    t.refusals(s2);
    t.records(s2 + 1);
    t.abort(s3);
    t.same_cycle(s3 + 1);
  });
}
