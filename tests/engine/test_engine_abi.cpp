// The host's names of the engine's codes (sw/include/farnn/engine_abi.hpp)
// against the RTL's (rtl/engine/engine_pkg.sv): every ERR_*, UNIT_*, CMD_* and
// CELL_* localparam of the package must appear in the C++ tables with the
// same value, and every table entry must exist in the package. Adding a code
// on one side only fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "farnn/engine_abi.hpp"

namespace farnn::engine {
namespace {

// NAME -> value of every `localparam logic [..] NAME = W'dV;` with the prefix.
std::map<std::string, int> package_codes(const std::string& prefix) {
  std::ifstream in(FARNN_ENGINE_PKG);
  EXPECT_TRUE(in.good()) << "cannot read " << FARNN_ENGINE_PKG;
  std::stringstream text;
  text << in.rdbuf();
  const std::regex re("localparam\\s+logic\\s*\\[[^\\]]*\\]\\s+(" + prefix + "[A-Z0-9_]+)\\s*=\\s*\\d+'d(\\d+)\\s*;");
  std::map<std::string, int> codes;
  const std::string s = text.str();
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it) {
    codes[(*it)[1]] = std::stoi((*it)[2]);
  }
  return codes;
}

template <class Table>
void expect_same(const std::string& prefix, const Table& table) {
  auto rtl = package_codes(prefix);
  ASSERT_FALSE(rtl.empty()) << "no " << prefix << "* codes found in " << FARNN_ENGINE_PKG;
  for (const auto& e : table) {
    auto it = rtl.find(e.rtl_name);
    ASSERT_NE(it, rtl.end()) << e.rtl_name << " is in engine_abi.hpp but not in engine_pkg.sv";
    EXPECT_EQ(it->second, static_cast<int>(e.code)) << e.rtl_name << " differs between RTL and C++";
    rtl.erase(it);
  }
  for (const auto& [name, value] : rtl) {
    ADD_FAILURE() << name << " = " << value << " is in engine_pkg.sv but not in engine_abi.hpp";
  }
}

TEST(EngineAbi, StatusCodesMatchThePackage) { expect_same("ERR_", kStatusTable); }
TEST(EngineAbi, UnitCodesMatchThePackage) { expect_same("UNIT_", kUnitTable); }
TEST(EngineAbi, OpcodesMatchThePackage) { expect_same("CMD_", kOpcodeTable); }

TEST(EngineAbi, CellCodesMatchThePackage) {
  const auto rtl = package_codes("CELL_");
  ASSERT_EQ(rtl.size(), 2u);
  EXPECT_EQ(rtl.at("CELL_LSTM"), kCellLstm);
  EXPECT_EQ(rtl.at("CELL_GRU"), kCellGru);
}

TEST(EngineAbi, ForwardRecordsMatchThePackage) {
  std::ifstream in(FARNN_ENGINE_PKG);
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  const std::string s = text.str();
  ASSERT_TRUE(std::regex_search(
      s, m, std::regex("localparam\\s+int\\s+unsigned\\s+FW_RECORDS\\s*=\\s*(\\d+)\\s*;")))
      << "FW_RECORDS not found in " << FARNN_ENGINE_PKG;
  EXPECT_EQ(std::stoi(m[1]), kForwardRecords);
}

TEST(EngineAbi, NamesAreReadable) {
  EXPECT_EQ(status_name(14), "ERR_TOO_MANY_WORDS (a stream's final word came without `last`)");
  EXPECT_EQ(status_name(31), "status 31 (unknown)");
  EXPECT_EQ(unit_name(3), "xp stream");
  EXPECT_EQ(opcode_name(2), "BACKWARD");
}

}  // namespace
}  // namespace farnn::engine
