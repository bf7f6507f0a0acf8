// tests/nn/test_layers.cpp - Module registration and naming, printing, each layer's shape
// contract and default initialisation, train/eval, and pinned error messages.
#include <cmath>

#include "nn/core/activation.h"
#include "nn/core/dropout.h"
#include "nn/core/embedding.h"
#include "nn/core/init.h"
#include "nn/core/layernorm.h"
#include "nn/core/linear.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

namespace {
// A two-level model, to test dotted names.
struct Block : nn::Module {
  Block() {
    linear1 = register_module("linear1", std::make_shared<nn::Linear>(4, 8));
    norm = register_module("norm", std::make_shared<nn::LayerNorm>(8));
  }
  std::string name() const override { return "Block"; }
  std::shared_ptr<nn::Linear> linear1;
  std::shared_ptr<nn::LayerNorm> norm;
};
struct Encoder : nn::Module {
  Encoder() {
    layers = register_module("layers", std::make_shared<nn::ModuleList<Block>>());
    layers->push_back(std::make_shared<Block>()).push_back(std::make_shared<Block>());
    scale = register_parameter("scale", ones({1}));
  }
  std::string name() const override { return "Encoder"; }
  std::shared_ptr<nn::ModuleList<Block>> layers;
  Variable scale;
};
}  // namespace

TEST_CASE("named_parameters gives dotted names in registration order") {
  Encoder enc;
  std::vector<std::string> names;
  for (auto& [n, p] : enc.named_parameters()) names.push_back(n);
  CHECK(names == std::vector<std::string>{"scale", "layers.0.linear1.weight", "layers.0.linear1.bias",
                                          "layers.0.norm.weight", "layers.0.norm.bias", "layers.1.linear1.weight",
                                          "layers.1.linear1.bias", "layers.1.norm.weight", "layers.1.norm.bias"});
  CHECK(enc.num_parameters() == 1 + 2 * (8 * 4 + 8 + 8 + 8));
  CHECK(enc.parameters().size() == 9);
}

TEST_CASE("a model prints as a tree") {
  nn::Sequential model({std::make_shared<nn::Linear>(2, 16), std::make_shared<nn::ReLU>(),
                        std::make_shared<nn::Dropout>(real(0.25)), std::make_shared<nn::Linear>(16, 3, false)});
  CHECK(model.to_string() ==
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=16, bias=true)\n"
        "  (1): ReLU()\n"
        "  (2): Dropout(p=0.25)\n"
        "  (3): Linear(in_features=16, out_features=3, bias=false)\n"
        ")");
  CHECK(model.forward(Variable(randn({5, 2}))).shape() == Shape{5, 3});
}

TEST_CASE("train/eval reaches every child; zero_grad clears every gradient") {
  auto drop = std::make_shared<nn::Dropout>();
  nn::Sequential model({std::make_shared<nn::Linear>(3, 3), drop});
  model.eval();
  CHECK_FALSE(drop->is_training());
  const Variable x(randn({4, 3}));
  CHECK(model.forward(x).value().to_vector() == model.forward(x).value().to_vector());  // no dropout in eval
  model.train();
  CHECK(drop->is_training());
  sum(model.forward(x)).backward();
  for (const Variable& p : model.parameters()) CHECK(p.grad().defined());
  model.zero_grad();
  for (const Variable& p : model.parameters()) CHECK_FALSE(p.grad().defined());
}

// [docs:linear_test]
TEST_CASE("Linear: shapes, default initialisation range, values") {
  manual_seed(1);
  nn::Linear lin(64, 32);
  CHECK(lin.weight.shape() == Shape{32, 64});
  CHECK(lin.bias.shape() == Shape{32});
  const real bound = 1 / std::sqrt(real(64));
  CHECK(max(abs(lin.weight.value())).item() <= bound);
  CHECK(max(abs(lin.bias.value())).item() <= bound);
  CHECK(max(abs(lin.weight.value())).item() > bound * real(0.9));  // uses the whole range
  CHECK(lin.forward(Variable(randn({8, 64}))).shape() == Shape{8, 32});
  CHECK(lin.forward(Variable(randn({2, 5, 64}))).shape() == Shape{2, 5, 32});
  const Tensor x = randn({3, 64});
  CHECK(allclose(lin.forward(Variable(x)).value(), matmul(x, lin.weight.value(), false, true) + lin.bias.value(), 1e-5));
}
// [docs:end]

