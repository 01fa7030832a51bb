// Golden model of one LSTM / GRU layer: forward over a batch of sequences,
// backpropagation through time, SGD and Adam. Eigen only; knows nothing of
// Verilator or of the hardware's arithmetic. Every other part of FARNN (the
// bit-accurate engine model, the RTL, the backends) is checked against it,
// in double (the reference) or float.
//
// Conventions are PyTorch's (torch.nn.LSTM / torch.nn.GRU, one layer,
// unidirectional), so weights move across unchanged:
//   LSTM, gate order i, f, g, o:
//     [i f g o]' = W_ih x + b_ih + W_hh h + b_hh (then sigmoid, sigmoid, tanh, sigmoid)
//     c' = f * c + i * g,   h' = o * tanh(c')
//   GRU, gate order r, z, n:
//     r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
//     z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
//     n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
//     h' = (1 - z) * n + z * h
// Weights are gate-major: rows [k*H, (k+1)*H) of w_ih / w_hh / b_ih / b_hh
// belong to gate k. Activations are column-major batches: one column per
// sequence, so x_t is I x B and h_t, c_t are H x B.
//
// Sizes are checked at every entry point; a mismatch throws
// std::invalid_argument naming the argument, its shape and the expected one.
#pragma once

#include <Eigen/Dense>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace farnn::golden {

template <class S>
using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
template <class S>
using Vec = Eigen::Matrix<S, Eigen::Dynamic, 1>;
// Keeps an argument out of template deduction, so Eigen expressions such as
// Mat<double>::Zero(h, b) can be passed where a Mat<S> is expected.
template <class T>
using NoDeduce = std::type_identity_t<T>;

enum class CellType { kLstm, kGru };

// Number of gates: 4 for LSTM (i, f, g, o), 3 for GRU (r, z, n).
int gate_count(CellType cell);
// "LSTM" or "GRU".
const char* cell_name(CellType cell);
inline std::ostream& operator<<(std::ostream& os, CellType cell) {
  return os << cell_name(cell);
}

// Uniform double in [0, 1) from the top 53 bits of one draw. Unlike
// std::uniform_real_distribution this is the same on every standard library,
// so a seed reproduces the same numbers everywhere.
double uniform01(std::mt19937_64& rng);

// rows x cols matrix with entries uniform in [-bound, bound), drawn in
// row-major order (PyTorch's storage order).
template <class S>
Mat<S> random_uniform(Eigen::Index rows, Eigen::Index cols, double bound, std::mt19937_64& rng) {
  Mat<S> m(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r) {
    for (Eigen::Index c = 0; c < cols; ++c) {
      m(r, c) = static_cast<S>(bound * (2.0 * uniform01(rng) - 1.0));
    }
  }
  return m;
}

namespace detail {
// "3x5"
std::string shape(Eigen::Index rows, Eigen::Index cols);
// Throws std::invalid_argument("<where>: <what> is <RxC>, expected <ExR>x<ExC>")
// unless m is exactly rows x cols.
void check_shape(const char* where, const std::string& what, Eigen::Index m_rows,
                 Eigen::Index m_cols, Eigen::Index rows, Eigen::Index cols);
[[noreturn]] void fail(const char* where, const std::string& msg);
}  // namespace detail

// Parameters of one layer, PyTorch layout and names:
//   w_ih = weight_ih_l0 (G*H x I), w_hh = weight_hh_l0 (G*H x H),
//   b_ih = bias_ih_l0 (G*H),       b_hh = bias_hh_l0 (G*H).
template <class S>
struct LayerParams {
  CellType cell = CellType::kLstm;
  int input_size = 0;
  int hidden_size = 0;
  Mat<S> w_ih;
  Mat<S> w_hh;
  Vec<S> b_ih;
  Vec<S> b_hh;

  int gates() const { return gate_count(cell); }

  static LayerParams zeros(CellType cell, int input_size, int hidden_size);

  // PyTorch's default initialisation: every entry uniform in [-k, k) with
  // k = scale / sqrt(hidden_size) (scale = 1 is PyTorch's). Drawn in the order
  // w_ih, w_hh, b_ih, b_hh, each row-major.
  static LayerParams random(CellType cell, int input_size, int hidden_size, std::mt19937_64& rng,
                            double scale = 1.0);

