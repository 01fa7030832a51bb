// The recurrent engine's command interface as the host sees it: opcodes, cell
// types, status (error) codes and the stream a status names, with their names.
// rtl/engine/engine_pkg.sv holds the same values for the RTL; the test
// tests/engine/test_engine_abi.cpp parses that package and fails when the two
// disagree, so a code added on one side cannot be forgotten on the other.
#pragma once

#include <cstdint>
#include <string>

namespace farnn::engine {

enum class Opcode : uint8_t { kLoad = 0, kForward = 1, kBackward = 2 };

// Cell type codes on the command port (engine::Cell uses the same values).
constexpr int kCellLstm = 0;
constexpr int kCellGru = 1;

// Finished FORWARDs the sequencer remembers (engine_pkg::FW_RECORDS): a
// BACKWARD must match one of the newest this many (ERR_NO_FORWARD).
constexpr int kForwardRecords = 8;

enum class Status : uint8_t {
  kOk = 0,
  kBadCell = 1,
  kHiddenZero = 2,
  kHiddenTooLarge = 3,
  kBatchZero = 4,
  kBatchTooLarge = 5,
  kStepsZero = 6,
  kStoreTooSmall = 7,
  kNoWeights = 8,
  kNoForward = 9,
  kBadCommand = 10,
  kStoreMisaligned = 11,
  kStoreWrap = 12,
  kTooFewWords = 13,
  kTooManyWords = 14,
  kTimeout = 15,
  kAborted = 16,
  kBadBank = 17,
  kBankBusy = 18,
  kBadLength = 19,
};

// The stream or port a framing or timeout status names.
enum class Unit : uint8_t {
  kNone = 0,
  kWeight = 1,
  kStateIn = 2,
  kXp = 3,
  kDh = 4,
  kH = 5,
  kDelta = 6,
  kStateOut = 7,
  kGateStore = 8,
};

struct StatusInfo {
  Status code;
  const char* rtl_name;  // the engine_pkg localparam
  const char* text;      // what it means, for messages
};

inline constexpr StatusInfo kStatusTable[] = {
    {Status::kOk, "ERR_NONE", "ok"},
    {Status::kBadCell, "ERR_BAD_CELL", "unknown cell type"},
    {Status::kHiddenZero, "ERR_HIDDEN_ZERO", "hidden size 0"},
    {Status::kHiddenTooLarge, "ERR_HIDDEN_TOO_LARGE", "hidden size above the engine's capacity"},
    {Status::kBatchZero, "ERR_BATCH_ZERO", "batch 0"},
    {Status::kBatchTooLarge, "ERR_BATCH_TOO_LARGE", "batch above MaxBatch"},
    {Status::kStepsZero, "ERR_STEPS_ZERO", "0 time steps"},
    {Status::kStoreTooSmall, "ERR_STORE_TOO_SMALL", "gate-store window smaller than T*B*H records"},
    {Status::kNoWeights, "ERR_NO_WEIGHTS", "no weights loaded for this cell and hidden size"},
    {Status::kNoForward, "ERR_NO_FORWARD", "backward without the matching forward"},
    {Status::kBadCommand, "ERR_BAD_COMMAND", "unknown opcode"},
    {Status::kStoreMisaligned, "ERR_STORE_MISALIGNED", "gate-store base not a multiple of 32 bytes"},
    {Status::kStoreWrap, "ERR_STORE_WRAP", "gate-store window wraps the address space"},
    {Status::kTooFewWords, "ERR_TOO_FEW_WORDS", "a stream's `last` came before the command's final word"},
    {Status::kTooManyWords, "ERR_TOO_MANY_WORDS", "a stream's final word came without `last`"},
    {Status::kTimeout, "ERR_TIMEOUT", "watchdog: no progress within the limit"},
    {Status::kAborted, "ERR_ABORTED", "aborted"},
    {Status::kBadBank, "ERR_BAD_BANK", "weight bank above NumBanks"},
    {Status::kBankBusy, "ERR_BANK_BUSY", "the weight bank is in use by a LOAD or by the running command"},
    {Status::kBadLength, "ERR_BAD_LENGTH", "a sequence length outside 1..T"},
};

struct UnitInfo {
  Unit code;
  const char* rtl_name;
  const char* text;
};

inline constexpr UnitInfo kUnitTable[] = {
    {Unit::kNone, "UNIT_NONE", "none"},
    {Unit::kWeight, "UNIT_WEIGHT", "weight stream"},
    {Unit::kStateIn, "UNIT_STATE_IN", "state-in stream"},
    {Unit::kXp, "UNIT_XP", "xp stream"},
    {Unit::kDh, "UNIT_DH", "dh stream"},
    {Unit::kH, "UNIT_H", "h stream"},
    {Unit::kDelta, "UNIT_DELTA", "delta stream"},
    {Unit::kStateOut, "UNIT_STATE_OUT", "state-out stream"},
    {Unit::kGateStore, "UNIT_GATE_STORE", "gate-store port"},
};

struct OpcodeInfo {
  Opcode code;
  const char* rtl_name;
  const char* text;
};

inline constexpr OpcodeInfo kOpcodeTable[] = {
    {Opcode::kLoad, "CMD_LOAD", "LOAD"},
    {Opcode::kForward, "CMD_FORWARD", "FORWARD"},
    {Opcode::kBackward, "CMD_BACKWARD", "BACKWARD"},
};

// The entry of a table for a code, or nullptr.
template <class Table>
const auto* find_code(const Table& table, int code) {
  for (const auto& e : table)
    if (static_cast<int>(e.code) == code) return &e;
  return static_cast<decltype(&table[0])>(nullptr);
}

// "ERR_TOO_MANY_WORDS (a stream's final word came without `last`)"; unknown
// codes print as "status 29 (unknown)".
inline std::string status_name(int code) {
  const auto* s = find_code(kStatusTable, code);
  return s ? std::string(s->rtl_name) + " (" + s->text + ")" : "status " + std::to_string(code) + " (unknown)";
}

inline std::string unit_name(int code) {
  const auto* u = find_code(kUnitTable, code);
  return u ? u->text : "unit " + std::to_string(code) + " (unknown)";
}

inline std::string opcode_name(int code) {
  const auto* o = find_code(kOpcodeTable, code);
  return o ? o->text : "opcode " + std::to_string(code) + " (unknown)";
}

}  // namespace farnn::engine
