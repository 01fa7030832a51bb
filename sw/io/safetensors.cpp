// safetensors reader and writer, float32 ("F32") only. Layout: u64 little-
// endian header length N, N bytes of JSON object (tensor name -> {dtype,
// shape, data_offsets}, plus an optional "__metadata__" string -> string
// object), then the data buffer, which the tensors must cover exactly.
// The writer pads the header with spaces to a multiple of 8 bytes, as the
// reference implementation does, so every tensor starts 8-byte aligned.
#include <algorithm>
#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "farnn/tensor_io.hpp"

namespace farnn::io {
namespace {

static_assert(std::endian::native == std::endian::little, "tensor files are little-endian");

using Json = nlohmann::ordered_json;               // keeps header order (writer; reader ties)
constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference implementation's limit

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw FormatError(source + ": " + what);
}

// Compact JSON text of a value for messages, cut short if long.
std::string brief(const Json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// nlohmann silently keeps the last of duplicate keys; a parser callback sees
// every key, so duplicates are refused here, in the top level and in entries.
Json parse_header(std::string_view text, const std::string& source) {
  std::vector<std::set<std::string>> open;  // keys seen, per open object
  auto callback = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) open.emplace_back();
    if (event == Json::parse_event_t::object_end) open.pop_back();
    if (event == Json::parse_event_t::key &&
        !open.back().insert(parsed.get<std::string>()).second) {
      fail(source, "header has duplicate key '" + parsed.get<std::string>() + "'");
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), callback);
  } catch (const Json::exception& e) {
    fail(source, std::string("header is not valid JSON: ") + e.what());
  }
}

std::optional<uint64_t> as_uint(const Json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return v.get<int64_t>();
  return std::nullopt;
}

void check_metadata(const Json& v, const std::string& source) {
  if (!v.is_object())
    fail(source, "__metadata__ must be an object of string -> string, got " + brief(v));
  for (const auto& item : v.items()) {
    if (!item.value().is_string()) {
      fail(source, "__metadata__ value of '" + item.key() + "' must be a string, got " +
                       brief(item.value()));
    }
  }
}

struct Entry {
  std::string name;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

Entry parse_entry(const std::string& name, const Json& v, uint64_t buffer_size,
                  const std::string& source) {
  const std::string where = "tensor '" + name + "': ";
  if (!v.is_object()) fail(source, where + "entry is not a JSON object, got " + brief(v));
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!v.contains(field)) fail(source, where + "missing field '" + field + "'");
  }
  for (const auto& item : v.items()) {
    if (item.key() != "dtype" && item.key() != "shape" && item.key() != "data_offsets") {
      fail(source,
           where + "unknown field '" + item.key() + "' (expected dtype, shape, data_offsets)");
    }
  }
  const Json& dtype = v.at("dtype");
  if (!dtype.is_string()) fail(source, where + "dtype must be a string, got " + brief(dtype));
  if (dtype != "F32") {
    fail(source, where + "dtype '" + dtype.get<std::string>() +
                     "' is not supported, expected 'F32' (float32)");
  }

  Entry e{name, {}, 0, 0};
  const Json& shape = v.at("shape");
  if (!shape.is_array())
    fail(source, where + "shape must be a list of non-negative integers, got " + brief(shape));
  for (const Json& d : shape) {
    const auto u = as_uint(d);
    if (!u)
      fail(source, where + "shape must be a list of non-negative integers, got " + brief(shape));
    e.shape.push_back(
        static_cast<int64_t>(*u));  // one beyond int64_t wraps negative: refused below
  }
  const auto numel = detail::checked_numel(e.shape);
  if (!numel) fail(source, where + "element count of shape " + brief(shape) + " overflows");

  const Json& offsets = v.at("data_offsets");
  std::optional<uint64_t> begin, end;
  if (offsets.is_array() && offsets.size() == 2)
    begin = as_uint(offsets[0]), end = as_uint(offsets[1]);
  if (!begin || !end) {
    fail(source, where + "data_offsets must be two non-negative integers [begin, end], got " +
                     brief(offsets));
  }
  if (*begin > *end) fail(source, where + "data_offsets " + brief(offsets) + " have begin > end");
  if (*end > buffer_size) {
    fail(source, where + "data_offsets end " + std::to_string(*end) +
                     " is beyond the end of the data buffer (" + std::to_string(buffer_size) +
                     " bytes)");
  }
  if (*end - *begin != *numel * sizeof(float)) {
    fail(source, where + "data_offsets " + brief(offsets) + " span " +
                     std::to_string(*end - *begin) + " bytes, shape " + brief(shape) +
                     " of F32 needs " + std::to_string(*numel * sizeof(float)));
  }
  e.begin = *begin, e.end = *end;
  return e;
}

