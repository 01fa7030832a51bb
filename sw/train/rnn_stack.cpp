// RnnStack: see farnn/rnn_stack.hpp. Index arrays move rows between layouts
// (padded <-> packed, forward <-> per-sequence reversed time, PyTorch's
// gate-major rows <-> the device's unit-major ones); everything numeric is a
// backend call or a device command.
#include "farnn/rnn_stack.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <deque>
#include <optional>
#include <random>
#include <stdexcept>

#include "farnn/golden.hpp"

namespace farnn::train {

std::string StackConfig::describe() const {
  return std::to_string(layers) + "-layer " + (bidirectional ? "bidirectional " : "") +
         (cell == CellKind::kLstm ? "LSTM" : "GRU") + ", input " + std::to_string(input) + ", hidden " +
         std::to_string(hidden);
}

void StackConfig::validate() const {
  if (input < 1) throw std::invalid_argument("input size must be >= 1 (got " + std::to_string(input) + ")");
  if (hidden < 1) throw std::invalid_argument("hidden size must be >= 1 (got " + std::to_string(hidden) + ")");
  if (layers < 1) throw std::invalid_argument("layers must be >= 1 (got " + std::to_string(layers) + ")");
  if (gemm_chunks < 1) {
    throw std::invalid_argument("gemm_chunks must be >= 1 (got " + std::to_string(gemm_chunks) +
                                ")");
  }
}

namespace {

using Clock = std::chrono::steady_clock;

// Rows of one layer-direction's tensors between layouts. k = unit-major row
// j*G + g (the device's order), r = PyTorch's gate-major row g*H + j.
struct RowMaps {
  std::vector<int> to_unit;     // [G*H]: unit-major row k <- PyTorch row
  std::vector<int> to_unit4;    // [4H]: row j*4+g <- PyTorch row of gate g; -1 (zero) for GRU's slot 3
  std::vector<int> grad_ih;     // [G*H]: PyTorch row r <- delta column j*4+g
  std::vector<int> grad_hh;     // [G*H]: as grad_ih, GRU's n gate from column j*4+3 (d(W_hn h + b_hn))
  RowMaps(CellKind cell, int hidden) {
    const int G = gate_count(cell), H = hidden;
    to_unit.resize(static_cast<size_t>(G) * H);
    to_unit4.assign(static_cast<size_t>(4) * H, -1);
    grad_ih.resize(static_cast<size_t>(G) * H);
    grad_hh.resize(static_cast<size_t>(G) * H);
    for (int j = 0; j < H; ++j) {
      for (int g = 0; g < G; ++g) {
        to_unit[static_cast<size_t>(j * G + g)] = g * H + j;
        to_unit4[static_cast<size_t>(j * 4 + g)] = g * H + j;
        grad_ih[static_cast<size_t>(g * H + j)] = j * 4 + g;
        grad_hh[static_cast<size_t>(g * H + j)] = j * 4 + (cell == CellKind::kGru && g == 2 ? 3 : g);
      }
    }
  }
};

// The order in which layer l runs its directions forward: alternating
// (forward first on even layers, reverse first on odd ones), so that a
// layer's first direction is the one the layer below ran last. Backward runs
// them in the opposite order. One direction: {0}.
std::vector<int> forward_order(int directions, int l) {
  if (directions == 1) return {0};
  return l % 2 == 1 ? std::vector<int>{1, 0} : std::vector<int>{0, 1};
}
std::vector<int> backward_order(int directions, int l) {
  std::vector<int> o = forward_order(directions, l);
  std::reverse(o.begin(), o.end());
  return o;
}

}  // namespace

struct RnnStack::Impl {
  // One layer-direction: its device streams and what backward needs.
  struct Unit {
    RowMaps maps;
    Array w_u, b_u, w_u4;  // W_ih and b_ih in unit-major rows; W_ih in 4-per-unit rows
    Array x_rev;           // the reverse direction's input, sequences reversed
    BufferPtr xp, h, state_out, dh, delta;
    std::vector<GateStorePtr> stores;  // one per group
    explicit Unit(const StackConfig& c) : maps(c.cell, c.hidden) {}
  };
  std::vector<Unit> units;  // index l*D + d

  // The batch of the last forward, and the groups of at most the device's
  // max_batch slots it runs as: one device command each. Group g holds slots
  // first..first+shape.batch-1; its packed steps are rows offset.. of every
  // packed array (the groups' packed layouts one after the other).
  struct Group {
    int first = 0, offset = 0;
    LayerShape shape;
    // The packed row where time t starts: offset + the group's steps before t.
    int rows_before(int t) const {
      int rows = offset;
      for (int k = 0; k < shape.batch; ++k) rows += std::min(t, shape.length(k));
      return rows;
    }
  };
  LayerShape shape;
  std::vector<Group> groups;
  int S = 0;
  // The device buffers hold rows_cap() packed steps, the batch's T*B (every
  // sequence full), so that the next batches of other lengths reuse them: a
  // new buffer changes the core's address windows, which waits for it to go
  // idle, and a streamed layer would wait for the whole layer below.
  size_t rows_cap() const { return static_cast<size_t>(shape.steps) * shape.batch; }
  std::vector<int> pack;    // [S] packed step -> padded row t*B + b
  std::vector<int> unpack;  // [T*B] padded row -> packed step or -1
  std::vector<int> rev;     // [S] packed (t,b) -> packed (len_b-1-t, b)
  std::vector<int> prev;    // [S] packed (t,b) -> packed (t-1, b) or -1
  std::vector<int> last;    // [B] packed (len_b-1, b)
  std::vector<Array> x;     // per layer: its packed input [S][I_l]
  bool have_forward = false;

