// tests/nn/test_rnn.cpp - recurrent layers: parameter names and shapes, single steps against
// hand-computed values, padded batches against per-sequence runs, errors, and "it learns".
#include <cmath>

#include "nn/core/embedding.h"
#include "nn/core/linear.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "nn/recurrent/gru.h"
#include "nn/recurrent/lstm.h"
#include "nn/recurrent/seq2seq.h"
#include "tests/nn/recalls_two_back.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

namespace {
double sig(double x) { return 1 / (1 + std::exp(-x)); }
const std::vector<std::string> kCells{"rnn", "lstm", "gru"};
}  // namespace

TEST_CASE("parameter names and shapes follow PyTorch") {
  nn::LSTM lstm(nn::RNNOptions(10, 20).with_num_layers(2).with_bidirectional(true));
  std::vector<std::string> names;
  for (auto& [n, p] : lstm.named_parameters()) names.push_back(n + " " + to_string(p.shape()));
  CHECK(names == std::vector<std::string>{
                     "weight_ih_l0 [80, 10]", "weight_hh_l0 [80, 20]", "bias_ih_l0 [80]", "bias_hh_l0 [80]",
                     "weight_ih_l0_reverse [80, 10]", "weight_hh_l0_reverse [80, 20]", "bias_ih_l0_reverse [80]",
                     "bias_hh_l0_reverse [80]", "weight_ih_l1 [80, 40]", "weight_hh_l1 [80, 20]", "bias_ih_l1 [80]",
                     "bias_hh_l1 [80]", "weight_ih_l1_reverse [80, 40]", "weight_hh_l1_reverse [80, 20]",
                     "bias_ih_l1_reverse [80]", "bias_hh_l1_reverse [80]"});
  CHECK(lstm.to_string() == "LSTM(10, 20, num_layers=2, bidirectional=true)");
  nn::GRUCell cell(4, 3);
  CHECK(cell.weight_ih.shape() == Shape{9, 4});
  CHECK(cell.to_string() == "GRUCell(4, 3)");
  // Each cell takes an options struct, as libtorch's do; the layer and the cell say whether
  // their state carries a cell c.
  nn::RNNCell relu(nn::RNNCellOptions(4, 3).with_bias(false).with_nonlinearity(nn::RNNNonlinearity::Relu));
  CHECK(relu.to_string() == "RNNCell(4, 3, bias=false, nonlinearity=relu)");
  CHECK(relu.parameters().size() == 2);
  CHECK(nn::LSTMCell(nn::LSTMCellOptions(4, 3)).weight_hh.shape() == Shape{12, 3});
  CHECK(nn::LSTMCell(4, 3).has_cell_state());
  CHECK_FALSE(cell.has_cell_state());
  CHECK(lstm.has_cell_state());
  CHECK_FALSE(nn::GRU(nn::RNNOptions(4, 3)).has_cell_state());
  CHECK(nn::RNN(nn::RNNOptions(4, 3).with_nonlinearity(nn::RNNNonlinearity::Relu)).to_string() ==
        "RNN(4, 3, nonlinearity=relu)");
}

TEST_CASE("output and state shapes") {
  manual_seed(1);
  for (const std::string& type : kCells) {
    auto layer = nn::make_recurrent_layer(type, nn::RNNOptions(5, 7).with_num_layers(3).with_bidirectional(true));
    nn::RNNResult r = layer->forward(Variable(randn({2, 6, 5})), nn::RNNState{});
    CHECK(r.output.shape() == Shape{2, 6, 14});
    CHECK(r.state.h.shape() == Shape{6, 2, 7});
    CHECK(r.state.c.defined() == (type == "lstm"));
  }
}

TEST_CASE("one step of each cell equals the formulas computed by hand (C = H = 1)") {
  const double x = 0.5, h = -0.3, c = 0.8;
  SUBCASE("RNN") {
    nn::RNNCell cell(1, 1);
    cell.weight_ih.value().fill_(real(0.7));
    cell.weight_hh.value().fill_(real(-1.2));
    cell.bias_ih.value().fill_(real(0.1));
    cell.bias_hh.value().fill_(real(0.05));
    const nn::RNNState s = cell.forward(Variable(full({1, 1}, x)), {Variable(full({1, 1}, h)), Variable()});
    CHECK(s.h.item() == doctest::Approx(std::tanh(0.7 * x + 0.1 - 1.2 * h + 0.05)));
  }
  SUBCASE("LSTM") {
    nn::LSTMCell cell(1, 1);
    // gates in the order i, f, g, o
    cell.weight_ih.value().copy_(from_vector({0.1f, 0.2f, 0.3f, 0.4f}));
    cell.weight_hh.value().copy_(from_vector({0.5f, -0.5f, 0.25f, -0.25f}));
    cell.bias_ih.value().copy_(from_vector({0.01f, 0.02f, 0.03f, 0.04f}));
    cell.bias_hh.value().copy_(from_vector({0, 0, 0, 0.1f}));
    const nn::RNNState s =
        cell.forward(Variable(full({1, 1}, x)), {Variable(full({1, 1}, h)), Variable(full({1, 1}, c))});
    const double i = sig(0.1 * x + 0.5 * h + 0.01), f = sig(0.2 * x - 0.5 * h + 0.02);
    const double g = std::tanh(0.3 * x + 0.25 * h + 0.03), o = sig(0.4 * x - 0.25 * h + 0.04 + 0.1);
    const double c2 = f * c + i * g;
    CHECK(s.c.item() == doctest::Approx(c2));
    CHECK(s.h.item() == doctest::Approx(o * std::tanh(c2)));
  }
  SUBCASE("GRU") {
    nn::GRUCell cell(1, 1);
    // gates in the order r, z, n
    cell.weight_ih.value().copy_(from_vector({0.1f, 0.2f, 0.3f}));
    cell.weight_hh.value().copy_(from_vector({0.4f, -0.5f, 0.6f}));
    cell.bias_ih.value().copy_(from_vector({0.01f, 0.02f, 0.03f}));
    cell.bias_hh.value().copy_(from_vector({0.04f, 0.05f, 0.06f}));
    const nn::RNNState s = cell.forward(Variable(full({1, 1}, x)), {Variable(full({1, 1}, h)), Variable()});
    const double r = sig(0.1 * x + 0.01 + 0.4 * h + 0.04), z = sig(0.2 * x + 0.02 - 0.5 * h + 0.05);
    const double n = std::tanh(0.3 * x + 0.03 + r * (0.6 * h + 0.06));
    CHECK(s.h.item() == doctest::Approx((1 - z) * n + z * h));
  }
}

