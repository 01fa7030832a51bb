// The clock `make synth` estimates, for benchmarks that project time: the
// "N levels -> F MHz" line the synthesis flow writes into docs/capacity.md
// (FARNN_CAPACITY_DOC, set by CMake). A benchmark takes --clock-mhz instead
// when given; without either it stops with a message saying how to get one.
#pragma once

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>

namespace farnn::tb {

inline double synth_clock_mhz() {
  std::ifstream in(FARNN_CAPACITY_DOC);
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  const std::string s = text.str();
  if (!std::regex_search(s, m, std::regex("(\\d+) levels -> ([0-9.]+) MHz"))) {
    throw std::runtime_error(std::string("no clock estimate in ") + FARNN_CAPACITY_DOC +
                             ": run `make synth` or pass --clock-mhz");
  }
  return std::stod(m[2]);
}

}  // namespace farnn::tb
