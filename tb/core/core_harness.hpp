// Harness around the Verilated farnn_core: host memory and card memory as
// AXI4 memory models (random latency, backpressure, out-of-order responses
// across IDs), an AXI4-Lite master for the registers, and the driver-side
// steps a test needs: windows, ring, descriptors, doorbells, waiting for
// completion with a cycle bound. Everything the core reads lives in host
// memory at addresses the harness allocates.
#pragma once

#include <verilated.h>

#include <array>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Vfarnn_core.h"
#include "axil_master.hpp"
#include "core_ports.hpp"
#include "engine_params.hpp"
#include "farnn/core_regs.hpp"
#include "farnn/engine_model.hpp"
#include "options.hpp"
#include "testbench.hpp"

namespace farnn::tb {

namespace cr = farnn::core_regs;


// Stress of the environment: memory latency and backpressure.
struct Stress {
  int read_latency_min = 20, read_latency_max = 120;
  double stall = 0.2;  // ready low on AR/AW/W, gaps on R/B
  bool reorder = true;
};

class CoreHarness {
 public:
  using Mem = CoreMemory;
  static constexpr uint64_t kHostBase = 0x4000'0000ull;   // host memory region
  static constexpr uint64_t kHostSize = 64ull << 20;
  static constexpr uint64_t kCardBase = 0x0;              // card memory (gate store)
  static constexpr uint64_t kCardSize = 256ull << 20;
  static constexpr uint32_t kRingEntries = 16;

  CoreHarness(const Options& opt, const std::string& name, const Stress& s = {})
      : opt_(opt), rng_(opt.seed() ^ 0x5eedc0feull), tb_(opt, name) {
    auto& d = tb_.dut();
    auto fail = [this](const std::string& m) { tb_.fail(m); };
    host_ = std::make_unique<Mem>(rng_, core_host_ports(d), fail);
    card_ = std::make_unique<Mem>(rng_, core_card_ports(d), fail);
    axil_ = std::make_unique<AxilMaster>(rng_, axil_slave_ports(d), fail);
    set_stress(s);
    host_->add_region(kHostBase, kHostSize, Mem::Access::kReadWrite);
    card_->add_region(kCardBase, kCardSize, Mem::Access::kReadWrite);
    tb_.add(*axil_);
    tb_.add(*host_);
    tb_.add(*card_);
    d.irq_ack_i = 0;
    tb_.reset();
  }

  Testbench<Vfarnn_core>& tb() { return tb_; }
  Vfarnn_core& dut() { return tb_.dut(); }
  Mem& host() { return *host_; }
  Mem& card() { return *card_; }
  Rng& rng() { return rng_; }
  const EngineParams& params() const { return params_; }

  void set_stress(const Stress& s) {
    Mem::Timing t;
    t.read_latency_min = s.read_latency_min;
    t.read_latency_max = s.read_latency_max;
    t.write_latency_min = s.read_latency_min / 2 + 1;
    t.write_latency_max = s.read_latency_max / 2 + 1;
    t.ar_stall = t.aw_stall = t.w_stall = s.stall;
    t.r_gap = t.b_gap = s.stall;
    t.reorder = s.reorder;
    t.max_reads = 32;
    t.max_writes = 32;
    host_->set_timing(t);
    card_->set_timing(t);
    axil_->set_stress(s.stall);
  }

  // Fixed latencies and no stress on the host side (a benchmark, a speed
  // check): host reads answered after host_cycles, card memory after
  // card_cycles with card_stall backpressure on every card channel.
  void set_fixed_latency(int host_cycles, int card_cycles, double card_stall) {
    Stress s;
    s.read_latency_min = s.read_latency_max = host_cycles;
    s.stall = 0.0;
    s.reorder = false;
    set_stress(s);
    Mem::Timing card = card_->timing();
    card.read_latency_min = card.read_latency_max = card_cycles;
    card.write_latency_min = card.write_latency_max = card_cycles;
    card.ar_stall = card.aw_stall = card.w_stall = card_stall;
    card.r_gap = card.b_gap = card_stall;
    card_->set_timing(card);
  }

  // ---- registers
  uint32_t rd(uint32_t addr) { return axil_->read(tb_, addr); }
  void wr(uint32_t addr, uint32_t v) { axil_->write(tb_, addr, v); }
  uint64_t rd64(uint32_t addr) {
    const uint64_t lo = rd(addr);
    return lo | (uint64_t{rd(addr + 4)} << 32);
  }
  void wr64(uint32_t addr, uint64_t v) {
    wr(addr, static_cast<uint32_t>(v));
    wr(addr + 4, static_cast<uint32_t>(v >> 32));
  }

