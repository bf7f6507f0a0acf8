// exercises/03_layer_norm_op/check.cpp - make -C exercises check EX=03
#include <doctest/doctest.h>

#include "exercise.h"

using namespace seqgrad;

namespace {
double max_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return 1e30;
  return max(abs(a - b)).item();
}
}  // namespace

TEST_CASE("03: the same values as nn::LayerNorm, as one op") {
  manual_seed(3);
  nn::LayerNorm ln(6);
  ln.weight.value().copy_(randn({6}));
  ln.bias.value().copy_(randn({6}));
  const Variable x(randn({2, 4, 6}), true);
  const Variable y = layer_norm(x, ln.weight, ln.bias);
  CHECK(y.op() == "layer_norm");
  CHECK(max_diff(y.value(), ln.forward(x).value()) < 1e-4);
}

TEST_CASE("03: the same gradients as the composed nn::LayerNorm") {
  manual_seed(4);
  nn::LayerNorm ln(5);
  ln.weight.value().copy_(randn({5}));
  ln.bias.value().copy_(randn({5}));
  const Tensor xv = randn({3, 5}), dy = randn({3, 5});
  const Variable x1(xv.clone(), true), x2(xv.clone(), true);
  ln.forward(x1).backward(dy);
  const Tensor dw = ln.weight.grad().clone(), db = ln.bias.grad().clone();
  ln.zero_grad();
  layer_norm(x2, ln.weight, ln.bias).backward(dy);
  REQUIRE(x2.grad().defined());
  REQUIRE(ln.weight.grad().defined());
  REQUIRE(ln.bias.grad().defined());
  CHECK(max_diff(x2.grad(), x1.grad()) < 1e-4);
  CHECK(max_diff(ln.weight.grad(), dw) < 1e-4);
  CHECK(max_diff(ln.bias.grad(), db) < 1e-4);
}

TEST_CASE("03: gradcheck with respect to x, weight and bias") {
  manual_seed(5);
  const GradcheckResult r =
      gradcheck([](const std::vector<Variable>& v) { return layer_norm(v[0], v[1], v[2]); },
                {randn({2, 3, 4}), randn({4}), randn({4})});
  CHECK_MESSAGE(r.ok, r.message);
}
