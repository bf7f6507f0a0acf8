// exercises/solutions/02_leaky_relu/exercise.cpp - reference solution of exercise 02.
#include "exercise.h"

using namespace seqgrad;

Variable leaky_relu(const Variable& x, real slope) {
  const Tensor xv = x.value();
  const Tensor y = map(xv, [slope](real v) { return v > 0 ? v : slope * v; });  // same shape as x
  // The lambda keeps x's values (to know which side of 0 each element was on) and the slope.
  return make_result("leaky_relu", y, {x}, [xv, slope](const Tensor& dout, Node& n) {
    // y = x > 0 ? x : slope * x  =>  dy/dx = 1 where x > 0, slope elsewhere
    n.add_grad(0, map2(xv, dout, [slope](real xi, real g) { return xi > 0 ? g : slope * g; }));
  });
}
// Why |x| >= 0.1 in the gradcheck: the derivative jumps from slope to 1 at x = 0. A central
// difference (f(x + h) - f(x - h)) / 2h across the kink measures the average of the two
// slopes, not either one, so inputs must stay at least h away from 0.
