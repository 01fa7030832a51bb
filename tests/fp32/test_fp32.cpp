// Bit-accurate FP32 model (sw/include/farnn/fp32.hpp): the soft-float add,
// mul and mac (the RTL's algorithm) against the host FPU with the flush
// applied around it, on every pair (mac: every triple) of special values and
// on 10^7 random operand sets per operation drawn from several distributions
// (tests/fp32/fp32_vectors.hpp); plus literal expectations checked by hand
// so the suite does not only compare two implementations with each other.
// Seeds are fixed and printed; a failure prints the operands in hex.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "farnn/fp32.hpp"
#include "fp32_vectors.hpp"

namespace farnn::fp32 {
namespace {

constexpr uint64_t kRandomVectors = 10'000'000;
constexpr int kMaxReported = 10;

std::string hex(uint32_t x) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", x);
  return buf;
}

// Counts mismatches and reports the first few with their operands.
class Checker {
 public:
  explicit Checker(std::string what) : what_(std::move(what)) {}
  ~Checker() {
    EXPECT_EQ(mismatches_, 0u) << what_ << ": " << mismatches_ << " mismatches in " << checked_
                               << " checks";
  }
  // Operands are only formatted on a mismatch (this runs 6*10^7 times).
  template <class... Operands>
  void check(uint32_t got, uint32_t want, const char* impl, Operands... operands) {
    ++checked_;
    if (got == want) [[likely]]
      return;
    if (++mismatches_ <= kMaxReported) {
      std::string text;
      for (uint32_t x : {operands...}) text += (text.empty() ? "" : ", ") + hex(x);
      ADD_FAILURE() << what_ << " " << impl << "(" << text << ") = " << hex(got) << ", reference "
                    << hex(want);
    }
  }
  uint64_t checked() const { return checked_; }

