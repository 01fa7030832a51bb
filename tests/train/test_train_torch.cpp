// Trainer steps against PyTorch (float64 references from
// torch_train_reference.py in train_ref/): cross-entropy and MSE on the last
// step or every step, packed lengths, SGD with momentum and Adam, clipping by
// global norm on and off. Each step's loss and gradient norm (before
// clipping) within 1e-5 relative, and every parameter after the last step
// within 1e-5 * max|b| per tensor; on devices that take the batch in one
// command and in groups of 2, with every backend under test (the CPU backend
// with memory of its own also on sim://, through registered memory).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "backends_under_test.hpp"
#include "farnn/trainer.hpp"

namespace {

using namespace farnn;
using namespace farnn::train;

class TrainTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainTorch, StepsMatchPyTorch) {
  const std::string dir =
      farnn::test::reference_dir("FARNN_TRAIN_REF", FARNN_TRAIN_REF) + "/" + GetParam();
  std::ifstream f(dir + "/case.json");
  ASSERT_TRUE(f) << dir;
  const nlohmann::json c = nlohmann::json::parse(f);
  TrainConfig cfg;
  cfg.stack.cell = c["cell"] == "gru" ? CellKind::kGru : CellKind::kLstm;
  cfg.stack.input = c["input"];
  cfg.stack.hidden = c["hidden"];
  cfg.stack.layers = c["layers"];
  cfg.stack.bidirectional = c["bidirectional"];
  cfg.outputs = c["outputs"];
  cfg.loss = c["loss"];
  cfg.optimizer = c["optimizer"];
  cfg.lr = c["lr"];
  cfg.momentum = c["momentum"];
  cfg.clip = c["clip"];
  const int N = c["N"];
  cfg.batch = N;
  Dataset data{io::read_npy(dir + "/x.npy"), io::read_npy(dir + "/y.npy"), c["lengths"]};
  const std::vector<double> losses = c["losses"], norms = c["grad_norms"];
  std::vector<int> all(static_cast<size_t>(N));
  for (int n = 0; n < N; ++n) all[static_cast<size_t>(n)] = n;
  // Clipping is exercised where the case turns it on.
  if (cfg.clip > 0) {
    EXPECT_GT(norms[0], cfg.clip) << GetParam();
  }
  const io::TensorList expected = io::read_safetensors(dir + "/expected.safetensors");
  for (const auto& be : farnn::test::backends_under_test()) {
    std::vector<std::string> uris = {"model://?pes=3", "model://?pes=4&batch=2"};
    if (be->needs_own_memory() && be->name().rfind("cpu", 0) == 0) uris.push_back("sim://");
    for (const std::string& uri : uris) {
      SCOPED_TRACE(be->name() + " on " + uri);
      auto dev = Device::open(uri);
      Trainer t(cfg, *dev, *be);
      t.check_dataset(data, dir);
      t.load_state(io::read_safetensors(dir + "/W.safetensors"), dir);
      for (size_t s = 0; s < losses.size(); ++s) {
        const StepStats st = t.step(data, all);
        EXPECT_NEAR(st.loss, losses[s], 1e-5 * std::abs(losses[s]))
            << GetParam() << " " << uri << " step " << s;
        EXPECT_NEAR(st.grad_norm, norms[s], 1e-5 * norms[s])
            << GetParam() << " " << uri << " step " << s;
      }
      const io::TensorList got = t.state();
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].first, expected[i].first);
        const double e = io::max_relative_error(got[i].second, expected[i].second);
        EXPECT_LE(e, 1e-5) << GetParam() << " " << uri << " " << got[i].first
                           << ": max|a-b|/max|b| = " << e;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, TrainTorch,
                         ::testing::Values("lstm_bi_ce_sgd", "gru_2l_mse_adam",
                                           "lstm_2l_ce_steps_sgd"));

}  // namespace