  // The same parameters in another scalar type (each entry static_cast).
  template <class T>
  LayerParams<T> cast() const {
    LayerParams<T> out;
    out.cell = cell;
    out.input_size = input_size;
    out.hidden_size = hidden_size;
    out.w_ih = w_ih.template cast<T>();
    out.w_hh = w_hh.template cast<T>();
    out.b_ih = b_ih.template cast<T>();
    out.b_hh = b_hh.template cast<T>();
    return out;
  }

  // Throws std::invalid_argument (prefixed with `where`) unless sizes are
  // positive and every tensor has the shape above.
  void validate(const char* where) const;
};

// Gradients of a scalar loss with respect to the four parameter tensors
// (same shapes as in LayerParams).
template <class S>
struct LayerGrads {
  Mat<S> w_ih;
  Mat<S> w_hh;
  Vec<S> b_ih;
  Vec<S> b_hh;

  static LayerGrads zeros_like(const LayerParams<S>& p);
};

// Everything backward() needs, and the intermediate values the hardware
// produces, so tests can compare them. Steps are indexed t = 0..T-1 in
// forward order; step t consumes x[t] and h[t] and produces h[t+1].
template <class S>
struct ForwardCache {
  LayerParams<S> params;   // copy of the parameters the forward pass used
  int batch = 0;           // B
  std::vector<Mat<S>> x;   // T inputs, I x B
  std::vector<Mat<S>> h;   // T+1 hidden states, H x B: h[0] = h0, h[t+1] = output of step t
  std::vector<Mat<S>> c;   // LSTM: T+1 cell states (c[0] = c0); GRU: empty
  std::vector<Mat<S>> xp;  // T input projections W_ih x[t] + b_ih, G*H x B
  std::vector<Mat<S>> hp;  // T recurrent projections W_hh h[t] + b_hh, G*H x B
  // T gate activations, G*H x B, gate-major: LSTM i, f, g, o (after sigmoid /
  // tanh); GRU r, z, n.
  std::vector<Mat<S>> gates;

  int steps() const { return static_cast<int>(x.size()); }
  // GRU: W_hn h[t] + b_hn (H x B), the value the reset gate multiplies.
  Mat<S> hn(int t) const {
    const int hs = params.hidden_size;
    return hp.at(static_cast<size_t>(t)).middleRows(2 * hs, hs);
  }
};

template <class S>
struct ForwardResult {
  std::vector<Mat<S>> h;  // outputs h_1..h_T of the T steps, H x B each
  Mat<S> h_final;         // h_T, H x B
  Mat<S> c_final;         // LSTM: c_T, H x B; GRU: empty (0 x 0)
  ForwardCache<S> cache;
};

template <class S>
struct BackwardResult {
  LayerGrads<S> grad;      // dL/dW_ih, dL/dW_hh, dL/db_ih, dL/db_hh
  std::vector<Mat<S>> dx;  // T matrices I x B
  Mat<S> dh0;              // H x B
  Mat<S> dc0;              // LSTM: H x B; GRU: empty (0 x 0)
  // Per step t (forward order), G*H x B, gate-major: the gradient with
  // respect to the input-side pre-activation, d/d(W_ih x_t + b_ih).
  //   LSTM: d/d(pre-activation) of i, f, g, o.
  //   GRU:  d/d(pre-activation) of r, z, n; n's pre-activation is
  //         W_in x + b_in + r * (W_hn h + b_hn).
  // Then dW_ih = sum_t dpre_ih[t] x_t^T, db_ih = row sums, dx_t = W_ih^T dpre_ih[t].
  std::vector<Mat<S>> dpre_ih;
  // Per step t, G*H x B: the gradient with respect to the recurrent product,
  // d/d(W_hh h_t + b_hh). Equal to dpre_ih for LSTM and for GRU's r and z
  // blocks; GRU's n block is d/d(W_hn h + b_hn) = dn_pre * r.
  // dW_hh = sum_t dpre_hh[t] h_t^T, db_hh = row sums, and W_hh^T dpre_hh[t]
  // is the recurrent part of dh_t (the FPGA's backward MVM).
  std::vector<Mat<S>> dpre_hh;

