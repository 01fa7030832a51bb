// Cycle model of the recurrent engine; see engine_cycles.hpp. Times are cycle
// numbers counted from the command's acceptance (cycle 0); a command done in
// cycle d took d + 1 cycles (the engine's cnt_cycles counts both ends).
#include "farnn/engine_cycles.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace farnn::engine {
namespace {

using u64 = uint64_t;

constexpr int kActLatency = 8;  // sigmoid/tanh unit (rtl/act/act_pkg.sv ACT_LATENCY)
// Cycles from the last unit counted to done, besides the output drain: FW, its
// last h word and gate-store write (plus the store's latency); BW, the state
// words of the last dh0 unit.
constexpr u64 kFwTail = 4;
constexpr u64 kBwTail = 3;
// An output stream's last word (cycle L) to the cycles counted: the FIFO's
// count falls at L + 1, S_DRAIN sees the FIFOs idle and S_DONE is cycle L + 2.
constexpr u64 kLastWordToDone = 3;

// Latencies of the blocks, from their RTL headers.
struct Latencies {
  int drain_delay;  // PE: FW token arrival -> first drain (engine_pkg::pe_drain_delay),
                    // the final adds of several sums ((S-1)*(AddLatency + 1)) included
  int act_fw;       // FW activation datapath (act_fw_lstm / act_fw_gru)
  int act_bw;       // BW activation datapath (act_bw_lstm / act_bw_gru)
  int reduce_hop;   // BW: a reduction partial's cycles per PE
  int bcast;        // tokens: chain input -> every chain head
  int join_fw;      // FW results: chain tails -> chain output
  int join_bw;      // BW partials: chain tails -> chain output (the adder tree)
};

// engine_pkg::fw_split_wait: the final adds of several sums keep clear of
// the last element's MACs (only for AddLatency < 3).
int split_wait(int la) { return la + 2 < kFwSplitRows ? kFwSplitRows - 2 - la : 0; }
// engine_pkg::fw_final_adds: the last element's sum out of the adder to the
// start of the last of the S - 1 final adds (0 with one sum).
int final_adds(int la, int sums) { return sums > 1 ? split_wait(la) + (sums - 1) * (la + 1) : 0; }
// engine_pkg::FW_STEP_MIN: a step's last ELEM to the next step's first, at least.
constexpr int kFwStepMin = 3;

Latencies latencies(Cell cell, int fw_sums, const EngineTiming& t) {
  const int la = t.add_latency, lm = t.mul_latency;
  Latencies l;
  l.bcast = bcast_depth(t.num_chains);
  l.join_fw = join_depth(t.num_chains);
  l.join_bw = join_depth(t.num_chains) * la;
  l.drain_delay = lm + la + 4 + final_adds(la, fw_sums);
  l.act_fw = (cell == Cell::kLstm ? 3 * la : 5 * la) + 2 * lm + 2 * kActLatency;
  l.act_bw = 2 * la + 4 * lm;
  l.reduce_hop = la + 2;
  return l;
}

// Cycles from acceptance to the first cycle of S_STATE: S_IDLE (accept),
// S_SETUP, S_LENGTHS (one per sequence), S_DIVIDE (floor(G*H/P) + 1),
// S_DERIVE, S_PRODUCT, S_CHECK and S_CFGWAIT (tree + chain length + 5: the
// configuration reaches the last PE of a chain).
u64 state_start(const Config& cfg, const Schedule& s, const EngineTiming& t) {
  return 1 + 1 + static_cast<u64>(cfg.batch) + (static_cast<u64>(s.rows_floor) + 1) + 3 +
         (static_cast<u64>(bcast_depth(t.num_chains) + t.chain_len()) + 5);
}

// The chain steps of a command in issue order: (t, b), FW with t rising,
// BW with t falling from the longest length and then the final reductions
// (t = -1); prev = the index of the same sequence's previous step (-1: none).
struct Step {
  int t, b;
  long prev;
};
std::vector<Step> chain_steps(const Config& cfg, bool backward) {
  std::vector<Step> steps;
  std::vector<long> last(static_cast<size_t>(cfg.batch), -1);
  auto add = [&](int t, int b) {
    steps.push_back({t, b, last[static_cast<size_t>(b)]});
    last[static_cast<size_t>(b)] = static_cast<long>(steps.size()) - 1;
  };
  int longest = 0;
  for (int b = 0; b < cfg.batch; ++b) longest = std::max(longest, cfg.length(b));
  for (int i = 0; i < longest; ++i) {
    const int t = backward ? longest - 1 - i : i;
    for (int b = 0; b < cfg.batch; ++b)
      if (t < cfg.length(b)) add(t, b);
  }
  if (backward)
    for (int b = 0; b < cfg.batch; ++b) add(-1, b);
  return steps;
}

// An output FIFO whose room the sequencer reserves before a step's results
// reach the activation unit (credits; forward at the step's last ELEM):
// `depth` entries, each sent as `words` beats of a stream whose sink takes one
// beat every cycle (h: a word; delta: a unit's 4 words; the state: a unit's
// words one a beat). Entries are pushed in order.
class OutputFifo {
 public:
  OutputFifo(u64 depth, u64 beats) : depth_(depth), beats_(beats) {}
  // The earliest cycle >= t at which n more entries can be reserved.
  u64 reserve(u64 t, u64 n) {
    if (reserved_ + n > depth_) t = std::max(t, pops_.at(reserved_ + n - depth_ - 1) + 1);
    reserved_ += n;
    return t;
  }
  // An entry pushed in cycle t: its first beat shows 2 cycles later (or after
  // the entry before it); it leaves with its last beat.
  void push(u64 t) {
    const u64 first = pops_.empty() ? t + 2 : std::max(t + 2, pops_.back() + 1);
    pops_.push_back(first + beats_ - 1);
  }
  u64 last_pop() const { return pops_.empty() ? 0 : pops_.back(); }

