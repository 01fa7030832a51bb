// SimTransport (see sim_transport.hpp): the Verilated farnn_core, its AXI
// memory models (host link and card DDR), the AXI4-Lite master for BAR0, the
// root complex's page table and the fault injector.
#include "sim_transport.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "Vfarnn_core.h"
#include "axil_master.hpp"
#include "core_ports.hpp"
#include "farnn/core_regs.hpp"
#include "testbench.hpp"

// A core built without naming NumChains has farnn_core's one chain.
#ifndef FARNN_PARAM_NumChains
#define FARNN_PARAM_NumChains 1
#endif

namespace farnn::sim {
namespace {

namespace cr = core_regs;
using tb::AxiResp;
using tb::CoreMemory;

constexpr uint64_t kPage = 4096;
constexpr uint64_t kBusStart = 0x1'0000'0000ull;
// Driver-internal regions (ring, staging) are named with this prefix; the
// unmap fault leaves them alone (it models a user buffer going away).
constexpr const char* kDriverPrefix = "driver:";

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

// The root complex as the core's host master sees it: bus pages mapped to
// this process's memory, and the fault that is armed. An IOMMU maps whole
// pages, but only the mapped range [lo, hi) of a page is this process's to
// touch: bytes of a beat outside it read as zero, and writes to them are
// dropped and counted (a card writing there would corrupt a neighbour).
class RootComplex final : public tb::BeatTarget {
 public:
  struct Page {
    uint8_t* cpu;        // the page's first byte
    uintptr_t lo, hi;    // the mapped bytes of the page
    bool user;
  };

  void map(uint64_t bus_page, uint8_t* cpu_page, uint64_t pages, uintptr_t lo, uintptr_t hi, bool user) {
    for (uint64_t i = 0; i < pages; ++i) pages_[bus_page + i * kPage] = {cpu_page + i * kPage, lo, hi, user};
  }
  uint64_t stray_write_bytes() const { return stray_; }
  void unmap(uint64_t bus_page, uint64_t pages) {
    for (uint64_t i = 0; i < pages; ++i) pages_.erase(bus_page + i * kPage);
  }

  void arm(const FaultPlan& plan) {
    plan_ = plan;
    seen_ = 0;
    hit_ = false;
    error_next_read_ = false;
  }
  bool hit() const { return hit_; }
  bool armed() const { return plan_.has_value(); }
  bool link_down() const { return link_down_; }
  void set_link_down(bool down) { link_down_ = down; }
  void disarm() {
    plan_.reset();
    error_next_read_ = false;
  }
  // Stalls the link at once when a completion timeout or a stall hits (set by the transport).
  std::function<void(FaultKind)> stall_link;

  AxiResp decode(bool write, uint64_t addr, size_t) override {
    if (link_down_) return AxiResp::kSlvErr;
    const auto it = pages_.find(addr & ~(kPage - 1));
    if (it == pages_.end()) return AxiResp::kDecErr;
    if (error_next_read_ && !write) {
      error_next_read_ = false;
      return AxiResp::kSlvErr;
    }
    if (!plan_ || !counts(write) || (plan_->kind == FaultKind::kUnmapPage && !it->second.user)) {
      return AxiResp::kOkay;
    }
    if (seen_++ < plan_->after) return AxiResp::kOkay;
    const FaultKind kind = plan_->kind;
    plan_.reset();
    hit_ = true;
    switch (kind) {
      case FaultKind::kReadError:
      case FaultKind::kWriteError:
        return AxiResp::kSlvErr;
      case FaultKind::kUnmapPage:
        pages_.erase(it);
        return AxiResp::kDecErr;
      case FaultKind::kLinkDown:
        link_down_ = true;
        return AxiResp::kSlvErr;
      case FaultKind::kCompletionTimeout:
        // The link stalls at once, so the host memory holds this read beat
        // back; when it offers the beat again after cto_us, it is answered
        // with the error. The error always lands on the read that timed out,
        // inside the command that made it.
        error_next_read_ = true;
        stall_link(kind);
        return AxiResp::kOkay;
      case FaultKind::kStall:
        stall_link(kind);
        return AxiResp::kOkay;
      case FaultKind::kLostDoorbell:
        break;
    }
    return AxiResp::kOkay;
  }
  void read(uint64_t addr, uint8_t* dst, size_t n) override {
    std::memset(dst, 0, n);
    const auto [from, to, p] = in_range(addr, n);
    if (from < to) std::memcpy(dst + from, p + from, to - from);
  }
  void write(uint64_t addr, const uint8_t* src, size_t n) override {
    const auto [from, to, p] = in_range(addr, n);
    if (from < to) std::memcpy(p + from, src + from, to - from);
    stray_ += n - (to > from ? to - from : 0);
  }

