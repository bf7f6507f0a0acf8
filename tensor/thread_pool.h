// tensor/thread_pool.h - one process-wide pool of std::thread workers and parallel_for.
//
// The pool is created once, on first use, with SEQGRAD_THREADS threads (or one per hardware
// thread); set_num_threads() changes it at run time. parallel_for splits [begin, end) into at
// most one chunk per thread and runs them on the workers and the calling thread. Which thread
// runs a chunk is not fixed, so kernels must make each output's value independent of the
// split: every output element is computed by exactly one chunk, in a fixed order. That is why
// results are bit-identical for 1 or 16 threads. Read next: elementwise.h, matmul.h.
#pragma once

#include <cstdint>
#include <functional>

namespace seqgrad {

// Threads the pool uses (the calling thread counts as one).
int get_num_threads();

// The most threads a pool may have.
constexpr int kMaxThreads = 256;

// Resize the pool: 1 <= n <= kMaxThreads. Not allowed from inside a parallel_for.
void set_num_threads(int n);

// True while the calling thread is running a chunk of a parallel_for. A parallel_for started
// there runs inline on the calling thread (no nested parallelism, no deadlock).
bool in_parallel_region();

// Calls fn(chunk_begin, chunk_end) over disjoint chunks covering [begin, end), in parallel.
// A loop of at most `grain` items runs inline on the caller; a longer one is cut into at most
// one chunk per thread and per `grain` items, of equal size (so a chunk may hold fewer than
// `grain` items: 1.5 x grain on two threads is two chunks of 0.75 x grain).
// An exception thrown by fn is rethrown here after every chunk has finished.
//   parallel_for(0, rows, /*grain=*/16, [&](int64_t r0, int64_t r1) { ... });
void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn);
// The same with a plain function and its context: fn(ctx, chunk_begin, chunk_end). For code
// compiled with wider instruction-set flags than the rest (tensor/gemm_avx512.cpp), which must
// not build a std::function itself: its out-of-line pieces would be compiled with those flags
// too, and the linker might keep that copy for the whole program (tests/check_kernel_symbols.sh).
void parallel_for(int64_t begin, int64_t end, int64_t grain, void (*fn)(void* ctx, int64_t, int64_t), void* ctx);

}  // namespace seqgrad
