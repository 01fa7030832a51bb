// Bit-accurate model of the recurrent engine (PE chain + activation unit),
// operation for operation in the hardware's order, on binary32 bit patterns.
// RTL results are compared against it bit for bit.
//
// Layouts (the engine's stream order, see docs/architecture.md). Sequences may
// have their own lengths (1..T): step (t, b) exists while t < length(b), and
// per-step data is *packed* in PyTorch PackedSequence order — time steps in
// order, in each only the sequences still running, in slot order ([T][B] when
// every length is T). "[S]" below is that packed step index.
//   chain row k = G*j + g  <->  PyTorch row g*H + j   (unit-major, gate-minor)
//   xp      [S][G*H]   unit-major, includes b_ih (computed on the GPU side)
//   h       [S][H]
//   dh      [S][H]     gradient from the layer above
//   delta   [S][H][4]  LSTM: d(pre) of i,f,g,o   GRU: d(pre) of r,z,n and
//                      d(U_hn h + b_hn) = d(pre n) * r
//   records [S][H][8]  FW activations kept for BW (the gate store):
//                      LSTM i,f,g,o,tanh(c),c_prev,0,0  GRU r,z,n,hn,h_prev,0,0,0
//   state   per sequence, unit-interleaved: LSTM (h,c) or (dh,dc) pairs, GRU h or dh;
//           FW final states in the order the sequences end (length, then slot),
//           BW (dh0, dc0) in slot order
// The backward streams (dh in, delta out) run time backwards: reverse_time()
// turns a packed [S] array into that order, forward_time() back.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace farnn::engine {

enum class Cell : int { kLstm = 0, kGru = 1 };

inline int gates(Cell cell) { return cell == Cell::kLstm ? 4 : 3; }
// Words per unit in the state streams (h,c) / (dh,dc) for LSTM, h / dh for GRU.
inline int state_words(Cell cell) { return cell == Cell::kLstm ? 2 : 1; }
inline const char* cell_name(Cell cell) { return cell == Cell::kLstm ? "lstm" : "gru"; }

constexpr int kRecordWords = 8;
constexpr int kDeltaWords = 4;

struct Config {
  Cell cell = Cell::kLstm;
  int hidden = 1;
  int batch = 1;
  int steps = 1;
  int num_pe = 1;
  std::vector<int> lengths = {};  // per sequence, 1..steps; empty: every sequence runs `steps`
  // The PEs form num_chains chains of num_pe/num_chains (it must divide
  // num_pe); BW adds the chains' reductions in a tree (tree_sum).
  int num_chains = 1;
  int gate_rows() const { return gates(cell) * hidden; }
  int length(int b) const { return lengths.empty() ? steps : lengths[static_cast<size_t>(b)]; }
  // Sequences still running at step t, and the packed steps before step t.
  int active_at(int t) const;
  int steps_before(int t) const;
  int packed_steps() const { return steps_before(steps); }  // sum of the lengths
  // Packed index of step (t, b); -1 when sequence b has ended.
  int packed_index(int t, int b) const;
  // Slots in the order their forward ends (length, then slot).
  std::vector<int> end_order() const;
};

// A packed [S][H][words] array in backward order (time steps reversed, slots
// in order within a step), and back.
std::vector<uint32_t> reverse_time(const Config& cfg, const std::vector<uint32_t>& packed, int words);
std::vector<uint32_t> forward_time(const Config& cfg, const std::vector<uint32_t>& reversed, int words);

// Recurrent weights in PyTorch layout (weight_hh_l0, bias_hh_l0) as bit patterns.
struct Weights {
  std::vector<uint32_t> w_hh;  // [G*H][H] row-major, row g*H + j
  std::vector<uint32_t> b_hh;  // [G*H], index g*H + j
};

struct ForwardResult {
  std::vector<uint32_t> h;          // [T][B][H]
  std::vector<uint32_t> state_out;  // [B][H][state_words]
  std::vector<uint32_t> records;    // [T][B][H][8]
};

struct BackwardResult {
  std::vector<uint32_t> delta;      // [T][B][H][4]
  std::vector<uint32_t> state_out;  // [B][H][state_words]
};

// Throws std::invalid_argument naming the first size that does not fit.
void validate(const Config& cfg, const Weights& w);

// The weight stream of a LOAD: beats of `weight_lanes` 32-bit words. The
// engine writes Lanes = min(weight_lanes, num_pe) words per cycle, one into
// each of Lanes PEs (a "sub-beat"); a beat carries floor(weight_lanes / Lanes)
// sub-beats, lanes after them are padding (0). Sub-beats in order:
//   U     for each local row lr, column c, PE group q (PEs q*Lanes ..):
//         lane l = U[k][c] of chain row k = lr*num_pe + q*Lanes + l (0 where
//         that PE does not exist or k >= G*H);
//   b_hh  for each unit j, ceil(G / Lanes) sub-beats: lane l = b_hh of gate
//         s*Lanes + l of unit j (s = the sub-beat within the unit);
// then zero sub-beats up to the end of the final beat.
struct LoadLayout {
  int num_pe = 1;
  int weight_lanes = 1;
  int lanes() const { return weight_lanes < num_pe ? weight_lanes : num_pe; }
  int sub_beats_per_beat() const { return weight_lanes / lanes(); }
  int groups() const { return (num_pe + lanes() - 1) / lanes(); }
};
std::vector<uint32_t> load_image(const Config& cfg, const Weights& w, const LoadLayout& layout);
// Weight words a LOAD writes (U and b_hh): G*H*H + G*H.
inline uint64_t load_words(const Config& cfg) {
  return static_cast<uint64_t>(cfg.gate_rows()) * (cfg.hidden + 1);
}

