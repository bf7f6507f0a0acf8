// exercises/01_sum_to_shape/check.cpp - make -C exercises check EX=01
#include <doctest/doctest.h>

#include "exercise.h"

using namespace seqgrad;

namespace {
bool same(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::abs(a.data()[i] - b.data()[i]) > 1e-4) return false;
  return true;
}
}  // namespace

TEST_CASE("01: the gradient of a broadcast operand is summed back to its shape") {
  manual_seed(1);
  const Tensor g = randn({2, 3, 4});
  for (const Shape& shape : {Shape{2, 3, 4}, Shape{3, 4}, Shape{4}, Shape{3, 1}, Shape{1, 4}, Shape{2, 1, 4},
                             Shape{1, 1, 1}, Shape{2, 3, 1}, Shape{}}) {
    CAPTURE(to_string(shape));
    const Tensor mine = my_sum_to_shape(g, shape);
    CHECK_MESSAGE(mine.shape() == shape, "expected shape ", to_string(shape), ", got ", to_string(mine.shape()));
    CHECK(same(mine, sum_to_shape(g, shape)));
  }
}

TEST_CASE("01: the total is preserved") {
  manual_seed(2);
  const Tensor g = randn({5, 1, 3});
  const Tensor s = my_sum_to_shape(g, {1, 3});
  REQUIRE(s.shape() == Shape{1, 3});
  CHECK(std::abs(sum(s).item() - sum(g).item()) < 1e-4);
}

TEST_CASE("01: shapes that do not broadcast are refused") {
  const Tensor g = zeros({2, 3, 4});
  CHECK_THROWS_AS(my_sum_to_shape(g, {5}), std::invalid_argument);
  CHECK_THROWS_AS(my_sum_to_shape(g, {3, 3}), std::invalid_argument);
  CHECK_THROWS_AS(my_sum_to_shape(g, {1, 2, 3, 4}), std::invalid_argument);
}
