// PcieTransport: the Transport of a farnn_core card through Linux VFIO. The
// URI, the host setup it needs and what it does with GPU memory are described
// in pcie_transport.hpp.
#include "pcie_transport.hpp"

#include <endian.h>
#include <fcntl.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>

#ifdef FARNN_HAVE_CUDA
#include <cuda.h>
#include <dlfcn.h>
#endif

namespace farnn::driver {
namespace {

namespace fs = std::filesystem;
using std::chrono::steady_clock;

constexpr uint64_t kIovaBase = 0x1'0000'0000;  // above 4 GiB: the card's 64-bit addressing is used
constexpr unsigned kVectors = 2;               // 0 completion, 1 error

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

// "<call> <what> failed: <strerror>", for a system call that set `err`.
std::string sys_error(const std::string& call, const std::string& what, int err) {
  return call + " " + what + " failed: " + std::strerror(err);
}

// A file descriptor, closed when dropped.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// An mmap, unmapped when dropped.
class Mapping {
 public:
  Mapping() = default;
  Mapping(void* addr, size_t bytes) : addr_(addr), bytes_(bytes) {}
  Mapping(Mapping&& other) noexcept
      : addr_(std::exchange(other.addr_, nullptr)), bytes_(other.bytes_) {}
  Mapping& operator=(Mapping&& other) noexcept {
    std::swap(addr_, other.addr_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  ~Mapping() {
    if (addr_) ::munmap(addr_, bytes_);
  }
  void* get() const { return addr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* addr_ = nullptr;
  size_t bytes_ = 0;
};

// "0000:65:00.0" or "65:00.0" -> "0000:65:00.0", lower case as sysfs names it;
// nothing when `text` is not a PCI address.
std::optional<std::string> canonical_bdf(const std::string& text) {
  std::string bdf = std::count(text.begin(), text.end(), ':') == 1 ? "0000:" + text : text;
  if (bdf.size() != 12 || bdf[4] != ':' || bdf[7] != ':' || bdf[10] != '.') return std::nullopt;
  for (const size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11}) {
    if (!std::isxdigit(static_cast<unsigned char>(bdf[i]))) return std::nullopt;
    bdf[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(bdf[i])));
  }
  const bool device_ok = bdf[8] <= '1';  // 00..1f
  const bool function_ok = bdf[11] <= '7';
  if (!device_ok || !function_ok) return std::nullopt;
  return bdf;
}

// The first line of a sysfs attribute; empty when it cannot be read.
std::string read_attribute(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Opens a /dev/vfio node; UnavailableError when the host is not set up for it.
Fd open_vfio_node(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd >= 0) return Fd(fd);
  const int err = errno;
  if (err == ENOENT) {
    throw UnavailableError(path + " does not exist: load VFIO (modprobe vfio-pci) and check that " +
                           "/dev/vfio is visible here (inside a container, pass it through)");
  }
  if (err == EACCES || err == EPERM) {
    throw UnavailableError("permission denied on " + path +
                           ": run as root or add a udev rule, e.g. SUBSYSTEM==\"vfio\", " +
                           "GROUP=\"<your group>\", MODE=\"0660\" in /etc/udev/rules.d/");
  }
  if (err == EBUSY) {
    throw UnavailableError(path + " is busy: another process (a VM, another farnn) holds this " +
                           "IOMMU group; stop it first");
  }
  throw DeviceError(sys_error("open", path, err));
}

#ifdef FARNN_HAVE_CUDA
// Throws when `ptr` is GPU memory or CUDA managed memory. The CUDA driver is asked only if this
// process has loaded it already (RTLD_NOLOAD): without it there is no GPU
// memory here, and this library needs no libcuda to link or to run.
void refuse_gpu_memory(const void* ptr, const std::string& name) {
  void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!cuda) return;
  const auto get_attribute =
      reinterpret_cast<decltype(&cuPointerGetAttribute)>(dlsym(cuda, "cuPointerGetAttribute"));
  unsigned int type = 0, managed = 0;
  const auto address = reinterpret_cast<CUdeviceptr>(ptr);
  const bool gpu =
      get_attribute &&
      get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address) == CUDA_SUCCESS &&
      type == CU_MEMORYTYPE_DEVICE;
  const bool migrating =
      get_attribute &&
      get_attribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, address) == CUDA_SUCCESS && managed;
  dlclose(cuda);
  if (migrating) {
    throw DeviceError("map_foreign('" + name + "'): " + hex(reinterpret_cast<uintptr_t>(ptr)) +
                      " is CUDA managed memory (the cuda compute backend's), whose pages move "
                      "between the GPU and the host, so the card cannot hold a mapping of them. "
                      "Train on pcie:// with --backend cpu until the GPU memory path exists");
  }
  if (gpu) {
    throw DeviceError(
        "map_foreign('" + name + "'): " + hex(reinterpret_cast<uintptr_t>(ptr)) +
        " is GPU memory, which the card can reach only peer-to-peer. That needs the dma-buf "
        "path: the range exported with cuMemGetHandleForAddressRange("
        "CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD) on a GPU reporting "
        "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, and the dma-buf mapped into the card's IOMMU "
        "space through iommufd (IOMMU_IOAS_MAP_FILE) on a kernel that accepts a dma-buf there. "
        "This transport does not implement it; register host memory (cudaHostAlloc) and copy "
        "through it instead");
  }
}
#endif

