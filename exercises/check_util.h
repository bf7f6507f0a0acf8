// exercises/check_util.h - what the coursework checks (NN_name/check.cpp) share: how far apart
// two results are.
#pragma once

#include "autograd/variable.h"
#include "tensor/elementwise.h"
#include "tensor/reduce.h"

namespace seqgrad::exercises {

// The largest |a - b| over the elements; 1e30 when the shapes differ, so that a check of
// max_diff(...) < tolerance fails on a wrong shape too.
inline double max_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return 1e30;
  return max(abs(a - b)).item();
}
inline double max_diff(const Variable& a, const Variable& b) { return max_diff(a.value(), b.value()); }

}  // namespace seqgrad::exercises
