// FP32 test stimulus shared by the GoogleTest suite (tests/fp32) and the RTL
// testbenches (tb/fp): the list of special values (every class of binary32
// plus rounding/overflow/underflow boundary operands) and a seeded generator
// of random operand pairs in several distributions:
//   uniform    random bit patterns (all classes, mostly large/small normals);
//   close      exponents within +-3 (cancellation, normalization shifts);
//   extreme    exponents near 0 and 255 (add) or products near the underflow
//              and overflow boundaries (mul);
//   tie        constructed exact halfway cases (RNE ties, both directions);
//   special    one special value against a random operand.
// Header-only, no dependencies beyond the standard library.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace farnn::fp32::testvec {

// Magnitudes; special_values() adds both signs.
inline std::vector<uint32_t> special_magnitudes() {
  return {
      0x00000000u,  // zero
      0x00000001u,  // smallest subnormal
      0x00000002u,  //
      0x00400000u,  // mid subnormal
      0x007FFFFFu,  // largest subnormal
      0x00800000u,  // min normal 2^-126
      0x00800001u,  // min normal + 1 ulp
      0x00FFFFFFu,  // min normal exponent, all-ones fraction
      0x01000000u,  // 2^-125
      0x0C800000u,  // 2^-102
      0x1F800000u,  // 2^-64 (square underflows to 2^-128)
      0x1FFFFFFFu,  //
      0x20000000u,  // 2^-63 (square is exactly 2^-126)
      0x33000000u,  // 2^-25 (quarter ulp of 1)
      0x33800000u,  // 2^-24 (half ulp of 1: ties)
      0x33800001u,  // just above half ulp of 1
      0x34000000u,  // 2^-23 (ulp of 1)
      0x3EFFFFFFu,  // just below 0.5
      0x3F000000u,  // 0.5
      0x3F7FFFFEu,  // 1 - 2^-23
      0x3F7FFFFFu,  // 1 - 2^-24 (times min normal: rounds up to min normal)
      0x3F800000u,  // 1
      0x3F800001u,  // 1 + 2^-23 (odd: ties round up)
      0x3F800002u,  // 1 + 2^-22
      0x3FBFFFFFu,  //
      0x3FC00000u,  // 1.5
      0x3FFFFFFFu,  // 2 - 2^-23
      0x40000000u,  // 2
      0x4B7FFFFFu,  // 2^24 - 1
      0x4B800000u,  // 2^24 (+1 is a tie to even)
      0x4B800001u,  // 2^24 + 2 (+1 is a tie, rounds up)
      0x5F7FFFFFu,  // just below 2^64
      0x5F800000u,  // 2^64 (square overflows)
      0x72FFFFFFu,  // just below half ulp of max normal
      0x73000000u,  // 2^103 = half ulp of max normal (max + it ties to Inf)
      0x73000001u,  //
      0x7E800000u,  // 2^126
      0x7F000000u,  // 2^127
      0x7F7FFFFEu,  // max normal - 1 ulp
      0x7F7FFFFFu,  // max normal
      0x7F800000u,  // Inf
      0x7F800001u,  // signalling NaN, smallest payload
      0x7FA00000u,  // signalling NaN
      0x7FBFFFFFu,  // signalling NaN, largest payload
      0x7FC00000u,  // canonical quiet NaN
      0x7FC00001u,  // quiet NaN with payload
      0x7FD23456u,  // quiet NaN with payload
      0x7FFFFFFFu,  // quiet NaN, all-ones payload
  };
}

inline std::vector<uint32_t> special_values() {
  std::vector<uint32_t> v;
  for (uint32_t m : special_magnitudes()) {
    v.push_back(m);
    v.push_back(m | 0x80000000u);
  }
  return v;
}

class Gen {
 public:
  enum Kind { kUniform = 0, kClose, kExtreme, kTie, kSpecial, kNumKinds };

  explicit Gen(uint64_t seed) : rng_(seed), specials_(special_values()) {}

  uint32_t bits() { return static_cast<uint32_t>(rng_()); }
  uint32_t range(uint32_t lo, uint32_t hi) {  // inclusive
    return lo + static_cast<uint32_t>(rng_() % (uint64_t{hi} - lo + 1));
  }
  uint32_t sign() { return bits() & 0x80000000u; }
  uint32_t frac() {
    // Mostly random, sometimes all ones / zero / one-off patterns.
    switch (range(0, 7)) {
      case 0:
        return 0x7FFFFFu;
      case 1:
        return 0u;
      case 2:
        return range(0, 3);
      case 3:
        return 0x7FFFFFu - range(0, 3);
      default:
        return bits() & 0x7FFFFFu;
    }
  }
  static uint32_t make(uint32_t sign, uint32_t exp, uint32_t frac) {
    return sign | ((exp & 0xFFu) << 23) | (frac & 0x7FFFFFu);
  }
  uint32_t special() { return specials_[range(0, static_cast<uint32_t>(specials_.size() - 1))]; }
  uint32_t any() {
    switch (range(0, 3)) {
      case 0:
        return special();
      case 1:
        return make(sign(), range(0, 255), frac());
      default:
        return bits();
    }
  }