  // ---- host memory allocation (a bump allocator, 4 KiB aligned unless asked)
  uint64_t alloc(uint64_t bytes, uint64_t align = 4096) {
    next_ = (next_ + align - 1) / align * align;
    const uint64_t a = next_;
    next_ += std::max<uint64_t>(bytes, 4);
    if (next_ > kHostBase + kHostSize) tb_.fail("harness: host memory exhausted");
    return a;
  }
  uint64_t alloc_words(const std::vector<uint32_t>& w, uint64_t align = 4096) {
    const uint64_t a = alloc(w.size() * 4, align);
    host_->write_words(a, w);
    return a;
  }

  // ---- windows, ring
  void set_window(unsigned i, uint64_t base, uint64_t size, bool read, bool write) {
    wr64(cr::kRegWinBase(i), base);
    wr64(cr::kRegWinSize(i), size);
    wr(cr::kRegWinCtrl(i), (read ? 1u : 0u) | (write ? 2u : 0u));
  }
  // Window 0 over all host memory (read/write), ring and write-back word.
  void setup_ring(uint32_t irq_enables = 0) {
    set_window(0, kHostBase, kHostSize, true, true);
    ring_ = alloc(uint64_t{kRingEntries} * cr::kDescBytes);
    wb_ = alloc(64);
    host_->write_words(wb_, {0xffffffffu});
    wr64(cr::kRegRingBase, ring_);
    wr(cr::kRegRingSize, kRingEntries);
    wr64(cr::kRegRingWbAddr, wb_);
    tail_ = rd(cr::kRegRingHead);
    wr(cr::kRegRingTail, tail_);
    wr(cr::kRegCtrl, (1u << 16) | irq_enables);
  }
  uint64_t wb_addr() const { return wb_; }
  // Where the next pushed descriptor goes.
  uint64_t next_desc_addr() const { return ring_ + uint64_t{tail_ % kRingEntries} * cr::kDescBytes; }
  uint32_t tail() const { return tail_; }

  // Writes a descriptor at the tail (raw words allow malformed ones).
  void push_words(const std::array<uint32_t, cr::kDescWords>& w) {
    const uint64_t at = ring_ + uint64_t{tail_ % kRingEntries} * cr::kDescBytes;
    host_->write_words(at, std::vector<uint32_t>(w.begin(), w.end()));
    ++tail_;
  }
  void push(const cr::Descriptor& d) { push_words(d.encode()); }
  void ring_doorbell() { wr(cr::kRegRingTail, tail_); }

  // Ticks until RING_DONE reaches `count` (read from the write-back word, as a
  // driver polling host memory would) or the ring halts; false on a halt.
  bool wait_done(uint32_t count, uint64_t max_cycles, const std::string& what) {
    for (uint64_t c = 0; c < max_cycles; ++c) {
      if ((c & 63) == 0) {
        const uint32_t done = host_->read_words(wb_, 1)[0];
        if (done != 0xffffffffu && static_cast<int32_t>(done - count) >= 0) return true;
        if (dut_halted()) return false;
      }
      tb_.tick();
    }
    tb_.fail(what + ": not done within " + std::to_string(max_cycles) + " cycles (RING_DONE " +
             std::to_string(rd(cr::kRegRingDone)) + ", STATUS 0x" + hex(rd(cr::kRegStatus)) + ")");
    return false;
  }
  // Ticks until STATUS.busy is clear (every descriptor retired); fails after the bound.
  void wait_idle(uint64_t max_cycles, const std::string& what) {
    for (uint64_t c = 0; c < max_cycles; c += 16) {
      if (!((rd(cr::kRegStatus) >> cr::kStatusBusyShift) & 1u)) return;
      for (int i = 0; i < 16; ++i) tb_.tick();
    }
    tb_.fail(what + ": the core stayed busy for " + std::to_string(max_cycles) + " cycles");
  }
  // Ticks until STATUS.halted; fails after the bound.
  void wait_halted(uint64_t max_cycles, const std::string& what) {
    for (uint64_t c = 0; c < max_cycles; c += 64) {
      if (dut_halted()) return;
      for (int i = 0; i < 64; ++i) tb_.tick();
    }
    tb_.fail(what + ": the ring did not halt within " + std::to_string(max_cycles) + " cycles");
  }
  bool dut_halted() { return (rd(cr::kRegStatus) >> cr::kStatusHaltedShift) & 1u; }

