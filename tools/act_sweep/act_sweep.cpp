// act_sweep: exhaustive check of the sigmoid / tanh model (farnn::act) over
// all 2^32 binary32 inputs, or every S-th input along the real line.
//
// Usage: act_sweep [--json FILE] [--threads N] [--stride S]
//   --json FILE   write the results as JSON
//   --threads N   worker threads (default 2)
//   --stride S    visit every S-th input in line order (default 1: all)
//
// Checks (act_sweep_core.hpp): max abs error vs float64 <= 1e-6 for both
// functions, monotone (non-decreasing from -Inf to +Inf), exact saturation
// reached no later than the clamp (sigmoid: 1.0 for x >= 16, +0 for x <= -16;
// tanh: +-1.0 for |x| >= 8), tanh(-x) == -tanh(x) bit for bit, NaN ->
// canonical NaN, subnormal input == flushed input, outputs in range.
// Exit status 0 when every check passes, 1 when one fails, 2 on bad usage.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "act_sweep_core.hpp"

namespace farnn::act::sweep {
namespace {

constexpr double kErrorLimit = 1e-6;

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08X", v);
  return b;
}

nlohmann::json point(uint32_t bits) {
  return {{"x", static_cast<double>(as_float(bits))}, {"bits", hex(bits)}};
}

struct Options {
  std::string json;
  unsigned threads = 2;
  uint64_t stride = 1;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--json") {
      o.json = value();
    } else if (a == "--threads") {
      o.threads = static_cast<unsigned>(std::stoul(value()));
      if (o.threads == 0) throw std::invalid_argument("--threads must be at least 1");
    } else if (a == "--stride") {
      o.stride = std::stoull(value());
      if (o.stride == 0) throw std::invalid_argument("--stride must be at least 1");
    } else {
      throw std::invalid_argument("unknown argument '" + a + "'");
    }
  }
  return o;
}

// Runs the sweep: chunks of consecutive keys handed out to threads, stats
// merged in key order.
SweepStats run_sweep(const Options& o) {
  const uint64_t count = ((uint64_t{1} << 32) + o.stride - 1) / o.stride;
  const uint64_t chunk = 1u << 22;
  const uint64_t chunks = (count + chunk - 1) / chunk;
  std::vector<SweepStats> parts(chunks);
  std::atomic<uint64_t> next{0}, done{0};
  auto worker = [&] {
    for (uint64_t c; (c = next.fetch_add(1)) < chunks;) {
      SweepStats s;
      const uint64_t end = std::min(count, (c + 1) * chunk);
      for (uint64_t i = c * chunk; i < end; ++i) s.add(static_cast<uint32_t>(i * o.stride));
      parts[c] = s;
      done.fetch_add(1);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < o.threads; ++t) pool.emplace_back(worker);
  uint64_t reported = 0;
  while (done.load() < chunks) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const uint64_t pct = done.load() * 10 / chunks;
    if (pct > reported && pct < 10) {
      reported = pct;
      std::cerr << "act_sweep: " << pct * 10 << "%" << std::endl;
    }
  }
  for (auto& t : pool) t.join();
  SweepStats total;
  for (const auto& p : parts) total.merge(p);
  return total;
}

