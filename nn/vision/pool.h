// nn/vision/pool.h - MaxPool2d and AvgPool2d: pooling layers, as PyTorch's nn.MaxPool2d / nn.AvgPool2d.
//
// No parameters: each keeps one number per (kH, kW) window of every channel, the largest or the
// mean, shrinking (N, C, H, W) to (N, C, H_out, W_out) with, per spatial axis,
//   H_out = (H + 2 padding - kH) / stride + 1          (stride defaults to the kernel size)
// The arithmetic is the ops max_pool2d / avg_pool2d (autograd/ops.h, kernels in tensor/pool.h).
// Not here: dilation, ceil_mode, return_indices, count_include_pad = false.
// Read first: conv.h. Read next: batchnorm.h.
#pragma once

#include <string>

#include "nn/core/module.h"

namespace seqgrad::nn {

// Both layers take the op's settings: kernel size, stride, padding, a number or (height, width).
//   MaxPool2d pool(MaxPool2dOptions(3).with_stride(2).with_padding(1));
using MaxPool2dOptions = Pool2dOptions;
using AvgPool2dOptions = Pool2dOptions;

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(const MaxPool2dOptions& options) : options(options) {}
  std::string name() const override { return "MaxPool2d"; }
  std::string extra_repr() const override;
  // x (N, C, H, W) -> (N, C, H_out, W_out)
  Variable forward(const Variable& x) override { return max_pool2d(x, options); }

  MaxPool2dOptions options;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(const AvgPool2dOptions& options) : options(options) {}
  std::string name() const override { return "AvgPool2d"; }
  std::string extra_repr() const override;
  // x (N, C, H, W) -> (N, C, H_out, W_out)
  Variable forward(const Variable& x) override { return avg_pool2d(x, options); }

  AvgPool2dOptions options;
};

}  // namespace seqgrad::nn
