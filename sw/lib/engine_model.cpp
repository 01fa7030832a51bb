// Bit-accurate model of the recurrent engine; see engine_model.hpp. Every
// arithmetic step below is one hardware operator, in the hardware's order.
#include "farnn/engine_model.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

#include "engine_kernels.hpp"
#include "farnn/activation.hpp"
#include "farnn/fp32.hpp"

namespace farnn::engine {
namespace {

constexpr uint32_t kNegZero = 0x80000000u;
constexpr uint32_t kOne = 0x3f800000u;

// The host-FPU paths are proven bit-identical to the soft-float model by
// tests/fp32 and are much faster.
inline uint32_t add(uint32_t a, uint32_t b) { return fp32::add_host(a, b); }
inline uint32_t mul(uint32_t a, uint32_t b) { return fp32::mul_host(a, b); }
inline uint32_t neg(uint32_t a) { return a ^ 0x80000000u; }
inline uint32_t sub(uint32_t a, uint32_t b) { return add(a, neg(b)); }
inline uint32_t one_minus(uint32_t a) { return add(kOne, neg(a)); }
inline uint32_t sig(uint32_t x) { return act::sigmoid(x); }
inline uint32_t tnh(uint32_t x) { return act::tanh(x); }

void expect_size(const std::vector<uint32_t>& v, size_t n, const char* what) {
  if (v.size() != n) {
    throw std::invalid_argument(std::string("engine model: ") + what + " has " +
                                std::to_string(v.size()) + " words, expected " + std::to_string(n));
  }
}

// Runs body(id, sync) on `workers` threads, the caller being worker 0; sync()
// is a barrier among them. The bodies are pure arithmetic on disjoint outputs.
template <class Body>
void run_team(int workers, const Body& body) {
  if (workers <= 1) {
    body(0, [] {});
    return;
  }
  std::barrier<> bar(workers);
  const auto sync = [&bar] { bar.arrive_and_wait(); };
  std::vector<std::jthread> pool;
  for (int id = 1; id < workers; ++id) pool.emplace_back([&, id] { body(id, sync); });
  body(0, sync);
}

// A command's StepHooks, called by worker 0. A hook's exception is kept and
// raises `stop`, which every worker reads after its next barrier (worker 0
// raised it before arriving there), so the whole team returns together; the
// caller rethrows once the team has ended.
class HookCaller {
 public:
  explicit HookCaller(const StepHooks* hooks) : hooks_(hooks) {}
  void input(int id, int k) {
    if (id == 0 && hooks_ && hooks_->input) guarded([&] { hooks_->input(k); });
  }
  void done(int id, int k, const std::vector<uint32_t>& out) {
    if (id == 0 && hooks_ && hooks_->done) guarded([&] { hooks_->done(k, out); });
  }
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  template <class F>
  void guarded(const F& f) {
    if (stopped()) return;
    try {
      f();
    } catch (...) {
      error_ = std::current_exception();
      stop_.store(true, std::memory_order_relaxed);
    }
  }
  const StepHooks* hooks_;
  std::exception_ptr error_;
  std::atomic<bool> stop_{false};
};

// [begin, end) of worker id's share of `items`, in whole multiples of `grain`.
std::pair<int, int> share(int items, int grain, int id, int workers) {
  const int units = (items + grain - 1) / grain;
  const int a = units * id / workers, b = units * (id + 1) / workers;
  return {std::min(items, a * grain), std::min(items, b * grain)};
}

// Threads worth using for B sequences of G*H x H products per step: one
// below 512K MACs, where two barriers per step cost more than they save
// (measured: LSTM H = 256, B = 1 runs faster on one thread, B = 4 on two).
int workers_for(int threads, int gate_rows, int hidden, int batch) {
  return static_cast<long>(gate_rows) * hidden * batch < (1L << 19) ? 1 : std::max(1, threads);
}

// One unit of the FW activation unit. acc/xp/b hold the unit's G gate values.
struct FwUnit {
  uint32_t h = 0;
  uint32_t state = 0;  // c (LSTM) or h (GRU)
  uint32_t record[kRecordWords] = {};
};

FwUnit fw_lstm(const uint32_t* acc, const uint32_t* xp, const uint32_t* b, uint32_t c_prev) {
  uint32_t p[4];
  for (int g = 0; g < 4; ++g) p[g] = add(add(acc[g], b[g]), xp[g]);
  const uint32_t i = sig(p[0]), f = sig(p[1]), gg = tnh(p[2]), o = sig(p[3]);
  const uint32_t c = add(mul(f, c_prev), mul(i, gg));
  const uint32_t tc = tnh(c);
  FwUnit u;
  u.h = mul(o, tc);
  u.state = c;
  const uint32_t rec[kRecordWords] = {i, f, gg, o, tc, c_prev, 0, 0};
  std::copy(rec, rec + kRecordWords, u.record);
  return u;
}

FwUnit fw_gru(const uint32_t* acc, const uint32_t* xp, const uint32_t* b, uint32_t h_prev) {
  const uint32_t a_r = add(acc[0], b[0]), a_z = add(acc[1], b[1]), a_n = add(acc[2], b[2]);
  const uint32_t r = sig(add(a_r, xp[0]));
  const uint32_t z = sig(add(a_z, xp[1]));
  const uint32_t n = tnh(add(xp[2], mul(r, a_n)));
  FwUnit u;
  u.h = add(n, mul(z, sub(h_prev, n)));
  u.state = u.h;
  const uint32_t rec[kRecordWords] = {r, z, n, a_n, h_prev, 0, 0, 0};
  std::copy(rec, rec + kRecordWords, u.record);
  return u;
}

// One unit of the BW activation unit.
struct BwUnit {
  uint32_t delta[kDeltaWords] = {};  // to the GPU side
  uint32_t rows[4] = {};             // to the chain (G used)
  uint32_t carry = 0;                // dc_{t-1} (LSTM) or dh*z (GRU)
};

BwUnit bw_lstm(uint32_t dh_ext, uint32_t dh_rec, uint32_t dc_next, const uint32_t* rec) {
  const uint32_t i = rec[0], f = rec[1], g = rec[2], o = rec[3], tc = rec[4], c_prev = rec[5];
  const uint32_t dh = add(dh_ext, dh_rec);
  const uint32_t do_act = mul(o, one_minus(o));
  const uint32_t di_act = mul(i, one_minus(i));
  const uint32_t df_act = mul(f, one_minus(f));
  const uint32_t tcm = one_minus(mul(tc, tc));
  const uint32_t gm = one_minus(mul(g, g));
  const uint32_t d_o = mul(mul(dh, tc), do_act);
  const uint32_t dc = add(dc_next, mul(mul(dh, o), tcm));
  BwUnit u;
  const uint32_t d_i = mul(mul(dc, g), di_act);
  const uint32_t d_g = mul(mul(dc, i), gm);
  const uint32_t d_f = mul(mul(dc, c_prev), df_act);
  u.carry = mul(dc, f);
  const uint32_t d[4] = {d_i, d_f, d_g, d_o};
  for (int k = 0; k < 4; ++k) u.delta[k] = u.rows[k] = d[k];
  return u;
}

BwUnit bw_gru(uint32_t dh_ext, uint32_t dh_rec, uint32_t carry, const uint32_t* rec) {
  const uint32_t r = rec[0], z = rec[1], n = rec[2], hn = rec[3], h_prev = rec[4];
  const uint32_t dh = add(add(dh_ext, dh_rec), carry);
  const uint32_t zm = one_minus(z);
  const uint32_t nm = one_minus(mul(n, n));
  const uint32_t zz = mul(z, zm);
  const uint32_t rr = mul(r, one_minus(r));
  const uint32_t d_n = mul(mul(dh, zm), nm);
  const uint32_t d_z = mul(mul(dh, sub(h_prev, n)), zz);
  const uint32_t d_hn = mul(d_n, r);
  const uint32_t d_r = mul(mul(d_n, hn), rr);
  BwUnit u;
  u.carry = mul(dh, z);
  const uint32_t d[4] = {d_r, d_z, d_n, d_hn};
  for (int k = 0; k < 4; ++k) u.delta[k] = d[k];
  u.rows[0] = d_r;
  u.rows[1] = d_z;
  u.rows[2] = d_hn;
  return u;
}

// num_chains must divide num_pe (engine_model.hpp, Config).
void check_chains(const Config& cfg) {
  if (cfg.num_chains < 1 || cfg.num_pe % cfg.num_chains != 0) {
    throw std::invalid_argument("engine model: num_chains " + std::to_string(cfg.num_chains) +
                                " must be >= 1 and divide num_pe " + std::to_string(cfg.num_pe));
  }
}

}  // namespace

int Config::active_at(int t) const {
  int n = 0;
  for (int b = 0; b < batch; ++b) n += t < length(b);
  return n;
}

int Config::steps_before(int t) const {
  int n = 0;
  for (int b = 0; b < batch; ++b) n += std::min(t, length(b));
  return n;
}

int Config::packed_index(int t, int b) const {
  if (t >= length(b)) return -1;
  int n = steps_before(t);
  for (int o = 0; o < b; ++o) n += t < length(o);
  return n;
}

std::vector<int> Config::end_order() const {
  std::vector<int> order;
  for (int t = 0; t < steps; ++t)
    for (int b = 0; b < batch; ++b)
      if (length(b) == t + 1) order.push_back(b);
  return order;
}

std::vector<uint32_t> reverse_time(const Config& cfg, const std::vector<uint32_t>& packed, int words) {
  const size_t step = static_cast<size_t>(cfg.hidden) * words;
  expect_size(packed, static_cast<size_t>(cfg.packed_steps()) * step, "packed array");
  std::vector<uint32_t> out;
  out.reserve(packed.size());
  for (int t = cfg.steps - 1; t >= 0; --t) {
    const size_t first = static_cast<size_t>(cfg.steps_before(t)) * step;
    out.insert(out.end(), packed.begin() + static_cast<long>(first),
               packed.begin() + static_cast<long>(first + cfg.active_at(t) * step));
  }
  return out;
}

std::vector<uint32_t> forward_time(const Config& cfg, const std::vector<uint32_t>& reversed, int words) {
  const size_t step = static_cast<size_t>(cfg.hidden) * words;
  expect_size(reversed, static_cast<size_t>(cfg.packed_steps()) * step, "reversed array");
  std::vector<uint32_t> out(reversed.size());
  size_t at = 0;
  for (int t = cfg.steps - 1; t >= 0; --t) {
    const size_t first = static_cast<size_t>(cfg.steps_before(t)) * step, n = cfg.active_at(t) * step;
    std::copy(reversed.begin() + static_cast<long>(at), reversed.begin() + static_cast<long>(at + n),
              out.begin() + static_cast<long>(first));
    at += n;
  }
  return out;
}

void validate(const Config& cfg, const Weights& w) {
  if (cfg.hidden < 1 || cfg.batch < 1 || cfg.steps < 1 || cfg.num_pe < 1) {
    throw std::invalid_argument("engine model: hidden, batch, steps and num_pe must be >= 1");
  }
  check_chains(cfg);
  if (!cfg.lengths.empty()) {
    if (cfg.lengths.size() != static_cast<size_t>(cfg.batch)) {
      throw std::invalid_argument("engine model: " + std::to_string(cfg.lengths.size()) + " lengths for batch " +
                                  std::to_string(cfg.batch));
    }
    for (int b = 0; b < cfg.batch; ++b) {
      if (cfg.length(b) < 1 || cfg.length(b) > cfg.steps) {
        throw std::invalid_argument("engine model: length " + std::to_string(cfg.length(b)) + " of sequence " +
                                    std::to_string(b) + " outside 1.." + std::to_string(cfg.steps));
      }
    }
  }
  const size_t gh = static_cast<size_t>(cfg.gate_rows());
  expect_size(w.w_hh, gh * cfg.hidden, "w_hh");
  expect_size(w.b_hh, gh, "b_hh");
}

std::vector<uint32_t> to_chain_rows(const Config& cfg, const std::vector<uint32_t>& w_hh) {
  const int H = cfg.hidden, G = gates(cfg.cell);
  std::vector<uint32_t> u(static_cast<size_t>(G) * H * H);
  for (int j = 0; j < H; ++j) {
    for (int g = 0; g < G; ++g) {
      const size_t k = chain_row(g, j, G), src = static_cast<size_t>(g) * H + j;
      for (int c = 0; c < H; ++c) u[k * H + c] = w_hh[src * H + c];
    }
  }
  return u;
}

std::vector<uint32_t> load_image(const Config& cfg, const Weights& w, const LoadLayout& layout) {
  validate(cfg, w);
  if (layout.num_pe < 1 || layout.weight_lanes < 1) {
    throw std::invalid_argument("engine model: load layout needs num_pe and weight_lanes >= 1");
  }
  const int H = cfg.hidden, G = gates(cfg.cell), GH = G * H, P = layout.num_pe, L = layout.lanes();
  const int rows = (GH + P - 1) / P;
  const std::vector<uint32_t> u = to_chain_rows(cfg, w.w_hh);
  std::vector<uint32_t> sub;  // sub-beats of L words, back to back
  for (int lr = 0; lr < rows; ++lr) {
    for (int c = 0; c < H; ++c) {
      for (int q = 0; q < layout.groups(); ++q) {
        for (int l = 0; l < L; ++l) {
          const int pe = q * L + l, k = lr * P + pe;
          sub.push_back(pe < P && k < GH ? u[static_cast<size_t>(k) * H + c] : 0);
        }
      }
    }
  }
  for (int j = 0; j < H; ++j) {
    for (int s0 = 0; s0 < G; s0 += L) {
      for (int l = 0; l < L; ++l) {
        const int g = s0 + l;
        sub.push_back(g < G ? w.b_hh[static_cast<size_t>(g) * H + j] : 0);
      }
    }
  }
  // Sub-beats into beats: S per beat, then padding lanes.
  const size_t per_beat = static_cast<size_t>(layout.sub_beats_per_beat()) * L;
  std::vector<uint32_t> beats;
  for (size_t i = 0; i < sub.size(); i += per_beat) {
    for (size_t x = 0; x < static_cast<size_t>(layout.weight_lanes); ++x) {
      beats.push_back(x < per_beat && i + x < sub.size() ? sub[i + x] : 0);
    }
  }
  return beats;
}

int fw_sums(const Config& cfg) { return fw_sums((cfg.gate_rows() + cfg.num_pe - 1) / cfg.num_pe, cfg.hidden); }

std::vector<uint32_t> chain_forward(const Config& cfg, const std::vector<uint32_t>& u_chain,
                                    const std::vector<uint32_t>& h_prev) {
  const int H = cfg.hidden, GH = cfg.gate_rows(), S = fw_sums(cfg);
  std::vector<uint32_t> acc(GH);
  for (int k = 0; k < GH; ++k) {
    const uint32_t* row = &u_chain[static_cast<size_t>(k) * H];
    uint32_t sum[kFwMaxSums];
    for (int c = 0; c < H; ++c) {
      const uint32_t p = mul(row[c], h_prev[c]);
      sum[c % S] = c < S ? p : add(sum[c % S], p);
    }
    const int last = (H - 1) % S;
    uint32_t a = sum[last];
    for (int i = 1; i < S; ++i) a = add(a, sum[(last + i) % S]);
    acc[k] = a;
  }
  return acc;
}

uint32_t tree_sum(std::vector<uint32_t> v) {
  if (v.empty()) throw std::invalid_argument("engine model: tree_sum of nothing");
  for (size_t n = v.size(); n > 1; n = (n + 1) / 2) {
    for (size_t i = 0; i < n / 2; ++i) v[i] = add(v[2 * i], v[2 * i + 1]);
    if (n % 2) v[n / 2] = v[n - 1];
  }
  return v[0];
}

std::vector<uint32_t> chain_backward(const Config& cfg, const std::vector<uint32_t>& u_chain,
                                     const std::vector<uint32_t>& delta_rows) {
  const int H = cfg.hidden, GH = cfg.gate_rows(), P = cfg.num_pe, C = cfg.num_chains;
  check_chains(cfg);
  std::vector<std::vector<uint32_t>> sum(static_cast<size_t>(C), std::vector<uint32_t>(H, kNegZero));
  std::vector<uint32_t> partial(H);
  for (int p = 0; p < P; ++p) {
    std::vector<uint32_t>& chain = sum[static_cast<size_t>(p / (P / C))];
    if (p >= GH) {  // no rows: the PE adds -0, which changes nothing
      for (int c = 0; c < H; ++c) chain[c] = add(chain[c], kNegZero);
      continue;
    }
    for (int k = p, lr = 0; k < GH; k += P, ++lr) {
      const uint32_t* row = &u_chain[static_cast<size_t>(k) * H];
      for (int c = 0; c < H; ++c) {
        const uint32_t prod = mul(row[c], delta_rows[k]);
        partial[c] = lr == 0 ? prod : add(partial[c], prod);
      }
    }
    for (int c = 0; c < H; ++c) chain[c] = add(chain[c], partial[c]);
  }
  std::vector<uint32_t> dh(H), column(static_cast<size_t>(C));
  for (int c = 0; c < H; ++c) {
    for (int q = 0; q < C; ++q) column[static_cast<size_t>(q)] = sum[static_cast<size_t>(q)][c];
    dh[c] = tree_sum(column);
  }
  return dh;
}

ForwardResult forward(const Config& cfg, const Weights& w, const std::vector<uint32_t>& xp,
                      const std::vector<uint32_t>& state_in, int threads, const StepHooks* hooks) {
  validate(cfg, w);
  const int H = cfg.hidden, B = cfg.batch, T = cfg.steps, G = gates(cfg.cell);
  const int GH = G * H, SW = state_words(cfg.cell);
  const size_t S = static_cast<size_t>(cfg.packed_steps());
  expect_size(xp, S * GH, "xp");
  expect_size(state_in, static_cast<size_t>(B) * H * SW, "state_in");
  const kernels::ChainMatrix u(to_chain_rows(cfg, w.w_hh), GH, H);
  const int sums = fw_sums(cfg);
  std::vector<uint32_t> bias(GH);
  for (int j = 0; j < H; ++j)
    for (int g = 0; g < G; ++g) bias[chain_row(g, j, G)] = w.b_hh[static_cast<size_t>(g) * H + j];

  // h (chain input), the cell-state buffer (c for LSTM, h for GRU) and the
  // chain's results, per sequence.
  std::vector<std::vector<uint32_t>> h(B, std::vector<uint32_t>(H)), state(B, std::vector<uint32_t>(H)),
      acc(B, std::vector<uint32_t>(GH));
  for (int b = 0; b < B; ++b) {
    for (int j = 0; j < H; ++j) {
      h[b][j] = state_in[(static_cast<size_t>(b) * H + j) * SW];
      state[b][j] = cfg.cell == Cell::kLstm ? state_in[(static_cast<size_t>(b) * H + j) * SW + 1]
                                            : h[b][j];
    }
  }
  ForwardResult out;
  out.h.resize(S * H);
  out.records.resize(S * H * kRecordWords);
  out.state_out.reserve(static_cast<size_t>(B) * H * SW);
  const int workers = std::min(workers_for(threads, GH, H, B), u.blocks);
  HookCaller hook(hooks);
  run_team(workers, [&](int id, const auto& sync) {
    const auto [q0, q1] = share(u.blocks, 1, id, workers);
    const auto [j0, j1] = share(H, 1, id, workers);
    std::vector<const uint32_t*> hp;
    std::vector<uint32_t*> ap;
    std::vector<int> slot, step;
    for (int t = 0; t < T; ++t) {
      hook.input(id, t);  // xp's rows of step t are read after the next barrier
      hp.clear(), ap.clear(), slot.clear(), step.clear();
      for (int b = 0; b < B; ++b) {
        const int p = cfg.packed_index(t, b);
        if (p < 0) continue;  // this sequence has ended
        hp.push_back(h[b].data()), ap.push_back(acc[b].data()), slot.push_back(b), step.push_back(p);
      }
      const int n = static_cast<int>(slot.size());
      kernels::forward_rows(u, sums, hp.data(), ap.data(), n, q0, q1);
      sync();
      if (hook.stopped()) return;
      for (int i = 0; i < n; ++i) {
        const int b = slot[static_cast<size_t>(i)];
        const uint32_t* x = &xp[static_cast<size_t>(step[static_cast<size_t>(i)]) * GH];
        for (int j = j0; j < j1; ++j) {
          const int k0 = G * j;
          const FwUnit r = cfg.cell == Cell::kLstm ? fw_lstm(&acc[b][k0], &x[k0], &bias[k0], state[b][j])
                                                   : fw_gru(&acc[b][k0], &x[k0], &bias[k0], state[b][j]);
          h[b][j] = r.h;
          state[b][j] = r.state;
          const size_t nn = static_cast<size_t>(step[static_cast<size_t>(i)]) * H + j;
          out.h[nn] = r.h;
          std::copy(r.record, r.record + kRecordWords, &out.records[nn * kRecordWords]);
        }
      }
      sync();
      hook.done(id, t, out.h);
    }
  });
  hook.rethrow();
  for (int b : cfg.end_order()) {
    for (int j = 0; j < H; ++j) {
      out.state_out.push_back(h[b][j]);
      if (cfg.cell == Cell::kLstm) out.state_out.push_back(state[b][j]);
    }
  }
  return out;
}

BackwardResult backward(const Config& cfg, const Weights& w, const std::vector<uint32_t>& records,
                        const std::vector<uint32_t>& dh, const std::vector<uint32_t>& carry_in,
                        int threads, const StepHooks* hooks) {
  validate(cfg, w);
  const int H = cfg.hidden, B = cfg.batch, T = cfg.steps, G = gates(cfg.cell);
  const int GH = G * H, SW = state_words(cfg.cell);
  const size_t S = static_cast<size_t>(cfg.packed_steps());
  expect_size(records, S * H * kRecordWords, "records");
  expect_size(dh, S * H, "dh");
  expect_size(carry_in, static_cast<size_t>(B) * H, "carry_in");
  const kernels::ChainMatrix u(to_chain_rows(cfg, w.w_hh), GH, H);

  std::vector<std::vector<uint32_t>> carry(B, std::vector<uint32_t>(H));
  std::vector<std::vector<uint32_t>> rows(B, std::vector<uint32_t>(GH));  // delta_{t+1} in chain rows
  std::vector<std::vector<uint32_t>> dh_rec(B, std::vector<uint32_t>(u.padded_cols));
  for (int b = 0; b < B; ++b)
    for (int j = 0; j < H; ++j) carry[b][j] = carry_in[static_cast<size_t>(b) * H + j];

  BackwardResult out;
  out.delta.resize(S * H * kDeltaWords);
  out.state_out.resize(static_cast<size_t>(B) * H * SW);
  const int workers = std::min(workers_for(threads, GH, H, B), u.padded_cols / kernels::kLanes);
  HookCaller hook(hooks);
  run_team(workers, [&](int id, const auto& sync) {
    const auto [c0, c1] = share(u.padded_cols, kernels::kLanes, id, workers);
    const auto [j0, j1] = share(H, 1, id, workers);
    std::vector<const uint32_t*> dp;
    std::vector<uint32_t*> rp;
    std::vector<int> slot, step;
    for (int t = T - 1; t >= 0; --t) {
      hook.input(id, T - 1 - t);  // dh's rows of time t are read after the next barrier
      dp.clear(), rp.clear(), slot.clear(), step.clear();
      for (int b = 0; b < B; ++b) {
        const int p = cfg.packed_index(t, b);
        if (p < 0) continue;  // this sequence starts later (backwards: ends earlier)
        slot.push_back(b), step.push_back(p);
        // The first BW step of a sequence has no recurrent gradient: the chain
        // runs a zero reduction, which yields -0 for every column.
        if (t == cfg.length(b) - 1) std::fill(dh_rec[b].begin() + c0, dh_rec[b].begin() + c1, kNegZero);
        else dp.push_back(rows[b].data()), rp.push_back(dh_rec[b].data());
      }
      kernels::backward_cols(u, cfg.num_pe, cfg.num_chains, dp.data(), rp.data(), static_cast<int>(dp.size()), c0, c1);
      sync();
      if (hook.stopped()) return;
      for (size_t i = 0; i < slot.size(); ++i) {
        const int b = slot[i];
        for (int j = j0; j < j1; ++j) {
          const size_t n = static_cast<size_t>(step[i]) * H + j;
          const uint32_t* rec = &records[n * kRecordWords];
          const BwUnit r = cfg.cell == Cell::kLstm ? bw_lstm(dh[n], dh_rec[b][j], carry[b][j], rec)
                                                   : bw_gru(dh[n], dh_rec[b][j], carry[b][j], rec);
          carry[b][j] = r.carry;
          for (int g = 0; g < G; ++g) rows[b][chain_row(g, j, G)] = r.rows[g];
          std::copy(r.delta, r.delta + kDeltaWords, &out.delta[n * kDeltaWords]);
        }
      }
      sync();
      hook.done(id, T - 1 - t, out.delta);
    }
    // Final reduction: dh0 = U^T delta_0 (+ the GRU direct term), dc0 = carry.
    dp.clear(), rp.clear();
    for (int b = 0; b < B; ++b) dp.push_back(rows[b].data()), rp.push_back(dh_rec[b].data());
    kernels::backward_cols(u, cfg.num_pe, cfg.num_chains, dp.data(), rp.data(), B, c0, c1);
    sync();
    if (hook.stopped()) return;
    for (int b = 0; b < B; ++b) {
      for (int j = j0; j < j1; ++j) {
        const size_t n = (static_cast<size_t>(b) * H + j) * SW;
        const uint32_t s = add(kNegZero, dh_rec[b][j]);
        if (cfg.cell == Cell::kLstm) {
          out.state_out[n] = s;
          out.state_out[n + 1] = carry[b][j];
        } else {
          out.state_out[n] = add(s, carry[b][j]);
        }
      }
    }
  });
  hook.rethrow();
  return out;
}

}  // namespace farnn::engine
