// tensor/gemm_avx512.cpp - the blocked gemm (tensor/gemm_blocked.h) for x86 cores with AVX-512
// (Skylake-X, Ice Lake, Sapphire Rapids, Zen 4): 8 x 32 tiles of 512-bit vectors, twice the
// work per instruction of the AVX2 copy and the same bits. The Makefile compiles this file with
// -mavx512f and kin whatever the build's target, and tensor/gemm.cpp calls it only on a CPU
// (and an operating system) that has them; elsewhere it is empty.
#if defined(__x86_64__) || defined(__i386__)
#define SEQGRAD_GEMM_NAMESPACE gemm_avx512
#define SEQGRAD_GEMM_KERNEL_BYTES 64
#define SEQGRAD_GEMM_MR 8
#define SEQGRAD_GEMM_A_KMAJOR 1
#define SEQGRAD_GEMM_B_IN_PLACE_SLIVERS 8
#define SEQGRAD_GEMM_OWN_B_BYTES (1 << 20)
#define SEQGRAD_GEMM_PREFETCH_IN_KERNEL 1
#include "tensor/gemm_blocked.h"
#endif
