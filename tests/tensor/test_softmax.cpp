// tests/tensor/test_softmax.cpp - softmax, log-softmax and cross-entropy values, stability at
// large magnitudes, fully masked rows, label smoothing and ignore_index.
#include <cmath>
#include <limits>

#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

TEST_CASE("softmax rows sum to 1 and match the formula") {
  const Tensor x = from_vector({1, 2, 3, 1, 1, 1}, {2, 3});
  const Tensor y = softmax(x, -1);
  const double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0), z = e1 + e2 + e3;
  CHECK(allclose(y, from_vector({real(e1 / z), real(e2 / z), real(e3 / z), 1 / real(3), 1 / real(3), 1 / real(3)}, {2, 3})));
  CHECK(allclose(sum(softmax(randn({4, 5, 6}), 1), 1), ones({4, 6})));
  CHECK(allclose(log_softmax(x, -1), log(y)));
}

TEST_CASE("softmax, log_softmax and cross-entropy stay finite at magnitude 1000") {
  const Tensor x = from_vector({1000, -1000, 0, 999}, {1, 4});
  const Tensor y = softmax(x, -1), ly = log_softmax(x, -1);
  for (real v : y.to_vector()) CHECK(std::isfinite(v));
  for (real v : ly.to_vector()) CHECK(std::isfinite(v));
  CHECK(y.at({0, 0}) == doctest::Approx(1 / (1 + std::exp(-1.0))));
  const CrossEntropyForward ce = cross_entropy_forward(x, from_vector({1}), -100, 0);
  CHECK(ce.loss.item() == doctest::Approx(2000 + std::log(1 + std::exp(-1.0))));
  const Tensor d = cross_entropy_backward(x, from_vector({1}), ce.lse, ones({1}), -100, 0);
  for (real v : d.to_vector()) CHECK(std::isfinite(v));
}

TEST_CASE("a fully masked row (all -inf) gives zeros, never NaN") {
  const real inf = std::numeric_limits<real>::infinity();
  const Tensor x = from_vector({-inf, -inf, -inf, 0, 1, -inf}, {2, 3});
  const Tensor y = softmax(x, -1);
  CHECK(y.at({0, 0}) == 0);
  CHECK(y.at({0, 2}) == 0);
  CHECK(y.at({1, 2}) == 0);
  CHECK(y.at({1, 0}) + y.at({1, 1}) == doctest::Approx(1));
  const Tensor dx = softmax_backward(y, ones({2, 3}), -1);
  for (real v : dx.to_vector()) CHECK(v == 0);
}

TEST_CASE("cross-entropy: plain, label smoothing, ignore_index") {
  // logits (2, 3), targets {2, 0}
  const Tensor x = from_vector({1, 2, 3, 0, 0, 0}, {2, 3});
  const Tensor t = from_vector({2, 0});
  const double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)), lse1 = std::log(3.0);
  const CrossEntropyForward plain = cross_entropy_forward(x, t, -100, 0);
  CHECK(plain.loss.at({0}) == doctest::Approx(lse0 - 3));
  CHECK(plain.loss.at({1}) == doctest::Approx(lse1));
  // eps = 0.3: loss = (1 - eps)(lse - x_t) + eps (lse - mean(x))
  const CrossEntropyForward smooth = cross_entropy_forward(x, t, -100, real(0.3));
  CHECK(smooth.loss.at({0}) == doctest::Approx(0.7 * (lse0 - 3) + 0.3 * (lse0 - 2)));
  // Row 1 ignored: no loss, no gradient.
  const CrossEntropyForward ignored = cross_entropy_forward(x, t, /*ignore_index=*/0, 0);
  CHECK(ignored.loss.at({1}) == 0);
  const Tensor d = cross_entropy_backward(x, t, ignored.lse, ones({2}), 0, 0);
  CHECK(d.at({1, 0}) == 0);
  CHECK(d.at({1, 1}) == 0);
  CHECK(sum(d).item() == doctest::Approx(0).epsilon(1e-6));  // softmax - onehot sums to 0
}

TEST_CASE("cross-entropy errors") {
  const Tensor x = zeros({2, 3});
  CHECK_THROWS_WITH_AS(cross_entropy_forward(x, from_vector({0, 3}), -100, 0),
                       "cross_entropy: index 3 is out of range for axis 1 of size 3", std::out_of_range);
  CHECK_THROWS_WITH_AS(cross_entropy_forward(x, zeros({3}), -100, 0),
                       "cross_entropy: expected targets of shape [2] for logits of shape [2, 3], got [3]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(cross_entropy_forward(x, zeros({2}), -100, 2),
                       "cross_entropy: expected label_smoothing in [0, 1], got 2", std::invalid_argument);
}
