// Drives the Verilated recurrent engine (Vengine): the command port, every
// stream (random idle cycles on inputs, random backpressure on outputs, a
// handshake monitor on each output) and the gate-store memory (random latency
// and backpressure). Input streams are framed: `last` on the final word of
// each command's portion, or a deliberately wrong framing for fault tests.
// Output streams are checked to carry `last` on exactly their final word.
// Used by the engine testbenches, `make sim` and the benchmark.
// The engine's parameters come from the FARNN_PARAM_* macros of the build.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "Vengine.h"
#include "farnn/engine_abi.hpp"
#include "engine_params.hpp"
#include "farnn/engine_model.hpp"
#include "memory_model.hpp"
#include "options.hpp"
#include "stream.hpp"
#include "testbench.hpp"

namespace farnn::tb {


using Op = engine::Opcode;
using engine::Status;
using engine::Unit;

// Cycles from abort_i to done (as run() measures them) that the engine
// promises: engine_pkg::flush_cycles + 2 for FORWARD/BACKWARD, 5 for LOAD.
inline uint64_t abort_bound(const EngineParams& p) {
  return static_cast<uint64_t>(p.mul_latency + p.add_latency + 4) + 2;
}
constexpr uint64_t kLoadAbortBound = 5;

// How an input stream's frame is sent: `drop` words (weight stream: beats)
// fewer than the command needs, `extra` surplus ones, or no `last` at all;
// `hold_final` cycles of silence before the final word the command needs
// (state, Xp and dh streams).
struct Framing {
  int drop = 0;
  int extra = 0;
  bool no_last = false;
  int hold_final = 0;
};

struct Stress {
  double in_idle = 0.0;   // probability of an idle cycle between input words
  double out_stall = 0.0; // probability of backpressure on an output
  double mem_req_stall = 0.0;
  double mem_rsp_stall = 0.0;
  int mem_min_latency = 1;
  int mem_max_latency = 1;
};

struct EngineCommand {
  Op op = Op::kLoad;  // LOAD goes to the load port, the others to the command port
  int cell = 0;       // 0 LSTM, 1 GRU (other values are illegal)
  int hidden = 1, batch = 1, steps = 1;
  int bank = 0;
  std::vector<int> lengths;  // per slot; empty: every sequence runs `steps`
  uint64_t store_base = 0x1000, store_size = 0;
  uint32_t watchdog = 0;                            // cycles without progress; 0: off
  std::vector<uint32_t> weights, state_in, xp, dh;  // input streams (weights: beats, flat)
  Framing f_weights, f_state, f_xp, f_dh;
  bool may_end_early = false;  // outputs may be withdrawn (abort, timeout, framing)
};

struct Counters {
  uint64_t cycles = 0, macs = 0, stall_input = 0, stall_output = 0, stall_dep = 0,
           stall_store = 0, weight_words = 0, nonfinite_units = 0;
};

// One beat of the weight stream: WeightLanes words and `last`.
struct Beat {
  std::vector<uint32_t> words;
  bool last = false;
  bool operator==(const Beat& o) const { return words == o.words && last == o.last; }
};

// Drives a Verilator port of any width from 32-bit words (word 0 = bits 31:0).
inline void set_words(uint32_t& port, const std::vector<uint32_t>& w) { port = w.at(0); }
inline void set_words(uint64_t& port, const std::vector<uint32_t>& w) {
  port = w.at(0) | (w.size() > 1 ? static_cast<uint64_t>(w[1]) << 32 : 0);
}
inline void set_words(uint16_t& port, const std::vector<uint32_t>& w) { port = static_cast<uint16_t>(w.at(0)); }
template <std::size_t N>
void set_words(VlWide<N>& port, const std::vector<uint32_t>& w) {
  for (std::size_t i = 0; i < N; ++i) port[i] = i < w.size() ? w[i] : 0;
}

// Latches the done pulses of the command and load ports.
class DonePulses : public Component {
 public:
  DonePulses(std::function<bool()> run_done, std::function<bool()> load_done)
      : run_done_(std::move(run_done)), load_done_(std::move(load_done)) {}
  void sample() override {
    run_ |= run_done_();
    load_ |= load_done_();
  }
  void on_reset() override { run_ = load_ = false; }
  bool take(bool load) {
    bool& f = load ? load_ : run_;
    const bool v = f;
    f = false;
    return v;
  }
  void clear() { run_ = load_ = false; }

