// exercises/solutions/01_untile/exercise.cpp - reference solution of exercise 01.
#include "exercise.h"

using namespace seqgrad;

Tensor untile(const Tensor& g, const std::vector<int64_t>& reps) {
  check(static_cast<int64_t>(reps.size()) == g.dim(), "untile: expected one repetition count per axis of ", g.shape(),
        ", got ", reps.size());
  // Index j_i of g is c_i s_i + k_i: copy c_i < r_i, position k_i < s_i inside it. In row-major
  // order that is exactly the index (c_i, k_i) of an axis pair (r_i, s_i), so reshaping
  //   g (r_0 s_0, r_1 s_1, ..)  ->  (r_0, s_0, r_1, s_1, ..)
  // moves no data, and the copies are the even axes: sum them.
  Shape split, x_shape;
  std::vector<int64_t> copy_axes;
  for (int64_t i = 0; i < g.dim(); ++i) {
    const int64_t r = reps[static_cast<size_t>(i)];
    check(r >= 1 && g.size(i) % r == 0, "untile: the gradient's shape ", g.shape(), " is not ", r,
          " copies along axis ", i, " (reps[", i, "] = ", r, ")");
    copy_axes.push_back(2 * i);
    split.push_back(r);
    split.push_back(g.size(i) / r);
    x_shape.push_back(g.size(i) / r);
  }
  return sum(g.reshape(split), copy_axes).reshape(x_shape);  // (s_0, s_1, ..)
}
