// Tensor file I/O (farnn::io): write -> read round trips (bit-exact, special
// values, scalar, empty and 1-D / 3-D shapes), files built by hand byte for
// byte, one test per kind of malformed input (message names the source and the
// fault), writer validation and failure cleanup, and a seeded mutation fuzz
// test (FARNN_FUZZ_SEED=<n> overrides the seed).
#include <gtest/gtest.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <string>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "farnn/tensor_io.hpp"

namespace farnn::io {
namespace {

using namespace std::string_literals;
namespace fs = std::filesystem;

std::string le(uint64_t v, size_t bytes) {
  std::string s(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape == b.shape && a.data.size() == b.data.size() &&
         (a.data.empty() ||
          std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0);
}

// A 2 x 3 x 4 tensor whose first values are NaNs with payloads, -0, +-inf,
// the smallest subnormal and the largest float.
Tensor special_tensor() {
  Tensor t{{2, 3, 4}, {}};
  for (uint32_t bits : {0x7FC00001u, 0x7F800001u, 0xFFFFFFFFu, 0x80000000u, 0x7F800000u,
                        0xFF800000u, 0x00000001u, 0x7F7FFFFFu}) {
    t.data.push_back(std::bit_cast<float>(bits));
  }
  while (t.data.size() < 24) t.data.push_back(0.1f * static_cast<float>(t.data.size()) - 1.0f);
  return t;
}

// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("farnn_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  size_t entries() const {
    return std::distance(fs::directory_iterator(path_), fs::directory_iterator());
  }

 private:
  fs::path path_;
};

// Runs f and expects a FormatError whose message starts with "<source>: " and
// contains each of `parts`.
void expect_format_error(const std::function<void()>& f, const std::string& source,
                         std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "expected FormatError, nothing was thrown";
  } catch (const FormatError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(source + ": ", 0), 0u)
        << "message \"" << msg << "\" does not start with the source";
    for (const auto& part : parts) {
      EXPECT_NE(msg.find(part), std::string::npos)
          << "message \"" << msg << "\" does not contain \"" << part << "\"";
    }
  }
}

// ---------------------------------------------------------------- safetensors

constexpr const char* kSt = "w.safetensors";

// A safetensors file built by hand: the header JSON as given, then data_bytes zero bytes.
std::string st_file(const std::string& json, size_t data_bytes) {
  return le(json.size(), 8) + json + std::string(data_bytes, '\0');
}
void st_rejects(const std::string& bytes, std::initializer_list<std::string> parts) {
  expect_format_error([&] { parse_safetensors(bytes, kSt); }, kSt, parts);
}
// One-tensor header {"a": {...fields}} for the entry tests.
std::string st_entry(const std::string& fields) {
  return R"({"a":{)" + fields + "}}";
}

TEST(Tensor, NumelAndShapeString) {
  EXPECT_EQ((Tensor{{}, {1.0f}}).numel(), 1u);
  EXPECT_EQ((Tensor{{2, 3}, {}}).numel(), 6u);
  EXPECT_EQ((Tensor{{4, 0}, {}}).numel(), 0u);
  EXPECT_EQ((Tensor{{2, 3}, {}}).shape_string(), "(2, 3)");
  EXPECT_EQ((Tensor{{3}, {}}).shape_string(), "(3,)");
  EXPECT_EQ((Tensor{{}, {}}).shape_string(), "()");
}

// farnn compare's rule: max|a-b| <= rtol * max|b|, so against an all-zero b
// any difference fails, and equal values (infinities, NaN) do not.
TEST(Tensor, MaxRelativeError) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_DOUBLE_EQ(max_relative_error(Tensor{{2}, {1.0f, 2.5f}}, Tensor{{2}, {1.0f, 2.0f}}), 0.25);
  EXPECT_EQ(max_relative_error(Tensor{{2}, {1e-6f, 0.0f}}, Tensor{{2}, {0.0f, 0.0f}}), inf);
  EXPECT_EQ(max_relative_error(Tensor{{2}, {0.0f, 0.0f}}, Tensor{{2}, {0.0f, -0.0f}}), 0.0);
  EXPECT_EQ(max_relative_error(Tensor{{3}, {inf, nan, 1.0f}}, Tensor{{3}, {inf, nan, 1.0f}}), 0.0);
  EXPECT_EQ(max_relative_error(Tensor{{2}, {nan, 1.0f}}, Tensor{{2}, {2.0f, 1.0f}}), inf);
  EXPECT_EQ(max_relative_error(Tensor{{2}, {1.0f, 1.0f}}, Tensor{{2}, {inf, 1.0f}}), inf);
  EXPECT_THROW(max_relative_error(Tensor{{1}, {1.0f}}, Tensor{{2}, {1.0f, 1.0f}}), std::invalid_argument);
}

