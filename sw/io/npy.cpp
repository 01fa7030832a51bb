// NumPy .npy reader and writer for float32 ('<f4') arrays in C order (the
// reader also takes integer arrays of whole numbers where asked).
// Layout: "\x93NUMPY", version (major, minor), header length (u16 LE for 1.0,
// u32 LE for 2.0 / 3.0), header text, data. The header is a Python dict
// literal such as "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
// padded with spaces and ended by '\n'; HeaderParser reads exactly that form
// (keys in any order, ' or " quotes, optional trailing commas) and nothing else.
#include <bit>
#include <cctype>
#include <cstring>

#include "farnn/tensor_io.hpp"

namespace farnn::io {
namespace {

static_assert(std::endian::native == std::endian::little, "tensor files are little-endian");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kAlign = 64;  // numpy pads the preamble to a multiple of 64 bytes

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw FormatError(source + ": " + what);
}

// Bytes for a message: non-printable ones as \xNN, cut short if long.
std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s.substr(0, 40)) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      const char hex[] = "0123456789abcdef";
      out += {'\\', 'x', hex[c >> 4], hex[c & 15]};
    }
  }
  return s.size() > 40 ? out + "..." : out;
}

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Header parse() {
    Header h;
    bool seen[3] = {};
    expect('{');
    while (!accept('}')) {
      const std::string key = string_literal("a key");
      expect(':');
      int k = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
      if (k < 0)
        fail("unknown key '" + printable(key) + "' (expected 'descr', 'fortran_order', 'shape')");
      if (seen[k]) fail("duplicate key '" + key + "'");
      seen[k] = true;
      if (k == 0) h.descr = string_literal("'descr'");
      if (k == 1) h.fortran_order = bool_literal();
      if (k == 2) h.shape = shape_tuple();
      if (!accept(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail("unexpected " + found() + " after the dict");
    for (int k = 0; k < 3; ++k) {
      if (!seen[k])
        fail(std::string("missing key '") +
             (k == 0   ? "descr"
              : k == 1 ? "fortran_order"
                       : "shape") +
             "'");
    }
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError(source_ + ": header: " + what);
  }
  std::string found() const {
    if (pos_ == text_.size()) return "end of header";
    std::string s(1, '\'');  // (not "'" + ..., which trips GCC 12's -Wrestrict)
    return s.append(printable(text_.substr(pos_, 12))).append(1, '\'');
  }
  std::string at() const { return " at offset " + std::to_string(pos_) + ", found " + found(); }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'" + at());
  }

  std::string string_literal(const std::string& what) {
    skip_space();
    const char quote = pos_ < text_.size() ? text_[pos_] : '\0';
    if (quote != '\'' && quote != '"') fail("expected a quoted string for " + what + at());
    const size_t begin = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      const unsigned char c = text_[pos_];
      if (c == '\\' || c < 0x20)
        fail("escapes and control characters are not supported in strings" + at());
      ++pos_;
    }
    if (pos_ == text_.size()) fail("unterminated string");
    return std::string(text_.substr(begin, pos_++ - begin));
  }

  bool bool_literal() {
    skip_space();
    for (bool value : {true, false}) {
      const std::string_view word = value ? "True" : "False";
      if (text_.substr(pos_, word.size()) == word) return pos_ += word.size(), value;
    }
    fail("'fortran_order' must be True or False" + at());
  }

  std::vector<int64_t> shape_tuple() {
    if (!accept('(')) fail("'shape' must be a tuple of non-negative integers" + at());
    std::vector<int64_t> dims;
    if (accept(')')) return dims;
    for (;;) {
      dims.push_back(dimension());
      if (accept(',')) {
        if (accept(')')) break;
        continue;
      }
      if (dims.size() == 1 && accept(')'))
        fail("'shape' (" + std::to_string(dims[0]) +
             ") is not a tuple, a 1-D shape is written (n,)");
      expect(')');
      break;
    }
    return dims;
  }

  int64_t dimension() {
    const bool negative = accept('-');
    skip_space();
    const size_t begin = pos_;
    uint64_t v = 0;
    bool too_large = false;
    for (; pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; ++pos_) {
      too_large = too_large || __builtin_mul_overflow(v, 10u, &v) ||
                  __builtin_add_overflow(v, text_[pos_] - '0', &v) || v > uint64_t{INT64_MAX};
    }
    if (too_large)
      fail("'shape' dimension " + printable(text_.substr(begin, pos_ - begin)) + " is too large");
    const char next = pos_ < text_.size() ? text_[pos_] : ' ';
    if (pos_ == begin || next == '.' || std::isalnum(static_cast<unsigned char>(next))) {
      pos_ = begin;
      fail("'shape' must be a tuple of non-negative integers" + at());
    }
    if (negative && v != 0) fail("'shape' dimension -" + std::to_string(v) + " is negative");
    return static_cast<int64_t>(v);
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
};

struct IntegerDtype {
  const char* descr;
  size_t bytes;
  bool is_signed;
};
constexpr IntegerDtype kIntegerDtypes[] = {{"|i1", 1, true}, {"|u1", 1, false}, {"<i2", 2, true}, {"<u2", 2, false},
                                           {"<i4", 4, true}, {"<u4", 4, false}, {"<i8", 8, true}, {"<u8", 8, false}};
constexpr int64_t kExactInFloat = int64_t{1} << 24;

}  // namespace

