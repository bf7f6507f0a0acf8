// tests/tensor/test_tensor.cpp - Tensor storage, factories, access, reshape and printing.
#include "tests/test_util.h"

using namespace seqgrad;

TEST_CASE("factories give the right shapes and values") {
  CHECK(zeros({2, 3}).shape() == Shape{2, 3});
  CHECK(zeros({2, 3}).to_vector() == std::vector<real>(6, 0));
  CHECK(ones({4}).to_vector() == std::vector<real>(4, 1));
  CHECK(full({2}, 7).to_vector() == std::vector<real>{7, 7});
  CHECK(arange(4).to_vector() == std::vector<real>{0, 1, 2, 3});
  CHECK(arange(1, 2, real(0.25)).to_vector() == std::vector<real>{1, 1.25, 1.5, 1.75});
  CHECK(arange(real(3), real(0), real(-1)).to_vector() == std::vector<real>{3, 2, 1});
  const Tensor s = scalar(2.5);
  CHECK(s.dim() == 0);
  CHECK(s.numel() == 1);
  CHECK(s.item() == 2.5);
  CHECK(from_vector({1, 2, 3, 4, 5, 6}, {2, 3}).at({1, 0}) == 4);
  CHECK(zeros({0, 3}).numel() == 0);
}

TEST_CASE("storage is 64-byte aligned") {
  for (int64_t n : {1, 3, 17, 1000}) {
    const Tensor t = zeros({n});
    CHECK(reinterpret_cast<uintptr_t>(t.data()) % 64 == 0);
  }
}

// [docs:shallow]
TEST_CASE("copies are shallow, clone is deep, reshape shares storage") {
  Tensor a = zeros({2, 2});
  Tensor b = a;
  b.at({0, 0}) = 5;
  CHECK(a.at({0, 0}) == 5);
  Tensor c = a.clone();
  c.at({0, 0}) = 1;
  CHECK(a.at({0, 0}) == 5);
  Tensor r = a.reshape({4});
  r.data()[3] = 9;
  CHECK(a.at({1, 1}) == 9);
  CHECK(r.shares_storage(a));
  CHECK_FALSE(c.shares_storage(a));
  CHECK(a.reshape({-1, 1}).shape() == Shape{4, 1});
}
// [docs:end]

TEST_CASE("random tensors are reproducible from the seed") {
  manual_seed(123);
  const Tensor a = randn({100});
  const Tensor u = rand({1000});
  manual_seed(123);
  CHECK(randn({100}).to_vector() == a.to_vector());
  CHECK(rand({1000}).to_vector() == u.to_vector());
  for (real v : u.to_vector()) {
    CHECK(v >= 0);
    CHECK(v < 1);
  }
  manual_seed(5);
  const Tensor z = randn({20000});
  CHECK(std::abs(mean(z).item()) < 0.03);
  CHECK(mean(z * z).item() == doctest::Approx(1).epsilon(0.03));
}

TEST_CASE("the generator's state round-trips through text, including a kept normal") {
  manual_seed(7);
  randn({3});  // an odd count: one normal of the last Box-Muller pair is kept for later
  const std::string saved = default_generator().state();
  const Tensor expected = randn({5});
  manual_seed(99);
  default_generator().set_state(saved);
  CHECK(randn({5}).to_vector() == expected.to_vector());
  CHECK_THROWS_WITH_AS(default_generator().set_state("12 34"),
                       "Generator::set_state: expected the text of Generator::state(), got '12 34'", std::runtime_error);
  CHECK_THROWS_WITH_AS(default_generator().set_state(saved + " 5"),
                       doctest::Contains("Generator::set_state: expected the text of Generator::state()"),
                       std::runtime_error);
}

TEST_CASE("printing shows shape and values, abbreviated when large") {
  CHECK(to_string(from_vector({1, 2, 3, 4}, {2, 2})) == "tensor([[1, 2], [3, 4]], shape=[2, 2])");
  CHECK(to_string(scalar(0.5)) == "tensor(0.5, shape=[])");
  CHECK(to_string(Tensor()) == "tensor(undefined)");
  const std::string big = to_string(arange(2000));
  CHECK(big == "tensor([0, 1, 2, ..., 1997, 1998, 1999], shape=[2000])");
  CHECK(to_string(zeros({2, 0})) == "tensor([[], []], shape=[2, 0])");
}

