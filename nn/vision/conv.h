// nn/vision/conv.h - Conv2d: a 2-D convolution layer, as PyTorch's nn.Conv2d.
//
// weight (C_out, C_in / groups, kH, kW) and bias (C_out), named and initialised as in PyTorch:
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for both, fan_in = C_in / groups * kH * kW. Input
// (N, C_in, H, W) -> output (N, C_out, H_out, W_out) with, per spatial axis,
//   H_out = (H + 2 padding - dilation (kH - 1) - 1) / stride + 1.
// The arithmetic is the op conv2d (autograd/ops.h): im2col and the blocked matmul (tensor/conv.h).
// Read first: nn/core/linear.h. Read next: patch_embedding.h (a convolution with stride = kernel).
#pragma once

#include <cstdint>
#include <string>

#include "nn/core/module.h"

namespace seqgrad::nn {

// As libtorch's Conv2dOptions: a square kernel, stride, padding and dilation by default, or
// (height, width) pairs.
struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : in_channels(in_channels), out_channels(out_channels), kernel_h(kernel_size), kernel_w(kernel_size) {}
  int64_t in_channels, out_channels, kernel_h, kernel_w;
  int64_t stride_h = 1, stride_w = 1, padding_h = 0, padding_w = 0, dilation_h = 1, dilation_w = 1, groups = 1;
  bool bias = true;

  Conv2dOptions& with_kernel_size(int64_t h, int64_t w) { kernel_h = h; kernel_w = w; return *this; }
  Conv2dOptions& with_stride(int64_t v) { return with_stride(v, v); }
  Conv2dOptions& with_stride(int64_t h, int64_t w) { stride_h = h; stride_w = w; return *this; }
  Conv2dOptions& with_padding(int64_t v) { return with_padding(v, v); }
  Conv2dOptions& with_padding(int64_t h, int64_t w) { padding_h = h; padding_w = w; return *this; }
  Conv2dOptions& with_dilation(int64_t v) { return with_dilation(v, v); }
  Conv2dOptions& with_dilation(int64_t h, int64_t w) { dilation_h = h; dilation_w = w; return *this; }
  Conv2dOptions& with_groups(int64_t v) { groups = v; return *this; }
  Conv2dOptions& with_bias(bool v) { bias = v; return *this; }
};

class Conv2d : public Module {
 public:
  explicit Conv2d(const Conv2dOptions& options);
  std::string name() const override { return "Conv2d"; }
  std::string extra_repr() const override;
  // x (N, C_in, H, W) -> (N, C_out, H_out, W_out)
  Variable forward(const Variable& x) override;

  Conv2dOptions options;
  Variable weight;  // (C_out, C_in / groups, kH, kW)
  Variable bias;    // (C_out), undefined when bias = false
};

}  // namespace seqgrad::nn
