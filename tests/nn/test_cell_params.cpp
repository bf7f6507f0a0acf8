// tests/nn/test_cell_params.cpp - cells that declare their own parameters (nn/recurrent/rnn.h
// CellParameter): a layer and a cell hold exactly what the cell declares, under its names with
// PyTorch's suffixes; the step receives them by name; a declared cell trains; PyTorch's four are
// still what rnn, lstm and gru declare; and a declaration that cannot work is refused.
// The gradient check is in test_grad_cell_params.cpp; IndRNN, a cell of the coursework, is
// tested by tests/examples/coursework_indrnn.cpp.
#include "nn/core/embedding.h"
#include "nn/core/linear.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "nn/recurrent/gru.h"
#include "nn/decoding/model_kind.h"
#include "nn/recurrent/lstm.h"
#include "tests/nn/mrnn_cell.h"
#include "tests/nn/recalls_two_back.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::MRNN;
using seqgrad::testing::MRNNCell;

namespace {

// A cell whose declaration is given by the test, to check what is refused.
class Declared : public nn::RecurrentLayer {
 public:
  Declared(const nn::RNNOptions& o, const nn::CellParameters& declare) : nn::RecurrentLayer("Declared", o, declare) {}

 protected:
  nn::RNNState cell_step(const Variable& gx, const nn::RNNState&, const Weights&) const override { return {gx, {}}; }
};

std::vector<std::string> names_and_shapes(const nn::Module& m) {
  std::vector<std::string> out;
  for (auto& [n, p] : m.named_parameters()) out.push_back(n + " " + to_string(p.shape()));
  return out;
}

}  // namespace

TEST_SUITE_BEGIN("cell_params");

TEST_CASE("a declared cell's layer holds exactly its parameters, with PyTorch's suffixes") {
  manual_seed(1);
  MRNN layer(nn::RNNOptions(5, 3).with_num_layers(2).with_bidirectional(true));
  CHECK(names_and_shapes(layer) ==
        std::vector<std::string>{"weight_ih_l0 [6, 5]", "weight_mh_l0 [3, 3]", "weight_hm_l0 [3, 3]", "bias_ih_l0 [6]",
                                 "weight_ih_l0_reverse [6, 5]", "weight_mh_l0_reverse [3, 3]",
                                 "weight_hm_l0_reverse [3, 3]", "bias_ih_l0_reverse [6]", "weight_ih_l1 [6, 6]",
                                 "weight_mh_l1 [3, 3]", "weight_hm_l1 [3, 3]", "bias_ih_l1 [6]",
                                 "weight_ih_l1_reverse [6, 6]", "weight_mh_l1_reverse [3, 3]",
                                 "weight_hm_l1_reverse [3, 3]", "bias_ih_l1_reverse [6]"});
  // Each parameter's own init: the bias starts at zero, the weights in U(-1/sqrt(3), 1/sqrt(3)).
  CHECK(max(abs(layer.weights(1, 1)["bias_ih"].value())).item() == 0);
  const real bound = 1 / std::sqrt(real(3));
  CHECK(max(abs(layer.weights(1, 1)["weight_hm"].value())).item() <= bound);
  CHECK(max(abs(layer.weights(1, 1)["weight_hm"].value())).item() > 0);
  // The names a step reads, in the order declared; the handles are the registered parameters.
  CHECK(layer.weights(0, 1).names() == std::vector<std::string>{"weight_ih", "weight_mh", "weight_hm", "bias_ih"});
  CHECK(layer.weights(0, 1)["weight_mh"].value().data() == layer.named_parameters()[5].second.value().data());
  CHECK_FALSE(layer.weights(0, 0).optional("bias_hh").defined());
  // Without biases, the cell leaves bias_ih out; the layer adds none.
  MRNN no_bias(nn::RNNOptions(5, 3).with_bias(false));
  CHECK(names_and_shapes(no_bias) == std::vector<std::string>{"weight_ih_l0 [6, 5]", "weight_mh_l0 [3, 3]",
                                                              "weight_hm_l0 [3, 3]"});
  // Shapes of a run: (B, T, D*H) out, (L*D, B, H) final state.
  const nn::RNNResult r = layer.forward(Variable(randn({4, 7, 5})), nn::RNNState{}, {7, 3, 1, 5});
  CHECK(r.output.shape() == Shape{4, 7, 6});
  CHECK(r.state.h.shape() == Shape{4, 4, 3});
  CHECK_FALSE(r.state.c.defined());
}