 private:
  bool counts(bool write) const {
    switch (plan_->kind) {
      case FaultKind::kReadError:
      case FaultKind::kCompletionTimeout:
        return !write;
      case FaultKind::kWriteError:
        return write;
      case FaultKind::kLostDoorbell:
        return false;
      default:
        return true;
    }
  }
  // The bytes [from, to) of the n at addr that lie in the mapping, and where addr is.
  std::tuple<size_t, size_t, uint8_t*> in_range(uint64_t addr, size_t n) const {
    const Page& pg = pages_.at(addr & ~(kPage - 1));
    uint8_t* p = pg.cpu + (addr & (kPage - 1));
    const auto at = reinterpret_cast<uintptr_t>(p);
    const size_t from = at >= pg.lo ? 0 : std::min<size_t>(n, pg.lo - at);
    const size_t to = at + n <= pg.hi ? n : (pg.hi > at ? pg.hi - at : 0);
    return {from, std::max(from, to), p};
  }

  std::map<uint64_t, Page> pages_;
  std::optional<FaultPlan> plan_;
  uint64_t seen_ = 0;
  bool hit_ = false;
  bool link_down_ = false;
  bool error_next_read_ = false;
  uint64_t stray_ = 0;
};

}  // namespace

std::string BuiltCore::describe() const {
  std::ostringstream os;
  os << num_pe << " PEs in " << num_chains << (num_chains == 1 ? " chain, " : " chains, ") << num_banks << " banks of " << weight_depth << " words per PE, hidden <= " << max_hidden
     << ", batch <= " << max_batch << ", " << weight_lanes << "-word weight beats";
  return os.str();
}

BuiltCore built_core() {
  return {FARNN_PARAM_NumPe,       FARNN_PARAM_WeightDepth, FARNN_PARAM_NumBanks, FARNN_PARAM_WeightLanes,
          FARNN_PARAM_MaxHidden,   FARNN_PARAM_MaxBatch,    FARNN_PARAM_NumChains};
}

double synth_clock_mhz() { return FARNN_SYNTH_CLOCK_MHZ; }

struct SimTransport::Impl {
  explicit Impl(const SimConfig& c)
      : cfg(c), rng(c.seed ^ 0x51b7a5e0ull), bench(c.seed, c.trace_file, "sim") {
    auto& d = bench.dut();
    auto fail = [this](const std::string& m) { bench.fail(m); };
    host = std::make_unique<CoreMemory>(rng, tb::core_host_ports(d), fail);
    card = std::make_unique<CoreMemory>(rng, tb::core_card_ports(d), fail);
    axil = std::make_unique<tb::AxilMaster>(rng, tb::axil_slave_ports(d), fail);
    host->set_target(&rc);
    rc.stall_link = [this](FaultKind kind) {
      const double us = kind == FaultKind::kStall ? stall_us : cfg.cto_us;
      host->stall_until(host->now() + cycles_of(us * 1000.0, cfg.core_clock_hz));
    };
    card->add_region(0, round_up(c.card_bytes, 64), CoreMemory::Access::kReadWrite);
    const double hz = c.core_clock_hz;
    CoreMemory::Timing h;
    h.read_latency_min = static_cast<int>(cycles_of(c.link.read_latency_ns, hz));
    h.read_latency_max = static_cast<int>(cycles_of(c.link.read_latency_ns * 1.1, hz));
    h.write_latency_min = static_cast<int>(cycles_of(c.link.write_latency_ns, hz));
    h.write_latency_max = static_cast<int>(cycles_of(c.link.write_latency_ns * 1.1, hz));
    h.max_reads = c.link.max_outstanding_reads;
    h.max_writes = c.link.max_outstanding_writes;
    h.reorder = true;  // completions of different tags return in any order
    h.r_beats_per_cycle = beats_per_cycle(c.link.read_goodput(), hz);
    h.w_beats_per_cycle = beats_per_cycle(c.link.write_goodput(), hz);
    host->set_timing(h);
    CoreMemory::Timing m;
    m.read_latency_min = static_cast<int>(cycles_of(c.ddr.latency_min_ns, hz));
    m.read_latency_max = static_cast<int>(cycles_of(c.ddr.latency_max_ns, hz));
    m.write_latency_min = m.read_latency_min / 2;
    m.write_latency_max = m.read_latency_max / 2;
    m.ar_stall = m.aw_stall = m.w_stall = c.ddr.refresh_stall;
    m.max_reads = m.max_writes = 32;
    m.r_beats_per_cycle = m.w_beats_per_cycle = beats_per_cycle(c.ddr.bytes_per_s, hz);
    card->set_timing(m);
    axil->set_stress(0.0);
    bench.add(*axil);
    bench.add(*host);
    bench.add(*card);
    d.irq_ack_i = 0;
    bench.reset();
  }

