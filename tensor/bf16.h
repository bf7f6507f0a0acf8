// tensor/bf16.h - bfloat16, the 16-bit number format of matrix products at
// MatmulPrecision::BFloat16 (tensor/matmul.h), and its conversions to and from float32.
//
// The format. A float32 is a sign bit, an 8-bit exponent and a 23-bit mantissa (fraction):
//
//     float32    bit 31 | 30 ...... 23 | 22 .......................... 0
//                 sign  | exponent (8) |         mantissa (23)
//     bfloat16   bit 15 | 14 ....... 7 | 6 .... 0
//                 sign  | exponent (8) | mant. (7)
//
// A bfloat16 ("brain floating point") is the top half of a float32: the same sign, the same
// 8-bit exponent with the same bias (127), and the first 7 of the 23 mantissa bits. So
//   * its range is float32's: the largest finite value is (2 - 2^-7) 2^127, about 3.39e38; the
//     smallest normal one 2^-126, about 1.18e-38; subnormals go down to 2^-133;
//   * its precision is 8 significant bits (7 stored and the leading 1): neighbouring values
//     are 2^-7 apart relative to their size, a rounding error is at most half that, 2^-8 (about
//     0.4%, between 2 and 3 decimal digits);
//   * zeros, infinities and NaNs are float32's with the low half cut off: +0 0x0000, -0 0x8000,
//     +inf 0x7F80, -inf 0xFF80, NaN an all-ones exponent with a mantissa other than 0 (0x7FC0 is
//     the usual quiet NaN);
//   * widening to float32 is exact: append 16 zero bits (bf16_to_float).
// IEEE's half precision (float16) splits its 16 bits the other way, a 5-bit exponent and 10
// mantissa bits: more precision, but a range of 6.1e-5 to 65504 for normal numbers, which is why
// float16 training needs loss scaling and bfloat16 training does not (docs/matmul.md, section 9).
//
// Narrowing float32 -> bfloat16 (bf16_from_float) drops the low 16 bits, rounding to the nearest
// bfloat16 and, exactly halfway, to the one whose last kept bit is 0 ("ties to even", IEEE 754's
// default). In integer arithmetic on the bit pattern u of the float:
//     u + 0x7FFF + (bit 16 of u), then keep the top 16 bits
// Below halfway (low half < 0x8000) the add does not carry into bit 16: rounded down. Above
// (> 0x8000) it always carries: rounded up. Exactly halfway (0x8000) it carries only when bit 16
// is 1, making the kept part even. A carry out of the mantissa steps the exponent up, which is
// right too: 0x3FFF8000 (1.99609375, halfway between 1.9921875 and 2) becomes 0x4000 (2.0),
// and the largest floats round up to 0x7F80, infinity, as IEEE says a result too big for the
// format does. Subnormals need no special case: their bit patterns are ordered like their
// values. Infinities stay infinities (their low half is 0). A NaN is the one exception: adding
// could carry its payload into the exponent, or a NaN whose payload is all in the low half would
// become infinity; so a NaN keeps its sign and top payload bits and gets the quiet bit (bit 6
// of the bfloat16) set: a NaN stays a quiet NaN.
// Tests: tests/tensor/test_bf16.cpp, against a reference that compares distances instead.
// Read next: tensor/matmul.h (MatmulPrecision), docs/matmul.md section 9.
#pragma once

#include <cstdint>
#include <cstring>

#include "tensor/dtype.h"

namespace seqgrad {

// float32 -> bfloat16 bits, rounded to nearest, ties to even (see above).
// [docs:bf16_from_float]
inline uint16_t bf16_from_float(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN: quiet
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
// [docs:end]

// bfloat16 bits -> float32, exact: the 16 bits become the top half.
inline float bf16_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// x rounded to the nearest bfloat16, as a float32: bf16_to_float(bf16_from_float(x)).
inline float round_to_bf16(float x) { return bf16_to_float(bf16_from_float(x)); }

// The same for a double, rounded once, straight to the nearest bfloat16 (ties to even). Going
// through float would round twice, and a double just above a bfloat16 halfway point can
// round down to the halfway point as a float and then to even, the wrong way. Used by the
// float64 build of the library (the gradient checks), where `real` is double.
double round_to_bf16(double x);

// out[i] = round_to_bf16(x[i]) for i < n (out may be x).
void round_to_bf16(const real* x, real* out, int64_t n);

}  // namespace seqgrad