// Words of a bank each PE holds for a layer: ceil(G*H / num_pe) rows of H.
inline long bank_words_per_pe(Cell cell, int hidden, int num_pe) {
  return (static_cast<long>(gates(cell)) * hidden + num_pe - 1) / num_pe * hidden;
}
// Largest hidden size <= max_hidden whose weights fit weight_depth words per
// PE (0 when none does).
inline int max_resident_hidden(Cell cell, int num_pe, int weight_depth, int max_hidden) {
  int h = max_hidden;
  while (h > 0 && bank_words_per_pe(cell, h, num_pe) > weight_depth) --h;
  return h;
}

// Index helpers between PyTorch gate-major rows and chain rows.
inline int chain_row(int gate, int unit, int num_gates) { return num_gates * unit + gate; }

// Per-step callbacks of forward() and backward(), for a caller that streams
// a command's input and output step by step. Step k is the command's k-th
// (FORWARD: time k; BACKWARD: the k-th from the end). `input(k)` runs before
// step k reads its rows of xp (FORWARD) or dh (BACKWARD), so it may wait for
// them and write them into the array the caller passed; `done(k, out)` runs
// once step k's rows of `out` (h or delta, packed, as returned) are final.
// Both run on the calling thread, in step order. An exception from either
// ends the command after the step in progress and is rethrown.
struct StepHooks {
  std::function<void(int k)> input;
  std::function<void(int k, const std::vector<uint32_t>& out)> done;
};

// `threads` > 1 shares each step's products and units among that many
// threads (used from 512K MACs per step; the results do not depend on it).
ForwardResult forward(const Config& cfg, const Weights& w, const std::vector<uint32_t>& xp,
                      const std::vector<uint32_t>& state_in, int threads = 1,
                      const StepHooks* hooks = nullptr);

BackwardResult backward(const Config& cfg, const Weights& w, const std::vector<uint32_t>& records,
                        const std::vector<uint32_t>& dh, const std::vector<uint32_t>& carry_in,
                        int threads = 1, const StepHooks* hooks = nullptr);

// FW sums per row: a PE holding fewer than kFwSplitRows rows (rows =
// ceil(G*H / num_pe)) keeps S sums per row, column c in sum c mod S, each
// started by its first product, and adds them at the end: the sum holding
// column H-1 first, then the others in cyclic order after it. Its adder then
// takes an element every max(rows, ceil((AddLatency + 2) / S)) cycles instead
// of every max(rows, AddLatency + 2) (engine_pkg::fw_sums). S depends on the
// rows alone (no timing parameter, so the numbers do not depend on the FP
// latencies): 1 from 5 rows on, 2 for 3-4 rows, 4 for 2, 8 for 1, at most
// the largest power of two <= H.
constexpr int kFwSplitRows = 5;
constexpr int kFwMaxSums = 8;
inline int fw_sums(int rows, int hidden) {
  int s = rows >= kFwSplitRows ? 1 : rows >= 3 ? 2 : rows == 2 ? 4 : kFwMaxSums;
  while (s > hidden) s /= 2;
  return s;
}
int fw_sums(const Config& cfg);

// --- pieces, exposed for unit tests -------------------------------------
// FW chain, k in chain order: acc[k] = ((U[k][0]*h[0] + U[k][1]*h[1]) + ...);
// with S = fw_sums > 1 sums, s_i[k] = ((U[k][i]*h[i] + U[k][i+S]*h[i+S]) + ...)
// and acc[k] = ((s_l + s_(l+1) mod S) + ...) + s_(l+S-1) mod S, l = (H-1) mod S
// (the sum that holds column H-1 first).
std::vector<uint32_t> chain_forward(const Config& cfg, const std::vector<uint32_t>& u_chain,
                                    const std::vector<uint32_t>& h_prev);
// BW chain: per PE p, partial[c] = sum over its rows lr in order of U[k][c]*delta[k];
// per chain q, sum_q[c] = (((-0 + partial_first[c]) + partial_next[c]) + ...) over
// its PEs in order; dh_rec[c] = tree_sum of sum_0[c] .. sum_{num_chains-1}[c].
std::vector<uint32_t> chain_backward(const Config& cfg, const std::vector<uint32_t>& u_chain,
                                     const std::vector<uint32_t>& delta_rows);
// The chains' adder tree (pe_chain's): level by level, v[i] = v[2i] + v[2i+1],
// an odd last element passed to the next level unchanged; v[0] at the end.
uint32_t tree_sum(std::vector<uint32_t> v);
// U reordered to chain rows: u_chain[k*H + c].
std::vector<uint32_t> to_chain_rows(const Config& cfg, const std::vector<uint32_t>& w_hh);

}  // namespace farnn::engine
