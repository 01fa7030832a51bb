// PcieTransport (pcie://): a farnn_core card on the PCIe bus, reached through
// Linux VFIO (vfio-pci, type1v2 IOMMU). Thin and Linux-only: BAR0 mmapped for
// the CSRs, two MSI/MSI-X vectors on eventfds (0 completion, 1 error), host
// memory pinned and mapped into the card's IOMMU space (IOVAs from 4 GiB up, a
// guard page between mappings), VFIO_DEVICE_RESET for recover_link().
//
//   pcie://DDDD:BB:DD.F[?core_mhz=N]     e.g. pcie://0000:65:00.0 (as `lspci -D` prints it)
//   pcie://BB:DD.F[?core_mhz=N]          short form, domain 0000
//   core_mhz  the core's clock for LinkInfo; absent: 0 (the driver reads CLOCK_KHZ)
//
// Setup (once, as root): IOMMU on (intel_iommu=on / amd_iommu=on), the card
// bound to vfio-pci, /dev/vfio/<group> accessible, and RLIMIT_MEMLOCK (ulimit -l)
// large enough for the pinned buffers. Every missing piece is an
// UnavailableError that says which and how to fix it.
//
// GPU memory: map_foreign refuses a CUDA device pointer with a DeviceError
// (built with FARNN_HAVE_CUDA; found through the CUDA driver the process has
// already loaded). Peer-to-peer needs the GPU range exported as a dma-buf
// (cuMemGetHandleForAddressRange) and an iommufd kernel that maps a dma-buf;
// that path is not implemented here. Stage GPU data through host buffers.
#pragma once

#include <memory>

#include "device_common.hpp"
#include "farnn/transport.hpp"

namespace farnn::driver {

// Opens the card at uri.target. Throws UnavailableError when the address is
// malformed or the card is missing or not set up for VFIO, InvalidArgumentError
// for an unknown or bad option, DeviceError when a VFIO call fails.
std::unique_ptr<Transport> open_pcie_transport(const Uri& uri);

}  // namespace farnn::driver
