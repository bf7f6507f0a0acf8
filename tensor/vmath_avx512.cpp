// tensor/vmath_avx512.cpp - exp, sigmoid and tanh (tensor/vmath_lanes.h) in 16-lane vectors for
// x86 cores with AVX-512; compiled with -mavx512f and kin (Makefile), called only on such a CPU.
#if !defined(SEQGRAD_DOUBLE) && (defined(__x86_64__) || defined(__i386__))
#define SEQGRAD_VMATH_NAMESPACE vmath_avx512
#define SEQGRAD_VMATH_BYTES 64
#include "tensor/vmath_lanes.h"
#endif
