// tensor/vmath.h - exp, sigmoid and tanh over arrays, eight floats at a time.
//
// std::exp and std::tanh are function calls, one element at a time: about 5 ns for expf and
// 20 ns for tanhf here, which made the activations of an LSTM a fifth of its training step.
// These work on vectors of 8 or 16 floats (GCC/Clang vector extensions, as in the gemm; the code
// is in vmath_lanes.h, compiled once per instruction set, see kernel_path.h), in which every
// branch is a select, and are accurate to about one unit in the last place
// (tests/tensor/test_vmath.cpp measures them against double-precision references):
//
//   exp(x) = 2^n e^r with n = round(x / ln 2) and r = x - n ln 2 in [-ln2/2, ln2/2]: e^r by a
//            degree-6 polynomial, 2^n by writing n + 127 into the exponent bits of floats.
//            Subnormal results (x < -87.3) come out right, through a 2^n split in two factors.
//   sigmoid(x) = 1 / (1 + e^-x) for x >= 0, and e^x / (1 + e^x) for x < 0: e^-|x| <= 1 never
//            overflows.
//   tanh(x) = x + x^3 P(x^2) for |x| < 0.625 (no cancellation near 0), else
//            sign(x) (1 - 2 / (e^2|x| + 1)).
// The polynomials are the classic minimax fits of the Cephes library. The float64 build uses
// std::exp and std::tanh instead: the polynomials are only accurate to float precision.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace seqgrad::vmath {

// y[i] = f(x[i]) for i < n; y may equal x.
void exp(const real* x, real* y, int64_t n);
void sigmoid(const real* x, real* y, int64_t n);
void tanh(const real* x, real* y, int64_t n);

}  // namespace seqgrad::vmath