  // GRU: d/d(W_hn h_t + b_hn) of step t, H x B (rows [2H, 3H) of dpre_hh[t]).
  Mat<S> dhn(int t) const {
    const Eigen::Index hs = dh0.rows();
    return dpre_hh.at(static_cast<size_t>(t)).middleRows(2 * hs, hs);
  }
};

// Runs the layer over T = x.size() steps for a batch of B = x[0].cols()
// sequences. h0 and c0 are H x B; an empty (0 x 0) h0 or c0 means zeros, as
// PyTorch's hx = None. c0 is ignored for GRU.
template <class S>
ForwardResult<S> forward(const LayerParams<S>& p, const std::vector<Mat<S>>& x,
                         const NoDeduce<Mat<S>>& h0 = Mat<S>(),
                         const NoDeduce<Mat<S>>& c0 = Mat<S>());

// Backpropagation through time for the pass recorded in `cache`.
//   dh[t]    : dL/dh_{t+1} flowing in from above (the layer's output at step t), H x B, T of them
//   dh_final : dL/dh_T on the final state, H x B (added to dh[T-1]); empty = zero
//   dc_final : dL/dc_T on the final cell state, H x B; empty = zero; ignored for GRU
template <class S>
BackwardResult<S> backward(const ForwardCache<S>& cache, const std::vector<Mat<S>>& dh,
                           const NoDeduce<Mat<S>>& dh_final = Mat<S>(),
                           const NoDeduce<Mat<S>>& dc_final = Mat<S>());

// ---------------------------------------------------------------------------
// Optimizers, torch.optim semantics (1.13, foreach = False, maximize = False).
// An optimizer object holds the state of one layer's parameters; step()
// updates them in place and checks shapes against the parameters and state.

struct SgdOptions {
  double lr = 1e-2;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

// torch.optim.SGD:
//   g = grad + weight_decay * p
//   if momentum != 0: buf = g (first step) or momentum * buf + (1 - dampening) * g
//                     g = g + momentum * buf (nesterov) or buf
//   p = p - lr * g
template <class S>
class Sgd {
 public:
  explicit Sgd(const SgdOptions& options);
  void step(LayerParams<S>& p, const LayerGrads<S>& g);
  const SgdOptions& options() const { return opt_; }
  long steps() const { return steps_; }
  const LayerGrads<S>& momentum_buffer() const { return buf_; }

 private:
  SgdOptions opt_;
  long steps_ = 0;
  LayerGrads<S> buf_;
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool amsgrad = false;
};

// torch.optim.Adam (L2 weight decay, not AdamW), with step count k:
//   g = grad + weight_decay * p
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   vmax = max(vmax, v) if amsgrad (used in place of v below)
//   p = p - (lr / (1 - beta1^k)) * m / (sqrt(v) / sqrt(1 - beta2^k) + eps)
template <class S>
class Adam {
 public:
  explicit Adam(const AdamOptions& options);
  void step(LayerParams<S>& p, const LayerGrads<S>& g);
  const AdamOptions& options() const { return opt_; }
  long steps() const { return steps_; }
  const LayerGrads<S>& exp_avg() const { return m_; }
  const LayerGrads<S>& exp_avg_sq() const { return v_; }