TEST_CASE("error messages: reshape, at, item, from_vector") {
  const Tensor t = zeros({2, 3});
  CHECK_THROWS_WITH_AS(t.reshape({4, 2}), "reshape: expected a shape with 6 elements (from shape [2, 3]), got [4, 2]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(t.reshape({-1, -1}), "reshape: only one size may be -1, got [-1, -1]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(t.reshape({4, -1}), "reshape: cannot infer the -1 in [4, -1] for a tensor of shape [2, 3] (6 elements)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(t.at({2, 0}), "at: index 2 is out of range for axis 0 of size 2", std::out_of_range);
  CHECK_THROWS_WITH_AS(t.at({0}), "at: expected 2 indices for a tensor of shape [2, 3], got 1", std::invalid_argument);
  CHECK_THROWS_WITH_AS(t.item(), "item: expected a tensor with one element, got shape [2, 3]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(from_vector({1, 2, 3}, {2, 2}), "from_vector: expected 4 values for shape [2, 2], got 3",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(zeros({2, -1}), "Tensor: expected non-negative sizes, got shape [2, -1]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(t.size(2), "size: axis 2 is out of range for a tensor of 2 dimensions (valid: -2..1)",
                       std::out_of_range);
}

TEST_CASE("unravel_index names an element by its index on every axis") {
  CHECK(unravel_index(5, Shape{2, 3}) == Shape{1, 2});
  CHECK(unravel_index(0, Shape{2, 3, 4}) == Shape{0, 0, 0});
  CHECK(unravel_index(23, Shape{2, 3, 4}) == Shape{1, 2, 3});
  CHECK(unravel_index(0, Shape{}) == Shape{});  // a scalar has no axes
  CHECK(to_string(unravel_index(7, Shape{4, 2})) == "[3, 1]");
}

TEST_CASE("RowWalk merges axes that are walked as one, and finds every row's start") {
  // Scores (64, 4, 20, 20) with a causal mask (20, 20): the mask repeats every 400 elements,
  // so the walk is 256 rows of 400, not 5,120 rows of 20.
  const Shape scores{64, 4, 20, 20};
  RowWalk<2> causal(scores, {strides(scores), broadcast_strides({20, 20}, scores)});
  CHECK(causal.rows() == 256);
  CHECK(causal.cols() == 400);
  CHECK(causal.step(0) == 1);
  CHECK(causal.step(1) == 1);
  // A padding mask (64, 1, 1, 20) repeats along the two middle axes: they merge with each
  // other, not with the rows.
  RowWalk<2> padding(scores, {strides(scores), broadcast_strides({64, 1, 1, 20}, scores)});
  CHECK(padding.rows() == 64 * 80);
  CHECK(padding.cols() == 20);
  // A bias (C) added to (B, T, C): one row per token.
  RowWalk<2> bias(Shape{8, 5, 3}, {strides({8, 5, 3}), broadcast_strides({3}, {8, 5, 3})});
  CHECK(bias.rows() == 40);
  CHECK(bias.step(1) == 1);
  // A column (B, T, 1) against (B, T, C): the rows are the tokens, the column is read once.
  RowWalk<2> column(Shape{8, 5, 3}, {strides({8, 5, 3}), broadcast_strides({8, 5, 1}, {8, 5, 3})});
  CHECK(column.rows() == 40);
  CHECK(column.step(1) == 0);
  // Size-1 axes and scalars: one row of one element.
  RowWalk<1> scalar_walk(Shape{1, 1}, {std::vector<int64_t>{0, 0}});
  CHECK(scalar_walk.rows() == 1);
  CHECK(scalar_walk.cols() == 1);

  // Every row's offsets, walked with next() from any starting row, match the offsets computed
  // from the row's index on every axis. The permuted strides of (2, 3, 4, 5) -> (5, 3, 2, 4) and
  // a broadcast operand (3, 1, 1) make a walk with no axis merged and one with some.
  const Shape out{5, 3, 2, 4};
  const std::vector<int64_t> permuted{1, 20, 60, 5};  // out axis d steps through x's axis {3, 1, 0, 2}
  const std::vector<int64_t> broadcast = broadcast_strides({3, 1, 1}, out);
  RowWalk<2> walk(out, {permuted, broadcast});
  CHECK(walk.rows() == 30);
  for (int64_t start : {0, 7, 29}) {
    RowWalk<2> w = walk;
    w.seek(start);
    for (int64_t r = start; r < walk.rows(); ++r, w.next()) {
      const Shape index = unravel_index(r * out.back(), out);
      int64_t expect0 = 0, expect1 = 0;
      for (size_t d = 0; d < out.size(); ++d) {
        expect0 += index[d] * permuted[d];
        expect1 += index[d] * broadcast[d];
      }
      CHECK(w.offset(0) == expect0);
      CHECK(w.offset(1) == expect1);
    }
  }
}
