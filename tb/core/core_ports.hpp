// farnn_core's two AXI4 masters bound to AxiMemory models: the signal
// bindings shared by the core testbench, its benchmark and the simulated
// device (sw/sim), so that each one drives the same ports the same way.
#pragma once

#include <verilated.h>

#include "Vfarnn_core.h"
#include "axi_memory.hpp"

namespace farnn::tb {

using CoreMemory = AxiMemory<16>;  // 512-bit data

namespace detail {
inline void put_beat(VlWide<16>& dst, const CoreMemory::Beat& b) {
  for (int i = 0; i < 16; ++i) dst.at(i) = b[i];
}
inline CoreMemory::Beat get_beat(const VlWide<16>& src) {
  CoreMemory::Beat b;
  for (int i = 0; i < 16; ++i) b[i] = src.at(i);
  return b;
}
}  // namespace detail

#define FARNN_CORE_AXI_PORTS(P)                                                                     \
  using Mem = CoreMemory;                                                                           \
  Mem::Ports p;                                                                                     \
  p.arvalid = [&d] { return d.P##arvalid != 0; };                                                   \
  p.ar = [&d] {                                                                                     \
    return Mem::Addr{d.P##arid, static_cast<uint64_t>(d.P##araddr), d.P##arlen, d.P##arsize,        \
                     d.P##arburst};                                                                 \
  };                                                                                                \
  p.set_arready = [&d](bool r) { d.P##arready = r; };                                               \
  p.set_r = [&d](bool v, const Mem::RBeat& b) {                                                     \
    d.P##rvalid = v;                                                                                \
    d.P##rid = b.id;                                                                                \
    detail::put_beat(d.P##rdata, b.data);                                                           \
    d.P##rresp = static_cast<uint8_t>(b.resp);                                                      \
    d.P##rlast = b.last;                                                                            \
  };                                                                                                \
  p.rready = [&d] { return d.P##rready != 0; };                                                     \
  p.awvalid = [&d] { return d.P##awvalid != 0; };                                                   \
  p.aw = [&d] {                                                                                     \
    return Mem::Addr{d.P##awid, static_cast<uint64_t>(d.P##awaddr), d.P##awlen, d.P##awsize,        \
                     d.P##awburst};                                                                 \
  };                                                                                                \
  p.set_awready = [&d](bool r) { d.P##awready = r; };                                               \
  p.wvalid = [&d] { return d.P##wvalid != 0; };                                                     \
  p.w = [&d] {                                                                                      \
    return Mem::WBeat{detail::get_beat(d.P##wdata), static_cast<uint64_t>(d.P##wstrb), d.P##wlast != 0}; \
  };                                                                                                \
  p.set_wready = [&d](bool r) { d.P##wready = r; };                                                 \
  p.set_b = [&d](bool v, const Mem::BResp& b) {                                                     \
    d.P##bvalid = v;                                                                                \
    d.P##bid = b.id;                                                                                \
    d.P##bresp = static_cast<uint8_t>(b.resp);                                                      \
  };                                                                                                \
  p.bready = [&d] { return d.P##bready != 0; };                                                     \
  return p;

inline CoreMemory::Ports core_host_ports(Vfarnn_core& d) { FARNN_CORE_AXI_PORTS(m_axi_host_) }
inline CoreMemory::Ports core_card_ports(Vfarnn_core& d) { FARNN_CORE_AXI_PORTS(m_axi_card_) }
#undef FARNN_CORE_AXI_PORTS

}  // namespace farnn::tb