 private:
  std::function<bool()> run_done_, load_done_;
  bool run_ = false, load_ = false;
};

struct CommandResult {
  Status status = Status::kOk;
  Unit unit = Unit::kNone;
  Counters counters;
  uint64_t latency = 0;        // cycles from acceptance to done
  uint64_t abort_to_done = 0;  // cycles from abort_i to done (when aborted)
  std::vector<uint32_t> h, delta, state_out;
  size_t inputs_left[4] = {};  // weight, state, xp, dh beats not taken by the engine
  bool was_reset = false;      // the command was cut short by a reset
  bool ok() const { return status == Status::kOk; }
  std::string describe() const {
    return engine::status_name(static_cast<int>(status)) +
           (unit == Unit::kNone ? "" : " on the " + engine::unit_name(static_cast<int>(unit)));
  }
};

class EngineHarness {
 public:
  EngineHarness(const Options& opt, const std::string& name)
      : rng_(opt.seed() ^ 0x9e3779b97f4a7c15ull),
        tb_(opt, name),
        weight_(rng_, 0.0,
                [this](bool v, const Beat& b) {
                  dut().weight_valid_i = v;
                  if (v) set_words(dut().weight_data_i, b.words);
                  dut().weight_last_i = b.last;
                },
                [this] { return dut().weight_ready_o != 0; }),
        state_in_(rng_, 0.0,
                  [this](bool v, const uint64_t& d) {
                    dut().state_in_valid_i = v;
                    dut().state_in_data_i = static_cast<uint32_t>(d);
                    dut().state_in_last_i = (d >> 32) & 1;
                  },
                  [this] { return dut().state_in_ready_o != 0; }),
        xp_(rng_, 0.0,
            [this](bool v, const Beat& b) {
              dut().xp_valid_i = v;
              if (v) set_words(dut().xp_data_i, b.words);
              dut().xp_last_i = b.last;
            },
            [this] { return dut().xp_ready_o != 0; }),
        dh_(rng_, 0.0,
            [this](bool v, const uint64_t& d) {
              dut().dh_valid_i = v;
              dut().dh_data_i = static_cast<uint32_t>(d);
              dut().dh_last_i = (d >> 32) & 1;
            },
            [this] { return dut().dh_ready_o != 0; }),
        h_sink_(rng_, 0.0, [this](bool r) { dut().h_ready_i = r; }, [this] { return dut().h_valid_o != 0; },
                [this] { return word(dut().h_data_o, dut().h_last_o); }),
        delta_sink_(rng_, 0.0, [this](bool r) { dut().delta_ready_i = r; },
                    [this] { return dut().delta_valid_o != 0; }, [this] { return delta_beat(); }),
        state_sink_(rng_, 0.0, [this](bool r) { dut().state_out_ready_i = r; },
                    [this] { return dut().state_out_valid_o != 0; },
                    [this] { return word(dut().state_out_data_o, dut().state_out_last_o); }),
        h_mon_("h stream", [this] { return dut().h_valid_o != 0; }, [this] { return dut().h_ready_i != 0; },
               [this] { return word(dut().h_data_o, dut().h_last_o); }, fail_fn()),
        delta_mon_("delta stream", [this] { return dut().delta_valid_o != 0; },
                   [this] { return dut().delta_ready_i != 0; }, [this] { return delta_beat(); }, fail_fn()),
        state_mon_("state stream", [this] { return dut().state_out_valid_o != 0; },
                   [this] { return dut().state_out_ready_i != 0; },
                   [this] { return word(dut().state_out_data_o, dut().state_out_last_o); }, fail_fn()),
        req_mon_("memory requests", [this] { return dut().mem_req_valid_o != 0; },
                 [this] { return dut().mem_req_ready_i != 0; }, [this] { return request_key(); }, fail_fn()),
        memory_(rng_, memory_ports(), fail_fn()),
        done_([this] { return dut().done_o != 0; }, [this] { return dut().load_done_o != 0; }) {
    for (Component* c : std::initializer_list<Component*>{&weight_, &state_in_, &xp_, &dh_, &h_sink_,
                                                           &delta_sink_, &state_sink_, &memory_, &h_mon_,
                                                           &delta_mon_, &state_mon_, &req_mon_, &done_}) {
      tb_.add(*c);
    }
    dut().cmd_valid_i = 0;
    dut().load_valid_i = 0;
    dut().abort_i = 0;
    tb_.reset(10);
  }

