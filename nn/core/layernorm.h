// nn/core/layernorm.h - LayerNorm: normalise each position's features to mean 0, variance 1.
//
//   y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias      over the last axis (C)
// var is the biased variance (divide by C), as in PyTorch. weight starts at 1, bias at 0.
// layer_norm_composed() below writes this with autograd ops, so its backward comes for free and
// is easy to check: it is the definition. LayerNorm::forward runs the fused op layer_norm()
// (autograd/ops.h, kernels in tensor/fused.cpp): the same numbers up to rounding, in one node
// and two passes over the data instead of about ten. The Transformer chapter explains why a
// layer norm sits after every residual connection.
#pragma once

#include "nn/core/module.h"

namespace seqgrad::nn {

// The definition, composed from autograd ops: mean, sub, mul, sqrt, div (weight and bias may be
// undefined). Tests check the fused layer_norm() against it.
Variable layer_norm_composed(const Variable& x, const Variable& weight, const Variable& bias, real eps);

class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t normalized_shape, real eps = real(1e-5), bool elementwise_affine = true);
  std::string name() const override { return "LayerNorm"; }
  std::string extra_repr() const override;
  // x (..., C) -> (..., C)
  Variable forward(const Variable& x) override;

  int64_t normalized_shape;
  real eps;
  Variable weight, bias;  // (C) each; undefined without elementwise_affine
};

}  // namespace seqgrad::nn