  // The error code and fault log.
  struct Fault {
    uint32_t error = 0, unit = 0, op = 0, kind = 0, stream = 0, desc = 0;
    uint64_t addr = 0;
    std::string describe() const {
      std::ostringstream os;
      os << "error " << error << " (" << cr::to_string(static_cast<cr::Error>(error)) << "), kind " << kind
         << " (" << cr::to_string(static_cast<cr::FaultKind>(kind)) << "), stream " << stream << ", desc " << desc
         << ", addr 0x" << std::hex << addr;
      return os.str();
    }
  };
  Fault fault() {
    Fault f;
    const uint32_t st = rd(cr::kRegStatus);
    f.error = (st >> cr::kStatusErrorShift) & 0x1f;
    f.unit = (st >> cr::kStatusUnitShift) & 0xf;
    f.op = (st >> cr::kStatusOpShift) & 0xf;
    const uint32_t info = rd(cr::kRegFaultInfo);
    f.kind = info & 0xff;
    f.stream = (info >> 8) & 0xf;
    f.desc = rd(cr::kRegFaultDesc);
    f.addr = rd64(cr::kRegFaultAddr);
    return f;
  }

  // The counters a benchmark or a speed check compares before and after a command.
  struct Counters {
    uint64_t macs, st_in, st_out, st_dep, st_store, st_gate, host_rd, host_wr, card_rd, card_wr;
  };
  Counters counters() {
    return {rd64(cr::kRegCntMacs),        rd64(cr::kRegCntStallInput),  rd64(cr::kRegCntStallOutput),
            rd64(cr::kRegCntStallDep),    rd64(cr::kRegCntStallStore),  rd64(cr::kRegCntStallGate),
            rd64(cr::kRegCntHostRdBytes), rd64(cr::kRegCntHostWrBytes), rd64(cr::kRegCntCardRdBytes),
            rd64(cr::kRegCntCardWrBytes)};
  }

  // Runs one descriptor alone and returns its cycles, from the doorbell write
  // to the completion word in host memory (checked every cycle); the core is
  // idle before and after. Fails on a halt or after max_cycles.
  uint64_t run_timed(const cr::Descriptor& d, uint64_t max_cycles, const std::string& what) {
    wait_idle(1'000'000, what + ": before");
    push(d);
    ring_doorbell();
    const uint64_t start = tb_.cycle();
    for (;;) {
      const uint32_t done = host_->read_words(wb_, 1)[0];
      if (done != 0xffffffffu && static_cast<int32_t>(done - tail_) >= 0) break;
      if (tb_.cycle() - start > max_cycles) tb_.fail(what + ": not complete within " + std::to_string(max_cycles) + " cycles");
      if (((tb_.cycle() - start) & 1023) == 1023 && dut_halted()) tb_.fail(what + ": halted: " + fault().describe());
      tb_.tick();
    }
    const uint64_t cycles = tb_.cycle() - start;
    wait_idle(1'000'000, what + ": after");
    return cycles;
  }

  // Soft reset and wait until it is over (bounded).
  void soft_reset(uint64_t max_cycles = 100000) {
    wr(cr::kRegCtrl, rd(cr::kRegCtrl) | 1u);
    for (uint64_t c = 0; c < max_cycles; c += 16) {
      const uint32_t st = rd(cr::kRegStatus);
      if (!((st >> cr::kStatusResettingShift) & 1u) && !((st >> cr::kStatusHaltedShift) & 1u) &&
          !((st >> cr::kStatusBusyShift) & 1u))
        break;
      for (int i = 0; i < 16; ++i) tb_.tick();
    }
    tail_ = rd(cr::kRegRingHead);
    host_->write_words(wb_, {0xffffffffu});
  }

  static std::string hex(uint64_t v) {
    std::ostringstream os;
    os << std::hex << v;
    return os.str();
  }

 private:

  const Options& opt_;
  Rng rng_;
  Testbench<Vfarnn_core> tb_;
  EngineParams params_;
  std::unique_ptr<Mem> host_, card_;
  std::unique_ptr<AxilMaster> axil_;
  uint64_t next_ = kHostBase;
  uint64_t ring_ = 0, wb_ = 0;
  uint32_t tail_ = 0;
};

}  // namespace farnn::tb
