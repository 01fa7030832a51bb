// Bit-accurate binary32 arithmetic of the FARNN datapath (docs/decisions.md "Numerics",
// docs/decisions.md "Subnormals, rounding, NaN: the exact definition").
//
//   op(a, b) = out(ieee_rne(in(a) op in(b)))
//
// in:  a subnormal input is flushed to a zero of the same sign;
// out: a subnormal result is flushed to a zero of the same sign, any NaN
//      becomes kCanonicalNan; Inf follows IEEE (Inf-Inf, 0*Inf are NaN).
//
// Two implementations of the same function:
//   add / mul / mac            integer soft-float, the algorithm of the RTL
//                              (rtl/fp/fp_add.sv, rtl/fp/fp_mul.sv) step by step;
//   add_host / mul_host / ...  the host FPU with the flush applied around it
//   addf / mulf / macf         (fast; needs the default FP environment: RNE,
//                              no FTZ/DAZ, no -ffast-math, -ffp-contract=off).
// tests/fp32/test_fp32.cpp proves them equal bit for bit.
//
// The multiply-accumulate is UNFUSED: mac(acc, a, b) = add(acc, mul(a, b)),
// two roundings (docs/decisions.md).
#pragma once

#include <bit>
#include <cstdint>

namespace farnn::fp32 {

inline constexpr uint32_t kCanonicalNan = 0x7FC00000u;
inline constexpr uint32_t kSignMask = 0x80000000u;
inline constexpr uint32_t kExpMask = 0x7F800000u;
inline constexpr uint32_t kFracMask = 0x007FFFFFu;
inline constexpr uint32_t kPosInf = 0x7F800000u;
inline constexpr uint32_t kMinNormal = 0x00800000u;

constexpr float to_float(uint32_t bits) {
  return std::bit_cast<float>(bits);
}
constexpr uint32_t to_bits(float value) {
  return std::bit_cast<uint32_t>(value);
}

constexpr bool is_nan(uint32_t x) {
  return (x & kExpMask) == kExpMask && (x & kFracMask) != 0;
}
constexpr bool is_subnormal(uint32_t x) {
  return (x & kExpMask) == 0 && (x & kFracMask) != 0;
}

// The datapath's view of a value: subnormal -> zero of the same sign,
// NaN -> kCanonicalNan, everything else unchanged.
constexpr uint32_t flush(uint32_t x) {
  if ((x & kExpMask) == 0) return x & kSignMask;
  if (is_nan(x)) return kCanonicalNan;
  return x;
}

// Soft-float model of the RTL (sw/lib/fp32.cpp).
uint32_t add(uint32_t a, uint32_t b);
uint32_t mul(uint32_t a, uint32_t b);
uint32_t mac(uint32_t acc, uint32_t a, uint32_t b);  // add(acc, mul(a, b))

// Host reference: flush(host_op(flush(a), flush(b))).
inline uint32_t add_host(uint32_t a, uint32_t b) {
  return flush(to_bits(to_float(flush(a)) + to_float(flush(b))));
}
inline uint32_t mul_host(uint32_t a, uint32_t b) {
  return flush(to_bits(to_float(flush(a)) * to_float(flush(b))));
}
inline uint32_t mac_host(uint32_t acc, uint32_t a, uint32_t b) {
  return add_host(acc, mul_host(a, b));
}

// Float convenience on the host path (what fast models use).
inline float addf(float a, float b) {
  return to_float(add_host(to_bits(a), to_bits(b)));
}
inline float mulf(float a, float b) {
  return to_float(mul_host(to_bits(a), to_bits(b)));
}
inline float macf(float acc, float a, float b) {
  return addf(acc, mulf(a, b));
}

}  // namespace farnn::fp32
