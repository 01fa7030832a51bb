// Bit-accurate sigmoid / tanh model (see farnn/activation.hpp). Mirrors the
// stages of rtl/act/fp_act.sv: decode and fixed-point conversion, table read,
// interpolation, sign/function select, rounding to binary32; tanh's
// small-argument path beside the table.
#include "farnn/activation.hpp"

#include <bit>
#include <stdexcept>
#include <string>

namespace farnn::act {
namespace detail {
// Generated at configure time from rtl/act/act_sigmoid_lut.mem (sw/lib/CMakeLists.txt),
// plus a sentinel word 4096 = {D 0, Y 2^31} that the model uses for the clamp.
extern const uint64_t kSigmoidLut[kLutEntries + 1];
}  // namespace detail

namespace {

constexpr uint32_t kAbsMask = 0x7FFFFFFFu;
constexpr uint32_t kSignMask = 0x80000000u;
constexpr uint32_t kPosInf = 0x7F800000u;
constexpr uint32_t kClampExp = 131;  // biased exponent of 16.0
constexpr uint32_t kUBits = 28;      // u = floor(|x| * 2^24) < 2^28 below the clamp

// Interpolated sigma(|x| * 2^scale) in Q1.31, for a non-NaN |x| (bits `a`) and
// scale 0 (sigmoid) or 1 (tanh). Result in [2^30, 2^31].
inline uint32_t sigma_q31(uint32_t a, uint32_t scale) {
  const uint32_t es = (a >> 23) + scale;                  // biased exponent of |x| * 2^scale
  const uint32_t rs = (kClampExp - 1) - es;               // right shift; wraps when clamped
  const uint32_t m = ((a & 0x7FFFFFu) | 0x800000u) << 4;  // 1.f * 2^27
  // u = floor(|x| * 2^scale * 2^24). Zero and subnormal inputs (biased
  // exponent 0, flushed) shift out completely, as do |x| * 2^scale < 2^-24.
  uint32_t u = rs < kUBits ? m >> rs : 0;
  // |x| * 2^scale >= 16 (and Inf): the sentinel word kSigmoidLut[4096] = {0, 2^31}.
  u = es >= kClampExp ? static_cast<uint32_t>(kLutEntries) << kLutInterpBits : u;
  const uint64_t w = detail::kSigmoidLut[u >> kLutInterpBits];
  const uint32_t y = static_cast<uint32_t>(w);
  const uint64_t d = w >> 32;
  const uint64_t f = u & ((1u << kLutInterpBits) - 1);
  return y + static_cast<uint32_t>((d * f) >> kLutInterpBits);
}

// Positive r (0 < r < 2^32) with bit 31 worth 2^(e31 - 127) to binary32,
// round to nearest even (e31 - lz >= 1: the result is normal). The table
// path's Q1.31 results have e31 = 127 and r >= 1, so at least 2^-31.
inline uint32_t to_float(uint32_t r, uint32_t e31) {
  const int lz = std::countl_zero(r);
  const uint32_t n = r << lz;  // leading one at bit 31
  const uint32_t mant = n >> 8;
  const uint32_t guard = (n >> 7) & 1u;
  const uint32_t sticky = (n & 0x7Fu) != 0;
  const uint32_t up = guard & (sticky | (mant & 1u));
  // A mantissa carry out of the rounding increment moves into the exponent.
  return (((e31 - static_cast<uint32_t>(lz)) << 23) | (mant & 0x7FFFFFu)) + up;
}

inline uint32_t q31_to_float(uint32_t r) {
  return r == 0 ? 0 : to_float(r, 127);
}

// tanh(|x|) for 2^-126 <= |x| < 2^-8 (bits `a`, biased exponent e in 1 .. 118),
// relative to its result: |x| - |x|^3/3 (the next term, 2|x|^5/15, is below
// 2^-34 of the result). With |x| = m * 2^(e-127), in units where the
// significand's last bit is 2^7 (r = |x| * 2^(157-e)):
//   |x|^3/3 = m^3/3 * 2^(2e-224) = T * 2^(2e-232),  T ~ m^3/3 * 2^8
// (T from tanh_cube_word at the significand's top 8 fraction bits), taken as
// floor((T << 4) >> (236 - 2e)): 0 once the shift reaches 14 (e <= 111),
// where it is below 2^-26 of the result. r - that is in (2^29, 2^31).
inline uint32_t tanh_small(uint32_t a) {
  const uint32_t e = a >> 23;
  const uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
  const uint32_t t =
      tanh_cube_word(static_cast<int>((a >> (23 - kTanhCubeIndexBits)) & (kTanhCubeEntries - 1)));
  const uint32_t sh = 236 - 2 * e;
  const uint32_t corr = sh < 14 ? (t << 4) >> sh : 0;
  return to_float((m << 7) - corr, e + 1);
}

}  // namespace

uint32_t sigmoid(uint32_t x) {
  const uint32_t a = x & kAbsMask;
  if (a > kPosInf) return kCanonicalNan;
  const uint32_t y = sigma_q31(a, 0);
  return q31_to_float((x & kSignMask) ? kQOne - y : y);
}

uint32_t tanh(uint32_t x) {
  const uint32_t a = x & kAbsMask;
  if (a > kPosInf) return kCanonicalNan;
  if (tanh_takes_small_path(x)) return tanh_small(a) | (x & kSignMask);
  const uint32_t y = sigma_q31(a, 1);
  // 2y - 1 in Q1.31; y >= 2^30 so the difference is non-negative and <= 2^31.
  return q31_to_float((y - (kQOne >> 1)) << 1) | (x & kSignMask);
}

uint64_t lut_word(int k) {
  if (k < 0 || k >= kLutEntries) {
    throw std::out_of_range("farnn::act::lut_word: index " + std::to_string(k) + " outside [0, " +
                            std::to_string(kLutEntries) + ")");
  }
  return detail::kSigmoidLut[k];
}

}  // namespace farnn::act