 private:
  u64 depth_, beats_, reserved_ = 0;
  std::vector<u64> pops_;
};

// An input FIFO of `depth` entries filled one entry a cycle from `start` on
// (an entry enters `latency` cycles after it is sent for, and only once the
// entry `depth` places before it has left: credits), counted the cycle after
// it enters. Entries leave in order, at the cycles pop() is given.
class InputFifo {
 public:
  InputFifo(u64 depth, u64 start, u64 latency) : depth_(depth), start_(start), latency_(latency) {}
  // The cycle from which entries 0..n-1 are all counted.
  u64 counted(u64 n) {
    while (sent_.size() < n) {
      const u64 i = sent_.size();
      u64 at = i == 0 ? start_ : sent_.back() + 1;
      if (i >= depth_) at = std::max(at, pops_.at(i - depth_) + 1);
      sent_.push_back(at);
    }
    return n == 0 ? 0 : sent_[n - 1] + latency_ + 1;
  }
  void pop(u64 t) { pops_.push_back(t); }

 private:
  u64 depth_, start_, latency_;
  std::vector<u64> sent_, pops_;
};

// engine_pkg's ROW token grid, by the same names: the sparse pitch, a wave's
// span, the command's pitch (sparse unless its grid outlasts max(H, Add + 2)),
// and the skews it leaves.
int bw_pitch_sparse(int nc, int lanes, int la) { return std::max(nc, lanes * (la + 1)); }
int bw_wave_span(int chains, int pitch, int lines) { return (lines - 1) * pitch + chains; }
int bw_pitch(int h, int nc, int lines, int lanes, int la) {
  const int sparse = bw_pitch_sparse(nc, lanes, la);
  return bw_wave_span(nc, sparse, lines) <= std::max(h, la + 2) ? sparse : nc;
}
int bw_skew_reduce(int pitch, int lines, int lanes, int la) {
  return pitch > lanes * (la + 1) ? (lines - 1) * (pitch - lanes * (la + 1)) : 0;
}
int bw_skew_next(int gate_rows, int pitch, int lines, int lanes, int la) {
  const int skew = (std::min(gate_rows, lanes) - 1) * (la + 1);
  return pitch < lanes * (la + 1) ? skew + (lines - 1) * (lanes * (la + 1) - pitch) : skew;
}

// engine_pkg's row order, by the same names: one sequence on adders of their
// own with 4-row tokens; a wave's tokens chain by chain, one a cycle.
bool bw_row_order(bool red_adder, int lanes, int batch) { return red_adder && lanes == 4 && batch == 1; }
int bw_rows_span(int chains, int lines) { return chains * lines; }
int bw_rows_reduce_gap(int chains, int lines, int lm, int la) {
  return std::max(la + 2 + lm + (chains - 1) * lines, bw_rows_span(chains, lines));
}
int bw_rows_skew_next(int gate_rows, int lines, int lanes, int la) {
  return (std::min(gate_rows, lanes) - 1) * (la + 1) + (lines - 1) * (lanes * (la + 1) - 1);
}
// bw_red_after_reduce: a first row writes column c after its partial read
// it; a burst after the last wave.
int bw_red_after_reduce(int h, int skew_next, int lm, int la, int reduce_gap) {
  return std::max(skew_next > lm + la + 1 ? skew_next - lm - la : 1, std::max(h, la + 2) - reduce_gap);
}

void check(const Config& cfg, const EngineTiming& t) {
  if (cfg.hidden < 1 || cfg.batch < 1 || cfg.steps < 1 || t.num_pe < 1 || t.mul_latency < 1 ||
      t.add_latency < 1 || t.mem_latency < 1 || t.fifo_depth < 2 * cfg.hidden) {
    throw std::invalid_argument("engine cycle model: sizes and latencies must be >= 1, FIFOs hold two steps");
  }
  if (final_adds(t.add_latency, 8) + 1 > 64) {  // the sequencer's HoleBits (fw_sums_clear of 8 sums, 1 row)
    throw std::invalid_argument("engine cycle model: AddLatency " + std::to_string(t.add_latency) +
                                " past the forward hole mask's 64 offsets (at most 8)");
  }
  const int len = t.num_chains >= 1 ? t.num_pe / t.num_chains : 0;
  if (t.num_chains < 1 || t.num_chains > 512 || t.num_pe % t.num_chains != 0 ||
      (t.num_chains > 1 && (len & (len - 1)) != 0)) {
    throw std::invalid_argument("engine cycle model: " + std::to_string(t.num_chains) + " chains of " +
                                std::to_string(t.num_pe) +
                                " PEs: 1..512 chains that divide the PEs, of a power-of-two length if more than one");
  }
  const int lanes = t.lanes();
  if (!(lanes == 1 || (lanes == 4 && len % 4 == 0))) {
    throw std::invalid_argument("engine cycle model: " + std::to_string(lanes) +
                                " rows a ROW token: 1, or 4 with chains of a multiple of 4 PEs");
  }
}

}  // namespace

