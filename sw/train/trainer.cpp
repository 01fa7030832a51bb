// Trainer, the built-in tasks and the loss plot; see farnn/trainer.hpp.
#include "farnn/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numbers>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>

#include "farnn/golden.hpp"

namespace farnn::train {

void TrainConfig::validate() const {
  stack.validate();
  if (outputs < 1 || outputs > kMaxOutputs) {
    throw std::invalid_argument("outputs must be from 1 to " + std::to_string(kMaxOutputs) + ", got " +
                                std::to_string(outputs));
  }
  if (loss != "mse" && loss != "ce") throw std::invalid_argument("--loss must be mse or ce (got '" + loss + "')");
  if (optimizer != "adam" && optimizer != "sgd") {
    throw std::invalid_argument("--optimizer must be adam or sgd (got '" + optimizer + "')");
  }
  if (!(lr > 0) || !std::isfinite(lr)) {
    throw std::invalid_argument("--lr must be a positive number a float32 holds (at most 3.4e38)");
  }
  if (!(momentum >= 0 && momentum < 1)) throw std::invalid_argument("--momentum must be in [0, 1)");
  if (!(clip >= 0) || !std::isfinite(clip)) throw std::invalid_argument("--clip must be >= 0 (0: off)");
  if (batch < 1) throw std::invalid_argument("--batch must be >= 1");
  if (epochs < 1) throw std::invalid_argument("--epochs must be >= 1");
}

Dataset synthetic_task(const std::string& name, int steps, int samples, uint64_t seed) {
  if (steps < 2 || samples < 1) throw std::invalid_argument("synthetic task: steps must be >= 2 and samples >= 1");
  std::mt19937_64 rng(seed);
  auto uni = [&] { return golden::uniform01(rng); };
  Dataset d;
  const size_t T = static_cast<size_t>(steps), N = static_cast<size_t>(samples);
  if (name == "sine") {
    d.x = {{steps, samples, 1}, std::vector<float>(T * N)};
    d.y = {{steps, samples, 1}, std::vector<float>(T * N)};
    for (size_t n = 0; n < N; ++n) {
      const double phase = 2 * std::numbers::pi * uni(), freq = 0.1 + 0.2 * uni();
      for (size_t t = 0; t < T; ++t) {
        d.x.data[t * N + n] = static_cast<float>(std::sin(freq * t + phase) + 0.1 * (2 * uni() - 1));
        d.y.data[t * N + n] = static_cast<float>(std::sin(freq * (t + 1) + phase));
      }
    }
  } else if (name == "adding") {
    d.x = {{steps, samples, 2}, std::vector<float>(T * N * 2, 0.0f)};
    d.y = {{samples, 1}, std::vector<float>(N)};
    for (size_t n = 0; n < N; ++n) {
      const int len = steps / 2 + static_cast<int>(uni() * (steps - steps / 2 + 1));
      d.lengths.push_back(std::min(len, steps));
      const int l = d.lengths.back();
      const int a = static_cast<int>(uni() * (l / 2)), b = l / 2 + static_cast<int>(uni() * (l - l / 2));
      double sum = 0;
      for (int t = 0; t < l; ++t) {
        const float v = static_cast<float>(uni());
        d.x.data[(t * N + n) * 2] = v;
        const bool marked = t == a || t == b;
        d.x.data[(t * N + n) * 2 + 1] = marked ? 1.0f : 0.0f;
        if (marked) sum += v;
      }
      d.y.data[n] = static_cast<float>(sum);
    }
  } else {
    throw std::invalid_argument("unknown task '" + name + "' (known: sine, adding)");
  }
  return d;
}

struct Trainer::Batch {
  int steps = 0, size = 0;
  std::vector<int> rows;     // padded (t, b) rows the loss reads
  std::vector<int> targets;  // the dataset's target row of each
  Array y_rows, logits, dlogits;
};

Trainer::Trainer(const TrainConfig& config, Device& device, Backend& backend, Trace* trace)
    : cfg_(config), be_(backend), trace_(trace), stack_(config.stack, device, backend, trace) {
  cfg_.validate();
  stack_.init_uniform(cfg_.seed);
  const size_t F = static_cast<size_t>(cfg_.stack.output()), O = static_cast<size_t>(cfg_.outputs);
  std::mt19937_64 rng(cfg_.seed ^ 0x9e3779b97f4a7c15ull);
  const double k = 1.0 / std::sqrt(static_cast<double>(F));
  head_w_.resize(be_, O * F);
  head_b_.resize(be_, O);
  for (float& w : head_w_) w = static_cast<float>(k * (2 * golden::uniform01(rng) - 1));
  for (float& b : head_b_) b = static_cast<float>(k * (2 * golden::uniform01(rng) - 1));
  head_gw_.resize(be_, O * F);
  head_gb_.resize(be_, O);
  for (auto* state : {&m_, &v_}) {
    for (const Param& p : stack_.params()) state->emplace_back(be_, p.size());
    state->emplace_back(be_, O * F);
    state->emplace_back(be_, O);
  }
}

void Trainer::check_dataset(const Dataset& d, const std::string& source) const {
  if (d.x.shape.size() != 3) throw std::invalid_argument(source + ": inputs must be (T, N, I), got " + d.x.shape_string());
  const int64_t T = d.x.shape[0], N = d.x.shape[1], I = d.x.shape[2];
  if (T < 1 || N < 1) throw std::invalid_argument(source + ": inputs " + d.x.shape_string() + " hold no sequence");
  if (I != cfg_.stack.input) {
    throw std::invalid_argument(source + ": inputs have " + std::to_string(I) + " features, the model takes " +
                                std::to_string(cfg_.stack.input));
  }
  const bool ce = cfg_.loss == "ce";
  const std::vector<std::vector<int64_t>> ok =
      ce ? std::vector<std::vector<int64_t>>{{T, N}, {N}}
         : std::vector<std::vector<int64_t>>{{T, N, cfg_.outputs}, {N, cfg_.outputs}};
  if (std::find(ok.begin(), ok.end(), d.y.shape) == ok.end()) {
    io::Tensor a, b;
    a.shape = ok[0];
    b.shape = ok[1];
    throw std::invalid_argument(source + ": targets have shape " + d.y.shape_string() + ", expected " +
                                a.shape_string() + " (every step) or " + b.shape_string() + " (last step)" +
                                (ce ? " of class indices" : ""));
  }
  if (!d.lengths.empty()) {
    if (d.lengths.size() != static_cast<size_t>(N)) {
      throw std::invalid_argument(source + ": " + std::to_string(d.lengths.size()) + " lengths for " +
                                  std::to_string(N) + " sequences");
    }
    for (size_t n = 0; n < d.lengths.size(); ++n) {
      if (d.lengths[n] < 1 || d.lengths[n] > T) {
        throw std::invalid_argument(source + ": length " + std::to_string(d.lengths[n]) + " of sequence " +
                                    std::to_string(n) + " is outside 1.." + std::to_string(T));
      }
    }
  }
  // Every value a step reads. Targets past a sequence's length are padding
  // the loss never reads, so they may hold anything (PyTorch pads labels
  // with -100); inputs there still enter the input GEMM, so they are checked.
  // A bad value is named by its position, (t, n, i) as the array is indexed.
  for (const auto* t : {&d.x, &d.y}) {
    const std::vector<int64_t>& shape = t->shape;
    const bool per_step = shape.size() == (t == &d.x || !ce ? 3u : 2u);
    const int64_t inner = per_step ? (shape.size() == 3 ? shape[2] : 1) : (shape.size() == 2 ? shape[1] : 1);
    for (size_t i = 0; i < t->data.size(); ++i) {
      const int64_t item = static_cast<int64_t>(i) / inner, n = per_step ? item % N : item;
      if (t == &d.y && per_step && !d.lengths.empty() && item / N >= d.lengths[static_cast<size_t>(n)]) continue;
      const auto where = [&] {
        std::string at = "(";
        std::vector<int64_t> idx;
        for (size_t k = shape.size(), rest = i; k-- > 0;) {
          idx.insert(idx.begin(), static_cast<int64_t>(rest % static_cast<size_t>(shape[k])));
          rest /= static_cast<size_t>(shape[k]);
        }
        for (size_t k = 0; k < idx.size(); ++k) at += (k ? ", " : "") + std::to_string(idx[k]);
        return at + ")";
      };
      std::ostringstream value;
      value << t->data[i];
      if (!std::isfinite(t->data[i])) {
        throw std::invalid_argument(source + ": " + (t == &d.x ? "inputs" : "targets") + " hold a non-finite value (" +
                                    value.str() + ") at " + where());
      }
      if (t == &d.y && ce && (t->data[i] < 0 || t->data[i] >= cfg_.outputs || t->data[i] != std::floor(t->data[i]))) {
        throw std::invalid_argument(source + ": target " + value.str() + " at " + where() +
                                    " is not a class index 0.." + std::to_string(cfg_.outputs - 1));
      }
    }
  }
}

double Trainer::forward_loss(const Dataset& d, const std::vector<int>& index, bool backward, Batch& b) {
  const int T = d.steps(), N = d.samples(), I = d.features(), B = static_cast<int>(index.size());
  const int F = cfg_.stack.output(), O = cfg_.outputs;
  std::vector<float> x(static_cast<size_t>(T) * B * I);
  std::vector<int> lengths;
  {
    Trace::Scope s(trace_, "compute", "batch");
    for (int t = 0; t < T; ++t)
      for (int k = 0; k < B; ++k)
        std::copy_n(&d.x.data[(static_cast<size_t>(t) * N + index[static_cast<size_t>(k)]) * I], I,
                    &x[(static_cast<size_t>(t) * B + k) * I]);
    if (!d.lengths.empty())
      for (int k : index) lengths.push_back(d.lengths[static_cast<size_t>(k)]);
  }
  const StackOutput out = stack_.forward(x, T, B, lengths);
  // The head's span ends before the stack's backward, which has spans of its own.
  std::optional<Trace::Scope> head(std::in_place, trace_, "compute",
                                   backward ? "head and loss" : "head");
  const bool per_step = d.y.shape.size() == (cfg_.loss == "ce" ? 2u : 3u);
  b.rows.clear();
  b.targets.clear();
  for (int k = 0; k < B; ++k) {
    const int n = index[static_cast<size_t>(k)];
    const int len = lengths.empty() ? T : lengths[static_cast<size_t>(k)];
    for (int t = per_step ? 0 : len - 1; t < len; ++t) {
      b.rows.push_back(t * B + k);
      b.targets.push_back(per_step ? t * N + n : n);
    }
  }
  const int R = static_cast<int>(b.rows.size());
  // The rows the loss reads and their targets, gathered by the host into the
  // backend's memory.
  const auto gather = [R](const std::vector<float>& from, const std::vector<int>& rows,
                          size_t width, Array& to) {
    for (int r = 0; r < R; ++r)
      std::copy_n(&from[static_cast<size_t>(rows[static_cast<size_t>(r)]) * width], width,
                  to.data() + static_cast<size_t>(r) * width);
  };
  b.y_rows.resize(be_, static_cast<size_t>(R) * F);
  gather(out.y, b.rows, static_cast<size_t>(F), b.y_rows);
  b.logits.resize(be_, static_cast<size_t>(R) * O);
  be_.gemm(false, true, R, O, F, 1.0f, b.y_rows.data(), F, head_w_.data(), F, 0.0f, b.logits.data(), O);
  be_.add_row_vector(b.logits.data(), R, O, O, head_b_.data());
  b.dlogits.resize(be_, b.logits.size());
  double loss;
  if (cfg_.loss == "mse") {
    Array target(be_, static_cast<size_t>(R) * O);
    gather(d.y.data, b.targets, static_cast<size_t>(O), target);
    loss = be_.mse(b.logits.data(), target.data(), target.size(), b.dlogits.data(), 1.0f);
  } else {
    Array labels(be_, static_cast<size_t>(R));
    gather(d.y.data, b.targets, 1, labels);
    loss = be_.cross_entropy(b.logits.data(), labels.data(), R, O, b.dlogits.data(), 1.0f / R) / R;
  }
  if (!backward) return loss;
  be_.gemm(true, false, O, F, R, 1.0f, b.dlogits.data(), O, b.y_rows.data(), F, 0.0f, head_gw_.data(), F);
  be_.column_sums(b.dlogits.data(), R, O, O, head_gb_.data(), 0.0f);
  Array dy_rows(be_, static_cast<size_t>(R) * F), dy(be_, static_cast<size_t>(T) * B * F);
  be_.gemm(false, false, R, F, O, 1.0f, b.dlogits.data(), O, head_w_.data(), F, 0.0f, dy_rows.data(), F);
  std::vector<int> inverse(static_cast<size_t>(T) * B, -1);
  for (int r = 0; r < R; ++r) inverse[static_cast<size_t>(b.rows[static_cast<size_t>(r)])] = r;
  be_.copy_rows(dy_rows.data(), F, dy.data(), F, T * B, F, inverse.data(), 0.0f);
  be_.synchronize();
  std::vector<float> dy_host = dy.to_vector();
  head.reset();
  stack_.backward(dy_host);
  return loss;
}

StepStats Trainer::step(const Dataset& data, const std::vector<int>& index) {
  Batch b;
  StepStats st;
  st.loss = forward_loss(data, index, true, b);
  Trace::Scope s(trace_, "compute", "clip and update");
  std::vector<std::pair<float*, std::pair<float*, size_t>>> pg;  // (value, (grad, n))
  for (Param& p : stack_.params()) pg.push_back({p.data(), {p.grad.data(), p.size()}});
  pg.push_back({head_w_.data(), {head_gw_.data(), head_gw_.size()}});
  pg.push_back({head_b_.data(), {head_gb_.data(), head_gb_.size()}});
  double sq = 0;
  for (auto& [p, g] : pg) sq += be_.sum_squares(g.first, g.second);
  st.grad_norm = std::sqrt(sq);
  if (!std::isfinite(st.grad_norm)) {
    throw std::runtime_error("training diverged: the gradient norm is " + std::to_string(st.grad_norm) +
                             " at step " + std::to_string(steps_ + 1) + "; lower --lr or set --clip");
  }
  if (cfg_.clip > 0 && st.grad_norm > cfg_.clip) {
    const float f = static_cast<float>(cfg_.clip / (st.grad_norm + 1e-6));
    for (auto& [p, g] : pg) be_.scale(g.first, g.second, f);
  }
  ++steps_;
  for (size_t i = 0; i < pg.size(); ++i) {
    auto& [p, g] = pg[i];
    if (cfg_.optimizer == "sgd") {
      be_.sgd_step(p, g.first, m_[i].data(), g.second, {cfg_.lr, cfg_.momentum}, steps_ == 1);
    } else {
      AdamConfig a;
      a.lr = cfg_.lr;
      be_.adam_step(p, g.first, m_[i].data(), v_[i].data(), g.second, a, steps_);
    }
  }
  // The update itself may overflow (an lr near float32's limit): a
  // parameter turned Inf or NaN ends the run here, before a checkpoint keeps it.
  double after = 0;
  for (auto& [p, g] : pg) after += be_.sum_squares(p, g.second);
  if (!std::isfinite(after)) {
    throw std::runtime_error("training diverged: the update of step " + std::to_string(steps_) +
                             " made a parameter non-finite; lower --lr or set --clip");
  }
  be_.synchronize();  // the next step's LOAD reads the weights
  return st;
}

double Trainer::evaluate(const Dataset& data, const std::vector<int>& index) {
  Batch b;
  return forward_loss(data, index, false, b);
}

io::TensorList Trainer::state() const {
  be_.synchronize();
  io::TensorList s = stack_.param_tensors();
  const int64_t O = cfg_.outputs, F = cfg_.stack.output();
  s.push_back({"head.weight", {{O, F}, head_w_.to_vector()}});
  s.push_back({"head.bias", {{O}, head_b_.to_vector()}});
  return s;
}

void Trainer::load_state(const io::TensorList& tensors, const std::string& source) {
  io::TensorList stack_part;
  for (const auto& [name, t] : tensors)
    if (name.rfind("head.", 0) != 0) stack_part.push_back({name, t});
  stack_.set_params(stack_part, source);
  const io::Tensor& w = io::find_tensor(tensors, "head.weight", source);
  const io::Tensor& b = io::find_tensor(tensors, "head.bias", source);
  if (w.shape != std::vector<int64_t>{cfg_.outputs, cfg_.stack.output()} ||
      b.shape != std::vector<int64_t>{cfg_.outputs}) {
    throw std::invalid_argument(source + ": head.weight " + w.shape_string() + " / head.bias " + b.shape_string() +
                                " do not fit " + std::to_string(cfg_.outputs) + " outputs from " +
                                std::to_string(cfg_.stack.output()) + " features");
  }
  be_.synchronize();
  std::copy(w.data.begin(), w.data.end(), head_w_.begin());
  std::copy(b.data.begin(), b.data.end(), head_b_.begin());
}

void write_loss_svg(const std::string& path, const std::vector<double>& losses, const std::string& title) {
  const double W = 640, Hh = 400, left = 70, right = 20, top = 40, bottom = 50;
  double lo = 0, hi = 1;
  if (!losses.empty()) {
    lo = *std::min_element(losses.begin(), losses.end());
    hi = *std::max_element(losses.begin(), losses.end());
  }
  if (hi <= lo) hi = lo + 1;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << Hh << "\" font-family=\"sans-serif\""
    << " font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << W / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"14\">" << title << "</text>\n"
    << "<line x1=\"" << left << "\" y1=\"" << Hh - bottom << "\" x2=\"" << W - right << "\" y2=\"" << Hh - bottom
    << "\" stroke=\"black\"/>\n<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\""
    << Hh - bottom << "\" stroke=\"black\"/>\n"
    << "<text x=\"" << left - 6 << "\" y=\"" << top + 4 << "\" text-anchor=\"end\">" << hi << "</text>\n"
    << "<text x=\"" << left - 6 << "\" y=\"" << Hh - bottom << "\" text-anchor=\"end\">" << lo << "</text>\n"
    << "<text x=\"" << (W + left) / 2 << "\" y=\"" << Hh - 15 << "\" text-anchor=\"middle\">step (1.."
    << losses.size() << ")</text>\n<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"";
  const double n = std::max<double>(1, static_cast<double>(losses.size()) - 1);
  for (size_t i = 0; i < losses.size(); ++i) {
    const double px = left + (W - left - right) * static_cast<double>(i) / n;
    const double py = top + (Hh - top - bottom) * (hi - losses[i]) / (hi - lo);
    s << px << "," << py << " ";
  }
  s << "\"/>\n</svg>\n";
  io::write_file_atomic(path, s.str());
}

}  // namespace farnn::train
