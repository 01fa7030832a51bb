// Bit-accurate model of the FARNN sigmoid / tanh unit (rtl/act/fp_act.sv):
// the RTL's results are this model's results, bit for bit.
//
// Method (docs/activation.md): one table of sigma on [0, 16), 4096 knots at
// step 2^-8, linear interpolation in unsigned fixed point, read from the same
// file the RTL reads (rtl/act/act_sigmoid_lut.mem, embedded at build time):
//   u = floor(|x| * 2^24)            (tanh: floor(2|x| * 2^24)), 28 bits
//   k = u >> 16, f = u & 0xFFFF
//   y = Y[k] + floor(D[k] * f / 2^16)   Q1.31, y = 2^31 (1.0) when |x| >= 16
//   sigmoid(+|x|) = y, sigmoid(-|x|) = 1 - y, tanh(x) = sign(x) * (2y - 1)
// and the non-negative Q1.31 result is rounded to binary32 (nearest-even).
// tanh of a small argument (2^-126 <= |x| < 2^-8) takes a path of its own,
// accurate relative to its result: x - x^3/3, with m^3/3 (m the significand
// of x) from a 256-entry table of 10-bit words (tanh_cube_word), in fixed
// point 7 bits below the significand, rounded the same way.
// Subnormal inputs are flushed to a zero of the same sign; every NaN input
// gives kCanonicalNan; sigmoid(+-Inf) = 1 / +0, tanh(+-Inf) = +-1.
// Properties (checked exhaustively by tools/act_sweep): monotone,
// tanh(-x) == -tanh(x) bit for bit, sigmoid(0) = 0.5, tanh(+-0) = +-0,
// exact saturation at 1 / 0 / +-1, max abs error vs float64 < 1e-6, tanh
// within 1 ulp of float64 for 2^-126 <= |x| < 2^-8.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace farnn::act {

inline constexpr uint32_t kCanonicalNan = 0x7FC00000u;
inline constexpr int kLutEntries = 4096;       // knots k / 256, k = 0 .. 4095
inline constexpr int kLutIndexFracBits = 8;    // knot step 2^-8
inline constexpr int kLutInterpBits = 16;      // fraction bits between knots
inline constexpr int kLutWordBits = 54;        // {D[k] 22 bits, Y[k] 32 bits}
inline constexpr uint32_t kQOne = 1u << 31;    // 1.0 in Q1.31
inline constexpr float kSigmoidClamp = 16.0f;  // |x| >= 16: y = 1.0
inline constexpr float kTanhClamp = 8.0f;      // |x| >= 8: 2|x| >= 16

// tanh's small-argument path: |x| < 2^-8 (biased exponent <= 118), not flushed.
inline constexpr uint32_t kTanhSmallMaxExp = 118;
inline constexpr int kTanhCubeIndexBits = 8;  // the significand's top 8 fraction bits
inline constexpr int kTanhCubeEntries = 1 << kTanhCubeIndexBits;
inline constexpr int kTanhCubeWordBits = 10;

// Whether tanh of the binary32 pattern x takes the small-argument path.
constexpr bool tanh_takes_small_path(uint32_t x) {
  const uint32_t e = (x >> 23) & 0xFFu;
  return e >= 1 && e <= kTanhSmallMaxExp;
}

// Word j of the table: round(m^3 / 3 * 2^8) at the middle of significand
// interval j, m = 1 + (j + 1/2) / 256 = (513 + 2j) / 512; in integers,
// round((513 + 2j)^3 / (3 * 2^19)) (no ties: the numerator is odd), 86 .. 681.
// The RTL holds the same words (act_lut_data_pkg::TANH_CUBE, written by
// act_lut_gen).
constexpr uint32_t tanh_cube_word(int j) {
  const uint64_t n = 513 + 2 * static_cast<uint64_t>(j);
  const uint64_t den = uint64_t{3} << 19;
  return static_cast<uint32_t>((n * n * n + den / 2) / den);
}

// Activations on binary32 bit patterns (the RTL's interface).
uint32_t sigmoid(uint32_t x);
uint32_t tanh(uint32_t x);

// The same functions on floats.
inline float sigmoidf(float x) {
  return std::bit_cast<float>(sigmoid(std::bit_cast<uint32_t>(x)));
}
inline float tanhf(float x) {
  return std::bit_cast<float>(tanh(std::bit_cast<uint32_t>(x)));
}

// Table word k as stored in rtl/act/act_sigmoid_lut.mem: bits [31:0] Y[k],
// bits [53:32] D[k] = Y[k+1] - Y[k]. Throws std::out_of_range for k >= 4096.
uint64_t lut_word(int k);

// Float64 references the error bounds are stated against.
inline double sigmoid_ref(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
inline double tanh_ref(double x) {
  return std::tanh(x);
}

}  // namespace farnn::act
