// nn/vision/batchnorm.h - BatchNorm2d: normalise every channel over the batch, as PyTorch's nn.BatchNorm2d.
//
//   y = (x - mean_c) / sqrt(var_c + eps) * weight_c + bias_c          x (N, C, H, W), per channel c
// In training, mean and var are the batch's own over its N H W values (var biased), and the
// layer keeps running averages of them (running = (1 - momentum) running + momentum batch, the
// variance unbiased); eval() switches to those, so a prediction no longer depends on the rest
// of its batch. Parameters weight (ones) and bias (zeros), buffers running_mean (zeros),
// running_var (ones) and num_batches_tracked: PyTorch's state_dict names. batch_norm_composed()
// is the definition from autograd ops; forward runs the fused op batch_norm (autograd/ops.h).
// Read first: nn/core/layernorm.h, nn/core/dropout.h (train and eval). Not here: momentum = None, 1-d and 3-d.
#pragma once

#include <cstdint>
#include <string>

#include "nn/core/module.h"

namespace seqgrad::nn {

// The training-mode definition, composed from autograd ops (mean, sub, mul, sqrt, div) over
// the axes (0, 2, 3) of x (N, C, H, W); weight and bias (C) or undefined. Tests check the fused
// op against it, values and gradients.
Variable batch_norm_composed(const Variable& x, const Variable& weight, const Variable& bias, real eps);

struct BatchNorm2dOptions {
  explicit BatchNorm2dOptions(int64_t num_features) : num_features(num_features) {}
  int64_t num_features;                // C
  real eps = real(1e-5);
  real momentum = real(0.1);           // weight of the new batch in the running averages
  bool affine = true;                  // learn weight and bias
  bool track_running_stats = true;     // keep running averages (without: batch statistics in eval too)

  BatchNorm2dOptions& with_eps(real v) { eps = v; return *this; }
  BatchNorm2dOptions& with_momentum(real v) { momentum = v; return *this; }
  BatchNorm2dOptions& with_affine(bool v) { affine = v; return *this; }
  BatchNorm2dOptions& with_track_running_stats(bool v) { track_running_stats = v; return *this; }
};

class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(const BatchNorm2dOptions& options);
  std::string name() const override { return "BatchNorm2d"; }
  std::string extra_repr() const override;
  // x (N, C, H, W) -> (N, C, H, W). In training, also updates the running statistics.
  Variable forward(const Variable& x) override;

  BatchNorm2dOptions options;
  Variable weight, bias;             // (C) each; undefined without affine
  Tensor running_mean, running_var;  // (C) each; undefined without track_running_stats
  // Training batches seen, a 0-d tensor (PyTorch keeps an int64; tensors and checkpoints here
  // hold float32, exact up to 2^24 = 16,777,216 batches).
  Tensor num_batches_tracked;
};

}  // namespace seqgrad::nn
