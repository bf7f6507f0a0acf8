// nn/core/layernorm.cpp - LayerNorm composed from mean, sub, mul and sqrt.
#include "nn/core/layernorm.h"

#include "tensor/check.h"

namespace seqgrad::nn {

LayerNorm::LayerNorm(int64_t c, real eps_, bool affine) : normalized_shape(c), eps(eps_) {
  check(c > 0, "LayerNorm: expected a positive normalized_shape, got ", c);
  check(eps_ > 0, "LayerNorm: expected a positive eps, got ", eps_);
  if (affine) {
    weight = register_parameter("weight", ones({c}));
    bias = register_parameter("bias", zeros({c}));
  }
}

std::string LayerNorm::extra_repr() const {
  return cat("(", normalized_shape, ",), eps=", eps, ", elementwise_affine=", weight.defined() ? "true" : "false");
}

// [docs:layer_norm_composed]
Variable layer_norm_composed(const Variable& x, const Variable& weight, const Variable& bias, real eps) {
  Variable mu = mean(x, -1, /*keepdim=*/true);          // (..., 1)
  Variable xc = x - mu;                                 // (..., C)
  Variable var = mean(xc * xc, -1, /*keepdim=*/true);   // (..., 1), biased
  Variable y = xc / sqrt(var + eps);                    // (..., C)
  if (weight.defined()) y = y * weight;
  return bias.defined() ? y + bias : y;
}
// [docs:end]

Variable LayerNorm::forward(const Variable& x) {
  check(x.dim() >= 1 && x.size(-1) == normalized_shape, "LayerNorm: expected input with ", normalized_shape,
        " features (last axis), got shape ", x.shape());
  return layer_norm(x, weight, bias, eps);  // fused: one node, the same numbers as above
}

}  // namespace seqgrad::nn
