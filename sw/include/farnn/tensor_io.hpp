// Float32 tensor files: safetensors (weights and checkpoints that PyTorch's
// safetensors loader reads) and NumPy .npy (inputs and outputs).
// Readers accept only well-formed little-endian float32 files; anything else
// throws FormatError, whose message starts with the source name ("<path>: ")
// and says what is wrong. Writers validate the tensors (std::invalid_argument)
// and replace the destination atomically: they write "<path>.tmp.<pid>" and
// rename it, so a failed write never leaves a partial file at <path>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace farnn::io {

struct Tensor {
  std::vector<int64_t> shape;        // row-major (C order), empty for a scalar
  std::vector<float> data;           // numel() elements
  size_t numel() const;              // product of shape, 1 for a scalar
  std::string shape_string() const;  // as Python prints it: "(2, 3)", "(3,)", "()"
};

class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using TensorList = std::vector<std::pair<std::string, Tensor>>;  // ordered
using Metadata = std::map<std::string, std::string>;

// safetensors, dtype F32 only. The reader returns the tensors in file (data
// offset) order; it validates "__metadata__" (string -> string) but does not
// return it. Duplicate JSON keys, in any object of the header, are refused.
TensorList parse_safetensors(std::string_view bytes, const std::string& source);
TensorList read_safetensors(const std::string& path);
std::string serialize_safetensors(const TensorList& tensors, const Metadata& metadata = {});
void write_safetensors(const std::string& path, const TensorList& tensors,
                       const Metadata& metadata = {});

// .npy, dtype '<f4' in C order. The reader accepts format versions 1.0, 2.0
// and 3.0; the writer writes 1.0 (2.0 only when the header needs it).
// kWholeNumbers (lengths, class indices) also takes the integer dtypes
// ('|i1', '|u1', '<i2' ... '<u8'), each value within +-2^24 (float32 holds
// those exactly), returned as float.
enum class NpyValues { kFloat32, kWholeNumbers };
Tensor parse_npy(std::string_view bytes, const std::string& source, NpyValues values = NpyValues::kFloat32);
Tensor read_npy(const std::string& path, NpyValues values = NpyValues::kFloat32);
std::string serialize_npy(const Tensor& t);
void write_npy(const std::string& path, const Tensor& t);

// The tensor called `name`, or FormatError naming `source`, `name` and the
// names that are there.
const Tensor& find_tensor(const TensorList& list, const std::string& name,
                          const std::string& source);

// max|a - b| / max|b| over two tensors of one size, max|b| over b's finite
// values. Equal values (equal infinities, NaN against NaN) differ by 0; any
// other difference is infinity where max|b| is 0 and where it is NaN
// (a NaN or an infinity against a number). std::invalid_argument on a size mismatch.
double max_relative_error(const Tensor& a, const Tensor& b);

// Any output file, whole or not at all: writes "<path>.tmp.<pid>" and renames
// it to path; std::runtime_error naming path on failure, with the temporary
// file removed.
void write_file_atomic(const std::string& path, std::string_view bytes);
// Installs SIGINT and SIGTERM handlers that remove the temporary file
// write_file_atomic is writing, if any, then end the process as the signal
// would have: a program stopped mid-write leaves nothing half-written.
void remove_temp_file_on_stop_signals();

namespace detail {  // shared by the format files, not part of the API

// The whole file; FormatError "<path>: cannot open: <strerror>" on failure.
std::string read_file(const std::string& path);
// Element count of shape, or nullopt when a dim is negative or the count times
// 4 (its size in bytes) does not fit in int64_t; checked as the product is
// formed, so (2^40, 2^40, 0) is refused too.
std::optional<uint64_t> checked_numel(const std::vector<int64_t>& shape);
// Writer-side check: dims >= 0, no overflow, data.size() == numel.
// std::invalid_argument starting with `what`.
void validate_tensor(const Tensor& t, const std::string& what);

}  // namespace detail
}  // namespace farnn::io