TEST_CASE("Embedding: shapes, padding row, N(0, 1) init") {
  manual_seed(2);
  nn::Embedding emb(1000, 16, /*padding_idx=*/0);
  CHECK(emb.forward(from_vector({0, 5, 7, 0}, {2, 2})).shape() == Shape{2, 2, 16});
  CHECK(max(abs(emb.forward(from_vector({0})).value())).item() == 0);
  const Tensor w = emb.weight.value();
  CHECK(std::abs(mean(w).item()) < 0.05);
  CHECK(std::abs(mean(w * w).item() - 1) < 0.05);
  CHECK(emb.to_string() == "Embedding(1000, 16, padding_idx=0)");
}

TEST_CASE("LayerNorm: normalised output, shape") {
  manual_seed(3);
  nn::LayerNorm ln(6);
  const Tensor y = ln.forward(Variable(randn({4, 6}) * real(5) + real(3))).value();
  CHECK(allclose(mean(y, -1), zeros({4}), 1e-5));
  CHECK(allclose(mean(y * y, -1), ones({4}), 1e-3));
  CHECK(ln.to_string() == "LayerNorm((6,), eps=1e-05, elementwise_affine=true)");
}

TEST_CASE("Dropout: zeroes about p of the elements and keeps the mean") {
  manual_seed(4);
  nn::Dropout drop(real(0.3));
  const Tensor y = drop.forward(Variable(ones({100000}))).value();
  const real zeros_fraction = mean(eq(y, scalar(0))).item();
  CHECK(zeros_fraction == doctest::Approx(0.3).epsilon(0.05));
  CHECK(mean(y).item() == doctest::Approx(1).epsilon(0.02));
}

TEST_CASE("initialisers follow PyTorch's formulas") {
  manual_seed(5);
  Tensor w = Tensor::empty({200, 300});
  nn::init::xavier_uniform_(w);
  CHECK(max(abs(w)).item() <= std::sqrt(real(6.0 / 500)));
  nn::init::kaiming_normal_(w, 0, nn::init::FanMode::FanIn, nn::init::Nonlinearity::Relu);
  CHECK(std::sqrt(mean(w * w).item()) == doctest::Approx(std::sqrt(2.0 / 300)).epsilon(0.03));
  nn::init::xavier_normal_(w, 2);
  CHECK(std::sqrt(mean(w * w).item()) == doctest::Approx(2 * std::sqrt(2.0 / 500)).epsilon(0.03));
  CHECK(nn::init::calculate_gain(nn::init::Nonlinearity::Tanh) == doctest::Approx(5.0 / 3));
  CHECK(nn::init::fans({8, 4, 3, 3}).fan_in == 36);
}

TEST_CASE("layer errors say what was expected and what was found") {
  nn::Linear lin(64, 32);
  CHECK_THROWS_WITH_AS(lin.forward(Variable(zeros({8, 32}))),
                       "Linear: expected input with 64 features (last axis), got shape [8, 32]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::Dropout(real(-0.1)), "Dropout: expected a probability p in [0, 1], got -0.1",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(dropout(Variable(ones({2})), real(1.5), true), "dropout: expected a probability p in [0, 1], got 1.5",
                       std::invalid_argument);
  nn::Embedding emb(5, 2);
  CHECK_THROWS_WITH_AS(emb.forward(from_vector({1, 7})), "embedding: index 7 is out of range for axis 0 of size 5",
                       std::out_of_range);
  CHECK_THROWS_WITH_AS(nn::Embedding(5, 2, 5), "Embedding: padding_idx 5 is out of range for 5 embeddings",
                       std::out_of_range);
  nn::LayerNorm ln(4);
  CHECK_THROWS_WITH_AS(ln.forward(Variable(zeros({2, 3}))),
                       "LayerNorm: expected input with 4 features (last axis), got shape [2, 3]", std::invalid_argument);
  nn::Sequential seq;
  CHECK_THROWS_WITH_AS(seq.push_back(nullptr), "Sequential: cannot register a null module as '0'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::Linear(0, 3), "Linear: expected positive in_features and out_features, got 0 and 3",
                       std::invalid_argument);
}
