// Seeds of the randomized GoogleTest suites. Each random stream starts from
// its test's fixed seed; FARNN_SEED=<n> (as the Verilator testbenches take
// it) mixes n into every one, to run the same tests on other data. Every
// failure message names the seed in use and how to get it back.
#pragma once

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>

namespace farnn::test {

// The FARNN_SEED value, or nothing when it is unset (or not a whole number:
// a test failure).
inline std::optional<uint64_t> farnn_seed() {
  const char* env = std::getenv("FARNN_SEED");
  if (env == nullptr || *env == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(env, &end, 10);
  if (*end != '\0' || errno != 0) {
    ADD_FAILURE() << "FARNN_SEED='" << env << "' is not a whole number; running the fixed seeds";
    return std::nullopt;
  }
  return v;
}

// A random stream that names its seed in every failure inside its scope. It
// starts from `fixed`, or with FARNN_SEED=n set, from a splitmix64 mix of both.
class SeededRng : public std::mt19937_64 {
 public:
  explicit SeededRng(uint64_t fixed, const char* file = __builtin_FILE(),
                     int line = __builtin_LINE())
      : SeededRng(fixed, farnn_seed(), file, line) {}

 private:
  SeededRng(uint64_t fixed, std::optional<uint64_t> base, const char* file, int line)
      : std::mt19937_64(mix(fixed, base)), trace_(file, line, note(fixed, base)) {}
  static uint64_t mix(uint64_t fixed, std::optional<uint64_t> base) {
    if (!base) return fixed;
    uint64_t z = fixed + 0x9e3779b97f4a7c15ull * (*base + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  static std::string note(uint64_t fixed, std::optional<uint64_t> base) {
    if (!base) return "seed " + std::to_string(fixed) + " (FARNN_SEED=<n> runs other data)";
    return "seed " + std::to_string(mix(fixed, base)) + " from fixed seed " +
           std::to_string(fixed) + " (reproduce with FARNN_SEED=" + std::to_string(*base) + ")";
  }
  ::testing::ScopedTrace trace_;
};

}  // namespace farnn::test