int row_lanes(int num_pe, int num_chains, int add_latency) {
  const int len = num_pe / num_chains;
  if (len % 4 != 0) return 1;
  const int p4 = bw_pitch_sparse(num_chains, 4, add_latency), p1 = bw_pitch_sparse(num_chains, 1, add_latency);
  return bw_skew_reduce(p4, len / 4, 4, add_latency) + bw_skew_next(4, p4, len / 4, 4, add_latency) <
                 bw_skew_reduce(p1, len, 1, add_latency)
             ? 4
             : 1;
}

int EngineTiming::lanes() const { return row_lanes != 0 ? row_lanes : engine::row_lanes(num_pe, num_chains, add_latency); }
int EngineTiming::result_lanes() const { return res_lanes != 0 ? res_lanes : engine::res_lanes(num_pe); }

int bcast_depth(int num_chains) {
  int depth = 0;
  for (int reach = 1; reach < num_chains; reach *= 4) ++depth;
  return depth;
}

int join_depth(int num_chains) {
  int depth = 0;
  for (int reach = 1; reach < num_chains; reach *= 2) ++depth;
  return depth;
}

Schedule Schedule::of(const Config& cfg, const EngineTiming& t) {
  const int g = gates(cfg.cell), h = cfg.hidden, p = t.num_pe, la = t.add_latency, lm = t.mul_latency;
  const int gh = g * h;
  Schedule s;
  s.num_gates = g;
  s.rows_floor = gh / p;
  s.rows = (gh + p - 1) / p;
  s.fw_sums = engine::fw_sums(s.rows, h);
  const int sums = s.fw_sums;
  // engine_pkg's spacing rules, by the same names.
  s.spacing_fw = std::max(s.rows, (la + 2 + sums - 1) / sums);                                  // fw_elem_spacing
  s.spacing_step = std::max(s.spacing_fw, kFwStepMin);                                          // fw_step_spacing
  s.sums_clear = sums > 1 ? final_adds(la, sums) + s.rows : 0;                                   // fw_sums_clear
  s.step_holes = 0;                                                                             // fw_step_holes
  for (int k = 1; k < sums; ++k) {
    const int centre = split_wait(la) + k * (la + 1);
    // (64 offsets: check() refuses an AddLatency whose holes lie beyond.)
    for (int d = std::max(0, centre - s.rows + 1); d < std::min(centre + s.rows, 64); ++d)
      s.step_holes |= uint64_t{1} << d;
  }
  // fw_result_gap: the drain slots of a step's results, G*H rows one a cycle,
  // or with four lanes H slots (a GRU step's ceil(3H/4) groups, counted as H
  // so that the activation unit has cut the last unit before the next step's
  // groups arrive), plus 4; and a PE holds two steps' drains, so two gaps
  // cover the drain delay and the slots.
  const int drain_slots = t.result_lanes() > 1 ? h : gh;
  const int two_back = (drain_slots + latencies(cfg.cell, sums, t).drain_delay + 4) / 2;
  s.result_gap = std::max(drain_slots + 4, two_back);                                          // fw_result_gap
  s.last_gap = std::max(s.result_gap, s.sums_clear);                                           // fw_last_gap
  const int len = t.chain_len(), nc = t.num_chains, lanes = t.lanes();
  const int tokens_last = gh % p == 0 ? p : gh % p;
  s.row_lanes = lanes;
  s.lines = len / lanes;
  s.pitch = bw_pitch(h, nc, s.lines, lanes, la);
  s.chains_last = nc == 1 ? 1 : (tokens_last - 1) / len + 1;
  s.row_order = bw_row_order(t.red_adder, lanes, cfg.batch);
  s.span_full = s.row_order ? bw_rows_span(nc, s.lines) : bw_wave_span(nc, s.pitch, s.lines);
  s.span_last = s.row_order ? bw_rows_span(s.chains_last, s.lines) : bw_wave_span(s.chains_last, s.pitch, s.lines);
  s.spacing_bw = std::max({h, la + 2, s.span_full});                                   // bw_wave_spacing
  if (s.row_order) {
    s.reduce_gap = bw_rows_reduce_gap(s.chains_last, s.lines, lm, la);
    s.after_reduce = bw_red_after_reduce(h, bw_rows_skew_next(gh, s.lines, lanes, la), lm, la, s.reduce_gap);
    return s;
  }
  // bw_reduce_gap: on the MAC adder the partials wait for a PE's whole burst,
  // on an adder of their own for the column's last MAC.
  const int burst = std::max(h, la + 2);
  s.reduce_gap = std::max((t.red_adder ? la + 2 : burst) + lm + bw_skew_reduce(s.pitch, s.lines, lanes, la) +
                              s.chains_last - 1,
                          s.span_last);
  if (!t.red_adder) {  // bw_after_reduce: the partials pass before the new MACs use the adder
    const int ared = h + bw_skew_next(gh, s.pitch, s.lines, lanes, la);
    s.after_reduce = ared > lm + 1 ? ared - lm : 1;
  } else {
    s.after_reduce = bw_red_after_reduce(h, bw_skew_next(gh, s.pitch, s.lines, lanes, la), lm, la, s.reduce_gap);
  }
  return s;
}

