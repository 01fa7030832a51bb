// SimTransport: the Verilated farnn_core in-process behind a mocked PCIe root
// complex, for sim:// devices. The driver above it (CoreDevice) is the one a
// card uses.
//
//  - Host and "GPU" memory are this process's memory. alloc_dma and
//    map_foreign map its pages at bus addresses (4 KiB pages, a guard page
//    between mappings); a beat of the core's host master to a page that is
//    not mapped answers DECERR (a root complex's Unsupported Request). Bytes
//    of a mapped page outside the mapped range read as zero; writes to them
//    are dropped and counted (stray_write_bytes).
//  - The link: read round trip, posted-write latency, outstanding reads and
//    writes, goodput per direction at the configured MPS/MRRS (PcieLink),
//    completions reordered across AXI IDs; MMIO reads and writes cost their
//    latency. The card master sees a DDR model (latency 250-350 ns, refresh
//    backpressure, channel rate).
//  - Time is the core's cycle count; it advances only inside MMIO accesses and
//    wait_interrupt, so a run is a function of its seed and its calls.
//  - Faults (inject): see farnn::FaultKind. A completion timeout stalls the
//    link for cto_us and the next read beat answers SLVERR, as a bridge does
//    when a completion never arrives; a lost doorbell drops the next write of
//    RING_TAIL; a link down answers SLVERR to every beat, all ones to MMIO
//    reads and drops MMIO writes until recover_link().
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "farnn/device.hpp"
#include "farnn/transport.hpp"
#include "pcie_link.hpp"

namespace farnn::sim {

struct SimConfig {
  PcieLink link = PcieLink::preset("gen3x16");
  DdrModel ddr;
  double core_clock_hz = 0;      // required
  uint64_t seed = 1;             // memory-model randomness and the core's initial state
  uint64_t card_bytes = 1ull << 30;
  double cto_us = 50;            // the bridge's completion timeout
  std::string trace_file;        // FST waveform of the core; empty: none
};

// What moved over the host link since the transport opened.
struct LinkStats {
  uint64_t cycles = 0;
  uint64_t read_bytes = 0, write_bytes = 0;      // DMA payload host -> card, card -> host
  uint64_t read_bursts = 0, write_bursts = 0;
  uint64_t r_busy_cycles = 0;                    // cycles in which a read beat moved
  uint64_t mmio_reads = 0, mmio_writes = 0;
  uint64_t card_read_bytes = 0, card_write_bytes = 0;
  uint64_t stray_write_bytes = 0;  // strobed bytes outside every mapped range (dropped)
};

// The parameters of the farnn_core this library was built with.
struct BuiltCore {
  int num_pe, weight_depth, num_banks, weight_lanes, max_hidden, max_batch, num_chains;
  std::string describe() const;
};
BuiltCore built_core();
// The clock `make synth` estimated when this library was configured (MHz).
double synth_clock_mhz();

class SimTransport final : public Transport {
 public:
  explicit SimTransport(const SimConfig& cfg);
  ~SimTransport() override;

  std::string describe() const override;
  LinkInfo link() const override;
  uint32_t read32(uint32_t offset) override;
  void write32(uint32_t offset, uint32_t value) override;
  DmaRegion alloc_dma(size_t bytes, const std::string& name) override;
  void free_dma(const DmaRegion& region) override;
  uint64_t map_foreign(void* ptr, size_t bytes, const std::string& name) override;
  void unmap_foreign(uint64_t bus, size_t bytes) override;
  uint32_t wait_interrupt(uint32_t vectors, std::chrono::nanoseconds timeout) override;
  std::chrono::nanoseconds now() const override;
  bool recover_link() override;
  DmaActivity take_dma_activity() override;

  // Arms one fault (replacing an armed one that has not hit yet).
  void inject(const FaultPlan& plan);
  // Whether the armed fault has hit.
  bool fault_hit() const;
  // Whether a fault is armed and has not hit yet.
  bool fault_armed() const;
  LinkStats stats() const;
  const SimConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace farnn::sim
