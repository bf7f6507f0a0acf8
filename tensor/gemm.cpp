// tensor/gemm.cpp - the production matrix-multiply kernel behind matmul().
//
// For now a straightforward row-parallel loop; the cache-blocked, packed kernel replaces it.
#include <algorithm>
#include <vector>

#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

namespace seqgrad {

// The production kernel. Rows of C are independent, so they are split over the pool; within a
// row, the k-then-j loop order streams through B and C contiguously and vectorises.

void gemm(int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B, bool trans_b,
          real* C) {
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, N * K));
  parallel_for(0, M, grain, [&](int64_t i0, int64_t i1) {
    std::vector<real> brow(trans_b ? N : 0);
    for (int64_t i = i0; i < i1; ++i) {
      real* c = C + i * N;
      for (int64_t j = 0; j < N; ++j) c[j] = 0;
      for (int64_t k = 0; k < K; ++k) {
        const real a = trans_a ? A[k * M + i] : A[i * K + k];
        const real* b = B + k * N;
        if (trans_b) {
          for (int64_t j = 0; j < N; ++j) brow[j] = B[j * K + k];
          b = brow.data();
        }
        for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
      }
    }
  });
}

}  // namespace seqgrad
