// Timing presets of the mocked PCIe link (sim://) and the card's DDR, and the
// arithmetic that turns them into per-cycle figures at the core clock.
//
// Link goodput per direction = raw rate (GT/s x lanes x 128/130)
//   x (1 - SKP ordered sets: 4 B per 1538 B)
//   x payload / (payload + TLP overhead)   (MWr: 24 B per TLP of MPS bytes;
//                                           CplD: 20 B per completion of up to MPS)
//   x (1 - DLLP share)                      (ACK and flow-control DLLPs)
// The DLLP share (9.5 %) is the one figure fitted: with it the formula gives
// the 13.0 GB/s DMA-write goodput at MPS 256 on Gen3 x16 that the pcie-model
// of Neugebauer et al. (SIGCOMM'18) computes (docs/driver.md cites both).
// Latencies: a read's round trip of ~1 us (FPGA<->host ping-pong figures of
// 0.85-1 us); MMIO reads are non-posted round trips, taken as the same ~1 us.
// The 250 ns of a posted write (DMA or MMIO) is a modelling choice, not a
// published figure: a posted write costs the sender only its trip to the
// bridge.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace farnn::sim {

struct PcieLink {
  std::string name;           // "gen3x16"
  double gt_per_s = 8.0;      // per lane
  int lanes = 16;
  int mps = 256;              // max payload size, bytes
  int mrrs = 512;             // max read request size, bytes
  int mwr_overhead = 24;      // bytes per write TLP beyond its payload
  int cpl_overhead = 20;      // bytes per completion TLP beyond its payload
  double dllp_share = 0.095;  // share of the link taken by ACK/FC DLLPs
  double read_latency_ns = 1000;   // read request -> first completion data
  double write_latency_ns = 250;   // last write data -> the bridge's write response
  int max_outstanding_reads = 32;  // the bridge's read tags (AXI bursts)
  int max_outstanding_writes = 32;
  double mmio_read_ns = 1000;      // CPU uncached read of BAR0, round trip
  double mmio_write_ns = 250;      // CPU posted write reaching the core

  // Known names: gen3x16, gen4x16; anything else throws std::invalid_argument listing them.
  static PcieLink preset(const std::string& name);
  static std::vector<std::string> preset_names();

  double raw_bytes_per_s() const { return gt_per_s * 1e9 * lanes * (128.0 / 130.0) / 8.0; }
  double write_goodput() const;  // bytes/s of DMA-write payload (card -> host)
  double read_goodput() const;   // bytes/s of DMA-read payload (host -> card)
  std::string describe() const;  // "gen3x16: 8 GT/s x16, MPS 256, MRRS 512, 13.0 GB/s write, ..."
};

// The card's DDR4 as the gate store sees it (one 64-bit DDR4-2400 channel).
struct DdrModel {
  double bytes_per_s = 19.2e9;
  double latency_min_ns = 250, latency_max_ns = 350;  // read: request -> data
  double refresh_stall = 0.03;  // share of cycles the controller holds ready low
};

// A rate in 64-byte beats per core cycle (the AXI memory model's limit); 0 when
// the link is faster than one beat per cycle (no limit needed).
double beats_per_cycle(double bytes_per_s, double clock_hz);
// Nanoseconds in core cycles (at least 1).
uint64_t cycles_of(double ns, double clock_hz);

}  // namespace farnn::sim