TEST(Safetensors, RoundTripIsBitExact) {
  TempDir dir;
  const TensorList tensors = {{"lstm.weight", special_tensor()},
                              {"empty", {{0, 3}, {}}},
                              {"bias", {{5}, {1, -2, 3, -4, 5}}},
                              {"step", {{}, {42.0f}}},
                              {"also_empty", {{4, 0, 2}, {}}}};
  const std::string path = dir.file("m.safetensors");
  write_safetensors(path, tensors, {{"format", "pt"}, {"note", "h\xc3\xa9llo"}});
  const TensorList back = read_safetensors(path);
  ASSERT_EQ(back.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(back[i].first, tensors[i].first);
    EXPECT_TRUE(same_bits(back[i].second, tensors[i].second)) << tensors[i].first;
  }
  EXPECT_EQ(dir.entries(), 1u);  // no temporary file left behind

  const std::string bytes = serialize_safetensors(tensors);
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u) << "header is padded so the data starts 8-byte aligned";
  EXPECT_EQ(bytes.size(), 8 + n + (24 + 5 + 1) * 4);
  EXPECT_TRUE(parse_safetensors(serialize_safetensors({}), "e").empty());
}

TEST(Safetensors, ParsesHandBuiltFile) {
  // Header order a, b; data order b, a; the result is in data (file) order.
  const std::string json = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                           R"("__metadata__":{"format":"pt"},)"
                           R"( "b" : {"shape":[1,2],"data_offsets":[0,8],"dtype":"F32"}})";
  const std::string data =
      "\x00\x00\x40\x40"
      "\x00\x00\x80\xbf"  // b = [[3, -1]]
      "\x00\x00\x80\x3e"
      "\x00\x00\x00\x3f"s;  // a = [0.25, 0.5]
  const TensorList list = parse_safetensors(le(json.size(), 8) + json + data, kSt);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].first, "b");
  EXPECT_EQ(list[0].second.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(list[0].second.data, (std::vector<float>{3.0f, -1.0f}));
  EXPECT_EQ(list[1].first, "a");
  EXPECT_EQ(list[1].second.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(list[1].second.data, (std::vector<float>{0.25f, 0.5f}));
}

TEST(Safetensors, WriterProducesReferenceLayout) {
  const std::string json = R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  ASSERT_EQ(json.size(), 54u);
  const std::string expected = le(56, 8) + json + "  " + "\x00\x00\x80\x3f"s;
  EXPECT_EQ(serialize_safetensors({{"x", {{1}, {1.0f}}}}), expected);
  const std::string meta = serialize_safetensors({{"x", {{1}, {1.0f}}}}, {{"k", "v"}});
  EXPECT_EQ(meta.substr(8, 30), R"({"__metadata__":{"k":"v"},"x":)");
}

TEST(SafetensorsRejects, FileShorterThanLengthField) {
  st_rejects("", {"0 bytes, too short for the 8-byte header length"});
  st_rejects("\x10\x00\x00"s, {"too short"});
}

TEST(SafetensorsRejects, HeaderLengthBeyondFile) {
  st_rejects(le(100, 8) + "{}", {"header length 100 is larger than the file (2 bytes"});
}

TEST(SafetensorsRejects, HeaderLengthOverLimit) {
  st_rejects(le(100'000'001, 8) + "{}",
             {"header length 100000001 exceeds the limit of 100000000 bytes"});
  st_rejects(le(~0ull, 8) + "{}", {"exceeds the limit"});
}

TEST(SafetensorsRejects, HeaderNotJson) {
  st_rejects(st_file(R"({"a":)", 0), {"header is not valid JSON"});
  st_rejects(st_file("{} x", 0), {"header is not valid JSON"});
  st_rejects(st_file("{\"\xff\":1}", 0), {"header is not valid JSON"});  // not UTF-8
}

TEST(SafetensorsRejects, HeaderNotObject) {
  st_rejects(st_file("[1, 2]", 0), {"header is not a JSON object"});
  st_rejects(st_file("\"F32\"", 0), {"header is not a JSON object"});
}

TEST(SafetensorsRejects, EntryNotObject) {
  st_rejects(st_file(R"({"a":[1]})", 0), {"tensor 'a': entry is not a JSON object"});
}

TEST(SafetensorsRejects, MissingField) {
  st_rejects(st_file(st_entry(R"("dtype":"F32","shape":[1])"), 4),
             {"tensor 'a': missing field 'data_offsets'"});
  st_rejects(st_file(st_entry(R"("shape":[1],"data_offsets":[0,4])"), 4),
             {"missing field 'dtype'"});
}

TEST(SafetensorsRejects, UnknownField) {
  st_rejects(st_file(st_entry(R"("dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":0)"), 4),
             {"tensor 'a': unknown field 'extra'"});
}

TEST(SafetensorsRejects, DtypeNotF32) {
  st_rejects(st_file(st_entry(R"("dtype":"F64","shape":[1],"data_offsets":[0,8])"), 8),
             {"tensor 'a': dtype 'F64' is not supported, expected 'F32'"});
  st_rejects(st_file(st_entry(R"("dtype":"BF16","shape":[2],"data_offsets":[0,4])"), 4),
             {"'BF16'"});
  st_rejects(st_file(st_entry(R"("dtype":32,"shape":[1],"data_offsets":[0,4])"), 4),
             {"dtype must be a string"});
}

TEST(SafetensorsRejects, ShapeNotListOfNonNegativeIntegers) {
  for (const char* shape : {"-1", "1.5", "\"2\"", "true", "null", "[1]"}) {
    st_rejects(
        st_file(st_entry(R"("dtype":"F32","shape":[)"s + shape + R"(],"data_offsets":[0,4])"), 4),
        {"tensor 'a': shape must be a list of non-negative integers"});
  }
  st_rejects(st_file(st_entry(R"("dtype":"F32","shape":4,"data_offsets":[0,16])"), 16),
             {"shape must be a list of non-negative integers"});
}

TEST(SafetensorsRejects, ElementCountOverflow) {
  st_rejects(
      st_file(st_entry(R"("dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0])"), 0),
      {"tensor 'a': element count of shape [4294967296,4294967296] overflows"});
  st_rejects(
      st_file(st_entry(R"("dtype":"F32","shape":[2305843009213693952],"data_offsets":[0,0])"), 0),
      {"overflows"});  // 2^61 elements: 2^63 bytes
  st_rejects(
      st_file(st_entry(R"("dtype":"F32","shape":[0,9223372036854775808],"data_offsets":[0,0])"), 0),
      {"overflows"});  // a dimension beyond int64_t
}

TEST(SafetensorsRejects, DataOffsetsNotTwoIntegers) {
  for (const char* offsets : {"[4]", "[0,4,8]", "[-4,0]", "[0.0,4]", "\"0-4\"", "{}"}) {
    st_rejects(st_file(st_entry(R"("dtype":"F32","shape":[1],"data_offsets":)"s + offsets), 4),
               {"tensor 'a': data_offsets must be two non-negative integers [begin, end]"});
  }
}

TEST(SafetensorsRejects, DataOffsetsBeginAfterEnd) {
  st_rejects(st_file(st_entry(R"("dtype":"F32","shape":[0],"data_offsets":[8,4])"), 8),
             {"tensor 'a': data_offsets [8,4] have begin > end"});
}

TEST(SafetensorsRejects, DataOffsetsBeyondBuffer) {
  st_rejects(st_file(st_entry(R"("dtype":"F32","shape":[2],"data_offsets":[0,8])"), 4),
             {"tensor 'a': data_offsets end 8 is beyond the end of the data buffer (4 bytes)"});
}

TEST(SafetensorsRejects, SizeDoesNotMatchShape) {
  st_rejects(st_file(st_entry(R"("dtype":"F32","shape":[2,3],"data_offsets":[0,20])"), 20),
             {"tensor 'a': data_offsets [0,20] span 20 bytes, shape [2,3] of F32 needs 24"});
}

TEST(SafetensorsRejects, OverlappingTensors) {
  const std::string json = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                           R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  st_rejects(st_file(json, 12), {"tensor 'b' [4, 12) overlaps tensor 'a' [0, 8)"});
}

TEST(SafetensorsRejects, HoleInDataBuffer) {
  const std::string json = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                           R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})";
  st_rejects(st_file(json, 12), {"data buffer bytes [4, 8) are not covered by any tensor"});
}

