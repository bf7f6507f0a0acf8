// tensor/isa_loop.h - a short loop compiled once per instruction set, the copy run chosen as
// the gemm's is (tensor/kernel_path.h).
//
// The gemm and vmath are whole files compiled once per instruction set. The elementwise loops
// of the ops (relu's mask, softmax's rows, layer norm, the column sums) are a few lines each,
// inside the op; they are vectorised by the compiler, for the build's own target. That is
// AVX-512 in a default build on a machine that has it, but SSE2 in `make PORTABLE=1`, where
// they took a Transformer step 16% longer (docs/performance.md). for_isa gives such a loop the
// same choice as the kernels:
//
//   for_isa([&] { for (int64_t i = i0; i < i1; ++i) dx[i] = mask[i] ? dy[i] : 0; });
//
// compiles the lambda's body three times, inside three functions that differ only in the
// instruction set the compiler may use (the `target` attribute; `flatten` pulls the lambda and
// what it calls inline into each, so the whole loop is compiled for that set), and calls the
// copy of kernel_path(): SEQGRAD_KERNEL=generic|avx2|avx512 picks it as it picks the gemm's.
// The copies compute the same operations in the same order; the wider ones may fuse a multiply
// and an add (as the build's own target does where it has FMA), so a loop of the form a * b + c
// can round differently on the generic path than on the other two.
#pragma once

#include "tensor/kernel_path.h"

namespace seqgrad {
namespace isa_detail {

template <class F>
__attribute__((flatten)) void run_generic(const F& f) {
  f();
}

#if defined(__x86_64__) || defined(__i386__)
// The instruction sets of the avx2 and avx512 paths (kernel_path.h), and the vector width the
// compiler should prefer for each (GCC otherwise keeps to 256-bit vectors for AVX-512 code
// unless told the CPU; clang takes the width as a function attribute of its own).
#if defined(__clang__)
#define SEQGRAD_ISA_AVX2 __attribute__((target("avx2,fma"), flatten))
#define SEQGRAD_ISA_AVX512 \
  __attribute__((target("avx2,fma,avx512f,avx512vl,avx512bw,avx512dq"), min_vector_width(512), flatten))
#else
#define SEQGRAD_ISA_AVX2 __attribute__((target("avx2,fma"), flatten))
#define SEQGRAD_ISA_AVX512 \
  __attribute__((target("avx2,fma,avx512f,avx512vl,avx512bw,avx512dq,prefer-vector-width=512"), flatten))
#endif

template <class F>
SEQGRAD_ISA_AVX2 void run_avx2(const F& f) {
  f();
}

template <class F>
SEQGRAD_ISA_AVX512 void run_avx512(const F& f) {
  f();
}
#undef SEQGRAD_ISA_AVX2
#undef SEQGRAD_ISA_AVX512
#endif

}  // namespace isa_detail

// Runs f() compiled for the instruction set of kernel_path().
template <class F>
void for_isa(const F& f) {
#if defined(__x86_64__) || defined(__i386__)
  switch (kernel_path()) {
    case KernelPath::avx512:
      return isa_detail::run_avx512(f);
    case KernelPath::avx2:
      return isa_detail::run_avx2(f);
    case KernelPath::generic:
      break;
  }
#endif
  isa_detail::run_generic(f);
}

}  // namespace seqgrad
