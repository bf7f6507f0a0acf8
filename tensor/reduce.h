// tensor/reduce.h - reductions along an axis: sum, mean, max, argmax, and sum_to_shape.
//
// A reduction over axis k sees the tensor as (outer, n, inner) and produces (outer, inner),
// or (outer, 1, inner) with keepdim. Each output is accumulated by one thread, in index order,
// in double precision: the result is accurate and identical for any number of threads.
// sum_to_shape is the inverse of broadcasting, used by every broadcasting op's backward.
// Read next: shape_ops.h.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace seqgrad {

// Sum over one axis, several axes, or all of them (a 0-dimensional result).
Tensor sum(const Tensor& x, int64_t axis, bool keepdim = false);
Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim = false);
Tensor sum(const Tensor& x);

Tensor mean(const Tensor& x, int64_t axis, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim = false);
Tensor mean(const Tensor& x);

// Largest value along an axis, and its index (the first one, where there are ties).
struct MaxResult {
  Tensor values;
  Tensor indices;  // whole numbers stored as real
};
MaxResult max_with_indices(const Tensor& x, int64_t axis, bool keepdim = false);
Tensor max(const Tensor& x, int64_t axis, bool keepdim = false);
Tensor argmax(const Tensor& x, int64_t axis, bool keepdim = false);
Tensor max(const Tensor& x);  // over all elements

// The sum over k < n of term(k), in double, for kernels that reduce a contiguous row (the last
// axis here, LayerNorm's statistics in fused.cpp). One running sum would make every add wait
// for the one before it (4 cycles each); 16 independent ones, lane j taking k = j, j + 16, ...,
// keep the vector adders busy, and are combined pairwise at the end. The order of the additions
// depends on n alone, never on the thread count.
// (Always inlined: a loop compiled per instruction set, tensor/isa_loop.h, then has it compiled
// for that set too.)
template <class Term>
__attribute__((always_inline)) inline double lane_sum(int64_t n, Term term) {
  // The 16 lanes as four vectors of 4 doubles: acc[q][i] is lane 4q + i. Written as vectors so
  // that starting at zero is four register moves and the pairwise combine four vector adds,
  // which matters for the 20-value rows of attention; the additions are the same either way.
  typedef double d4 __attribute__((vector_size(32)));
  d4 acc[4] = {};
  int64_t k = 0;
  for (; k + 16 <= n; k += 16)
    for (int q = 0; q < 4; ++q)
      acc[q] += d4{term(k + 4 * q), term(k + 4 * q + 1), term(k + 4 * q + 2), term(k + 4 * q + 3)};
  if (k < n)  // the last n % 16 terms go to lanes 0, 1, ...; the other lanes add 0, which changes nothing
    for (int q = 0; q < 4; ++q) {
      d4 t = {};
      for (int i = 0; i < 4; ++i)
        if (k + 4 * q + i < n) t[i] = term(k + 4 * q + i);
      acc[q] += t;
    }
  acc[0] += acc[2];  // lanes j += j + 8
  acc[1] += acc[3];
  acc[0] += acc[1];  // j += j + 4
  return (acc[0][0] + acc[0][2]) + (acc[0][1] + acc[0][3]);  // j += j + 2, then lane 0 += lane 1
}

// Sums x over the axes that broadcasting expanded, so the result has `shape`:
//   sum_to_shape(g of shape [4, 5, 3], {5, 1}) sums axis 0, and axis 2 with keepdim -> [5, 1].
Tensor sum_to_shape(const Tensor& x, const Shape& shape);

}  // namespace seqgrad
