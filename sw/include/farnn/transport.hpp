// Transport: what the FARNN host driver (CoreDevice) needs from the link to a
// farnn_core, and nothing more. One implementation per way of reaching a core:
//   SimTransport  (sim://)   the Verilated farnn_core in-process behind a
//                            mocked PCIe root complex (sw/sim/)
//   PcieTransport (pcie://)  a card on the PCIe bus through Linux VFIO
//                            (sw/driver/pcie_transport.cpp)
// The driver logic (ring, descriptors, windows, doorbells, completions,
// error decoding, recovery) is written once against this interface.
//
// Addresses: `offset` is a byte offset into BAR0 (the core's CSR block);
// a bus address is what the core's host master puts on AXI (an IOVA on a
// card, a bus address of the mocked root complex in the simulation).
// Time: device time. On a card it is the host's steady clock; in the
// simulation it advances only while the driver waits (MMIO accesses and
// wait_interrupt), so a simulated run is deterministic for a given seed.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace farnn {

// Host memory the card reaches by DMA: page aligned, zeroed, pinned.
struct DmaRegion {
  void* cpu = nullptr;  // the host's view
  uint64_t bus = 0;     // the card's view
  size_t bytes = 0;
};

// DMA payload over the host link in one direction, and the device-time
// window from its first beat to its last (both 0 when nothing moved).
struct DmaWindow {
  uint64_t bytes = 0;
  std::chrono::nanoseconds first{0}, last{0};
};
struct DmaActivity {
  DmaWindow to_card, to_host;  // host memory read by the card / written by it
};

// How the link behaves, for `farnn info` and for projected times.
struct LinkInfo {
  std::string name;          // "gen3x16", "gen4x16", or what the card negotiated
  double core_clock_hz = 0;  // the core's clock (projected times use it)
  bool simulated = false;
};

class Transport {
 public:
  virtual ~Transport() = default;

  // One line: what this is ("sim: Verilated farnn_core P4 behind ...", "pcie 0000:65:00.0 via VFIO").
  virtual std::string describe() const = 0;
  virtual LinkInfo link() const = 0;

  // 32-bit register access on BAR0. A read of a dead link returns 0xffffffff
  // (as PCIe does); the driver detects it.
  virtual uint32_t read32(uint32_t offset) = 0;
  virtual void write32(uint32_t offset, uint32_t value) = 0;

  // DMA-able host memory; DeviceError when it cannot be had.
  virtual DmaRegion alloc_dma(size_t bytes, const std::string& name) = 0;
  virtual void free_dma(const DmaRegion& region) = 0;
  // Foreign memory (a GPU allocation, or user memory) made reachable by the
  // card; returns its bus address. The caller keeps the memory alive until unmap.
  virtual uint64_t map_foreign(void* ptr, size_t bytes, const std::string& name) = 0;
  virtual void unmap_foreign(uint64_t bus, size_t bytes) = 0;

  // Waits until one of the interrupt vectors in the mask `vectors` (bit 0
  // completion, bit 1 error) fires or `timeout` of device time passes; returns
  // the mask of those that fired (acknowledged), 0 on timeout.
  virtual uint32_t wait_interrupt(uint32_t vectors, std::chrono::nanoseconds timeout) = 0;
  // Device time since the transport opened.
  virtual std::chrono::nanoseconds now() const = 0;
  // Brings a link that went down back (a hot reset on a card); true when the
  // core answers again. The core's registers are at their reset values after it.
  virtual bool recover_link() = 0;
  // The DMA the core did over the host link since the previous call (for
  // traces). A transport that cannot observe its card's DMA beat by beat (a
  // real card) reports nothing moved.
  virtual DmaActivity take_dma_activity() { return {}; }
};

}  // namespace farnn
