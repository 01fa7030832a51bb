// Checks of the sigmoid / tanh model over a set of binary32 inputs, shared by
// tools/act_sweep (all 2^32 inputs, or every S-th) and tests/act (a sample).
//
// Inputs are visited in the order of the real line: a key k in [0, 2^32)
// maps to the bit pattern key_to_bits(k), so that increasing keys walk
// -NaN..., -Inf, ..., -0, +0, ..., +Inf, +NaN... . A SweepStats accumulates
// the inputs of one contiguous, increasing run of keys; merge() appends the
// stats of the run that follows it, so chunks done in parallel combine
// exactly like one pass (ties keep the first input in key order).
//
// Per function it records: max abs error against the float64 reference of
// the true input (and its argument), max error in ULPs of the output for
// |output| >= 2^-10 and for inputs 2^-126 <= |x| < 2^-8 (tanh's
// small-argument path; its check is tanh's max there <= 1), for subnormal
// inputs the max error against the reference of the flushed input; failures
// of monotonicity (non-decreasing along the line, -0 == +0), of NaN ->
// canonical NaN, of subnormal input == flushed input bit for bit, of the
// output range; the saturation thresholds. Across functions: tanh(-x) ==
// -tanh(x) bit for bit.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "farnn/activation.hpp"

namespace farnn::act::sweep {

inline constexpr uint32_t kSign = 0x80000000u;
inline constexpr uint32_t kOneBits = 0x3F800000u;
inline constexpr uint32_t kMinusOneBits = 0xBF800000u;
inline constexpr uint32_t kMinusInfKey = 0x007FFFFFu;  // first non-NaN key
inline constexpr uint32_t kPlusInfKey = 0xFF800000u;   // last non-NaN key

constexpr uint32_t key_to_bits(uint32_t key) {
  return (key & kSign) ? (key ^ kSign) : ~key;
}
constexpr uint32_t bits_to_key(uint32_t bits) {
  return (bits & kSign) ? ~bits : (bits | kSign);
}
constexpr bool is_nan(uint32_t b) {
  return (b & 0x7FFFFFFFu) > 0x7F800000u;
}
constexpr bool is_subnormal(uint32_t b) {
  return (b & 0x7F800000u) == 0 && (b & 0x7FFFFFu) != 0;
}
inline float as_float(uint32_t b) {
  return std::bit_cast<float>(b);
}

// One ulp of a binary32 output (bit pattern `out`; a zero or subnormal
// output counts the subnormal ulp).
inline double ulp_of(uint32_t out) {
  const int e = static_cast<int>((out >> 23) & 0xFFu);
  return std::ldexp(1.0, std::max(e, 1) - 150);
}

struct FuncStats {
  double max_err = -1.0;  // vs float64 reference of the true input
  uint32_t max_err_x = 0;
  double max_ulp = -1.0;  // error / ulp(output), |output| >= 2^-10
  uint32_t max_ulp_x = 0;
  double max_ulp_small_in = -1.0;  // error / ulp(output), normal inputs |x| < 2^-8
  uint32_t max_ulp_small_in_x = 0;
  double max_err_sub_flushed = 0.0;  // subnormal inputs vs reference of +-0
  uint64_t mono_fail = 0, nan_fail = 0, flush_fail = 0, range_fail = 0;
  uint32_t mono_fail_x = 0, nan_fail_x = 0, flush_fail_x = 0, range_fail_x = 0;  // first failures
  // Run bookkeeping (keys of non-NaN inputs).
  bool any = false;
  uint32_t first_key = 0, first_out = 0, last_key = 0, last_out = 0;
  int64_t last_not_hi = -1;  // largest key whose output is not the upper saturation value
  int64_t first_not_lo = std::numeric_limits<int64_t>::max();  // smallest key not at the lower one

  template <class Ref>
  void add(uint32_t key, uint32_t x, uint32_t out, double lo_bound, uint32_t lo_bits, Ref ref) {
    const float y = as_float(out);
    const double yd = y;
    if (std::isnan(y) || is_subnormal(out) || yd < lo_bound || yd > 1.0) {
      if (range_fail++ == 0) range_fail_x = x;
    }
    const double err = std::fabs(yd - ref(static_cast<double>(as_float(x))));
    if (err > max_err) max_err = err, max_err_x = x;
    const bool small_in = tanh_takes_small_path(x);
    if (std::fabs(yd) >= 0x1p-10 || small_in) {
      const double ulp_err = err / ulp_of(out);
      if (std::fabs(yd) >= 0x1p-10 && ulp_err > max_ulp) max_ulp = ulp_err, max_ulp_x = x;
      if (small_in && ulp_err > max_ulp_small_in) {
        max_ulp_small_in = ulp_err, max_ulp_small_in_x = x;
      }
    }
    if (any) {
      if (y < as_float(last_out)) {
        if (mono_fail++ == 0) mono_fail_x = x;
      }
    } else {
      any = true;
      first_key = key;
      first_out = out;
    }
    last_key = key;
    last_out = out;
    if (out != kOneBits) last_not_hi = key;
    if (out != lo_bits && first_not_lo == std::numeric_limits<int64_t>::max()) first_not_lo = key;
  }

