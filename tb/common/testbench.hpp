// Testbench<Model>: owns the VerilatedContext and the Verilated model, drives
// clk_i/rst_i, steps registered components (stream drivers, sinks, monitors,
// memory models) in a fixed two-phase order each cycle, enforces cycle
// timeouts and writes an FST trace on demand that is flushed on failure.
//
// One cycle (tick):
//   1. every component drive()s the DUT inputs for this cycle;
//   2. the model settles with clk low (combinational outputs valid);
//   3. every component sample()s the handshakes that fire at this edge;
//   4. rising edge, then falling edge.
#pragma once

#include <verilated.h>
#include <verilated_fst_c.h>

#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "options.hpp"

namespace farnn::tb {

// Thrown by Testbench::fail(); carries the cycle of the failure.
class TestFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A cycle-stepped piece of the environment around the DUT.
class Component {
 public:
  virtual ~Component() = default;
  virtual void drive() {}     // set DUT inputs for this cycle
  virtual void sample() {}    // observe handshakes at this edge (outputs settled)
  virtual void on_reset() {}  // the DUT is being reset: forget protocol state
};

template <class Model>
class Testbench {
 public:
  Testbench(const Options& opt, const std::string& name)
      : Testbench(opt.seed(), opt.trace() ? opt.trace_file() : std::string(), name) {}

  // Without Options (a simulated device inside a program): the seed of the
  // randomized initial state, and an FST file to trace to (empty: none).
  Testbench(uint64_t seed, const std::string& trace_file, const std::string& name) : name_(name) {
    ctx_ = std::make_unique<VerilatedContext>();
    ctx_->randSeed(static_cast<int>(seed & 0x7fffffff));
    ctx_->randReset(2);  // randomize uninitialized state: reset must not rely on luck
    if (!trace_file.empty()) ctx_->traceEverOn(true);
    model_ = std::make_unique<Model>(ctx_.get(), "top");
    if (!trace_file.empty()) {
      trace_ = std::make_unique<VerilatedFstC>();
      model_->trace(trace_.get(), 99);
      trace_path_ = trace_file;
      trace_->open(trace_path_.c_str());
      std::cout << name_ << ": tracing to " << trace_path_ << std::endl;
    }
    model_->clk_i = 0;
    model_->rst_i = 1;
    model_->eval();
  }

  ~Testbench() {
    close_trace();
    model_->final();
    // The model's scopes unregister from the thread's current context
    // (Verilated::threadContextp), which a model made later on this thread
    // may have changed, and may have freed with its own context: two sim://
    // devices in one process hung on that freed context's mutex.
    Verilated::threadContextp(ctx_.get());
    model_.reset();
  }

  Testbench(const Testbench&) = delete;
  Testbench& operator=(const Testbench&) = delete;

  Model& dut() { return *model_; }
  uint64_t cycle() const { return cycle_; }

  // Components are stepped in registration order; the caller keeps them alive.
  void add(Component& c) { components_.push_back(&c); }

  void tick() {
    for (auto* c : components_) c->drive();
    model_->clk_i = 0;
    model_->eval();
    dump();
    for (auto* c : components_) c->sample();
    model_->clk_i = 1;
    model_->eval();
    dump();
    model_->clk_i = 0;
    model_->eval();
    ++cycle_;
  }

  // Synchronous active-high reset for `cycles` cycles. Components keep running
  // (a source may offer data during reset; the DUT must ignore it).
  void reset(unsigned cycles = 8) {
    for (auto* c : components_) c->on_reset();
    model_->rst_i = 1;
    for (unsigned i = 0; i < cycles; ++i) tick();
    model_->rst_i = 0;
  }

  // Ticks until done() is true; fails after max_cycles with `what` in the message.
  void run_until(const std::function<bool()>& done, uint64_t max_cycles, const std::string& what) {
    const uint64_t limit = cycle_ + max_cycles;
    while (!done()) {
      if (cycle_ >= limit) {
        fail("timeout after " + std::to_string(max_cycles) + " cycles waiting for " + what);
      }
      tick();
    }
  }

  [[noreturn]] void fail(const std::string& msg) {
    std::ostringstream os;
    os << name_ << ": FAIL at cycle " << cycle_ << ": " << msg;
    if (trace_) os << " (trace: " << trace_path_ << ")";
    close_trace();
    throw TestFailure(os.str());
  }

 private:
  void dump() {
    ctx_->timeInc(1);
    if (trace_) trace_->dump(ctx_->time());
  }
  void close_trace() {
    if (trace_) {
      trace_->flush();
      trace_->close();
      trace_.reset();
    }
  }

  std::string name_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<VerilatedFstC> trace_;
  std::string trace_path_;
  std::vector<Component*> components_;
  uint64_t cycle_ = 0;
};

// Runs a testbench body with the shared options; prints PASS/FAIL with the
// seed and returns the process exit code.
inline int run_main(int argc, char** argv, const std::string& name,
                    const std::function<void(const Options&)>& body) {
  uint64_t seed = 0;
  try {
    Options opt(argc, argv, name);
    seed = opt.seed();
    body(opt);
    std::cout << name << ": PASS (seed=" << seed << ")" << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << std::endl;
    std::cerr << name << ": FAIL (seed=" << seed << ", reproduce with FARNN_SEED=" << seed << ")"
              << std::endl;
    return 1;
  }
}

}  // namespace farnn::tb
