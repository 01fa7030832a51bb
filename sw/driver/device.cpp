// Device API pieces shared by every device: names, shapes, URI parsing,
// argument checks, fault names (Device::open is in sw/devices/).
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstring>
#include <sstream>
#include <string_view>
#include <thread>

#include "device_common.hpp"

namespace farnn {

const char* cell_kind_name(CellKind cell) {
  return cell == CellKind::kLstm ? "lstm" : cell == CellKind::kGru ? "gru" : "unknown cell";
}

int Capabilities::max_resident_hidden(CellKind cell) const {
  if ((cell == CellKind::kLstm && !lstm) || (cell == CellKind::kGru && !gru) || num_pe < 1) return 0;
  return engine::max_resident_hidden(driver::engine_cell(cell), num_pe, weight_depth, max_hidden);
}

void Capabilities::check_layer(CellKind cell, int hidden) const {
  driver::check_shape(LayerShape{cell, hidden, 1, 1, {}}, *this, "layer", driver::ShapeUse::kWeights);
}

std::string Capabilities::model_uri() const {
  return "model://?pes=" + std::to_string(num_pe) + "&chains=" + std::to_string(num_chains) +
         "&hidden=" + std::to_string(max_hidden) + "&batch=" + std::to_string(max_batch) +
         "&banks=" + std::to_string(num_banks) + "&depth=" + std::to_string(weight_depth) +
         "&card_mib=" + std::to_string(card_memory_bytes >> 20) +
         (forward_records > 0 ? "&records=" + std::to_string(forward_records) : std::string());
}

uint32_t Job::wait_progress(const BufferRef& progress, uint32_t steps,
                            std::chrono::milliseconds limit) {
  if (!progress) throw InvalidArgumentError("wait_progress: no progress word given");
  const auto deadline = std::chrono::steady_clock::now() + driver::wait_limit(limit, "wait_progress");
  while (progress.load_word() < steps && !done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw TimeoutError("wait_progress: the word reads " + std::to_string(progress.load_word()) +
                         " of " + std::to_string(steps) + " steps after " +
                         std::to_string(limit.count()) + " ms and the command has not ended");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return progress.load_word();
}

// The packed order is the engine model's.
int LayerShape::packed_steps() const { return driver::engine_config(*this, 1).packed_steps(); }
int LayerShape::packed_index(int t, int b) const { return driver::engine_config(*this, 1).packed_index(t, b); }
std::vector<int> LayerShape::end_order() const { return driver::engine_config(*this, 1).end_order(); }

std::string LayerShape::describe_weights() const {
  return (cell == CellKind::kLstm  ? std::string("LSTM")
          : cell == CellKind::kGru ? std::string("GRU")
                                   : "cell " + std::to_string(static_cast<int>(cell))) +
         " H=" + std::to_string(hidden);
}

std::string LayerShape::describe() const {
  std::ostringstream os;
  os << describe_weights() << " B=" << batch << " T=" << steps;
  if (!lengths.empty()) {
    os << " lengths {";
    for (size_t i = 0; i < lengths.size(); ++i) os << (i ? "," : "") << lengths[i];
    os << "}";
  }
  return os.str();
}

namespace {
constexpr const char* kFaultNames[] = {"completion_timeout", "read_error", "write_error", "stall",
                                       "unmap_page",         "lost_doorbell", "link_down"};
}  // namespace

const char* fault_kind_name(FaultKind kind) { return kFaultNames[static_cast<int>(kind)]; }

FaultKind parse_fault_kind(const std::string& name) {
  std::string known;
  for (int i = 0; i < 7; ++i) {
    if (name == kFaultNames[i]) return static_cast<FaultKind>(i);
    known += (i ? ", " : "") + std::string(kFaultNames[i]);
  }
  throw InvalidArgumentError("unknown fault '" + name + "' (known: " + known + ")");
}

void Device::inject_fault(const FaultPlan& plan) {
  throw UnavailableError(std::string("fault injection (") + fault_kind_name(plan.kind) + ") needs a sim:// device; " +
                         caps().kind + " devices have none");
}

namespace {

// One small layer through `dev`, bit for bit against the engine model: the
// verdict line, or a DeviceError naming the first word that differs.
std::string layer_check(Device& dev, CellKind cell) {
  const Capabilities& c = dev.caps();
  LayerShape s;
  s.cell = cell;
  s.hidden = std::min(8, c.max_resident_hidden(cell));
  s.batch = std::min(2, c.max_batch);
  s.steps = 3;
  if (s.batch == 2) s.lengths = {3, 2};
  const size_t G = s.gates(), H = s.hidden, S = s.packed_steps(), B = s.batch, W = state_words(cell);
  uint32_t x = 0x2545f491u;  // xorshift: the same data on every device
  const auto fill = [&](size_t n, float bound) {
    std::vector<uint32_t> w(n);
    for (auto& v : w) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      const float f = bound * (static_cast<float>(x % 20001u) / 10000.0f - 1.0f);
      std::memcpy(&v, &f, 4);
    }
    return w;
  };
  engine::Weights wt{fill(G * H * H, 0.35f), fill(G * H, 0.5f)};
  const auto xp = fill(S * H * G, 1.0f), si = fill(B * H * W, 0.5f), dh = fill(S * H, 1.0f), carry = fill(B * H, 0.5f);
  const engine::Config cfg = driver::engine_config(s, c.num_pe, c.num_chains);
  const auto fw = engine::forward(cfg, wt, xp, si);
  const auto bw = engine::backward(cfg, wt, fw.records, dh, carry);
  const auto put = [&](const std::vector<uint32_t>& w, const char* name) {
    BufferPtr b = dev.alloc(w.size(), Access::kRead, name);
    std::memcpy(b->data(), w.data(), 4 * w.size());
    return b;
  };
  const auto get = [](const BufferPtr& b) {
    std::vector<uint32_t> w(b->size());
    std::memcpy(w.data(), b->data(), 4 * w.size());
    return w;
  };
  BufferPtr w_hh = put(wt.w_hh, "w_hh"), b_hh = put(wt.b_hh, "b_hh"), bx = put(xp, "xp"), bs = put(si, "state_in");
  BufferPtr bdh = put(dh, "dh"), bc = put(carry, "carry");
  BufferPtr h = dev.alloc(S * H, Access::kWrite, "h"), so = dev.alloc(B * H * W, Access::kWrite, "state_out");
  BufferPtr delta = dev.alloc(S * H * kDeltaWords, Access::kWrite, "delta");
  BufferPtr ds = dev.alloc(B * H * W, Access::kWrite, "dstate");
  GateStorePtr store = dev.alloc_gate_store(s);
  dev.load(0, s, {w_hh}, {b_hh})->wait(std::chrono::seconds(60));
  dev.forward({s, 0, {bx}, {bs}, {h}, {so}, store})->wait(std::chrono::seconds(60));
  dev.backward({s, 0, store, {bdh}, {bc}, {delta}, {ds}})->wait(std::chrono::seconds(60));
  const struct {
    const char* name;
    std::vector<uint32_t> got, want;
  } outs[] = {{"h", get(h), fw.h}, {"final state", get(so), fw.state_out}, {"delta", get(delta), bw.delta},
              {"dstate", get(ds), bw.state_out}};
  size_t words = 0;
  for (const auto& o : outs) {
    for (size_t i = 0; i < o.want.size(); ++i) {
      if (o.got[i] != o.want[i]) {
        throw DeviceError(s.describe() + ": " + o.name + " word " + std::to_string(i) + " differs from the model");
      }
    }
    words += o.want.size();
  }
  return s.describe() + ": " + std::to_string(words) + " output words bit-exact with the engine model";
}

}  // namespace

std::vector<Device::NamedCheck> Device::self_checks() {
  std::vector<NamedCheck> checks;
  for (CellKind cell : {CellKind::kLstm, CellKind::kGru}) {
    if (!(cell == CellKind::kLstm ? caps().lstm : caps().gru)) continue;
    checks.push_back({std::string(cell == CellKind::kLstm ? "LSTM" : "GRU") + " FORWARD+BACKWARD",
                      [this, cell] { return layer_check(*this, cell); }});
  }
  return checks;
}

std::vector<Device::SelfCheck> Device::self_test() {
  std::vector<SelfCheck> verdicts;
  std::string stuck;  // why the device did not recover, once a reset failed
  try {
    reset();  // the first check too starts from a working device
  } catch (const std::exception& e) {
    stuck = std::string("the reset before the first check failed: ") + e.what();
  }
  for (const NamedCheck& c : self_checks()) {
    SelfCheck v{c.name, false, ""};
    if (!stuck.empty()) {
      v.detail = "not run: " + stuck;
      verdicts.push_back(v);
      continue;
    }
    try {
      v.detail = c.run();
      v.ok = true;
    } catch (const std::exception& e) {
      v.detail = e.what();
    }
    try {
      reset();  // the next check starts from a working device
    } catch (const std::exception& e) {
      stuck = "the reset after check '" + c.name + "' failed";
      v.ok = false;
      v.detail += "; the device did not recover: " + std::string(e.what());
    }
    verdicts.push_back(v);
  }
  return verdicts;
}

namespace driver {
namespace {

// %XX escapes (two hex digits) replaced by their byte; a '%' without two
// hex digits after it is refused.
std::string percent_decoded(const std::string& v, const std::string& uri) {
  const auto hex_digit = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != '%') {
      out += v[i];
      continue;
    }
    const int hi = i + 2 < v.size() ? hex_digit(v[i + 1]) : -1, lo = hi >= 0 ? hex_digit(v[i + 2]) : -1;
    if (lo < 0) {
      throw UnavailableError("'" + uri + "': '" + v.substr(i, 3) + "' in '" + v +
                             "' is not a percent escape (% and two hex digits; %25 is a '%')");
    }
    if (hi == 0 && lo == 0) throw UnavailableError("'" + uri + "': '%00' in '" + v + "': a value holds no NUL byte");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

}  // namespace

Uri Uri::parse(const std::string& text) {
  Uri u;
  u.text = text;
  const size_t sep = text.find("://");
  if (sep == std::string::npos || sep == 0) {
    throw UnavailableError("'" + text + "' is not a device URI; expected kind://[target][?key=value&...], "
                           "e.g. model:// or model://?pes=16");
  }
  u.scheme = text.substr(0, sep);
  std::string rest = text.substr(sep + 3);
  const size_t q = rest.find('?');
  u.target = rest.substr(0, q);
  if (q == std::string::npos) return u;
  // key=value items split at '&', every one of them (an empty item, from a
  // '&' at either end or doubled, is refused alike); a value is
  // percent-decoded, so a trace= path may hold '&', '?', '=' or '%'.
  const std::string query = rest.substr(q + 1);
  for (size_t from = 0;;) {
    const size_t amp = query.find('&', from);
    const std::string item = query.substr(from, amp == std::string::npos ? std::string::npos : amp - from);
    const size_t eq = item.find('=');
    if (item.empty()) throw UnavailableError("'" + text + "': an empty option (a stray '&' or '?')");
    if (eq == std::string::npos || eq == 0) {
      throw UnavailableError("'" + text + "': option '" + item + "' is not key=value");
    }
    const std::string key = item.substr(0, eq);
    if (u.options.count(key)) throw UnavailableError("'" + text + "': option '" + key + "' given twice");
    u.options[key] = percent_decoded(item.substr(eq + 1), text);
    if (amp == std::string::npos) break;
    from = amp + 1;
  }
  return u;
}

long Uri::positive(const std::string& key, long fallback, long max) const {
  const auto it = options.find(key);
  if (it == options.end()) return fallback;
  const std::string& v = it->second;
  // Digits only (no sign, blank or exponent); a number past `long` is out of range like any other above max.
  const bool digits =
      !v.empty() && std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  long value = 0;
  if (digits && std::from_chars(v.data(), v.data() + v.size(), value).ec != std::errc()) value = 0;
  if (value < 1 || value > max) {
    throw InvalidArgumentError("'" + text + "': option " + key + "=" + v + " must be an integer from 1 to " +
                               std::to_string(max));
  }
  return value;
}

void Uri::allow(const std::vector<std::string>& known) const {
  for (const auto& [key, value] : options) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw InvalidArgumentError("'" + text + "': unknown option '" + key + "' (" + scheme +
                                 ":// knows: " + list + ")");
    }
  }
}

