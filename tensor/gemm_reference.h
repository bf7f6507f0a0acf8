// tensor/gemm_reference.h - the blocked reference kernel: gemm's contract (tensor/matmul.h) in
// plain loops, cut into blocks the way the fast kernel (tensor/gemm_blocked.h) cuts it, and
// summing every element in the fast kernel's order, so that it gives the fast kernel's bits.
// No packing, no vectors, no threads: read it before the fast kernel, which adds those.
//
// The blocking, from the outside in. C is cut into blocks of kRefMC rows by kRefNC columns; the
// fast kernel calls such a block a task, and gives each to one thread. For one block of C, K is
// cut into blocks of at most kRefKC: a block of op(A), kRefMC x kRefKC (64 KB of floats), and one
// of op(B), kRefKC x kRefNC (64 KB), are then all the loops below read, again and again, while
// they stay in the L2 cache; the block of C (16 KB) stays there from one K block to the next. The
// triple loop of gemm_reference (tensor/matmul.cpp) instead walks all of B for every row of C,
// and for large matrices reads nearly every element from memory.
//
// Why the bits are the fast kernel's: an element of C is a chain of multiply-adds over k, each
// rounded once (std::fma; the fast kernel's FMA instructions), in the order k = 0, 1, 2, ...,
// cut where the K blocks are cut: the first block's chain starts from bias[j] (or 0) and is
// stored into C, or added to the addend or to C; each later block's starts from 0 and is added
// to C. The K blocks are those of the fast kernel: K in equal blocks of at most 256, a choice
// that depends on K alone. The row and column blocks change which element is computed when,
// never how, so kRefMC and kRefNC may be anything. (Where the fast kernel's target has no FMA,
// each product is rounded before it is added, and the two differ in the last bits.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "tensor/dtype.h"

namespace seqgrad {

// [docs:gemm_blocked_reference]
constexpr int64_t kRefMC = 64, kRefNC = 64, kRefKC = 256;  // rows, columns, depth of a block

// C (M, N) = op(A) (M, K) op(B) (K, N) (+ bias) (+ C when accumulate, + addend when given).
inline void gemm_blocked_reference(int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B,
                                   bool trans_b, real* C, const real* bias = nullptr, bool accumulate = false,
                                   const real* addend = nullptr) {
  auto a = [&](int64_t i, int64_t k) { return trans_a ? A[k * M + i] : A[i * K + k]; };  // op(A)(i, k)
  auto b = [&](int64_t k, int64_t j) { return trans_b ? B[j * K + k] : B[k * N + j]; };  // op(B)(k, j)
  const real* first = addend ? addend : accumulate ? C : nullptr;  // what the first K block adds to
  if (K == 0) {  // the empty sum: the bias, or nothing at all (C keeps a -0), added to `first`
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        C[i * N + j] = bias ? (first ? first[i * N + j] + bias[j] : bias[j]) : (first ? first[i * N + j] : 0);
    return;
  }
  const int64_t k_blocks = (K + kRefKC - 1) / kRefKC;
  const int64_t kc = (K + k_blocks - 1) / k_blocks;  // K in k_blocks equal blocks (the last may be shorter)
  for (int64_t i0 = 0; i0 < M; i0 += kRefMC)        // a block of rows of C and of op(A)
    for (int64_t j0 = 0; j0 < N; j0 += kRefNC)      // a block of columns of C and of op(B)
      for (int64_t k0 = 0; k0 < K; k0 += kc)        // a K block: op(A)[i0.., k0..], op(B)[k0.., j0..]
        for (int64_t i = i0; i < std::min(M, i0 + kRefMC); ++i)
          for (int64_t j = j0; j < std::min(N, j0 + kRefNC); ++j) {
            real sum = k0 == 0 && bias ? bias[j] : 0;  // the first block starts from the bias
            for (int64_t k = k0; k < std::min(K, k0 + kc); ++k) sum = std::fma(a(i, k), b(k, j), sum);
            const real* to = k0 == 0 ? first : C;  // what this block's sum is added to
            C[i * N + j] = to ? to[i * N + j] + sum : sum;
          }
}
// [docs:end]

}  // namespace seqgrad