  // Banks: which unit each holds (-1: none or stale), its last command and
  // when that was submitted (a count: the least recently used bank is loaded next).
  std::vector<int> bank_unit;
  std::vector<JobPtr> bank_job;
  std::vector<uint64_t> bank_used;
  uint64_t commands = 0;
  // The FORWARDs of this step whose records the device still keeps
  // (Capabilities::forward_records, newest last): (unit, group, bank).
  std::deque<std::array<int, 3>> records;
  // The FORWARDs' input gates: a ready-steps word per (unit, group); and
  // their progress words (the steps done), which the next layer follows.
  BufferPtr ready, progress;
  BufferRef ready_word(int unit, size_t group) const {
    return {ready, static_cast<size_t>(unit) * groups.size() + group};
  }
  BufferRef progress_word(int unit, size_t group) const {
    return {progress, static_cast<size_t>(unit) * groups.size() + group};
  }
  std::vector<std::pair<JobPtr, std::string>> submitted;  // with what they ran, for the trace
};

namespace {

// A device buffer of `words` floats: the device's own memory when the backend
// computes on any host memory (or never touches the buffer: `backend` null),
// else the backend's memory registered with the device, which the returned
// pointer keeps alive (registration dropped first, then the memory).
BufferPtr device_buffer(Device& dev, Backend* backend, size_t words, Access access,
                        const std::string& name) {
  if (!backend || !backend->needs_own_memory()) return dev.alloc(words, access, name);
  struct Held {
    std::shared_ptr<float> memory;
    BufferPtr buffer;
  };
  auto held = std::make_shared<Held>();
  held->memory = backend->allocate(words);
  held->buffer = dev.register_memory(held->memory.get(), words, access, name);
  return BufferPtr(held, held->buffer.get());
}

// `b` holds at least `words` floats: kept when it does, else a new buffer.
void ensure(Device& dev, Backend* backend, BufferPtr& b, size_t words, Access access,
            const std::string& name) {
  if (!b || b->size() < words) b = device_buffer(dev, backend, words, access, name);
}

}  // namespace

RnnStack::RnnStack(const StackConfig& config, Device& device, Backend& backend, Trace* trace)
    : cfg_(config), dev_(device), be_(backend), trace_(trace), impl_(std::make_unique<Impl>()) {
  cfg_.validate();
  const int G = gate_count(cfg_.cell), H = cfg_.hidden, D = cfg_.directions();
  // Before anything is allocated for the layers (--hidden 100000 once ran the
  // host out of memory before the device refused the layer).
  dev_.caps().check_layer(cfg_.cell, H);
  for (int l = 0; l < cfg_.layers; ++l) {
    const int in = l == 0 ? cfg_.input : D * H;
    for (int d = 0; d < D; ++d) {
      const std::string sfx = std::to_string(l) + (d ? "_reverse" : "");
      const std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
          {"weight_ih_l" + sfx, {G * H, in}}, {"weight_hh_l" + sfx, {G * H, H}},
          {"bias_ih_l" + sfx, {G * H}}, {"bias_hh_l" + sfx, {G * H}}};
      for (const auto& [name, shape] : shapes) {
        size_t n = 1;
        for (int64_t s : shape) n *= static_cast<size_t>(s);
        params_.push_back(
            {name, shape, device_buffer(dev_, &be_, n, Access::kRead, name), Array(be_, n)});
      }
      impl_->units.emplace_back(cfg_);
    }
  }
  const int banks = dev_.caps().num_banks;
  impl_->bank_unit.assign(static_cast<size_t>(banks), -1);
  impl_->bank_job.resize(static_cast<size_t>(banks));
  impl_->bank_used.assign(static_cast<size_t>(banks), 0);
}

RnnStack::~RnnStack() {
  try {
    dev_.drain();
  } catch (const std::exception&) {  // a destructor must not throw; the jobs hold their own errors
  }
}

void RnnStack::init_uniform(uint64_t seed) {
  be_.synchronize();  // the host writes the backend's memory
  std::mt19937_64 rng(seed);
  const double k = 1.0 / std::sqrt(static_cast<double>(cfg_.hidden));
  for (Param& p : params_) {
    for (size_t i = 0; i < p.size(); ++i) p.data()[i] = static_cast<float>(k * (2 * golden::uniform01(rng) - 1));
  }
}

void RnnStack::set_params(const io::TensorList& tensors, const std::string& source) {
  be_.synchronize();  // the host writes the backend's memory
  for (const auto& [name, t] : tensors) {
    bool known = false;
    for (const Param& p : params_) known |= p.name == name;
    if (!known) {
      throw std::invalid_argument(source + ": tensor '" + name + "' is not a parameter of a " + cfg_.describe() +
                                  " (check --cell, --layers, --bidirectional)");
    }
  }
  for (Param& p : params_) {
    const io::Tensor* t = nullptr;
    for (const auto& [name, tensor] : tensors) {
      if (name == p.name) t = &tensor;
    }
    if (!t) throw std::invalid_argument(source + ": parameter '" + p.name + "' of a " + cfg_.describe() + " is missing");
    if (t->shape != p.shape) {
      io::Tensor want;
      want.shape = p.shape;
      throw std::invalid_argument(source + ": '" + p.name + "' has shape " + t->shape_string() + ", a " +
                                  cfg_.describe() + " needs " + want.shape_string() +
                                  " (check --hidden, --cell and the input size)");
    }
    std::copy(t->data.begin(), t->data.end(), p.data());
  }
}