std::string range(uint64_t begin, uint64_t end) {
  std::string s(1, '[');  // (not "[" + ..., which trips GCC 12's -Wrestrict)
  return s.append(std::to_string(begin)).append(", ").append(std::to_string(end)).append(")");
}

}  // namespace

TensorList parse_safetensors(std::string_view bytes, const std::string& source) {
  if (bytes.size() < 8) {
    fail(source, "file is " + std::to_string(bytes.size()) +
                     " bytes, too short for the 8-byte header length");
  }
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  if (n > kMaxHeaderBytes) {
    fail(source, "header length " + std::to_string(n) + " exceeds the limit of " +
                     std::to_string(kMaxHeaderBytes) + " bytes (not a safetensors file?)");
  }
  if (n > bytes.size() - 8) {
    fail(source, "header length " + std::to_string(n) + " is larger than the file (" +
                     std::to_string(bytes.size() - 8) + " bytes after the length field)");
  }
  const Json header = parse_header(bytes.substr(8, n), source);
  if (!header.is_object()) fail(source, "header is not a JSON object, got " + brief(header));
  const std::string_view buffer = bytes.substr(8 + n);

  std::vector<Entry> entries;
  for (const auto& item : header.items()) {
    if (item.key() == "__metadata__") {
      check_metadata(item.value(), source);
    } else if (item.key().empty()) {
      fail(source, "a tensor name is empty");
    } else {
      entries.push_back(parse_entry(item.key(), item.value(), buffer.size(), source));
    }
  }
  // File order; the buffer must be covered exactly: no overlaps, holes or trailing bytes.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  uint64_t pos = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.begin < pos) {
      const Entry& p = entries[i - 1];
      fail(source, "tensor '" + e.name + "' " + range(e.begin, e.end) + " overlaps tensor '" +
                       p.name + "' " + range(p.begin, p.end));
    }
    if (e.begin > pos) {
      fail(source,
           "data buffer bytes " + range(pos, e.begin) + " are not covered by any tensor (a hole)");
    }
    pos = e.end;
  }
  if (pos != buffer.size()) {
    fail(source, "data buffer bytes " + range(pos, buffer.size()) +
                     " are not covered by any tensor (trailing bytes after the last tensor)");
  }

  TensorList out;
  out.reserve(entries.size());
  for (Entry& e : entries) {
    Tensor t{std::move(e.shape), std::vector<float>((e.end - e.begin) / sizeof(float))};
    if (!t.data.empty()) std::memcpy(t.data.data(), buffer.data() + e.begin, e.end - e.begin);
    out.emplace_back(std::move(e.name), std::move(t));
  }
  return out;
}

TensorList read_safetensors(const std::string& path) {
  return parse_safetensors(detail::read_file(path), path);
}

std::string serialize_safetensors(const TensorList& tensors, const Metadata& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string_view> names;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name.empty()) throw std::invalid_argument("safetensors: a tensor name is empty");
    if (name == "__metadata__")
      throw std::invalid_argument("safetensors: '__metadata__' is not a tensor name");
    if (!names.insert(name).second)
      throw std::invalid_argument("safetensors: duplicate tensor name '" + name + "'");
    detail::validate_tensor(t, "safetensors: tensor '" + name + "'");
    const uint64_t bytes = t.data.size() * sizeof(float);
    Json& entry = header[name];
    entry["dtype"] = "F32";
    entry["shape"] = t.shape;
    entry["data_offsets"] = {offset, offset + bytes};
    offset += bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const Json::exception& e) {
    throw std::invalid_argument(
        std::string("safetensors: a name or metadata string is not valid UTF-8: ") + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');

  std::string out(8, '\0');
  const uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  out.reserve(8 + n + offset);
  out += text;
  for (const auto& [name, t] : tensors) {
    out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
  }
  return out;
}

void write_safetensors(const std::string& path, const TensorList& tensors,
                       const Metadata& metadata) {
  std::string bytes;
  try {
    bytes = serialize_safetensors(tensors, metadata);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
  write_file_atomic(path, bytes);
}

}  // namespace farnn::io