void check_bank(int bank, const Capabilities& caps, const std::string& what) {
  if (bank < 0 || bank >= caps.num_banks) {
    throw InvalidArgumentError(what + ": bank " + std::to_string(bank) + " does not exist (the device has " +
                               std::to_string(caps.num_banks) + " banks, 0.." + std::to_string(caps.num_banks - 1) +
                               ")");
  }
}

void check_shape(const LayerShape& s, const Capabilities& caps, const std::string& what, ShapeUse use) {
  const bool weights = use == ShapeUse::kWeights;
  const std::string shape = weights ? s.describe_weights() : s.describe();  // once: `what` often names it already
  const std::string where = (what.find(shape) == std::string::npos ? what + " " + shape : what) + ": ";
  if (s.cell != CellKind::kLstm && s.cell != CellKind::kGru) throw InvalidArgumentError(where + "unknown cell");
  if ((s.cell == CellKind::kLstm && !caps.lstm) || (s.cell == CellKind::kGru && !caps.gru)) {
    throw CapacityError(where + "this device was built without " + cell_kind_name(s.cell) + " support");
  }
  if (s.hidden < 1 || (!weights && (s.batch < 1 || s.steps < 1))) {
    throw InvalidArgumentError(where + (weights ? "hidden must be >= 1" : "hidden, batch and steps must be >= 1"));
  }
  if (s.hidden > caps.max_hidden) {
    throw CapacityError(where + "hidden " + std::to_string(s.hidden) + " is above the device's maximum " +
                        std::to_string(caps.max_hidden) + "; use a smaller hidden size or a larger device");
  }
  const int resident = caps.max_resident_hidden(s.cell);
  if (s.hidden > resident) {
    throw CapacityError(where + "the recurrent weights of hidden " + std::to_string(s.hidden) +
                        " do not fit a bank (" + std::to_string(caps.weight_depth) + " words in each of " +
                        std::to_string(caps.num_pe) + " PEs; largest resident " + cell_kind_name(s.cell) +
                        " hidden size is " + std::to_string(resident) + ")");
  }
  if (weights) return;
  if (s.batch > caps.max_batch) {
    throw CapacityError(where + "batch " + std::to_string(s.batch) + " is above the device's maximum " +
                        std::to_string(caps.max_batch) + "; split the batch");
  }
  if (s.steps > caps.max_steps) {
    throw CapacityError(where + "steps " + std::to_string(s.steps) + " is above the device's maximum " +
                        std::to_string(caps.max_steps) + "; split the sequence");
  }
  if (!s.lengths.empty()) {
    if (s.lengths.size() != static_cast<size_t>(s.batch)) {
      throw InvalidArgumentError(where + std::to_string(s.lengths.size()) + " lengths for a batch of " +
                                 std::to_string(s.batch));
    }
    for (int b = 0; b < s.batch; ++b) {
      if (s.length(b) < 1 || s.length(b) > s.steps) {
        throw InvalidArgumentError(where + "length " + std::to_string(s.length(b)) + " of sequence " +
                                   std::to_string(b) + " is outside 1.." + std::to_string(s.steps));
      }
    }
  }
}

