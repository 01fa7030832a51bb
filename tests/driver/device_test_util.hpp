// Shared by the Device API suites (model://, sim://): one layer's random data
// and the engine model's results, a LOAD+FORWARD+BACKWARD through a device,
// the bit-exact comparison, random shapes, and error-message checks.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "farnn/device.hpp"
#include "farnn/engine_abi.hpp"
#include "farnn/engine_model.hpp"
#include "farnn/golden.hpp"

namespace farnn::devtest {

using Words = std::vector<uint32_t>;

inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline Words random_words(size_t n, double bound, std::mt19937_64& rng) {
  Words w(n);
  for (uint32_t& x : w) x = bits(static_cast<float>(bound * (2 * golden::uniform01(rng) - 1)));
  return w;
}

inline BufferPtr buffer_of(Device& dev, const Words& w, Access access, const std::string& name) {
  BufferPtr b = dev.alloc(w.size(), access, name);
  if (!w.empty()) std::memcpy(b->data(), w.data(), 4 * w.size());
  return b;
}

inline Words words_of(const BufferPtr& b, size_t offset, size_t n) {
  Words w(n);
  if (n) std::memcpy(w.data(), b->data() + offset, 4 * n);
  return w;
}

inline engine::Config engine_config(const LayerShape& s, int num_pe, int num_chains = 1) {
  engine::Config cfg{s.cell == CellKind::kLstm ? engine::Cell::kLstm : engine::Cell::kGru, s.hidden, s.batch,
                     s.steps, num_pe, s.lengths};
  cfg.num_chains = num_chains;
  return cfg;
}

// One layer's data, the engine model's results, and the device's buffers.
struct LayerData {
  LayerShape shape;
  engine::Weights w;
  Words xp, state_in, dh, carry;
  engine::ForwardResult fw;
  engine::BackwardResult bw;
};

inline LayerData make_layer(const LayerShape& s, int num_pe, std::mt19937_64& rng, int num_chains = 1) {
  LayerData d;
  d.shape = s;
  const size_t G = s.gates(), H = s.hidden, S = s.packed_steps(), B = s.batch, SW = state_words(s.cell);
  d.w.w_hh = random_words(G * H * H, 1.0 / std::sqrt(H), rng);
  d.w.b_hh = random_words(G * H, 0.5, rng);
  d.xp = random_words(S * G * H, 1.0, rng);
  d.state_in = random_words(B * H * SW, 0.5, rng);
  d.dh = random_words(S * H, 1.0, rng);
  d.carry = random_words(B * H, 0.5, rng);
  const engine::Config cfg = engine_config(s, num_pe, num_chains);
  d.fw = engine::forward(cfg, d.w, d.xp, d.state_in);
  d.bw = engine::backward(cfg, d.w, d.fw.records, d.dh, d.carry);
  return d;
}

struct DeviceRun {
  Words h, state_out, delta, dstate;
  Counters fw, bw;
};

inline DeviceRun run_layer(Device& dev, const LayerData& d, int bank) {
  const LayerShape& s = d.shape;
  const size_t G = s.gates(), H = s.hidden, S = s.packed_steps(), B = s.batch, SW = state_words(s.cell);
  // Weights in one buffer (w_hh then b_hh), at an offset.
  Words wb(3);
  wb.insert(wb.end(), d.w.w_hh.begin(), d.w.w_hh.end());
  wb.insert(wb.end(), d.w.b_hh.begin(), d.w.b_hh.end());
  BufferPtr weights = buffer_of(dev, wb, Access::kRead, "weights");
  dev.load(bank, s, {weights, 3}, {weights, 3 + G * H * H})->wait();
  BufferPtr xp = buffer_of(dev, d.xp, Access::kRead, "xp");
  BufferPtr st = buffer_of(dev, d.state_in, Access::kRead, "state_in");
  BufferPtr h = dev.alloc(S * H, Access::kWrite, "h");
  BufferPtr so = dev.alloc(B * H * SW, Access::kReadWrite, "state_out");
  GateStorePtr store = dev.alloc_gate_store(s);
  DeviceRun r;
  r.fw = dev.forward({s, bank, {xp}, {st}, {h}, {so}, store})->wait().delta;
  BufferPtr dh = buffer_of(dev, d.dh, Access::kRead, "dh");
  BufferPtr carry = buffer_of(dev, d.carry, Access::kRead, "carry");
  BufferPtr delta = dev.alloc(S * H * kDeltaWords, Access::kWrite, "delta");
  BufferPtr ds = dev.alloc(B * H * SW, Access::kWrite, "dstate");
  r.bw = dev.backward({s, bank, store, {dh}, {carry}, {delta}, {ds}})->wait().delta;
  r.h = words_of(h, 0, S * H);
  r.state_out = words_of(so, 0, B * H * SW);
  r.delta = words_of(delta, 0, S * H * kDeltaWords);
  r.dstate = words_of(ds, 0, B * H * SW);
  return r;
}

inline void expect_same(const LayerData& d, const DeviceRun& r, const std::string& where) {
  EXPECT_EQ(r.h, d.fw.h) << where << " h";
  EXPECT_EQ(r.state_out, d.fw.state_out) << where << " state_out";
  EXPECT_EQ(r.delta, d.bw.delta) << where << " delta";
  EXPECT_EQ(r.dstate, d.bw.state_out) << where << " dstate";
}

inline LayerShape random_shape(std::mt19937_64& rng, int max_hidden, int max_batch) {
  LayerShape s;
  s.cell = rng() % 2 ? CellKind::kGru : CellKind::kLstm;
  s.hidden = 1 + static_cast<int>(rng() % max_hidden);
  s.batch = 1 + static_cast<int>(rng() % max_batch);
  s.steps = 1 + static_cast<int>(rng() % 9);
  if (rng() % 2) {
    for (int b = 0; b < s.batch; ++b) s.lengths.push_back(1 + static_cast<int>(rng() % s.steps));
  }
  return s;
}

// Expects `fn` to throw E with `phrase` in its message; returns the message.
template <class E>
inline std::string expect_error(const std::function<void()>& fn, const std::string& phrase) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one containing '" << phrase << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error type: " << e.what();
  }
  return {};
}

