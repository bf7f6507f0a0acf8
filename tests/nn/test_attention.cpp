// tests/nn/test_attention.cpp - attention weights: sum to 1, zero where masked, no NaN when a
// whole row is masked (forward and backward); score functions' shapes and formulas; the
// weighted sum.
#include <cmath>

#include "nn/attention/attention.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

TEST_CASE("weights sum to 1 and masked positions get exactly 0") {
  manual_seed(1);
  const Tensor mask = nn::padding_mask({4, 2, 3}, 4);
  CHECK(mask.to_vector() == std::vector<real>{0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1});
  // Every registered score (a new one is tested here as soon as it registers).
  for (const std::string& kind : nn::scores().names()) {
    CAPTURE(kind);
    auto score = nn::make_score(kind, 6, 6, 8, /*max_positions=*/5);
    const Variable q(randn({3, 6})), k(randn({3, 4, 6}));
    const Variable scores = score->forward(q, k);
    CHECK(scores.shape() == Shape{3, 4});
    CHECK(score->forward(Variable(randn({3, 5, 6})), k).shape() == Shape{3, 5, 4});
    const nn::AttentionResult r = nn::attend(scores, k, mask);
    CHECK(allclose(sum(r.weights.value(), -1), ones({3}), 1e-5));
    CHECK(r.weights.value().at({1, 2}) == 0);
    CHECK(r.weights.value().at({1, 3}) == 0);
    CHECK(r.weights.value().at({2, 3}) == 0);
    CHECK(r.context.shape() == Shape{3, 6});
  }
}

TEST_CASE("location score: W q, one row per source position, the keys only say how many") {
  manual_seed(2);
  auto score = nn::make_score("location", 3, 5, 0, /*max_positions=*/4);
  CHECK(score->to_string().rfind("LocationScore(3, max_positions=4,\n  (W): Linear(in_features=3, out_features=4, bias=false)", 0) == 0);
  const Tensor q = randn({2, 3});
  const Tensor W = dynamic_cast<nn::Linear&>(*score->named_children()[0].second).weight.value();  // (4, 3)
  const Tensor scores = score->forward(Variable(q), Variable(randn({2, 3, 5}))).value();  // S = 3 of the 4 rows
  CHECK(scores.shape() == Shape{2, 3});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t s = 0; s < 3; ++s) {
      double expected = 0;
      for (int64_t i = 0; i < 3; ++i) expected += W.at({s, i}) * q.at({b, i});
      CHECK(scores.at({b, s}) == doctest::Approx(expected).epsilon(1e-5));
    }
  // Different keys, same scores: where to look comes from the query alone.
  CHECK(score->forward(Variable(q), Variable(randn({2, 3, 5}))).value().to_vector() == scores.to_vector());
  CHECK_THROWS_WITH_AS(score->forward(Variable(q), Variable(randn({2, 5, 5}))),
                       "LocationScore: the source has 5 positions, more than the 4 it was built for", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::make_score("location", 3, 5),
                       "LocationScore: expected max_positions > 0 (the longest source it scores), got 0",
                       std::invalid_argument);
  CHECK(nn::scores().contains("location"));
}

TEST_CASE("a fully masked row gives zero weights and zero gradients, never NaN") {
  Variable scores(randn({2, 3}), true);
  const Tensor mask = from_vector({1, 1, 1, 0, 1, 0}, {2, 3});
  Variable values(randn({2, 3, 4}), true);
  const nn::AttentionResult r = nn::attend(scores, values, mask);
  CHECK(r.weights.value().to_vector()[0] == 0);
  CHECK(max(abs(slice(r.context.value(), 0, 0, 1))).item() == 0);
  (sum(r.context * r.context) + sum(r.weights * r.weights)).backward();
  for (real g : scores.grad().to_vector()) CHECK(std::isfinite(g));
  for (real g : values.grad().to_vector()) CHECK(std::isfinite(g));
  CHECK(max(abs(slice(scores.grad(), 0, 0, 1))).item() == 0);
}

TEST_CASE("score formulas: dot, scaled dot, cosine against hand computation") {
  const Variable q(from_vector({1, 2}, {1, 2})), k(from_vector({3, 4, -1, 0}, {1, 2, 2}));
  CHECK(nn::make_score("dot", 2, 2)->forward(q, k).value().to_vector() == std::vector<real>{11, -1});
  CHECK(allclose(nn::make_score("scaled-dot", 2, 2)->forward(q, k).value(),
                 from_vector({11 / std::sqrt(real(2)), -1 / std::sqrt(real(2))}, {1, 2})));
  CHECK(allclose(nn::make_score("cosine", 2, 2)->forward(q, k).value(),
                 from_vector({11 / (std::sqrt(real(5)) * 5), -1 / std::sqrt(real(5))}, {1, 2}), 1e-5));
}

TEST_CASE("soft_context: the weighted sum of the values, for one query or T of them") {
  const Variable values(from_vector({1, 2, 10, 20, 100, 200}, {1, 3, 2}));  // three values of width 2
  const Variable a(from_vector({0.5, 0.25, 0.25}, {1, 3}));
  CHECK(nn::soft_context(a, values).value().to_vector() == std::vector<real>{0.5 + 2.5 + 25, 1 + 5 + 50});  // (1, 2)
  const Variable a2(from_vector({0.5, 0.25, 0.25, 0, 1, 0}, {1, 2, 3}));                              // T = 2
  const Tensor c = nn::soft_context(a2, values).value();
  CHECK(c.shape() == Shape{1, 2, 2});
  CHECK(c.to_vector() == std::vector<real>{28, 56, 10, 20});
  CHECK_THROWS_WITH_AS(nn::soft_context(a, Variable(zeros({1, 4, 2}))),
                       "soft_context: expected weights (B, S) or (B, T, S) and values (B, S, H), got [1, 3] and [1, 4, 2]",
                       std::invalid_argument);
}

TEST_CASE("scaled dot-product attention with a causal mask: position t sees only 0..t") {
  manual_seed(2);
  const Variable q(randn({2, 3, 5, 4})), k(randn({2, 3, 5, 4})), v(randn({2, 3, 5, 4}));
  const nn::AttentionResult r = nn::scaled_dot_product_attention(q, k, v, nn::causal_mask(5));
  CHECK(r.context.shape() == Shape{2, 3, 5, 4});
  CHECK(r.weights.shape() == Shape{2, 3, 5, 5});
  const Tensor w = r.weights.value();
  CHECK(w.at({1, 2, 0, 0}) == doctest::Approx(1));
  for (int64_t t = 0; t < 5; ++t)
    for (int64_t s = t + 1; s < 5; ++s) CHECK(w.at({0, 1, t, s}) == 0);
}

TEST_CASE("attention errors") {
  auto dot = nn::make_score("dot", 4, 4);
  CHECK_THROWS_WITH_AS(dot->forward(Variable(zeros({2, 4})), Variable(zeros({2, 3, 5}))),
                       "DotScore: expected keys of shape (B, S, 4), got [2, 3, 5]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(dot->forward(Variable(zeros({3, 4})), Variable(zeros({2, 3, 4}))),
                       "DotScore: expected a query of shape (2, 4) or (2, T, 4), got [3, 4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::make_score("dot", 4, 5), "DotScore: expected query and key sizes to be equal, got 4 and 5",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::make_score("bilinear", 4, 4),
                       "expected an attention score named additive, concat, cosine, dot, general, location, mlp or scaled-dot, got 'bilinear'",
                       std::invalid_argument);
}