std::vector<Range> load_ranges(const LayerShape& s, const BufferRef& w_hh, const BufferRef& b_hh) {
  const size_t gh = static_cast<size_t>(s.gates()) * s.hidden;
  return {{"w_hh", w_hh, gh * s.hidden, false}, {"b_hh", b_hh, gh, false}};
}

std::vector<Range> forward_ranges(const ForwardArgs& a, const std::string& what) {
  const Dims n(a.shape);
  std::vector<Range> ranges = {{"xp", a.xp, n.S * n.H * n.G, false}, {"h", a.h, n.S * n.H, true}};
  if (a.state_in) ranges.push_back({"state_in", a.state_in, n.B * n.H * n.SW, false});
  if (a.state_out) ranges.push_back({"state_out", a.state_out, n.B * n.H * n.SW, true});
  add_sync_ranges(ranges, a.sync, what);
  return ranges;
}

std::vector<Range> backward_ranges(const BackwardArgs& a, const std::string& what) {
  const Dims n(a.shape);
  std::vector<Range> ranges = {{"dh", a.dh, n.S * n.H, false}, {"delta", a.delta, n.S * n.H * kDeltaWords, true}};
  // The core writes delta one unit (kDeltaWords words) an item: 16-byte aligned.
  if (a.delta && (a.delta.buffer->bus_address() + 4 * a.delta.offset) % (4 * kDeltaWords) != 0) {
    throw BufferError(what + ": delta in '" + a.delta.buffer->name() + "' at word " +
                      std::to_string(a.delta.offset) + " does not start on a " + std::to_string(4 * kDeltaWords) +
                      "-byte bus address; place it at a word offset that is a multiple of " +
                      std::to_string(kDeltaWords));
  }
  if (a.carry_in) ranges.push_back({"carry_in", a.carry_in, n.B * n.H, false});
  if (a.dstate) ranges.push_back({"dstate", a.dstate, n.B * n.H * n.SW, true});
  add_sync_ranges(ranges, a.sync, what);
  return ranges;
}