TEST(SafetensorsRejects, TrailingBytes) {
  st_rejects(st_file(st_entry(R"("dtype":"F32","shape":[1],"data_offsets":[0,4])"), 8),
             {"data buffer bytes [4, 8) are not covered by any tensor (trailing bytes"});
  st_rejects(st_file("{}", 4), {"[0, 4) are not covered"});
}

TEST(SafetensorsRejects, DuplicateKeys) {
  const std::string entry = R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  const std::string entry2 = R"({"dtype":"F32","shape":[1],"data_offsets":[4,8]})";
  st_rejects(st_file(R"({"a":)" + entry + R"(,"a":)" + entry2 + "}", 8),
             {"header has duplicate key 'a'"});
  st_rejects(
      st_file(st_entry(R"("dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4])"), 4),
      {"duplicate key 'dtype'"});
  st_rejects(st_file(R"({"__metadata__":{"k":"1","k":"2"}})", 0), {"duplicate key 'k'"});
}

TEST(SafetensorsRejects, MetadataNotStringToString) {
  st_rejects(st_file(R"({"__metadata__":{"epoch":3}})", 0),
             {"__metadata__ value of 'epoch' must be a string, got 3"});
  st_rejects(st_file(R"({"__metadata__":["a"]})", 0),
             {"__metadata__ must be an object of string -> string"});
}

TEST(SafetensorsRejects, EmptyTensorName) {
  st_rejects(st_file(R"({"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4),
             {"a tensor name is empty"});
}

TEST(SafetensorsRejects, UnreadableFile) {
  TempDir dir;
  const std::string missing = dir.file("missing.safetensors");
  expect_format_error([&] { read_safetensors(missing); }, missing, {"cannot open: No such file"});
  expect_format_error([&] { read_safetensors(dir.file("")); }, dir.file(""),
                      {"cannot read: Is a directory"});
}