  Vengine& dut() { return tb_.dut(); }
  Testbench<Vengine>& tb() { return tb_; }
  MemoryModel<8>& memory() { return memory_; }
  Rng& rng() { return rng_; }
  const EngineParams& params() const { return params_; }
  // Beats of a command's Xp stream: a word a beat, or a unit a beat.
  size_t xp_beats(const EngineCommand& c) const {
    return params_.xp_words == 1 ? c.xp.size() : c.xp.size() / static_cast<size_t>(engine::gates(static_cast<engine::Cell>(c.cell & 1)));
  }

  void set_stress(const Stress& s) {
    for (auto* src : {&weight_, &xp_}) src->set_idle_prob(s.in_idle);
    for (auto* src : {&state_in_, &dh_}) src->set_idle_prob(s.in_idle);
    for (auto* snk : {&h_sink_, &state_sink_}) snk->set_stall_prob(s.out_stall);
    delta_sink_.set_stall_prob(s.out_stall);
    memory_.set_stress(s.mem_req_stall, s.mem_rsp_stall, s.mem_min_latency, s.mem_max_latency);
  }
  // Backpressure on one output (h, delta, state): permanent when p is 1.
  void set_output_stall(Unit u, double p) {
    if (u == Unit::kDelta) {
      delta_sink_.set_stall_prob(p);
    } else {
      (u == Unit::kH ? h_sink_ : state_sink_).set_stall_prob(p);
    }
  }

  // Issues one command with its input streams and waits (at most max_cycles)
  // for done; abort_after >= 0 pulses abort_i that many cycles after the
  // command was accepted; reset_after >= 0 resets the engine then instead
  // (the result says was_reset). Inputs the engine does not take (an error)
  // are withdrawn afterwards, as a producer whose command failed would.
  CommandResult run(const EngineCommand& c, uint64_t max_cycles, int64_t abort_after = -1,
                    int64_t reset_after = -1) {
    prepare({&c}, abort_after >= 0 || reset_after >= 0);
    issue(c);
    const uint64_t start = tb_.cycle();
    uint64_t abort_cycle = 0;
    bool done = false, was_reset = false;
    while (!done) {
      if (tb_.cycle() - start > max_cycles) timeout(c, max_cycles);
      if (reset_after >= 0 && tb_.cycle() - start == static_cast<uint64_t>(reset_after)) {
        in_flight_at_reset_ = memory_.outstanding();
        tb_.reset(4);
        was_reset = true;
        break;
      }
      const bool abort_now = abort_after >= 0 && tb_.cycle() - start == static_cast<uint64_t>(abort_after);
      dut().abort_i = abort_now;
      if (abort_now) abort_cycle = tb_.cycle();
      tb_.tick();
      done = done_.take(c.op == Op::kLoad);
    }
    dut().abort_i = 0;
    CommandResult r = finish(c, start, was_reset);
    if (abort_cycle != 0) r.abort_to_done = r.latency - (abort_cycle - start);
    settle({&r}, {&c});
    return r;
  }