  void tick() {
    bench.tick();
    note_dma();
  }
  void ticks(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) tick();
  }
  uint64_t cycles(double ns) const { return cycles_of(ns, cfg.core_clock_hz); }

  // Host-link DMA per direction since take_dma_activity(): bytes and the
  // cycles of the first and last beat that moved payload.
  struct DmaCycles {
    uint64_t seen = 0, bytes = 0, first = 0, last = 0;
    void note(uint64_t total, uint64_t cycle) {
      if (total == seen) return;
      if (bytes == 0) first = cycle;
      bytes += total - seen;
      last = cycle;
      seen = total;
    }
  };
  DmaCycles dma_in, dma_out;
  void note_dma() {
    const auto& h = host->stats();
    dma_in.note(h.read_bytes, bench.cycle());
    dma_out.note(h.write_bytes, bench.cycle());
  }
  std::chrono::nanoseconds at(uint64_t cycle) const {
    return std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(cycle) * 1e9 / cfg.core_clock_hz));
  }
  DmaWindow take(DmaCycles& d) const {
    const DmaWindow w = d.bytes ? DmaWindow{d.bytes, at(d.first), at(d.last)} : DmaWindow{};
    d.bytes = 0;
    return w;
  }

  // A region of this process's memory at a fresh bus address.
  uint64_t map(uint8_t* cpu, size_t bytes, const std::string& name) {
    const auto first = reinterpret_cast<uintptr_t>(cpu) & ~(kPage - 1);
    const uint64_t pages = round_up(reinterpret_cast<uintptr_t>(cpu) + bytes - first, kPage) / kPage;
    const uint64_t bus = next_bus;
    rc.map(bus, reinterpret_cast<uint8_t*>(first), std::max<uint64_t>(pages, 1), reinterpret_cast<uintptr_t>(cpu),
           reinterpret_cast<uintptr_t>(cpu) + bytes, name.rfind(kDriverPrefix, 0) != 0);
    next_bus += (std::max<uint64_t>(pages, 1) + 1) * kPage;  // a guard page after it
    mapped[bus] = std::max<uint64_t>(pages, 1);
    return bus + (reinterpret_cast<uintptr_t>(cpu) - first);
  }
  void unmap(uint64_t bus) {
    const uint64_t page = bus & ~(kPage - 1);
    const auto it = mapped.find(page);
    if (it == mapped.end()) {
      throw InvalidArgumentError("sim: bus address " + hex(bus) + " is not mapped");
    }
    rc.unmap(page, it->second);
    mapped.erase(it);
  }

  SimConfig cfg;
  tb::Rng rng;
  tb::Testbench<Vfarnn_core> bench;
  RootComplex rc;
  std::unique_ptr<CoreMemory> host, card;
  std::unique_ptr<tb::AxilMaster> axil;
  uint64_t next_bus = kBusStart;
  std::map<uint64_t, uint64_t> mapped;  // bus page -> pages
  std::map<uint64_t, void*> owned;      // alloc_dma: bus -> memory to free
  bool lose_doorbell = false, doorbell_lost = false;
  double stall_us = 0;
  uint64_t mmio_reads = 0, mmio_writes = 0;
};

SimTransport::SimTransport(const SimConfig& cfg) {
  if (!(cfg.core_clock_hz > 0)) throw InvalidArgumentError("sim: the core clock must be positive");
  impl_ = std::make_unique<Impl>(cfg);
}

SimTransport::~SimTransport() {
  for (auto& [bus, mem] : impl_->owned) std::free(mem);
}

std::string SimTransport::describe() const {
  std::ostringstream os;
  os << "sim: Verilated farnn_core (" << built_core().describe() << ") at " << impl_->cfg.core_clock_hz / 1e6
     << " MHz behind a mocked PCIe root complex, " << impl_->cfg.link.describe() << "; card DDR "
     << (impl_->cfg.card_bytes >> 20) << " MiB, " << impl_->cfg.ddr.latency_min_ns << "-"
     << impl_->cfg.ddr.latency_max_ns << " ns";
  return os.str();
}

LinkInfo SimTransport::link() const { return {impl_->cfg.link.name, impl_->cfg.core_clock_hz, true}; }