class PcieTransport final : public Transport {
 public:
  PcieTransport(const std::string& bdf, double core_clock_hz);

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

 private:
  // One IOVA range the card reaches: memory this transport allocated
  // (alloc_dma, `owned` set) or the caller's (map_foreign, `owned` empty).
  struct IommuMapping {
    uint64_t bytes;  // page-rounded
    Mapping owned;
    std::string name;
  };
  using Mappings = std::map<uint64_t, IommuMapping>;  // by IOVA

  void check_sysfs();
  void attach_group();
  void map_bar0();
  void enable_bus_master();
  void enable_interrupts();
  vfio_region_info region_info(uint32_t index, const std::string& what) const;
  uint32_t irq_count(uint32_t index) const;
  volatile uint32_t* reg(uint32_t offset, const char* access) const;
  uint64_t round_up(uint64_t bytes) const { return (bytes + page_ - 1) & ~(page_ - 1); }
  uint64_t free_iova(uint64_t bytes) const;
  uint64_t map_iommu(void* vaddr, uint64_t bytes, const std::string& name, Mapping owned);
  void unmap_iommu(Mappings::iterator it);

  const std::string bdf_;
  const std::string sysfs_;  // /sys/bus/pci/devices/<bdf>
  const double core_clock_hz_;
  const uint64_t page_;
  const steady_clock::time_point opened_;
  int group_id_ = -1;
  // Released in reverse order: the DMA buffers' memory (still pinned by the
  // IOMMU), the eventfds and BAR0, then the device (VFIO turns off its bus
  // mastering and interrupts), then the group and the container (which drop
  // the IOMMU mappings and unpin their pages).
  Fd container_;
  Fd group_;
  Fd device_;
  Mapping bar0_;
  std::array<Fd, kVectors> events_;
  std::mutex iommu_mutex_;  // guards mappings_
  Mappings mappings_;
};

PcieTransport::PcieTransport(const std::string& bdf, double core_clock_hz)
    : bdf_(bdf),
      sysfs_("/sys/bus/pci/devices/" + bdf),
      core_clock_hz_(core_clock_hz),
      page_(static_cast<uint64_t>(::sysconf(_SC_PAGESIZE))),
      opened_(steady_clock::now()) {
  check_sysfs();
  attach_group();
  map_bar0();
  enable_bus_master();
  enable_interrupts();
}

