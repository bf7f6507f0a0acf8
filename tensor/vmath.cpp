// tensor/vmath.cpp - exp, sigmoid and tanh on 8-float vectors; the formulas are in vmath.h.
#include "tensor/vmath.h"

#include <cmath>
#include <cstring>

namespace seqgrad::vmath {
namespace {

// (Without AVX, GCC notes that passing 32-byte vectors by value changed ABI in GCC 4.6; these
// helpers are internal to this file and inlined, so no ABI is crossed.)
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float v8 __attribute__((vector_size(32)));
typedef int32_t i8 __attribute__((vector_size(32)));

v8 splat(float v) { return v8{} + v; }

// Lane-wise select: where mask (all ones), a; elsewhere b. Comparisons of vectors give masks.
inline v8 select(i8 mask, v8 a, v8 b) {
  return reinterpret_cast<v8>((mask & reinterpret_cast<i8>(a)) | (~mask & reinterpret_cast<i8>(b)));
}

inline v8 exp8(v8 x) {
  // Past lo the result rounds to 0 (it is below half the smallest subnormal float, 2^-150);
  // past hi it overflows to inf. Those lanes are overwritten at the end, so they compute with a
  // harmless stand-in: 0 below lo (as for the -inf of masked attention scores) rather than lo
  // itself, whose 2^-150 would run through subnormal floats, which cost the processor a slow
  // microcode assist per operation.
  const v8 lo = splat(-103.972f), hi = splat(88.72283f);
  const v8 xc = select(x < lo, splat(0.0f), select(x > hi, hi, x));
  // round(x / ln 2): adding and subtracting 1.5 * 2^23 rounds to the nearest whole number.
  const v8 n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const v8 r = (xc - n * 0.693359375f) + n * 2.12194440e-4f;  // x - n ln 2, ln 2 in two parts
  v8 p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;  // e^r
  // 2^n as two factors 2^n1 2^n2, n1 = floor(n / 2): n runs from -150 to 128 and a single
  // float's exponent only from -126 to 127. Multiplying by the second factor last rounds a
  // subnormal result correctly.
  const i8 ni = __builtin_convertvector(n, i8), n1 = ni >> 1, n2 = ni - n1;
  const v8 y = p * reinterpret_cast<v8>((n1 + 127) << 23) * reinterpret_cast<v8>((n2 + 127) << 23);
  return select(x < lo, splat(0.0f), select(x > hi, splat(HUGE_VALF), y));
}

inline v8 abs8(v8 x) { return reinterpret_cast<v8>(reinterpret_cast<i8>(x) & 0x7fffffff); }

inline v8 sigmoid8(v8 x) {
  const v8 e = exp8(-abs8(x));  // in (0, 1]
  const v8 s = 1.0f / (1.0f + e);
  return select(x >= 0.0f, s, e * s);
}

inline v8 tanh8(v8 x) {
  const v8 ax = abs8(x), z = x * x;
  v8 p = splat(-5.70498872745e-3f);
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const v8 small = p * z * ax + ax;  // both branches compute tanh(|x|); the sign goes on last
  const v8 large = 1.0f - 2.0f / (exp8(2.0f * ax) + 1.0f);
  const i8 sign = reinterpret_cast<i8>(x) & static_cast<int32_t>(0x80000000u);
  return reinterpret_cast<v8>(reinterpret_cast<i8>(select(ax < 0.625f, small, large)) | sign);
}

// Applies f8 to whole vectors, then to the last n % 8 values through a zero-padded vector.
template <typename F>
void apply(const float* x, float* y, int64_t n, F f8) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v8 v;
    std::memcpy(&v, x + i, sizeof v);
    v = f8(v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    v8 v{};
    std::memcpy(&v, x + i, (n - i) * sizeof(float));
    v = f8(v);
    std::memcpy(y + i, &v, (n - i) * sizeof(float));
  }
}

}  // namespace

#ifndef SEQGRAD_DOUBLE

void exp(const real* x, real* y, int64_t n) { apply(x, y, n, exp8); }
void sigmoid(const real* x, real* y, int64_t n) { apply(x, y, n, sigmoid8); }
void tanh(const real* x, real* y, int64_t n) { apply(x, y, n, tanh8); }

#else  // float64: the library's own functions, one element at a time

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

#endif

}  // namespace seqgrad::vmath
