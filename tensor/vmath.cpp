// tensor/vmath.cpp - exp, sigmoid and tanh over arrays (the formulas are in vmath.h): each call
// goes to the copy of tensor/vmath_lanes.h for the instruction set in use (tensor/kernel_path.h).
#include "tensor/vmath.h"

#include <cmath>

#include "tensor/kernel_path.h"

namespace seqgrad {

#ifndef SEQGRAD_DOUBLE

// The copies, each in its own namespace (tensor/vmath_lanes.h).
#define SEQGRAD_VMATH_DECLARE(ns)                          \
  namespace ns {                                          \
  void exp(const float* x, float* y, int64_t n);          \
  void sigmoid(const float* x, float* y, int64_t n);      \
  void tanh(const float* x, float* y, int64_t n);         \
  }
SEQGRAD_VMATH_DECLARE(vmath_generic)
SEQGRAD_VMATH_DECLARE(vmath_avx2)
SEQGRAD_VMATH_DECLARE(vmath_avx512)
#undef SEQGRAD_VMATH_DECLARE

namespace vmath {

#if defined(__x86_64__) || defined(__i386__)
#define SEQGRAD_VMATH_DISPATCH(f)                                      \
  switch (kernel_path()) {                                            \
    case KernelPath::avx512: return vmath_avx512::f(x, y, n);        \
    case KernelPath::avx2: return vmath_avx2::f(x, y, n);            \
    case KernelPath::generic: break;                                  \
  }                                                                   \
  return vmath_generic::f(x, y, n)
#else
#define SEQGRAD_VMATH_DISPATCH(f) return vmath_generic::f(x, y, n)
#endif

void exp(const real* x, real* y, int64_t n) { SEQGRAD_VMATH_DISPATCH(exp); }
void sigmoid(const real* x, real* y, int64_t n) { SEQGRAD_VMATH_DISPATCH(sigmoid); }
void tanh(const real* x, real* y, int64_t n) { SEQGRAD_VMATH_DISPATCH(tanh); }
#undef SEQGRAD_VMATH_DISPATCH

}  // namespace vmath

#else  // float64: the library's own functions, one element at a time

namespace vmath {

void exp(const real* x, real* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}
void sigmoid(const real* x, real* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const real e = std::exp(-std::fabs(x[i]));
    y[i] = x[i] >= 0 ? 1 / (1 + e) : e / (1 + e);
  }
}
void tanh(const real* x, real* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

}  // namespace vmath

#endif

}  // namespace seqgrad