void check_store_filled(const std::optional<LayerShape>& filled_by, const LayerShape& s, const std::string& what) {
  if (!filled_by) throw InvalidArgumentError(what + ": the gate store holds no FORWARD; run FORWARD into it first");
  if (!(*filled_by == s)) {
    throw InvalidArgumentError(what + ": the gate store holds the FORWARD of " + filled_by->describe() +
                               "; BACKWARD must use the same shape");
  }
}

std::string checked_command(const char* op, const LayerShape& s, int bank, const Capabilities& caps) {
  const std::string what = std::string(op) + " " + s.describe() + " bank " + std::to_string(bank);
  check_bank(bank, caps, what);
  check_shape(s, caps, what);
  return what;
}

void check_bank_holds(const BankShape& loaded, const LayerShape& s, int bank, const std::string& what) {
  if (!loaded) throw InvalidArgumentError(what + ": bank " + std::to_string(bank) + " holds no weights; LOAD it first");
  if (loaded->first != s.cell || loaded->second != s.hidden) {
    throw InvalidArgumentError(what + ": bank " + std::to_string(bank) + " holds " +
                               (loaded->first == CellKind::kLstm ? "LSTM" : "GRU") + " H=" +
                               std::to_string(loaded->second) + " weights, the command is " + s.describe());
  }
}

