// Seeds of the randomized GoogleTest suites. Each random stream starts from
// its test's fixed seed; FARNN_SEED=<n> (as the Verilator testbenches take
// it) mixes n into every one, to run the same tests on other data. Every
// failure message names the seed in use and how to get it back.
#pragma once

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

namespace farnn::test {

// True, with the value, when FARNN_SEED is set.
inline bool farnn_seed(uint64_t& value) {
  const char* env = std::getenv("FARNN_SEED");
  if (env == nullptr || *env == '\0') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(env, &end, 10);
  if (*end != '\0' || errno != 0) {
    ADD_FAILURE() << "FARNN_SEED='" << env << "' is not a whole number; running the fixed seeds";
    return false;
  }
  value = v;
  return true;
}

// The seed a stream whose fixed seed is `fixed` uses: `fixed`, or with
// FARNN_SEED set, a splitmix64 mix of both.
inline uint64_t test_seed(uint64_t fixed) {
  uint64_t base = 0;
  if (!farnn_seed(base)) return fixed;
  uint64_t z = fixed + 0x9e3779b97f4a7c15ull * (base + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline std::string seed_note(uint64_t fixed) {
  uint64_t base = 0;
  if (!farnn_seed(base))
    return "seed " + std::to_string(fixed) + " (FARNN_SEED=<n> runs other data)";
  return "seed " + std::to_string(test_seed(fixed)) + " from fixed seed " + std::to_string(fixed) +
         " (reproduce with FARNN_SEED=" + std::to_string(base) + ")";
}

// A random stream that names its seed in every failure inside its scope.
class SeededRng : public std::mt19937_64 {
 public:
  explicit SeededRng(uint64_t fixed, const char* file = __builtin_FILE(),
                     int line = __builtin_LINE())
      : std::mt19937_64(test_seed(fixed)), trace_(file, line, seed_note(fixed)) {}

 private:
  ::testing::ScopedTrace trace_;
};

}  // namespace farnn::test
