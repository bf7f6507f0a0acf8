// tensor/gemm_avx2.cpp - the blocked gemm (tensor/gemm_blocked.h) for x86 cores with AVX2 and
// FMA (Haswell and later, Zen): 6 x 16 tiles of 256-bit vectors. The Makefile compiles this file
// with -mavx2 -mfma whatever the build's target, and tensor/gemm.cpp calls it only on a CPU that
// has both; elsewhere it is empty.
#if defined(__x86_64__) || defined(__i386__)
#define SEQGRAD_GEMM_NAMESPACE gemm_avx2
#define SEQGRAD_GEMM_KERNEL_BYTES 32
#define SEQGRAD_GEMM_MR 6
#include "tensor/gemm_blocked.h"
#endif
