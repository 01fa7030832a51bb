// Command-line and environment options shared by every FARNN testbench:
// the seed (--seed N or FARNN_SEED, printed at start so every run reproduces),
// FST tracing on demand (--trace [file] or FARNN_TRACE=1) and "--key value"
// settings read with get_int/get_double/get_string. Each program names the
// settings it knows with allow(); any other is refused with an error (a
// misspelt --hiden must not be silently ignored).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <map>
#include <random>
#include <stdexcept>
#include <string>

namespace farnn::tb {

class Options {
 public:
  Options(int argc, char** argv, std::string name) : name_(std::move(name)) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("+", 0) == 0) a = "--" + a.substr(1);  // accept +trace style too
      if (a.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + a + "'");
      std::string key = a.substr(2);
      std::string value = "1";
      auto eq = key.find('=');
      if (eq != std::string::npos) {
        value = key.substr(eq + 1);
        key = key.substr(0, eq);
      } else if (i + 1 < argc && std::string(argv[i + 1]).rfind("-", 0) != 0 &&
                 std::string(argv[i + 1]).rfind("+", 0) != 0) {
        value = argv[++i];
      }
      kv_[key] = value;
    }
    if (auto it = kv_.find("seed"); it != kv_.end()) {
      seed_ = std::stoull(it->second);
    } else if (const char* env = std::getenv("FARNN_SEED")) {
      seed_ = std::stoull(env);
    } else {
      seed_ = (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
    }
    if (const char* env = std::getenv("FARNN_TRACE"); env && std::string(env) != "0") {
      kv_.emplace("trace", "1");
    }
    std::cout << name_ << ": seed=" << seed_ << " (reproduce with FARNN_SEED=" << seed_ << ")"
              << std::endl;
  }

  // Refuses every setting not in `known` (--seed and --trace are always known).
  void allow(std::initializer_list<const char*> known) const {
    for (const auto& [key, value] : kv_) {
      if (key == "seed" || key == "trace") continue;
      bool found = false;
      std::string list = "--seed, --trace";
      for (const char* k : known) {
        found = found || key == k;
        list += std::string(", --") + k;
      }
      if (!found) throw std::invalid_argument(name_ + ": unknown option --" + key + " (known: " + list + ")");
    }
  }

  const std::string& name() const { return name_; }
  uint64_t seed() const { return seed_; }
  bool has(const std::string& key) const { return kv_.count(key) != 0; }
  bool trace() const { return has("trace"); }
  // Trace file: --trace FILE, or <name>_<seed>.fst in the working directory.
  std::string trace_file() const {
    auto it = kv_.find("trace");
    if (it != kv_.end() && it->second != "1") return it->second;
    return name_ + "_" + std::to_string(seed_) + ".fst";
  }
  long long get_int(const std::string& key, long long def) const {
    auto it = kv_.find(key);
    return it == kv_.end() ? def : std::stoll(it->second);
  }
  double get_double(const std::string& key, double def) const {
    auto it = kv_.find(key);
    return it == kv_.end() ? def : std::stod(it->second);
  }
  std::string get_string(const std::string& key, const std::string& def) const {
    auto it = kv_.find(key);
    return it == kv_.end() ? def : it->second;
  }

 private:
  std::string name_;
  uint64_t seed_ = 0;
  std::map<std::string, std::string> kv_;
};

// Deterministic random source derived from the run's seed.
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  bool chance(double p) { return p > 0.0 && std::uniform_real_distribution<double>(0, 1)(gen_) < p; }
  uint32_t u32() { return static_cast<uint32_t>(gen_()); }
  uint64_t u64() { return gen_(); }
  // Uniform integer in [lo, hi].
  long long range(long long lo, long long hi) {
    return std::uniform_int_distribution<long long>(lo, hi)(gen_);
  }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen_); }
  std::mt19937_64& engine() { return gen_; }

 private:
  std::mt19937_64 gen_;
};

}  // namespace farnn::tb