io::TensorList RnnStack::param_tensors(const std::string& prefix) const {
  be_.synchronize();  // the host reads the backend's memory
  io::TensorList out;
  for (const Param& p : params_) out.push_back({prefix + p.name, {p.shape, {p.data(), p.data() + p.size()}}});
  return out;
}

io::TensorList RnnStack::grad_tensors(const std::string& prefix) const {
  be_.synchronize();
  io::TensorList out;
  for (const Param& p : params_) out.push_back({prefix + p.name, {p.shape, p.grad.to_vector()}});
  return out;
}

int RnnStack::bank_for(int unit) {
  Impl& m = *impl_;
  const int banks = static_cast<int>(m.bank_unit.size());
  for (int k = 0; k < banks; ++k) {
    if (m.bank_unit[static_cast<size_t>(k)] == unit) return k;
  }
  const auto lru = std::min_element(m.bank_used.begin(), m.bank_used.end());
  const int k = static_cast<int>(lru - m.bank_used.begin());
  if (m.bank_job[static_cast<size_t>(k)]) wait_job(m.bank_job[static_cast<size_t>(k)]);  // LOAD needs the bank idle
  const Param* p = &params_[static_cast<size_t>(4 * unit)];
  used_bank(k, dev_.load(k, {cfg_.cell, cfg_.hidden, 1, 1, {}}, {p[1].value}, {p[3].value}),
            unit_label(unit));
  m.bank_unit[static_cast<size_t>(k)] = unit;
  return k;
}

void RnnStack::used_bank(int bank, const JobPtr& job, const std::string& label) {
  Impl& m = *impl_;
  m.bank_job[static_cast<size_t>(bank)] = job;
  m.bank_used[static_cast<size_t>(bank)] = ++m.commands;
  m.submitted.push_back({job, label});
}

void RnnStack::recorded(int unit, int group, int bank) {
  Impl& m = *impl_;
  const int limit = dev_.caps().forward_records;
  if (limit <= 0) return;
  // The FORWARD voids the record of its gate store, the (unit, group)'s,
  // whatever bank that one was on, as the device does.
  std::erase_if(m.records,
                [&](const std::array<int, 3>& r) { return r[0] == unit && r[1] == group; });
  m.records.push_back({unit, group, bank});
  if (m.records.size() > static_cast<size_t>(limit)) m.records.pop_front();
}

void RnnStack::refresh_record(int unit, int group, int bank) {
  Impl& m = *impl_;
  if (dev_.caps().forward_records <= 0) return;
  const std::array<int, 3> key = {unit, group, bank};
  if (std::find(m.records.begin(), m.records.end(), key) != m.records.end()) return;
  // The same FORWARD again (same xp and weights: the same h, written over
  // itself, and the same gate store), ungated; its final state is not kept.
  Impl::Unit& u = m.units[static_cast<size_t>(unit)];
  const Impl::Group& g = m.groups[static_cast<size_t>(group)];
  const int G = gate_count(cfg_.cell), H = cfg_.hidden;
  const size_t off = static_cast<size_t>(g.offset);
  ForwardArgs a{g.shape,
                bank,
                {u.xp, off * G * H},
                {},
                {u.h, off * H},
                {},
                u.stores[static_cast<size_t>(group)]};
  used_bank(bank, dev_.forward(a),
            unit_label(unit, group) + ", again: the device had dropped its record");
  recorded(unit, group, bank);
}

std::string RnnStack::unit_label(int unit, int group) const {
  const int D = cfg_.directions();
  std::string s = "l" + std::to_string(unit / D) + (unit % D ? " reverse" : "");
  const auto& groups = impl_->groups;
  if (group >= 0 && groups.size() > 1) {
    const auto& g = groups[static_cast<size_t>(group)];
    s += ", sequences " + std::to_string(g.first) + "-" +
         std::to_string(g.first + g.shape.batch - 1);
  }
  return s;
}

void RnnStack::preload(int unit) {
  if (static_cast<int>(impl_->bank_unit.size()) > cfg_.directions()) bank_for(unit);
}

void RnnStack::wait_job(const JobPtr& job) {
  Trace::Scope t(trace_, "host", "wait for the device");
  job->wait();
}

void RnnStack::trace_jobs() {
  for (const auto& [job, label] : impl_->submitted) {
    const JobReport r = job->wait();
    if (!trace_) continue;
    // "FORWARD LSTM H=32 B=4 T=16 bank 0 (l1 reverse, sequences 4-7)": the
    // command, its layer-direction and (in a split batch) its sequences.
    const std::string what = r.what + " (" + label + ")";
    trace_->span("device", what, r.started, r.finished);
    const auto dma = [&](const char* lane, const JobReport::Dma& d) {
      if (d.bytes)
        trace_->span(lane, what + ": " + std::to_string(d.bytes) + " B", d.first, d.last);
    };
    dma(kTraceLaneDmaToCard, r.to_card);
    dma(kTraceLaneDmaToHost, r.to_host);
  }
  impl_->submitted.clear();
}