uint32_t SimTransport::read32(uint32_t offset) {
  Impl& s = *impl_;
  ++s.mmio_reads;
  s.ticks(s.cycles(s.cfg.link.mmio_read_ns));
  if (s.rc.link_down()) return 0xffffffffu;
  const auto r = s.axil->read_resp(s.bench, offset);
  return r.resp == tb::AxilMaster::kOkay ? r.data : 0xffffffffu;
}

void SimTransport::write32(uint32_t offset, uint32_t value) {
  Impl& s = *impl_;
  ++s.mmio_writes;
  s.ticks(s.cycles(s.cfg.link.mmio_write_ns));
  if (s.rc.link_down()) return;
  if (s.lose_doorbell && offset == cr::kRegRingTail) {
    s.lose_doorbell = false;
    s.doorbell_lost = true;
    return;
  }
  s.axil->write_resp(s.bench, offset, value);
}

DmaRegion SimTransport::alloc_dma(size_t bytes, const std::string& name) {
  const size_t size = round_up(std::max<size_t>(bytes, 1), kPage);
  void* mem = std::aligned_alloc(kPage, size);
  if (mem == nullptr) throw DeviceError("sim: cannot allocate " + std::to_string(size) + " bytes for '" + name + "'");
  std::memset(mem, 0, size);
  const uint64_t bus = impl_->map(static_cast<uint8_t*>(mem), size, name);
  impl_->owned[bus] = mem;
  return {mem, bus, bytes};
}

void SimTransport::free_dma(const DmaRegion& region) {
  const auto it = impl_->owned.find(region.bus);
  if (it == impl_->owned.end()) throw InvalidArgumentError("sim: free_dma of a region this transport did not allocate");
  impl_->unmap(region.bus);
  std::free(it->second);
  impl_->owned.erase(it);
}

uint64_t SimTransport::map_foreign(void* ptr, size_t bytes, const std::string& name) {
  if (ptr == nullptr) throw InvalidArgumentError("sim: map_foreign '" + name + "': null pointer");
  return impl_->map(static_cast<uint8_t*>(ptr), std::max<size_t>(bytes, 1), name);
}

void SimTransport::unmap_foreign(uint64_t bus, size_t) { impl_->unmap(bus); }

uint32_t SimTransport::wait_interrupt(uint32_t vectors, std::chrono::nanoseconds timeout) {
  Impl& s = *impl_;
  auto& d = s.bench.dut();
  const uint64_t limit = s.cycles(static_cast<double>(timeout.count()));
  for (uint64_t c = 0; c < limit; ++c) {
    const uint32_t fired = s.rc.link_down() ? 0u : (d.irq_req_o & vectors);
    if (fired != 0) {
      d.irq_ack_i = static_cast<uint8_t>(fired);
      s.tick();
      d.irq_ack_i = 0;
      return fired;
    }
    s.tick();
  }
  return 0;
}

std::chrono::nanoseconds SimTransport::now() const { return impl_->at(impl_->bench.cycle()); }

DmaActivity SimTransport::take_dma_activity() {
  Impl& s = *impl_;
  return {s.take(s.dma_in), s.take(s.dma_out)};
}

bool SimTransport::recover_link() {
  Impl& s = *impl_;
  s.rc.set_link_down(false);
  s.rc.disarm();
  s.lose_doorbell = false;
  s.bench.dut().irq_ack_i = 0;
  s.bench.reset();  // a hot reset: the core's registers return to their reset values
  return read32(cr::kRegId) == cr::kIdValue;
}

void SimTransport::inject(const FaultPlan& plan) {
  Impl& s = *impl_;
  s.doorbell_lost = false;
  if (plan.kind == FaultKind::kLostDoorbell) {
    s.lose_doorbell = true;
    s.rc.disarm();
    return;
  }
  if (plan.kind == FaultKind::kStall && !(plan.stall_us > 0)) {
    throw InvalidArgumentError("sim: a stall fault needs stall_us > 0");
  }
  s.stall_us = plan.stall_us;
  s.lose_doorbell = false;
  s.rc.arm(plan);
}

bool SimTransport::fault_hit() const { return impl_->rc.hit() || impl_->doorbell_lost; }

bool SimTransport::fault_armed() const { return impl_->rc.armed() || impl_->lose_doorbell; }

LinkStats SimTransport::stats() const {
  const Impl& s = *impl_;
  const auto& h = s.host->stats();
  const auto& c = s.card->stats();
  return {s.bench.cycle(),  h.read_bytes,  h.write_bytes, h.read_bursts,  h.write_bursts,
          h.r_busy_cycles, s.mmio_reads, s.mmio_writes,  c.read_bytes,   c.write_bytes,
          s.rc.stray_write_bytes()};
}

const SimConfig& SimTransport::config() const { return impl_->cfg; }

}  // namespace farnn::sim
