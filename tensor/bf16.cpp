// tensor/bf16.cpp - rounding to bfloat16 (tensor/bf16.h): a double straight to the nearest
// bfloat16, and whole arrays, for the portable bfloat16 matrix product (tensor/gemm.cpp).
#include "tensor/bf16.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace seqgrad {

// Scaled so that the bfloat16 spacing at x becomes 1, x is rounded to a whole number (ties to
// even: the default rounding mode) and scaled back; every step but the rounding is exact.
double round_to_bf16(double x) {
  if (std::isnan(x)) return std::copysign(std::numeric_limits<double>::quiet_NaN(), x);
  if (x == 0 || std::isinf(x)) return x;
  int e = 0;
  std::frexp(x, &e);                     // |x| = f 2^e with f in [0.5, 1): its leading bit is 2^(e - 1)
  const int q = std::max(e - 8, -133);   // the spacing there: 8 significant bits, 2^-133 among subnormals
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, -q)), q);
  if (std::fabs(r) >= 0x1p128) return std::copysign(std::numeric_limits<double>::infinity(), x);  // past the largest
  return r;
}

#ifndef SEQGRAD_DOUBLE
// bf16_from_float without a branch (both results, then a select), so that the compiler runs the
// loop on vectors: the portable product rounds all of A and B this way at every call.
void round_to_bf16(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, x + i, sizeof u);
    const uint32_t nearest = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    const uint32_t quiet = (u | 0x00400000u) & 0xFFFF0000u;
    const uint32_t r = (u & 0x7FFFFFFFu) > 0x7F800000u ? quiet : nearest;
    std::memcpy(out + i, &r, sizeof r);
  }
}
#else
void round_to_bf16(const double* x, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = round_to_bf16(x[i]);
}
#endif

}  // namespace seqgrad
