// Pieces shared by the safetensors and .npy code: Tensor helpers, find_tensor,
// whole-file reading, atomic writing (temp file + fsync + rename) and the
// writers' tensor validation.
#include "farnn/tensor_io.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

namespace farnn::io {

size_t Tensor::numel() const {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

std::string Tensor::shape_string() const {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

const Tensor& find_tensor(const TensorList& list, const std::string& name,
                          const std::string& source) {
  std::string names;
  for (const auto& [n, t] : list) {
    if (n == name) return t;
    names += (names.empty() ? "'" : ", '") + n + "'";
  }
  throw FormatError(source + ": no tensor named '" + name + "' (it has " +
                    (names.empty() ? "no tensors" : names) + ")");
}

double max_relative_error(const Tensor& a, const Tensor& b) {
  if (a.data.size() != b.data.size()) {
    throw std::invalid_argument("max_relative_error: " + std::to_string(a.data.size()) + " against " +
                                std::to_string(b.data.size()) + " values");
  }
  double err = 0, scale = 0;
  for (size_t i = 0; i < b.data.size(); ++i) {
    const double x = a.data[i], y = b.data[i];
    const bool same = x == y || (std::isnan(x) && std::isnan(y));  // equal infinities, NaN for NaN
    const double d = same ? 0.0 : std::abs(x - y);
    err = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(err, d);
    if (std::isfinite(y)) scale = std::max(scale, std::abs(y));
  }
  if (err == 0) return 0;
  return scale > 0 ? err / scale : std::numeric_limits<double>::infinity();
}

namespace detail {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

std::string read_file(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) throw FormatError(path + ": cannot open: " + std::strerror(errno));
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) bytes.append(buf, n);
  if (std::ferror(f.get())) throw FormatError(path + ": cannot read: " + std::strerror(errno));
  return bytes;
}

std::optional<uint64_t> checked_numel(const std::vector<int64_t>& shape) {
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max() / sizeof(float);
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n) || n > kMax) {
      return std::nullopt;
    }
  }
  return n;
}

void validate_tensor(const Tensor& t, const std::string& what) {
  for (int64_t d : t.shape) {
    if (d < 0)
      throw std::invalid_argument(what + ": shape " + t.shape_string() +
                                  " has a negative dimension");
  }
  const auto numel = checked_numel(t.shape);
  if (!numel)
    throw std::invalid_argument(what + ": element count of shape " + t.shape_string() +
                                " overflows");
  if (t.data.size() != *numel) {
    throw std::invalid_argument(what + ": data has " + std::to_string(t.data.size()) +
                                " elements, shape " + t.shape_string() + " needs " +
                                std::to_string(*numel));
  }
}

}  // namespace detail

namespace {

// The temporary file being written, for the stop-signal handler to remove:
// the name is complete before the flag is set.
char g_temp_name[4096];
volatile std::sig_atomic_t g_temp_set = 0;

// Publishes `tmp` while it exists; unpublishes on destruction.
struct TempPublished {
  explicit TempPublished(const std::string& tmp) {
    if (tmp.size() >= sizeof g_temp_name) return;  // too long to publish: left to the caller
    std::memcpy(g_temp_name, tmp.c_str(), tmp.size() + 1);
    g_temp_set = 1;
  }
  ~TempPublished() { g_temp_set = 0; }
};

void on_stop_signal(int sig) {
  if (g_temp_set) ::unlink(g_temp_name);  // async-signal-safe
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void remove_temp_file_on_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const TempPublished published(tmp);
  auto fail = [&](const std::string& what, int err) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot write: " + what + ": " + std::strerror(err));
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail("cannot create " + tmp, errno);
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0 &&
            ::fsync(::fileno(f)) == 0;
  int err = ok ? 0 : errno;
  if (std::fclose(f) != 0 && ok) ok = false, err = errno;
  if (!ok) fail("writing " + tmp + " failed", err);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename " + tmp + " to it", errno);
}

}  // namespace farnn::io