  std::pair<uint32_t, uint32_t> add_pair(int kind) {
    switch (kind) {
      case kClose: {
        const uint32_t ea = range(1, 254);
        const uint32_t a = make(sign(), ea, frac());
        if (range(0, 3) == 0) {
          // Near-total cancellation: -a plus a few ulps.
          const uint32_t b = ((a ^ 0x80000000u) + range(0, 8)) - range(0, 8);
          return {a, b};
        }
        const int eb = std::clamp(static_cast<int>(ea) + static_cast<int>(range(0, 6)) - 3, 0, 255);
        return swap_maybe(a, make(sign(), static_cast<uint32_t>(eb), frac()));
      }
      case kExtreme: {
        auto exp = [this] { return range(0, 1) ? range(0, 6) : range(248, 255); };
        return {make(sign(), exp(), frac()), make(sign(), exp(), frac())};
      }
      case kTie: {
        // b's bits below a's last place are exactly 100..0 (a tie when the
        // sum needs no normalization shift; close to one otherwise).
        const uint32_t ea = range(25, 254);
        const uint32_t d = range(1, 24);
        const uint32_t mb =
            (((bits() & 0x7FFFFFu) | 0x800000u) & ~((1u << d) - 1u)) | (1u << (d - 1));
        const uint32_t a = make(sign(), ea, frac());
        const uint32_t b = make(sign(), ea - d, mb);
        return swap_maybe(a, b);
      }
      case kSpecial:
        return swap_maybe(special(), any());
      default:
        return {bits(), bits()};
    }
  }

  std::pair<uint32_t, uint32_t> mul_pair(int kind) {
    switch (kind) {
      case kClose: {  // moderate exponents, patterned fractions
        return {make(sign(), range(64, 190), frac()), make(sign(), range(64, 190), frac())};
      }
      case kExtreme: {
        // Products whose exponent lands near 0 (underflow, the min-normal
        // rounding case) or near 255 (overflow).
        const int target =
            range(0, 1) ? static_cast<int>(range(0, 4)) - 2 : static_cast<int>(range(252, 256));
        const uint32_t ea = range(1, 254);
        const int eb = std::clamp(target + 127 - static_cast<int>(ea), 1, 254);
        uint32_t fa = frac();
        uint32_t fb = frac();
        if (range(0, 3) == 0) {  // one power of two, the other all ones: 1.11..1
          fa = 0;
          fb = 0x7FFFFFu;
        }
        return swap_maybe(make(sign(), ea, fa), make(sign(), static_cast<uint32_t>(eb), fb));
      }
      case kTie: {
        // ma = x * 2^i, mb = y * 2^j (x, y odd): the product has exactly
        // i + j trailing zeros; a tie needs 22 (product < 2^47) or 23.
        uint32_t ma = 0;
        uint32_t mb = 0;
        for (int tries = 0; tries < 16; ++tries) {
          const uint32_t tz = range(22, 23);
          const uint32_t i = range(0, tz);
          const uint32_t j = tz - i;
          if (i > 23 || j > 23) continue;
          ma = odd_mantissa(i);
          mb = odd_mantissa(j);
          const uint64_t p = uint64_t{ma} * mb;
          const bool hi = (p >> 47) != 0;
          if ((hi && tz == 23) || (!hi && tz == 22)) break;
        }
        const uint32_t ea = range(1, 254);
        const int eb_lo = std::max(1, 100 - static_cast<int>(ea));
        const int eb_hi = std::min(254, 380 - static_cast<int>(ea));
        const uint32_t eb = range(static_cast<uint32_t>(eb_lo), static_cast<uint32_t>(eb_hi));
        return {make(sign(), ea, ma), make(sign(), eb, mb)};
      }
      case kSpecial:
        return swap_maybe(special(), any());
      default:
        return {bits(), bits()};
    }
  }

  // Accumulator for a mac test: random, or close to -(a*b) for cancellation.
  uint32_t acc_for(uint32_t product) {
    switch (range(0, 3)) {
      case 0:
        return bits();
      case 1:
        return any();
      default:
        return ((product ^ 0x80000000u) + range(0, 4)) - range(0, 4);
    }
  }

  std::mt19937_64& engine() { return rng_; }

 private:
  // A 24-bit mantissa (hidden bit set) equal to an odd number times 2^i.
  uint32_t odd_mantissa(uint32_t i) {
    const uint32_t lo = 1u << (23 - i);
    const uint32_t x = range(lo, 2 * lo - 1) | 1u;
    return x << i;
  }
  std::pair<uint32_t, uint32_t> swap_maybe(uint32_t a, uint32_t b) {
    if (range(0, 1)) return {b, a};
    return {a, b};
  }

  std::mt19937_64 rng_;
  std::vector<uint32_t> specials_;
};

}  // namespace farnn::fp32::testvec
