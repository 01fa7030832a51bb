// The FARNN Device API: the one header a user of the recurrent engine reads.
//
// A Device runs the serial part of an LSTM/GRU layer — the recurrent
// matrix-vector product and the gate activations, step by step, forward and
// backward — with the layer's recurrent weights resident in a weight bank.
// Everything that batches well (the input GEMM, the gradient GEMMs, the
// update) stays with the caller's compute backend.
//
//   auto dev = farnn::Device::open("model://?pes=16");
//   auto w   = dev->alloc(G*H*H + G*H, farnn::Access::kRead, "weights");
//   ... fill w->data() with weight_hh_l0 then bias_hh_l0 ...
//   dev->load(0, shape, {w, 0}, {w, G*H*H})->wait();
//   auto store = dev->alloc_gate_store(shape);
//   dev->forward({shape, 0, {xp}, {}, {h}, {hn}, store})->wait();
//   dev->backward({shape, 0, store, {dh}, {}, {delta}, {dh0}})->wait();
//
// Devices come from a URI:
//   model://[?pes=N&hidden=N&batch=N&banks=N&depth=N&threads=N&card_mib=N]
//        the bit-accurate engine model (no Verilator): results bit-identical to
//        the RTL of the same NumPe; no cycles.
//   sim://[?pcie=gen3x16|gen4x16&core_mhz=N&card_mib=N&seed=N&watchdog_us=N
//          &cto_us=N&trace=FILE&pes=N&hidden=N&batch=N]
//        the Verilated farnn_core (4 PEs, hidden <= 32, batch <= 4, 2 banks)
//        in-process behind a mocked PCIe root complex and a DDR model; the
//        driver is the same as a card's. Reports cycles and projected times at
//        the clock `make synth` estimates (or core_mhz). pes/hidden/batch, when
//        given, must match the built core (a check, not a choice).
//   pcie://DDDD:BB:DD.F[?core_mhz=N&watchdog_us=N&card_mib=N]
//        a card bound to vfio-pci (Linux).
//
// Data is float32 in host-visible buffers the device reaches by DMA. Layouts
// (S = packed steps, PyTorch PackedSequence order: time steps in order, in
// each only the sequences still running, in slot order; [T][B] when every
// length is T; see LayerShape):
//   weights  w_hh [G*H][H] and b_hh [G*H]: PyTorch's weight_hh_l0 / bias_hh_l0
//   xp       [S][H][G]   input projection W_ih x + b_ih, unit-major (unit j's G
//                        gates together: LSTM i,f,g,o  GRU r,z,n)
//   h        [S][H]      hidden state of every step
//   state    [B][H][W]   W = 2 for LSTM (h, c), 1 for GRU (h). Initial states in
//                        slot order; FORWARD's final states in the order the
//                        sequences end (LayerShape::end_order)
//   dh       [S][H]      dL/dh_t from above (output gradient), forward order
//   carry    [B][H]      BACKWARD's initial carry, slot order: LSTM dL/dc_T,
//                        GRU dL/dh_T (LSTM's dL/dh_T is added to dh)
//   delta    [S][H][4]   LSTM d(pre) of i,f,g,o; GRU d(pre) of r,z,n and
//                        d(W_hn h + b_hn); forward order
//   dstate   [B][H][W]   BACKWARD's result, slot order: LSTM (dh_0, dc_0), GRU dh_0
// The gate store (activations FORWARD keeps for BACKWARD) lives in the
// device's own memory (card DDR), allocated with alloc_gate_store.
//
// Commands run asynchronously and in submission order; each returns a Job to
// wait on. A failed command fails every command queued after it with
// NotRunError until reset(), and so does a command it stopped unfinished (a
// LOAD runs beside the FORWARD or BACKWARD ahead of it). NaN and Inf data are not errors: they propagate
// as IEEE arithmetic does and are counted (Counters::nonfinite_*).
// Every error is a DeviceError subclass whose message says what was wrong,
// where, and what to do. A Device may be shared by threads: submissions are
// serialized.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace farnn {

enum class CellKind { kLstm = 0, kGru = 1 };
const char* cell_kind_name(CellKind cell);  // "lstm" / "gru"
inline int gate_count(CellKind cell) { return cell == CellKind::kLstm ? 4 : 3; }
inline int state_words(CellKind cell) { return cell == CellKind::kLstm ? 2 : 1; }
constexpr int kDeltaWords = 4;