  // A LOAD on the load port and a FORWARD or BACKWARD on the command port at
  // the same time (the LOAD issued first unless run_first); waits for both.
  // abort_after >= 0 pulses abort_i that many cycles after the second issue.
  std::pair<CommandResult, CommandResult> run_with_load(const EngineCommand& load, const EngineCommand& c,
                                                        uint64_t max_cycles, bool run_first = false,
                                                        int64_t abort_after = -1) {
    prepare({&load, &c}, abort_after >= 0);
    issue(run_first ? c : load);
    const uint64_t first_start = tb_.cycle();
    issue(run_first ? load : c);
    const uint64_t second_start = tb_.cycle();
    const uint64_t load_start = run_first ? second_start : first_start;
    const uint64_t start = run_first ? first_start : second_start;
    bool load_done = false, done = false;
    CommandResult rl, r;
    overlap_ = 0;
    while (!load_done || !done) {
      if (tb_.cycle() - first_start > max_cycles) timeout(load_done ? c : load, max_cycles);
      dut().abort_i = abort_after >= 0 && tb_.cycle() - second_start == static_cast<uint64_t>(abort_after);
      overlap_ += dut().load_busy_o && dut().busy_o;
      tb_.tick();
      if (!load_done && done_.take(true)) {
        load_done = true;
        rl = finish(load, load_start, false);
      }
      if (!done && done_.take(false)) {
        done = true;
        r = finish(c, start, false);
      }
    }
    dut().abort_i = 0;
    settle({&rl, &r}, {&load, &c});
    return {rl, r};
  }
  // A LOAD and a FORWARD/BACKWARD offered on their ports in the same cycle
  // (each held until taken); waits for both.
  std::pair<CommandResult, CommandResult> run_same_cycle(const EngineCommand& load, const EngineCommand& c,
                                                         uint64_t max_cycles) {
    prepare({&load, &c}, false);
    auto& d = dut();
    drive_load_port(load);
    drive_command_port(c);
    d.load_valid_i = 1;
    d.cmd_valid_i = 1;
    const uint64_t start = tb_.cycle();
    uint64_t load_start = 0, run_start = 0;
    bool load_taken = false, run_taken = false, load_done = false, done = false;
    CommandResult rl, r;
    while (!load_done || !done) {
      if (tb_.cycle() - start > max_cycles) timeout(load_done ? c : load, max_cycles);
      d.eval();  // the readies for the valids just driven
      const bool take_load = d.load_valid_i && d.load_ready_o, take_run = d.cmd_valid_i && d.cmd_ready_o;
      if (take_load && take_run) tb_.fail("both command ports accepted in one cycle");
      tb_.tick();
      if (take_load) {
        d.load_valid_i = 0;
        load_taken = true;
        load_start = tb_.cycle();
      }
      if (take_run) {
        d.cmd_valid_i = 0;
        run_taken = true;
        run_start = tb_.cycle();
      }
      if (load_taken && !load_done && done_.take(true)) {
        load_done = true;
        rl = finish(load, load_start, false);
      }
      if (run_taken && !done && done_.take(false)) {
        done = true;
        r = finish(c, run_start, false);
      }
    }
    settle({&rl, &r}, {&load, &c});
    return {rl, r};
  }

  // Cycles in which the last run_with_load had both the loader and the
  // sequencer busy.
  uint64_t overlap() const { return overlap_; }

  // Gate-store requests in flight when run() last reset the engine.
  size_t in_flight_at_reset() const { return in_flight_at_reset_; }

 private:
  std::function<void(const std::string&)> fail_fn() {
    return [this](const std::string& m) { tb_.fail(m); };
  }

  // Frames every command's input streams and clears the output sinks.
  void prepare(std::initializer_list<const EngineCommand*> cmds, bool lenient_always) {
    bool lenient = lenient_always;
    for (const EngineCommand* c : cmds) {
      push_weights(c->weights, c->f_weights);
      push_frame(state_in_, c->state_in, c->f_state);
      push_xp(*c);
      push_frame(dh_, c->dh, c->f_dh);
      lenient = lenient || c->may_end_early;
      if (c->op != Op::kLoad) memory_.set_window(c->store_base, c->store_size);
    }
    h_sink_.received().clear();
    delta_sink_.received().clear();
    state_sink_.received().clear();
    for (auto* m : {&h_mon_, &state_mon_}) m->set_allow_withdraw(lenient);
    delta_mon_.set_allow_withdraw(lenient);
    req_mon_.set_allow_withdraw(lenient);
    done_.clear();
  }

  // Presents a command on its port (after 0..3 idle cycles) until accepted.
  void issue(const EngineCommand& c) {
    auto& d = dut();
    const int idle = static_cast<int>(rng_.range(0, 3));  // the command port is a handshake too
    for (int i = 0; i < idle; ++i) tb_.tick();
    if (c.op == Op::kLoad) {
      drive_load_port(c);
      d.load_valid_i = 1;
      tb_.run_until([&] { return d.load_ready_o != 0; }, 1000, "LOAD acceptance");
      tb_.tick();  // accepted at this edge
      d.load_valid_i = 0;
      return;
    }
    drive_command_port(c);
    d.cmd_valid_i = 1;
    tb_.run_until([&] { return d.cmd_ready_o != 0; }, 1000, "command acceptance");
    tb_.tick();  // accepted at this edge
    d.cmd_valid_i = 0;
  }