u64 load_cycles(const Config& cfg, const EngineTiming& t) {
  check(cfg, t);
  const LoadLayout layout{t.num_pe, t.weight_lanes};
  const Schedule s = Schedule::of(cfg, t);
  const u64 h = cfg.hidden, g = s.num_gates, lanes = layout.lanes(), groups = layout.groups();
  const u64 sub_beats = static_cast<u64>(s.rows) * h * groups + h * ((g + lanes - 1) / lanes);
  // L_IDLE (accept), L_SETUP, L_DIVIDE (floor(G*H/P) + 1), L_CHECK, L_RUN
  // (one sub-beat a cycle), L_DRAIN (the bus reaches the last group: groups + 4),
  // L_DONE.
  return 1 + 1 + (static_cast<u64>(s.rows_floor) + 1) + 1 + sub_beats + (groups + 4) + 1;
}

namespace {

// A FORWARD command's cycles, and the most step descriptors it holds at once
// in the engine's descriptor FIFO.
struct ForwardRun {
  u64 cycles;
  int descriptors;
};

ForwardRun forward_run(const Config& cfg, const EngineTiming& t) {
  check(cfg, t);
  const Schedule s = Schedule::of(cfg, t);
  const Latencies l = latencies(cfg.cell, s.fw_sums, t);
  const u64 h = cfg.hidden, g = s.num_gates;
  const std::vector<Step> order = chain_steps(cfg, false);
  const u64 steps = order.size();
  // Last ELEM of a step issued -> unit 0 of that step counted by the sequencer:
  // token register, chain (broadcast tree, drain delay, one hop per PE of a
  // chain, result relay, join tree), the unit's G gate results (one lane: G
  // cycles, a unit every G; four lanes: the group FIFO and the side-RAM read,
  // 3 cycles, a unit a cycle), the FW datapath, the unit counter.
  const bool wide = t.result_lanes() > 1;
  const u64 unit_gap = wide ? 1 : g;  // cycles between a step's units
  const u64 dep = 1 + l.bcast + l.drain_delay + t.chain_len() + 2 + l.join_fw + 1 + (wide ? 3 : g - 1) + l.act_fw;
  const u64 st = state_start(cfg, s, t);
  // S_STATE lasts a cycle: the ELEMs may go from S_RUN on (st + 1). The state
  // loader beside them takes the initial state (H or 2*H words a slot, slot
  // by slot) a word a cycle from st on, except in the cycles in which the
  // activation unit writes a unit (the buffers' one write port): a slot's
  // first step (t = 0) goes once its words are in, the cycle after its last.
  // The last ELEM of step n needs the Xp of steps 0..n (H units a step, a
  // beat a cycle from S_STATE on: G beats a unit with 32-bit words).
  const u64 xp_beats = t.xp_words > 1 ? h : g * h;
  const u64 first = st + 1;
  const u64 slot_words = h * state_words(cfg.cell);
  std::vector<u64> unit_writes;  // cycles in which the activation unit writes a unit, rising
  size_t writes_seen = 0;
  u64 load_at = st;              // the loader's next cycle
  auto load_slot = [&]() {       // takes a slot's words; the cycle after its last
    for (u64 w = 0; w < slot_words; ++load_at) {
      while (writes_seen < unit_writes.size() && unit_writes[writes_seen] < load_at) ++writes_seen;
      if (writes_seen == unit_writes.size() || unit_writes[writes_seen] != load_at) ++w;
    }
    return load_at;
  };
  const u64 depth = static_cast<u64>(t.fifo_depth);
  OutputFifo h_out(depth, 1), state_out(depth, state_words(cfg.cell));
  std::vector<u64> first_elem(steps), last(steps);
  u64 prev = 0;
  bool any = false;
  for (u64 n = 0; n < steps; ++n) {
    const Step& st_n = order[n];
    const bool final_step = st_n.t + 1 == cfg.length(st_n.b);  // the sequence's last time step
    for (u64 j = 0; j < h; ++j) {
      u64 at = first;
      if (st_n.prev < 0 && j == 0) at = std::max(at, load_slot());  // t = 0: the slot's state in
      if (any) at = std::max(at, prev + (j == 0 ? s.spacing_step : s.spacing_fw));
      if (st_n.prev >= 0) at = std::max(at, last[static_cast<u64>(st_n.prev)] + dep + unit_gap * j);  // its unit j
      if (j + 1 == h && n > 0) at = std::max(at, last[n - 1] + s.last_gap + 1);  // drain slots, final adds
      if (j + 1 == h) at = std::max(at, st + xp_beats * (n + 1));                 // the step's Xp in
      // The previous step's final adds: its holes are skipped (all of them
      // lie before the earliest last ELEM, so the reservations below follow).
      while (n > 0 && at - last[n - 1] < 64 && (s.step_holes >> (at - last[n - 1]) & 1) != 0) ++at;
      if (j + 1 == h) {  // room for the step's outputs, reserved by its last ELEM
        at = h_out.reserve(at, h);
        if (final_step) at = state_out.reserve(at, h);
      }
      prev = at;
      any = true;
      if (j == 0) first_elem[n] = at;
    }
    last[n] = prev;
    for (u64 j = 0; j < h; ++j) {  // unit j counted at last + dep + unit_gap*j, pushed a cycle before
      const u64 written = last[n] + dep - 1 + unit_gap * j;
      unit_writes.push_back(written);
      h_out.push(written);
      if (final_step) state_out.push(written);
    }
  }
  // The last unit of the last step, then its h word and gate-store record out.
  const u64 end = last[steps - 1] + dep + unit_gap * (h - 1) + kFwTail + t.mem_latency;
  // A step's descriptor is pushed at its first ELEM and read by the
  // activation unit when the step's unit 0 arrives, before the sequencer
  // counts it at last + dep: counted from first ELEM to last + dep, an upper
  // bound on what the FIFO holds.
  int descriptors = 0;
  for (u64 n = 0, m = 0; n < steps; ++n) {
    while (m < steps && first_elem[m] <= last[n] + dep) ++m;
    descriptors = std::max(descriptors, static_cast<int>(m - n));
  }
  const u64 done =
      std::max({end, h_out.last_pop() + kLastWordToDone, state_out.last_pop() + kLastWordToDone});
  return {done, descriptors};
}

}  // namespace