TEST(FindTensor, FoundOrNamedInTheError) {
  const TensorList list = {{"w", {{1}, {2.0f}}}, {"b", {{}, {3.0f}}}};
  EXPECT_EQ(find_tensor(list, "b", kSt).data[0], 3.0f);
  expect_format_error([&] { find_tensor(list, "u", kSt); }, kSt,
                      {"no tensor named 'u' (it has 'w', 'b')"});
}

// ------------------------------------------------------------------------ npy

constexpr const char* kNpy = "x.npy";

// A .npy file built by hand: the preamble for version major.0, `dict` padded
// with spaces so the preamble is a multiple of 64 bytes, '\n', then `data`.
std::string npy_file(const std::string& dict, const std::string& data = "", int major = 1) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64) header += ' ';
  header += '\n';
  return "\x93NUMPY"s + static_cast<char>(major) + '\0' + le(header.size(), prefix - 8) + header +
         data;
}
// The usual header for a float32 C-order array of the given shape tuple.
std::string npy_dict(const std::string& shape, const std::string& descr = "<f4",
                     const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}
void npy_rejects(const std::string& bytes, std::initializer_list<std::string> parts) {
  expect_format_error([&] { parse_npy(bytes, kNpy); }, kNpy, parts);
}

TEST(Npy, RoundTripIsBitExact) {
  TempDir dir;
  const std::vector<Tensor> tensors = {
      special_tensor(), {{}, {-0.0f}}, {{0}, {}}, {{3, 0, 2}, {}}, {{7}, {1, 2, 3, 4, 5, 6, 7}}};
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string path = dir.file(std::to_string(i) + ".npy");
    write_npy(path, tensors[i]);
    EXPECT_TRUE(same_bits(read_npy(path), tensors[i])) << tensors[i].shape_string();
    const std::string bytes = serialize_npy(tensors[i]);
    const size_t preamble = 10 + (uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8);
    EXPECT_EQ(bytes.substr(6, 2), "\x01\x00"s);
    EXPECT_EQ(preamble % 64, 0u);
    EXPECT_EQ(bytes[preamble - 1], '\n');
  }
  EXPECT_EQ(dir.entries(), tensors.size());  // no temporary files left behind
}

TEST(Npy, HugeHeaderUsesVersion2) {
  const Tensor t{std::vector<int64_t>(22000, 1), {5.0f}};  // header over 64 KiB
  const std::string bytes = serialize_npy(t);
  EXPECT_EQ(bytes.substr(6, 2), "\x02\x00"s);
  EXPECT_TRUE(same_bits(parse_npy(bytes, kNpy), t));
}

TEST(Npy, ParsesNumpyBytes) {
  // np.save("x.npy", np.array([[1, 2, -0.5], [0, inf, nan]], np.float32)), numpy 1.24:
  // header length 118, preamble 128 bytes.
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string file = "\x93NUMPY\x01\x00\x76\x00"s + dict +
                           std::string(117 - dict.size(), ' ') + "\n" +
                           "\x00\x00\x80\x3f"
                           "\x00\x00\x00\x40"
                           "\x00\x00\x00\xbf"
                           "\x00\x00\x00\x00"
                           "\x00\x00\x80\x7f"
                           "\x00\x00\xc0\x7f"s;
  ASSERT_EQ(file.size(), 128u + 24u);
  const Tensor t = parse_npy(file, kNpy);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(t.data.size(), 6u);
  const uint32_t want[] = {0x3F800000, 0x40000000, 0xBF000000, 0x00000000, 0x7F800000, 0x7FC00000};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(std::bit_cast<uint32_t>(t.data[i]), want[i]) << i;
  EXPECT_EQ(serialize_npy(t), file) << "the writer produces numpy's bytes";
}

TEST(Npy, ParsesOtherVersionsAndSpellings) {
  const std::string one = "\x00\x00\x80\x3f"s;
  Tensor t = parse_npy(
      npy_file(R"({"shape": (1,), "fortran_order": False, "descr": "<f4"})", one, 2), kNpy);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(t.data, (std::vector<float>{1.0f}));
  t = parse_npy(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': ()}", one, 3), kNpy);
  EXPECT_TRUE(t.shape.empty());
  EXPECT_EQ(t.data, (std::vector<float>{1.0f}));
  t = parse_npy(npy_file("{'descr':'<f4','fortran_order':False,'shape':(1,1,)}", one), kNpy);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 1}));
  t = parse_npy(npy_file(npy_dict("(0, 4)")), kNpy);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(t.data.empty());
}

TEST(NpyRejects, BadMagic) {
  npy_rejects("\x93NUMPX\x01\x00\x00\x00"s, {"not a .npy file (bad magic"});
  npy_rejects("PK\x03\x04 a zip file"s, {"bad magic"});
}

TEST(NpyRejects, FileTooShort) {
  npy_rejects("", {"file is 0 bytes, too short for the .npy preamble"});
  npy_rejects("\x93NUMPY\x01\x00\x10"s, {"too short"});
  npy_rejects("\x93NUMPY\x02\x00\x10\x00"s, {"too short"});
}

