// ModelDevice: the Device API over the bit-accurate engine model
// (farnn/engine_model.hpp). No Verilator, no cycles; results bit-identical to
// the RTL built with the same NumPe. Commands run in order on a worker
// thread; each command splits its batch slots over `threads` threads.
#pragma once

#include <memory>

#include "device_common.hpp"

namespace farnn::driver {

// model://?pes=&hidden=&batch=&banks=&depth=&threads=&card_mib=
std::unique_ptr<Device> open_model_device(const Uri& uri);

}  // namespace farnn::driver
