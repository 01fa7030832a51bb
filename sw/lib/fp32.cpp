// Integer soft-float model of the FARNN FP32 adder and multiplier. Each step
// mirrors a section of rtl/fp/fp_add.sv and rtl/fp/fp_mul.sv (same working
// widths, same guard/sticky handling, same special-case priority), so a
// mismatch against the RTL points at one section. The host-FPU path in
// fp32.hpp is the independent reference this code is tested against.
#include "farnn/fp32.hpp"

#include <bit>

namespace farnn::fp32 {

namespace {

constexpr uint32_t kHidden = 0x00800000u;  // implicit leading one of a normal

uint32_t exp_of(uint32_t x) {
  return (x >> 23) & 0xFFu;
}

}  // namespace

// fp_add, section by section:
//  1 unpack/compare/swap/align: order by magnitude, right-align the smaller
//    mantissa in a 27-bit frame (24 bits + guard, round, sticky);
//  2 add/sub (28-bit result) + leading-zero count;
//  3 normalize, round to nearest even, pack; specials override.
uint32_t add(uint32_t a, uint32_t b) {
  // 1. Compare the magnitudes as integers ({exp, frac} order is value order).
  uint32_t big = a;
  uint32_t small = b;
  if ((b & ~kSignMask) > (a & ~kSignMask)) {
    big = b;
    small = a;
  }
  const uint32_t sign = big & kSignMask;
  const bool eff_sub = ((a ^ b) & kSignMask) != 0;
  const uint32_t e_big = exp_of(big);
  const uint32_t e_small = exp_of(small);

  // NaN/Inf: the larger magnitude decides (NaN > Inf > finite as integers).
  if (e_big == 0xFFu) {
    const bool nan = (big & kFracMask) != 0 || (e_small == 0xFFu && eff_sub);
    return nan ? kCanonicalNan : (sign | kPosInf);
  }

  // Mantissas with the hidden bit; a zero or subnormal input contributes 0.
  const uint32_t m_big = e_big != 0 ? ((big & kFracMask) | kHidden) : 0u;
  const uint32_t m_small = e_small != 0 ? ((small & kFracMask) | kHidden) : 0u;
  const uint32_t big_ext = m_big << 3;  // 27-bit frame: hidden bit at bit 26
  const uint32_t small_ext = m_small << 3;
  const uint32_t diff = e_big - e_small;  // >= 0 because |big| >= |small|
  uint32_t aligned = 0;
  bool sticky = false;
  if (diff < 27u) {
    aligned = small_ext >> diff;
    sticky = (small_ext & ((1u << diff) - 1u)) != 0;
  } else {
    sticky = small_ext != 0;
  }
  aligned |= sticky ? 1u : 0u;

  // 2. 28-bit sum (bit 27 = carry); |big| >= |small| keeps a difference >= 0.
  const uint32_t sum = eff_sub ? big_ext - aligned : big_ext + aligned;
  if (sum == 0) return a & b & kSignMask;  // exact zero: +0 unless both -0
  const int lzc = std::countl_zero(sum) - 4;

  // 3. Normalize so the leading one sits at bit 27; exponent of the result.
  const int exp = static_cast<int>(e_big) + 1 - lzc;
  if (exp >= 255) return sign | kPosInf;
  if (exp <= 0) return sign;  // below 2^-126: exact (IEEE) and flushed
  const uint32_t norm = sum << lzc;
  const uint32_t frac = (norm >> 4) & kFracMask;
  const uint32_t guard = (norm >> 3) & 1u;
  const uint32_t rest = (norm & 7u) != 0 ? 1u : 0u;
  const uint32_t round_up = guard & (rest | (frac & 1u));
  // A carry out of the fraction bumps the exponent; 254 -> 255 gives +-Inf.
  return sign | (((static_cast<uint32_t>(exp) << 23) | frac) + round_up);
}

// fp_mul, section by section:
//  1 unpack + 24x24 mantissa product + exponent sum; specials classified;
//  2 normalize (one-bit), round to nearest even, pack; specials override.
uint32_t mul(uint32_t a, uint32_t b) {
  const uint32_t sign = (a ^ b) & kSignMask;
  const uint32_t ea = exp_of(a);
  const uint32_t eb = exp_of(b);
  const bool a_zero = ea == 0;  // zero or subnormal (flushed)
  const bool b_zero = eb == 0;
  const bool a_inf = ea == 0xFFu && (a & kFracMask) == 0;
  const bool b_inf = eb == 0xFFu && (b & kFracMask) == 0;
  const bool a_nan = ea == 0xFFu && (a & kFracMask) != 0;
  const bool b_nan = eb == 0xFFu && (b & kFracMask) != 0;
  if (a_nan || b_nan || (a_inf && b_zero) || (b_inf && a_zero)) return kCanonicalNan;
  if (a_inf || b_inf) return sign | kPosInf;
  if (a_zero || b_zero) return sign;

  // 1. Product of the two 24-bit mantissas: in [2^46, 2^48).
  const uint64_t p = static_cast<uint64_t>((a & kFracMask) | kHidden) *
                     static_cast<uint64_t>((b & kFracMask) | kHidden);
  const bool hi = (p >> 47) != 0;

  // 2. Normalize by at most one bit.
  const int exp = static_cast<int>(ea + eb) - 127 + (hi ? 1 : 0);
  const int shift = hi ? 24 : 23;
  const uint32_t frac = static_cast<uint32_t>(p >> shift) & kFracMask;
  const uint32_t guard = static_cast<uint32_t>(p >> (shift - 1)) & 1u;
  const uint64_t rest_mask = (uint64_t{1} << (shift - 1)) - 1u;
  const uint32_t rest = (p & rest_mask) != 0 ? 1u : 0u;
  if (exp >= 255) return sign | kPosInf;
  if (exp <= 0) {
    // 2^-127 * 1.frac rounds (gradual underflow, RNE) up to 2^-126 exactly
    // when frac is all ones; everything else below 2^-126 flushes.
    return (exp == 0 && frac == kFracMask) ? (sign | kMinNormal) : sign;
  }
  const uint32_t round_up = guard & (rest | (frac & 1u));
  return sign | (((static_cast<uint32_t>(exp) << 23) | frac) + round_up);
}

uint32_t mac(uint32_t acc, uint32_t a, uint32_t b) {
  return add(acc, mul(a, b));
}

}  // namespace farnn::fp32