TEST(NpyRejects, UnknownVersion) {
  npy_rejects("\x93NUMPY\x04\x00\x10\x00\x00\x00"s, {"unsupported .npy format version 4.0"});
  npy_rejects("\x93NUMPY\x01\x01\x10\x00"s, {"version 1.1"});
  npy_rejects("\x93NUMPY\x00\x00\x10\x00"s, {"version 0.0"});
}

TEST(NpyRejects, HeaderLongerThanFile) {
  const std::string file = npy_file(npy_dict("(1,)"));
  npy_rejects(file.substr(0, 100), {"header length 118 is larger than the file (90 bytes"});
}

TEST(NpyRejects, HeaderWithoutNewline) {
  std::string file = npy_file(npy_dict("()"), "\x00\x00\x80\x3f"s);
  file[127] = ' ';
  npy_rejects(file, {"header does not end with a newline"});
}

TEST(NpyRejects, HeaderSyntax) {
  npy_rejects(npy_file("{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}"),
              {"header: expected '}'"});
  npy_rejects(npy_file("{'descr' '<f4'}"), {"header: expected ':'"});
  npy_rejects(npy_file("{'descr': '<f4, 'fortran_order': False, 'shape': ()}"), {"header: "});
  npy_rejects(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (), } x"),
              {"after the dict"});
  npy_rejects(npy_file("'descr'"), {"header: expected '{'"});
  npy_rejects(npy_file("{'descr': '<f4"), {"header: unterminated string"});
  npy_rejects(npy_file(npy_dict("()", "<f4", "0")), {"'fortran_order' must be True or False"});
  npy_rejects(npy_file(npy_dict("[2]")), {"'shape' must be a tuple of non-negative integers"});
  npy_rejects(npy_file(npy_dict("(2)")), {"'shape' (2) is not a tuple"});
  npy_rejects(npy_file("{'descr': \"<f4\\n\", 'fortran_order': False, 'shape': ()}"), {"escapes"});
}

TEST(NpyRejects, MissingKey) {
  npy_rejects(npy_file("{'descr': '<f4', 'shape': (1,), }", "\0\0\0\0"s),
              {"header: missing key 'fortran_order'"});
  npy_rejects(npy_file("{}"), {"missing key 'descr'"});
}

TEST(NpyRejects, UnknownKey) {
  npy_rejects(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}"),
              {"header: unknown key 'extra'"});
}

TEST(NpyRejects, DuplicateKey) {
  npy_rejects(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'shape': (1,)}"),
              {"header: duplicate key 'shape'"});
}

TEST(NpyRejects, DtypeNotFloat32) {
  npy_rejects(npy_file(npy_dict("(1,)", "<f8"), std::string(8, '\0')),
              {"dtype '<f8' is not supported, expected '<f4' (float32)"});
  npy_rejects(npy_file(npy_dict("(1,)", "|f4"), std::string(4, '\0')),
              {"dtype '|f4' is not supported"});
  npy_rejects(npy_file(npy_dict("(1,)", "<i4"), std::string(4, '\0')),
              {"dtype '<i4' is not supported"});
}

