// tensor/pool.h - 2-D max and average pooling, forward and backward kernels side by side.
//
// Pooling slides a (kH, kW) window over every channel of an NCHW image, with a stride and a
// zero border of `padding` cells, and keeps one number per window: the largest (max pooling)
// or the mean (average pooling). There are no weights; a channel never mixes with another.
//   max:  out[n, c, oh, ow] = max over (i, j) of x[n, c, oh * stride - padding + i, ow * stride - padding + j]
//   avg:  the same sum divided by kH kW (padded cells count as zeros: PyTorch's count_include_pad)
// Padded cells never win a max (they are -inf). H_out = (H + 2 padding - kH) / stride + 1
// (rounded down: PyTorch's ceil_mode = false), and the same for W. What this is not: dilation,
// ceil_mode, or average pooling that leaves the padding out of the count.
// Read first: conv.h (the same windows). Read next: autograd/ops.h max_pool2d, nn/vision/pool.h.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace seqgrad {

struct Pool2dGeometry {
  int64_t N = 0, C = 0, H = 0, W = 0;  // input
  int64_t kH = 0, kW = 0, stride_h = 0, stride_w = 0, pad_h = 0, pad_w = 0;
  int64_t H_out = 0, W_out = 0;  // computed by pool2d_geometry
};

// Checks x (N, C, H, W) against the settings (PyTorch's rules: kernel and stride >= 1,
// 0 <= padding <= kernel / 2, the kernel fits in the padded input) and computes the output
// size; every mistake is a std::invalid_argument naming `op`.
Pool2dGeometry pool2d_geometry(const Shape& x, int64_t kernel_h, int64_t kernel_w, int64_t stride_h, int64_t stride_w,
                               int64_t pad_h, int64_t pad_w, const char* op);

// ------------------------------------------------------------------------------------------------
// Max pooling. argmax holds, for every output, where its winner sits in its (H, W) plane
// (y W + x, PyTorch's return_indices): the first largest value in row-major order on ties, and
// a NaN wins over any number, as in PyTorch.
struct MaxPool2dForward {
  Tensor y;                     // (N, C, H_out, W_out)
  std::vector<int64_t> argmax;  // (N, C, H_out, W_out)
};
MaxPool2dForward max_pool2d_forward(const Tensor& x, const Pool2dGeometry& g);
// dx[n, c, argmax] += dy[n, c, oh, ow]: each output's gradient goes to its winner alone.
Tensor max_pool2d_backward(const Tensor& dy, const std::vector<int64_t>& argmax, const Pool2dGeometry& g);

// ------------------------------------------------------------------------------------------------
// Average pooling: every cell of a window gets dy / (kH kW) of that window's gradient.
Tensor avg_pool2d_forward(const Tensor& x, const Pool2dGeometry& g);
Tensor avg_pool2d_backward(const Tensor& dy, const Pool2dGeometry& g);

}  // namespace seqgrad