// The device exists, has an IOMMU group and is bound to vfio-pci.
void PcieTransport::check_sysfs() {
  std::error_code ec;
  if (!fs::exists(sysfs_, ec)) {
    throw UnavailableError("no PCI device " + bdf_ + ": " + sysfs_ +
                           " does not exist; check lspci -D for the card's address (is the card "
                           "seated and its FPGA configured? after configuring it: echo 1 > "
                           "/sys/bus/pci/rescan)");
  }
  // Checked before the driver: vfio-pci cannot bind a device without a group.
  const fs::path group_link = sysfs_ + "/iommu_group";
  const std::string group = fs::read_symlink(group_link, ec).filename().string();
  const auto [end, parse_error] =
      std::from_chars(group.data(), group.data() + group.size(), group_id_);
  if (ec || group.empty() || parse_error != std::errc() || end != group.data() + group.size()) {
    throw UnavailableError("PCI device " + bdf_ + " has no IOMMU group (" + group_link.string() +
                           " is missing): enable the IOMMU (VT-d / AMD-Vi in the firmware, "
                           "intel_iommu=on / amd_iommu=on on the kernel command line) and reboot");
  }
  const std::string driver = fs::read_symlink(sysfs_ + "/driver", ec).filename().string();
  if (ec || driver != "vfio-pci") {
    std::string how = "bind it as root: modprobe vfio-pci; ";
    if (!ec) how += "echo " + bdf_ + " > " + sysfs_ + "/driver/unbind; ";
    how += "echo vfio-pci > " + sysfs_ + "/driver_override; echo " + bdf_ +
           " > /sys/bus/pci/drivers_probe";
    throw UnavailableError("PCI device " + bdf_ + " is " +
                           (ec ? "bound to no driver" : "bound to " + driver) + ", not vfio-pci; " +
                           how);
  }
}

// Container with the type1v2 IOMMU, the group in it, the device's fd.
void PcieTransport::attach_group() {
  container_ = open_vfio_node("/dev/vfio/vfio");
  if (::ioctl(container_.get(), VFIO_GET_API_VERSION) != VFIO_API_VERSION) {
    throw UnavailableError(
        "/dev/vfio/vfio speaks an unknown VFIO API version (this build expects " +
        std::to_string(VFIO_API_VERSION) + ")");
  }
  if (::ioctl(container_.get(), VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) <= 0) {
    throw UnavailableError(
        "VFIO on this host has no type1v2 IOMMU backend; modprobe "
        "vfio_iommu_type1 and check that the IOMMU is on");
  }
  const std::string group_path = "/dev/vfio/" + std::to_string(group_id_);
  group_ = open_vfio_node(group_path);
  vfio_group_status status{};
  status.argsz = sizeof status;
  if (::ioctl(group_.get(), VFIO_GROUP_GET_STATUS, &status) < 0) {
    const int err = errno;
    throw DeviceError(sys_error("VFIO_GROUP_GET_STATUS", "on " + group_path, err));
  }
  if (!(status.flags & VFIO_GROUP_FLAGS_VIABLE)) {
    throw UnavailableError("IOMMU group " + std::to_string(group_id_) + " of " + bdf_ +
                           " is not viable: every device in it (ls /sys/kernel/iommu_groups/" +
                           std::to_string(group_id_) +
                           "/devices) must be bound to vfio-pci or to no driver");
  }
  int container = container_.get();
  if (::ioctl(group_.get(), VFIO_GROUP_SET_CONTAINER, &container) < 0) {
    const int err = errno;
    throw DeviceError(sys_error("VFIO_GROUP_SET_CONTAINER", "on " + group_path, err));
  }
  if (::ioctl(container_.get(), VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU) < 0) {
    const int err = errno;
    throw DeviceError(sys_error("VFIO_SET_IOMMU(VFIO_TYPE1v2_IOMMU)", "on /dev/vfio/vfio", err) +
                      "; check dmesg for the IOMMU's complaint");
  }
  const int device = ::ioctl(group_.get(), VFIO_GROUP_GET_DEVICE_FD, bdf_.c_str());
  if (device < 0) {
    const int err = errno;
    throw DeviceError(
        sys_error("VFIO_GROUP_GET_DEVICE_FD", "(" + bdf_ + ") on " + group_path, err) +
        (err == EBUSY ? "; another process has the device open" : ""));
  }
  device_ = Fd(device);
}

