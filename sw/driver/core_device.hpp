// CoreDevice: the host driver of a farnn_core, written once against the
// Transport interface (farnn/transport.hpp) and used by sim:// (SimTransport)
// and pcie:// (PcieTransport).
//
// What it does, in order of a command's life:
//  - open: checks ID and VERSION (a different major version is refused),
//    soft-resets the core (whatever a crashed process left is discarded),
//    reads CAPS, allocates the descriptor ring, the completion write-back
//    word and staging memory (per-slot lengths, zero and discard states,
//    weight images), programs the ring, the watchdog and the interrupts.
//  - buffers: alloc() is DMA memory of the transport; register_memory()
//    maps foreign memory. The address windows cover every mapping (merged
//    to the core's window count by closing the smallest gaps) and are
//    rewritten only while no command is in flight.
//  - load(): packs w_hh/b_hh into the engine's weight image on the host
//    (when load() is called) and queues a LOAD of it.
//  - forward()/backward(): one descriptor each, pushed to the ring, doorbell
//    on RING_TAIL; the gate store is card memory (first-fit allocator).
//  - completion: the core writes RING_DONE to host memory and raises the
//    completion interrupt; Job::wait() waits on interrupts in slices of
//    device time and reads the write-back word (no register polling).
//  - errors: an error interrupt or a halted STATUS is decoded from STATUS
//    and the fault log into a typed error naming the command, the error
//    code, the stream and the buffer the faulting address lies in; a lost
//    doorbell (core idle, RING_TAIL not what was written) and a link down
//    (registers read all ones) are detected by the driver. After any of them
//    the core is reset at once (soft reset, or recover_link() after a link
//    down); the commands queued after the one at fault, and one it stopped
//    unfinished, fail with NotRunError, and later ones too until reset().
#pragma once

#include <functional>
#include <memory>

#include "device_common.hpp"
#include "farnn/transport.hpp"

namespace farnn::driver {

struct CoreOptions {
  std::string kind = "sim";       // Capabilities::kind
  double watchdog_us = 1000;      // the core's no-progress limit (WATCHDOG register)
  uint64_t card_bytes = 0;        // gate-store memory; 0: what CAPS3.addr_width spans
  double clock_hz = 0;            // 0: the transport's, else CLOCK_KHZ
  uint32_t ring_entries = 64;
  std::function<void(const FaultPlan&)> inject;  // fault injection, where the transport has it
  std::function<bool()> fault_armed;             // with inject: an armed fault has not hit yet
};

std::unique_ptr<Device> open_core_device(std::unique_ptr<Transport> transport, const CoreOptions& options);

}  // namespace farnn::driver
