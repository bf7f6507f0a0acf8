// exercises/01_untile/check.cpp - make -C exercises check EX=01
#include <doctest/doctest.h>

#include "exercise.h"
#include "exercises/check_util.h"

using namespace seqgrad;
using exercises::max_diff;

namespace {
// numpy's tile, straight from its definition: y[j] = x[j mod s], axis by axis.
Tensor tile(const Tensor& x, const std::vector<int64_t>& reps) {
  Shape shape;
  for (int64_t i = 0; i < x.dim(); ++i) shape.push_back(x.size(i) * reps[static_cast<size_t>(i)]);
  Tensor y = Tensor::empty(shape);
  for (int64_t n = 0; n < y.numel(); ++n) {
    int64_t rest = n, src = 0, stride = 1;  // walk n's index from the last axis
    for (int64_t i = y.dim() - 1; i >= 0; --i) {
      const int64_t j = rest % shape[static_cast<size_t>(i)];
      rest /= shape[static_cast<size_t>(i)];
      src += (j % x.size(i)) * stride;
      stride *= x.size(i);
    }
    y.data()[n] = x.data()[src];
  }
  return y;
}
}  // namespace

TEST_CASE("01: by hand: three copies along the columns, two along both axes") {
  // g = [[0 1 2 3 4 5], [6 7 8 9 10 11]] holds three copies of a (2, 2) block side by side.
  const Tensor g = arange(12).reshape({2, 6});
  const Tensor a = untile(g, {1, 3});
  REQUIRE(a.shape() == Shape{2, 2});
  CHECK(max_diff(a, from_vector({0 + 2 + 4, 1 + 3 + 5, 6 + 8 + 10, 7 + 9 + 11}, {2, 2})) == 0);
  // (4, 2) as 2 x 2 copies of a (2, 1) block: rows 0 and 2 meet, as do rows 1 and 3.
  const Tensor b = untile(arange(8).reshape({4, 2}), {2, 2});
  REQUIRE(b.shape() == Shape{2, 1});
  CHECK(max_diff(b, from_vector({0 + 1 + 4 + 5, 2 + 3 + 6 + 7}, {2, 1})) == 0);
}

TEST_CASE("01: untile is the adjoint of tile: <tile(x), g> = <x, untile(g)>") {
  // The defining property of a gradient: for y = tile(x), dL/dx = untile(dL/dy).
  manual_seed(1);
  for (const std::vector<int64_t>& reps : {std::vector<int64_t>{2, 1, 3}, {1, 4, 1}, {3, 2, 2}, {1, 1, 1}}) {
    const Tensor x = randn({2, 3, 2});
    const Tensor y = tile(x, reps);
    const Tensor g = randn(y.shape());
    CAPTURE(to_string(y.shape()));
    const Tensor dx = untile(g, reps);
    REQUIRE(dx.shape() == x.shape());
    CHECK(sum(y * g).item() == doctest::Approx(sum(x * dx).item()).epsilon(1e-4));
    CHECK(sum(dx).item() == doctest::Approx(sum(g).item()).epsilon(1e-4));  // the total is kept
  }
}

TEST_CASE("01: tiling size-1 axes is broadcasting, so untile agrees with sum_to_shape there") {
  manual_seed(2);
  const Tensor g = randn({2, 3, 4});
  CHECK(max_diff(untile(g, {2, 1, 4}), sum_to_shape(g, {1, 3, 1})) < 1e-5);
  CHECK(max_diff(untile(g, {1, 3, 1}), sum_to_shape(g, {2, 1, 4})) < 1e-5);
  CHECK(max_diff(untile(g, {2, 3, 4}), sum_to_shape(g, {1, 1, 1})) < 1e-5);
}

TEST_CASE("01: repetitions that do not fit the gradient's shape are refused") {
  const Tensor g = zeros({2, 6});
  CHECK_THROWS_AS(untile(g, {1, 4}), std::invalid_argument);     // 6 is not 4 copies
  CHECK_THROWS_AS(untile(g, {1, 0}), std::invalid_argument);     // no copies at all
  CHECK_THROWS_AS(untile(g, {2}), std::invalid_argument);        // one count per axis
  CHECK_THROWS_AS(untile(g, {1, 2, 3}), std::invalid_argument);
}
