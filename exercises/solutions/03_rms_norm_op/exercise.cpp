// exercises/solutions/03_rms_norm_op/exercise.cpp - reference solution of exercise 03.
#include "exercise.h"

using namespace seqgrad;

Variable rms_norm(const Variable& x, const Variable& weight, real eps) {
  check(weight.dim() == 1 && x.dim() >= 1 && x.size(-1) == weight.size(0), "rms_norm: expected x (..., ",
        weight.size(0), ") for a weight of shape ", weight.shape(), ", got ", x.shape());
  const Tensor xv = x.value(), w = weight.value();
  const Tensor r = sqrt(mean(xv * xv, -1, /*keepdim=*/true) + eps);  // (..., 1)
  const Tensor x_hat = xv / r;                                       // (..., C)
  // Saved for backward: x_hat and r. The composition keeps x besides (x * x and x / r save it)
  // and records six nodes; x * x, the mean and the sum before sqrt it lets go once the next op
  // has read them, since a Node keeps no input's value, only what its backward captured.
  return make_result("rms_norm", x_hat * w, {x, weight}, [x_hat, r, w](const Tensor& dy, Node& n) {
    // y = x_hat * weight,  x_hat = x / r,  r = sqrt(mean(x^2) + eps), per row of C elements.
    // With g = dy * weight (the gradient reaching x_hat):
    //   dr/dx_j = x_j / (C r) = x_hat_j / C
    //   dx_j = g_j / r - sum_i g_i x_i / r^2 * dr/dx_j = (g_j - x_hat_j mean(g * x_hat)) / r
    // (layer norm's dx without its - mean(g) term: nothing was subtracted, so nothing to undo).
    if (n.needs_grad(0)) {
      const Tensor g = dy * w;                                                       // (..., C)
      n.add_grad(0, (g - x_hat * mean(g * x_hat, -1, /*keepdim=*/true)) / r);  // (..., C)
    }
    if (n.needs_grad(1)) n.add_grad(1, sum_to_shape(dy * x_hat, w.shape()));  // (C)
  });
}
