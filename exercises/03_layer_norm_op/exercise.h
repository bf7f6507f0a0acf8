// exercises/03_layer_norm_op - layer normalisation as ONE op with a hand-written backward
// (chapters 2 and 10).
//
// nn::LayerNorm is composed from six autograd ops (mean, sub, mul, mean, add, sqrt, div...),
// each saving tensors for backward. A fused op computes the same thing and saves only what
// its own backward needs. Over the last axis (C), with weight and bias of shape (C):
//   mu = mean(x),  var = mean((x - mu)^2),  xhat = (x - mu) / sqrt(var + eps)
//   y  = xhat * weight + bias                                  x, y (..., C)
// Backward, with g = dy * weight and means over the last axis:
//   dx = (g - mean(g) - xhat * mean(g * xhat)) / sqrt(var + eps)
//   dweight = sum of dy * xhat over every axis but the last;   dbias = sum of dy likewise
// (Derive the dx line yourself before you code it: chapter 10 sketches it.)
#pragma once

#include "seqgrad.h"

seqgrad::Variable layer_norm(const seqgrad::Variable& x, const seqgrad::Variable& weight,
                             const seqgrad::Variable& bias, seqgrad::real eps = seqgrad::real(1e-5));
