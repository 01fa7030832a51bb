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
#include <string>
#include <vector>

#include "Vengine.h"
#include "farnn/engine_abi.hpp"
#include "memory_model.hpp"
#include "options.hpp"
#include "stream.hpp"
#include "testbench.hpp"

namespace farnn::tb {

struct EngineParams {
  int num_pe = FARNN_PARAM_NumPe;
  int weight_depth = FARNN_PARAM_WeightDepth;
  int max_hidden = FARNN_PARAM_MaxHidden;
  int max_batch = FARNN_PARAM_MaxBatch;
  int mul_latency = FARNN_PARAM_MulLatency;
  int add_latency = FARNN_PARAM_AddLatency;
  std::string describe() const {
    return "NumPe=" + std::to_string(num_pe) + " WeightDepth=" + std::to_string(weight_depth) +
           " MaxHidden=" + std::to_string(max_hidden) + " MaxBatch=" + std::to_string(max_batch) +
           " MulLatency=" + std::to_string(mul_latency) + " AddLatency=" + std::to_string(add_latency);
  }
};

using Op = engine::Opcode;
using engine::Status;
using engine::Unit;

// Cycles from abort_i to done that the engine promises (engine_pkg::flush_cycles + 2).
inline uint64_t abort_bound(const EngineParams& p) {
  return static_cast<uint64_t>(p.mul_latency + p.add_latency + 4) + 2;
}

// How an input stream's frame is sent: `drop` words fewer than the command
// needs, `extra` surplus words, or no `last` at all.
struct Framing {
  int drop = 0;
  int extra = 0;
  bool no_last = false;
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
  Op op = Op::kLoad;
  int cell = 0;  // 0 LSTM, 1 GRU (other values are illegal)
  int hidden = 1, batch = 1, steps = 1;
  uint64_t store_base = 0x1000, store_size = 0;
  uint32_t watchdog = 0;                            // cycles without progress; 0: off
  std::vector<uint32_t> weights, state_in, xp, dh;  // input streams
  Framing f_weights, f_state, f_xp, f_dh;
  bool may_end_early = false;  // outputs may be withdrawn (abort, timeout, framing)
};

struct Counters {
  uint64_t cycles = 0, macs = 0, stall_input = 0, stall_output = 0, stall_dep = 0,
           stall_store = 0, weight_words = 0, nonfinite_units = 0;
};

struct CommandResult {
  Status status = Status::kOk;
  Unit unit = Unit::kNone;
  Counters counters;
  uint64_t latency = 0;        // cycles from acceptance to done
  uint64_t abort_to_done = 0;  // cycles from abort_i to done (when aborted)
  std::vector<uint32_t> h, delta, state_out;
  size_t inputs_left[4] = {};  // weight, state, xp, dh words not taken by the engine
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
                [this](bool v, const uint64_t& d) {
                  dut().weight_valid_i = v;
                  dut().weight_data_i = static_cast<uint32_t>(d);
                  dut().weight_last_i = (d >> 32) & 1;
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
            [this](bool v, const uint64_t& d) {
              dut().xp_valid_i = v;
              dut().xp_data_i = static_cast<uint32_t>(d);
              dut().xp_last_i = (d >> 32) & 1;
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
                    [this] { return dut().delta_valid_o != 0; },
                    [this] { return word(dut().delta_data_o, dut().delta_last_o); }),
        state_sink_(rng_, 0.0, [this](bool r) { dut().state_out_ready_i = r; },
                    [this] { return dut().state_out_valid_o != 0; },
                    [this] { return word(dut().state_out_data_o, dut().state_out_last_o); }),
        h_mon_("h stream", [this] { return dut().h_valid_o != 0; }, [this] { return dut().h_ready_i != 0; },
               [this] { return word(dut().h_data_o, dut().h_last_o); }, fail_fn()),
        delta_mon_("delta stream", [this] { return dut().delta_valid_o != 0; },
                   [this] { return dut().delta_ready_i != 0; },
                   [this] { return word(dut().delta_data_o, dut().delta_last_o); }, fail_fn()),
        state_mon_("state stream", [this] { return dut().state_out_valid_o != 0; },
                   [this] { return dut().state_out_ready_i != 0; },
                   [this] { return word(dut().state_out_data_o, dut().state_out_last_o); }, fail_fn()),
        req_mon_("memory requests", [this] { return dut().mem_req_valid_o != 0; },
                 [this] { return dut().mem_req_ready_i != 0; }, [this] { return request_key(); }, fail_fn()),
        memory_(rng_, memory_ports(), fail_fn()) {
    for (Component* c : std::initializer_list<Component*>{&weight_, &state_in_, &xp_, &dh_, &h_sink_,
                                                           &delta_sink_, &state_sink_, &memory_, &h_mon_,
                                                           &delta_mon_, &state_mon_, &req_mon_}) {
      tb_.add(*c);
    }
    dut().cmd_valid_i = 0;
    dut().abort_i = 0;
    tb_.reset(10);
  }

  Vengine& dut() { return tb_.dut(); }
  Testbench<Vengine>& tb() { return tb_; }
  MemoryModel<8>& memory() { return memory_; }
  Rng& rng() { return rng_; }
  const EngineParams& params() const { return params_; }

  void set_stress(const Stress& s) {
    for (auto* src : {&weight_, &state_in_, &xp_, &dh_}) src->set_idle_prob(s.in_idle);
    for (auto* snk : {&h_sink_, &delta_sink_, &state_sink_}) snk->set_stall_prob(s.out_stall);
    memory_.set_stress(s.mem_req_stall, s.mem_rsp_stall, s.mem_min_latency, s.mem_max_latency);
  }
  // Permanent backpressure on one output (h, delta, state) when stall is 1.
  StreamSink<uint64_t>& sink(Unit u) {
    return u == Unit::kH ? h_sink_ : (u == Unit::kDelta ? delta_sink_ : state_sink_);
  }

  // Issues one command with its input streams and waits (at most max_cycles)
  // for done; abort_after >= 0 pulses abort_i that many cycles after the
  // command was accepted; reset_after >= 0 resets the engine then instead
  // (the result says was_reset). Inputs the engine does not take (an error)
  // are withdrawn afterwards, as a producer whose command failed would.
  CommandResult run(const EngineCommand& c, uint64_t max_cycles, int64_t abort_after = -1,
                    int64_t reset_after = -1) {
    push_frame(weight_, c.weights, c.f_weights);
    push_frame(state_in_, c.state_in, c.f_state);
    push_frame(xp_, c.xp, c.f_xp);
    push_frame(dh_, c.dh, c.f_dh);
    h_sink_.received().clear();
    delta_sink_.received().clear();
    state_sink_.received().clear();
    memory_.set_window(c.store_base, c.store_size);
    const bool lenient = c.may_end_early || abort_after >= 0 || reset_after >= 0;
    for (auto* m : {&h_mon_, &delta_mon_, &state_mon_}) m->set_allow_withdraw(lenient);
    req_mon_.set_allow_withdraw(lenient);

    auto& d = dut();
    const int idle = static_cast<int>(rng_.range(0, 3));  // the command port is a handshake too
    for (int i = 0; i < idle; ++i) tb_.tick();
    d.cmd_op_i = static_cast<uint8_t>(c.op);
    d.cfg_cell_i = static_cast<uint8_t>(c.cell);
    d.cfg_hidden_i = static_cast<uint16_t>(c.hidden);
    d.cfg_batch_i = static_cast<uint16_t>(c.batch);
    d.cfg_steps_i = static_cast<uint16_t>(c.steps);
    d.cfg_store_base_i = c.store_base;
    d.cfg_store_size_i = c.store_size;
    d.cfg_watchdog_i = c.watchdog;
    d.cmd_valid_i = 1;
    tb_.run_until([&] { return d.cmd_ready_o != 0; }, 1000, "command acceptance");
    tb_.tick();  // accepted at this edge
    d.cmd_valid_i = 0;
    const uint64_t start = tb_.cycle();
    uint64_t abort_cycle = 0;
    bool done = false, was_reset = false;
    while (!done) {
      if (reset_after >= 0 && tb_.cycle() - start == static_cast<uint64_t>(reset_after)) {
        in_flight_at_reset_ = memory_.outstanding();
        tb_.reset(4);
        was_reset = true;
        break;
      }
      if (tb_.cycle() - start > max_cycles) {
        tb_.fail("timeout: command " + engine::opcode_name(static_cast<int>(c.op)) + " not done after " +
                 std::to_string(max_cycles) + " cycles (inputs left: weights " +
                 std::to_string(weight_.pending()) + ", state " + std::to_string(state_in_.pending()) +
                 ", xp " + std::to_string(xp_.pending()) + ", dh " + std::to_string(dh_.pending()) + ")");
      }
      const bool abort_now = abort_after >= 0 && tb_.cycle() - start == static_cast<uint64_t>(abort_after);
      d.abort_i = abort_now;
      if (abort_now) abort_cycle = tb_.cycle();
      done = d.done_o != 0;
      tb_.tick();
    }
    d.abort_i = 0;
    CommandResult r;
    r.was_reset = was_reset;
    r.latency = tb_.cycle() - start;
    if (abort_cycle != 0) r.abort_to_done = tb_.cycle() - abort_cycle;
    r.status = static_cast<Status>(d.status_o);
    r.unit = static_cast<Unit>(d.status_unit_o);
    r.counters = {d.cnt_cycles_o,    d.cnt_macs_o,        d.cnt_stall_input_o,  d.cnt_stall_output_o,
                  d.cnt_stall_dep_o, d.cnt_stall_store_o, d.cnt_weight_words_o, d.cnt_nonfinite_o};
    const bool clean = weight_.done() && state_in_.done() && xp_.done() && dh_.done();
    if (r.ok() && !was_reset && !clean) tb_.fail("command finished but did not consume all of its inputs");
    r.inputs_left[0] = weight_.pending();
    r.inputs_left[1] = state_in_.pending();
    r.inputs_left[2] = xp_.pending();
    r.inputs_left[3] = dh_.pending();
    discard_inputs();
    // Let any stray output show up before collecting (there must be none).
    for (int i = 0; i < 20; ++i) tb_.tick();
    const bool complete = r.ok() && !was_reset;
    collect(h_sink_, r.h, complete, "h");
    collect(delta_sink_, r.delta, complete, "delta");
    collect(state_sink_, r.state_out, complete, "state-out");
    if (complete && !memory_.idle()) tb_.fail("memory requests still outstanding after done");
    return r;
  }

  // Gate-store requests in flight when run() last reset the engine.
  size_t in_flight_at_reset() const { return in_flight_at_reset_; }

  // Resets the engine (and, by its contract, the memory side) for `cycles`.
  void reset(unsigned cycles) {
    discard_inputs();
    tb_.reset(cycles);
  }

 private:
  std::function<void(const std::string&)> fail_fn() {
    return [this](const std::string& m) { tb_.fail(m); };
  }

  void discard_inputs() {
    for (auto* src : {&weight_, &state_in_, &xp_, &dh_}) src->clear();
  }

  static uint64_t word(uint32_t data, uint8_t last) { return (static_cast<uint64_t>(last & 1) << 32) | data; }

  // One command's frame on an input stream: the words, possibly cut short or
  // extended by surplus words, with `last` on the final one (unless no_last).
  void push_frame(StreamSource<uint64_t>& src, const std::vector<uint32_t>& words, const Framing& f) {
    std::vector<uint32_t> v(words.begin(), words.end() - std::min<size_t>(words.size(), f.drop));
    for (int i = 0; i < f.extra; ++i) v.push_back(0x7f800000u | static_cast<uint32_t>(rng_.range(1, 0x3fffff)));
    for (size_t i = 0; i < v.size(); ++i) src.push(word(v[i], i + 1 == v.size() && !f.no_last));
  }

  // Output words of a command; a complete output carries `last` on its final
  // word and nowhere else.
  void collect(StreamSink<uint64_t>& sink, std::vector<uint32_t>& out, bool complete, const char* name) {
    out.clear();
    size_t i = 0;
    for (uint64_t w : sink.received()) {
      out.push_back(static_cast<uint32_t>(w));
      const bool last = (w >> 32) & 1, final = ++i == sink.received().size();
      if (complete && last != final) {
        tb_.fail(std::string(name) + " stream: `last` " + (last ? "on" : "missing from") + " word " +
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
  StreamSource<uint64_t> weight_, state_in_, xp_, dh_;
  StreamSink<uint64_t> h_sink_, delta_sink_, state_sink_;
  HandshakeMonitor<uint64_t> h_mon_, delta_mon_, state_mon_;
  HandshakeMonitor<std::vector<uint32_t>> req_mon_;
  MemoryModel<8> memory_;
  size_t in_flight_at_reset_ = 0;
};

}  // namespace farnn::tb
