// PcieTransport (pcie://) without a card: malformed addresses, unknown and bad
// options, and addresses of devices that are missing or not set up for VFIO
// are refused with the error type and a message naming what is wrong and what
// was expected. Nothing here needs hardware or root.
#include <gtest/gtest.h>

#include <filesystem>

#include "pcie_transport.hpp"

namespace {

using namespace farnn;
namespace fs = std::filesystem;

// The message of the `Error` that opening `uri` throws (another error type
// fails the test by escaping it).
template <typename Error>
std::string refusal(const std::string& uri) {
  try {
    driver::open_pcie_transport(driver::Uri::parse(uri));
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << uri << " opened";
  return {};
}

bool pci_device_exists(const std::string& bdf) {
  return fs::exists("/sys/bus/pci/devices/" + bdf);
}

TEST(PcieTransport, MalformedAddressesAreRefusedWithTheExpectedFormat) {
  for (const std::string target :
       {"", "65:00", "0000:65:00", "0000:65:00.8", "0000:65:20.0", "0000:65:0g.0", "zz:00.0",
        "0000:65:00.0.1", "00000:65:00.0", "0000-65-00.0", "1:2:3.4", "0:65:00.0", "card0"}) {
    SCOPED_TRACE(target);
    const std::string message = refusal<UnavailableError>("pcie://" + target);
    EXPECT_NE(message.find("'" + target + "' is not a PCI address"), std::string::npos) << message;
    EXPECT_NE(message.find("pcie://DDDD:BB:DD.F"), std::string::npos) << message;
    EXPECT_NE(message.find("pcie://BB:DD.F"), std::string::npos) << message;
  }
}

TEST(PcieTransport, MissingDeviceIsRefusedNamingItsSysfsPath) {
  if (pci_device_exists("0000:ff:1f.7")) GTEST_SKIP() << "this host has a PCI device 0000:ff:1f.7";
  // Long form, short form and upper case all name the same canonical address.
  for (const std::string uri : {"pcie://0000:ff:1f.7", "pcie://ff:1f.7", "pcie://0000:FF:1F.7"}) {
    SCOPED_TRACE(uri);
    const std::string message = refusal<UnavailableError>(uri);
    EXPECT_NE(message.find("no PCI device 0000:ff:1f.7"), std::string::npos) << message;
    EXPECT_NE(message.find("/sys/bus/pci/devices/0000:ff:1f.7 does not exist"), std::string::npos)
        << message;
    EXPECT_NE(message.find("lspci"), std::string::npos) << message;
  }
}

// 0000:00:00.0 (the host bridge on most machines): whichever setup step it
// lacks is the one the message names.
TEST(PcieTransport, DeviceNotSetUpForVfioIsRefusedNamingTheMissingStep) {
  const std::string bdf = "0000:00:00.0";
  const fs::path sysfs = "/sys/bus/pci/devices/" + bdf;
  const std::string message = refusal<UnavailableError>("pcie://00:00.0");
  if (!pci_device_exists(bdf)) {
    EXPECT_NE(message.find("no PCI device " + bdf), std::string::npos) << message;
  } else if (!fs::is_symlink(sysfs / "iommu_group")) {
    EXPECT_NE(message.find(bdf + " has no IOMMU group"), std::string::npos) << message;
    EXPECT_NE(message.find("intel_iommu=on / amd_iommu=on"), std::string::npos) << message;
  } else if (!fs::is_symlink(sysfs / "driver") ||
             fs::read_symlink(sysfs / "driver").filename() != "vfio-pci") {
    EXPECT_NE(message.find(", not vfio-pci"), std::string::npos) << message;
    EXPECT_NE(message.find("echo vfio-pci > " + sysfs.string() + "/driver_override"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("echo " + bdf + " > /sys/bus/pci/drivers_probe"), std::string::npos)
        << message;
  } else {
    GTEST_SKIP() << bdf << " is bound to vfio-pci on this host";
  }
}

TEST(PcieTransport, UnknownOptionIsRefusedListingTheKnownOnes) {
  const std::string message = refusal<InvalidArgumentError>("pcie://0000:ff:1f.7?clock=250");
  EXPECT_NE(message.find("unknown option 'clock'"), std::string::npos) << message;
  EXPECT_NE(message.find("pcie:// knows: core_mhz"), std::string::npos) << message;
}

TEST(PcieTransport, CoreMhzMustBeAnIntegerUpTo1000) {
  for (const std::string value : {"0", "-5", "fast", "250.5", "", "1001", "250000000", "+250"}) {
    SCOPED_TRACE(value);
    const std::string message =
        refusal<InvalidArgumentError>("pcie://0000:ff:1f.7?core_mhz=" + value);
    EXPECT_NE(message.find("core_mhz=" + value + " must be an integer from 1 to 1000"), std::string::npos)
        << message;
  }
}

// Options are checked before the address and the device: a good core_mhz on
// a missing device gets as far as the device.
TEST(PcieTransport, GoodCoreMhzIsAccepted) {
  if (pci_device_exists("0000:ff:1f.7")) GTEST_SKIP() << "this host has a PCI device 0000:ff:1f.7";
  const std::string message = refusal<UnavailableError>("pcie://0000:ff:1f.7?core_mhz=250");
  EXPECT_NE(message.find("no PCI device 0000:ff:1f.7"), std::string::npos) << message;
}

}  // namespace
