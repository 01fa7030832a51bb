// Drives the Verilated recurrent engine (Vengine): the command port, every
// stream (random idle cycles on inputs, random backpressure on outputs, a
// handshake monitor on each output) and the gate-store memory (random latency
// and backpressure). Used by the engine testbench, `make sim` and the benchmark.
// The engine's parameters come from the FARNN_PARAM_* macros of the build.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "Vengine.h"
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

// Command opcodes, cell codes and status codes of rtl/engine/engine_pkg.sv.
enum class Op : uint8_t { kLoad = 0, kForward = 1, kBackward = 2 };
enum Status : int {
  kOk = 0,
  kBadCell = 1,
  kHiddenZero = 2,
  kHiddenTooLarge = 3,
  kBatchZero = 4,
  kBatchTooLarge = 5,
  kStepsZero = 6,
  kStoreTooSmall = 7,
  kNoWeights = 8,
  kNoForward = 9,
  kBadCommand = 10,
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
  std::vector<uint32_t> weights, state_in, xp, dh;  // input streams
};

struct Counters {
  uint64_t cycles = 0, macs = 0, stall_input = 0, stall_output = 0, stall_dep = 0,
           stall_store = 0, weight_words = 0, nonfinite_units = 0;
};

struct CommandResult {
  int status = 0;
  Counters counters;
  uint64_t latency = 0;  // cycles from acceptance to done
  std::vector<uint32_t> h, delta, state_out;
};

class EngineHarness {
 public:
  EngineHarness(const Options& opt, const std::string& name)
      : rng_(opt.seed() ^ 0x9e3779b97f4a7c15ull),
        tb_(opt, name),
        weight_(rng_, 0.0, [this](bool v, const uint32_t& d) { dut().weight_valid_i = v; dut().weight_data_i = d; },
                [this] { return dut().weight_ready_o != 0; }),
        state_in_(rng_, 0.0, [this](bool v, const uint32_t& d) { dut().state_in_valid_i = v; dut().state_in_data_i = d; },
                  [this] { return dut().state_in_ready_o != 0; }),
        xp_(rng_, 0.0, [this](bool v, const uint32_t& d) { dut().xp_valid_i = v; dut().xp_data_i = d; },
            [this] { return dut().xp_ready_o != 0; }),
        dh_(rng_, 0.0, [this](bool v, const uint32_t& d) { dut().dh_valid_i = v; dut().dh_data_i = d; },
            [this] { return dut().dh_ready_o != 0; }),
        h_sink_(rng_, 0.0, [this](bool r) { dut().h_ready_i = r; }, [this] { return dut().h_valid_o != 0; },
                [this] { return static_cast<uint32_t>(dut().h_data_o); }),
        delta_sink_(rng_, 0.0, [this](bool r) { dut().delta_ready_i = r; },
                    [this] { return dut().delta_valid_o != 0; },
                    [this] { return static_cast<uint32_t>(dut().delta_data_o); }),
        state_sink_(rng_, 0.0, [this](bool r) { dut().state_out_ready_i = r; },
                    [this] { return dut().state_out_valid_o != 0; },
                    [this] { return static_cast<uint32_t>(dut().state_out_data_o); }),
        h_mon_("h stream", [this] { return dut().h_valid_o != 0; }, [this] { return dut().h_ready_i != 0; },
               [this] { return static_cast<uint32_t>(dut().h_data_o); }, fail_fn()),
        delta_mon_("delta stream", [this] { return dut().delta_valid_o != 0; },
                   [this] { return dut().delta_ready_i != 0; },
                   [this] { return static_cast<uint32_t>(dut().delta_data_o); }, fail_fn()),
        state_mon_("state stream", [this] { return dut().state_out_valid_o != 0; },
                   [this] { return dut().state_out_ready_i != 0; },
                   [this] { return static_cast<uint32_t>(dut().state_out_data_o); }, fail_fn()),
        req_mon_("memory requests", [this] { return dut().mem_req_valid_o != 0; },
                 [this] { return dut().mem_req_ready_i != 0; }, [this] { return request_key(); }, fail_fn()),
        memory_(rng_, memory_ports(), fail_fn()) {
    for (Component* c : std::initializer_list<Component*>{&weight_, &state_in_, &xp_, &dh_, &h_sink_,
                                                           &delta_sink_, &state_sink_, &memory_, &h_mon_,
                                                           &delta_mon_, &state_mon_, &req_mon_}) {
      tb_.add(*c);
    }
    dut().cmd_valid_i = 0;
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

  // Issues one command with its input streams and waits (at most max_cycles)
  // for done. Inputs the engine does not take (an error) are discarded.
  CommandResult run(const EngineCommand& c, uint64_t max_cycles) {
    for (uint32_t w : c.weights) weight_.push(w);
    for (uint32_t w : c.state_in) state_in_.push(w);
    for (uint32_t w : c.xp) xp_.push(w);
    for (uint32_t w : c.dh) dh_.push(w);
    h_sink_.received().clear();
    delta_sink_.received().clear();
    state_sink_.received().clear();
    memory_.set_window(c.store_base, c.store_size);

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
    d.cmd_valid_i = 1;
    tb_.run_until([&] { return d.cmd_ready_o != 0; }, 1000, "command acceptance");
    tb_.tick();  // accepted at this edge
    d.cmd_valid_i = 0;
    const uint64_t start = tb_.cycle();
    bool done = false;
    while (!done) {
      if (tb_.cycle() - start > max_cycles) {
        tb_.fail("timeout: command " + std::to_string(static_cast<int>(c.op)) + " not done after " +
                 std::to_string(max_cycles) + " cycles (inputs left: weights " +
                 std::to_string(weight_.pending()) + ", state " + std::to_string(state_in_.pending()) +
                 ", xp " + std::to_string(xp_.pending()) + ", dh " + std::to_string(dh_.pending()) + ")");
      }
      done = d.done_o != 0;
      tb_.tick();
    }
    CommandResult r;
    r.latency = tb_.cycle() - start;
    r.status = d.status_o;
    r.counters = {d.cnt_cycles_o,    d.cnt_macs_o,        d.cnt_stall_input_o,  d.cnt_stall_output_o,
                  d.cnt_stall_dep_o, d.cnt_stall_store_o, d.cnt_weight_words_o, d.cnt_nonfinite_o};
    const bool clean = weight_.done() && state_in_.done() && xp_.done() && dh_.done();
    if (r.status == kOk && !clean) tb_.fail("command finished but did not consume all of its inputs");
    discard_inputs();
    // Let any stray output show up before collecting (there must be none).
    for (int i = 0; i < 20; ++i) tb_.tick();
    r.h.assign(h_sink_.received().begin(), h_sink_.received().end());
    r.delta.assign(delta_sink_.received().begin(), delta_sink_.received().end());
    r.state_out.assign(state_sink_.received().begin(), state_sink_.received().end());
    if (!memory_.idle()) tb_.fail("memory requests still outstanding after done");
    return r;
  }

 private:
  std::function<void(const std::string&)> fail_fn() {
    return [this](const std::string& m) { tb_.fail(m); };
  }

  void discard_inputs() {
    for (auto* src : {&weight_, &state_in_, &xp_, &dh_}) src->clear();
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
  StreamSource<uint32_t> weight_, state_in_, xp_, dh_;
  StreamSink<uint32_t> h_sink_, delta_sink_, state_sink_;
  HandshakeMonitor<uint32_t> h_mon_, delta_mon_, state_mon_;
  HandshakeMonitor<std::vector<uint32_t>> req_mon_;
  MemoryModel<8> memory_;
};

}  // namespace farnn::tb
