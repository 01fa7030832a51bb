// Device::open: the URI's kind picks the device. Kept apart from the driver
// library so that the driver does not depend on the simulated core.
#include "core_device.hpp"
#include "device_common.hpp"
#include "model_device.hpp"
#include "pcie_transport.hpp"
#include "sim_device.hpp"

namespace farnn {
namespace {

// pcie://: the transport takes the link options, the driver its own.
std::unique_ptr<Device> open_pcie_device(const driver::Uri& uri) {
  uri.allow({"core_mhz", "watchdog_us", "card_mib"});
  driver::Uri link = uri;
  link.options.erase("watchdog_us");
  link.options.erase("card_mib");
  driver::CoreOptions opt;
  opt.kind = "pcie";
  opt.watchdog_us = static_cast<double>(uri.positive("watchdog_us", 1000, 60'000'000));
  opt.card_bytes = static_cast<uint64_t>(uri.positive("card_mib", 0, 1L << 20)) << 20;
  return driver::open_core_device(driver::open_pcie_transport(link), opt);
}

}  // namespace

std::unique_ptr<Device> Device::open(const std::string& uri) {
  const driver::Uri u = driver::Uri::parse(uri);
  if (u.scheme == "model") return driver::open_model_device(u);
  if (u.scheme == "sim") return sim::open_sim_device(u);
  if (u.scheme == "pcie") return open_pcie_device(u);
  throw UnavailableError("'" + uri + "': unknown device kind '" + u.scheme + "' (known: model://, sim://, pcie://)");
}

}  // namespace farnn