// The FORWARD records a device keeps for BACKWARD, as the core's sequencer
// keeps them (tb_engine_banks checks the RTL the same way): FORWARDs into
// forward_records gate stores fill the records; a FORWARD into the first
// store again voids its record and records it anew as the newest; one more
// FORWARD into a new store drops the oldest (the second store's), not the
// newest. The BACKWARD of every kept record runs bit-exact; the dropped one's
// fails with ERR_NO_FORWARD, and after reset() a layer runs bit-exact. Then
// a void in the middle: FORWARDs into stores 2, 0, 3, 0 again (the void
// frees the older record of 0, so 3 records stand) and 4..n make n records
// with the layer's own: store 2's, now the oldest, is still kept.
inline void check_forward_records(Device& dev, std::mt19937_64& rng) {
  const int n = dev.caps().forward_records;
  ASSERT_GT(n, 1);
  const LayerShape s{CellKind::kGru, 4, 1, 2, {}};
  const LayerData d = make_layer(s, dev.caps().num_pe, rng, dev.caps().num_chains);
  const size_t H = s.hidden, S = s.packed_steps(), SW = state_words(s.cell);
  BufferPtr w = buffer_of(dev, d.w.w_hh, Access::kRead, "w_hh"),
            b = buffer_of(dev, d.w.b_hh, Access::kRead, "b_hh");
  dev.load(0, s, {w}, {b})->wait();
  BufferPtr xp = buffer_of(dev, d.xp, Access::kRead, "xp"),
            st = buffer_of(dev, d.state_in, Access::kRead, "st");
  BufferPtr h = dev.alloc(S * H, Access::kWrite, "h");
  BufferPtr dh = buffer_of(dev, d.dh, Access::kRead, "dh"),
            carry = buffer_of(dev, d.carry, Access::kRead, "carry");
  BufferPtr delta = dev.alloc(S * H * kDeltaWords, Access::kWrite, "delta");
  BufferPtr ds = dev.alloc(H * SW, Access::kWrite, "dstate");
  std::vector<GateStorePtr> stores;
  for (int k = 0; k <= n; ++k) stores.push_back(dev.alloc_gate_store(s));
  const auto forward = [&](int k) {
    dev.forward({s, 0, {xp}, {st}, {h}, {}, stores[static_cast<size_t>(k)]})->wait();
  };
  // The BACKWARD of store k's FORWARD; its delta (cleared before).
  const auto backward = [&](int k) {
    std::fill(delta->data(), delta->data() + S * H * kDeltaWords, 0.0f);
    dev.backward({s, 0, stores[static_cast<size_t>(k)], {dh}, {carry}, {delta}, {ds}})->wait();
    return words_of(delta, 0, S * H * kDeltaWords);
  };
  for (int k = 0; k < n; ++k) forward(k);
  forward(0);  // voids store 0's record, then records it as the newest
  forward(n);  // one more: the oldest, store 1's, drops out
  for (int k = 0; k <= n; ++k) {
    if (k == 1) continue;
    EXPECT_EQ(backward(k), d.bw.delta) << "the BACKWARD of store " << k;
  }
  const std::string msg = expect_error<CommandError>([&] { backward(1); }, "ERR_NO_FORWARD");
  EXPECT_NE(msg.find("run its FORWARD again first"), std::string::npos) << msg;
  dev.reset();
  expect_same(d, run_layer(dev, d, 0), "after reset()");  // a record on bank 0, the same weights
  for (const int k : {2, 0, 3, 0}) forward(k);
  for (int k = 4; k <= n; ++k) forward(k);
  EXPECT_EQ(backward(2), d.bw.delta) << "a void in the middle";
}

}  // namespace farnn::devtest
