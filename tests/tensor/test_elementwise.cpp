// tests/tensor/test_elementwise.cpp - broadcasting rules, elementwise values, numerical
// stability at large magnitudes, and selection ops.
#include <cmath>
#include <limits>

#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

// [docs:broadcasting]
TEST_CASE("broadcasting: both directions, size-1 axes, scalars") {
  const Tensor a = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK((a + from_vector({10, 20, 30})).to_vector() == std::vector<real>{11, 22, 33, 14, 25, 36});
  CHECK((from_vector({10, 20, 30}) + a).to_vector() == std::vector<real>{11, 22, 33, 14, 25, 36});
  CHECK((a * from_vector({2, 3}, {2, 1})).to_vector() == std::vector<real>{2, 4, 6, 12, 15, 18});
  const Tensor outer = from_vector({1, 2}, {2, 1}) * from_vector({1, 10, 100}, {1, 3});
  CHECK(outer.shape() == Shape{2, 3});
  CHECK(outer.to_vector() == std::vector<real>{1, 10, 100, 2, 20, 200});
  CHECK((a - scalar(1)).to_vector() == std::vector<real>{0, 1, 2, 3, 4, 5});
  CHECK((real(12) / a).to_vector() == std::vector<real>{12, 6, 4, 3, 2.4f, 2});
  CHECK(broadcast_shapes({4, 1, 3}, {5, 1}, "test") == Shape{4, 5, 3});
  CHECK(add(zeros({2, 1, 4}), zeros({3, 1})).shape() == Shape{2, 3, 4});
}
// [docs:end]

TEST_CASE("broadcasting mismatch names the op and both shapes") {
  CHECK_THROWS_WITH_AS(add(zeros({2, 3}), zeros({2})),
                       "add: shapes [2, 3] and [2] cannot be broadcast together; expected equal sizes or 1 in each "
                       "axis (from the right), got 3 and 2 in axis 1",
                       std::invalid_argument);
  CHECK_THROWS_AS(mul(zeros({4, 3}), zeros({2, 3})), std::invalid_argument);
}

TEST_CASE("unary functions and comparisons") {
  const Tensor x = from_vector({-2, -0.5, 0, 0.5, 2});
  CHECK(relu(x).to_vector() == std::vector<real>{0, 0, 0, 0.5, 2});
  CHECK(abs(x).to_vector() == std::vector<real>{2, 0.5, 0, 0.5, 2});
  CHECK(allclose(sigmoid(x), from_vector({0.11920292f, 0.37754067f, 0.5f, 0.62245933f, 0.88079708f})));
  CHECK(allclose(gelu(x), from_vector({-0.04550026f, -0.15426877f, 0, 0.34573123f, 1.95449974f})));
  CHECK(allclose(pow(from_vector({4, 9}), real(0.5)), from_vector({2, 3})));
  CHECK(gt(x, scalar(0)).to_vector() == std::vector<real>{0, 0, 0, 1, 1});
  CHECK(eq(x, from_vector({-2, 0, 0, 0, 0})).to_vector() == std::vector<real>{1, 0, 1, 0, 0});
}

TEST_CASE("stability: exp, tanh, sigmoid stay finite at magnitudes of 100 and more") {
  const Tensor big = from_vector({-1000, -100, 100, 1000});
  for (real v : tanh(big).to_vector()) CHECK(std::isfinite(v));
  CHECK(tanh(big).to_vector() == std::vector<real>{-1, -1, 1, 1});
  const std::vector<real> s = sigmoid(big).to_vector();
  CHECK(s[0] == 0);
  CHECK(s[1] > 0);  // e^-100 / (1 + e^-100): tiny but exact, not NaN
  CHECK(s[1] < 1e-40);
  CHECK(s[2] == 1);
  CHECK(s[3] == 1);
  CHECK(exp(from_vector({-100, -1000})).to_vector() == std::vector<real>{std::exp(real(-100)), 0});
  // e^x itself overflows float32 above x = 88.7; that is the true value, not an instability.
  CHECK(std::isfinite(exp(scalar(88)).item()));
}

TEST_CASE("where, masked_fill, broadcast_to") {
  const Tensor x = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor mask = from_vector({0, 1, 0});
  CHECK(masked_fill(x, mask, -1).to_vector() == std::vector<real>{1, -1, 3, 4, -1, 6});
  CHECK(where(from_vector({1, 0}, {2, 1}), x, scalar(0)).to_vector() == std::vector<real>{1, 2, 3, 0, 0, 0});
  CHECK(broadcast_to(from_vector({1, 2}, {2, 1}), {2, 2}).to_vector() == std::vector<real>{1, 1, 2, 2});
  CHECK_THROWS_WITH_AS(masked_fill(x, zeros({4, 2, 3}), 0),
                       "masked_fill: expected a mask broadcastable to the input's shape [2, 3], got [4, 2, 3]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(broadcast_to(zeros({3}), {3, 2}), "broadcast_to: shapes [3] and [3, 2] cannot be broadcast "
                       "together; expected equal sizes or 1 in each axis (from the right), got 3 and 2 in axis 1",
                       std::invalid_argument);
}

TEST_CASE("large elementwise ops run on the pool and agree with the serial result") {
  manual_seed(3);
  const Tensor a = randn({300, 400}), b = randn({400});
  set_num_threads(1);
  const Tensor serial = tanh(a * b + a);
  set_num_threads(2);
  const Tensor parallel = tanh(a * b + a);
  CHECK(serial.to_vector() == parallel.to_vector());
}

TEST_CASE("broadcasting agrees with element-by-element indexing on many shape pairs") {
  // Every pair of shapes below broadcasts; the result is checked element by element against
  // the numpy rule: out[i] = a[i with broadcast axes at 0] op b[the same].
  const std::vector<std::pair<Shape, Shape>> pairs = {
      {{4, 3, 5}, {5}},       {{4, 3, 5}, {3, 1}},       {{4, 3, 5}, {4, 1, 1}},   {{4, 1, 5}, {1, 3, 1}},
      {{2, 3, 4, 5}, {4, 5}}, {{2, 3, 4, 5}, {2, 1, 1, 5}}, {{1}, {3, 2}},        {{6, 1}, {1, 7}},
      {{2, 1, 3, 1}, {4, 1, 5}}, {{}, {2, 3}},           {{3, 4}, {3, 4}},        {{1, 1, 9}, {2, 3, 1}}};
  manual_seed(5);
  for (const auto& pair : pairs) {
    const Shape& sa = pair.first;  // (not a structured binding: CAPTURE's lambda could not capture it)
    const Shape& sb = pair.second;
    CAPTURE(sa);
    CAPTURE(sb);
    const Tensor a = randn(sa), b = randn(sb);
    const Tensor out = a * 10 - b;  // 10 a - b: not symmetric, so swapped operands would show
    const Tensor sum = add(a, b);
    const Shape shape = broadcast_shapes(sa, sb, "test");
    REQUIRE(out.shape() == shape);
    const std::vector<int64_t> st_a = broadcast_strides(sa, shape), st_b = broadcast_strides(sb, shape);
    bool all_equal = true;
    for (int64_t i = 0; i < numel(shape); ++i) {
      const Shape index = unravel_index(i, shape);
      int64_t ia = 0, ib = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        ia += index[d] * st_a[d];
        ib += index[d] * st_b[d];
      }
      all_equal = all_equal && out.data()[i] == a.data()[ia] * 10 - b.data()[ib] &&
                  sum.data()[i] == a.data()[ia] + b.data()[ib];
    }
    CHECK(all_equal);
  }
}
