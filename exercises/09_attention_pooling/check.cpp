// exercises/09_attention_pooling/check.cpp - make -C exercises check EX=09
#include <doctest/doctest.h>

#include "exercise.h"

using namespace seqgrad;

namespace {
// The formulas of exercise.h, one (b, s) pair at a time, with plain tensor arithmetic.
Tensor reference_weights(const Tensor& beh, const Tensor& cand, const std::vector<int64_t>& lengths, nn::Linear& W1,
                         nn::Linear& W2) {
  NoGradGuard no_grad;
  const int64_t B = beh.size(0), S = beh.size(1), H = beh.size(2);
  Tensor w = zeros({B, S});
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> e(lengths[b]);
    double top = -1e30, total = 0;
    for (int64_t s = 0; s < lengths[b]; ++s) {
      Tensor f = Tensor::empty({1, 3 * H});
      for (int64_t k = 0; k < H; ++k) {
        const real bv = beh.at({b, s, k}), cv = cand.at({b, k});
        f.at({0, k}) = bv;
        f.at({0, H + k}) = cv;
        f.at({0, 2 * H + k}) = bv * cv;
      }
      e[s] = W2.forward(relu(W1.forward(Variable(f)))).value().item();
      top = std::max(top, e[s]);
    }
    for (int64_t s = 0; s < lengths[b]; ++s) total += std::exp(e[s] - top);
    for (int64_t s = 0; s < lengths[b]; ++s) w.at({b, s}) = static_cast<real>(std::exp(e[s] - top) / total);
  }
  return w;
}
}  // namespace

TEST_CASE("09: the weights follow the activation unit, ignore padding and sum to 1") {
  manual_seed(9);
  nn::Linear W1(12, 8), W2(8, 1);
  const Tensor beh = randn({3, 5, 4}), cand = randn({3, 4});
  const std::vector<int64_t> lengths{5, 2, 3};
  const PoolResult r = attention_pool(Variable(beh), Variable(cand), lengths, W1, W2);
  REQUIRE(r.weights.shape() == Shape{3, 5});
  REQUIRE(r.pooled.shape() == Shape{3, 4});
  CHECK(max(abs(r.weights.value() - reference_weights(beh, cand, lengths, W1, W2))).item() < 1e-5);
  CHECK(r.weights.value().at({1, 2}) == 0);
  CHECK(r.weights.value().at({2, 4}) == 0);
  // u = sum_s a_s b_s
  const Tensor u = squeeze(matmul(unsqueeze(r.weights.value(), 1), beh), 1);
  CHECK(max(abs(r.pooled.value() - u)).item() < 1e-5);
}

TEST_CASE("09: a different candidate pools the same history differently") {
  manual_seed(10);
  nn::Linear W1(6, 4), W2(4, 1);
  const Variable beh(randn({1, 4, 2}));
  const PoolResult a = attention_pool(beh, Variable(from_vector({3, 0}, {1, 2})), {4}, W1, W2);
  const PoolResult b = attention_pool(beh, Variable(from_vector({0, -3}, {1, 2})), {4}, W1, W2);
  CHECK(max(abs(a.weights.value() - b.weights.value())).item() > 1e-3);
}

TEST_CASE("09: gradcheck through the pooled vector") {
  manual_seed(11);
  nn::Linear W1(9, 5), W2(5, 1);
  const std::vector<int64_t> lengths{3, 2};
  // Small W1 inputs keep the ReLU kinks away from the finite-difference steps.
  GradcheckOptions opt;
  opt.with_eps(1e-3).with_atol(2e-2);
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Variable>& v) { return attention_pool(v[0], v[1], lengths, W1, W2).pooled; },
      {randn({2, 3, 3}), randn({2, 3})}, opt);
  CHECK_MESSAGE(r.ok, r.message);
}
