// tensor/conv.h - 2-D convolution as matrix products: im2col, the blocked gemm, col2im.
//
// A convolution slides a (C_in, kH, kW) filter over an image. Written as loops it is six deep;
// written as a matrix product it runs on the same blocked, threaded gemm as every Linear.
// im2col copies every window the filter visits into one column:
//   cols[(c, i, j), (oh, ow)] = x[c, oh * stride - padding + i * dilation, ow * stride - padding + j * dilation]
// (0 outside the image), a (C_in kH kW, H_out W_out) matrix per image, so that
//   out = W (C_out, C_in kH kW) @ cols       + bias                     (C_out, H_out W_out)
// Backward is the same in reverse: dW = dout @ cols^T, dcols = W^T @ dout, and col2im adds
// every column back onto the pixels it came from (windows overlap: a pixel gets the sum).
// With groups G, channels split into G groups, each convolved with its own C_out / G filters.
// Layout NCHW, weight (C_out, C_in / G, kH, kW), as PyTorch's.
// H_out = (H + 2 padding - dilation (kH - 1) - 1) / stride + 1, and the same for W.
// Read first: matmul.h. Read next: autograd/ops.h conv2d, nn/vision/conv.h.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace seqgrad {

struct Conv2dGeometry {
  int64_t N = 0, C_in = 0, H = 0, W = 0;  // input
  int64_t C_out = 0, kH = 0, kW = 0;      // weight
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
  int64_t H_out = 0, W_out = 0;           // computed by conv2d_geometry
  int64_t group_in() const { return C_in / groups; }    // input channels per group
  int64_t group_out() const { return C_out / groups; }  // filters per group
  int64_t K() const { return group_in() * kH * kW; }    // rows of a group's column matrix
  int64_t L() const { return H_out * W_out; }           // output positions
};

// Checks x (N, C_in, H, W) and weight (C_out, C_in / groups, kH, kW) against the settings and
// computes the output size; every mistake is a std::invalid_argument naming `op`.
Conv2dGeometry conv2d_geometry(const Shape& x, const Shape& weight, int64_t stride_h, int64_t stride_w, int64_t pad_h,
                               int64_t pad_w, int64_t dil_h, int64_t dil_w, int64_t groups, const char* op = "conv2d");

// x (N, C_in, H, W) -> cols (N, G, K, L)
Tensor im2col(const Tensor& x, const Conv2dGeometry& g);
// cols (N, G, K, L) -> (N, C_in, H, W), each column entry added onto its pixel
Tensor col2im(const Tensor& cols, const Conv2dGeometry& g);

}  // namespace seqgrad
