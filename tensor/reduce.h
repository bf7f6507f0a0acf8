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

// Sums x over the axes that broadcasting expanded, so the result has `shape`:
//   sum_to_shape(g of shape [4, 5, 3], {5, 1}) sums axis 0, and axis 2 with keepdim -> [5, 1].
Tensor sum_to_shape(const Tensor& x, const Shape& shape);

}  // namespace seqgrad
