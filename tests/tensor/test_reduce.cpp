// tests/tensor/test_reduce.cpp - sum/mean/max/argmax over axes, keepdim, sum_to_shape.
#include "tests/test_util.h"

using namespace seqgrad;

TEST_CASE("sum and mean over each axis, keepdim, all") {
  const Tensor x = arange(24).reshape({2, 3, 4});
  CHECK(sum(x).item() == 276);
  CHECK(sum(x).dim() == 0);
  CHECK(sum(x, 0).shape() == Shape{3, 4});
  CHECK(sum(x, 0).at({0, 0}) == 12);
  CHECK(sum(x, 1, true).shape() == Shape{2, 1, 4});
  CHECK(sum(x, -1).to_vector() == std::vector<real>{6, 22, 38, 54, 70, 86});
  CHECK(sum(x, std::vector<int64_t>{0, 2}).to_vector() == std::vector<real>{60, 92, 124});
  CHECK(mean(x, 2).at({0, 0}) == 1.5);
  CHECK(mean(x).item() == 11.5);
  CHECK(mean(x, std::vector<int64_t>{0, 1}, true).shape() == Shape{1, 1, 4});
}

TEST_CASE("max and argmax take the first maximum") {
  const Tensor x = from_vector({1, 5, 5, 2, 7, 0}, {2, 3});
  CHECK(max(x, 1).to_vector() == std::vector<real>{5, 7});
  CHECK(argmax(x, 1).to_vector() == std::vector<real>{1, 1});
  CHECK(argmax(x, 0).to_vector() == std::vector<real>{1, 1, 0});
  CHECK(max(x, 0, true).shape() == Shape{1, 3});
  CHECK(max(x).item() == 7);
}

TEST_CASE("sum_to_shape undoes broadcasting") {
  const Tensor g = ones({4, 5, 3});
  CHECK(sum_to_shape(g, {5, 1}).shape() == Shape{5, 1});
  CHECK(sum_to_shape(g, {5, 1}).at({0, 0}) == 12);
  CHECK(sum_to_shape(g, {3}).to_vector() == std::vector<real>{20, 20, 20});
  CHECK(sum_to_shape(g, {}).item() == 60);
  CHECK(sum_to_shape(g, {4, 5, 3}).shares_storage(g));
}

TEST_CASE("reductions are exact enough and identical across thread counts") {
  manual_seed(9);
  const Tensor x = randn({64, 20000});
  set_num_threads(1);
  const Tensor a = sum(x, 1), b = sum(x, 0);
  set_num_threads(2);
  CHECK(sum(x, 1).to_vector() == a.to_vector());
  CHECK(sum(x, 0).to_vector() == b.to_vector());
  // One million ones: a float accumulator would drift; double accumulation is exact.
  CHECK(sum(ones({1000, 1000})).item() == 1000000);
}

TEST_CASE("reduction errors name the op and the valid axes") {
  const Tensor x = zeros({2, 3});
  CHECK_THROWS_WITH_AS(sum(x, 2), "sum: axis 2 is out of range for a tensor of 2 dimensions (valid: -2..1)",
                       std::out_of_range);
  CHECK_THROWS_WITH_AS(mean(x, -3), "mean: axis -3 is out of range for a tensor of 2 dimensions (valid: -2..1)",
                       std::out_of_range);
  CHECK_THROWS_WITH_AS(max(zeros({2, 0}), 1), "max: cannot reduce axis 1 of size 0 (shape [2, 0])", std::invalid_argument);
  CHECK_THROWS_WITH_AS(sum(x, std::vector<int64_t>{1, -1}), "sum: expected distinct axes, got an axis listed twice",
                       std::invalid_argument);
}
