// tests/nn/test_din.cpp - DIN's activation unit: names and shapes, raw weights that are 0 at
// padding, the formula one pair at a time, errors, and "it learns" on the click task.
#include <cmath>

#include "data/metrics.h"
#include "data/recommend.h"
#include "nn/recommenders/din.h"
#include "nn/core/embedding.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

TEST_CASE("DIN: names, shapes, and each weight from its own (behaviour, candidate) pair") {
  manual_seed(1);
  nn::DINActivationUnit din(nn::DINOptions(3).with_hidden(5, 4));
  std::vector<std::string> names;
  for (auto& [n, p] : din.named_parameters()) names.push_back(n + " " + to_string(p.shape()));
  CHECK(names == std::vector<std::string>{"W1.weight [5, 12]", "W1.bias [5]", "W2.weight [4, 5]", "W2.bias [4]",
                                          "W3.weight [1, 4]", "W3.bias [1]"});
  CHECK(din.to_string().rfind("DINActivationUnit(3, hidden=(5, 4),", 0) == 0);
  const Tensor b = randn({2, 4, 3}), c = randn({2, 3});
  const nn::DINResult r = din.forward(Variable(b), Variable(c), {4, 2});
  CHECK(r.pooled.shape() == Shape{2, 3});
  CHECK(r.weights.shape() == Shape{2, 4});
  CHECK(r.weights.value().at({1, 2}) == 0);  // padding
  CHECK(r.weights.value().at({1, 3}) == 0);
  // One pair at a time, by the formula: w = W3 sig(W2 sig(W1 [b; c; b - c; b * c] + b1) + b2) + b3.
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t s = 0; s < (i == 0 ? 4 : 2); ++s) {
      const Tensor bs = slice(slice(b, 0, i, i + 1), 1, s, s + 1).reshape({1, 3}), ci = slice(c, 0, i, i + 1);
      const Variable x(concat({bs, ci, bs - ci, bs * ci}, 1));  // (1, 12)
      const Variable w = din.W3->forward(sigmoid(din.W2->forward(sigmoid(din.W1->forward(x)))));
      CHECK(w.item() == doctest::Approx(r.weights.value().at({i, s})).epsilon(1e-5));
    }
  // Not a softmax: the weights need not sum to 1, and u is their plain weighted sum.
  const Tensor expected = squeeze(matmul(unsqueeze(r.weights.value(), 1), b), 1);
  CHECK(allclose(r.pooled.value(), expected, 1e-5));
  // Without lengths, every position counts.
  CHECK(din.forward(Variable(b), Variable(c)).weights.value().at({1, 3}) != 0);
}

TEST_CASE("DIN errors say what was expected and what was found") {
  nn::DINActivationUnit din(nn::DINOptions(3));
  CHECK_THROWS_WITH_AS(din.forward(Variable(zeros({2, 4, 5})), Variable(zeros({2, 3}))),
                       "DINActivationUnit: expected behaviours of shape (B, S, 3), got [2, 4, 5]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(din.forward(Variable(zeros({2, 4, 3})), Variable(zeros({3, 3}))),
                       "DINActivationUnit: expected a candidate of shape [2, 3], got [3, 3]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(din.forward(Variable(zeros({2, 4, 3})), Variable(zeros({2, 3})), {4, 5}),
                       "DINActivationUnit: expected lengths in 1..4, got 5", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::DINActivationUnit(nn::DINOptions(3).with_hidden(0, 4)),
                       "DINActivationUnit: expected positive sizes, got embed_dim 3, hidden 0 and 4", std::invalid_argument);
}

// Whether a candidate's category is among a user's liked ones (data/recommend.h): pooled with
// the activation unit, the history tells.
TEST_CASE("it learns: DIN pooling tells liked candidates from others") {
  manual_seed(5);
  const auto task = data::ClickTaskOptions().with_categories(8).with_per_category(2).with_max_liked(3).with_clicks(3, 8);
  const data::ClickData train = data::make_click_histories(data::ClickTaskOptions(task).with_n(3000).with_seed(1));
  const data::ClickData test = data::make_click_histories(data::ClickTaskOptions(task).with_n(500).with_seed(2));
  const int64_t H = 8;
  nn::Embedding items(train.num_items + 1, H, /*padding_idx=*/train.num_items);
  nn::DINActivationUnit din(nn::DINOptions(H).with_hidden(16, 8));
  nn::Linear head(2 * H, 2);
  std::vector<Variable> params = items.parameters();
  for (nn::Module* m : std::vector<nn::Module*>{&din, &head})
    for (const Variable& p : m->parameters()) params.push_back(p);
  nn::Adam opt(params, nn::AdamOptions(real(0.01)));
  auto logits = [&](const data::ClickData& d, int64_t start, int64_t n) {
    const std::vector<int64_t> lengths(d.lengths.begin() + start, d.lengths.begin() + start + n);
    const Variable c = items.forward(slice(d.candidate, 0, start, start + n));  // (n, H)
    const nn::DINResult r = din.forward(items.forward(slice(d.history, 0, start, start + n)), c, lengths);
    return head.forward(concat({r.pooled, c}, 1));  // (n, 2)
  };
  for (int step = 0; step < 600; ++step) {
    const int64_t start = (step * 50) % 3000;
    opt.zero_grad();
    nn::cross_entropy(logits(train, start, 50), slice(train.label, 0, start, start + 50)).backward();
    opt.step();
  }
  NoGradGuard no_grad;
  const Tensor test_logits = logits(test, 0, 500).value();
  const double accuracy = mean(eq(argmax(test_logits, -1), test.label)).item();
  std::vector<double> scores;
  std::vector<int> labels;
  for (int64_t k = 0; k < 500; ++k) {
    scores.push_back(test_logits.at({k, 1}) - test_logits.at({k, 0}));
    labels.push_back(static_cast<int>(test.label.data()[k]));
  }
  const double area = data::auc(scores, labels);
  MESSAGE("test accuracy ", accuracy, ", AUC ", area);
  CHECK(accuracy > 0.85);
  CHECK(area > 0.9);
}
