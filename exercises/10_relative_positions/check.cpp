// exercises/10_relative_positions/check.cpp - make -C exercises check EX=10
#include <doctest/doctest.h>

#include <cmath>

#include "exercise.h"

using namespace seqgrad;

TEST_CASE("10: a zero bias is ordinary scaled dot-product attention") {
  manual_seed(10);
  const Variable q(randn({2, 3, 4})), k(randn({2, 5, 4})), v(randn({2, 5, 4}));
  const nn::AttentionResult mine = relative_attention(q, k, v, Variable(zeros({5})), 2);
  const nn::AttentionResult ref = nn::scaled_dot_product_attention(q, k, v);
  CHECK(max(abs(mine.context.value() - ref.context.value())).item() < 1e-5);
}

TEST_CASE("10: with q = 0 the weights depend only on the clipped distance") {
  // Scores are bias[clip(s - t) + K] alone. K = 1: distances <= -1 share bias[0], 0 has bias[1],
  // >= 1 share bias[2].
  const Variable q(zeros({1, 3, 2})), k(randn({1, 4, 2})), v(randn({1, 4, 2}));
  const Variable bias(from_vector({0, 2, -1}));
  const Tensor w = relative_attention(q, k, v, bias, 1).weights.value();  // (1, 3, 4)
  REQUIRE(w.shape() == Shape{1, 3, 4});
  for (int64_t t = 0; t < 3; ++t) {
    double e[4], total = 0;
    for (int64_t s = 0; s < 4; ++s) {
      const int64_t d = std::max<int64_t>(-1, std::min<int64_t>(1, s - t));
      e[s] = std::exp(bias.value().at({d + 1}));
      total += e[s];
    }
    for (int64_t s = 0; s < 4; ++s) {
      CAPTURE(t);
      CAPTURE(s);
      CHECK(w.at({0, t, s}) == doctest::Approx(e[s] / total).epsilon(1e-5));
    }
  }
}

TEST_CASE("10: masks still give exactly zero weight") {
  manual_seed(11);
  const Variable q(randn({1, 4, 2})), k(randn({1, 4, 2})), v(randn({1, 4, 2}));
  const Tensor w = relative_attention(q, k, v, Variable(randn({7})), 3, nn::causal_mask(4)).weights.value();
  CHECK(w.at({0, 0, 1}) == 0);
  CHECK(w.at({0, 2, 3}) == 0);
  CHECK(w.at({0, 3, 0}) > 0);
}

TEST_CASE("10: gradcheck with respect to q, k, v and the bias") {
  manual_seed(12);
  const GradcheckResult r = gradcheck(
      [](const std::vector<Variable>& x) { return relative_attention(x[0], x[1], x[2], x[3], 2).context; },
      {randn({2, 3, 4}), randn({2, 4, 4}), randn({2, 4, 4}), randn({5})});
  CHECK_MESSAGE(r.ok, r.message);
  // ... and the bias really is learned: it gets a non-zero gradient.
  const Variable bias(randn({5}), true);
  sum(relative_attention(Variable(randn({1, 3, 4})), Variable(randn({1, 4, 4})), Variable(randn({1, 4, 4})), bias, 2).context *
      Variable(randn({1, 3, 4}))).backward();
  REQUIRE(bias.grad().defined());
  CHECK(max(abs(bias.grad())).item() > 0);
}