TEST_CASE("a declared cell's step, as a cell and as a layer, is its equations") {
  manual_seed(2);
  MRNNCell cell(nn::CellOptions(4, 3));
  CHECK(names_and_shapes(cell) ==
        std::vector<std::string>{"weight_ih [6, 4]", "weight_mh [3, 3]", "weight_hm [3, 3]", "bias_ih [6]"});
  // libtorch's members are the parameters of those names; a cell without weight_hh has none.
  CHECK(cell.weight_ih.value().data() == cell.weights["weight_ih"].value().data());
  CHECK_FALSE(cell.weight_hh.defined());
  CHECK_FALSE(cell.bias_hh.defined());
  cell.weights["bias_ih"].value().copy_(randn({6}));
  const Variable x(randn({2, 4})), h(randn({2, 3}));
  const Tensor W = cell.weight_ih.value(), Wmh = cell.weights["weight_mh"].value(), Whm = cell.weights["weight_hm"].value();
  const Tensor gx = matmul(x.value(), W, false, true) + cell.bias_ih.value();                 // (2, 6)
  const Tensor m = slice(gx, 1, 3, 6) * matmul(h.value(), Wmh, false, true);                  // (2, 3)
  const Tensor expected = tanh(slice(gx, 1, 0, 3) + matmul(m, Whm, false, true));             // (2, 3)
  const nn::RNNState next = cell.forward(x, nn::RNNState{h, Variable()});
  CHECK(testing::allclose(next.h.value(), expected, 1e-5, 1e-6));
  // The layer, given the cell's weights, runs the same step at every position.
  MRNN layer(nn::RNNOptions(4, 3));
  for (const std::string& name : cell.weights.names()) layer.weights(0, 0)[name].value().copy_(cell.weights[name].value());
  const nn::RNNResult r = layer.forward(reshape(x, {2, 1, 4}), nn::RNNState{reshape(h, {1, 2, 3}), Variable()});
  CHECK(testing::allclose(reshape(r.output, {2, 3}).value(), expected, 1e-5, 1e-6));
}

TEST_CASE("it learns: a declared cell remembers the token from two steps back") {
  // Targets y_t = x_{t-2}, as the built-in cells' test in test_rnn.cpp.
  const real acc = testing::recall_two_back([](const nn::RNNOptions& o) { return std::make_shared<MRNN>(o); });
  INFO("final batch accuracy " << acc);
  CHECK(acc > real(0.95));
}