void check_doorbell(int index) {
  if (index < 0 || index >= kStepDoorbells) {
    throw InvalidArgumentError("ring_step_doorbell: doorbell " + std::to_string(index) + " does not exist (0.." +
                               std::to_string(kStepDoorbells - 1) + ")");
  }
}

uint64_t count_nonfinite(const uint32_t* words, size_t n) {
  uint64_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += (words[i] & 0x7f800000u) == 0x7f800000u;
  return bad;
}

void count_nonfinite(const std::vector<Range>& ranges, Counters& counters) {
  for (const Range& r : ranges) {
    if (!r.ref || std::string_view(r.role).starts_with("sync.")) continue;
    const auto* words = reinterpret_cast<const uint32_t*>(r.ref.buffer->data() + r.ref.offset);
    (r.output ? counters.nonfinite_outputs : counters.nonfinite_inputs) +=
        count_nonfinite(words, r.words);
  }
}

void add_sync_ranges(std::vector<Range>& ranges, const StepSync& sync, const std::string& what) {
  if (sync.doorbell < -1 || sync.doorbell >= kStepDoorbells) {
    throw InvalidArgumentError(what + ": step doorbell " + std::to_string(sync.doorbell) + " does not exist (0.." +
                               std::to_string(kStepDoorbells - 1) + ", or -1 for none)");
  }
  if (sync.ready && sync.doorbell >= 0) {
    throw InvalidArgumentError(what + ": the input gate takes a ready word or a step doorbell, not both");
  }
  if (sync.every < 1 || sync.every > 65535) {
    throw InvalidArgumentError(what + ": progress every " + std::to_string(sync.every) + " steps must be 1..65535");
  }
  if (sync.ready) ranges.push_back({"sync.ready", sync.ready, 1, false});
  if (sync.progress) ranges.push_back({"sync.progress", sync.progress, 1, true});
}

void check_ranges(const std::vector<Range>& ranges, const std::string& what,
                  const std::function<bool(const Buffer*)>& is_mine) {
  for (const Range& r : ranges) {
    const std::string role = what + ": " + r.role;
    if (!r.ref) throw BufferError(role + " buffer is missing");
    const Buffer& b = *r.ref.buffer;
    if (!is_mine(&b)) {
      throw BufferError(role + " buffer '" + b.name() +
                        "' is not registered with this device; allocate it with alloc() or register_memory()");
    }
    const bool ok = r.output ? (static_cast<int>(b.access()) & static_cast<int>(Access::kWrite))
                             : (static_cast<int>(b.access()) & static_cast<int>(Access::kRead));
    if (!ok) {
      throw BufferError(role + " buffer '" + b.name() + "' is registered " +
                        (r.output ? "read-only" : "write-only") + ", the device must " +
                        (r.output ? "write" : "read") + " it");
    }
    if (r.ref.offset > b.size() || b.size() - r.ref.offset < r.words) {
      throw BufferError(role + " needs " + std::to_string(r.words) + " words from offset " +
                        std::to_string(r.ref.offset) + ", buffer '" + b.name() + "' has " +
                        std::to_string(b.size()));
    }
  }
  // Outputs overlap nothing the command reads or writes (by bus address).
  for (size_t i = 0; i < ranges.size(); ++i) {
    for (size_t k = i + 1; k < ranges.size(); ++k) {
      const Range& a = ranges[i];
      const Range& c = ranges[k];
      if ((!a.output && !c.output) || a.words == 0 || c.words == 0) continue;
      const uint64_t a0 = a.ref.buffer->bus_address() + 4 * a.ref.offset, a1 = a0 + 4 * a.words;
      const uint64_t c0 = c.ref.buffer->bus_address() + 4 * c.ref.offset, c1 = c0 + 4 * c.words;
      if (a0 < c1 && c0 < a1) {
        throw BufferError(what + ": " + a.role + " and " + c.role + " overlap in buffer '" +
                          a.ref.buffer->name() + "'; an output must not share words with another stream");
      }
    }
  }
}

}  // namespace driver
}  // namespace farnn
