// exercises/01_untile - undoing tile: the gradient of a copy (chapter 1).
//
// numpy's tile(x, reps) lays reps[i] copies of x side by side along each axis i:
//   x (s_0, .., s_n-1)  ->  y (r_0 s_0, .., r_n-1 s_n-1),   y[j_0, ..] = x[j_0 mod s_0, ..]
// e.g. tile([[1, 2]], (2, 3)) = [[1, 2, 1, 2, 1, 2], [1, 2, 1, 2, 1, 2]].
// Every element of x is used r_0 r_1 .. r_n-1 times, so its gradient is the sum of that many
// contributions: untile(g, reps) sums g's copies back onto x's shape, (g_i / r_i) per axis.
// Chapter 1's sum_to_shape does the same for broadcasting, which is the special case s_i = 1.
// reps has one entry >= 1 per axis of g, and each g.size(i) is a multiple of reps[i]; otherwise
// throw std::invalid_argument (use check(...), with a message that names both shapes).
#pragma once

#include <cstdint>
#include <vector>

#include "seqgrad.h"

seqgrad::Tensor untile(const seqgrad::Tensor& g, const std::vector<int64_t>& reps);