vfio_region_info PcieTransport::region_info(uint32_t index, const std::string& what) const {
  vfio_region_info info{};
  info.argsz = sizeof info;
  info.index = index;
  if (::ioctl(device_.get(), VFIO_DEVICE_GET_REGION_INFO, &info) < 0) {
    const int err = errno;
    throw DeviceError(sys_error("VFIO_DEVICE_GET_REGION_INFO", "(" + what + ") of " + bdf_, err));
  }
  return info;
}

void PcieTransport::map_bar0() {
  const vfio_region_info bar = region_info(VFIO_PCI_BAR0_REGION_INDEX, "BAR0");
  if (bar.size == 0) {
    throw UnavailableError("PCI device " + bdf_ + " has no BAR0; is it a FARNN card (lspci -vs " +
                           bdf_ + ")?");
  }
  if (!(bar.flags & VFIO_REGION_INFO_FLAG_MMAP)) {
    throw UnavailableError("BAR0 of " + bdf_ + " cannot be mmapped through VFIO (its region " +
                           "flags " + hex(bar.flags) + " lack VFIO_REGION_INFO_FLAG_MMAP)");
  }
  void* p = ::mmap(nullptr, bar.size, PROT_READ | PROT_WRITE, MAP_SHARED, device_.get(),
                   static_cast<off_t>(bar.offset));
  if (p == MAP_FAILED) {
    const int err = errno;
    throw DeviceError(
        sys_error("mmap", "of BAR0 (" + std::to_string(bar.size) + " bytes) of " + bdf_, err) +
        "; if the MSI-X table lies in BAR0, the kernel must allow mapping it "
        "(Linux >= 4.16)");
  }
  bar0_ = Mapping(p, bar.size);
}

// Memory decoding and bus mastering on in the PCI command register.
void PcieTransport::enable_bus_master() {
  const vfio_region_info config = region_info(VFIO_PCI_CONFIG_REGION_INDEX, "config space");
  const auto at = static_cast<off_t>(config.offset + PCI_COMMAND);
  uint16_t command = 0;
  ssize_t n = ::pread(device_.get(), &command, sizeof command, at);
  if (n != sizeof command) {
    const int err = errno;
    throw DeviceError(
        sys_error("pread", "of the PCI command register of " + bdf_, n < 0 ? err : EIO));
  }
  command = htole16(le16toh(command) | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
  n = ::pwrite(device_.get(), &command, sizeof command, at);
  if (n != sizeof command) {
    const int err = errno;
    throw DeviceError(
        sys_error("pwrite", "of the PCI command register of " + bdf_, n < 0 ? err : EIO));
  }
}

uint32_t PcieTransport::irq_count(uint32_t index) const {
  vfio_irq_info info{};
  info.argsz = sizeof info;
  info.index = index;
  if (::ioctl(device_.get(), VFIO_DEVICE_GET_IRQ_INFO, &info) < 0) {
    const int err = errno;
    throw DeviceError(sys_error("VFIO_DEVICE_GET_IRQ_INFO", "of " + bdf_, err));
  }
  return info.count;
}

// Vectors 0 and 1 of MSI-X when the card has them there, else of MSI, each
// signalling its eventfd.
void PcieTransport::enable_interrupts() {
  uint32_t index = VFIO_PCI_MSIX_IRQ_INDEX;
  if (irq_count(index) < kVectors) index = VFIO_PCI_MSI_IRQ_INDEX;
  if (irq_count(index) < kVectors) {
    throw UnavailableError(
        "PCI device " + bdf_ + " offers neither MSI-X nor MSI with " + std::to_string(kVectors) +
        " vectors (completion, error); is its FPGA configured with the FARNN shell?");
  }
  std::array<int32_t, kVectors> fds{};
  for (unsigned v = 0; v < kVectors; ++v) {
    const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) {
      const int err = errno;
      throw DeviceError(sys_error("eventfd", "for interrupt vector " + std::to_string(v), err));
    }
    events_[v] = Fd(fd);
    fds[v] = fd;
  }
  alignas(vfio_irq_set) std::array<uint8_t, sizeof(vfio_irq_set) + sizeof fds> buffer{};
  auto* set = reinterpret_cast<vfio_irq_set*>(buffer.data());
  set->argsz = buffer.size();
  set->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
  set->index = index;
  set->start = 0;
  set->count = kVectors;
  std::memcpy(set->data, fds.data(), sizeof fds);
  if (::ioctl(device_.get(), VFIO_DEVICE_SET_IRQS, set) < 0) {
    const int err = errno;
    throw DeviceError(sys_error("VFIO_DEVICE_SET_IRQS",
                                std::string("(") +
                                    (index == VFIO_PCI_MSIX_IRQ_INDEX ? "MSI-X" : "MSI") + ", " +
                                    std::to_string(kVectors) + " vectors) of " + bdf_,
                                err));
  }
}

