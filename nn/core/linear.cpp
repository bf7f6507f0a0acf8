// nn/core/linear.cpp - Linear's parameters, initialisation and forward.
#include "nn/core/linear.h"

#include <cmath>

#include "nn/core/init.h"
#include "tensor/check.h"

namespace seqgrad::nn {

// [docs:linear_ctor]
Linear::Linear(int64_t in, int64_t out, bool has_bias) : in_features(in), out_features(out) {
  check(in > 0 && out > 0, "Linear: expected positive in_features and out_features, got ", in, " and ", out);
  Tensor w = Tensor::empty({out, in});
  init::kaiming_uniform_(w, std::sqrt(real(5)));  // = U(-1/sqrt(in), 1/sqrt(in))
  weight = register_parameter("weight", w);
  if (has_bias) {
    const real bound = 1 / std::sqrt(static_cast<real>(in));
    Tensor b = Tensor::empty({out});
    init::uniform_(b, -bound, bound);
    bias = register_parameter("bias", b);
  }
}
// [docs:end]

void Linear::tie_weight(const Variable& shared) {
  check(shared.defined() && shared.shape() == Shape{out_features, in_features}, "Linear::tie_weight: expected a weight of shape (",
        out_features, ", ", in_features, "), got ", shared.defined() ? cat(shared.shape()) : std::string("an undefined Variable"));
  weight = shared;
  unregister_parameter("weight");
}

std::string Linear::extra_repr() const {
  return cat("in_features=", in_features, ", out_features=", out_features, ", bias=", bias.defined() ? "true" : "false");
}

// [docs:linear_forward]
Variable Linear::forward(const Variable& x) {
  check(x.dim() >= 1 && x.size(-1) == in_features, "Linear: expected input with ", in_features,
        " features (last axis), got shape ", x.shape());
  // (..., in) @ (in, out) + bias: matmul(x, weight, false, true) + bias as one op, the bias
  // added as the product is written (autograd/ops.h).
  return linear(x, weight, bias);
}
// [docs:end]

}  // namespace seqgrad::nn
