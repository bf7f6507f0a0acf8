// nn/layernorm.h - LayerNorm: normalise each position's features to mean 0, variance 1.
//
//   y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias      over the last axis (C)
// var is the biased variance (divide by C), as in PyTorch. weight starts at 1, bias at 0.
// This version is composed from autograd ops, so its backward comes for free and is easy to
// check; the Transformer chapter explains why it sits after every residual connection.
#pragma once

#include "nn/module.h"

namespace seqgrad::nn {

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