// Lengths and class indices (kWholeNumbers) may come as integers: each
// little-endian or one-byte integer dtype is read as its float value, within
// +-2^24 (float32 holds those exactly); float32 still reads as before.
TEST(Npy, WholeNumbersFromIntegerDtypes) {
  const auto whole = [](const std::string& bytes) { return parse_npy(bytes, kNpy, NpyValues::kWholeNumbers); };
  const struct {
    const char* descr;
    size_t bytes;
  } dtypes[] = {{"|i1", 1}, {"|u1", 1}, {"<i2", 2}, {"<u2", 2}, {"<i4", 4}, {"<u4", 4}, {"<i8", 8}, {"<u8", 8}};
  for (const auto& d : dtypes) {
    const Tensor t = whole(npy_file(npy_dict("(3,)", d.descr), le(0, d.bytes) + le(7, d.bytes) + le(100, d.bytes)));
    EXPECT_EQ(t.shape, std::vector<int64_t>{3}) << d.descr;
    EXPECT_EQ(t.data, (std::vector<float>{0, 7, 100})) << d.descr;
  }
  // Sign extension: -5 in each signed width.
  EXPECT_EQ(whole(npy_file(npy_dict("(1,)", "|i1"), le(0xfb, 1))).data, std::vector<float>{-5});
  EXPECT_EQ(whole(npy_file(npy_dict("(1,)", "<i2"), le(0xfffb, 2))).data, std::vector<float>{-5});
  EXPECT_EQ(whole(npy_file(npy_dict("(1,)", "<i4"), le(0xfffffffb, 4))).data, std::vector<float>{-5});
  EXPECT_EQ(whole(npy_file(npy_dict("(1,)", "<i8"), le(~uint64_t{4}, 8))).data, std::vector<float>{-5});
  // +-2^24 are exact; one more is not; a u8 past 2^63 is not negative.
  EXPECT_EQ(whole(npy_file(npy_dict("(1,)", "<i4"), le(1u << 24, 4))).data, std::vector<float>{16777216.0f});
  expect_format_error([&] { whole(npy_file(npy_dict("(2,)", "<i4"), le(1, 4) + le((1u << 24) + 1, 4))); }, kNpy,
                      {"element 1 (16777217) is beyond 2^24"});
  EXPECT_EQ(whole(npy_file(npy_dict("(1,)", "<i8"), le(~uint64_t{0} << 24, 8))).data, std::vector<float>{-16777216.0f});
  expect_format_error([&] { whole(npy_file(npy_dict("(1,)", "<i8"), le((~uint64_t{0} << 24) - 1, 8))); }, kNpy,
                      {"element 0 (-16777217) is beyond 2^24"});
  expect_format_error([&] { whole(npy_file(npy_dict("(1,)", "<u8"), le(uint64_t{1} << 63, 8))); }, kNpy,
                      {"element 0 (9223372036854775808) is beyond 2^24"});
  // Sizes follow the dtype; float32 is unchanged; others are still refused.
  expect_format_error([&] { whole(npy_file(npy_dict("(2,)", "<i8"), std::string(12, '\0'))); }, kNpy,
                      {"truncated: shape (2,) expected 16 bytes of data, file has 12"});
  EXPECT_EQ(whole(npy_file(npy_dict("(1,)"), le(0x40400000, 4))).data, std::vector<float>{3.0f});
  expect_format_error([&] { whole(npy_file(npy_dict("(1,)", "<f8"), std::string(8, '\0'))); }, kNpy,
                      {"dtype '<f8' is not supported, expected '<f4' (float32) or a little-endian integer"});
  expect_format_error([&] { whole(npy_file(npy_dict("(1,)", ">i4"), std::string(4, '\0'))); }, kNpy,
                      {"dtype '>i4' is not supported"});
}

TEST(NpyRejects, BigEndian) {
  npy_rejects(npy_file(npy_dict("(1,)", ">f4"), std::string(4, '\0')),
              {"dtype '>f4' is big-endian, expected '<f4'"});
}

TEST(NpyRejects, FortranOrder) {
  npy_rejects(npy_file(npy_dict("(2, 2)", "<f4", "True"), std::string(16, '\0')),
              {"Fortran order is not supported, save with C order"});
}

TEST(NpyRejects, NegativeDimension) {
  npy_rejects(npy_file(npy_dict("(2, -3)")), {"header: 'shape' dimension -3 is negative"});
}

TEST(NpyRejects, NonIntegerDimension) {
  for (const char* shape : {"(2.5,)", "(2, 3L)", "(None,)", "('2',)", "(2, 3e2)", "(,)"}) {
    npy_rejects(npy_file(npy_dict(shape)),
                {"header: 'shape' must be a tuple of non-negative integers"});
  }
}

TEST(NpyRejects, ElementCountOverflow) {
  npy_rejects(npy_file(npy_dict("(4294967296, 4294967296)")),
              {"element count of shape (4294967296, 4294967296) overflows"});
  npy_rejects(npy_file(npy_dict("(99999999999999999999,)")),
              {"dimension 99999999999999999999 is too large"});
}

TEST(NpyRejects, TruncatedData) {
  npy_rejects(npy_file(npy_dict("(2, 3)"), std::string(20, '\0')),
              {"truncated: shape (2, 3) expected 24 bytes of data, file has 20"});
}

TEST(NpyRejects, TrailingData) {
  npy_rejects(
      npy_file(npy_dict("(2, 3)"), std::string(28, '\0')),
      {"trailing bytes after the data: shape (2, 3) expected 24 bytes of data, file has 28"});
}

TEST(NpyRejects, UnreadableFile) {
  TempDir dir;
  const std::string missing = dir.file("missing.npy");
  expect_format_error([&] { read_npy(missing); }, missing, {"cannot open: No such file"});
}

// -------------------------------------------------------------------- writers

