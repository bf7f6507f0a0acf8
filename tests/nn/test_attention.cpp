// tests/nn/test_attention.cpp - attention weights: sum to 1, zero where masked, no NaN when a
// whole row is masked (forward and backward); score functions' shapes and formulas.
#include <cmath>

#include "nn/attention.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

TEST_CASE("weights sum to 1 and masked positions get exactly 0") {
  manual_seed(1);
  const Tensor mask = nn::padding_mask({4, 2, 3}, 4);
  CHECK(mask.to_vector() == std::vector<real>{0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1});
  for (nn::ScoreKind kind : {nn::ScoreKind::Dot, nn::ScoreKind::General, nn::ScoreKind::Concat, nn::ScoreKind::Additive,
                             nn::ScoreKind::ScaledDot, nn::ScoreKind::Cosine, nn::ScoreKind::MLP}) {
    CAPTURE(nn::score_name(kind));
    auto score = nn::make_score(kind, 6, 6, 8);
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
  CHECK(nn::make_score(nn::ScoreKind::Dot, 2, 2)->forward(q, k).value().to_vector() == std::vector<real>{11, -1});
  CHECK(allclose(nn::make_score(nn::ScoreKind::ScaledDot, 2, 2)->forward(q, k).value(),
                 from_vector({11 / std::sqrt(real(2)), -1 / std::sqrt(real(2))}, {1, 2})));
  CHECK(allclose(nn::make_score(nn::ScoreKind::Cosine, 2, 2)->forward(q, k).value(),
                 from_vector({11 / (std::sqrt(real(5)) * 5), -1 / std::sqrt(real(5))}, {1, 2}), 1e-5));
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
  auto dot = nn::make_score(nn::ScoreKind::Dot, 4, 4);
  CHECK_THROWS_WITH_AS(dot->forward(Variable(zeros({2, 4})), Variable(zeros({2, 3, 5}))),
                       "DotScore: expected keys of shape (B, S, 4), got [2, 3, 5]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(dot->forward(Variable(zeros({3, 4})), Variable(zeros({2, 3, 4}))),
                       "DotScore: expected a query of shape (2, 4) or (2, T, 4), got [3, 4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::make_score(nn::ScoreKind::Dot, 4, 5), "DotScore: expected query and key sizes to be equal, got 4 and 5",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::parse_score("bilinear"),
                       "attention: expected one of dot, general, concat, additive, scaled-dot, cosine, mlp, got 'bilinear'",
                       std::invalid_argument);
}