 private:
  AdamOptions opt_;
  long steps_ = 0;
  LayerGrads<S> m_;
  LayerGrads<S> v_;
  LayerGrads<S> vmax_;
};

// ===========================================================================
// Implementation.

namespace detail {

template <class S>
S sigmoid(S a) {
  return S(1) / (S(1) + std::exp(-a));
}

template <class Derived>
auto sigmoid_of(const Eigen::MatrixBase<Derived>& m) {
  using S = typename Derived::Scalar;
  return m.unaryExpr([](S a) { return sigmoid<S>(a); });
}

template <class Derived>
auto tanh_of(const Eigen::MatrixBase<Derived>& m) {
  using S = typename Derived::Scalar;
  return m.unaryExpr([](S a) { return std::tanh(a); });
}

// Checks that `g` has the shapes of `p` (for the optimizers).
template <class S>
void check_grads(const char* where, const LayerParams<S>& p, const LayerGrads<S>& g) {
  check_shape(where, "grad.w_ih", g.w_ih.rows(), g.w_ih.cols(), p.w_ih.rows(), p.w_ih.cols());
  check_shape(where, "grad.w_hh", g.w_hh.rows(), g.w_hh.cols(), p.w_hh.rows(), p.w_hh.cols());
  check_shape(where, "grad.b_ih", g.b_ih.rows(), 1, p.b_ih.rows(), 1);
  check_shape(where, "grad.b_hh", g.b_hh.rows(), 1, p.b_hh.rows(), 1);
}

// Checks optimizer state (created on the first step) against p: an
// optimizer object belongs to one layer.
template <class S>
void check_state(const char* where, const LayerParams<S>& p, const LayerGrads<S>& state) {
  if (state.w_ih.rows() != p.w_ih.rows() || state.w_ih.cols() != p.w_ih.cols() ||
      state.w_hh.rows() != p.w_hh.rows() || state.w_hh.cols() != p.w_hh.cols() ||
      state.b_ih.rows() != p.b_ih.rows() || state.b_hh.rows() != p.b_hh.rows()) {
    fail(where, "optimizer state was created for parameters with w_ih " +
                    shape(state.w_ih.rows(), state.w_ih.cols()) + ", w_hh " +
                    shape(state.w_hh.rows(), state.w_hh.cols()) + ", but got w_ih " +
                    shape(p.w_ih.rows(), p.w_ih.cols()) + ", w_hh " +
                    shape(p.w_hh.rows(), p.w_hh.cols()) + "; use one optimizer per layer");
  }
}

template <class M>
void sgd_update(M& p, const M& grad, M& buf, bool first, const SgdOptions& o) {
  using S = typename M::Scalar;
  M g = grad;
  if (o.weight_decay != 0.0) g = g + static_cast<S>(o.weight_decay) * p;
  if (o.momentum != 0.0) {
    if (first) {
      buf = g;
    } else {
      buf = static_cast<S>(o.momentum) * buf + static_cast<S>(1.0 - o.dampening) * g;
    }
    if (o.nesterov) {
      g = g + static_cast<S>(o.momentum) * buf;
    } else {
      g = buf;
    }
  }
  p = p + static_cast<S>(-o.lr) * g;
}

template <class M>
void adam_update(M& p, const M& grad, M& m, M& v, M& vmax, long step, const AdamOptions& o) {
  using S = typename M::Scalar;
  M g = grad;
  if (o.weight_decay != 0.0) g = g + static_cast<S>(o.weight_decay) * p;
  m = static_cast<S>(o.beta1) * m + static_cast<S>(1.0 - o.beta1) * g;
  v = (static_cast<S>(o.beta2) * v.array() +
       (static_cast<S>(1.0 - o.beta2) * g.array()) * g.array())
          .matrix();
  const double bc1 = 1.0 - std::pow(o.beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(o.beta2, static_cast<double>(step));
  const double step_size = o.lr / bc1;
  const S bc2_sqrt = static_cast<S>(std::sqrt(bc2));
  M denom;
  if (o.amsgrad) {
    vmax = vmax.cwiseMax(v);
    denom = ((vmax.array().sqrt() / bc2_sqrt) + static_cast<S>(o.eps)).matrix();
  } else {
    denom = ((v.array().sqrt() / bc2_sqrt) + static_cast<S>(o.eps)).matrix();
  }
  p = (p.array() + (static_cast<S>(-step_size) * m.array()) / denom.array()).matrix();
}

}  // namespace detail

template <class S>
LayerParams<S> LayerParams<S>::zeros(CellType cell, int input_size, int hidden_size) {
  if (input_size <= 0 || hidden_size <= 0) {
    detail::fail("farnn::golden::LayerParams::zeros",
                 "input_size and hidden_size must be positive, got input_size = " +
                     std::to_string(input_size) + ", hidden_size = " + std::to_string(hidden_size));
  }
  LayerParams p;
  p.cell = cell;
  p.input_size = input_size;
  p.hidden_size = hidden_size;
  const int gh = gate_count(cell) * hidden_size;
  p.w_ih = Mat<S>::Zero(gh, input_size);
  p.w_hh = Mat<S>::Zero(gh, hidden_size);
  p.b_ih = Vec<S>::Zero(gh);
  p.b_hh = Vec<S>::Zero(gh);
  return p;
}

template <class S>
LayerParams<S> LayerParams<S>::random(CellType cell, int input_size, int hidden_size,
                                      std::mt19937_64& rng, double scale) {
  if (input_size <= 0 || hidden_size <= 0) {
    detail::fail("farnn::golden::LayerParams::random",
                 "input_size and hidden_size must be positive, got input_size = " +
                     std::to_string(input_size) + ", hidden_size = " + std::to_string(hidden_size));
  }
  LayerParams p;
  p.cell = cell;
  p.input_size = input_size;
  p.hidden_size = hidden_size;
  const int gh = gate_count(cell) * hidden_size;
  const double k = scale / std::sqrt(static_cast<double>(hidden_size));
  p.w_ih = random_uniform<S>(gh, input_size, k, rng);
  p.w_hh = random_uniform<S>(gh, hidden_size, k, rng);
  p.b_ih = random_uniform<S>(gh, 1, k, rng);
  p.b_hh = random_uniform<S>(gh, 1, k, rng);
  return p;
}

template <class S>
void LayerParams<S>::validate(const char* where) const {
  if (input_size <= 0 || hidden_size <= 0) {
    detail::fail(where, std::string("parameters must have positive sizes, got input_size = ") +
                            std::to_string(input_size) +
                            ", hidden_size = " + std::to_string(hidden_size));
  }
  const Eigen::Index gh = static_cast<Eigen::Index>(gates()) * hidden_size;
  const std::string c = std::string(cell_name(cell)) + " ";
  detail::check_shape(where, c + "w_ih", w_ih.rows(), w_ih.cols(), gh, input_size);
  detail::check_shape(where, c + "w_hh", w_hh.rows(), w_hh.cols(), gh, hidden_size);
  detail::check_shape(where, c + "b_ih", b_ih.rows(), b_ih.cols(), gh, 1);
  detail::check_shape(where, c + "b_hh", b_hh.rows(), b_hh.cols(), gh, 1);
}

template <class S>
LayerGrads<S> LayerGrads<S>::zeros_like(const LayerParams<S>& p) {
  LayerGrads g;
  g.w_ih = Mat<S>::Zero(p.w_ih.rows(), p.w_ih.cols());
  g.w_hh = Mat<S>::Zero(p.w_hh.rows(), p.w_hh.cols());
  g.b_ih = Vec<S>::Zero(p.b_ih.rows());
  g.b_hh = Vec<S>::Zero(p.b_hh.rows());
  return g;
}

template <class S>
ForwardResult<S> forward(const LayerParams<S>& p, const std::vector<Mat<S>>& x,
                         const NoDeduce<Mat<S>>& h0, const NoDeduce<Mat<S>>& c0) {
  constexpr const char* kWhere = "farnn::golden::forward";
  p.validate(kWhere);
  if (x.empty()) detail::fail(kWhere, "x is empty, expected at least one time step");
  const Eigen::Index ni = p.input_size;
  const Eigen::Index nh = p.hidden_size;
  const Eigen::Index nb = x[0].cols();
  if (nb <= 0) detail::fail(kWhere, "x[0] has no columns, expected batch >= 1");
  for (size_t t = 0; t < x.size(); ++t) {
    detail::check_shape(kWhere, "x[" + std::to_string(t) + "] (input_size x batch)", x[t].rows(),
                        x[t].cols(), ni, nb);
  }
  const bool lstm = p.cell == CellType::kLstm;
  if (h0.size() != 0) {
    detail::check_shape(kWhere, "h0 (hidden_size x batch)", h0.rows(), h0.cols(), nh, nb);
  }
  if (lstm && c0.size() != 0) {
    detail::check_shape(kWhere, "c0 (hidden_size x batch)", c0.rows(), c0.cols(), nh, nb);
  }

  const size_t nt = x.size();
  ForwardResult<S> res;
  ForwardCache<S>& cache = res.cache;
  cache.params = p;
  cache.batch = static_cast<int>(nb);
  cache.x = x;
  cache.h.reserve(nt + 1);
  cache.h.push_back(h0.size() != 0 ? h0 : Mat<S>::Zero(nh, nb));
  if (lstm) {
    cache.c.reserve(nt + 1);
    cache.c.push_back(c0.size() != 0 ? c0 : Mat<S>::Zero(nh, nb));
  }
  cache.xp.reserve(nt);
  cache.hp.reserve(nt);
  cache.gates.reserve(nt);
  res.h.reserve(nt);

  for (size_t t = 0; t < nt; ++t) {
    const Mat<S>& h_prev = cache.h[t];
    Mat<S> xp = (p.w_ih * x[t]).colwise() + p.b_ih;
    Mat<S> hp = (p.w_hh * h_prev).colwise() + p.b_hh;
    Mat<S> gates(xp.rows(), nb);
    Mat<S> h_new;
    if (lstm) {
      const Mat<S> pre = xp + hp;
      gates.middleRows(0, nh) = detail::sigmoid_of(pre.middleRows(0, nh));
      gates.middleRows(nh, nh) = detail::sigmoid_of(pre.middleRows(nh, nh));
      gates.middleRows(2 * nh, nh) = detail::tanh_of(pre.middleRows(2 * nh, nh));
      gates.middleRows(3 * nh, nh) = detail::sigmoid_of(pre.middleRows(3 * nh, nh));
      const auto i = gates.middleRows(0, nh).array();
      const auto f = gates.middleRows(nh, nh).array();
      const auto g = gates.middleRows(2 * nh, nh).array();
      const auto o = gates.middleRows(3 * nh, nh).array();
      Mat<S> c_new = (f * cache.c[t].array() + i * g).matrix();
      h_new = (o * detail::tanh_of(c_new).array()).matrix();
      cache.c.push_back(std::move(c_new));
    } else {
      gates.middleRows(0, nh) =
          detail::sigmoid_of((xp.middleRows(0, nh) + hp.middleRows(0, nh)).eval());
      gates.middleRows(nh, nh) =
          detail::sigmoid_of((xp.middleRows(nh, nh) + hp.middleRows(nh, nh)).eval());
      const auto r = gates.middleRows(0, nh).array();
      const Mat<S> n_pre =
          (xp.middleRows(2 * nh, nh).array() + r * hp.middleRows(2 * nh, nh).array()).matrix();
      gates.middleRows(2 * nh, nh) = detail::tanh_of(n_pre);
      const auto z = gates.middleRows(nh, nh).array();
      const auto n = gates.middleRows(2 * nh, nh).array();
      h_new = ((S(1) - z) * n + z * h_prev.array()).matrix();
    }
    cache.xp.push_back(std::move(xp));
    cache.hp.push_back(std::move(hp));
    cache.gates.push_back(std::move(gates));
    res.h.push_back(h_new);
    cache.h.push_back(std::move(h_new));
  }
  res.h_final = cache.h.back();
  if (lstm) res.c_final = cache.c.back();
  return res;
}

template <class S>
BackwardResult<S> backward(const ForwardCache<S>& cache, const std::vector<Mat<S>>& dh,
                           const NoDeduce<Mat<S>>& dh_final, const NoDeduce<Mat<S>>& dc_final) {
  constexpr const char* kWhere = "farnn::golden::backward";
  const LayerParams<S>& p = cache.params;
  p.validate(kWhere);
  const bool lstm = p.cell == CellType::kLstm;
  const size_t nt = cache.x.size();
  if (nt == 0 || cache.h.size() != nt + 1 || cache.xp.size() != nt || cache.hp.size() != nt ||
      cache.gates.size() != nt || (lstm && cache.c.size() != nt + 1)) {
    detail::fail(kWhere, "cache is empty or inconsistent; pass the cache returned by forward()");
  }
  const Eigen::Index nh = p.hidden_size;
  const Eigen::Index nb = cache.batch;
  if (dh.size() != nt) {
    detail::fail(kWhere, "dh has " + std::to_string(dh.size()) +
                             " time steps, expected T = " + std::to_string(nt) +
                             " (one hidden_size x batch matrix per forward step)");
  }
  for (size_t t = 0; t < nt; ++t) {
    detail::check_shape(kWhere, "dh[" + std::to_string(t) + "] (hidden_size x batch)", dh[t].rows(),
                        dh[t].cols(), nh, nb);
  }
  if (dh_final.size() != 0) {
    detail::check_shape(kWhere, "dh_final (hidden_size x batch)", dh_final.rows(), dh_final.cols(),
                        nh, nb);
  }
  if (lstm && dc_final.size() != 0) {
    detail::check_shape(kWhere, "dc_final (hidden_size x batch)", dc_final.rows(), dc_final.cols(),
                        nh, nb);
  }

  BackwardResult<S> res;
  res.grad = LayerGrads<S>::zeros_like(p);
  res.dx.resize(nt);
  res.dpre_ih.resize(nt);
  res.dpre_hh.resize(nt);
  Mat<S> dh_next = dh_final.size() != 0 ? dh_final : Mat<S>::Zero(nh, nb);
  Mat<S> dc_next;
  if (lstm) dc_next = dc_final.size() != 0 ? dc_final : Mat<S>::Zero(nh, nb);

  for (size_t tt = nt; tt-- > 0;) {
    const Mat<S>& h_prev = cache.h[tt];
    const Mat<S>& gates = cache.gates[tt];
    const Mat<S> dh_total = dh[tt] + dh_next;  // dL/dh_{t+1}: from above and from step t+1
    const auto dht = dh_total.array();
    Mat<S> dpre_ih(gates.rows(), nb);
    Mat<S> dpre_hh;
    Mat<S> dh_direct;  // GRU: the part of dh_{t} that bypasses W_hh
    if (lstm) {
      const auto i = gates.middleRows(0, nh).array();
      const auto f = gates.middleRows(nh, nh).array();
      const auto g = gates.middleRows(2 * nh, nh).array();
      const auto o = gates.middleRows(3 * nh, nh).array();
      const auto c_prev = cache.c[tt].array();
      const Mat<S> tc = detail::tanh_of(cache.c[tt + 1]);
      const auto tca = tc.array();
      const Mat<S> dc = (dc_next.array() + dht * o * (S(1) - tca * tca)).matrix();
      const auto dca = dc.array();
      dpre_ih.middleRows(0, nh) = (dca * g * i * (S(1) - i)).matrix();
      dpre_ih.middleRows(nh, nh) = (dca * c_prev * f * (S(1) - f)).matrix();
      dpre_ih.middleRows(2 * nh, nh) = (dca * i * (S(1) - g * g)).matrix();
      dpre_ih.middleRows(3 * nh, nh) = (dht * tca * o * (S(1) - o)).matrix();
      dc_next = (dca * f).matrix();
      dpre_hh = dpre_ih;
    } else {
      const auto r = gates.middleRows(0, nh).array();
      const auto z = gates.middleRows(nh, nh).array();
      const auto n = gates.middleRows(2 * nh, nh).array();
      const auto hn = cache.hp[tt].middleRows(2 * nh, nh).array();
      const Mat<S> dn_pre = (dht * (S(1) - z) * (S(1) - n * n)).matrix();
      const auto dnp = dn_pre.array();
      dpre_ih.middleRows(0, nh) = (dnp * hn * r * (S(1) - r)).matrix();
      dpre_ih.middleRows(nh, nh) = (dht * (h_prev.array() - n) * z * (S(1) - z)).matrix();
      dpre_ih.middleRows(2 * nh, nh) = dn_pre;
      dpre_hh = dpre_ih;
      dpre_hh.middleRows(2 * nh, nh) = (dnp * r).matrix();
      dh_direct = (dht * z).matrix();
    }
    res.grad.w_ih.noalias() += dpre_ih * cache.x[tt].transpose();
    res.grad.w_hh.noalias() += dpre_hh * h_prev.transpose();
    res.grad.b_ih += dpre_ih.rowwise().sum();
    res.grad.b_hh += dpre_hh.rowwise().sum();
    res.dx[tt] = p.w_ih.transpose() * dpre_ih;
    dh_next = p.w_hh.transpose() * dpre_hh;
    if (!lstm) dh_next += dh_direct;
    res.dpre_ih[tt] = std::move(dpre_ih);
    res.dpre_hh[tt] = std::move(dpre_hh);
  }
  res.dh0 = std::move(dh_next);
  if (lstm) res.dc0 = std::move(dc_next);
  return res;
}

template <class S>
Sgd<S>::Sgd(const SgdOptions& options) : opt_(options) {
  constexpr const char* kWhere = "farnn::golden::Sgd";
  if (!(opt_.lr >= 0.0)) detail::fail(kWhere, "lr must be >= 0, got " + std::to_string(opt_.lr));
  if (!(opt_.momentum >= 0.0)) {
    detail::fail(kWhere, "momentum must be >= 0, got " + std::to_string(opt_.momentum));
  }
  if (!(opt_.weight_decay >= 0.0)) {
    detail::fail(kWhere, "weight_decay must be >= 0, got " + std::to_string(opt_.weight_decay));
  }
  if (opt_.nesterov && (opt_.momentum <= 0.0 || opt_.dampening != 0.0)) {
    detail::fail(kWhere, "nesterov momentum requires momentum > 0 and dampening = 0");
  }
}

template <class S>
void Sgd<S>::step(LayerParams<S>& p, const LayerGrads<S>& g) {
  constexpr const char* kWhere = "farnn::golden::Sgd::step";
  p.validate(kWhere);
  detail::check_grads(kWhere, p, g);
  const bool first = steps_ == 0;
  if (opt_.momentum != 0.0) {
    if (first) {
      buf_ = LayerGrads<S>::zeros_like(p);
    } else {
      detail::check_state(kWhere, p, buf_);
    }
  }
  detail::sgd_update(p.w_ih, g.w_ih, buf_.w_ih, first, opt_);
  detail::sgd_update(p.w_hh, g.w_hh, buf_.w_hh, first, opt_);
  detail::sgd_update(p.b_ih, g.b_ih, buf_.b_ih, first, opt_);
  detail::sgd_update(p.b_hh, g.b_hh, buf_.b_hh, first, opt_);
  ++steps_;
}

template <class S>
Adam<S>::Adam(const AdamOptions& options) : opt_(options) {
  constexpr const char* kWhere = "farnn::golden::Adam";
  if (!(opt_.lr >= 0.0)) detail::fail(kWhere, "lr must be >= 0, got " + std::to_string(opt_.lr));
  if (!(opt_.eps >= 0.0)) detail::fail(kWhere, "eps must be >= 0, got " + std::to_string(opt_.eps));
  if (!(opt_.beta1 >= 0.0 && opt_.beta1 < 1.0)) {
    detail::fail(kWhere, "beta1 must be in [0, 1), got " + std::to_string(opt_.beta1));
  }
  if (!(opt_.beta2 >= 0.0 && opt_.beta2 < 1.0)) {
    detail::fail(kWhere, "beta2 must be in [0, 1), got " + std::to_string(opt_.beta2));
  }
  if (!(opt_.weight_decay >= 0.0)) {
    detail::fail(kWhere, "weight_decay must be >= 0, got " + std::to_string(opt_.weight_decay));
  }
}

template <class S>
void Adam<S>::step(LayerParams<S>& p, const LayerGrads<S>& g) {
  constexpr const char* kWhere = "farnn::golden::Adam::step";
  p.validate(kWhere);
  detail::check_grads(kWhere, p, g);
  if (steps_ == 0) {
    m_ = LayerGrads<S>::zeros_like(p);
    v_ = LayerGrads<S>::zeros_like(p);
    if (opt_.amsgrad) vmax_ = LayerGrads<S>::zeros_like(p);
  } else {
    detail::check_state(kWhere, p, m_);
  }
  const long k = ++steps_;
  detail::adam_update(p.w_ih, g.w_ih, m_.w_ih, v_.w_ih, vmax_.w_ih, k, opt_);
  detail::adam_update(p.w_hh, g.w_hh, m_.w_hh, v_.w_hh, vmax_.w_hh, k, opt_);
  detail::adam_update(p.b_ih, g.b_ih, m_.b_ih, v_.b_ih, vmax_.b_ih, k, opt_);
  detail::adam_update(p.b_hh, g.b_hh, m_.b_hh, v_.b_hh, vmax_.b_hh, k, opt_);
}

// float and double are instantiated once in golden.cpp.
#define FARNN_GOLDEN_EXTERN(S)                                                                   \
  extern template struct LayerParams<S>;                                                         \
  extern template struct LayerGrads<S>;                                                          \
  extern template ForwardResult<S> forward<S>(const LayerParams<S>&, const std::vector<Mat<S>>&, \
                                              const Mat<S>&, const Mat<S>&);                     \
  extern template BackwardResult<S> backward<S>(                                                 \
      const ForwardCache<S>&, const std::vector<Mat<S>>&, const Mat<S>&, const Mat<S>&);         \
  extern template class Sgd<S>;                                                                  \
  extern template class Adam<S>;
FARNN_GOLDEN_EXTERN(float)
FARNN_GOLDEN_EXTERN(double)
#undef FARNN_GOLDEN_EXTERN

}  // namespace farnn::golden
