// tensor/vmath_avx2.cpp - exp, sigmoid and tanh (tensor/vmath_lanes.h) in 8-lane vectors for x86
// cores with AVX2 and FMA; compiled with -mavx2 -mfma (Makefile), called only on such a CPU.
#if !defined(SEQGRAD_DOUBLE) && (defined(__x86_64__) || defined(__i386__))
#define SEQGRAD_VMATH_NAMESPACE vmath_avx2
#define SEQGRAD_VMATH_BYTES 32
#include "tensor/vmath_lanes.h"
#endif
