// nn/vision/batchnorm.cpp - BatchNorm2d's parameters and buffers, its forward, and the composed definition.
#include "nn/vision/batchnorm.h"

#include "tensor/check.h"

namespace seqgrad::nn {

BatchNorm2d::BatchNorm2d(const BatchNorm2dOptions& o) : options(o) {
  check(o.num_features > 0, name(), ": expected a positive num_features, got ", o.num_features);
  check(o.eps > 0, name(), ": expected a positive eps, got ", o.eps);
  check(o.momentum >= 0 && o.momentum <= 1, name(), ": expected a momentum in [0, 1], got ", o.momentum);
  if (o.affine) {
    weight = register_parameter("weight", ones({o.num_features}));
    bias = register_parameter("bias", zeros({o.num_features}));
  }
  if (o.track_running_stats) {
    running_mean = register_buffer("running_mean", zeros({o.num_features}));
    running_var = register_buffer("running_var", ones({o.num_features}));
    num_batches_tracked = register_buffer("num_batches_tracked", scalar(0));
  }
}

std::string BatchNorm2d::extra_repr() const {
  const BatchNorm2dOptions& o = options;
  return cat(o.num_features, ", eps=", o.eps, ", momentum=", o.momentum, ", affine=", o.affine ? "true" : "false",
             ", track_running_stats=", o.track_running_stats ? "true" : "false");
}

// [docs:batchnorm2d_forward]
Variable BatchNorm2d::forward(const Variable& x) {
  check(x.dim() == 4 && x.size(1) == options.num_features, name(), ": expected input of shape (N, ",
        options.num_features, ", H, W), got ", x.shape());
  // Batch statistics while training, and always when there are no running ones to use.
  const bool use_batch = is_training() || !options.track_running_stats;
  Variable y = batch_norm(x, running_mean, running_var, weight, bias, use_batch, options.momentum, options.eps);
  if (is_training() && options.track_running_stats) num_batches_tracked.data()[0] += 1;  // after a batch that worked
  return y;
}
// [docs:end]

// [docs:batch_norm_composed]
Variable batch_norm_composed(const Variable& x, const Variable& weight, const Variable& bias, real eps) {
  const int64_t C = x.size(1);
  Variable mu = mean(x, {0, 2, 3}, /*keepdim=*/true);        // (1, C, 1, 1)
  Variable xc = x - mu;                                      // (N, C, H, W)
  Variable var = mean(xc * xc, {0, 2, 3}, /*keepdim=*/true); // (1, C, 1, 1), biased
  Variable y = xc / sqrt(var + eps);
  if (weight.defined()) y = y * reshape(weight, {1, C, 1, 1});
  return bias.defined() ? y + reshape(bias, {1, C, 1, 1}) : y;
}
// [docs:end]

}  // namespace seqgrad::nn