  void drive_load_port(const EngineCommand& c) {
    auto& d = dut();
    d.load_bank_i = static_cast<uint8_t>(c.bank);
    d.load_cell_i = static_cast<uint8_t>(c.cell);
    d.load_hidden_i = static_cast<uint16_t>(c.hidden);
    d.load_watchdog_i = c.watchdog;
  }

  void drive_command_port(const EngineCommand& c) {
    auto& d = dut();
    words_at_issue_ = d.cnt_weight_words_o;
    d.cmd_op_i = static_cast<uint8_t>(c.op);
    d.cfg_cell_i = static_cast<uint8_t>(c.cell);
    d.cfg_hidden_i = static_cast<uint16_t>(c.hidden);
    d.cfg_batch_i = static_cast<uint16_t>(c.batch);
    d.cfg_steps_i = static_cast<uint16_t>(c.steps);
    d.cfg_bank_i = static_cast<uint8_t>(c.bank);
    std::vector<uint32_t> lens((params_.max_batch + 1) / 2, 0);  // 16 bits per slot
    for (int b = 0; b < params_.max_batch; ++b) {
      const int len = b < c.batch ? (c.lengths.empty() ? c.steps : c.lengths.at(b)) : 0;
      lens[b / 2] |= static_cast<uint32_t>(len & 0xffff) << (16 * (b % 2));
    }
    set_words(d.cfg_lengths_i, lens);
    d.cfg_store_base_i = c.store_base;
    d.cfg_store_size_i = c.store_size;
    d.cfg_watchdog_i = c.watchdog;
  }

  [[noreturn]] void timeout(const EngineCommand& c, uint64_t max_cycles) {
    tb_.fail("timeout: command " + engine::opcode_name(static_cast<int>(c.op)) + " not done after " +
             std::to_string(max_cycles) + " cycles (inputs left: weight beats " +
             std::to_string(weight_.pending()) + ", state " + std::to_string(state_in_.pending()) + ", xp " +
             std::to_string(xp_.pending()) + ", dh " + std::to_string(dh_.pending()) + ")");
  }

  // Status and counters of a command whose done pulse was just seen.
  CommandResult finish(const EngineCommand& c, uint64_t start, bool was_reset) {
    auto& d = dut();
    CommandResult r;
    r.was_reset = was_reset;
    r.latency = tb_.cycle() - start;
    if (c.op == Op::kLoad) {
      r.status = static_cast<Status>(d.load_status_o);
      r.unit = static_cast<Unit>(d.load_status_unit_o);
      r.counters.cycles = d.cnt_load_cycles_o;
      r.counters.weight_words = d.cnt_weight_words_o;
      r.inputs_left[0] = weight_.pending();
      return r;
    }
    r.status = static_cast<Status>(d.status_o);
    r.unit = static_cast<Unit>(d.status_unit_o);
    // Weight words: RAM writes during the command (the load counter runs on).
    r.counters = {d.cnt_cycles_o,      d.cnt_macs_o,        d.cnt_stall_input_o,
                  d.cnt_stall_output_o, d.cnt_stall_dep_o,   d.cnt_stall_store_o,
                  d.cnt_weight_words_o - words_at_issue_,    d.cnt_nonfinite_o};
    r.inputs_left[1] = state_in_.pending();
    r.inputs_left[2] = xp_.pending();
    r.inputs_left[3] = dh_.pending();
    return r;
  }