u64 forward_cycles(const Config& cfg, const EngineTiming& t) {
  const ForwardRun r = forward_run(cfg, t);
  if (r.descriptors > kStepDescriptors)
    throw std::invalid_argument("forward: " + std::to_string(r.descriptors) +
                                " step descriptors in flight, more than the engine's descriptor"
                                " FIFO holds (" + std::to_string(kStepDescriptors) + ")");
  return r.cycles;
}

int forward_descriptors(const Config& cfg, const EngineTiming& t) {
  return forward_run(cfg, t).descriptors;
}

u64 backward_cycles(const Config& cfg, const EngineTiming& t) {
  check(cfg, t);
  const Schedule s = Schedule::of(cfg, t);
  const Latencies l = latencies(cfg.cell, s.fw_sums, t);
  const u64 h = cfg.hidden, b = cfg.batch, g = s.num_gates, p = t.num_pe, gh = g * h;
  const u64 len = static_cast<u64>(t.chain_len()), lanes = static_cast<u64>(s.row_lanes);
  const std::vector<Step> order = chain_steps(cfg, true);  // + the final reductions (dh0)
  const u64 steps = order.size();
  const u64 waves = s.rows;
  // REDUCE issued -> unit u of its step counted (+ u): token register, the
  // broadcast tree, the partials' trip through every PE of a chain, the adder
  // tree, the chain output, the launch register, the BW datapath, the unit counter.
  const u64 dep = 4 + l.bcast + static_cast<u64>(t.chain_len()) * l.reduce_hop + l.join_bw + l.act_bw;
  const u64 st = state_start(cfg, s, t);
  // The first REDUCE needs the carry loaded (B*H words, one per cycle from
  // S_STATE on); its dh words and records come alongside (dh_in, rec_in).
  const u64 first = st + b * h;
  const u64 depth = static_cast<u64>(t.fifo_depth);
  OutputFifo delta_out(depth, 1), state_out(depth, state_words(cfg.cell));
  // A step's REDUCE needs its H dh words and H gate-store records buffered
  // (one a cycle from S_STATE on, into FIFOs of `depth`); the activation unit
  // takes unit u's word and record 2 + act_bw cycles before it is counted.
  // The dh FIFO fills as the record FIFO does (same depth, same pops) but
  // without the gate store's latency, so the records alone decide.
  InputFifo rec_in(depth, st, static_cast<u64>(t.mem_latency));
  const u64 take = dep - static_cast<u64>(l.act_bw) - 2;
  u64 in_steps = 0;  // steps whose records (and dh words) are claimed
  auto zero_step = [&](const Step& x) { return x.t >= 0 && x.t + 1 == cfg.length(x.b); };
  std::vector<u64> reduce(steps);
  u64 next = first;  // earliest cycle of the next token (spacing)
  for (u64 n = 0; n < steps; ++n) {
    if (!zero_step(order[n])) {
      // Waves of delta rows of the sequence's previous step: wave w carries
      // rows w*P .. w*P+P-1 in a grid of lines (group m4 of every chain the
      // wave reaches, one token a cycle, lines `pitch` apart) or in row order
      // (a chain's groups one a cycle, then the next chain's); a group needs
      // the units of its rows (row k: unit k/G).
      u64 at = next;
      auto token = [&](u64 w, u64 q, u64 m4) {
        const u64 k0 = w * p + q * len + m4 * lanes;
        if (k0 < gh) {
          const u64 unit = std::min(k0 + lanes - 1, gh - 1) / g;
          at = std::max(at, reduce[static_cast<u64>(order[n].prev)] + dep + unit);
        }
        at += 1;
      };
      const u64 lines = static_cast<u64>(s.lines);
      for (u64 w = 0; w < waves; ++w) {
        const bool last_wave = w + 1 == waves;
        const u64 chains = static_cast<u64>(last_wave ? s.chains_last : t.num_chains);
        if (s.row_order) {
          for (u64 q = 0; q < chains; ++q)
            for (u64 m4 = 0; m4 < lines; ++m4) token(w, q, m4);
        } else {
          for (u64 m4 = 0; m4 < lines; ++m4) {
            for (u64 q = 0; q < chains; ++q) token(w, q, m4);
            if (m4 + 1 < lines) at += static_cast<u64>(s.pitch) - chains;
          }
        }
        // The sequencer waits from the wave's last token: the spacing less the span.
        at += last_wave ? static_cast<u64>(s.reduce_gap - s.span_last) : static_cast<u64>(s.spacing_bw - s.span_full);
      }
      next = at;
    }
    // Room for the step's outputs: delta, or dh0/dc0 in a final reduction.
    OutputFifo& out = order[n].t >= 0 ? delta_out : state_out;
    reduce[n] = out.reserve(next, h);
    if (order[n].t >= 0) {
      ++in_steps;
      reduce[n] = std::max(reduce[n], rec_in.counted(in_steps * h));
      for (u64 c = 0; c < h; ++c) rec_in.pop(reduce[n] + take + c);
    }
    for (u64 c = 0; c < h; ++c) out.push(reduce[n] + dep - 1 + c);  // unit c
    next = reduce[n] + ((n + 1 < steps && zero_step(order[n + 1])) ? h + 1 : s.after_reduce);
  }
  // The last final reduction's units (dh0, dc0) and their state words out.
  const u64 end = reduce[steps - 1] + dep + kBwTail + h * state_words(cfg.cell);
  return std::max({end, delta_out.last_pop() + kLastWordToDone, state_out.last_pop() + kLastWordToDone});
}

}  // namespace farnn::engine
