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
// instruction set the compiler may use (the `target` attribute; `flatten` pulls the lambda
// inline into each, so the whole loop is compiled for that set), and calls the copy of
// kernel_path(): SEQGRAD_KERNEL=generic|avx2|avx512 picks it as it picks the gemm's.
// The copies are never inlined into their caller, which would give them the caller's
// preferences back (GCC keeps to 256-bit vectors on many AVX-512 CPUs unless told otherwise).
// A function the loop calls must be inlined too, or it runs as compiled for the build's target:
// GCC's `flatten` inlines calls within calls, Clang's only the direct ones, so such helpers
// are marked SEQGRAD_INLINE_LOOP (always inlined). tests/check_isa_copies.sh checks the built
// copies for wide vector instructions.
// The copies compute the same operations in the same order; the wider ones may fuse a multiply
// and an add (as the build's own target does where it has FMA), so a loop of the form a * b + c
// can round differently on the generic path than on the other two.
#pragma once

#include "tensor/kernel_path.h"

// A helper called from a for_isa loop: inlined wherever it is called, so into each copy.
#define SEQGRAD_INLINE_LOOP __attribute__((always_inline)) inline

namespace seqgrad {
namespace isa_detail {

// The path of the copy that ran last on this thread (read by tests/tensor/test_isa_loop.cpp).
inline thread_local KernelPath last_copy = KernelPath::generic;

template <class F>
__attribute__((flatten, noinline)) void run_generic(const F& f) {
  last_copy = KernelPath::generic;
  f();
}

#if defined(__x86_64__) || defined(__i386__)
// The instruction sets of the avx2 and avx512 paths (kernel_path.h), and the vector width the
// compiler should prefer for each: GCC takes it in the target string. Clang has an attribute of
// its own, which it honours where the build's target is generic (PORTABLE=1); with
// -march=native it keeps the CPU's preferred width.
#if defined(__clang__)
#define SEQGRAD_ISA_AVX2 __attribute__((target("avx2,fma"), flatten, noinline))
#define SEQGRAD_ISA_AVX512 \
  __attribute__((target("avx2,fma,avx512f,avx512vl,avx512bw,avx512dq"), min_vector_width(512), flatten, noinline))
#else
#define SEQGRAD_ISA_AVX2 __attribute__((target("avx2,fma"), flatten, noinline))
#define SEQGRAD_ISA_AVX512 \
  __attribute__((target("avx2,fma,avx512f,avx512vl,avx512bw,avx512dq,prefer-vector-width=512"), flatten, noinline))
#endif

template <class F>
SEQGRAD_ISA_AVX2 void run_avx2(const F& f) {
  last_copy = KernelPath::avx2;
  f();
}

template <class F>
SEQGRAD_ISA_AVX512 void run_avx512(const F& f) {
  last_copy = KernelPath::avx512;
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