std::string PcieTransport::describe() const {
  return "pcie " + bdf_ + " via VFIO (group " + std::to_string(group_id_) + "), BAR0 " +
         std::to_string(bar0_.bytes()) + " bytes";
}

LinkInfo PcieTransport::link() const {
  const std::string speed = read_attribute(sysfs_ + "/current_link_speed");  // "8.0 GT/s PCIe"
  const std::string width = read_attribute(sysfs_ + "/current_link_width");  // "16"
  LinkInfo info;
  info.name = speed.empty() || width.empty() ? "PCIe (link speed unknown)" : speed + " x" + width;
  info.core_clock_hz = core_clock_hz_;
  info.simulated = false;
  return info;
}

volatile uint32_t* PcieTransport::reg(uint32_t offset, const char* access) const {
  if (offset % 4 != 0 || offset >= bar0_.bytes() || bar0_.bytes() - offset < 4) {
    throw InvalidArgumentError(std::string(access) + " at " + hex(offset) + ": outside BAR0 of " +
                               bdf_ + " (" + std::to_string(bar0_.bytes()) +
                               " bytes) or not 4-byte aligned");
  }
  return reinterpret_cast<volatile uint32_t*>(static_cast<char*>(bar0_.get()) + offset);
}

uint32_t PcieTransport::read32(uint32_t offset) {
  const uint32_t value = *reg(offset, "read32");
  // DMA data is read after the register that says it is there.
  std::atomic_thread_fence(std::memory_order_acquire);
  return value;
}

void PcieTransport::write32(uint32_t offset, uint32_t value) {
  volatile uint32_t* r = reg(offset, "write32");
  // DMA data written before a doorbell is in memory when the card sees it.
  std::atomic_thread_fence(std::memory_order_release);
  *r = value;
}

// First fit from kIovaBase, leaving a guard page after every mapping (a card
// running past a buffer's end faults in the IOMMU instead of hitting the next one).
uint64_t PcieTransport::free_iova(uint64_t bytes) const {
  uint64_t at = kIovaBase;
  for (const auto& [iova, mapping] : mappings_) {
    if (at + bytes + page_ <= iova) break;
    at = iova + mapping.bytes + page_;
  }
  return at;
}

