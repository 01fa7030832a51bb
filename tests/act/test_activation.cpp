// Tests of the bit-accurate sigmoid / tanh model (farnn/activation.hpp):
// hand-checked points and special values, the embedded table against the
// checked-in .mem file, and a sampled version of tools/act_sweep (every
// 4099th input along the real line plus dense windows around 0, +-1, the
// clamps +-8 / +-16, the saturation thresholds, +-Inf and table knots, and
// every subnormal) with the same checks: max abs error vs float64 <= 1e-6,
// monotone, tanh odd bit for bit, exact saturation, NaN -> canonical NaN;
// tanh's small-argument path (2^-126 <= |x| < 2^-8) within 1 ulp of float64.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "act_sweep_core.hpp"
#include "farnn/activation.hpp"

namespace farnn::act {
namespace {

using sweep::bits_to_key;
using sweep::key_to_bits;

constexpr double kTol = 1e-6;

uint32_t bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
float flt(uint32_t b) {
  return std::bit_cast<float>(b);
}

TEST(Activation, HandCheckedPoints) {
  EXPECT_EQ(sigmoid(bits(0.0f)), bits(0.5f));
  EXPECT_EQ(sigmoid(bits(-0.0f)), bits(0.5f));
  EXPECT_EQ(tanh(bits(0.0f)), 0x00000000u);
  EXPECT_EQ(tanh(bits(-0.0f)), 0x80000000u);
  EXPECT_EQ(sigmoid(0x7F800000u), bits(1.0f));   // +Inf
  EXPECT_EQ(sigmoid(0xFF800000u), 0x00000000u);  // -Inf -> +0
  EXPECT_EQ(tanh(0x7F800000u), bits(1.0f));
  EXPECT_EQ(tanh(0xFF800000u), bits(-1.0f));
  EXPECT_EQ(sigmoid(bits(100.0f)), bits(1.0f));
  EXPECT_EQ(sigmoid(bits(-100.0f)), 0x00000000u);
  EXPECT_EQ(tanh(bits(100.0f)), bits(1.0f));
  EXPECT_EQ(tanh(bits(-100.0f)), bits(-1.0f));
  EXPECT_EQ(sigmoid(bits(16.0f)), bits(1.0f));  // the clamp
  EXPECT_EQ(sigmoid(bits(-16.0f)), 0x00000000u);
  EXPECT_EQ(tanh(bits(8.0f)), bits(1.0f));
  EXPECT_EQ(tanh(bits(-8.0f)), bits(-1.0f));
  EXPECT_NEAR(sigmoidf(1.0f), 0.7310585786300049, kTol);
  EXPECT_NEAR(sigmoidf(-1.0f), 0.2689414213699951, kTol);
  EXPECT_NEAR(tanhf(1.0f), 0.7615941559557649, kTol);
  EXPECT_NEAR(tanhf(-0.5f), -0.46211715726000974, kTol);
  EXPECT_NEAR(sigmoidf(4.0f), 0.9820137900379085, kTol);
  EXPECT_EQ(tanhf(-1.0f), -tanhf(1.0f));
  // sigmoid(x) + sigmoid(-x) == 1 holds in Q1.31 before rounding; after it,
  // within one rounding of each term.
  EXPECT_NEAR(double(sigmoidf(0.75f)) + double(sigmoidf(-0.75f)), 1.0, 1e-7);
}

TEST(Activation, SpecialValues) {
  for (uint32_t nan : {0x7FC00000u, 0x7F800001u, 0x7FFFFFFFu, 0xFFC00000u, 0xFF800001u, 0xFFFFFFFFu,
                       0x7FA00000u}) {
    EXPECT_EQ(sigmoid(nan), kCanonicalNan) << std::hex << nan;
    EXPECT_EQ(tanh(nan), kCanonicalNan) << std::hex << nan;
  }
  for (uint32_t sub : {0x00000001u, 0x00400000u, 0x007FFFFFu}) {
    EXPECT_EQ(sigmoid(sub), bits(0.5f));
    EXPECT_EQ(sigmoid(sub | 0x80000000u), bits(0.5f));
    EXPECT_EQ(tanh(sub), 0x00000000u);
    EXPECT_EQ(tanh(sub | 0x80000000u), 0x80000000u);
  }
  // Largest finite magnitude, smallest normal.
  EXPECT_EQ(sigmoid(0x7F7FFFFFu), bits(1.0f));
  EXPECT_EQ(sigmoid(0xFF7FFFFFu), 0u);
  EXPECT_EQ(tanh(0xFF7FFFFFu), bits(-1.0f));
  EXPECT_EQ(sigmoid(0x00800000u), bits(0.5f));
  EXPECT_EQ(tanh(0x80800000u), 0x80800000u);  // -2^-126: the small-argument path, tanh(x) = x
  // Float wrappers agree with the bit-pattern functions.
  for (float f : {-20.0f, -3.25f, -1e-3f, 0.3f, 7.9f, 15.99f}) {
    EXPECT_EQ(bits(sigmoidf(f)), sigmoid(bits(f)));
    EXPECT_EQ(bits(tanhf(f)), tanh(bits(f)));
  }
}

TEST(Activation, TableIsTheCheckedInFileAndMonotone) {
  std::ifstream f(FARNN_ACT_LUT_MEM);
  ASSERT_TRUE(f) << "cannot open " << FARNN_ACT_LUT_MEM;
  std::vector<uint64_t> words;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("//", 0) == 0 || line.empty()) continue;
    ASSERT_EQ(line.size(), 14u) << "line '" << line << "'";
    words.push_back(std::stoull(line, nullptr, 16));
  }
  ASSERT_EQ(words.size(), static_cast<size_t>(kLutEntries));
  for (int k = 0; k < kLutEntries; ++k) {
    ASSERT_EQ(lut_word(k), words[k]) << "embedded table differs from the .mem file at k=" << k;
    ASSERT_LT(lut_word(k) >> kLutWordBits, 1u) << "word " << k << " wider than 54 bits";
  }
  EXPECT_EQ(lut_word(0) & 0xFFFFFFFFu, 1u << 30);  // Y[0] = 0.5 exactly
  for (int k = 0; k < kLutEntries; ++k) {
    const uint64_t y = lut_word(k) & 0xFFFFFFFFu, d = lut_word(k) >> 32;
    const uint64_t next = k + 1 < kLutEntries ? (lut_word(k + 1) & 0xFFFFFFFFu) : kQOne;
    ASSERT_EQ(y + d, next) << "D[" << k << "] != Y[k+1] - Y[k]";
    ASSERT_LT(y, kQOne);
    // Knots within 2^-24 of sigma(k/256) (the curvature correction is < 1e-7).
    ASSERT_NEAR(std::ldexp(double(y), -31), sigmoid_ref(k / 256.0), 0x1p-23) << k;
  }
  EXPECT_THROW(lut_word(kLutEntries), std::out_of_range);
  EXPECT_THROW(lut_word(-1), std::out_of_range);
}