StackOutput RnnStack::forward(const std::vector<float>& x, int steps, int batch, const std::vector<int>& lengths) {
  // Commands of a step that failed may still run (a streamed layer's FORWARD
  // is waited for only after the next layer's GEMM): they end before their
  // words and buffers are reused; their errors went to the failed step.
  for (const auto& [job, label] : impl_->submitted) {
    try {
      job->wait();
    } catch (const std::exception&) {
    }
  }
  impl_->submitted.clear();
  Impl& m = *impl_;
  const int H = cfg_.hidden, G = gate_count(cfg_.cell), D = cfg_.directions(), L = cfg_.layers;
  const int SW = state_words(cfg_.cell);
  if (steps < 1 || batch < 1) throw std::invalid_argument("forward: steps and batch must be >= 1");
  if (x.size() != static_cast<size_t>(steps) * batch * cfg_.input) {
    throw std::invalid_argument("forward: x has " + std::to_string(x.size()) + " values, (T=" +
                                std::to_string(steps) + ", B=" + std::to_string(batch) + ", I=" +
                                std::to_string(cfg_.input) + ") needs " +
                                std::to_string(static_cast<size_t>(steps) * batch * cfg_.input));
  }
  m.shape = {cfg_.cell, H, batch, steps, lengths};
  if (!lengths.empty() && lengths.size() != static_cast<size_t>(batch)) {
    throw std::invalid_argument("forward: " + std::to_string(lengths.size()) + " lengths for a batch of " +
                                std::to_string(batch));
  }
  for (int b = 0; b < batch && !lengths.empty(); ++b) {
    if (lengths[static_cast<size_t>(b)] < 1 || lengths[static_cast<size_t>(b)] > steps) {
      throw std::invalid_argument("forward: length " + std::to_string(lengths[static_cast<size_t>(b)]) +
                                  " of sequence " + std::to_string(b) + " is outside 1.." + std::to_string(steps));
    }
  }
  // The groups: consecutive slots, at most max_batch each.
  const int group_max = std::max(1, dev_.caps().max_batch);
  m.groups.clear();
  m.S = 0;
  for (int first = 0; first < batch; first += group_max) {
    Impl::Group g;
    g.first = first;
    g.offset = m.S;
    g.shape = {cfg_.cell, H, std::min(group_max, batch - first), steps, {}};
    if (!lengths.empty()) {
      // The group's command runs its longest sequence's steps: the device's
      // step counts (gates, progress, BACKWARD's steps from the end) are of those.
      g.shape.lengths.assign(lengths.begin() + first, lengths.begin() + first + g.shape.batch);
      g.shape.steps = *std::max_element(g.shape.lengths.begin(), g.shape.lengths.end());
    }
    m.S += g.shape.packed_steps();
    m.groups.push_back(std::move(g));
  }
  // Index maps of this batch.
  m.pack.assign(static_cast<size_t>(m.S), 0);
  m.unpack.assign(static_cast<size_t>(steps) * batch, -1);
  m.rev.assign(static_cast<size_t>(m.S), 0);
  m.prev.assign(static_cast<size_t>(m.S), -1);
  m.last.assign(static_cast<size_t>(batch), 0);
  for (const Impl::Group& g : m.groups) {
    const LayerShape& s = g.shape;
    const auto packed = [&](int t, int k) { return g.offset + s.packed_index(t, k); };
    for (int t = 0; t < steps; ++t) {
      for (int k = 0; k < s.batch; ++k) {
        if (s.packed_index(t, k) < 0) continue;
        const int p = packed(t, k), b = g.first + k;
        m.pack[static_cast<size_t>(p)] = t * batch + b;
        m.unpack[static_cast<size_t>(t * batch + b)] = p;
        m.rev[static_cast<size_t>(p)] = packed(s.length(k) - 1 - t, k);
        if (t > 0) m.prev[static_cast<size_t>(p)] = packed(t - 1, k);
        if (t == s.length(k) - 1) m.last[static_cast<size_t>(b)] = p;
      }
    }
  }
  // Weights may have changed since the last step: every bank is stale.
  std::fill(m.bank_unit.begin(), m.bank_unit.end(), -1);
  m.records.clear();

  // Every device buffer of the step before its first command: a new buffer
  // changes the core's address windows, which waits for the core to go idle,
  // so one allocated midway would make a streamed layer wait for the whole
  // layer below.
  const size_t per_unit = m.groups.size();  // commands a layer-direction: one per group
  ensure(dev_, nullptr, m.ready, static_cast<size_t>(L) * D * per_unit, Access::kRead, "ready");
  ensure(dev_, nullptr, m.progress, static_cast<size_t>(L) * D * per_unit, Access::kWrite,
         "progress");
  for (Impl::Unit& u : m.units) {
    ensure(dev_, &be_, u.xp, m.rows_cap() * G * H, Access::kRead, "xp");
    ensure(dev_, &be_, u.h, m.rows_cap() * H, Access::kWrite, "h");
    ensure(dev_, nullptr, u.state_out, static_cast<size_t>(batch) * H * SW, Access::kWrite,
           "state_out");
  }
  // Layer l+1 follows layer l step by step: its first direction's FORWARDs
  // are queued (gated) while layer l's last direction runs, and each part of
  // its input GEMM waits (progress words) only for the steps it reads. One
  // direction: that is all of its input. Bidirectional: the layers run their
  // directions in alternating order (layer 0 forward then reverse, layer 1
  // reverse then forward, ...), so a layer's first direction is the one the
  // layer below ran last, whose steps come in the same time order; the other
  // half of its input, from the layer below's first direction, has ended by
  // then. The second direction's input is then complete, and its GEMM runs
  // while the device runs the first.
  const int chunks = std::min(cfg_.gemm_chunks, steps);
  StackOutput out;
  Array h_n(be_, static_cast<size_t>(L) * D * batch * H);
  if (cfg_.cell == CellKind::kLstm) out.c_n.assign(h_n.size(), 0.0f);
  m.x.clear();
  m.x.resize(static_cast<size_t>(L));
  {
    Trace::Scope t(trace_, "compute", "pack x");
    const Array x_padded(be_, x);
    m.x[0].resize(be_, static_cast<size_t>(m.S) * cfg_.input);
    be_.copy_rows(x_padded.data(), cfg_.input, m.x[0].data(), cfg_.input, m.S, cfg_.input,
                  m.pack.data(), 0.0f);
  }
  // Waits for layer l's FORWARDs; its h_n and c_n; with `into`, its h in the
  // next layer's input layout.
  const auto finish = [&](int l, const std::vector<JobPtr>& jobs, Array* into) {
    for (int d = 0; d < D; ++d) {
      const int i = l * D + d;
      Impl::Unit& u = m.units[static_cast<size_t>(i)];
      for (size_t k = 0; k < per_unit; ++k) wait_job(jobs[static_cast<size_t>(d) * per_unit + k]);
      Trace::Scope t(trace_, "compute", "collect h l" + std::to_string(l));
      if (into) {
        be_.copy_rows(u.h->data(), H, into->data() + d * H, D * H, m.S, H,
                      d ? m.rev.data() : nullptr, 0.0f);
      }
      float* hn = h_n.data() + static_cast<size_t>(i) * batch * H;
      be_.copy_rows(u.h->data(), H, hn, H, batch, H, m.last.data(), 0.0f);
      // c from each group's final states, which come in the group's end order.
      if (cfg_.cell == CellKind::kLstm) {
        float* cn = out.c_n.data() + static_cast<size_t>(i) * batch * H;
        for (const Impl::Group& g : m.groups) {
          const std::vector<int> order = g.shape.end_order();
          for (int pos = 0; pos < g.shape.batch; ++pos) {
            const float* st = u.state_out->data() + static_cast<size_t>(g.first + pos) * H * 2;
            const size_t b = static_cast<size_t>(g.first + order[static_cast<size_t>(pos)]);
            for (int j = 0; j < H; ++j) cn[b * H + j] = st[2 * j + 1];
          }
        }
      }
    }
  };
  // The layer below's FORWARDs, [d * groups + k], not yet waited for.
  std::vector<JobPtr> prev_jobs;
  for (int l = 0; l < L; ++l) {
    const int in = l == 0 ? cfg_.input : D * H;
    if (l > 0) m.x[static_cast<size_t>(l)].resize(be_, static_cast<size_t>(m.S) * in);
    std::vector<JobPtr> jobs(static_cast<size_t>(D) * per_unit);
    for (int pos = 0; pos < D; ++pos) {
      const int d = forward_order(D, l)[static_cast<size_t>(pos)], i = l * D + d;
      Impl::Unit& u = m.units[static_cast<size_t>(i)];
      const Param& w_ih = params_[static_cast<size_t>(4 * i)];
      const Param& b_ih = params_[static_cast<size_t>(4 * i + 2)];
      // The unit's input, its rows in the direction's time order.
      if (d == 1) u.x_rev.resize(be_, static_cast<size_t>(m.S) * in);
      Array& xin = d == 1 ? u.x_rev : m.x[static_cast<size_t>(l)];
      // The unit's weights into a bank, then its FORWARDs (one per group),
      // each gated on a ready-steps word: it reads step t's xp once the word
      // is above t. The layer's last direction reports its progress.
      const int bank = bank_for(i);
      u.stores.clear();  // release the previous batch's stores before allocating this one's
      std::vector<BufferRef> ready;
      // Should anything below throw (a gate store that does not fit, the
      // backend, the layer below), every gate opens first: no queued FORWARD
      // waits forever.
      try {
        for (size_t k = 0; k < m.groups.size(); ++k) {
          const Impl::Group& g = m.groups[k];
          const size_t off = static_cast<size_t>(g.offset);
          ready.push_back(m.ready_word(i, k));
          ready.back().store_word(0);
          u.stores.push_back(dev_.alloc_gate_store(g.shape));
          ForwardArgs a{g.shape,
                        bank,
                        {u.xp, off * G * H},
                        {},
                        {u.h, off * H},
                        {u.state_out, static_cast<size_t>(g.first) * H * SW},
                        u.stores.back()};
          a.sync.ready = ready.back();
          if (pos == D - 1) {
            a.sync.progress = m.progress_word(i, k);
            a.sync.progress.store_word(0);
          }
          jobs[static_cast<size_t>(d) * per_unit + k] = dev_.forward(a);
          used_bank(bank, jobs[static_cast<size_t>(d) * per_unit + k],
                    unit_label(i, static_cast<int>(k)));
          recorded(i, static_cast<int>(k), bank);
        }
        // The input GEMM in `chunks` parts over time, each published to every
        // group's gate as soon as it is computed; a trace span per part.
        const std::string gemm = "input GEMM l" + std::to_string(l) + (d ? " reverse" : "");
        std::optional<Trace::Scope> prep(std::in_place, trace_, "compute", gemm + ", weights");
        // Streamed: the layer below's direction d, part by part below. The
        // other half of a bidirectional input: the layer below's first
        // direction, ended, in this direction's time order.
        const bool follows = l > 0 && pos == 0;
        if (follows && D == 2) {
          for (size_t k = 0; k < per_unit; ++k)
            wait_job(prev_jobs[static_cast<size_t>(1 - d) * per_unit + k]);
          be_.copy_rows(m.units[static_cast<size_t>((l - 1) * D + 1 - d)].h->data(), H,
                        xin.data() + (1 - d) * H, in, m.S, H, m.rev.data(), 0.0f);
        } else if (pos == 1) {
          // The first direction's input is complete (layer 0: x; above: the
          // layer below has ended); this one's is it, time reversed.
          if (l > 0) finish(l - 1, prev_jobs, nullptr);
          const Array& first =
              d == 1 ? m.x[static_cast<size_t>(l)] : m.units[static_cast<size_t>(l * D + 1)].x_rev;
          be_.copy_rows(first.data(), in, xin.data(), in, m.S, in, m.rev.data(), 0.0f);
        }
        u.w_u.resize(be_, static_cast<size_t>(G) * H * in);
        u.w_u4.resize(be_, static_cast<size_t>(4) * H * in);
        u.b_u.resize(be_, static_cast<size_t>(G) * H);
        be_.copy_rows(w_ih.data(), in, u.w_u.data(), in, G * H, in, u.maps.to_unit.data(), 0.0f);
        be_.copy_rows(w_ih.data(), in, u.w_u4.data(), in, 4 * H, in, u.maps.to_unit4.data(), 0.0f);
        be_.copy_rows(b_ih.data(), 1, u.b_u.data(), 1, G * H, 1, u.maps.to_unit.data(), 0.0f);
        for (int c = 0; c < chunks; ++c) {
          const int t0 = steps * c / chunks, t1 = steps * (c + 1) / chunks;
          prep.reset();
          // Streamed: the layer below's h of these steps, as its FORWARDs
          // write them, into this direction's half of the input.
          const int below = (l - 1) * D + d;
          for (size_t k = 0; follows && k < m.groups.size(); ++k) {
            const Impl::Group& g = m.groups[k];
            const int r0 = g.rows_before(t0), rows = g.rows_before(t1) - r0;
            if (rows == 0) continue;
            {
              Trace::Scope w(trace_, "host",
                             "wait for " + unit_label(below) + "'s steps " + std::to_string(t0) +
                                 "-" + std::to_string(t1 - 1));
              prev_jobs[static_cast<size_t>(d) * per_unit + k]->wait_progress(
                  m.progress_word(below, k), static_cast<uint32_t>(std::min(t1, g.shape.steps)));
            }
            be_.copy_rows(
                m.units[static_cast<size_t>(below)].h->data() + static_cast<size_t>(r0) * H, H,
                xin.data() + static_cast<size_t>(r0) * in + d * H, in, rows, H, nullptr, 0.0f);
          }
          Trace::Scope part(trace_, "compute",
                            gemm + ", part " + std::to_string(c + 1) + "/" +
                                std::to_string(chunks) + " (steps " + std::to_string(t0) + "-" +
                                std::to_string(t1 - 1) + ")");
          for (const Impl::Group& g : m.groups) {
            const int r0 = g.rows_before(t0), rows = g.rows_before(t1) - r0;
            if (rows == 0) continue;
            float* xp = u.xp->data() + static_cast<size_t>(r0) * G * H;
            be_.gemm(false, true, rows, G * H, in, 1.0f, xin.data() + static_cast<size_t>(r0) * in,
                     in, u.w_u.data(), in, 0.0f, xp, G * H);
            be_.add_row_vector(xp, rows, G * H, G * H, u.b_u.data());
          }
          be_.synchronize();
          for (const BufferRef& r : ready) r.store_word(static_cast<uint32_t>(t1));
        }
      } catch (...) {
        for (const BufferRef& r : ready)
          r.store_word(static_cast<uint32_t>(steps));  // no gate stays closed
        throw;
      }
    }
    // One direction: the layer below is done with (its h went into this
    // layer's input part by part). Its bank is then free for the next
    // layer's weights, which load while this layer runs.
    if (D == 1 && l > 0) finish(l - 1, prev_jobs, nullptr);
    if (l + 1 < L) preload((l + 1) * D + forward_order(D, l + 1)[0]);
    prev_jobs = std::move(jobs);
  }
  Array y(be_, static_cast<size_t>(m.S) * D * H);  // the top layer's packed output
  finish(L - 1, prev_jobs, &y);
  Array y_padded(be_, static_cast<size_t>(steps) * batch * D * H);
  be_.copy_rows(y.data(), D * H, y_padded.data(), D * H, steps * batch, D * H, m.unpack.data(),
                0.0f);
  be_.synchronize();
  out.y = y_padded.to_vector();
  out.h_n = h_n.to_vector();
  m.have_forward = true;
  trace_jobs();
  return out;
}

