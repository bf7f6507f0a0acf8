// tensor/batchnorm.h - batch normalisation kernels: per-channel statistics over a batch, and the
// normalisation forward and backward side by side.
//
// x (N, C, ...) is seen as N x C planes of L values (an image's H W pixels; L = 1 for (N, C)).
// Every channel c is normalised over its M = N L values:
//   mu_c, var_c = mean and biased variance (divide by M),   rstd_c = 1 / sqrt(var_c + eps)
//   x_hat = (x - mu_c) rstd_c,   y = weight_c x_hat + bias_c
// In training mu and var are the batch's own (batch_norm_stats), and the backward must count
// that they depend on x; in eval they are constants (the running averages nn/vision/batchnorm.h keeps).
// Unlike layer norm (fused.h), the statistics run across the batch, not along a row.
// Read first: fused.h (layer norm). Read next: autograd/ops.h batch_norm, nn/vision/batchnorm.h.
#pragma once

#include "tensor/tensor.h"

namespace seqgrad {

// The batch's mean and biased variance per channel, (C) each: the mean first, then the mean
// squared deviation from it (two passes, in double, in an order fixed by the shape).
struct BatchNormStats {
  Tensor mean, var;
};
BatchNormStats batch_norm_stats(const Tensor& x);

// y = (x - mean_c) rstd_c weight_c + bias_c, with x_hat saved for the backward. mean and rstd
// (C); weight and bias (C) or undefined (1 and 0).
struct BatchNormForward {
  Tensor y, x_hat;  // the shape of x
};
BatchNormForward batch_norm_forward(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                    const Tensor& bias);

// With g = dy weight_c (the gradient reaching x_hat) and means over a channel's M values:
//   batch statistics:  dx = rstd_c (g - mean(g) - x_hat mean(g x_hat))
//   fixed statistics:  dx = rstd_c g
//   dweight_c = sum of dy x_hat,   dbias_c = sum of dy                           (C) each
struct BatchNormBackward {
  Tensor dx, dweight, dbias;
};
BatchNormBackward batch_norm_backward(const Tensor& dy, const Tensor& x_hat, const Tensor& rstd, const Tensor& weight,
                                      bool batch_stats);

}  // namespace seqgrad
