// tensor/gemm_generic.cpp - the blocked gemm (tensor/gemm_blocked.h) in portable vectors: the
// copy every machine can run, compiled for the build's own target and nothing more (with
// `make PORTABLE=1` on x86-64 that is SSE2, with no fused multiply-add).
#define SEQGRAD_GEMM_NAMESPACE gemm_generic
#define SEQGRAD_GEMM_KERNEL_BYTES 32  // 6 x 16 tiles of 256-bit vectors (split where narrower)
#define SEQGRAD_GEMM_MR 6
#include "tensor/gemm_blocked.h"
