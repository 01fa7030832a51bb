// Bit-accurate model of the FARNN sigmoid / tanh unit (rtl/act/fp_act.sv):
// the RTL's results are this model's results, bit for bit.
//
// Method (docs/drafts/act.md): one table of sigma on [0, 16), 4096 knots at
// step 2^-8, linear interpolation in unsigned fixed point, read from the same
// file the RTL reads (rtl/act/act_sigmoid_lut.mem, embedded at build time):
//   u = floor(|x| * 2^24)            (tanh: floor(2|x| * 2^24)), 28 bits
//   k = u >> 16, f = u & 0xFFFF
//   y = Y[k] + floor(D[k] * f / 2^16)   Q1.31, y = 2^31 (1.0) when |x| >= 16
//   sigmoid(+|x|) = y, sigmoid(-|x|) = 1 - y, tanh(x) = sign(x) * (2y - 1)
// and the non-negative Q1.31 result is rounded to binary32 (nearest-even).
// Subnormal inputs are flushed to a zero of the same sign; every NaN input
// gives kCanonicalNan; sigmoid(+-Inf) = 1 / +0, tanh(+-Inf) = +-1.
// Properties (checked exhaustively by tools/act_sweep): monotone,
// tanh(-x) == -tanh(x) bit for bit, sigmoid(0) = 0.5, tanh(+-0) = +-0,
// exact saturation at 1 / 0 / +-1, max abs error vs float64 < 1e-6.
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