TEST(Writers, InvalidTensorsThrowAndLeaveNoFile) {
  TempDir dir;
  const std::string st = dir.file("m.safetensors"), npy = dir.file("x.npy");
  const Tensor good{{2}, {1, 2}};
  const Tensor bad_size{{2, 3}, {1, 2}}, negative{{-1}, {}}, overflow{{1LL << 40, 1LL << 40}, {}};
  const std::pair<TensorList, std::string> bad_lists[] = {
      {{{"w", bad_size}}, "tensor 'w': data has 2 elements, shape (2, 3) needs 6"},
      {{{"w", negative}}, "negative dimension"},
      {{{"w", overflow}}, "overflows"},
      {{{"w", good}, {"w", good}}, "duplicate tensor name 'w'"},
      {{{"", good}}, "name is empty"},
      {{{"__metadata__", good}}, "'__metadata__' is not a tensor name"},
      {{{"\xff", good}}, "not valid UTF-8"}};
  for (const auto& [list, phrase] : bad_lists) {
    try {
      write_safetensors(st, list);
      ADD_FAILURE() << "no exception for " << phrase;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(st + ": safetensors: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(write_safetensors(st, {{"w", good}}, {{"k", "\xc3"}}), std::invalid_argument);
  for (const Tensor& t : {bad_size, negative, overflow})
    EXPECT_THROW(write_npy(npy, t), std::invalid_argument);
  EXPECT_EQ(dir.entries(), 0u);

  // A failed write leaves an existing file as it was.
  write_npy(npy, good);
  EXPECT_THROW(write_npy(npy, bad_size), std::invalid_argument);
  EXPECT_TRUE(same_bits(read_npy(npy), good));
}

TEST(Writers, IoFailureThrowsNamingPathAndLeavesNoFile) {
  TempDir dir;
  const std::string missing_dir = dir.file("no/such/dir/x.npy");
  try {
    write_npy(missing_dir, {{}, {1.0f}});
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(missing_dir + ": cannot write", 0), 0u) << e.what();
  }
  EXPECT_THROW(write_safetensors(dir.file("no/x.safetensors"), {}), std::runtime_error);
  EXPECT_EQ(dir.entries(), 0u);

  // The rename fails (the destination is a directory): the temporary file is removed.
  const std::string taken = dir.file("taken.safetensors");
  fs::create_directory(taken);
  EXPECT_THROW(write_safetensors(taken, {{"w", {{1}, {1.0f}}}}), std::runtime_error);
  EXPECT_EQ(dir.entries(), 1u);
}

// A process stopped by SIGTERM or SIGINT in the middle of write_file_atomic
// leaves no temporary file once remove_temp_file_on_stop_signals() is in
// place. Deterministic: the temporary name is made a FIFO before the child
// writes, so the child blocks in that write with the file published (its
// 1 MiB do not fit the pipe), and the signal comes while it is there.
TEST(Writers, AStopSignalMidWriteLeavesNoTemporaryFile) {
  for (int sig : {SIGTERM, SIGINT}) {
    TempDir dir;
    const std::string out = dir.file("out.bin");
    int go[2];
    ASSERT_EQ(::pipe(go), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      remove_temp_file_on_stop_signals();
      char c;
      if (::read(go[0], &c, 1) != 1) std::_Exit(3);
      write_file_atomic(out, std::string(1 << 20, 'x'));
      std::_Exit(0);  // not reached: the write blocks until the signal
    }
    const std::string tmp = out + ".tmp." + std::to_string(child);
    ASSERT_EQ(::mkfifo(tmp.c_str(), 0600), 0);
    ASSERT_EQ(::write(go[1], "g", 1), 1);
    const int reader = ::open(tmp.c_str(), O_RDONLY);  // meets the child's open
    ASSERT_GE(reader, 0);
    pollfd pf{reader, POLLIN, 0};
    ASSERT_EQ(::poll(&pf, 1, 30000), 1) << "the child never wrote";  // it is in its write now
    ASSERT_EQ(::kill(child, sig), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ::close(reader);
    ::close(go[0]);
    ::close(go[1]);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "the signal no longer ends the process";
    EXPECT_FALSE(fs::exists(fs::symlink_status(tmp))) << strsignal(sig) << " left " << tmp;
    EXPECT_FALSE(fs::exists(out));
  }
}

// ----------------------------------------------------------------------- fuzz
// ----------------------------------------------------------------------- fuzz

// Mutates valid files and parses each result: it must either parse to tensors
// whose data size matches their shape, or throw FormatError naming the source.
class Fuzzer {
 public:
  explicit Fuzzer(uint64_t seed) : rng_(seed) {}

  // Every truncation, then `count` random mutations; length_bytes is the size
  // of the header-length field at offset length_at.
  template <class Parse>
  void run(const std::string& valid, size_t length_at, size_t length_bytes, int count,
           Parse parse) {
    for (size_t n = 0; n < valid.size(); ++n) check(valid.substr(0, n), parse);
    for (int i = 0; i < count && failures_ < 10; ++i)
      check(mutate(valid, length_at, length_bytes), parse);
  }
  size_t mutations() const { return parsed_ + rejected_ + failures_; }
  size_t parsed() const { return parsed_; }
  size_t rejected() const { return rejected_; }

 private:
  static bool consistent(const Tensor& t) {
    const auto numel = detail::checked_numel(t.shape);
    return numel && t.data.size() == *numel && t.numel() == *numel;
  }
  static bool consistent(const TensorList& list) {
    for (const auto& [name, t] : list) {
      if (!consistent(t)) return false;
    }
    // What the reader accepts, the writer writes back bit for bit.
    const TensorList again = parse_safetensors(serialize_safetensors(list), "again");
    for (size_t i = 0; i < list.size(); ++i) {
      if (again[i].first != list[i].first || !same_bits(again[i].second, list[i].second))
        return false;
    }
    return again.size() == list.size();
  }

  template <class Parse>
  void check(const std::string& bytes, Parse parse) {
    std::string problem;
    try {
      if (consistent(parse(bytes, "fuzz"))) {
        ++parsed_;
        return;
      }
      problem = "parsed, but a tensor's data does not match its shape";
    } catch (const FormatError& e) {
      if (std::string(e.what()).rfind("fuzz: ", 0) == 0) {
        ++rejected_;
        return;
      }
      problem = "FormatError without the source name: " + std::string(e.what());
    } catch (const std::exception& e) {
      problem = "unexpected exception: " + std::string(e.what());
    } catch (...) {
      problem = "unexpected non-std exception";
    }
    ++failures_;
    std::string hex;
    for (unsigned char c : bytes.substr(0, 512))
      hex += "0123456789abcdef"[c >> 4], hex += "0123456789abcdef"[c & 15];
    ADD_FAILURE() << problem << "\ninput (" << bytes.size() << " bytes): " << hex;
  }

  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  char byte() {
    static const std::string interesting = "\0\xff\x7f\x80 \n\"'{}[](),:-.019eE\\TFN"s;
    return pick(2) ? static_cast<char>(pick(256)) : interesting[pick(interesting.size())];
  }

  std::string mutate(std::string s, size_t length_at, size_t length_bytes) {
    for (size_t edits = 1 + pick(3), e = 0; e < edits; ++e) {
      switch (pick(6)) {
        case 0:  // flip a bit
          if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1 << pick(8));
          break;
        case 1:  // overwrite bytes
          for (size_t k = 1 + pick(4), at = pick(s.size() + 1); k > 0 && at < s.size(); --k)
            s[at++] = byte();
          break;
        case 2: {  // insert bytes
          const size_t at = pick(s.size() + 1);
          for (size_t k = 1 + pick(8); k > 0; --k) s.insert(s.begin() + at, byte());
          break;
        }
        case 3: {  // delete a range
          const size_t at = pick(s.size() + 1);
          s.erase(at, pick(16));
          break;
        }
        case 4: {  // duplicate a range somewhere else
          const size_t at = pick(s.size() + 1);
          s.insert(pick(s.size() + 1), s.substr(at, 1 + pick(24)));
          break;
        }
        default: {  // change the header-length field
          if (s.size() < length_at + length_bytes) break;
          uint64_t v = 0;
          std::memcpy(&v, s.data() + length_at, length_bytes);
          const uint64_t options[] = {v + 1 + pick(16), v - 1 - pick(16),     0,     ~0ull,
                                      s.size(),         s.size() - length_at, rng_()};
          v = options[pick(std::size(options))];
          std::memcpy(s.data() + length_at, &v, length_bytes);
        }
      }
    }
    return s;
  }

  std::mt19937_64 rng_;
  size_t parsed_ = 0, rejected_ = 0, failures_ = 0;
};

TEST(Fuzz, MutatedFilesParseOrThrowFormatError) {
  uint64_t seed = 20240607;
  if (const char* env = std::getenv("FARNN_FUZZ_SEED")) seed = std::strtoull(env, nullptr, 0);
  Fuzzer fuzz(seed);

  const std::string st_json = R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},)"
                              R"("a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})";
  const std::string st_files[] = {
      serialize_safetensors(
          {{"w", {{2, 3}, {1, 2, 3, 4, 5, 6}}}, {"e", {{0, 2}, {}}}, {"s", {{}, {7}}}},
          {{"format", "pt"}}),
      st_file(st_json, 12)};
  for (const std::string& f : st_files) fuzz.run(f, 0, 8, 15000, parse_safetensors);

  const std::string npy_files[] = {
      serialize_npy({{2, 3}, {1, 2, 3, 4, 5, 6}}), serialize_npy({{}, {1}}),
      npy_file(R"({"shape": (1, 1), "descr": "<f4", "fortran_order": False})", std::string(4, '\0'),
               2)};
  const auto npy_float32 = [](const std::string& bytes, const std::string& source) { return parse_npy(bytes, source); };
  for (const std::string& f : npy_files) {
    fuzz.run(f, 8, f[6] == 1 ? 2 : 4, 8000, npy_float32);
  }
  // Whole numbers: an int64 file (lengths as NumPy saves them), read as integers.
  const auto npy_whole = [](const std::string& bytes, const std::string& source) {
    return parse_npy(bytes, source, NpyValues::kWholeNumbers);
  };
  fuzz.run(npy_file(npy_dict("(3,)", "<i8"), le(3, 8) + le(2, 8) + le(1, 8)), 8, 2, 8000, npy_whole);

  std::cout << "[   FUZZ   ] seed " << seed
            << " (set FARNN_FUZZ_SEED to change): " << fuzz.mutations() << " mutated files, "
            << fuzz.parsed() << " parsed, " << fuzz.rejected() << " rejected\n";
  RecordProperty("seed", std::to_string(seed));
  EXPECT_GE(fuzz.mutations(), 20000u);
  EXPECT_GT(fuzz.parsed(), 0u);  // some mutations keep the file valid (e.g. data bytes)
}

}  // namespace
}  // namespace farnn::io
