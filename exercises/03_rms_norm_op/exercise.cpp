// exercises/03_rms_norm_op/exercise.cpp - your solution goes here.
#include "exercise.h"

using namespace seqgrad;

Variable rms_norm(const Variable& x, const Variable& weight, real eps) {
  // TODO(exercise 03): compute y with tensor/ kernels on x.value() and weight.value() (mean(t,
  // -1, true), arithmetic, sqrt), then
  //   return make_result("rms_norm", y, {x, weight}, [/* what backward needs */](const Tensor& dy, Node& n) {
  //     if (n.needs_grad(0)) n.add_grad(0, dx);
  //     if (n.needs_grad(1)) n.add_grad(1, dweight);   // sum_to_shape(..., weight's shape)
  //   });
  // Not allowed: composing it from autograd ops (the check asks for one node named rms_norm).
  (void)weight;
  (void)eps;
  return x;
}