 private:
  std::string what_;
  uint64_t checked_ = 0;
  uint64_t mismatches_ = 0;
};

std::string ops(uint32_t a, uint32_t b) {
  return hex(a) + ", " + hex(b);
}

void check_add(Checker& c, uint32_t a, uint32_t b) {
  const uint32_t ref = add_host(a, b);
  c.check(add(a, b), ref, "add", a, b);
  c.check(to_bits(addf(to_float(a), to_float(b))), ref, "addf", a, b);
}
void check_mul(Checker& c, uint32_t a, uint32_t b) {
  const uint32_t ref = mul_host(a, b);
  c.check(mul(a, b), ref, "mul", a, b);
  c.check(to_bits(mulf(to_float(a), to_float(b))), ref, "mulf", a, b);
}
void check_mac(Checker& c, uint32_t acc, uint32_t a, uint32_t b) {
  const uint32_t ref = mac_host(acc, a, b);
  c.check(mac(acc, a, b), ref, "mac", acc, a, b);
  c.check(to_bits(macf(to_float(acc), to_float(a), to_float(b))), ref, "macf", acc, a, b);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---------------------------------------------------------------------------
// Literal expectations (worked out by hand; also cross-checked with an exact
// rational-arithmetic script while writing this test).

struct Case {
  uint32_t a, b, want;
};

TEST(Fp32Literal, Add) {
  const Case cases[] = {
      {0x3F800000u, 0x33800000u, 0x3F800000u},    // 1 + 2^-24: tie, stays at even 1
      {0x3F800001u, 0x33800000u, 0x3F800002u},    // (1+2^-23) + 2^-24: tie, up to even
      {0xBF800001u, 0xB3800000u, 0xBF800002u},    // same, negative
      {0x3F800000u, 0x33800001u, 0x3F800001u},    // just above the tie: up
      {0x3F800000u, 0xB3800000u, 0x3F7FFFFFu},    // 1 - 2^-24 is exact
      {0x4B800000u, 0x3F800000u, 0x4B800000u},    // 2^24 + 1: tie, stays
      {0x4B800001u, 0x3F800000u, 0x4B800002u},    // (2^24+2) + 1: tie, up
      {0x3F800000u, 0x40000000u, 0x40400000u},    // 1 + 2 = 3
      {0x3FC00000u, 0x3FC00000u, 0x40400000u},    // 1.5 + 1.5 = 3
      {0x80000000u, 0x80000000u, 0x80000000u},    // -0 + -0 = -0
      {0x00000000u, 0x80000000u, 0x00000000u},    // +0 + -0 = +0
      {0x80000000u, 0x00000000u, 0x00000000u},    // -0 + +0 = +0
      {0x3F800000u, 0xBF800000u, 0x00000000u},    // 1 - 1 = +0
      {0xBF800000u, 0x3F800000u, 0x00000000u},    // -1 + 1 = +0
      {0x80000001u, 0x80000001u, 0x80000000u},    // subnormals flush to -0: -0 + -0
      {0x007FFFFFu, 0x807FFFFFu, 0x00000000u},    // +0 + -0 after the flush
      {0x00800000u, 0x80000001u, 0x00800000u},    // subnormal input ignored
      {0x00800000u, 0x00800000u, 0x01000000u},    // 2 * min normal
      {0x00800001u, 0x80800000u, 0x00000000u},    // 2^-149 result flushes to +0
      {0x80800001u, 0x00800000u, 0x80000000u},    // -2^-149 result flushes to -0
      {0x00800000u, 0x80FFFFFFu, 0x80000000u},    // subnormal difference, negative
      {0x01000000u, 0x80FFFFFFu, 0x00000000u},    // 2^-125 - (2^-125 - 2^-149)
      {0x7F7FFFFFu, 0x7F7FFFFFu, 0x7F800000u},    // overflow
      {0x7F7FFFFFu, 0x73000000u, 0x7F800000u},    // max + half ulp: tie rounds to Inf
      {0x7F7FFFFFu, 0x72FFFFFFu, 0x7F7FFFFFu},    // max + just under half ulp
      {0x7F800000u, 0xFF800000u, kCanonicalNan},  // Inf - Inf
      {0xFF800000u, 0x7F7FFFFFu, 0xFF800000u},    // -Inf + max
      {0x7FA00000u, 0x3F800000u, kCanonicalNan},  // signalling NaN in
      {0xFFFFFFFFu, 0x7F800000u, kCanonicalNan},  // negative NaN in
  };
  for (const Case& c : cases) {
    EXPECT_EQ(hex(add(c.a, c.b)), hex(c.want)) << "add(" << ops(c.a, c.b) << ")";
    EXPECT_EQ(hex(add_host(c.a, c.b)), hex(c.want)) << "add_host(" << ops(c.a, c.b) << ")";
  }
}

TEST(Fp32Literal, Mul) {
  const Case cases[] = {
      {0x3F7FFFFFu, 0x00800000u, 0x00800000u},    // (1-2^-24)*2^-126 rounds up to min normal
      {0xBF7FFFFFu, 0x00800000u, 0x80800000u},    // same, negative
      {0x3F7FFFFEu, 0x00800000u, 0x00000000u},    // (1-2^-23)*2^-126 flushes
      {0x3F000000u, 0x00800000u, 0x00000000u},    // 2^-127 flushes
      {0x1F800000u, 0x1F800000u, 0x00000000u},    // 2^-128 flushes
      {0x20000000u, 0x20000000u, 0x00800000u},    // 2^-126 exactly
      {0x5F800000u, 0x5F800000u, 0x7F800000u},    // 2^128 overflows
      {0x7F7FFFFFu, 0x3F800001u, 0x7F800000u},    // just above max: Inf
      {0x7F7FFFFFu, 0x3F7FFFFFu, 0x7F7FFFFEu},    // just below max
      {0x7F000000u, 0x3FFFFFFFu, 0x7F7FFFFFu},    // exactly max
      {0x7F000000u, 0x40000000u, 0x7F800000u},    // 2^128
      {0x3F800001u, 0x3F800001u, 0x3F800002u},    // 1 + 2^-22 + 2^-46: down
      {0x3F800800u, 0x3F800800u, 0x3F801000u},    // 1 + 2^-11 + 2^-24: tie, stays even
      {0x3F800800u, 0x3F801800u, 0x3F802002u},    // ... + 2^-23 + 2^-24: tie, up
      {0xBF800800u, 0x3F801800u, 0xBF802002u},    // same, negative
      {0x3FC00000u, 0x40000000u, 0x40400000u},    // 1.5 * 2 = 3
      {0x7F800000u, 0x00000000u, kCanonicalNan},  // Inf * 0
      {0x7F800000u, 0x00000001u, kCanonicalNan},  // Inf * subnormal (= 0)
      {0xFF800000u, 0x3F800000u, 0xFF800000u},    // -Inf * 1
      {0x00000001u, 0x3F800000u, 0x00000000u},    // subnormal * 1 = +0
      {0x80000000u, 0x3F800000u, 0x80000000u},    // -0 * 1 = -0
      {0x7FC00001u, 0x00000000u, kCanonicalNan},  // NaN payload dropped
  };
  for (const Case& c : cases) {
    EXPECT_EQ(hex(mul(c.a, c.b)), hex(c.want)) << "mul(" << ops(c.a, c.b) << ")";
    EXPECT_EQ(hex(mul_host(c.a, c.b)), hex(c.want)) << "mul_host(" << ops(c.a, c.b) << ")";
  }
}

TEST(Fp32Literal, MacIsUnfused) {
  // -(1+2^-22) + (1+2^-23)^2: the product rounds to 1+2^-22 first, so the
  // sum is +0 (a fused MAC would give 2^-46 = 0x28800000).
  EXPECT_EQ(hex(mac(0xBF800002u, 0x3F800001u, 0x3F800001u)), hex(0x00000000u));
  EXPECT_EQ(hex(mac(0x3F800000u, 0x3F800000u, 0x3F800000u)), hex(0x40000000u));
  EXPECT_EQ(hex(mac(0x80000000u, 0x80000000u, 0x3F800000u)), hex(0x80000000u));  // -0 + -0
}

TEST(Fp32Literal, Helpers) {
  EXPECT_EQ(flush(0x00000001u), 0x00000000u);
  EXPECT_EQ(flush(0x807FFFFFu), 0x80000000u);
  EXPECT_EQ(flush(0x00800000u), 0x00800000u);
  EXPECT_EQ(flush(0xFF800000u), 0xFF800000u);
  EXPECT_EQ(flush(0xFF800001u), kCanonicalNan);
  EXPECT_EQ(flush(0x7FC00000u), kCanonicalNan);
  EXPECT_EQ(to_bits(1.0f), 0x3F800000u);
  EXPECT_EQ(to_float(0xC0000000u), -2.0f);
  EXPECT_EQ(addf(1.0f, 2.0f), 3.0f);
  EXPECT_EQ(mulf(1.5f, 2.0f), 3.0f);
}

// ---------------------------------------------------------------------------
// Every pair / triple of special values.

TEST(Fp32Special, AllPairs) {
  const auto sv = testvec::special_values();
  Checker ca("special add");
  Checker cm("special mul");
  for (uint32_t a : sv) {
    for (uint32_t b : sv) {
      check_add(ca, a, b);
      check_mul(cm, a, b);
    }
  }
  std::printf("special values: %zu, pairs: %zu per op\n", sv.size(), sv.size() * sv.size());
}

TEST(Fp32Special, MacAllTriples) {
  const auto sv = testvec::special_values();
  Checker c("special mac");
  for (uint32_t acc : sv) {
    for (uint32_t a : sv) {
      for (uint32_t b : sv) check_mac(c, acc, a, b);
    }
  }
  std::printf("mac triples: %zu\n", sv.size() * sv.size() * sv.size());
}

// ---------------------------------------------------------------------------
// Random vectors: 10^7 per op, the distributions taken in turn.

// Runs `check_one(gen, checker, i)` for kRandomVectors vectors from one seed
// and reports the seed and the time taken.
template <class CheckOne>
void run_random(const char* op, uint64_t seed, CheckOne check_one) {
  std::printf("%s: seed=0x%llx\n", op, static_cast<unsigned long long>(seed));
  testvec::Gen gen(seed);
  Checker c(std::string("random ") + op + " (seed " + std::to_string(seed) + ")");
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < kRandomVectors; ++i) {
    check_one(gen, c, static_cast<int>(i % testvec::Gen::kNumKinds));
  }
  std::printf("%s: %llu vectors in %.2f s\n", op, static_cast<unsigned long long>(kRandomVectors),
              seconds_since(t0));
}

TEST(Fp32Random, Add) {
  run_random("add", 0xADD0001, [](testvec::Gen& gen, Checker& c, int kind) {
    const auto [a, b] = gen.add_pair(kind);
    check_add(c, a, b);
  });
}

TEST(Fp32Random, Mul) {
  run_random("mul", 0x3010002, [](testvec::Gen& gen, Checker& c, int kind) {
    const auto [a, b] = gen.mul_pair(kind);
    check_mul(c, a, b);
  });
}

TEST(Fp32Random, Mac) {
  run_random("mac", 0x3AC0003, [](testvec::Gen& gen, Checker& c, int kind) {
    const auto [a, b] = gen.mul_pair(kind);
    check_mac(c, gen.acc_for(mul_host(a, b)), a, b);
  });
}

// The constructed distributions really hit what they are for.
TEST(Fp32Random, DistributionsHitTheirTargets) {
  testvec::Gen gen(7);
  int add_ties = 0;
  int mul_ties = 0;
  int min_normal_rounding = 0;
  constexpr int kN = 100000;
  for (int i = 0; i < kN; ++i) {
    const auto [a, b] = gen.add_pair(testvec::Gen::kTie);
    // A tie: the exact sum lies halfway between two floats, i.e. it is not
    // representable but doubling the precision makes it so.
    const double s = static_cast<double>(to_float(a)) + static_cast<double>(to_float(b));
    const float r = to_float(add_host(a, b));
    if (static_cast<double>(r) != s &&
        std::abs(s - static_cast<double>(r)) ==
            std::abs(s - static_cast<double>(std::nextafter(r, static_cast<float>(2 * s - r)))))
      ++add_ties;
    const auto [c, d] = gen.mul_pair(testvec::Gen::kTie);
    const uint64_t p = uint64_t{(c & kFracMask) | kMinNormal} * ((d & kFracMask) | kMinNormal);
    const uint64_t low = (p >> 47) ? (p & 0xFFFFFFu) : (p & 0x7FFFFFu);
    if (low == ((p >> 47) ? 0x800000u : 0x400000u)) ++mul_ties;
    const auto [e, f] = gen.mul_pair(testvec::Gen::kExtreme);
    if (mul(e, f) == kMinNormal && mul_host(e, f) == kMinNormal &&
        to_float(e) * static_cast<double>(to_float(f)) < 1.1754943508222875e-38)
      ++min_normal_rounding;
  }
  std::printf("of %d: add ties %d, mul ties %d, products rounding up to min normal %d\n", kN,
              add_ties, mul_ties, min_normal_rounding);
  EXPECT_GT(add_ties, kN / 4);
  EXPECT_GT(mul_ties, kN / 2);
  EXPECT_GT(min_normal_rounding, 10);
}

}  // namespace
}  // namespace farnn::fp32
