// tests/tensor/test_shape_ops.cpp - transpose/permute, slice, concat/stack/split/chunk,
// index_select/gather and their adjoints, with pinned error messages.
#include <limits>

#include "tests/test_util.h"

using namespace seqgrad;

TEST_CASE("transpose and permute move elements") {
  const Tensor x = arange(6).reshape({2, 3});
  const Tensor t = transpose(x, 0, 1);
  CHECK(t.shape() == Shape{3, 2});
  CHECK(t.to_vector() == std::vector<real>{0, 3, 1, 4, 2, 5});
  const Tensor y = arange(24).reshape({2, 3, 4});
  const Tensor p = permute(y, {2, 0, 1});
  CHECK(p.shape() == Shape{4, 2, 3});
  CHECK(p.at({3, 1, 2}) == y.at({1, 2, 3}));
  CHECK(permute(permute(y, {2, 0, 1}), {1, 2, 0}).to_vector() == y.to_vector());
  CHECK(unsqueeze(x, 1).shape() == Shape{2, 1, 3});
  CHECK(squeeze(unsqueeze(x, -1), -1).shape() == Shape{2, 3});
}

TEST_CASE("slice, narrow, slice_add_ and slice_add") {
  const Tensor x = arange(12).reshape({3, 4});
  CHECK(slice(x, 1, 1, 3).to_vector() == std::vector<real>{1, 2, 5, 6, 9, 10});
  CHECK(slice(x, 0, -1, 3).to_vector() == std::vector<real>{8, 9, 10, 11});
  CHECK(narrow(x, 1, 2, 2).shape() == Shape{3, 2});
  CHECK(slice(x, 1, 2, 2).shape() == Shape{3, 0});
  Tensor back = ones({3, 4});
  slice_add_(back, 1, 1, slice(x, 1, 1, 3));
  CHECK(back.to_vector() == std::vector<real>{1, 2, 3, 1, 1, 6, 7, 1, 1, 10, 11, 1});
  CHECK_THROWS_WITH_AS(slice_add_(back, 1, 3, slice(x, 1, 1, 3)), "slice_add_: 2 rows at 3 do not fit axis 1 of size 4",
                       std::out_of_range);
  // The out-of-place form: zeros with the slice written in
  CHECK(slice_add({3, 4}, 1, 1, slice(x, 1, 1, 3)).to_vector() ==
        std::vector<real>{0, 1, 2, 0, 0, 5, 6, 0, 0, 9, 10, 0});
  CHECK(slice_add({2, 3}, 0, 2, Tensor::empty({0, 3})).to_vector() == std::vector<real>(6, 0));  // an empty slice
  CHECK_THROWS_WITH_AS(slice_add({3, 4}, 1, 3, slice(x, 1, 1, 3)), "slice_add: 2 rows at 3 do not fit axis 1 of size 4",
                       std::out_of_range);
  CHECK_THROWS_WITH_AS(slice_add({3, 4}, 1, 0, x.reshape({12})), "slice_add: expected a source of shape [3, 4], got [12]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(slice_add_(back, 0, 0, x.reshape({12})), "slice_add_: expected a source of shape [3, 4], got [12]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(slice_add({3, 4}, 2, 0, x), "slice_add: axis 2 is out of range for a tensor of 2 dimensions (valid: -2..1)",
                       std::out_of_range);
  // A start so large that start + rows would overflow is still just out of range
  CHECK_THROWS_WITH_AS(slice_add_(back, 1, std::numeric_limits<int64_t>::max(), slice(x, 1, 1, 3)),
                       "slice_add_: 2 rows at 9223372036854775807 do not fit axis 1 of size 4", std::out_of_range);
}

// Large enough for every copy to be shared between threads (runs of 5 x 512 elements, 64 of
// them): the same values on 1 and 2 threads, and slice_add equals zeros + slice_add_.
TEST_CASE("slice, concat, slice_add_, slice_add and fill_ on two threads") {
  manual_seed(7);
  const Tensor x = randn({64, 20, 512});
  std::vector<std::vector<real>> results[2];
  for (int threads : {1, 2}) {
    testing::ThreadCount count(threads);
    const Tensor s = slice(x, 1, 5, 10);  // (64, 5, 512)
    CHECK(s.at({63, 4, 511}) == x.at({63, 9, 511}));
    CHECK(s.at({0, 0, 0}) == x.at({0, 5, 0}));
    Tensor acc = zeros(x.shape());
    slice_add_(acc, 1, 5, s);
    const Tensor fresh = slice_add(x.shape(), 1, 5, s);
    CHECK(fresh.to_vector() == acc.to_vector());
    CHECK(fresh.at({63, 9, 511}) == x.at({63, 9, 511}));
    CHECK(fresh.at({63, 10, 0}) == 0);
    CHECK(fresh.at({0, 4, 511}) == 0);
    const Tensor c = concat({x, s}, 1);  // (64, 25, 512)
    CHECK(c.at({63, 24, 511}) == x.at({63, 9, 511}));
    CHECK(c.at({63, 20, 0}) == x.at({63, 5, 0}));
    CHECK(c.at({63, 19, 0}) == x.at({63, 19, 0}));
    results[threads - 1] = {s.to_vector(), fresh.to_vector(), c.to_vector(), full({64, 1024}, 3).to_vector()};
  }
  CHECK(results[0] == results[1]);
}

TEST_CASE("concat, stack, split, chunk") {
  const Tensor a = arange(4).reshape({2, 2}), b = full({2, 1}, 9);
  CHECK(concat({a, b}, 1).to_vector() == std::vector<real>{0, 1, 9, 2, 3, 9});
  CHECK(concat({a, a}, 0).shape() == Shape{4, 2});
  CHECK(stack({a, a}, 0).shape() == Shape{2, 2, 2});
  CHECK(stack({a, a * real(2)}, 2).to_vector() == std::vector<real>{0, 0, 1, 2, 2, 4, 3, 6});
  const std::vector<Tensor> parts = split(arange(5), {2, 3}, 0);
  CHECK(parts[1].to_vector() == std::vector<real>{2, 3, 4});
  CHECK(split(arange(5), 2, 0).size() == 3);
  const std::vector<Tensor> chunks = chunk(arange(5), 3, 0);  // torch.chunk: sizes 2, 2, 1
  REQUIRE(chunks.size() == 3);
  CHECK(chunks[2].to_vector() == std::vector<real>{4});
}

TEST_CASE("index_select, index_add, gather, scatter_add") {
  const Tensor w = arange(6).reshape({3, 2});
  CHECK(index_select(w, 0, from_vector({2, 0, 2})).to_vector() == std::vector<real>{4, 5, 0, 1, 4, 5});
  CHECK(index_select(w, 1, from_vector({1})).to_vector() == std::vector<real>{1, 3, 5});
  const Tensor added = index_add({3, 2}, 0, from_vector({2, 0, 2}), ones({3, 2}));
  CHECK(added.to_vector() == std::vector<real>{1, 1, 0, 0, 2, 2});
  const Tensor g = gather(w, 1, from_vector({1, 0, 0}, {3, 1}));
  CHECK(g.to_vector() == std::vector<real>{1, 2, 4});
  CHECK(scatter_add({3, 2}, 1, from_vector({1, 0, 0}, {3, 1}), ones({3, 1})).to_vector() ==
        std::vector<real>{0, 1, 1, 0, 1, 0});
}

TEST_CASE("shape-op errors name the op, the expectation and what was found") {
  const Tensor x = zeros({3, 4});
  CHECK_THROWS_WITH_AS(slice(x, 1, 2, 5), "slice: range 2:5 is out of bounds for axis 1 of size 4 (shape [3, 4])",
                       std::out_of_range);
  CHECK_THROWS_WITH_AS(concat({x, zeros({2, 3})}, 0),
                       "concat: expected shape [2, 4] (all axes but 0 equal to the first tensor's), got [2, 3] at position 1",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(stack({x, zeros({4, 3})}, 0), "stack: expected every tensor to have shape [3, 4], got [4, 3] at position 1",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(split(x, {1, 2}, 1), "split: expected sizes adding up to 4 (axis 1 of shape [3, 4]), got 3",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(index_select(x, 0, from_vector({0, 3})), "index_select: index 3 is out of range for axis 0 of size 3",
                       std::out_of_range);
  CHECK_THROWS_WITH_AS(index_select(x, 0, from_vector({-1})), "index_select: index -1 is out of range for axis 0 of size 3",
                       std::out_of_range);
  CHECK_THROWS_WITH_AS(index_select(x, 0, from_vector({1.5})), "index_select: expected whole-number indices, got 1.5",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(index_select(x, 0, zeros({1, 1})), "index_select: expected a 1-D index, got shape [1, 1]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(gather(x, 1, zeros({2, 1})), "gather: expected index size 3 in axis 0 (input shape [3, 4]), got index shape [2, 1]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(permute(zeros({2, 3}), {0, 0}), "permute: expected each axis once, got axis 0 twice",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(transpose(x, 0, 2), "transpose: axis 2 is out of range for a tensor of 2 dimensions (valid: -2..1)",
                       std::out_of_range);
  CHECK_THROWS_WITH_AS(squeeze(x, 0), "squeeze: expected axis 0 to have size 1, got shape [3, 4]", std::invalid_argument);
}

TEST_CASE("permute agrees with element-by-element indexing for every order of 4 axes") {
  const Shape shape{2, 3, 4, 5};
  const Tensor x = arange(numel(shape)).reshape(shape);
  const std::vector<int64_t> st = strides(shape);
  std::vector<int64_t> order{0, 1, 2, 3};
  int orders = 0;
  do {
    CAPTURE(order);
    const Tensor p = permute(x, order);
    bool all_equal = true;
    for (int64_t i = 0; i < p.numel(); ++i) {
      const Shape index = unravel_index(i, p.shape());  // out axis d is x's axis order[d]
      int64_t source = 0;
      for (size_t d = 0; d < order.size(); ++d) source += index[d] * st[order[d]];
      all_equal = all_equal && p.data()[i] == x.data()[source];
    }
    CHECK(all_equal);
    ++orders;
  } while (std::next_permutation(order.begin(), order.end()));
  CHECK(orders == 24);
}