  void merge(const FuncStats& n) {
    if (n.max_err > max_err) max_err = n.max_err, max_err_x = n.max_err_x;
    if (n.max_ulp > max_ulp) max_ulp = n.max_ulp, max_ulp_x = n.max_ulp_x;
    if (n.max_ulp_small_in > max_ulp_small_in) {
      max_ulp_small_in = n.max_ulp_small_in, max_ulp_small_in_x = n.max_ulp_small_in_x;
    }
    max_err_sub_flushed = std::max(max_err_sub_flushed, n.max_err_sub_flushed);
    auto fold = [](uint64_t& c, uint32_t& x, uint64_t nc, uint32_t nx) {
      if (c == 0 && nc != 0) x = nx;
      c += nc;
    };
    if (any && n.any && as_float(n.first_out) < as_float(last_out)) {
      fold(mono_fail, mono_fail_x, 1, key_to_bits(n.first_key));
    }
    fold(mono_fail, mono_fail_x, n.mono_fail, n.mono_fail_x);
    fold(nan_fail, nan_fail_x, n.nan_fail, n.nan_fail_x);
    fold(flush_fail, flush_fail_x, n.flush_fail, n.flush_fail_x);
    fold(range_fail, range_fail_x, n.range_fail, n.range_fail_x);
    if (n.any) {
      if (!any) first_key = n.first_key, first_out = n.first_out;
      any = true;
      last_key = n.last_key;
      last_out = n.last_out;
    }
    last_not_hi = std::max(last_not_hi, n.last_not_hi);
    first_not_lo = std::min(first_not_lo, n.first_not_lo);
  }
};

struct SweepStats {
  FuncStats sig, tnh;
  uint64_t inputs = 0, nans = 0, subnormals = 0, infs = 0;
  uint64_t sym_fail = 0;
  uint32_t sym_fail_x = 0;

  void add(uint32_t key) {
    const uint32_t x = key_to_bits(key);
    ++inputs;
    const uint32_t s = sigmoid(x);
    const uint32_t t = tanh(x);
    if (is_nan(x)) {
      ++nans;
      if (s != kCanonicalNan && sig.nan_fail++ == 0) sig.nan_fail_x = x;
      if (t != kCanonicalNan && tnh.nan_fail++ == 0) tnh.nan_fail_x = x;
      return;
    }
    if ((x & 0x7FFFFFFFu) == 0x7F800000u) ++infs;
    sig.add(key, x, s, 0.0, 0x00000000u, [](double v) { return sigmoid_ref(v); });
    tnh.add(key, x, t, -1.0, kMinusOneBits, [](double v) { return tanh_ref(v); });
    if (is_subnormal(x)) {
      ++subnormals;
      const uint32_t z = x & kSign;  // the flushed input
      if (s != sigmoid(z) && sig.flush_fail++ == 0) sig.flush_fail_x = x;
      if (t != tanh(z) && tnh.flush_fail++ == 0) tnh.flush_fail_x = x;
      const double zd = as_float(z);
      sig.max_err_sub_flushed =
          std::max(sig.max_err_sub_flushed, std::fabs(as_float(s) - sigmoid_ref(zd)));
      tnh.max_err_sub_flushed =
          std::max(tnh.max_err_sub_flushed, std::fabs(as_float(t) - tanh_ref(zd)));
    }
    if ((x & kSign) && t != (tanh(x ^ kSign) ^ kSign)) {
      if (sym_fail++ == 0) sym_fail_x = x;
    }
  }

  void merge(const SweepStats& n) {
    sig.merge(n.sig);
    tnh.merge(n.tnh);
    inputs += n.inputs;
    nans += n.nans;
    subnormals += n.subnormals;
    infs += n.infs;
    if (sym_fail == 0 && n.sym_fail != 0) sym_fail_x = n.sym_fail_x;
    sym_fail += n.sym_fail;
  }
};

// Saturation thresholds of one function from its stats (exact for an
// exhaustive run; for a sampled run they are the sampled neighbours).
struct Thresholds {
  bool has_hi = false, has_lo = false;
  uint32_t hi_from = 0;                        // smallest x such that f(x') == +1.0 for all x' >= x
  uint32_t lo_upto = 0;                        // largest x such that f(x') == lo for all x' <= x
  uint32_t last_not_hi = 0, first_not_lo = 0;  // the inputs next to them
};

inline Thresholds thresholds(const FuncStats& f) {
  Thresholds t;
  if (f.last_not_hi >= 0 && f.last_not_hi < static_cast<int64_t>(kPlusInfKey)) {
    t.has_hi = true;
    t.hi_from = key_to_bits(static_cast<uint32_t>(f.last_not_hi + 1));
    t.last_not_hi = key_to_bits(static_cast<uint32_t>(f.last_not_hi));
  }
  if (f.first_not_lo > static_cast<int64_t>(kMinusInfKey) &&
      f.first_not_lo != std::numeric_limits<int64_t>::max()) {
    t.has_lo = true;
    t.lo_upto = key_to_bits(static_cast<uint32_t>(f.first_not_lo - 1));
    t.first_not_lo = key_to_bits(static_cast<uint32_t>(f.first_not_lo));
  }
  return t;
}

}  // namespace farnn::act::sweep
