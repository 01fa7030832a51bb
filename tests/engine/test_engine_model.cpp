// The engine's bit-accurate layer model on its own (no RTL): against the
// float64 golden model over longer sequences and several chain sizes, the
// chain accumulation orders against direct loops, the weight-load layout, and
// size errors; the cycle model's choice of backward ROW token lanes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>

#include "engine_kernels.hpp"
#include "farnn/engine_cycles.hpp"
#include "farnn/engine_model.hpp"
#include "farnn/fp32.hpp"
#include "layer_case.hpp"

namespace farnn::tb {
namespace {

using engine::Cell;

struct FakeTb {
  [[noreturn]] void fail(const std::string& m) { throw std::runtime_error(m); }
};

// Model vs golden with the engine test's tolerance, at T up to 100 and for
// chains of 1, 3 and 16 PEs (the reduction order depends on the PE count).
TEST(EngineModel, MatchesGoldenOverLongSequences) {
  for (Cell cell : {Cell::kLstm, Cell::kGru}) {
    for (int pes : {1, 3, 16}) {
      const engine::Config cfg{cell, 24, 2, 100, pes};
      Rng rng(1000 + pes);
      const LayerCase lc = make_layer_case(rng, cfg, 13);
      const auto fw = engine::forward(cfg, lc.weights, lc.xp, lc.state_in_fw);
      const auto bw = engine::backward(cfg, lc.weights, fw.records, lc.dh_bits, lc.carry_in);
      FakeTb tb;
      SCOPED_TRACE(std::string(engine::cell_name(cell)) + " pes=" + std::to_string(pes));
      EXPECT_NO_THROW(check_against_golden(tb, lc, fw.h, fw.state_out,
                                           engine::reverse_time(cfg, bw.delta, engine::kDeltaWords),
                                           bw.state_out));
    }
  }
}

// The forward sums are a plain left-to-right fold over columns where a PE
// holds 5 rows or more (20 rows on one PE here).
TEST(EngineModel, ForwardChainOrderIsColumnFold) {
  const engine::Config cfg{Cell::kLstm, 5, 1, 1, 1};
  ASSERT_EQ(engine::fw_sums(cfg), 1);
  Rng rng(5);
  std::vector<uint32_t> u(20 * 5), h(5);
  for (auto& w : u) w = bits(static_cast<float>(rng.uniform(-1, 1)));
  for (auto& w : h) w = bits(static_cast<float>(rng.uniform(-1, 1)));
  const auto acc = engine::chain_forward(cfg, u, h);
  for (int k = 0; k < 20; ++k) {
    float a = value(u[k * 5]) * value(h[0]);
    for (int c = 1; c < 5; ++c) a = a + value(u[k * 5 + c]) * value(h[c]);
    EXPECT_EQ(acc[k], bits(a)) << "row " << k;
  }
}

// Fewer than 5 rows a PE: S sums over the columns c mod S (2 for 3-4 rows, 4
// for 2, 8 for 1, at most the largest power of two <= H), added at the end
// from the sum holding the last column on, in cyclic order.
TEST(EngineModel, ForwardSplitsSumsWhereAPeHoldsFewRows) {
  EXPECT_EQ(engine::fw_sums({Cell::kLstm, 4, 1, 1, 4}), 2);      // 4 rows
  EXPECT_EQ(engine::fw_sums({Cell::kLstm, 5, 1, 1, 4}), 1);      // 5 rows
  EXPECT_EQ(engine::fw_sums({Cell::kGru, 2, 1, 1, 2}), 2);       // 3 rows
  EXPECT_EQ(engine::fw_sums({Cell::kGru, 1, 1, 1, 1}), 1);       // one column: one sum
  EXPECT_EQ(engine::fw_sums({Cell::kLstm, 256, 1, 1, 256}), 2);  // 4 rows
  EXPECT_EQ(engine::fw_sums({Cell::kLstm, 320, 1, 1, 256}), 1);
  EXPECT_EQ(engine::fw_sums({Cell::kLstm, 128, 1, 1, 256}), 4);  // 2 rows
  EXPECT_EQ(engine::fw_sums({Cell::kLstm, 256, 1, 1, 1024}), 8);  // 1 row
  EXPECT_EQ(engine::fw_sums({Cell::kLstm, 5, 1, 1, 32}), 4);     // 1 row, H = 5: 4 sums
  EXPECT_EQ(engine::fw_sums({Cell::kGru, 3, 1, 1, 16}), 2);      // 1 row, H = 3: 2 sums
  for (auto [H, P, S] : {std::tuple{4, 4, 2}, std::tuple{5, 5, 2}, std::tuple{8, 16, 4}, std::tuple{7, 16, 4},
                         std::tuple{12, 64, 8}, std::tuple{13, 64, 8}}) {
    const engine::Config cfg{Cell::kLstm, H, 1, 1, P};
    ASSERT_EQ(engine::fw_sums(cfg), S) << "H " << H;
    Rng rng(50 + H);
    std::vector<uint32_t> u(4 * H * H), h(H);
    for (auto& w : u) w = bits(static_cast<float>(rng.uniform(-1, 1)));
    for (auto& w : h) w = bits(static_cast<float>(rng.uniform(-1, 1)));
    // Row 0: products 1, 2^24, then 1 in column S and -2^24 in column S + 1:
    // a plain fold gives 0 (1 + 2^24 rounds to 2^24), the sums 2.
    for (int c = 0; c < H; ++c) u[c] = bits(0.0f), h[c] = bits(1.0f);
    u[0] = bits(1.0f), u[1] = bits(16777216.0f), u[S] = bits(1.0f), u[(S + 1) % H] = bits(-16777216.0f);
    const auto acc = engine::chain_forward(cfg, u, h);
    EXPECT_EQ(acc[0], bits(2.0f)) << "H " << H;
    for (int k = 1; k < 4 * H; ++k) {
      float sum[8];
      for (int c = 0; c < H; ++c) {
        const float p = value(u[k * H + c]) * value(h[c]);
        sum[c % S] = c < S ? p : sum[c % S] + p;
      }
      const int last = (H - 1) % S;
      float a = sum[last];
      for (int i = 1; i < S; ++i) a = a + sum[(last + i) % S];
      EXPECT_EQ(acc[k], bits(a)) << "H " << H << " row " << k;
    }
  }
}

// The backward sums: per PE over its rows in order, then PE by PE.
TEST(EngineModel, BackwardChainOrderIsPerPeThenChain) {
  const engine::Config cfg{Cell::kGru, 3, 1, 1, 4};  // 9 rows on 4 PEs: 3, 2, 2, 2
  Rng rng(6);
  std::vector<uint32_t> u(9 * 3), d(9);
  for (auto& w : u) w = bits(static_cast<float>(rng.uniform(-1, 1)));
  for (auto& w : d) w = bits(static_cast<float>(rng.uniform(-1, 1)));
  const auto dh = engine::chain_backward(cfg, u, d);
  for (int c = 0; c < 3; ++c) {
    float total = -0.0f;
    for (int p = 0; p < 4; ++p) {
      float part = 0;
      for (int k = p, lr = 0; k < 9; k += 4, ++lr) {
        const float prod = value(u[k * 3 + c]) * value(d[k]);
        part = lr == 0 ? prod : part + prod;
      }
      total = total + part;
    }
    EXPECT_EQ(dh[c], bits(total)) << "column " << c;
  }
}

// A word for the kernel tests: mostly ordinary values, with zeros of both
// signs, subnormals, infinities, NaNs with any payload, and magnitudes whose
// products overflow or fall into the subnormal range (and get flushed).
uint32_t special_word(Rng& rng) {
  const double pick = rng.uniform(0, 1);
  const uint32_t sign = rng.uniform(0, 1) < 0.5 ? 0x80000000u : 0u;
  const uint32_t frac = static_cast<uint32_t>(rng.uniform(0, 1) * 0x7FFFFF);
  if (pick < 0.70) return bits(static_cast<float>(rng.uniform(-2, 2)));
  if (pick < 0.75) return sign;                                   // +-0
  if (pick < 0.80) return sign | std::max(1u, frac);              // subnormal
  if (pick < 0.83) return sign | 0x7F800000u;                     // +-inf
  if (pick < 0.85) return sign | 0x7F800000u | std::max(1u, frac);  // NaN, any payload
  if (pick < 0.925) return sign | (0x70u << 23) | frac;           // ~2^97: products overflow
  return sign | (0x0Au << 23) | frac;                             // ~2^-117: products underflow
}

// The fast kernels against the operator-by-operator definitions: sizes around
// the 16-lane blocks (H = 70: more than 4 blocks of rows and of columns, the
// kernels' widest groups), several chain lengths and numbers of chains (odd
// counts pass a sum past a level of the tree), 1..5 sequences per call.
TEST(EngineModel, KernelsEqualChainDefinitions) {
  Rng rng(2024);
  const std::pair<int, int> shapes[] = {{1, 1}, {3, 1}, {3, 3}, {16, 1}, {16, 4}, {16, 16}, {14, 7}, {200, 1}, {200, 5}};
  for (Cell cell : {Cell::kLstm, Cell::kGru}) {
    for (int H : {1, 5, 16, 17, 40, 70}) {
      for (const auto& [pes, chains] : shapes) {
        engine::Config cfg{cell, H, 1, 1, pes};
        cfg.num_chains = chains;
        const int GH = cfg.gate_rows();
        std::vector<uint32_t> u(static_cast<size_t>(GH) * H);
        for (auto& w : u) w = special_word(rng);
        const engine::kernels::ChainMatrix m(u, GH, H);
        for (int n = 1; n <= 5; ++n) {
          std::vector<std::vector<uint32_t>> h(n, std::vector<uint32_t>(H)), d(n, std::vector<uint32_t>(GH));
          std::vector<std::vector<uint32_t>> acc(n, std::vector<uint32_t>(GH)), dh(n, std::vector<uint32_t>(m.padded_cols));
          std::vector<const uint32_t*> hp, dp;
          std::vector<uint32_t*> ap, rp;
          for (int s = 0; s < n; ++s) {
            for (auto& x : h[s]) x = special_word(rng);
            for (auto& x : d[s]) x = special_word(rng);
            hp.push_back(h[s].data()), dp.push_back(d[s].data()), ap.push_back(acc[s].data()), rp.push_back(dh[s].data());
          }
          engine::kernels::forward_rows(m, engine::fw_sums(cfg), hp.data(), ap.data(), n, 0, m.blocks);
          engine::kernels::backward_cols(m, pes, chains, dp.data(), rp.data(), n, 0, m.padded_cols);
          for (int s = 0; s < n; ++s) {
            SCOPED_TRACE(std::string(engine::cell_name(cell)) + " H=" + std::to_string(H) + " P=" +
                         std::to_string(pes) + " C=" + std::to_string(chains) + " n=" + std::to_string(n) + " s=" + std::to_string(s));
            ASSERT_EQ(acc[s], engine::chain_forward(cfg, u, h[s]));
            ASSERT_EQ(std::vector<uint32_t>(dh[s].begin(), dh[s].begin() + H), engine::chain_backward(cfg, u, d[s]));
          }
        }
      }
    }
  }
}

// Threads share a step's rows, columns and units; the results do not change.
// H = 256, B = 3 puts both cells above the 512K MACs per step where threads start.
TEST(EngineModel, ThreadsDoNotChangeResults) {
  for (Cell cell : {Cell::kLstm, Cell::kGru}) {
    engine::Config cfg{cell, 256, 3, 4, 7};
    cfg.lengths = {4, 2, 3};
    Rng rng(31);
    const LayerCase lc = make_layer_case(rng, engine::Config{cell, 256, 3, 4, 7}, 4);
    const int GH = cfg.gate_rows();
    const std::vector<uint32_t> xp(lc.xp.begin(), lc.xp.begin() + static_cast<long>(cfg.packed_steps()) * GH);
    const std::vector<uint32_t> dh(lc.dh_bits.begin(), lc.dh_bits.begin() + static_cast<long>(cfg.packed_steps()) * 256);
    const auto fw1 = engine::forward(cfg, lc.weights, xp, lc.state_in_fw, 1);
    const auto bw1 = engine::backward(cfg, lc.weights, fw1.records, dh, lc.carry_in, 1);
    for (int threads : {2, 3}) {
      const auto fw = engine::forward(cfg, lc.weights, xp, lc.state_in_fw, threads);
      const auto bw = engine::backward(cfg, lc.weights, fw1.records, dh, lc.carry_in, threads);
      EXPECT_EQ(fw.h, fw1.h) << threads << " threads";
      EXPECT_EQ(fw.records, fw1.records) << threads << " threads";
      EXPECT_EQ(fw.state_out, fw1.state_out) << threads << " threads";
      EXPECT_EQ(bw.delta, bw1.delta) << threads << " threads";
      EXPECT_EQ(bw.state_out, bw1.state_out) << threads << " threads";
    }
  }
}

// StepHooks, on one thread and on a team of 3: input(k) comes before step k
// reads its rows (here it copies them into an array that starts zero) and
// done(k) once step k's rows of the output are final, in step order
// (BACKWARD's step k is time T-1-k), with the unhooked results. An
// exception from a hook ends the command after that step, on every thread,
// and comes out of forward()/backward().
TEST(EngineModel, StepHooksStreamRowsInStepOrder) {
  engine::Config cfg{Cell::kLstm, 256, 3, 4, 7};
  cfg.lengths = {4, 2, 3};
  Rng rng(32);
  const LayerCase lc = make_layer_case(rng, engine::Config{Cell::kLstm, 256, 3, 4, 7}, 4);
  const size_t GH = static_cast<size_t>(cfg.gate_rows()), H = 256,
               S = static_cast<size_t>(cfg.packed_steps());
  const std::vector<uint32_t> xp(lc.xp.begin(), lc.xp.begin() + static_cast<long>(S * GH));
  const std::vector<uint32_t> dh(lc.dh_bits.begin(), lc.dh_bits.begin() + static_cast<long>(S * H));
  const auto fw1 = engine::forward(cfg, lc.weights, xp, lc.state_in_fw, 1);
  const auto bw1 = engine::backward(cfg, lc.weights, fw1.records, dh, lc.carry_in, 1);
  const auto rows = [&](int t) {
    return std::make_pair(static_cast<size_t>(cfg.steps_before(t)),
                          static_cast<size_t>(cfg.active_at(t)));
  };
  for (int threads : {1, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    for (const bool backward : {false, true}) {
      const size_t in_row = backward ? H : GH, out_row = backward ? H * engine::kDeltaWords : H;
      const std::vector<uint32_t>& src = backward ? dh : xp;
      const std::vector<uint32_t>& want = backward ? bw1.delta : fw1.h;
      std::vector<uint32_t> in(src.size(), 0), streamed(want.size(), 0);
      std::vector<std::string> calls;
      engine::StepHooks hooks;
      hooks.input = [&](int k) {
        calls.push_back("input " + std::to_string(k));
        const auto [first, n] = rows(backward ? cfg.steps - 1 - k : k);
        std::copy_n(src.begin() + static_cast<long>(first * in_row), n * in_row,
                    in.begin() + static_cast<long>(first * in_row));
      };
      hooks.done = [&](int k, const std::vector<uint32_t>& out) {
        calls.push_back("done " + std::to_string(k));
        const auto [first, n] = rows(backward ? cfg.steps - 1 - k : k);
        std::copy_n(out.begin() + static_cast<long>(first * out_row), n * out_row,
                    streamed.begin() + static_cast<long>(first * out_row));
      };
      if (backward) {
        const auto bw =
            engine::backward(cfg, lc.weights, fw1.records, in, lc.carry_in, threads, &hooks);
        EXPECT_EQ(bw.delta, bw1.delta);
        EXPECT_EQ(bw.state_out, bw1.state_out);
      } else {
        const auto fw = engine::forward(cfg, lc.weights, in, lc.state_in_fw, threads, &hooks);
        EXPECT_EQ(fw.h, fw1.h);
        EXPECT_EQ(fw.state_out, fw1.state_out);
      }
      EXPECT_EQ(streamed, want) << "a step's rows were not final at done()";
      EXPECT_EQ(calls, (std::vector<std::string>{"input 0", "done 0", "input 1", "done 1",
                                                 "input 2", "done 2", "input 3", "done 3"}));
      // A hook that throws: at input(2), then at done(1).
      for (const char* where : {"input", "done"}) {
        calls.clear();
        engine::StepHooks failing;
        failing.input = [&](int k) {
          calls.push_back("input " + std::to_string(k));
          if (k == 2 && where[0] == 'i') throw std::runtime_error("gate closed");
        };
        failing.done = [&](int k, const std::vector<uint32_t>&) {
          calls.push_back("done " + std::to_string(k));
          if (k == 1 && where[0] == 'd') throw std::runtime_error("gate closed");
        };
        const auto run = [&] {
          if (backward)
            engine::backward(cfg, lc.weights, fw1.records, dh, lc.carry_in, threads, &failing);
          else
            engine::forward(cfg, lc.weights, xp, lc.state_in_fw, threads, &failing);
        };
        EXPECT_THROW(run(), std::runtime_error) << where;
        EXPECT_EQ(calls.back(), where[0] == 'i' ? "input 2" : "done 1")
            << "a hook ran after the one that threw";
      }
    }
  }
}

// The chains' tree pairs neighbours level by level: with 4 chains it adds
// (s0 + s1) + (s2 + s3), which rounds differently from a running sum; with
// 5 the last one waits for the top level. Chains must divide the PEs.
TEST(EngineModel, ChainSumsMeetInATree) {
  const uint32_t big = bits(1e8f), one = bits(1.0f), minus_big = bits(-1e8f);
  EXPECT_EQ(engine::tree_sum({big, one, minus_big, one}), bits(0.0f));  // a running sum gives 1
  EXPECT_EQ(engine::tree_sum({big, one, minus_big, one, one}), bits(1.0f));
  EXPECT_EQ(engine::tree_sum({one}), one);
  EXPECT_THROW(engine::tree_sum({}), std::invalid_argument);
  // LSTM H = 1 on 4 PEs (rows 0-3): 2 chains reduce rows {0, 1} and {2, 3}.
  engine::Config cfg{Cell::kLstm, 1, 1, 1, 4};
  cfg.num_chains = 2;
  const std::vector<uint32_t> u = {one, one, one, one}, d = {big, one, minus_big, one};
  EXPECT_EQ(engine::chain_backward(cfg, u, d), std::vector<uint32_t>{bits(0.0f)});
  cfg.num_chains = 1;  // (((-0 + 1e8) + 1) + -1e8) + 1
  EXPECT_EQ(engine::chain_backward(cfg, u, d), std::vector<uint32_t>{one});
  cfg.num_chains = 3;
  EXPECT_THROW(engine::chain_backward(cfg, u, d), std::invalid_argument);
}

// With fewer rows than PEs the idle PEs add -0 and change nothing.
TEST(EngineModel, IdlePesDoNotChangeTheReduction) {
  const engine::Config small{Cell::kLstm, 1, 1, 1, 4}, wide{Cell::kLstm, 1, 1, 1, 64};
  const std::vector<uint32_t> u = {bits(0.5f), bits(-0.25f), bits(2.0f), bits(1.5f)};
  const std::vector<uint32_t> d = {bits(1.0f), bits(3.0f), bits(-1.0f), bits(0.125f)};
  EXPECT_EQ(engine::chain_backward(small, u, d), engine::chain_backward(wide, u, d));
}

// GRU, H = 2 (6 chain rows k = 3j + g), 4 PEs: rows 0-3 in PE 0-3 at lr 0,
// rows 4-5 in PE 0-1 at lr 1. U[r][c] = r*2 + c (PyTorch row r = g*2 + j).
TEST(EngineModel, LoadImageLanesAndBeats) {
  const engine::Config cfg{Cell::kGru, 2, 1, 1, 4};
  engine::Weights w;
  for (uint32_t i = 0; i < 12; ++i) w.w_hh.push_back(i);
  for (uint32_t i = 0; i < 6; ++i) w.b_hh.push_back(100 + i);
  // chain row k -> PyTorch row: k=0 r0, 1 r2, 2 r4, 3 r1, 4 r3, 5 r5
  // Lanes = 4 (one group), one sub-beat per beat; bias: one unit per sub-beat.
  const std::vector<uint32_t> four = {0, 4, 8, 2,   1, 5, 9, 3,     // lr 0, c 0 and 1
                                      6, 10, 0, 0,  7, 11, 0, 0,    // lr 1: rows 4, 5 only
                                      100, 102, 104, 0, 101, 103, 105, 0};
  EXPECT_EQ(engine::load_image(cfg, w, {4, 4}), four);
  // 16 lanes over 4 PEs: four sub-beats per beat, the final beat padded.
  std::vector<uint32_t> wide = four;
  wide.resize(32, 0);
  EXPECT_EQ(engine::load_image(cfg, w, {4, 16}), wide);
  // 2 lanes: two groups of two PEs; each unit's 3 gates in two sub-beats.
  const std::vector<uint32_t> two = {0, 4, 8, 2, 1, 5, 9, 3, 6, 10, 0, 0, 7, 11, 0, 0,
                                     100, 102, 104, 0, 101, 103, 105, 0};
  EXPECT_EQ(engine::load_image(cfg, w, {4, 2}), two);
  // 3 lanes over 4 PEs: groups {0,1,2}, {3}; one sub-beat per beat, 3 lanes.
  const std::vector<uint32_t> three = {0, 4, 8, 2, 0, 0, 1, 5, 9, 3, 0, 0, 6, 10, 0, 0, 0, 0, 7, 11, 0,
                                       0, 0, 0, 100, 102, 104, 101, 103, 105};
  EXPECT_EQ(engine::load_image(cfg, w, {4, 3}), three);
  EXPECT_EQ(engine::load_words(cfg), 18u);
}

// Sequences of a packed batch are independent: the packed model must give
// each sequence exactly (bit for bit) what a batch of one with its own length
// gives, whatever the lengths (unsorted, a length of 1, all equal).
TEST(EngineModel, PackedLengthsEqualSeparateSequences) {
  for (Cell cell : {Cell::kLstm, Cell::kGru}) {
    for (const std::vector<int>& lengths : std::vector<std::vector<int>>{{5, 1, 3, 5}, {2, 2, 2, 2}, {5, 4, 2, 1}}) {
      engine::Config full{cell, 6, 4, 5, 3};
      Rng rng(77 + lengths[1]);
      const LayerCase lc = make_layer_case(rng, full, 4);
      engine::Config cfg = full;
      cfg.lengths = lengths;
      const int H = 6, GH = full.gate_rows(), SW = engine::state_words(cell);
      // Pack the full-length inputs: step (t, b) of the packed arrays.
      std::vector<uint32_t> xp, dh;
      for (int t = 0; t < 5; ++t) {
        for (int b = 0; b < 4; ++b) {
          if (t >= lengths[b]) continue;
          const size_t n = static_cast<size_t>(t) * 4 + b;
          xp.insert(xp.end(), lc.xp.begin() + n * GH, lc.xp.begin() + (n + 1) * GH);
          dh.insert(dh.end(), lc.dh_bits.begin() + n * H, lc.dh_bits.begin() + (n + 1) * H);
        }
      }
      const auto fw = engine::forward(cfg, lc.weights, xp, lc.state_in_fw);
      const auto bw = engine::backward(cfg, lc.weights, fw.records, dh, lc.carry_in);
      const std::vector<int> order = cfg.end_order();
      for (int b = 0; b < 4; ++b) {
        const engine::Config one{cell, H, 1, lengths[b], 3};
        std::vector<uint32_t> xp1, dh1, st1, carry1;
        for (int t = 0; t < lengths[b]; ++t) {
          const size_t n = static_cast<size_t>(cfg.packed_index(t, b));
          xp1.insert(xp1.end(), xp.begin() + n * GH, xp.begin() + (n + 1) * GH);
          dh1.insert(dh1.end(), dh.begin() + n * H, dh.begin() + (n + 1) * H);
        }
        st1.assign(lc.state_in_fw.begin() + b * H * SW, lc.state_in_fw.begin() + (b + 1) * H * SW);
        carry1.assign(lc.carry_in.begin() + b * H, lc.carry_in.begin() + (b + 1) * H);
        const auto fw1 = engine::forward(one, lc.weights, xp1, st1);
        const auto bw1 = engine::backward(one, lc.weights, fw1.records, dh1, carry1);
        for (int t = 0; t < lengths[b]; ++t) {
          const size_t n = static_cast<size_t>(cfg.packed_index(t, b));
          for (int j = 0; j < H; ++j) {
            ASSERT_EQ(fw.h[n * H + j], fw1.h[static_cast<size_t>(t) * H + j]) << "h b=" << b << " t=" << t;
            for (int w = 0; w < engine::kDeltaWords; ++w) {
              ASSERT_EQ(bw.delta[(n * H + j) * 4 + w], bw1.delta[(static_cast<size_t>(t) * H + j) * 4 + w])
                  << "delta b=" << b << " t=" << t;
            }
          }
        }
        const size_t at = std::find(order.begin(), order.end(), b) - order.begin();
        for (int i = 0; i < H * SW; ++i) {
          ASSERT_EQ(fw.state_out[at * H * SW + i], fw1.state_out[i]) << "final state of b=" << b;
          ASSERT_EQ(bw.state_out[static_cast<size_t>(b) * H * SW + i], bw1.state_out[i]) << "dh0 of b=" << b;
        }
      }
      // reverse_time puts the last step first; forward_time undoes it.
      EXPECT_EQ(engine::forward_time(cfg, engine::reverse_time(cfg, dh, 1), 1), dh);
      const int last_t = *std::max_element(lengths.begin(), lengths.end()) - 1;
      EXPECT_EQ(engine::reverse_time(cfg, dh, 1).front(), dh[static_cast<size_t>(cfg.packed_index(last_t, 0)) * H]);
    }
  }
}

TEST(EngineModel, RejectsBadLengths) {
  engine::Config cfg{Cell::kLstm, 2, 2, 3, 4};
  engine::Weights w;
  w.w_hh.assign(16, 0);
  w.b_hh.assign(8, 0);
  for (const std::vector<int>& bad : std::vector<std::vector<int>>{{0, 3}, {3, 4}, {3}}) {
    cfg.lengths = bad;
    EXPECT_THROW(engine::validate(cfg, w), std::invalid_argument);
  }
}

TEST(EngineModel, RejectsWrongSizes) {
  const engine::Config cfg{Cell::kLstm, 2, 1, 3, 4};
  engine::Weights w;
  w.w_hh.assign(16, 0);
  w.b_hh.assign(8, 0);
  EXPECT_NO_THROW(engine::validate(cfg, w));
  std::vector<uint32_t> xp(3 * 8), state(4);
  EXPECT_NO_THROW(engine::forward(cfg, w, xp, state));
  xp.pop_back();
  try {
    engine::forward(cfg, w, xp, state);
    FAIL() << "short xp accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("xp has 23 words, expected 24"), std::string::npos) << e.what();
  }
  w.b_hh.pop_back();
  EXPECT_THROW(engine::validate(cfg, w), std::invalid_argument);
  EXPECT_THROW(engine::validate({Cell::kLstm, 0, 1, 1, 1}, w), std::invalid_argument);
}


// engine_pkg::row_lanes, mirrored by engine::row_lanes: 4 rows a ROW token
// where the sparse grid's skews are smaller with them (long or many chains),
// 1 where chains of 4 already keep the sweep (the P4/P12/P16 test builds).
// The cycle model refuses lanes a chain cannot hold. (Whether the RTL's
// default equals this one is what the speed tests check on every build.)
TEST(EngineCycles, RowLanesFourOnlyWhereTheyPay) {
  EXPECT_EQ(engine::row_lanes(256, 16, 4), 4);
  EXPECT_EQ(engine::row_lanes(1024, 64, 4), 4);
  EXPECT_EQ(engine::row_lanes(816, 51, 4), 4);
  EXPECT_EQ(engine::row_lanes(16, 4, 4), 1);
  EXPECT_EQ(engine::row_lanes(64, 4, 4), 1);
  EXPECT_EQ(engine::row_lanes(12, 3, 2), 1);
  EXPECT_EQ(engine::row_lanes(4, 1, 3), 1);
  EXPECT_EQ(engine::row_lanes(1, 1, 1), 1);
  EXPECT_EQ(engine::row_lanes(24, 4, 4), 1);  // chains of 6: 4 lanes do not fit

  const engine::Config cfg{Cell::kLstm, 8, 1, 2, 1};
  engine::EngineTiming t{8, 3, 4, 30, 64, 16, 4, 4};  // chains of 2 PEs, 4 rows a token
  try {
    engine::backward_cycles(cfg, t);
    FAIL() << "4 rows a token on chains of 2 PEs accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("4 rows a ROW token"), std::string::npos) << e.what();
  }
  t.row_lanes = 0;
  EXPECT_EQ(t.lanes(), 1);
  EXPECT_GT(engine::backward_cycles(cfg, t), 0u);
}

// The backward grid at 256 PEs in 16 chains of 16 (the P256 bench build): a
// wave of 4-row tokens spans 3 lines 20 cycles apart plus one token per
// chain, and the REDUCE and the next wave wait only for the grid's skews.
TEST(EngineCycles, BackwardGridAtDeviceScale) {
  const engine::Config cfg{Cell::kLstm, 256, 1, 20, 1};
  const engine::EngineTiming t{256, 3, 4, 30, 512, 16, 16};
  const engine::Schedule s = engine::Schedule::of(cfg, t);
  EXPECT_EQ(s.row_lanes, 4);
  EXPECT_EQ(s.lines, 4);
  EXPECT_EQ(s.pitch, 20);
  EXPECT_EQ(s.span_full, 76);
  EXPECT_EQ(s.spacing_bw, 256);
  EXPECT_EQ(s.reduce_gap, 256 + 3 + 15);  // H + Mul + (chains - 1)
  EXPECT_EQ(s.after_reduce, 256 + 15 - 3);  // H + 3*(Add + 1) - Mul
  // A command whose grid would outlast H sends the lines back to back.
  const engine::Schedule small = engine::Schedule::of({Cell::kLstm, 32, 1, 20, 1}, t);
  EXPECT_EQ(small.pitch, 16);
  EXPECT_EQ(small.span_full, 64);
  // With an adder of its own the reduction waits for a column's last MAC,
  // not for the burst (the wave's span is longer here), and the next wave
  // for a PE's burst after the last wave's start (the skew rule less H and
  // AddLatency, 8 cycles, is shorter).
  // (Two sequences: one sequence on this build goes in row order, below.)
  engine::EngineTiming r = t;
  r.red_adder = true;
  const engine::Schedule sr = engine::Schedule::of({Cell::kLstm, 256, 2, 20, 1}, r);
  EXPECT_FALSE(sr.row_order);
  EXPECT_EQ(sr.reduce_gap, 76);  // max((Add + 2) + Mul + (chains - 1), span) = max(24, 76)
  EXPECT_EQ(sr.after_reduce, 256 - 76);
  EXPECT_EQ(sr.spacing_bw, s.spacing_bw);
  const engine::Schedule sr_small = engine::Schedule::of({Cell::kLstm, 8, 2, 20, 1}, r);
  EXPECT_EQ(sr_small.reduce_gap, std::max(6 + 3 + 1 - 1, sr_small.span_last));
  EXPECT_GE(sr_small.after_reduce, 1);
}

// One sequence on PEs with an adder of their own and 4-row tokens: a wave's
// tokens go in row order (a chain's 4 groups, then the next chain's, one a
// cycle), the REDUCE waits for the last chain's first group against the
// sweep, and the next wave for chain 0's last group. Not on the MAC adder,
// not with 1-row tokens, not with two sequences.
TEST(EngineCycles, RowOrderForOneSequence) {
  const engine::Config cfg{Cell::kLstm, 256, 1, 20, 1};
  engine::EngineTiming t{256, 3, 4, 30, 512, 16, 16};
  t.red_adder = true;
  const engine::Schedule s = engine::Schedule::of(cfg, t);
  EXPECT_TRUE(s.row_order);
  EXPECT_EQ(s.span_full, 16 * 4);
  EXPECT_EQ(s.reduce_gap, (4 + 2) + 3 + 15 * 4);  // (Add + 2) + Mul + (chains - 1) * lines
  // max(3*(Add + 1) + 3*(4*(Add + 1) - 1) - Mul - Add, burst - reduce_gap)
  EXPECT_EQ(s.after_reduce, std::max(15 + 57 - 7, 256 - 69));
  EXPECT_EQ(s.spacing_bw, 256);
  const engine::Schedule last = engine::Schedule::of({Cell::kGru, 40, 1, 20, 1}, t);  // 120 rows: 8 chains
  EXPECT_EQ(last.chains_last, 8);
  EXPECT_EQ(last.reduce_gap, 9 + 7 * 4);
  engine::EngineTiming mac = t;
  mac.red_adder = false;
  EXPECT_FALSE(engine::Schedule::of(cfg, mac).row_order);
  EXPECT_FALSE(engine::Schedule::of({Cell::kLstm, 256, 2, 20, 1}, t).row_order);
  const engine::EngineTiming one_row{16, 3, 4, 30, 512, 16, 4, 0, 0, 4, true};  // 4 chains of 4: 1-row tokens
  EXPECT_EQ(one_row.lanes(), 1);
  EXPECT_FALSE(engine::Schedule::of({Cell::kLstm, 64, 1, 20, 1}, one_row).row_order);
}

// Floors under what row order reaches on the RedAdder build at batch 1
// (cycle model, T = 20, MulLatency 3, AddLatency 4, gate store 30): 56.0 %
// at 1,024 PEs in 64 chains, LSTM H = 256 (the target 45 %; 39.9 %
// with the grid), 92.1 % at H = 512 (85.9 %); at 256 PEs in 16 chains,
// H = 128, 70.3 % LSTM (61.5 %) and 55.2 % GRU (45.4 %). A schedule change
// that loses what row order bought fails here; the P48R speed test holds the
// RTL to the model.
TEST(EngineCycles, RowOrderMeetsBatchOneTargets) {
  auto util = [](int pes, int chains, Cell cell, int h) {
    const engine::Config cfg{cell, h, 1, 20, 1};
    engine::EngineTiming t{pes, 3, 4, 30, engine::stream_fifo_depth(h), 16, chains};
    t.red_adder = true;
    const double bound = static_cast<double>(engine::gates(cell)) * h * h / pes * 20;
    return bound / static_cast<double>(engine::backward_cycles(cfg, t));
  };
  EXPECT_GE(util(1024, 64, Cell::kLstm, 256), 0.55);
  EXPECT_GE(util(1024, 64, Cell::kLstm, 512), 0.90);
  EXPECT_GE(util(256, 16, Cell::kLstm, 128), 0.70);
  EXPECT_GE(util(256, 16, Cell::kGru, 128), 0.55);
}

// The backward's reduction on the MAC adder caps a step at R / (R + 1) of
// the MAC bound (R rows a PE: H adds a PE a step beside R*H MACs); on an
// adder of its own (RedAdder) it overlaps the MACs, and the backward
// targets are met in the cycle model (T = 20, MulLatency 3, AddLatency 4,
// gate store 30): at 1,024 PEs in 64 chains, LSTM H = 1,024 >= 90 % and
// H = 512 >= 75 %; batch 4 at H = 256 >= 80 %; at 256 PEs GRU H = 256 >= 75 %;
// and the P16 build's GRU at H = 130 >= 95 % (issue "Engine v2"). Without it
// every one of them stays at or under its cap. The Verilated P16 build
// (RedAdder 1) holds the RTL to this model cycle for cycle.
TEST(EngineCycles, ReductionAdderLiftsTheBackwardCap) {
  struct Point { int pes, chains; Cell cell; int h, b; double target, cap; };
  const Point points[] = {
      {1024, 64, Cell::kLstm, 1024, 1, 0.90, 4.0 / 5},
      {1024, 64, Cell::kLstm, 512, 1, 0.75, 2.0 / 3},
      {1024, 64, Cell::kLstm, 256, 4, 0.80, 1.0 / 2},
      {256, 16, Cell::kGru, 256, 1, 0.75, 3.0 / 4},
      {16, 4, Cell::kGru, 130, 1, 0.95, 25.0 / 26},
  };
  for (const Point& pt : points) {
    const engine::Config cfg{pt.cell, pt.h, pt.b, 20, 1};
    engine::EngineTiming t{pt.pes, 3, 4, 30, engine::stream_fifo_depth(pt.h), 16, pt.chains};
    const double bound = static_cast<double>(engine::gates(pt.cell)) * pt.h * pt.h * pt.b / pt.pes * 20;
    const double shared = bound / static_cast<double>(engine::backward_cycles(cfg, t));
    t.red_adder = true;
    const double own = bound / static_cast<double>(engine::backward_cycles(cfg, t));
    const std::string what = std::to_string(pt.pes) + " PEs, " + engine::cell_name(pt.cell) + " H = " +
                             std::to_string(pt.h) + ", B = " + std::to_string(pt.b);
    EXPECT_LE(shared, pt.cap) << what;
    EXPECT_GE(own, pt.target) << what;
  }
}

// The batch-1 targets that the cycle model meets (T = 20, MulLatency 3,
// AddLatency 4, gate store 30; the latencies of the P16 and P256 builds):
// LSTM at 256 PEs in 16 chains, H = 256 >= 80 % forward and >= 75 % backward,
// H = 128 >= 50 % forward and >= 45 % backward; at 1,024 PEs in 64 chains,
// forward, H = 1,024 >= 90 % (the first step's Xp overlaps its MACs),
// H = 512 >= 80 % and H = 256 >= 50 % (four result lanes, 4 and 8 sums a
// row). A schedule change that slows one of them fails here, and the speed
// tests hold the RTL to the model.
TEST(EngineCycles, DeviceScaleTargetsMet) {
  auto util = [](int pes, int chains, int h, bool backward) {
    const engine::Config cfg{Cell::kLstm, h, 1, 20, 1};
    const engine::EngineTiming t{pes, 3, 4, 30, engine::stream_fifo_depth(h), 16, chains};
    const double bound = 4.0 * h * h / pes * 20;
    return bound / static_cast<double>(backward ? engine::backward_cycles(cfg, t) : engine::forward_cycles(cfg, t));
  };
  EXPECT_GE(util(256, 16, 256, false), 0.80);
  EXPECT_GE(util(256, 16, 256, true), 0.75);
  EXPECT_GE(util(256, 16, 128, false), 0.50);
  EXPECT_GE(util(256, 16, 128, true), 0.45);
  EXPECT_GE(util(1024, 64, 1024, false), 0.90);
  EXPECT_GE(util(1024, 64, 512, false), 0.80);  // 2 rows a PE, 4 sums
  EXPECT_GE(util(1024, 64, 256, false), 0.50);  // 1 row a PE, 8 sums
}

// The per-step overhead barely grows with the chain. At equal rows a PE R
// (the same sums, final adds and drain in every PE), what a running step
// costs above R*H (the MACs of the fullest PE) grows by 3 cycles per 4x PEs
// forward (a broadcast level and two join levels): 64 PEs in 4 chains and
// 1,024 in 64 differ by 6 (the model: LSTM 105/111 at R = 1, 55/61 at R =
// 16; GRU 113/119 and 63/69). Asserted: it grows (the trees' levels are in
// the model), by at most the 32, and stays under its 200. The
// backward on an adder of its own per PE (RedAdder) rises by at most 32
// (LSTM R = 1: 186 -> 152, it falls; R >= 2: 0 at 1,024 PEs) and stays
// under 300. A model whose broadcast or join latency grew linearly with
// NumPe fails here. Not covered: the default PE's backward (the reduction
// on the MAC adder), which does grow with NumPe (docs/performance.md). At
// equal H the forward overhead changes with NumPe too: fewer rows a PE
// means more sums and their final adds, a cost of the PE's work, not of the
// chain (docs/performance.md, "Per step in a running command").
TEST(EngineCycles, StepOverheadFlatInNumPe) {
  struct Overhead {
    double fw, bw;
  };
  auto overhead = [](Cell cell, int rows, int pes, int chains) {
    const int h = rows * pes / engine::gates(cell);
    const engine::Config t20{cell, h, 1, 20, 1}, t40{cell, h, 1, 40, 1};
    engine::EngineTiming t{pes, 3, 4, 30, engine::stream_fifo_depth(h), 16, chains};
    t.red_adder = true;
    EXPECT_EQ(engine::Schedule::of(t20, t).rows, rows) << pes << " PEs, H = " << h;
    const double bound = static_cast<double>(rows) * h;
    return Overhead{static_cast<double>(engine::forward_cycles(t40, t) - engine::forward_cycles(t20, t)) / 20 - bound,
                    static_cast<double>(engine::backward_cycles(t40, t) - engine::backward_cycles(t20, t)) / 20 -
                        bound};
  };
  for (Cell cell : {Cell::kLstm, Cell::kGru}) {
    for (int rows : {1, 2, 4, 16}) {
      const Overhead small = overhead(cell, rows, 64, 4), large = overhead(cell, rows, 1024, 64);
      const std::string at = std::string(engine::cell_name(cell)) + ", " + std::to_string(rows) + " rows a PE";
      EXPECT_LE(std::abs(large.fw - small.fw), 32) << at;
      EXPECT_GT(large.fw, small.fw) << at << ": the trees' levels are in the model";
      EXPECT_LE(large.fw, 200) << at;
      EXPECT_LE(large.bw, small.bw + 32) << at;
      EXPECT_LE(large.bw, 300) << at;
    }
  }
}

// With several sequences a forward step's last element no longer waits for
// the previous step's drain to end (a PE holds two drain jobs) or reserves
// its h words' FIFO room at its first element, and the next step's elements
// no longer wait for the sums' final adds either (they write the PE's other
// sum bank and skip the adder cycles of those adds, fw_step_holes): at one
// row a PE the steps of a batch follow each other at the element spacing.
// Floors under the model's figures (1,024 PEs, LSTM H = 256, B = 4: 83.2 %;
// 77.2 % with the next step waiting for the final adds, 72.6 % with it also
// waiting for the drains; 256 PEs, H = 64: 66.5 %, 59.6 %, 49.8 %); the
// step spacing they come to is checked exactly.
TEST(EngineCycles, ForwardBatchOverlapsTheDrains) {
  // Stream FIFOs of a build with MaxHidden = H, or of one with a larger MaxHidden.
  auto fw = [](int pes, int chains, int h, int b, int steps, int max_hidden = 0) {
    const engine::Config cfg{Cell::kLstm, h, b, steps, 1};
    const engine::EngineTiming t{pes, 3, 4, 30, engine::stream_fifo_depth(std::max(h, max_hidden)), 16, chains};
    return engine::forward_cycles(cfg, t);
  };
  auto util = [&](int pes, int chains, int h, int b) {
    return 4.0 * h * h / pes * b * 20 / static_cast<double>(fw(pes, chains, h, b, 20));
  };
  EXPECT_GE(util(1024, 64, 256, 4), 0.83);
  EXPECT_GE(util(1024, 64, 256, 16), 0.84);
  EXPECT_GE(util(256, 16, 64, 4), 0.66);
  // One row a PE, 8 sums: a sequence-step is H elements, one a cycle, the
  // next sequence's first 3 cycles after the last (FW_STEP_MIN), and the 7
  // final adds' adder cycles, AddLatency + 1 = 5 apart, skipped among them.
  // (At H = 64 with FIFOs of 2*H words a step's h room, reserved at its last
  // ELEM, waits for the step two back to leave: 87 cycles a sequence-step.
  // A MaxHidden 256 build's FIFOs, as the NumPe 256 bench builds, do not.)
  for (auto [pes, chains, h] : {std::tuple{1024, 64, 256}, std::tuple{256, 16, 64}}) {
    const engine::Config one{Cell::kLstm, h, 1, 1, 1};
    const engine::EngineTiming t{pes, 3, 4, 30, engine::stream_fifo_depth(h), 16, chains};
    const engine::Schedule s = engine::Schedule::of(one, t);
    ASSERT_EQ(s.fw_sums, 8);
    EXPECT_EQ(s.spacing_step, 3);
    EXPECT_EQ(s.step_holes, 0x842108420ull);  // offsets 5, 10, ..., 35
    EXPECT_EQ(s.sums_clear, 7 * 5 + 1);
    const uint64_t per_sequence_step = (h - 1) * s.spacing_fw + s.spacing_step + 7;
    EXPECT_EQ(fw(pes, chains, h, 4, 40, 256) - fw(pes, chains, h, 4, 20, 256), 20 * 4 * per_sequence_step)
        << pes << " PEs";
  }
  EXPECT_EQ(fw(256, 16, 64, 4, 40) - fw(256, 16, 64, 4, 20), 20 * 4 * 87);
}

// The holes of fw_step_holes: final add k of row r meets the MAC of row r' of
// an element d cycles after the last for d = fw_split_wait + k(AddLatency + 1)
// + r - r'. Two rows, four sums, AddLatency 4 (no split wait): centres 5, 10,
// 15, each with its neighbours; AddLatency 2 (split wait 1): 4, 7, 10 and
// their neighbours close the gaps, so nothing is gained there (the next
// element comes at 12, the final adds' span, as before).
TEST(EngineCycles, ForwardStepHolesFollowTheFinalAdds) {
  auto sched = [](int pes, int la, int h) {
    const engine::Config one{Cell::kLstm, h, 1, 1, 1};
    const engine::EngineTiming t{pes, 3, la, 30, engine::stream_fifo_depth(h), 16, 1};
    return engine::Schedule::of(one, t);
  };
  const engine::Schedule a = sched(16, 4, 8);  // 32 rows on 16 PEs: 2 rows, 4 sums
  ASSERT_EQ(a.rows, 2);
  ASSERT_EQ(a.fw_sums, 4);
  EXPECT_EQ(a.step_holes, (7ull << 4) | (7ull << 9) | (7ull << 14));
  EXPECT_EQ(a.sums_clear, 3 * 5 + 2);
  const engine::Schedule b = sched(16, 2, 8);
  EXPECT_EQ(b.step_holes, 0x1ffull << 3);
  EXPECT_EQ(b.sums_clear, 1 + 3 * 3 + 2);
  // One sum a row: no final adds, no holes.
  const engine::Schedule c = sched(4, 4, 8);
  ASSERT_EQ(c.fw_sums, 1);
  EXPECT_EQ(c.step_holes, 0u);
  EXPECT_EQ(c.sums_clear, 0);
}

// A FORWARD's initial state loads beside its first steps: slot b's first
// step goes once slot b's words are in, not once every slot's are (the
// loader yields a cycle to each unit the activation unit writes). Floors
// under the model's figures (the state loaded first, in brackets): 256 PEs,
// LSTM H = 128, B = 4: 90.9 % (88.8 %), the batch-4 target; 1,024
// PEs, H = 512: 95.0 % (92.7 %). Batch 1 loads its one slot first as before,
// its first ELEM H (GRU) or 2H (LSTM) cycles after S_STATE.
TEST(EngineCycles, StateLoadsBesideTheFirstSteps) {
  auto fw = [](Cell cell, int pes, int chains, int h, int b, int steps) {
    const engine::Config cfg{cell, h, b, steps, 1};
    const engine::EngineTiming t{pes, 3, 4, 30, engine::stream_fifo_depth(h), 16, chains};
    return engine::forward_cycles(cfg, t);
  };
  auto util = [&](int pes, int chains, int h, int b) {
    return 4.0 * h * h / pes * b * 20 / static_cast<double>(fw(Cell::kLstm, pes, chains, h, b, 20));
  };
  EXPECT_GE(util(256, 16, 128, 4), 0.905);
  EXPECT_GE(util(1024, 64, 512, 4), 0.945);
  // 16 PEs in 4 chains, H = 64 (16 rows a PE, one sum: an element every 16
  // cycles, a sequence-step 1,024 cycles): a second slot's state (128 LSTM
  // words, 64 GRU) is in long before the first slot's step ends, so B = 2
  // costs one sequence-step more than B = 1 (the next slot's first ELEM
  // follows the step spacing) and S_LENGTHS's cycle for the second length,
  // not the second slot's state as well (1,153 / 833 cycles with it loaded
  // first, against 1,025 / 769).
  for (Cell cell : {Cell::kLstm, Cell::kGru}) {
    const engine::Config one{cell, 64, 1, 1, 1};
    const engine::EngineTiming t{16, 3, 4, 30, engine::stream_fifo_depth(64), 16, 4};
    const engine::Schedule s = engine::Schedule::of(one, t);
    ASSERT_EQ(s.fw_sums, 1);
    const uint64_t sequence_step = 63 * static_cast<uint64_t>(s.spacing_fw) + s.spacing_step;
    EXPECT_EQ(fw(cell, 16, 4, 64, 2, 1) - fw(cell, 16, 4, 64, 1, 1), sequence_step + 1) << engine::cell_name(cell);
  }
}

// A forward step's descriptor waits in the engine's descriptor FIFO from the
// step's first ELEM until its unit 0 reaches the activation unit. With a
// batch's steps overlapping the drains (two drain jobs a PE) several wait at
// once, never more than the FIFO holds: from 4 to 4,096 PEs, every latency
// point the builds use, LSTM and GRU, H 1-1,024, B 1-16 (the peak is 4, where
// a PE's two drain jobs and the step in its elements bound it). A model
// that counted nothing would fail the lower check, a schedule that ran more
// steps ahead than the FIFO holds the upper one, and forward_cycles refuses it.
TEST(EngineCycles, StepDescriptorsFitTheirFifo) {
  int peak = 0;
  const std::pair<int, int> points[] = {{4, 1}, {48, 3}, {256, 16}, {1024, 64}, {4096, 256}};
  for (auto [pes, chains] : points)
    for (Cell cell : {Cell::kLstm, Cell::kGru})
      for (int h : {1, 3, 8, 24, 64, 256, 1024})
        for (int b : {1, 4, 16})
          for (auto [mul, add] : {std::pair{2, 3}, std::pair{3, 4}, std::pair{5, 7}}) {
            const engine::Config cfg{cell, h, b, 8, 1};
            const int depth = engine::stream_fifo_depth(h);
            const engine::EngineTiming t{pes, mul, add, 30, depth, 16, chains};
            const int d = engine::forward_descriptors(cfg, t);
            EXPECT_LE(d, engine::kStepDescriptors) << pes << " PEs, H " << h << ", B " << b;
            if (b == 1) {
              EXPECT_LE(d, 2) << "batch 1: a step waits for the previous step's units";
            }
            peak = std::max(peak, d);
          }
  EXPECT_GE(peak, 3);
}

// The input streams bound a step whatever the chains do: a forward step
// takes its Xp (G*H words one a cycle with XpWords 1, H units a beat with 4)
// and a backward step its H dh words one a cycle, so a command of T steps is
// never shorter than T*G*H or T*H (FW) or T*H (BW) cycles. Checked where the
// MACs alone would be far shorter.
TEST(EngineCycles, StreamsBoundAStep) {
  for (Cell cell : {Cell::kLstm, Cell::kGru}) {
    for (int h : {64, 128, 256}) {
      const engine::Config cfg{cell, h, 1, 20, 1};
      engine::EngineTiming t{1024, 3, 4, 30, engine::stream_fifo_depth(h), 16, 64};
      t.xp_words = 1;
      EXPECT_GE(engine::forward_cycles(cfg, t), 20u * engine::gates(cfg.cell) * h) << engine::cell_name(cell) << h;
      t.xp_words = 4;
      EXPECT_GE(engine::forward_cycles(cfg, t), 20u * h) << engine::cell_name(cell) << h;
      EXPECT_GE(engine::backward_cycles(cfg, t), 20u * h) << engine::cell_name(cell) << h;
    }
  }
}

// Four result lanes and Xp a unit a beat lift the forward's G*H bound where
// the chains need fewer cycles (LSTM H = 256 and 512 on 1,024 PEs, H = 128 on
// 256: 1,024 / 2,048 / 512 cycles a step with a word a cycle; 900, 1,719 and
// 487 with a unit a cycle). One lane, or Xp a word a beat, keeps it.
TEST(EngineCycles, ForwardAUnitACycle) {
  for (auto [pes, chains, h] : {std::tuple{1024, 64, 256}, std::tuple{1024, 64, 512}, std::tuple{256, 16, 128}}) {
    const engine::Config cfg{Cell::kLstm, h, 1, 20, 1};
    engine::EngineTiming t{pes, 3, 4, 30, engine::stream_fifo_depth(h), 16, chains};
    const uint64_t gh = 20u * engine::gates(cfg.cell) * static_cast<uint64_t>(h);
    EXPECT_LT(engine::forward_cycles(cfg, t), gh) << pes << " PEs, H = " << h;
    t.res_lanes = 1;
    EXPECT_GE(engine::forward_cycles(cfg, t), gh) << pes << " PEs, H = " << h << ", one lane";
    t.res_lanes = 4;
    t.xp_words = 1;
    EXPECT_GE(engine::forward_cycles(cfg, t), gh) << pes << " PEs, H = " << h << ", Xp a word a beat";
  }
}

// The delta stream gives a unit (4 words) a beat, so it no longer holds a
// backward step to 4*H cycles where the chains need fewer: LSTM H = 256 on
// 1,024 PEs and H = 128 on 256 PEs (modelled with one word a cycle, 1,024
// and 512 cycles a step; with a unit a beat, 839 and 486).
TEST(EngineCycles, DeltaStreamAUnitABeat) {
  for (auto [pes, chains, h] : {std::tuple{1024, 64, 256}, std::tuple{256, 16, 128}}) {
    const engine::Config cfg{Cell::kLstm, h, 1, 20, 1};
    const engine::EngineTiming t{pes, 3, 4, 30, engine::stream_fifo_depth(h), 16, chains};
    EXPECT_LT(engine::backward_cycles(cfg, t), 20u * engine::kDeltaWords * h) << pes << " PEs, H = " << h;
  }
}

}  // namespace
}  // namespace farnn::tb
