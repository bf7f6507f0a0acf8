// exercises/03_rms_norm_op/check.cpp - make -C exercises check EX=03
#include <doctest/doctest.h>

#include "exercise.h"
#include "exercises/check_util.h"

using namespace seqgrad;
using exercises::max_diff;

namespace {
// The formulas of exercise.h composed from autograd ops: the oracle, six nodes.
Variable rms_norm_composed(const Variable& x, const Variable& weight, real eps) {
  return x / sqrt(mean(x * x, -1, true) + eps) * weight;
}
}  // namespace

TEST_CASE("03: the same values as the composition, as one op; each row has root mean square 1") {
  manual_seed(3);
  const Variable w(ones({6}), true);
  const Variable x(randn({2, 4, 6}) * real(3), true);
  const Variable y = rms_norm(x, w, real(1e-6));
  CHECK(y.op() == "rms_norm");
  CHECK(max_diff(y.value(), rms_norm_composed(x, w, real(1e-6)).value()) < 1e-4);
  CHECK(max_diff(sqrt(mean(y.value() * y.value(), -1)), ones({2, 4})) < 1e-4);
  // Unlike layer norm it does not centre: a constant row stays a constant row of ones.
  const Tensor c = rms_norm(Variable(full({1, 6}, real(-2))), w).value();
  CHECK(max_diff(c, full({1, 6}, real(-1))) < 1e-4);
}

TEST_CASE("03: the same gradients as the composition") {
  manual_seed(4);
  const Tensor xv = randn({3, 5}), wv = randn({5}), dy = randn({3, 5});
  const Variable x1(xv.clone(), true), w1(wv.clone(), true), x2(xv.clone(), true), w2(wv.clone(), true);
  rms_norm_composed(x1, w1, real(1e-6)).backward(dy);
  const Variable y = rms_norm(x2, w2);
  CHECK(y.op() == "rms_norm");
  y.backward(dy);
  REQUIRE(x2.grad().defined());
  REQUIRE(w2.grad().defined());
  CHECK(max_diff(x2.grad(), x1.grad()) < 1e-4);
  CHECK(max_diff(w2.grad(), w1.grad()) < 1e-4);
}

TEST_CASE("03: gradcheck with respect to x and weight; a wrong width is refused") {
  manual_seed(5);
  const GradcheckResult r = gradcheck([](const std::vector<Variable>& v) { return rms_norm(v[0], v[1]); },
                                      {randn({2, 3, 4}), randn({4})});
  CHECK_MESSAGE(r.ok, r.message);
  CHECK_THROWS_AS(rms_norm(Variable(randn({2, 5})), Variable(randn({4}))), std::invalid_argument);
}
