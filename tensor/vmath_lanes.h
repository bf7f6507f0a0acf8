// tensor/vmath_lanes.h - exp, sigmoid and tanh on vectors of floats, the formulas of vmath.h,
// written once and compiled once per instruction set: tensor/vmath_generic.cpp and
// vmath_avx2.cpp (8 lanes) and vmath_avx512.cpp (16 lanes) each define the settings below and
// include this file, and the Makefile gives each its own flags, as for the gemm
// (tensor/gemm_blocked.h). tensor/vmath.cpp calls the copy of the path in use
// (tensor/kernel_path.h). Every lane computes the same operations in the same order whatever
// the width, so the AVX2 and AVX-512 copies give the same bits.
//   SEQGRAD_VMATH_NAMESPACE  vmath_generic, vmath_avx2 or vmath_avx512
//   SEQGRAD_VMATH_BYTES      bytes in a vector: 32 or 64
// Not a header to include anywhere else. float only: the float64 build uses the C library.
#include <cmath>
#include <cstdint>
#include <cstring>

#if !defined(SEQGRAD_VMATH_NAMESPACE) || !defined(SEQGRAD_VMATH_BYTES)
#error "tensor/vmath_lanes.h is compiled through vmath_generic.cpp, vmath_avx2.cpp or vmath_avx512.cpp"
#endif

namespace seqgrad::SEQGRAD_VMATH_NAMESPACE {
namespace {

// (Without AVX, GCC notes that passing 32-byte vectors by value changed ABI in GCC 4.6; these
// helpers are internal to this file and inlined, so no ABI is crossed.)
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float vf __attribute__((vector_size(SEQGRAD_VMATH_BYTES)));
typedef int32_t vi __attribute__((vector_size(SEQGRAD_VMATH_BYTES)));
constexpr int64_t kLanes = SEQGRAD_VMATH_BYTES / 4;  // floats in a vector: 8 or 16

vf splat(float v) { return vf{} + v; }

// Lane-wise select: where mask (all ones), a; elsewhere b. Comparisons of vectors give masks.
inline vf select(vi mask, vf a, vf b) {
  return reinterpret_cast<vf>((mask & reinterpret_cast<vi>(a)) | (~mask & reinterpret_cast<vi>(b)));
}

inline vf exp_v(vf x) {
  // Past lo the result rounds to 0 (it is below half the smallest subnormal float, 2^-150);
  // past hi it overflows to inf. Those lanes are overwritten at the end, so they compute with a
  // harmless stand-in: 0 below lo (as for the -inf of masked attention scores) rather than lo
  // itself, whose 2^-150 would run through subnormal floats, which cost the processor a slow
  // microcode assist per operation.
  const vf lo = splat(-103.972f), hi = splat(88.72283f);
  const vf xc = select(x < lo, splat(0.0f), select(x > hi, hi, x));
  // round(x / ln 2): adding and subtracting 1.5 * 2^23 rounds to the nearest whole number.
  const vf n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const vf r = (xc - n * 0.693359375f) + n * 2.12194440e-4f;  // x - n ln 2, ln 2 in two parts
  vf p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;  // e^r
  // 2^n as two factors 2^n1 2^n2, n1 = floor(n / 2): n runs from -150 to 128 and a single
  // float's exponent only from -126 to 127. Multiplying by the second factor last rounds a
  // subnormal result correctly.
  const vi ni = __builtin_convertvector(n, vi), n1 = ni >> 1, n2 = ni - n1;
  const vf y = p * reinterpret_cast<vf>((n1 + 127) << 23) * reinterpret_cast<vf>((n2 + 127) << 23);
  return select(x < lo, splat(0.0f), select(x > hi, splat(HUGE_VALF), y));
}

inline vf abs_v(vf x) { return reinterpret_cast<vf>(reinterpret_cast<vi>(x) & 0x7fffffff); }

inline vf sigmoid_v(vf x) {
  const vf e = exp_v(-abs_v(x));  // in (0, 1]
  const vf s = 1.0f / (1.0f + e);
  return select(x >= 0.0f, s, e * s);
}

inline vf tanh_v(vf x) {
  const vf ax = abs_v(x), z = x * x;
  vf p = splat(-5.70498872745e-3f);
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const vf small = p * z * ax + ax;  // both branches compute tanh(|x|); the sign goes on last
  const vf large = 1.0f - 2.0f / (exp_v(2.0f * ax) + 1.0f);
  const vi sign = reinterpret_cast<vi>(x) & static_cast<int32_t>(0x80000000u);
  return reinterpret_cast<vf>(reinterpret_cast<vi>(select(ax < 0.625f, small, large)) | sign);
}

// Applies fv to whole vectors, then to the last n % kLanes values through a zero-padded vector.
template <typename F>
void apply(const float* x, float* y, int64_t n, F fv) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    vf v;
    std::memcpy(&v, x + i, sizeof v);
    v = fv(v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    vf v{};
    std::memcpy(&v, x + i, (n - i) * sizeof(float));
    v = fv(v);
    std::memcpy(y + i, &v, (n - i) * sizeof(float));
  }
}

}  // namespace

// y[i] = f(x[i]) for i < n; y may equal x.
void exp(const float* x, float* y, int64_t n) { apply(x, y, n, exp_v); }
void sigmoid(const float* x, float* y, int64_t n) { apply(x, y, n, sigmoid_v); }
void tanh(const float* x, float* y, int64_t n) { apply(x, y, n, tanh_v); }

}  // namespace seqgrad::SEQGRAD_VMATH_NAMESPACE