// --- errors -----------------------------------------------------------------
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A bad argument: size, range, shape mismatch. Nothing was submitted.
class InvalidArgumentError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};
// The layer does not fit the device (hidden, batch, weight depth, card memory).
class CapacityError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// A buffer that is not registered with this device, too small, or of the wrong access.
class BufferError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// LOAD into a bank that a queued or running command still reads.
class BankBusyError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};
// The device refused or aborted a command (its status code is named in the message).
class CommandError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};
// A command queued after a failed one (it never ran), or running beside it
// and stopped unfinished by its fault; either way its outputs are not valid.
class NotRunError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};
// A wait, the device's watchdog, or the driver's bound on a soft reset ran out.
class TimeoutError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};
// The URI names a device kind this build does not provide, or it is malformed.
class UnavailableError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};
// A DMA of the command failed: a bus error (unmapped page, error response,
// completion timeout) or an address outside the device's windows.
class DmaError : public CommandError {
 public:
  using CommandError::CommandError;
};
// The link to the card is down (registers read all ones, DMA fails).
class LinkError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// --- what a device is ---------------------------------------------------------
struct Capabilities {
  std::string kind;         // "model", "sim", "pcie"
  std::string description;  // one line for `farnn info`
  int num_pe = 0;
  int num_chains = 1;       // chains of num_pe / num_chains PEs: the backward's reduction order
  bool red_adder = false;   // each PE reduces on an adder of its own: a faster backward, same results
  int num_banks = 0;
  int weight_lanes = 0;
  int max_hidden = 0;
  int max_batch = 0;
  int max_steps = 0;
  int weight_depth = 0;     // words per PE per bank
  bool lstm = true;
  bool gru = true;
  uint64_t card_memory_bytes = 0;  // gate store capacity
  // Finished FORWARDs the device keeps for BACKWARD, newest first: a
  // BACKWARD whose FORWARD (shape, bank, gate store) is not among them fails
  // (ERR_NO_FORWARD); run that FORWARD again first. 8 on a core and, by
  // default, on the model (model://?records=N); 0 would mean no limit.
  int forward_records = 0;
  double clock_mhz = 0;            // 0: the device reports no time (the model)
  // Largest hidden size whose recurrent weights fit one bank.
  int max_resident_hidden(CellKind cell) const;
  // Throws what a LOAD of such a layer would (CapacityError: above the
  // maximum hidden size, or weights that do not fit a bank), before anything
  // is allocated for it.
  void check_layer(CellKind cell, int hidden) const;
  // The bit-accurate model of this device: model:// with its PEs, chains,
  // limits, banks, depth and FORWARD records (results bit-identical to the device's).
  std::string model_uri() const;
};

// One layer command's shape. lengths: per sequence, 1..steps, any order
// (empty: every sequence runs `steps`).
struct LayerShape {
  CellKind cell = CellKind::kLstm;
  int hidden = 1;
  int batch = 1;
  int steps = 1;
  std::vector<int> lengths = {};

  int gates() const { return gate_count(cell); }
  int length(int b) const { return lengths.empty() ? steps : lengths[static_cast<size_t>(b)]; }
  int packed_steps() const;            // sum of the lengths
  int packed_index(int t, int b) const;  // -1 when sequence b has ended before step t
  std::vector<int> end_order() const;  // slots in the order their forward ends
  std::string describe() const;        // "LSTM H=32 B=2 T=10 lengths {10,7}"
  std::string describe_weights() const;  // what a bank holds: "LSTM H=32"
  bool operator==(const LayerShape&) const = default;
};

enum class Access { kRead = 1, kWrite = 2, kReadWrite = 3 };  // seen from the device

// Host memory the device reaches (allocated by it, or registered foreign
// memory). Sizes in float32 words.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual float* data() = 0;
  virtual size_t size() const = 0;
  virtual Access access() const = 0;
  virtual uint64_t bus_address() const = 0;
  virtual const std::string& name() const = 0;
};
using BufferPtr = std::shared_ptr<Buffer>;

