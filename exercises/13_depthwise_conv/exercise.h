// exercises/13_depthwise_conv - a depthwise convolution as one op, written as loops, with its
// backward (chapter 14).
//
// A depthwise convolution gives every channel its own (kH, kW) filter and never mixes
// channels: MobileNet's building block, and conv2d with groups = C. For x (N, C, H, W),
// weight (C, 1, kH, kW), bias (C) or an undefined Variable, stride s and zero padding p:
//   y[n, c, oh, ow] = bias[c] + sum_{i < kH, j < kW} weight[c, 0, i, j] * x[n, c, oh s - p + i, ow s - p + j]
// (x is 0 outside the image), y (N, C, H_out, W_out), H_out = (H + 2p - kH) / s + 1, same for W.
// Write it as ONE op, make_result("depthwise_conv2d", ...), directly as loops (no im2col: each
// output reads only kH kW inputs of one channel), and derive the backward: which inputs did
// each output read, and with which weight? dx, dweight and dbias are sums over those pairs.
// Wrong shapes (x not 4-D, weight not (C, 1, kH, kW), bias not (C), a kernel larger than the
// padded image) throw std::invalid_argument.
#pragma once

#include <cstdint>

#include "seqgrad.h"

seqgrad::Variable depthwise_conv2d(const seqgrad::Variable& x, const seqgrad::Variable& weight,
                                   const seqgrad::Variable& bias, int64_t stride = 1, int64_t padding = 0);
