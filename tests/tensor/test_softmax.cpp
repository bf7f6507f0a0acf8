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

TEST_CASE("a NaN in a row makes that row NaN, as in PyTorch, and leaves the other rows alone") {
  const real nan = std::numeric_limits<real>::quiet_NaN();
  for (int64_t n : {3, 20}) {  // a short row, and one with a full vector of 8 and a tail
    CAPTURE(n);
    Tensor x = randn({3, n});
    x.data()[1 * n + 1] = nan;  // one NaN in row 1
    for (int64_t k = 0; k < n; ++k) x.data()[2 * n + k] = nan;  // row 2 all NaN
    const Tensor y = softmax(x, -1);
    for (int64_t k = 0; k < n; ++k) {
      CHECK(std::isfinite(y.at({0, k})));
      CHECK(std::isnan(y.at({1, k})));
      CHECK(std::isnan(y.at({2, k})));
    }
    CHECK(std::isnan(scaled_masked_softmax(x, Tensor(), 1).at({1, 0})));
  }
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

// ------------------------------------------------------------------------------------------------
// scaled_masked_softmax: attention's scale, mask and softmax in one kernel

namespace {

// The definition scaled_masked_softmax must equal bit for bit: scale, fill with -inf, softmax.
Tensor scaled_masked_softmax_composed(const Tensor& x, const Tensor& mask, real scale) {
  const Tensor scaled = x * scale;
  return softmax(mask.defined() ? masked_fill(scaled, mask, -std::numeric_limits<real>::infinity()) : scaled, -1);
}

}  // namespace

TEST_CASE("scaled_masked_softmax equals scale, masked_fill(-inf), softmax bit for bit, on every mask layout") {
  // Scores (B, H, T, S) = (9, 9, 21, 20): 1,701 rows of 20, more than the pool's grain (819
  // rows), so two threads take 851 and 850 rows, and the second starts in the middle of a
  // mask's walk row (21 rows under a (T, S) mask).
  const Shape scores{9, 9, 21, 20};
  const std::vector<Shape> masks = {
      {21, 20},        // causal (T, S)
      {9, 1, 1, 20},   // key padding (B, 1, 1, S)
      {9, 1, 21, 20},  // both (B, 1, T, S)
      {20},            // one row for all
      {9, 9, 21, 1},   // one value per row: a row is all kept or all masked
      {9, 9, 21, 20},  // no broadcasting
      {1, 21, 1},      // size-1 axes in the middle
  };
  manual_seed(21);
  const Tensor x = randn(scores) * 3;
  const int saved_threads = get_num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const Shape& ms : masks) {
      CAPTURE(threads);
      CAPTURE(ms);
      const Tensor mask = lt(rand(ms), full(ms, real(0.3)));  // about 30% masked
      for (real scale : {real(1) / std::sqrt(real(32)), real(1), real(-0.5)}) {
        CAPTURE(scale);
        const Tensor y = scaled_masked_softmax(x, mask, scale);
        CHECK(y.to_vector() == scaled_masked_softmax_composed(x, mask, scale).to_vector());
      }
    }
    // No mask: the scaled softmax.
    CHECK(scaled_masked_softmax(x, Tensor(), real(0.25)).to_vector() == softmax(x * real(0.25), -1).to_vector());
  }
  set_num_threads(saved_threads);
  // A row masked everywhere gets weight 0 throughout, never NaN; 1-D scores are one row.
  const Tensor row = from_vector({1, 2, 3});
  CHECK(scaled_masked_softmax(row, ones({3}), 1).to_vector() == std::vector<real>{0, 0, 0});
  CHECK(scaled_masked_softmax(row, from_vector({0, 1, 0}), 2).to_vector() ==
        scaled_masked_softmax_composed(row, from_vector({0, 1, 0}), 2).to_vector());
  CHECK(scaled_masked_softmax(zeros({2, 0}), Tensor(), 1).shape() == Shape{2, 0});
}

TEST_CASE("softmax_backward with a scale is scale times the plain backward") {
  manual_seed(22);
  const Tensor y = softmax(randn({5, 7}), -1), dy = randn({5, 7});
  CHECK(allclose(softmax_backward(y, dy, -1, real(0.125)), softmax_backward(y, dy, -1) * real(0.125), 0, 0));
  CHECK(allclose(softmax_backward(y, dy, 0, 3), softmax_backward(y, dy, 0) * real(3)));
}

TEST_CASE("scaled_masked_softmax errors name the shapes") {
  CHECK_THROWS_WITH_AS(scaled_masked_softmax(zeros({2, 4}), zeros({2, 1, 4}), 1),
                       "scaled_masked_softmax: expected a mask broadcastable to the scores' shape [2, 4], got [2, 1, 4]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(scaled_masked_softmax(zeros({2, 4}), zeros({3}), 1),
                       "scaled_masked_softmax: shapes [2, 4] and [3] cannot be broadcast together; expected equal "
                       "sizes or 1 in each axis (from the right), got 4 and 3 in axis 1",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(scaled_masked_softmax(scalar(1), Tensor(), 1),
                       "scaled_masked_softmax: expected scores with at least one axis, got []", std::invalid_argument);
}