// A place in a buffer: words from `offset` on.
struct BufferRef {
  BufferPtr buffer;
  size_t offset = 0;
  explicit operator bool() const { return buffer != nullptr; }
  // The word at the offset as a 32-bit count shared with the device (step
  // signalling: StepSync's ready and progress words).
  uint32_t load_word() const {
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(buffer->data() + offset))
        .load(std::memory_order_acquire);
  }
  void store_word(uint32_t v) const {
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(buffer->data() + offset))
        .store(v, std::memory_order_release);
  }
};

// Activations FORWARD keeps for BACKWARD, in the device's own memory.
class GateStore {
 public:
  virtual ~GateStore() = default;
  virtual uint64_t bytes() const = 0;
  virtual const LayerShape& capacity_shape() const = 0;  // the shape it was sized for
};
using GateStorePtr = std::shared_ptr<GateStore>;

// Step-by-step hand-off with whoever produces a command's per-step input and
// consumes its output (the GPU computing xp or dh chunk by chunk, the next
// layer's input GEMM). Counts are of this command's steps, from 0, modulo 2^32.
struct StepSync {
  // Input gate: the device reads step k's input (FORWARD: time k; BACKWARD:
  // the k-th step from the end) only once the count of ready steps reaches
  // k + 1. The count is the word at `ready` (the device polls it), else step
  // doorbell `doorbell` (0..3, see ring_step_doorbell), else no gate.
  BufferRef ready;
  int doorbell = -1;
  // The device writes the count of finished steps (their output rows are in
  // host memory) to the word at `progress` every `every` steps and after the last.
  BufferRef progress;
  int every = 1;
  bool gated() const { return static_cast<bool>(ready) || doorbell >= 0; }
};
constexpr int kStepDoorbells = 4;

struct ForwardArgs {
  LayerShape shape;
  int bank = 0;
  BufferRef xp;         // [S][H][G]
  BufferRef state_in;   // [B][H][W] or empty: zeros
  BufferRef h;          // out [S][H]
  BufferRef state_out;  // out [B][H][W] (end order), may be empty
  GateStorePtr store;
  uint32_t watchdog_cycles = 0;  // 0: the device's default (a gated command: none)
  StepSync sync = {};
};

struct BackwardArgs {
  LayerShape shape;     // must equal the FORWARD that filled the store
  int bank = 0;
  GateStorePtr store;
  BufferRef dh;         // [S][H]
  BufferRef carry_in;   // [B][H] or empty: zeros
  BufferRef delta;      // out [S][H][4], on a 16-byte bus address (the core writes a unit a beat)
  BufferRef dstate;     // out [B][H][W] (slot order), may be empty
  uint32_t watchdog_cycles = 0;
  StepSync sync = {};
};

// What the device did. Counters count work done, not work scheduled.
struct Counters {
  uint64_t loads = 0;
  uint64_t forwards = 0;
  uint64_t backwards = 0;
  uint64_t failed = 0;            // commands that ended in an error
  uint64_t macs = 0;              // recurrent multiply-accumulates
  uint64_t words_read = 0;        // from host buffers
  uint64_t words_written = 0;     // to host buffers
  uint64_t nonfinite_inputs = 0;  // NaN/Inf words read
  uint64_t nonfinite_outputs = 0; // NaN/Inf words written
  uint64_t cycles = 0;            // 0 on devices without time (the model)
  double busy_seconds = 0;        // time spent running commands: host wall time on the model,
                                  // busy cycles at the core clock on a core
};

// Faults a simulated device injects (sim://), to test recovery. `after` counts
// host-memory beats of the core (read beats for read faults, write beats for
// write faults, either for the others) from the moment of injection; the
// fault hits the beat after that many.
enum class FaultKind {
  kCompletionTimeout,  // a read's completion never comes; the bridge answers SLVERR after cto_us
  kReadError,          // a read answers an error (completer abort)
  kWriteError,         // a write answers an error
  kStall,              // the link stalls for stall_us
  kUnmapPage,          // the page of a user buffer the core is accessing is unmapped
  kLostDoorbell,       // the next ring doorbell write is lost (`after` unused)
  kLinkDown,           // the link goes down until reset()
};
const char* fault_kind_name(FaultKind kind);        // "completion_timeout", ...
FaultKind parse_fault_kind(const std::string& name);  // InvalidArgumentError listing the names
struct FaultPlan {
  FaultKind kind = FaultKind::kReadError;
  uint64_t after = 0;
  double stall_us = 0;
};

