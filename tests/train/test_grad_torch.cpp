// The RNN stack on model:// against PyTorch (float64 references from
// torch_grad_reference.py): y, h_n, c_n, dx and every parameter gradient
// within max|a - b| <= 1e-5 * max|b| per tensor, for LSTM and GRU, 1-2
// layers, uni- and bidirectional, H = 1 up; the same on 1 and 7 PEs, and on
// devices whose max_batch is below the batch (the stack splits it into
// commands of at most max_batch slots: B = 3 as 2 + 1, B = 4 as 2 + 2 or 4 x 1);
// with every backend under test (backends_under_test.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "backends_under_test.hpp"
#include "farnn/grad.hpp"

namespace {

using namespace farnn;
using namespace farnn::train;

const std::string kRef = farnn::test::reference_dir("FARNN_GRAD_REF", FARNN_GRAD_REF);

StackConfig config_from_args(const std::string& dir) {
  std::ifstream f(dir + "/args");
  std::string word;
  StackConfig c;
  while (f >> word) {
    if (word == "--cell") {
      f >> word;
      c.cell = word == "gru" ? CellKind::kGru : CellKind::kLstm;
    } else if (word == "--hidden") {
      f >> c.hidden;
    } else if (word == "--layers") {
      f >> c.layers;
    } else if (word == "--bidirectional") {
      c.bidirectional = true;
    }
  }
  return c;
}

class GradTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(GradTorch, MatchesPyTorch) {
  const std::string dir = kRef + "/" + GetParam();
  const StackConfig cfg = config_from_args(dir);
  GradInputs in;
  in.weights = io::read_safetensors(dir + "/W.safetensors");
  in.x = io::read_npy(dir + "/x.npy");
  in.dy = io::read_npy(dir + "/dy.npy");
  const io::TensorList expected = io::read_safetensors(dir + "/expected.safetensors");
  for (const auto& backend : farnn::test::backends_under_test())
    for (const char* uri : {"model://?pes=4", "model://?pes=1", "model://?pes=7&threads=2",
                            "model://?pes=4&batch=2", "model://?pes=3&batch=1"}) {
      SCOPED_TRACE(backend->name());
      auto dev = Device::open(uri);
      const io::TensorList got = compute_grad(cfg, *dev, *backend, in);
      ASSERT_EQ(got.size(), expected.size()) << uri;
      for (const auto& [name, want] : expected) {
        const io::Tensor& have = io::find_tensor(got, name, "farnn grad");
        ASSERT_EQ(have.shape, want.shape) << name;
        const double e = io::max_relative_error(have, want);
        EXPECT_LE(e, 1e-5) << GetParam() << " " << uri << " " << name
                           << ": max|a-b|/max|b| = " << e;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, GradTorch,
                         ::testing::Values("lstm_1l", "gru_1l", "lstm_h1", "gru_h1", "lstm_2l_bi", "gru_2l_bi",
                                           "lstm_2l", "gru_1l_bi"));

}  // namespace