Tensor parse_npy(std::string_view bytes, const std::string& source, NpyValues values) {
  if (bytes.substr(0, kMagic.size()) != kMagic.substr(0, bytes.size())) {
    fail(source, "not a .npy file (bad magic '" + printable(bytes.substr(0, kMagic.size())) +
                     "', expected '\\x93NUMPY')");
  }
  if (bytes.size() < 10) {
    fail(source,
         "file is " + std::to_string(bytes.size()) + " bytes, too short for the .npy preamble");
  }
  const int major = static_cast<unsigned char>(bytes[6]),
            minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    fail(source, "unsupported .npy format version " + std::to_string(major) + "." +
                     std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  }
  const size_t length_bytes = major == 1 ? 2 : 4, prefix = 8 + length_bytes;
  if (bytes.size() < prefix) {
    fail(source,
         "file is " + std::to_string(bytes.size()) + " bytes, too short for the .npy preamble");
  }
  uint32_t header_length = 0;
  std::memcpy(&header_length, bytes.data() + 8, length_bytes);
  if (header_length > bytes.size() - prefix) {
    fail(source, "header length " + std::to_string(header_length) + " is larger than the file (" +
                     std::to_string(bytes.size() - prefix) + " bytes after the preamble)");
  }
  const std::string_view text = bytes.substr(prefix, header_length);
  if (text.empty() || text.back() != '\n') fail(source, "header does not end with a newline");
  const Header h = HeaderParser(text.substr(0, text.size() - 1), source).parse();

  // Whole numbers (lengths, class indices) may also come as the integer
  // dtypes NumPy and PyTorch save them in: little-endian or one byte.
  const IntegerDtype* integer = nullptr;
  if (values == NpyValues::kWholeNumbers) {
    for (const IntegerDtype& d : kIntegerDtypes) {
      if (h.descr == d.descr) integer = &d;
    }
  }
  if (h.descr == ">f4") {
    fail(source, "dtype '>f4' is big-endian, expected '<f4' (float32 little-endian)");
  }
  if (h.descr != "<f4" && !integer) {
    fail(source, "dtype '" + printable(h.descr) + "' is not supported, expected '<f4' (float32)" +
                     (values == NpyValues::kWholeNumbers ? " or a little-endian integer ('<i8', '<i4', ...)" : ""));
  }
  if (h.fortran_order) fail(source, "Fortran order is not supported, save with C order");
  Tensor t{h.shape, {}};
  const auto numel = detail::checked_numel(t.shape);
  if (!numel) fail(source, "element count of shape " + t.shape_string() + " overflows");

  const std::string_view data = bytes.substr(prefix + header_length);
  const size_t word = integer ? integer->bytes : sizeof(float);
  if (*numel > UINT64_MAX / word) fail(source, "element count of shape " + t.shape_string() + " overflows");
  const uint64_t expected = *numel * word;
  const std::string sizes = "shape " + t.shape_string() + " expected " + std::to_string(expected) +
                            " bytes of data, file has " + std::to_string(data.size());
  if (data.size() < expected) fail(source, "truncated: " + sizes);
  if (data.size() > expected) fail(source, "trailing bytes after the data: " + sizes);
  t.data.resize(*numel);
  if (!integer) {
    if (expected) std::memcpy(t.data.data(), data.data(), expected);
    return t;
  }
  for (size_t i = 0; i < t.data.size(); ++i) {
    uint64_t raw = 0;
    std::memcpy(&raw, data.data() + i * word, word);  // little-endian host
    int64_t v = static_cast<int64_t>(raw);
    if (integer->is_signed && word < 8 && (raw >> (8 * word - 1)) != 0) v -= int64_t{1} << (8 * word);
    const bool too_big = integer->is_signed || word < 8 ? (v > kExactInFloat || v < -kExactInFloat)
                                                        : raw > static_cast<uint64_t>(kExactInFloat);
    if (too_big) {
      fail(source, "element " + std::to_string(i) + " (" +
                       (integer->is_signed ? std::to_string(v) : std::to_string(raw)) +
                       ") is beyond 2^24, which float32 does not hold exactly");
    }
    t.data[i] = static_cast<float>(v);
  }
  return t;
}

Tensor read_npy(const std::string& path, NpyValues values) {
  return parse_npy(detail::read_file(path), path, values);
}

std::string serialize_npy(const Tensor& t) {
  detail::validate_tensor(t, "npy");
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + t.shape_string() + ", }";
  // Version 1.0 unless the header length does not fit in its u16 field.
  size_t prefix = 10;
  auto padded = [&] { return (prefix + header.size() + 1 + kAlign - 1) / kAlign * kAlign; };
  if (padded() - prefix > 0xFFFF) prefix = 12;
  const uint32_t header_length = static_cast<uint32_t>(padded() - prefix);
  header.append(header_length - header.size() - 1, ' ') += '\n';

  std::string out(kMagic);
  out += {static_cast<char>(prefix == 10 ? 1 : 2), '\0'};
  out.append(reinterpret_cast<const char*>(&header_length), prefix - 8);
  out += header;
  out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
  return out;
}

void write_npy(const std::string& path, const Tensor& t) {
  std::string bytes;
  try {
    bytes = serialize_npy(t);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
  write_file_atomic(path, bytes);
}

}  // namespace farnn::io
