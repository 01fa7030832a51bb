// Pieces every Device implementation shares (not part of the public API):
// URI parsing, the layer-shape and buffer-range checks, packed-order helpers.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "farnn/device.hpp"
#include "farnn/engine_model.hpp"

namespace farnn::driver {

// A wait's limit as waits can add it to the clock: a negative one is an
// InvalidArgumentError naming `what`; one beyond a century (up to
// milliseconds::max(), "for ever") is a century, where now + limit would
// overflow and time out at once.
inline std::chrono::milliseconds wait_limit(std::chrono::milliseconds limit, const std::string& what) {
  if (limit.count() < 0) {
    throw InvalidArgumentError(what + ": the wait limit is negative (" + std::to_string(limit.count()) + " ms)");
  }
  constexpr std::chrono::milliseconds kCentury = std::chrono::hours(24 * 365 * 100);
  return std::min(limit, kCentury);
}

// A buffer's size as alloc and register_memory take it: at most 2^34 words
// (64 GiB); CapacityError naming the buffer otherwise (a size computed
// wrongly once wrapped in the byte count and gave a buffer of 0 bytes).
inline void check_buffer_words(size_t words, const std::string& call, const std::string& name) {
  constexpr size_t kMaxWords = size_t{1} << 34;
  if (words > kMaxWords) {
    throw CapacityError(call + " '" + name + "': " + std::to_string(words) + " words is more than a buffer may hold (" +
                        std::to_string(kMaxWords) + " words, 64 GiB)");
  }
}

// What register_memory takes on every device: a size as above, a pointer
// (where there are words) on a float boundary (a core moves whole words; off
// one, its DMA faulted on the driver's own descriptor).
inline void check_registration(const float* ptr, size_t words, const std::string& name) {
  check_buffer_words(words, "register_memory", name);
  if (ptr == nullptr && words > 0) throw BufferError("register_memory '" + name + "': null pointer");
  if (reinterpret_cast<uintptr_t>(ptr) % alignof(float) != 0) {
    throw BufferError("register_memory '" + name + "': the pointer is not aligned to a float (4 bytes)");
  }
}

// The engine model's names for a layer (its Config drives the packed order).
inline engine::Cell engine_cell(CellKind cell) {
  return cell == CellKind::kLstm ? engine::Cell::kLstm : engine::Cell::kGru;
}
inline engine::Config engine_config(const LayerShape& s, int num_pe, int num_chains = 1) {
  engine::Config cfg{engine_cell(s.cell), s.hidden, s.batch, s.steps, num_pe, s.lengths};
  cfg.num_chains = num_chains;
  return cfg;
}

// "model://?pes=4&hidden=32" -> scheme "model", options {pes: 4, hidden: 32}.
struct Uri {
  std::string scheme;
  std::string target;                         // text between "://" and "?"
  std::map<std::string, std::string> options;
  static Uri parse(const std::string& text);  // UnavailableError when malformed
  // An integer option in 1..max written as plain decimal digits, `fallback`
  // when absent; InvalidArgumentError naming the option and its range
  // otherwise. Unknown options are refused by allow().
  long positive(const std::string& key, long fallback, long max) const;
  void allow(const std::vector<std::string>& known) const;
  std::string text;
};

// Throws InvalidArgumentError / CapacityError unless `shape` is a legal
// layer for `caps` (cell supported, 1 <= H <= max_hidden and resident, batch,
// steps, lengths). `what` starts the message ("FORWARD").
// kWeights: a LOAD's or a layer's weights, named and checked by cell and
// hidden alone (the batch and steps of its shape are not used).
enum class ShapeUse { kCommand, kWeights };
void check_shape(const LayerShape& shape, const Capabilities& caps, const std::string& what,
                 ShapeUse use = ShapeUse::kCommand);
// Throws InvalidArgumentError unless 0 <= bank < num_banks.
void check_bank(int bank, const Capabilities& caps, const std::string& what);

// One buffer range a command touches.
struct Range {
  const char* role;   // "xp", "h", ...
  BufferRef ref;
  size_t words;
  bool output;
};
// Every range: a buffer, registered here (`is_mine`), with the access its
// direction needs and `words` inside it; outputs overlap nothing else.
// Throws BufferError naming the role, the buffer and the sizes.
void check_ranges(const std::vector<Range>& ranges, const std::string& what,
                  const std::function<bool(const Buffer*)>& is_mine);

// Word counts of a layer command's streams.
struct Dims {
  size_t S, H, G, SW, B;  // packed steps, hidden, gates, state words, batch
  explicit Dims(const LayerShape& s)
      : S(static_cast<size_t>(s.packed_steps())), H(static_cast<size_t>(s.hidden)),
        G(static_cast<size_t>(s.gates())), SW(static_cast<size_t>(state_words(s.cell))),
        B(static_cast<size_t>(s.batch)) {}
  uint64_t macs() const { return S * G * H * H; }
};

// The buffer ranges each command reads and writes (optional streams only
// when given; a StepSync's words included); `what` names the command.
std::vector<Range> load_ranges(const LayerShape& shape, const BufferRef& w_hh, const BufferRef& b_hh);
std::vector<Range> forward_ranges(const ForwardArgs& a, const std::string& what);
std::vector<Range> backward_ranges(const BackwardArgs& a, const std::string& what);
// Throws InvalidArgumentError unless the gate store holds the FORWARD of `shape`.
void check_store_filled(const std::optional<LayerShape>& filled_by, const LayerShape& shape, const std::string& what);

// "FORWARD <shape> bank <n>", after check_bank and check_shape.
std::string checked_command(const char* op, const LayerShape& shape, int bank, const Capabilities& caps);
// What a bank holds as submitted (cell, hidden), or nothing.
using BankShape = std::optional<std::pair<CellKind, int>>;
// Throws InvalidArgumentError unless `loaded` is the command's layer.
void check_bank_holds(const BankShape& loaded, const LayerShape& shape, int bank, const std::string& what);
// Throws InvalidArgumentError unless 0 <= index < kStepDoorbells.
void check_doorbell(int index);

// The ranges of a StepSync (a ready word read, a progress word written);
// InvalidArgumentError for a doorbell outside 0..kStepDoorbells-1, a gate on
// both a word and a doorbell, or every < 1.
void add_sync_ranges(std::vector<Range>& ranges, const StepSync& sync, const std::string& what);
// NaN/Inf words (exponent all ones) among n words.
uint64_t count_nonfinite(const uint32_t* words, size_t n);
// Counters::nonfinite_inputs and nonfinite_outputs of a finished command: the
// NaN/Inf words of its data ranges (the sync words are not data).
void count_nonfinite(const std::vector<Range>& ranges, Counters& counters);

}  // namespace farnn::driver