  // After the commands: inputs all taken (when they succeeded), the rest
  // withdrawn, outputs collected and checked for `last`, memory idle.
  void settle(std::initializer_list<CommandResult*> results, std::initializer_list<const EngineCommand*> cmds) {
    bool complete = true;
    for (CommandResult* r : results) complete = complete && r->ok() && !r->was_reset;
    const bool clean = weight_.done() && state_in_.done() && xp_.done() && dh_.done();
    if (complete && !clean) tb_.fail("command finished but did not consume all of its inputs");
    discard_inputs();
    // Let any stray output show up before collecting (there must be none).
    for (int i = 0; i < 20; ++i) tb_.tick();
    CommandResult* out = nullptr;  // the FORWARD/BACKWARD result, if any
    auto ci = cmds.begin();
    for (CommandResult* r : results) {
      if ((*ci++)->op != Op::kLoad) out = r;
    }
    std::vector<uint32_t> h, delta, state;
    collect(h_sink_, h, complete, "h");
    collect(delta_sink_, delta, complete, "delta");
    collect(state_sink_, state, complete, "state-out");
    if (out != nullptr) {
      out->h = std::move(h);
      out->delta = std::move(delta);
      out->state_out = std::move(state);
    } else if (!h.empty() || !delta.empty() || !state.empty()) {
      tb_.fail("a LOAD produced output on a data stream");
    }
    if (complete && !memory_.idle()) tb_.fail("memory requests still outstanding after done");
  }

  // The weight frame as beats of WeightLanes words; Framing counts beats.
  // Cuts `words` into beats of `per_beat` words, each padded to `lanes` words
  // (zeros, or random words where the engine must ignore them).
  std::vector<Beat> cut_beats(const std::vector<uint32_t>& words, size_t per_beat, size_t lanes, bool random_pad) {
    std::vector<Beat> beats;
    for (size_t i = 0; i < words.size(); i += per_beat) {
      Beat b;
      b.words.assign(words.begin() + static_cast<long>(i),
                     words.begin() + static_cast<long>(std::min(words.size(), i + per_beat)));
      while (b.words.size() < lanes) b.words.push_back(random_pad ? static_cast<uint32_t>(rng_.u64()) : 0);
      beats.push_back(std::move(b));
    }
    return beats;
  }

  // Frames beats of `lanes` words into `src` (Framing counts beats).
  void push_beats(StreamSource<Beat>& src, std::vector<Beat> beats, size_t lanes, const Framing& f) {
    beats.resize(beats.size() - std::min<size_t>(beats.size(), f.drop));
    const size_t needed = beats.size();
    const uint64_t before = src.sent() + src.pending();
    for (int i = 0; i < f.extra; ++i) {
      Beat b;
      for (size_t l = 0; l < lanes; ++l) b.words.push_back(0x7f800000u | static_cast<uint32_t>(rng_.range(1, 0x3fffff)));
      beats.push_back(std::move(b));
    }
    for (size_t i = 0; i < beats.size(); ++i) {
      beats[i].last = i + 1 == beats.size() && !f.no_last;
      src.push(beats[i]);
    }
    if (f.hold_final > 0 && needed > 0) src.hold_after(before + needed - 1, static_cast<uint64_t>(f.hold_final));
  }

  void push_weights(const std::vector<uint32_t>& words, const Framing& f) {
    const size_t lanes = static_cast<size_t>(params_.weight_lanes);
    push_beats(weight_, cut_beats(words, lanes, lanes, false), lanes, f);
  }

  // Xp: a word a beat, or (XpWords 4) a unit a beat, GRU's fourth lane random
  // (the engine must ignore it).
  void push_xp(const EngineCommand& c) {
    const size_t lanes = static_cast<size_t>(params_.xp_words);
    const size_t per_beat = lanes == 1 ? 1 : static_cast<size_t>(engine::gates(static_cast<engine::Cell>(c.cell & 1)));
    push_beats(xp_, cut_beats(c.xp, per_beat, lanes, true), lanes, c.f_xp);
  }

  void discard_inputs() {
    for (auto* src : {&weight_, &xp_}) src->clear();
    for (auto* src : {&state_in_, &dh_}) src->clear();
  }