TEST_CASE("a padded batch gives the same outputs and final states as running each sequence alone") {
  manual_seed(2);
  const std::vector<int64_t> lengths{5, 2, 4};
  const Tensor x = randn({3, 5, 4});
  for (const std::string& type : kCells) {
    CAPTURE(type);
    auto layer = nn::make_recurrent_layer(type, nn::RNNOptions(4, 3).with_num_layers(2).with_bidirectional(true));
    const nn::RNNResult batch = layer->forward(Variable(x), nn::RNNState{}, lengths);
    for (int64_t b = 0; b < 3; ++b) {
      const int64_t len = lengths[b];
      const Tensor alone_x = slice(slice(x, 0, b, b + 1), 1, 0, len);  // (1, len, 4)
      const nn::RNNResult alone = layer->forward(Variable(alone_x), nn::RNNState{});
      const Tensor out_b = slice(batch.output.value(), 0, b, b + 1);  // (1, 5, 6)
      CHECK(allclose(slice(out_b, 1, 0, len), alone.output.value(), 1e-5));
      if (len < 5) CHECK(max(abs(slice(out_b, 1, len, 5))).item() == 0);  // padded outputs are zero
      CHECK(allclose(slice(batch.state.h.value(), 1, b, b + 1), alone.state.h.value(), 1e-5));
      if (type == "lstm")
        CHECK(allclose(slice(batch.state.c.value(), 1, b, b + 1), alone.state.c.value(), 1e-5));
    }
  }
}

TEST_CASE("an initial state is used; inter-layer dropout only in training") {
  manual_seed(3);
  nn::GRU gru(nn::RNNOptions(2, 3).with_num_layers(2).with_dropout(real(0.5)));
  const Variable x(randn({1, 4, 2}));
  const nn::RNNState h0{Variable(randn({2, 1, 3})), Variable()};
  gru.eval();
  const Tensor a = gru.forward(x, h0).output.value();
  CHECK(a.to_vector() == gru.forward(x, h0).output.value().to_vector());
  CHECK(a.to_vector() != gru.forward(x, nn::RNNState{}).output.value().to_vector());
  gru.train();
  CHECK(gru.forward(x, h0).output.value().to_vector() != a.to_vector());
}

TEST_CASE("recurrent layer errors") {
  nn::LSTM lstm(nn::RNNOptions(8, 4));
  CHECK_THROWS_WITH_AS(lstm.forward(Variable(zeros({5, 8})), nn::RNNState{}),
                       "LSTM: expected input of shape (B, T, 8), got [5, 8] (did you forget the batch axis?)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(lstm.forward(Variable(zeros({2, 5, 8})), nn::RNNState{Variable(zeros({1, 3, 4})), Variable()}),
                       "LSTM: expected an initial h of shape [1, 2, 4], got [1, 3, 4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(lstm.forward(Variable(zeros({2, 5, 8})), nn::RNNState{}, {5, 6}),
                       "LSTM: expected lengths in 1..5, got 6", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::GRU(nn::RNNOptions(8, 4).with_num_layers(0)), "GRU: expected num_layers >= 1, got 0",
                       std::invalid_argument);
  nn::RNNCell cell(3, 2);
  CHECK_THROWS_WITH_AS(cell.forward(Variable(zeros({2, 4})), nn::RNNState{}),
                       "RNNCell: expected input of shape (B, 3), got [2, 4]", std::invalid_argument);
  nn::LSTMCell lstm_cell(3, 2);
  CHECK_THROWS_WITH_AS(lstm_cell.forward(Variable(zeros({2, 3})), nn::RNNState{Variable(zeros({2, 2})), Variable(zeros({1, 2}))}),
                       "LSTMCell: expected a cell state of shape [2, 2], got [1, 2]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::GRUCell(nn::GRUCellOptions(0, 2)), "GRUCell: expected positive input_size and hidden_size, got 0 and 2",
                       std::invalid_argument);
  // A model names its cell; a name that is not one is refused with the three it could be.
  // (The names are the registry's: a student's cell linked in with make test EXTRA=... is among them.)
  const std::string cells = "expected a recurrent cell named " + nn::join_names(nn::cells().names());
  CHECK_THROWS_WITH_AS(nn::make_recurrent_layer("LSTM", nn::RNNOptions(2, 2)), (cells + ", got 'LSTM'").c_str(),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::make_recurrent_cell("tcn", 2, 2), (cells + ", got 'tcn'").c_str(), std::invalid_argument);
}

TEST_CASE("it learns: each cell type remembers the token from two steps back") {
  // Targets y_t = x_{t-2} (0 for the first two steps): impossible without a memory.
  for (const std::string& type : kCells) {
    CAPTURE(type);
    const real acc = testing::recall_two_back(
        [&](const nn::RNNOptions& o) { return nn::make_recurrent_layer(type, o); });
    INFO("final batch accuracy " << acc);
    CHECK(acc > real(0.95));
  }
}
