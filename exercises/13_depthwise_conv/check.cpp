// exercises/13_depthwise_conv/check.cpp - make -C exercises check EX=13
#include <doctest/doctest.h>

#include "exercise.h"
#include "exercises/check_util.h"

using namespace seqgrad;
using exercises::max_diff;

namespace {
Conv2dArgs depthwise(int64_t C, int64_t stride, int64_t padding) {
  Conv2dArgs a;
  a.stride_h = a.stride_w = stride;
  a.pad_h = a.pad_w = padding;
  a.groups = C;
  return a;
}
}  // namespace

TEST_CASE("13: by hand: one channel, a 2x2 filter, stride 1 and no padding") {
  // x = [[1 2 3], [4 5 6]], w = [[1 0], [0 -1]]: y = x[i, j] - x[i+1, j+1] + 10.
  const Variable x(from_vector({1, 2, 3, 4, 5, 6}, {1, 1, 2, 3}), /*requires_grad=*/true);
  const Variable w(from_vector({1, 0, 0, -1}, {1, 1, 2, 2})), b(from_vector({10}));
  const Variable y = depthwise_conv2d(x, w, b);
  CHECK(y.op() == "depthwise_conv2d");
  CHECK(max_diff(y.value(), from_vector({1 - 5 + 10, 2 - 6 + 10}, {1, 1, 1, 2})) == 0);
}

TEST_CASE("13: the same values and gradients as conv2d with groups = C") {
  manual_seed(13);
  struct Case {
    Shape x, w;
    int64_t stride, padding;
  };
  for (const Case& c : {Case{{2, 3, 5, 7}, {3, 1, 3, 3}, 1, 1}, Case{{1, 4, 6, 5}, {4, 1, 3, 2}, 2, 0},
                        Case{{2, 2, 7, 7}, {2, 1, 5, 5}, 2, 2}, Case{{1, 1, 1, 1}, {1, 1, 1, 1}, 1, 0}}) {
    CAPTURE(to_string(c.x));
    const int64_t C = c.x[1];
    const Tensor xv = randn(c.x), wv = randn(c.w), bv = randn({C});
    const Variable x1(xv.clone(), true), w1(wv.clone(), true), b1(bv.clone(), true);
    const Variable x2(xv.clone(), true), w2(wv.clone(), true), b2(bv.clone(), true);
    const Variable ref = conv2d(x1, w1, b1, depthwise(C, c.stride, c.padding));
    const Variable mine = depthwise_conv2d(x2, w2, b2, c.stride, c.padding);
    REQUIRE(mine.shape() == ref.shape());
    CHECK(max_diff(mine.value(), ref.value()) < 1e-4);
    const Tensor dy = randn(ref.shape());
    ref.backward(dy);
    mine.backward(dy);
    REQUIRE(x2.grad().defined());
    REQUIRE(w2.grad().defined());
    REQUIRE(b2.grad().defined());
    CHECK(max_diff(x2.grad(), x1.grad()) < 1e-4);
    CHECK(max_diff(w2.grad(), w1.grad()) < 1e-4);
    CHECK(max_diff(b2.grad(), b1.grad()) < 1e-4);
  }
}

TEST_CASE("13: gradcheck with respect to x, weight and bias, with stride and padding; no bias") {
  manual_seed(14);
  const GradcheckResult r = gradcheck(
      [](const std::vector<Variable>& v) { return depthwise_conv2d(v[0], v[1], v[2], /*stride=*/2, /*padding=*/1); },
      {randn({2, 2, 5, 4}), randn({2, 1, 3, 3}), randn({2})});
  CHECK_MESSAGE(r.ok, r.message);
  const Variable y = depthwise_conv2d(Variable(ones({1, 2, 3, 3})), Variable(ones({2, 1, 2, 2})), Variable());
  CHECK(max_diff(y.value(), full({1, 2, 2, 2}, 4)) == 0);
}

TEST_CASE("13: wrong shapes are refused") {
  const Variable x(zeros({1, 3, 4, 4}));
  CHECK_THROWS_AS(depthwise_conv2d(x, Variable(zeros({2, 1, 3, 3})), Variable()), std::invalid_argument);
  CHECK_THROWS_AS(depthwise_conv2d(x, Variable(zeros({3, 3, 3, 3})), Variable()), std::invalid_argument);
  CHECK_THROWS_AS(depthwise_conv2d(x, Variable(zeros({3, 1, 3, 3})), Variable(zeros({2}))), std::invalid_argument);
  CHECK_THROWS_AS(depthwise_conv2d(x, Variable(zeros({3, 1, 5, 5})), Variable()), std::invalid_argument);
  CHECK_THROWS_AS(depthwise_conv2d(Variable(zeros({3, 4, 4})), Variable(zeros({3, 1, 3, 3})), Variable()),
                  std::invalid_argument);
}