// The outcome of one finished command.
struct JobReport {
  std::string what;   // "FORWARD LSTM H=32 B=1 T=10 bank 0"
  Counters delta;     // what this command added to the counters
  // When the device started and finished it, host clock (for traces); on a
  // device with cycles, projected from them.
  std::chrono::steady_clock::time_point started{}, finished{};
  // Its DMA over the host link per direction, on the same clock: from the
  // first beat to the last. Only a device that sees its link beat by beat
  // (sim://) reports them; commands that complete together report theirs
  // with the last of them.
  struct Dma {
    uint64_t bytes = 0;
    std::chrono::steady_clock::time_point first{}, last{};
  };
  Dma to_card, to_host;
};

class Job {
 public:
  virtual ~Job() = default;
  virtual bool done() const = 0;
  // Waits at most `limit`; throws the command's error, or TimeoutError.
  virtual JobReport wait(std::chrono::milliseconds limit = std::chrono::minutes(10)) = 0;
  // Waits at most `limit` until the word at `progress` (this command's
  // StepSync::progress) reaches `steps` or the command has ended (its error
  // stays for wait()); returns the word. TimeoutError after `limit`. The base
  // polls the word; a simulated device advances its time while it waits.
  virtual uint32_t wait_progress(const BufferRef& progress, uint32_t steps,
                                 std::chrono::milliseconds limit = std::chrono::minutes(10));
};
using JobPtr = std::shared_ptr<Job>;

class Device {
 public:
  virtual ~Device() = default;
  // model://, sim://, pcie:// (see the top of this file).
  static std::unique_ptr<Device> open(const std::string& uri);

  virtual const Capabilities& caps() const = 0;
  virtual BufferPtr alloc(size_t words, Access access, const std::string& name) = 0;
  // Foreign memory (e.g. a GPU allocation) made reachable; the caller keeps it alive.
  virtual BufferPtr register_memory(float* ptr, size_t words, Access access, const std::string& name) = 0;
  virtual void unregister(const BufferPtr& buffer) = 0;
  virtual GateStorePtr alloc_gate_store(const LayerShape& shape) = 0;

  // Recurrent weights (PyTorch layout) into a bank; the buffers are read when
  // the command runs.
  virtual JobPtr load(int bank, const LayerShape& shape, BufferRef w_hh, BufferRef b_hh) = 0;
  virtual JobPtr forward(const ForwardArgs& args) = 0;
  virtual JobPtr backward(const BackwardArgs& args) = 0;
  // Sets step doorbell `index` (StepSync::doorbell) to `count` ready steps.
  virtual void ring_step_doorbell(int index, uint32_t count) = 0;
  // Waits for every submitted command (their errors stay with their jobs).
  virtual void drain(std::chrono::milliseconds limit = std::chrono::minutes(10)) = 0;

  virtual Counters counters() const = 0;
  // Arms one fault (sim:// only; other devices throw UnavailableError).
  virtual void inject_fault(const FaultPlan& plan);
  // Whether a fault armed by inject_fault has not hit yet (the commands since
  // moved no more than `after` beats); false where none is armed.
  virtual bool fault_armed() const { return false; }
  // The bring-up checks of `farnn selftest`, each with a one-line verdict.
  // Every device: one small LOAD+FORWARD+BACKWARD each of LSTM and GRU,
  // bit for bit against the engine model. A core adds the scratch register,
  // DMA through the host master both ways, and the refusal of an address
  // outside the windows. Each check starts from a reset device; once a
  // reset fails, the checks left report "not run" and why. Leaves the
  // device reset.
  struct SelfCheck {
    std::string name;
    bool ok = false;
    std::string detail;
  };
  std::vector<SelfCheck> self_test();
  // Lines for `farnn info`: link, registers, ring and window state (a device
  // without them returns its description only).
  virtual std::vector<std::string> status_report() { return {caps().description}; }
  // Drops queued commands (they fail with NotRunError), clears a failed state
  // and the banks; buffers and gate stores stay valid.
  virtual void reset() = 0;

 protected:
  // One bring-up check: its name and a body that returns the verdict line or throws.
  struct NamedCheck {
    std::string name;
    std::function<std::string()> run;
  };
  // The checks self_test() runs, in order: every device's layer checks; a
  // core puts its own in front.
  virtual std::vector<NamedCheck> self_checks();
};

}  // namespace farnn
