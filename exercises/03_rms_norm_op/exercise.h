// exercises/03_rms_norm_op - RMS normalisation as ONE op with a hand-written backward
// (chapters 2 and 10).
//
// Chapter 10 derives layer norm's backward and autograd/ops_nn.cpp codes it. RMSNorm (Zhang
// and Sennrich, 2019; used by T5 and LLaMA) drops the centring: it divides by the root mean
// square of each row, with no mean subtracted and no bias. Over the last axis (C):
//   r = sqrt(mean(x^2) + eps),   xhat = x / r,   y = xhat * weight        x, y (..., C), weight (C)
// Write it as one op, make_result("rms_norm", ...), whose backward you derive yourself:
//   dweight = sum of dy * xhat over every axis but the last
//   dx      = ?   (on paper first: r depends on every element of the row. With g = dy * weight,
//                  the answer has the shape of layer norm's, one term fewer.)
// x of another width than weight throws std::invalid_argument.
#pragma once

#include "seqgrad.h"

seqgrad::Variable rms_norm(const seqgrad::Variable& x, const seqgrad::Variable& weight,
                           seqgrad::real eps = seqgrad::real(1e-6));