  static uint64_t word(uint32_t data, uint8_t last) { return (static_cast<uint64_t>(last & 1) << 32) | data; }
  // The delta stream's beat: one unit's kDeltaWords words, lane 0 first.
  Beat delta_beat() {
    Beat b;
    for (int i = 0; i < engine::kDeltaWords; ++i) b.words.push_back(dut().delta_data_o[i]);
    b.last = dut().delta_last_o != 0;
    return b;
  }
  static void append(std::vector<uint32_t>& out, uint64_t w) { out.push_back(static_cast<uint32_t>(w)); }
  static void append(std::vector<uint32_t>& out, const Beat& b) { out.insert(out.end(), b.words.begin(), b.words.end()); }
  static bool is_last(uint64_t w) { return (w >> 32) & 1; }
  static bool is_last(const Beat& b) { return b.last; }

  // One command's frame on an input stream: the words, possibly cut short or
  // extended by surplus words, with `last` on the final one (unless no_last).
  void push_frame(StreamSource<uint64_t>& src, const std::vector<uint32_t>& words, const Framing& f) {
    std::vector<uint32_t> v(words.begin(), words.end() - std::min<size_t>(words.size(), f.drop));
    const size_t needed = v.size();
    const uint64_t before = src.sent() + src.pending();
    for (int i = 0; i < f.extra; ++i) v.push_back(0x7f800000u | static_cast<uint32_t>(rng_.range(1, 0x3fffff)));
    for (size_t i = 0; i < v.size(); ++i) src.push(word(v[i], i + 1 == v.size() && !f.no_last));
    if (f.hold_final > 0 && needed > 0) src.hold_after(before + needed - 1, static_cast<uint64_t>(f.hold_final));
  }

  // Output words of a command (a beat's words in lane order); a complete
  // output carries `last` on its final word or beat and nowhere else.
  template <class T>
  void collect(StreamSink<T>& sink, std::vector<uint32_t>& out, bool complete, const char* name) {
    out.clear();
    size_t i = 0;
    for (const T& item : sink.received()) {
      append(out, item);
      const bool last = is_last(item), final = ++i == sink.received().size();
      if (complete && last != final) {
        tb_.fail(std::string(name) + " stream: `last` " + (last ? "on" : "missing from") + " beat " +
                 std::to_string(i - 1) + " of " + std::to_string(sink.received().size()));
      }
    }
  }

  typename MemoryModel<8>::Ports memory_ports() {
    typename MemoryModel<8>::Ports p;
    p.req_valid = [this] { return dut().mem_req_valid_o != 0; };
    p.req = [this] {
      typename MemoryModel<8>::Request r;
      r.write = dut().mem_req_write_o != 0;
      r.addr = dut().mem_req_addr_o;
      for (int i = 0; i < 8; ++i) r.data[i] = dut().mem_req_data_o[i];
      return r;
    };
    p.set_req_ready = [this](bool r) { dut().mem_req_ready_i = r; };
    p.set_rsp = [this](bool v, const MemoryModel<8>::Line& data) {
      dut().mem_rsp_valid_i = v;
      for (int i = 0; i < 8; ++i) dut().mem_rsp_data_i[i] = data[i];
    };
    p.rsp_ready = [this] { return dut().mem_rsp_ready_o != 0; };
    return p;
  }

  // The memory request as one comparable value for the handshake monitor.
  std::vector<uint32_t> request_key() {
    std::vector<uint32_t> k;
    k.push_back(dut().mem_req_write_o);
    k.push_back(static_cast<uint32_t>(dut().mem_req_addr_o));
    k.push_back(static_cast<uint32_t>(dut().mem_req_addr_o >> 32));
    if (dut().mem_req_write_o) {
      for (int i = 0; i < 8; ++i) k.push_back(dut().mem_req_data_o[i]);
    }
    return k;
  }

  EngineParams params_;
  Rng rng_;
  Testbench<Vengine> tb_;
  StreamSource<Beat> weight_;
  StreamSource<uint64_t> state_in_, dh_;
  StreamSource<Beat> xp_;
  StreamSink<uint64_t> h_sink_, state_sink_;
  StreamSink<Beat> delta_sink_;
  HandshakeMonitor<uint64_t> h_mon_, state_mon_;
  HandshakeMonitor<Beat> delta_mon_;
  HandshakeMonitor<std::vector<uint32_t>> req_mon_;
  MemoryModel<8> memory_;
  DonePulses done_;
  size_t in_flight_at_reset_ = 0;
  uint64_t words_at_issue_ = 0;
  uint64_t overlap_ = 0;
};

}  // namespace farnn::tb