uint64_t PcieTransport::map_iommu(void* vaddr, uint64_t bytes, const std::string& name,
                                  Mapping owned) {
  std::lock_guard lock(iommu_mutex_);
  const uint64_t iova = free_iova(bytes);
  vfio_iommu_type1_dma_map map{};
  map.argsz = sizeof map;
  map.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
  map.vaddr = reinterpret_cast<uintptr_t>(vaddr);
  map.iova = iova;
  map.size = bytes;
  if (::ioctl(container_.get(), VFIO_IOMMU_MAP_DMA, &map) < 0) {
    const int err = errno;
    std::string message = sys_error("VFIO_IOMMU_MAP_DMA",
                                    "of '" + name + "' (" + std::to_string(bytes) +
                                        " bytes at IOVA " + hex(iova) + ") for " + bdf_,
                                    err);
    if (err == ENOMEM) {
      message +=
          "; pinned memory counts against RLIMIT_MEMLOCK: raise it (ulimit -l, memlock in "
          "/etc/security/limits.conf) or run as root";
    } else if (err == EFAULT) {
      message +=
          "; the range is not host memory of this process (GPU memory cannot be mapped this way)";
    } else if (err == ENOSPC) {
      message +=
          "; too many mappings (vfio_iommu_type1 dma_entry_limit): use fewer, larger buffers";
    }
    throw DeviceError(message);
  }
  mappings_.emplace(iova, IommuMapping{bytes, std::move(owned), name});
  return iova;
}

void PcieTransport::unmap_iommu(Mappings::iterator it) {
  vfio_iommu_type1_dma_unmap unmap{};
  unmap.argsz = sizeof unmap;
  unmap.iova = it->first;
  unmap.size = it->second.bytes;
  if (::ioctl(container_.get(), VFIO_IOMMU_UNMAP_DMA, &unmap) < 0) {
    const int err = errno;
    throw DeviceError(
        sys_error("VFIO_IOMMU_UNMAP_DMA",
                  "of '" + it->second.name + "' (IOVA " + hex(it->first) + ") for " + bdf_, err));
  }
  mappings_.erase(it);
}

// Shared anonymous memory, zero and populated. It is not mlocked as well: the
// IOMMU mapping pins it, and an mlock would count it twice against RLIMIT_MEMLOCK.
DmaRegion PcieTransport::alloc_dma(size_t bytes, const std::string& name) {
  const uint64_t rounded = round_up(std::max<size_t>(bytes, 1));
  void* p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    throw DeviceError(
        sys_error("mmap", "of " + std::to_string(rounded) + " bytes for DMA buffer '" + name + "'",
                  err) +
        "; free host memory or allocate less");
  }
  const uint64_t bus = map_iommu(p, rounded, name, Mapping(p, rounded));
  return {p, bus, bytes};
}

void PcieTransport::free_dma(const DmaRegion& region) {
  std::lock_guard lock(iommu_mutex_);
  const auto it = mappings_.find(region.bus);
  if (it == mappings_.end() || !it->second.owned.get() || it->second.owned.get() != region.cpu) {
    throw InvalidArgumentError("free_dma: no DMA buffer at bus address " + hex(region.bus) +
                               " on " + bdf_ + " (freed twice, or not from alloc_dma?)");
  }
  unmap_iommu(it);
}

uint64_t PcieTransport::map_foreign(void* ptr, size_t bytes, const std::string& name) {
  if (!ptr) throw InvalidArgumentError("map_foreign('" + name + "'): a null pointer");
#ifdef FARNN_HAVE_CUDA
  refuse_gpu_memory(ptr, name);
#endif
  const uint64_t start = reinterpret_cast<uintptr_t>(ptr);
  const uint64_t first_page = start & ~(page_ - 1);
  const uint64_t iova =
      map_iommu(reinterpret_cast<void*>(first_page),
                round_up(start + std::max<size_t>(bytes, 1)) - first_page, name, Mapping());
  return iova + (start - first_page);
}

