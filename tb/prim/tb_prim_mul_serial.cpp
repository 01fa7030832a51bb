// prim_mul_serial testbench: the serial multiplier of the shell's setup
// arithmetic against a * b mod 2^ProdWidth, and its cycle contract: busy_o
// high for exactly max(1, bit length of b) cycles after the start cycle, the
// product held while idle, a start while busy restarting the computation,
// a reset ending it. Operands: random widths (so every bit length of b
// occurs), the extremes (0, 1, all ones) and a random idle gap between
// starts. Built per parameter set by tb/prim/CMakeLists.txt.
#include <cstdint>
#include <string>

#include "Vprim_mul_serial.h"
#include "testbench.hpp"

#ifndef FARNN_PARAM_AWidth
#define FARNN_PARAM_AWidth 32
#endif
#ifndef FARNN_PARAM_BWidth
#define FARNN_PARAM_BWidth 16
#endif
#ifndef FARNN_PARAM_ProdWidth
#define FARNN_PARAM_ProdWidth 64
#endif

namespace {

using farnn::tb::Rng;
using Tb = farnn::tb::Testbench<Vprim_mul_serial>;

constexpr unsigned kA = FARNN_PARAM_AWidth;
constexpr unsigned kB = FARNN_PARAM_BWidth;
constexpr unsigned kP = FARNN_PARAM_ProdWidth;
static_assert(kA <= 64 && kB <= 64 && kP <= 64, "operands up to 64 bits");

uint64_t mask(unsigned bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

// a * b mod 2^kP, exact for operands up to 64 bits.
uint64_t expected(uint64_t a, uint64_t b) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(a) * b) & mask(kP);
}

unsigned bit_length(uint64_t v) {
  unsigned n = 0;
  while (v) {
    ++n;
    v >>= 1;
  }
  return n;
}

// A random operand of `width` bits whose bit length is itself random.
uint64_t operand(Rng& rng, unsigned width) {
  switch (rng.range(0, 9)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return mask(width);
    default: {
      const unsigned len = static_cast<unsigned>(rng.range(1, width));
      return (rng.u64() & mask(len)) | (1ull << (len - 1));
    }
  }
}

void set_inputs(Tb& tb, bool start, uint64_t a, uint64_t b) {
  auto& d = tb.dut();
  d.start_i = start;
  d.a_i = a;
  d.b_i = b;
}

// One multiplication from its start cycle: busy for exactly the contract's
// cycles, then the product, then held through `idle` cycles without a start.
void one(Tb& tb, uint64_t a, uint64_t b, unsigned idle) {
  set_inputs(tb, true, a, b);
  tb.tick();
  // Operands change after the start: the multiplier must have taken them.
  set_inputs(tb, false, ~a & mask(kA), ~b & mask(kB));
  const unsigned want = bit_length(b) > 0 ? bit_length(b) : 1;
  unsigned busy = 0;
  while (tb.dut().busy_o) {
    if (++busy > want) break;
    tb.tick();
  }
  if (busy != want) {
    tb.fail("a=" + std::to_string(a) + " b=" + std::to_string(b) + ": busy for " + std::to_string(busy) +
            " cycles, expected " + std::to_string(want));
  }
  for (unsigned i = 0; i <= idle; ++i) {
    if (tb.dut().busy_o) tb.fail("busy without a start");
    if (static_cast<uint64_t>(tb.dut().prod_o) != expected(a, b)) {
      tb.fail("a=" + std::to_string(a) + " b=" + std::to_string(b) + ": product " +
              std::to_string(static_cast<uint64_t>(tb.dut().prod_o)) + ", expected " +
              std::to_string(expected(a, b)) + (i ? " (after " + std::to_string(i) + " idle cycles)" : ""));
    }
    if (i < idle) tb.tick();
  }
}

void run(const farnn::tb::Options& opt, const std::string& name) {
  Tb tb(opt, name);
  Rng rng(opt.seed());
  const long long n = opt.get_int("count", 3000);
  set_inputs(tb, false, 0, 0);
  tb.reset();
  if (tb.dut().busy_o) tb.fail("busy after reset");

  // The extremes first, then random operands.
  const uint64_t edges_a[] = {0, 1, mask(kA)};
  const uint64_t edges_b[] = {0, 1, 2, mask(kB)};
  for (uint64_t a : edges_a)
    for (uint64_t b : edges_b) one(tb, a, b, 1);
  for (long long i = 0; i < n; ++i) {
    const uint64_t a = operand(rng, kA), b = operand(rng, kB);
    if (rng.chance(0.1)) {
      // Restart: a start k cycles into another computation (k up to its
      // last busy cycle and one past it) computes the new operands only.
      const uint64_t b0 = operand(rng, kB);
      set_inputs(tb, true, operand(rng, kA), b0);
      tb.tick();
      set_inputs(tb, false, 0, 0);
      for (long long k = rng.range(0, bit_length(b0) + 1); k > 0; --k) tb.tick();
    } else if (rng.chance(0.05)) {
      // Reset mid-computation: idle afterwards, and the next product exact.
      set_inputs(tb, true, a, mask(kB));
      tb.tick();
      set_inputs(tb, false, 0, 0);
      for (long long k = rng.range(0, kB - 1); k > 0; --k) tb.tick();
      tb.reset(1);
      if (tb.dut().busy_o) tb.fail("busy after a reset mid-computation");
    }
    one(tb, a, b, static_cast<unsigned>(rng.chance(0.5) ? 0 : rng.range(1, 5)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string name = "tb_prim_mul_serial_" + std::to_string(kA) + "x" + std::to_string(kB) + "_" +
                           std::to_string(kP);
  return farnn::tb::run_main(argc, argv, name, [&](const farnn::tb::Options& opt) {
    opt.allow({"count"});
    run(opt, name);
  });
}