// Smallest key in [lo, hi] where pred holds (pred monotone false -> true).
uint32_t first_key_where(uint32_t lo, uint32_t hi, const std::function<bool(uint32_t)>& pred) {
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (pred(key_to_bits(mid))) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

void add_window(std::vector<uint32_t>& keys, uint32_t center_key, uint32_t half) {
  const int64_t lo = std::max<int64_t>(0, int64_t{center_key} - half);
  const int64_t hi = std::min<int64_t>(0xFFFFFFFFll, int64_t{center_key} + half);
  for (int64_t k = lo; k <= hi; ++k) keys.push_back(static_cast<uint32_t>(k));
}

TEST(Activation, SampledSweep) {
  const uint32_t zero_key = bits_to_key(0);
  // Saturation thresholds by bisection on the (monotone) model.
  const uint32_t sig_one = first_key_where(zero_key, sweep::kPlusInfKey,
                                           [](uint32_t x) { return sigmoid(x) == bits(1.0f); });
  const uint32_t sig_nonzero =
      first_key_where(sweep::kMinusInfKey, zero_key, [](uint32_t x) { return sigmoid(x) != 0u; });
  const uint32_t tanh_one = first_key_where(zero_key, sweep::kPlusInfKey,
                                            [](uint32_t x) { return tanh(x) == bits(1.0f); });
  const uint32_t tanh_not_m1 = first_key_where(sweep::kMinusInfKey, zero_key,
                                               [](uint32_t x) { return tanh(x) != bits(-1.0f); });

  std::vector<uint32_t> keys;
  for (uint64_t k = 0; k < (uint64_t{1} << 32); k += 4099) keys.push_back(static_cast<uint32_t>(k));
  for (float c : {0.0f, 1.0f, -1.0f, 8.0f, -8.0f, 16.0f, -16.0f}) {
    add_window(keys, bits_to_key(bits(c)), 1u << 15);
  }
  add_window(keys, bits_to_key(0x80000000u), 1u << 15);  // -0
  // tanh's small-argument path: its end at 2^-8, where its correction starts
  // (2^-15), the smallest normal.
  for (float c : {0x1p-8f, 0x1p-15f, 0x1p-126f}) {
    add_window(keys, bits_to_key(bits(c)), 1u << 12);
    add_window(keys, bits_to_key(bits(-c)), 1u << 12);
  }
  for (uint32_t k : {sig_one, sig_nonzero, tanh_one, tanh_not_m1}) add_window(keys, k, 1u << 14);
  add_window(keys, sweep::kPlusInfKey, 1u << 12);  // +Inf and the NaNs above it
  add_window(keys, sweep::kMinusInfKey, 1u << 12);
  for (int k = 1; k < kLutEntries; k += 37) {  // knots k/256 (and 2x for tanh), both signs
    for (float x : {k / 256.0f, k / 512.0f}) {
      add_window(keys, bits_to_key(bits(x)), 4);
      add_window(keys, bits_to_key(bits(-x)), 4);
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

  sweep::SweepStats s;
  for (uint32_t k : keys) s.add(k);
  EXPECT_GT(s.nans, 0u);
  EXPECT_GT(s.subnormals, 0u);
  EXPECT_EQ(s.infs, 2u);

  for (const auto* f : {&s.sig, &s.tnh}) {
    const char* name = f == &s.sig ? "sigmoid" : "tanh";
    SCOPED_TRACE(name);
    EXPECT_LE(f->max_err, kTol) << "at x=" << flt(f->max_err_x);
    EXPECT_GT(f->max_err, 0.0);
    EXPECT_EQ(f->mono_fail, 0u) << "first at x=" << flt(f->mono_fail_x);
    EXPECT_EQ(f->nan_fail, 0u);
    EXPECT_EQ(f->flush_fail, 0u);
    EXPECT_EQ(f->range_fail, 0u) << "first at x=" << flt(f->range_fail_x);
  }
  EXPECT_EQ(s.sym_fail, 0u) << "first at x=" << flt(s.sym_fail_x);
  EXPECT_LE(s.tnh.max_ulp_small_in, 1.0) << "at x=" << flt(s.tnh.max_ulp_small_in_x);

  // The dense windows make the sampled thresholds exact.
  const auto ts = sweep::thresholds(s.sig), tt = sweep::thresholds(s.tnh);
  ASSERT_TRUE(ts.has_hi && ts.has_lo && tt.has_hi && tt.has_lo);
  EXPECT_EQ(ts.hi_from, key_to_bits(sig_one));
  EXPECT_EQ(ts.first_not_lo, key_to_bits(sig_nonzero));
  EXPECT_EQ(tt.hi_from, key_to_bits(tanh_one));
  EXPECT_EQ(tt.first_not_lo, key_to_bits(tanh_not_m1));
  // Saturation is reached no later than the clamp, and is exact beyond it.
  EXPECT_LE(flt(ts.hi_from), kSigmoidClamp);
  EXPECT_GT(flt(ts.hi_from), 15.9f);
  EXPECT_EQ(ts.lo_upto, bits(-16.0f));  // sigmoid(-|x|) = 1 - y > 0 below the clamp
  EXPECT_LE(flt(tt.hi_from), kTanhClamp);
  EXPECT_GE(flt(tt.lo_upto), -kTanhClamp);
  EXPECT_EQ(tt.lo_upto, tt.hi_from ^ 0x80000000u) << "tanh thresholds not symmetric";
}

// tanh of 2^-126 <= |x| < 2^-8: x - x^3/3 from the 256-word table of m^3/3.
TEST(Activation, TanhSmallArgumentPath) {
  for (int j = 0; j < kTanhCubeEntries; ++j) {
    const double m = 1.0 + (j + 0.5) / kTanhCubeEntries;
    ASSERT_NEAR(double(tanh_cube_word(j)), m * m * m / 3 * 256, 0.5) << j;
    ASSERT_LT(tanh_cube_word(j), 1u << kTanhCubeWordBits) << j;
  }
  auto ulp_err = [](uint32_t x) {
    const uint32_t y = tanh(x);
    return std::fabs(double(flt(y)) - tanh_ref(flt(x))) / sweep::ulp_of(y);
  };
  // Every input of the top exponent (the largest correction), both signs.
  double worst = 0;
  uint32_t worst_x = 0;
  for (uint32_t m = 0; m < (1u << 23); ++m) {
    const uint32_t x = (kTanhSmallMaxExp << 23) | m;
    const double e = ulp_err(x);
    if (e > worst) worst = e, worst_x = x;
    ASSERT_EQ(tanh(x | 0x80000000u), tanh(x) | 0x80000000u) << std::hex << x;
  }
  EXPECT_LE(worst, 1.0) << "at x=" << flt(worst_x);
  EXPECT_GT(worst, 0.5);  // not correctly rounded everywhere: T is rounded
  // Every exponent of the path, sampled; below 2^-15 the correction is 0 and
  // tanh(x) = x (x^3/3 is below 2^-28 of it).
  for (uint32_t e = 1; e <= kTanhSmallMaxExp; ++e) {
    for (uint32_t m = 0; m < (1u << 23); m += 4099) {
      const uint32_t x = (e << 23) | m;
      ASSERT_LE(ulp_err(x), 1.0) << "x=" << flt(x);
      if (e < 112) {
        ASSERT_EQ(tanh(x), x) << std::hex << x;
      }
    }
  }
  // The correction at work: 2^-8 less one ulp sits below x, and the table
  // path above it stays monotone.
  const uint32_t below = bits(0x1p-8f) - 1;
  EXPECT_LT(tanh(below), below);
  EXPECT_LE(tanh(below), tanh(bits(0x1p-8f)));
}

TEST(Activation, EverySubnormalIsFlushed) {
  for (uint32_t m = 1; m < (1u << 23); ++m) {
    for (uint32_t x : {m, m | 0x80000000u}) {
      const uint32_t z = x & 0x80000000u;
      ASSERT_EQ(sigmoid(x), sigmoid(z)) << std::hex << x;
      ASSERT_EQ(tanh(x), tanh(z)) << std::hex << x;
    }
  }
}

}  // namespace
}  // namespace farnn::act
