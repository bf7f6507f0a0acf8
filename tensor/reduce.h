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
template <class Term>
double lane_sum(int64_t n, Term term) {
  constexpr int64_t kLanes = 16;
  double acc[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) acc[j] += term(k + j);
  for (int64_t j = 0; k < n; ++k, ++j) acc[j] += term(k);
  for (int64_t width = kLanes / 2; width > 0; width /= 2)
    for (int64_t j = 0; j < width; ++j) acc[j] += acc[j + width];
  return acc[0];
}

// Sums x over the axes that broadcasting expanded, so the result has `shape`:
//   sum_to_shape(g of shape [4, 5, 3], {5, 1}) sums axis 0, and axis 2 with keepdim -> [5, 1].
Tensor sum_to_shape(const Tensor& x, const Shape& shape);

}  // namespace seqgrad