void PcieTransport::unmap_foreign(uint64_t bus, size_t bytes) {
  std::lock_guard lock(iommu_mutex_);
  const uint64_t iova = bus & ~(page_ - 1);
  const auto it = mappings_.find(iova);
  if (it == mappings_.end() || it->second.owned.get() ||
      round_up(bus - iova + std::max<size_t>(bytes, 1)) != it->second.bytes) {
    throw InvalidArgumentError("unmap_foreign: no foreign mapping of " + std::to_string(bytes) +
                               " bytes at bus address " + hex(bus) + " on " + bdf_);
  }
  unmap_iommu(it);
}

uint32_t PcieTransport::wait_interrupt(uint32_t vectors, std::chrono::nanoseconds timeout) {
  if (vectors >> kVectors != 0) {
    throw InvalidArgumentError("wait_interrupt: vector mask " + hex(vectors) +
                               " names vectors that do not exist (bit 0 completion, bit 1 error)");
  }
  std::array<pollfd, kVectors> events{};
  for (unsigned v = 0; v < kVectors; ++v) {
    events[v] = {(vectors >> v & 1) ? events_[v].get() : -1, POLLIN, 0};  // ppoll skips fd -1
  }
  const steady_clock::time_point start = steady_clock::now();
  const steady_clock::time_point deadline =
      timeout > steady_clock::time_point::max() - start
          ? steady_clock::time_point::max()
          : start + std::max(timeout, std::chrono::nanoseconds::zero());
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::max(deadline - steady_clock::now(), steady_clock::duration::zero()));
    const timespec wait{static_cast<time_t>(left.count() / 1'000'000'000),
                        static_cast<long>(left.count() % 1'000'000'000)};
    const int ready = ::ppoll(events.data(), events.size(), &wait, nullptr);
    if (ready == 0) return 0;
    if (ready < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      throw DeviceError(sys_error("ppoll", "on the interrupt eventfds of " + bdf_, err));
    }
    uint32_t fired = 0;
    for (unsigned v = 0; v < kVectors; ++v) {
      if (!(events[v].revents & POLLIN)) continue;
      uint64_t count = 0;  // reading acknowledges (resets the eventfd)
      if (::read(events[v].fd, &count, sizeof count) == sizeof count) {
        fired |= 1u << v;
      } else if (errno != EAGAIN) {  // EAGAIN: another thread took it
        const int err = errno;
        throw DeviceError(sys_error(
            "read", "of the eventfd of interrupt vector " + std::to_string(v) + " of " + bdf_,
            err));
      }
    }
    if (fired != 0) return fired;
  }
}

std::chrono::nanoseconds PcieTransport::now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(steady_clock::now() - opened_);
}

bool PcieTransport::recover_link() {
  if (::ioctl(device_.get(), VFIO_DEVICE_RESET) < 0) {
    const int err = errno;
    throw DeviceError(sys_error("VFIO_DEVICE_RESET", "of " + bdf_, err) +
                      "; if the card has no reset VFIO can use (function-level or bus reset), "
                      "reload its FPGA, then remove and rescan it (echo 1 > " +
                      sysfs_ + "/remove; echo 1 > /sys/bus/pci/rescan)");
  }
  return read32(0) != 0xffffffff;
}

}  // namespace

std::unique_ptr<Transport> open_pcie_transport(const Uri& uri) {
  uri.allow({"core_mhz"});
  const double core_clock_hz = 1e6 * static_cast<double>(uri.positive("core_mhz", 0, 1000));
  const std::optional<std::string> bdf = canonical_bdf(uri.target);
  if (!bdf) {
    throw UnavailableError(
        "'" + uri.text + "': '" + uri.target +
        "' is not a PCI address; expected pcie://DDDD:BB:DD.F (domain:bus:device."
        "function in hex, device 00..1f, function 0..7, e.g. pcie://0000:65:00.0 as "
        "lspci -D prints it) or the short form pcie://BB:DD.F");
  }
  return std::make_unique<PcieTransport>(*bdf, core_clock_hz);
}

}  // namespace farnn::driver
