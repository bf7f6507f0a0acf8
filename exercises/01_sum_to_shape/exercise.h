// exercises/01_sum_to_shape - undoing broadcasting (chapter 1).
//
// When a + b broadcasts b of shape (3, 1) to (2, 3, 4), every element of b is used 2 * 4 times,
// so its gradient is the sum of 8 contributions. my_sum_to_shape(g, shape) sums g over the
// axes that broadcasting expanded, so that the result has `shape`:
//   (2, 3, 4) -> (3, 1): sum axis 0 (it was added on the left) and axis 2 (size 1 in `shape`).
// If `shape` does not broadcast to g's shape, throw std::invalid_argument (use check(...)).
#pragma once

#include "seqgrad.h"

seqgrad::Tensor my_sum_to_shape(const seqgrad::Tensor& g, const seqgrad::Shape& shape);