std::vector<float> RnnStack::backward(const std::vector<float>& dy) {
  Impl& m = *impl_;
  if (!m.have_forward) throw std::logic_error("backward: no forward to differentiate; call forward() first");
  const int H = cfg_.hidden, G = gate_count(cfg_.cell), D = cfg_.directions(), L = cfg_.layers;
  const int T = m.shape.steps, B = m.shape.batch;
  if (dy.size() != static_cast<size_t>(T) * B * D * H) {
    throw std::invalid_argument("backward: dy has " + std::to_string(dy.size()) + " values, (T, B, D*H) needs " +
                                std::to_string(static_cast<size_t>(T) * B * D * H));
  }
  Array dy_packed(be_, static_cast<size_t>(m.S) * D * H);
  {
    const Array dy_padded(be_, dy);
    be_.copy_rows(dy_padded.data(), D * H, dy_packed.data(), D * H, m.S, D * H, m.pack.data(),
                  0.0f);
  }

  // The weight gradients of one layer-direction, from its delta.
  auto weight_grads = [&](int l) {
    const int in = l == 0 ? cfg_.input : D * H;
    for (int d = 0; d < D; ++d) {
      const int i = l * D + d;
      Impl::Unit& u = m.units[static_cast<size_t>(i)];
      Trace::Scope t(trace_, "compute", "gradient GEMMs l" + std::to_string(l) + (d ? " reverse" : ""));
      const float* delta = u.delta->data();
      const float* xin = d ? u.x_rev.data() : m.x[static_cast<size_t>(l)].data();
      Array g4(be_, static_cast<size_t>(4) * H * std::max(in, H));
      Array h_prev(be_, static_cast<size_t>(m.S) * H), sums(be_, static_cast<size_t>(4) * H);
      Param* p = &params_[static_cast<size_t>(4 * i)];
      be_.gemm(true, false, 4 * H, in, m.S, 1.0f, delta, 4 * H, xin, in, 0.0f, g4.data(), in);
      be_.copy_rows(g4.data(), in, p[0].grad.data(), in, G * H, in, u.maps.grad_ih.data(), 0.0f);
      be_.copy_rows(u.h->data(), H, h_prev.data(), H, m.S, H, m.prev.data(), 0.0f);
      be_.gemm(true, false, 4 * H, H, m.S, 1.0f, delta, 4 * H, h_prev.data(), H, 0.0f, g4.data(), H);
      be_.copy_rows(g4.data(), H, p[1].grad.data(), H, G * H, H, u.maps.grad_hh.data(), 0.0f);
      be_.column_sums(delta, m.S, 4 * H, 4 * H, sums.data(), 0.0f);
      be_.copy_rows(sums.data(), 1, p[2].grad.data(), 1, G * H, 1, u.maps.grad_ih.data(), 0.0f);
      be_.copy_rows(sums.data(), 1, p[3].grad.data(), 1, G * H, 1, u.maps.grad_hh.data(), 0.0f);
    }
  };

  // Layer-direction i's BACKWARDs, a command per group, on the bank holding
  // its weights. Gated: each reads its steps' dh once its ready-steps word
  // (set to 0 here) counts them; `report`: each writes its progress word.
  const size_t per_unit = m.groups.size();
  const auto submit = [&](int i, bool gated, bool report) {
    Impl::Unit& u = m.units[static_cast<size_t>(i)];
    const int bank = bank_for(i);
    std::vector<JobPtr> jobs;
    for (size_t k = 0; k < per_unit; ++k) {
      const Impl::Group& g = m.groups[k];
      const size_t off = static_cast<size_t>(g.offset);
      refresh_record(i, static_cast<int>(k), bank);
      BackwardArgs a{
          g.shape, bank, u.stores[k], {u.dh, off * H}, {}, {u.delta, off * kDeltaWords * H}, {}};
      if (gated) {
        a.sync.ready = m.ready_word(i, k);
        a.sync.ready.store_word(0);
      }
      if (report) {
        a.sync.progress = m.progress_word(i, k);
        a.sync.progress.store_word(0);
      }
      jobs.push_back(dev_.backward(a));
      used_bank(bank, jobs.back(), unit_label(i, static_cast<int>(k)));
    }
    return jobs;
  };
  for (int i = 0; i < L * D; ++i) {
    Impl::Unit& u = m.units[static_cast<size_t>(i)];
    ensure(dev_, &be_, u.dh, m.rows_cap() * H, Access::kRead, "dh");
    ensure(dev_, &be_, u.delta, m.rows_cap() * kDeltaWords * H, Access::kWrite, "delta");
  }
  // dh of layer l's direction d from the gradient of the layer's output.
  const auto fill_dh = [&](int l, int d, const Array& dout) {
    Trace::Scope t(trace_, "compute", "dh l" + std::to_string(l));
    be_.copy_rows(dout.data() + d * H, D * H, m.units[static_cast<size_t>(l * D + d)].dh->data(), H,
                  m.S, H, d ? m.rev.data() : nullptr, 0.0f);
    be_.synchronize();  // the BACKWARD reads dh
  };
  // Layer l-1 follows layer l down the stack the way the forward goes up:
  // its first direction's BACKWARDs are queued (gated on its ready word)
  // while layer l's last direction runs, and layer l's dx GEMM into that
  // direction's dh runs in `gemm_chunks` parts that follow layer l's
  // progress, a group at a time as the device runs them and in each the
  // latest steps first (BACKWARD runs time backwards), each part published
  // to the gate. Directions run in the opposite order of the forward's, so
  // a layer's first direction is the one the layer above ran last, in the
  // same time order; in a bidirectional stack the other half of its dh (from
  // the layer above's first direction, ended) is added in whole, time
  // reversed, and its second direction's dh is computed once the layer above
  // has ended, while the device runs the first. Layer l's weight-gradient
  // GEMMs run beside layer l-1's BACKWARDs.
  const int chunks = std::min(cfg_.gemm_chunks, T);
  const auto unit = [D](int l, int d) { return l * D + d; };
  // dh rows [r0, r0 + rows) of layer l-1's direction `to` from layer l's
  // direction `from`: delta(l, from) times the `to` columns of its W_ih.
  const auto dh_part = [&](int l, int from, int to, int r0, int rows, float* dh) {
    const Impl::Unit& u = m.units[static_cast<size_t>(unit(l, from))];
    be_.gemm(false, false, rows, H, 4 * H, 1.0f,
             u.delta->data() + static_cast<size_t>(r0) * kDeltaWords * H, 4 * H,
             u.w_u4.data() + to * H, D * H, 0.0f, dh, H);
  };
  std::vector<std::vector<JobPtr>> jobs(
      static_cast<size_t>(D));  // layer l's, by position in its order
  {
    const std::vector<int> top = backward_order(D, L - 1);
    for (int pos = 0; pos < D; ++pos) {
      fill_dh(L - 1, top[static_cast<size_t>(pos)], dy_packed);
      jobs[static_cast<size_t>(pos)] =
          submit(unit(L - 1, top[static_cast<size_t>(pos)]), false, pos == D - 1 && L > 1);
    }
  }
  Array dx_packed;
  for (int l = L - 1; l >= 0; --l) {
    const std::vector<int> e = backward_order(D, l);
    std::vector<std::vector<JobPtr>> below(static_cast<size_t>(D));
    if (l > 0) {
      const int f = e[static_cast<size_t>(D - 1)];  // layer l-1's first direction
      float* dh = m.units[static_cast<size_t>(unit(l - 1, f))].dh->data();
      try {
        below[0] = submit(unit(l - 1, f), true, D == 1 && l > 1);
        Array cross;  // bidirectional: from layer l's first direction, in its time order
        if (D == 2) {
          for (const JobPtr& job : jobs[0]) wait_job(job);
          Trace::Scope t(
              trace_, "compute",
              "dx GEMM " + unit_label(unit(l, e[0])) + " into " + unit_label(unit(l - 1, f)));
          cross.resize(be_, static_cast<size_t>(m.S) * H);
          dh_part(l, e[0], f, 0, m.S, cross.data());
        }
        for (size_t k = 0; k < per_unit; ++k) {
          const Impl::Group& g = m.groups[k];
          const int steps = g.shape.steps;  // the group's longest sequence
          const BufferRef ready = m.ready_word(unit(l - 1, f), k);
          for (int c = chunks - 1; c >= 0; --c) {
            const int t0 = T * c / chunks, t1 = T * (c + 1) / chunks;
            const int r0 = g.rows_before(t0), rows = g.rows_before(t1) - r0;
            if (rows == 0) continue;  // t0 at or past the group's longest sequence
            const std::string when =
                "steps " + std::to_string(t0) + "-" + std::to_string(std::min(t1, steps) - 1);
            {
              Trace::Scope w(
                  trace_, "host",
                  "wait for " + unit_label(unit(l, f), static_cast<int>(k)) + "'s " + when);
              jobs[static_cast<size_t>(D - 1)][k]->wait_progress(m.progress_word(unit(l, f), k),
                                                                 static_cast<uint32_t>(steps - t0));
            }
            Trace::Scope part(trace_, "compute",
                              "dx GEMM " + unit_label(unit(l, f), static_cast<int>(k)) + ", part " +
                                  std::to_string(chunks - c) + "/" + std::to_string(chunks) + " (" +
                                  when + ")");
            dh_part(l, f, f, r0, rows, dh + static_cast<size_t>(r0) * H);
            if (D == 2) {
              be_.copy_rows(cross.data(), H, dh + static_cast<size_t>(r0) * H, H, rows, H,
                            m.rev.data() + r0, 1.0f);
            }
            be_.synchronize();
            ready.store_word(static_cast<uint32_t>(steps - t0));
          }
        }
      } catch (...) {
        for (size_t k = 0; k < per_unit; ++k) {  // no gate stays closed
          m.ready_word(unit(l - 1, f), k).store_word(static_cast<uint32_t>(T));
        }
        throw;
      }
    }
    for (const std::vector<JobPtr>& js : jobs)
      for (const JobPtr& job : js) wait_job(job);
    if (l > 0 && D == 2) {
      // Layer l-1's second direction: its dh in whole, both directions of
      // layer l having ended; it runs after the first.
      const int s2 = e[0];
      float* dh = m.units[static_cast<size_t>(unit(l - 1, s2))].dh->data();
      {
        Trace::Scope t(trace_, "compute",
                       "dx GEMM l" + std::to_string(l) + " into " + unit_label(unit(l - 1, s2)));
        Array cross(be_, static_cast<size_t>(m.S) * H);
        dh_part(l, s2, s2, 0, m.S, dh);
        dh_part(l, e[1], s2, 0, m.S, cross.data());
        be_.copy_rows(cross.data(), H, dh, H, m.S, H, m.rev.data(), 1.0f);
        be_.synchronize();  // the BACKWARD reads dh
      }
      below[1] = submit(unit(l - 1, s2), false, l > 1);
    }
    if (l == 0) {
      // dx of the stack's input: the directions' sum, the reverse one's rows time reversed.
      Trace::Scope t(trace_, "compute", "dx GEMM l0");
      const int in = cfg_.input;
      dx_packed = Array(be_, static_cast<size_t>(m.S) * in);
      Array reverse;  // the reverse direction's, in its time order
      for (int d = 0; d < D; ++d) {
        const Impl::Unit& u = m.units[static_cast<size_t>(d)];
        if (d == 1) reverse.resize(be_, static_cast<size_t>(m.S) * in);
        be_.gemm(false, false, m.S, in, 4 * H, 1.0f, u.delta->data(), 4 * H, u.w_u4.data(), in,
                 0.0f, d == 1 ? reverse.data() : dx_packed.data(), in);
      }
      if (D == 2)
        be_.copy_rows(reverse.data(), in, dx_packed.data(), in, m.S, in, m.rev.data(), 1.0f);
    }
    weight_grads(l);
    jobs = std::move(below);
  }
  Array dx(be_, static_cast<size_t>(T) * B * cfg_.input);
  be_.copy_rows(dx_packed.data(), cfg_.input, dx.data(), cfg_.input, T * B, cfg_.input,
                m.unpack.data(), 0.0f);
  be_.synchronize();
  trace_jobs();
  return dx.to_vector();
}

}  // namespace farnn::train