nlohmann::json func_json(const FuncStats& f, const Thresholds& t, bool is_tanh, bool& pass,
                         nlohmann::json& failures, const std::string& name) {
  nlohmann::json j;
  const double y = as_float(is_tanh ? tanh(f.max_err_x) : sigmoid(f.max_err_x));
  const double xd = as_float(f.max_err_x);
  j["max_abs_err"] = f.max_err;
  j["max_abs_err_at"] = point(f.max_err_x);
  j["max_abs_err_at"]["y"] = y;
  j["max_abs_err_at"]["ref"] = is_tanh ? tanh_ref(xd) : sigmoid_ref(xd);
  j["max_ulp_err_out_ge_2m10"] = f.max_ulp;
  j["max_ulp_err_at"] = point(f.max_ulp_x);
  j["max_ulp_err_in_lt_2m8"] = f.max_ulp_small_in;
  j["max_ulp_err_in_lt_2m8_at"] = point(f.max_ulp_small_in_x);
  j["max_abs_err_subnormal_vs_flushed"] = f.max_err_sub_flushed;
  const char* hi_name = "one_from";
  const char* lo_name = is_tanh ? "minus_one_upto" : "zero_upto";
  const double clamp = is_tanh ? kTanhClamp : kSigmoidClamp;
  nlohmann::json sat;
  sat[hi_name] = t.has_hi ? point(t.hi_from) : nlohmann::json(nullptr);
  sat[lo_name] = t.has_lo ? point(t.lo_upto) : nlohmann::json(nullptr);
  if (t.has_hi) sat["largest_x_not_one"] = point(t.last_not_hi);
  if (t.has_lo)
    sat[is_tanh ? "smallest_x_not_minus_one" : "smallest_x_not_zero"] = point(t.first_not_lo);
  sat["clamp"] = clamp;
  j["saturation"] = sat;
  nlohmann::json checks;
  auto check = [&](const std::string& what, bool ok, uint64_t n, uint32_t x) {
    checks[what] = ok;
    if (!ok) {
      pass = false;
      failures.push_back(name + " " + what + ": " + std::to_string(n) +
                         " failures, first at x=" + hex(x));
    }
  };
  check("error_le_1e-6", f.max_err <= kErrorLimit, f.max_err > kErrorLimit, f.max_err_x);
  check("monotone", f.mono_fail == 0, f.mono_fail, f.mono_fail_x);
  check("nan_canonical", f.nan_fail == 0, f.nan_fail, f.nan_fail_x);
  check("subnormal_flushed", f.flush_fail == 0, f.flush_fail, f.flush_fail_x);
  check("range", f.range_fail == 0, f.range_fail, f.range_fail_x);
  const bool sat_ok =
      t.has_hi && t.has_lo && as_float(t.hi_from) <= clamp && as_float(t.lo_upto) >= -clamp;
  check("saturation", sat_ok, !sat_ok, 0);
  // tanh's small-argument path is accurate relative to its result.
  if (is_tanh) {
    check("small_arg_le_1ulp", f.max_ulp_small_in <= 1.0, f.max_ulp_small_in > 1.0,
          f.max_ulp_small_in_x);
  }
  j["checks"] = checks;
  j["fail_counts"] = {{"monotone", f.mono_fail},
                      {"nan_canonical", f.nan_fail},
                      {"subnormal_flushed", f.flush_fail},
                      {"range", f.range_fail}};
  return j;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const auto t0 = std::chrono::steady_clock::now();
  const SweepStats s = run_sweep(o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  bool pass = true;
  nlohmann::json failures = nlohmann::json::array();
  nlohmann::json j;
  j["tool"] = "act_sweep";
  j["exhaustive"] = o.stride == 1;
  j["stride"] = o.stride;
  j["threads"] = o.threads;
  j["wall_s"] = wall;
  j["error_limit"] = kErrorLimit;
  j["counts"] = {
      {"inputs", s.inputs}, {"nan", s.nans}, {"subnormal", s.subnormals}, {"inf", s.infs}};
  const Thresholds ts = thresholds(s.sig), tt = thresholds(s.tnh);
  j["sigmoid"] = func_json(s.sig, ts, false, pass, failures, "sigmoid");
  j["tanh"] = func_json(s.tnh, tt, true, pass, failures, "tanh");
  j["tanh"]["checks"]["odd_symmetry"] = s.sym_fail == 0;
  j["tanh"]["fail_counts"]["odd_symmetry"] = s.sym_fail;
  if (s.sym_fail != 0) {
    pass = false;
    failures.push_back("tanh odd_symmetry: " + std::to_string(s.sym_fail) +
                       " failures, first at x=" + hex(s.sym_fail_x));
  }
  j["failures"] = failures;
  j["pass"] = pass;

  if (!o.json.empty()) {
    std::ofstream f(o.json);
    if (!f) throw std::runtime_error("cannot open '" + o.json + "' for writing");
    f << j.dump(2) << "\n";
  }
  std::cout << j.dump(2) << std::endl;
  std::cout << "act_sweep: " << (pass ? "PASS" : "FAIL") << " (" << s.inputs << " inputs, " << wall
            << " s)" << std::endl;
  return pass ? 0 : 1;
}

}  // namespace
}  // namespace farnn::act::sweep

int main(int argc, char** argv) {
  try {
    return farnn::act::sweep::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "act_sweep: " << e.what() << "\n"
              << "usage: act_sweep [--json FILE] [--threads N] [--stride S]\n";
    return 2;
  }
}
