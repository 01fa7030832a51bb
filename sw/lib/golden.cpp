// Non-template parts of the golden model and its float / double
// instantiations (see farnn/golden.hpp).
#include "farnn/golden.hpp"

namespace farnn::golden {

int gate_count(CellType cell) {
  switch (cell) {
    case CellType::kLstm:
      return 4;
    case CellType::kGru:
      return 3;
  }
  throw std::invalid_argument("farnn::golden::gate_count: unknown CellType value " +
                              std::to_string(static_cast<int>(cell)) + ", expected kLstm or kGru");
}

const char* cell_name(CellType cell) {
  switch (cell) {
    case CellType::kLstm:
      return "LSTM";
    case CellType::kGru:
      return "GRU";
  }
  return "unknown cell";
}

double uniform01(std::mt19937_64& rng) {
  // 53 random bits scaled by 2^-53: exactly representable, in [0, 1).
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

namespace detail {

std::string shape(Eigen::Index rows, Eigen::Index cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

void fail(const char* where, const std::string& msg) {
  throw std::invalid_argument(std::string(where) + ": " + msg);
}

void check_shape(const char* where, const std::string& what, Eigen::Index m_rows,
                 Eigen::Index m_cols, Eigen::Index rows, Eigen::Index cols) {
  if (m_rows != rows || m_cols != cols) {
    fail(where, what + " is " + shape(m_rows, m_cols) + ", expected " + shape(rows, cols));
  }
}

}  // namespace detail

#define FARNN_GOLDEN_INSTANTIATE(S)                                                          \
  template struct LayerParams<S>;                                                            \
  template struct LayerGrads<S>;                                                             \
  template ForwardResult<S> forward<S>(const LayerParams<S>&, const std::vector<Mat<S>>&,    \
                                       const Mat<S>&, const Mat<S>&);                        \
  template BackwardResult<S> backward<S>(const ForwardCache<S>&, const std::vector<Mat<S>>&, \
                                         const Mat<S>&, const Mat<S>&);                      \
  template class Sgd<S>;                                                                     \
  template class Adam<S>;
FARNN_GOLDEN_INSTANTIATE(float)
FARNN_GOLDEN_INSTANTIATE(double)
#undef FARNN_GOLDEN_INSTANTIATE

}  // namespace farnn::golden
