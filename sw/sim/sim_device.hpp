// sim://: a CoreDevice over a SimTransport (the Verilated farnn_core behind
// the mocked PCIe root complex). Options are listed in farnn/device.hpp.
#pragma once

#include <memory>

#include "device_common.hpp"
#include "sim_transport.hpp"

namespace farnn::sim {

// The SimTransport behind a device opened here, for benchmarks that read the
// link statistics; `transport` is set before the device is returned.
std::unique_ptr<Device> open_sim_device(const driver::Uri& uri, SimTransport** transport = nullptr);

}  // namespace farnn::sim