TEST_CASE("rnn, lstm and gru declare PyTorch's four, drawn in PyTorch's order") {
  // The same numbers as a layer that declares pytorch_parameters itself: the declaration
  // changes neither names nor the order the generator is drawn in.
  for (const auto& gates_and_cell : std::vector<std::pair<int64_t, std::string>>{{1, "rnn"}, {4, "lstm"}, {3, "gru"}}) {
    const int64_t gates = gates_and_cell.first;
    const std::string& cell = gates_and_cell.second;
    CAPTURE(cell);
    manual_seed(5);
    const auto built_in = nn::make_recurrent_layer(cell, nn::RNNOptions(3, 2).with_num_layers(2).with_bidirectional(true));
    manual_seed(5);
    const Declared declared(nn::RNNOptions(3, 2).with_num_layers(2).with_bidirectional(true),
                            [gates](int64_t in, int64_t hidden, bool bias) {
                              return nn::pytorch_parameters(gates, in, hidden, bias);
                            });
    const auto a = built_in->named_parameters(), b = declared.named_parameters();
    REQUIRE(a.size() == 16);
    REQUIRE(b.size() == 16);
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].first == b[i].first);
      CHECK(max(abs(a[i].second.value() - b[i].second.value())).item() == 0);
    }
    CHECK(built_in->weights(1, 1).names() == std::vector<std::string>{"weight_ih", "weight_hh", "bias_ih", "bias_hh"});
  }
  CHECK(names_and_shapes(nn::GRUCell(nn::GRUCellOptions(4, 3).with_bias(false))) ==
        std::vector<std::string>{"weight_ih [9, 4]", "weight_hh [9, 3]"});
}

TEST_CASE("a declaration that cannot work is refused, naming what was expected") {
  auto declaring = [](std::vector<nn::CellParameter> p) {
    return [p](int64_t, int64_t, bool) { return p; };
  };
  const nn::RNNOptions o(5, 3);
  CHECK_THROWS_WITH_AS(Declared(o, declaring({{"weight_hh", {3, 3}, nullptr}})),
                       "Declared: expected the declared parameters to include weight_ih (K, 5), the input's "
                       "projection, got none",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Declared(o, declaring({{"weight_ih", {3, 4}, nullptr}})),
                       "Declared: expected weight_ih of shape (K, 5), got [3, 4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(Declared(o, declaring({{"weight_ih", {3, 5}, nullptr}, {"bias_ih", {6}, nullptr}})),
                       "Declared: expected bias_ih of shape [3] (one per row of weight_ih), got [6]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Declared(o, declaring({{"weight_ih", {3, 5}, nullptr}, {"u", {3}, nullptr}, {"u", {3}, nullptr}})),
                       "Declared: expected each parameter declared once, got 'u' twice", std::invalid_argument);
  CHECK_THROWS_WITH_AS(Declared(o, declaring({{"weight_ih", {3, 5}, nullptr}, {"", {3}, nullptr}})),
                       "Declared: expected every declared parameter to have a name, got one without",
                       std::invalid_argument);
  // A step that asks for a parameter its cell did not declare is told which there are.
  MRNN layer(o);
  CHECK_THROWS_WITH_AS(layer.weights(0, 0)["weight_hh"],
                       "CellWeights: expected a parameter named weight_ih, weight_mh, weight_hm or bias_ih, got "
                       "'weight_hh'",
                       std::invalid_argument);
}

TEST_CASE("a cell's own options: none for rnn, lstm and gru; a \"{cell}\" kind's options see the cell") {
  for (const std::string cell : {"rnn", "lstm", "gru"}) {
    CHECK(nn::cells().get(cell).options.empty());
    nn::Settings chosen;
    chosen.set("cell", io::Json(cell));
    CHECK(nn::cell_options(&chosen).empty());
  }
  const nn::Settings none;
  CHECK(nn::cell_options(&none).empty());  // no cell chosen yet: no cell's options
  // model_kind("gru-attn") is the "{cell}-attn" kind, its options function told the cell: the
  // same options, asked for again by name, are the same object.
  const nn::ModelKind& kind = nn::model_kind("gru-attn");
  CHECK(kind.name == "{cell}-attn");
  CHECK(&kind == &nn::model_kind("gru-attn"));
  CHECK(&kind != &nn::model_kind("lstm-attn"));
  // "cell" is not an option: it is never in the settings a kind resolves, so not in a checkpoint.
  const nn::Settings s = nn::resolve_options(kind, [](const nn::Option&) { return io::Json(); },
                                             [](const nn::Option& o) { return o.key; });
  CHECK_FALSE(s.has("cell"));
  CHECK(s.text("attention") == "general");
}

TEST_SUITE_END();
