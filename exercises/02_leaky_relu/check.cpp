// exercises/02_leaky_relu/check.cpp - make -C exercises check EX=02
#include <doctest/doctest.h>

#include "exercise.h"

using namespace seqgrad;

TEST_CASE("02: values") {
  const Variable x(from_vector({-2, -0.5f, 0.5f, 3}));
  const Tensor y = leaky_relu(x, real(0.1)).value();
  REQUIRE(y.shape() == Shape{4});
  CHECK(y.at({0}) == doctest::Approx(-0.2));
  CHECK(y.at({1}) == doctest::Approx(-0.05));
  CHECK(y.at({2}) == doctest::Approx(0.5));
  CHECK(y.at({3}) == doctest::Approx(3));
}

TEST_CASE("02: one op named leaky_relu, recorded only when a gradient is wanted") {
  const Variable x(from_vector({1, -1}), /*requires_grad=*/true);
  CHECK(leaky_relu(x).op() == "leaky_relu");
  CHECK_FALSE(leaky_relu(Variable(from_vector({1, -1}))).requires_grad());
}

TEST_CASE("02: gradcheck, away from the kink at 0") {
  manual_seed(2);
  // |x| >= 0.1, so the finite differences never straddle the kink.
  const Tensor x = map(randn({3, 5}), [](real v) { return v >= 0 ? v + real(0.1) : v - real(0.1); });
  for (real slope : {real(0.01), real(0.2), real(-0.5)}) {
    CAPTURE(slope);
    const GradcheckResult r = gradcheck([slope](const std::vector<Variable>& v) { return leaky_relu(v[0], slope); }, {x});
    CHECK_MESSAGE(r.ok, r.message);
  }
}

TEST_CASE("02: the backward accumulates (x used twice)") {
  const Variable x(from_vector({2, -3}), true);
  Variable y = leaky_relu(x, real(0.5)) + leaky_relu(x, real(0.25));
  sum(y).backward();
  REQUIRE(x.grad().defined());
  CHECK(x.grad().at({0}) == doctest::Approx(2));     // 1 + 1
  CHECK(x.grad().at({1}) == doctest::Approx(0.75));  // 0.5 + 0.25
}
