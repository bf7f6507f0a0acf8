// exercises/06_gru_cell/check.cpp - make -C exercises check EX=06
#include <doctest/doctest.h>

#include "exercise.h"

using namespace seqgrad;

TEST_CASE("06: one step equals nn::GRUCell with the same weights") {
  manual_seed(6);
  nn::GRUCell cell(4, 3);
  const Variable x(randn({2, 4})), h(randn({2, 3}));
  const Variable mine = gru_step(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh);
  const Variable ref = cell.forward(x, nn::RNNState{h, Variable()}).h;
  REQUIRE(mine.shape() == Shape{2, 3});
  CHECK(max(abs(mine.value() - ref.value())).item() < 1e-5);
}

TEST_CASE("06: a closed update gate keeps the state; an open one replaces it") {
  manual_seed(7);
  nn::GRUCell cell(2, 2);
  const Variable x(randn({1, 2})), h(from_vector({0.5f, -0.5f}, {1, 2}));
  // b_iz = +50 makes z = 1: h' = h.   b_iz = -50 makes z = 0: h' = n, in (-1, 1).
  Tensor b = cell.bias_ih.value().clone();
  b.at({2}) = 50;
  b.at({3}) = 50;
  const Variable keep = gru_step(x, h, cell.weight_ih, cell.weight_hh, Variable(b), cell.bias_hh);
  REQUIRE(keep.shape() == Shape{1, 2});
  CHECK(keep.value().at({0, 0}) == doctest::Approx(0.5).epsilon(1e-4));
  CHECK(keep.value().at({0, 1}) == doctest::Approx(-0.5).epsilon(1e-4));
  b.at({2}) = -50;
  b.at({3}) = -50;
  const Variable replace = gru_step(x, h, cell.weight_ih, cell.weight_hh, Variable(b), cell.bias_hh);
  CHECK(max(abs(replace.value() - h.value())).item() > 1e-3);
  CHECK(max(abs(replace.value())).item() < 1);
}

TEST_CASE("06: gradcheck with respect to the input, the state and every weight") {
  manual_seed(8);
  const GradcheckResult r = gradcheck(
      [](const std::vector<Variable>& v) { return gru_step(v[0], v[1], v[2], v[3], v[4], v[5]); },
      {randn({2, 3}), randn({2, 4}), randn({12, 3}) * real(0.5), randn({12, 4}) * real(0.5), randn({12}), randn({12})});
  CHECK_MESSAGE(r.ok, r.message);
}
