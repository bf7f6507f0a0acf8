// exercises/solutions/11_pe_shift/exercise.cpp - reference solution of exercise 11.
#include "exercise.h"

#include <cmath>

using namespace seqgrad;

Tensor shift_matrix(int64_t k, int64_t C) {
  check(C > 0 && C % 2 == 0, "shift_matrix: expected an even C, got ", C);
  // sin(w(p + k)) =  cos(wk) sin(wp) + sin(wk) cos(wp)
  // cos(w(p + k)) = -sin(wk) sin(wp) + cos(wk) cos(wp)
  // so the block acting on (sin wp, cos wp) is [[cos wk, sin wk], [-sin wk, cos wk]].
  Tensor M = zeros({C, C});
  for (int64_t i = 0; 2 * i < C; ++i) {
    const double w = 1.0 / std::pow(10000.0, static_cast<double>(2 * i) / static_cast<double>(C));
    const real c = static_cast<real>(std::cos(w * static_cast<double>(k)));
    const real s = static_cast<real>(std::sin(w * static_cast<double>(k)));
    M.at({2 * i, 2 * i}) = c;
    M.at({2 * i, 2 * i + 1}) = s;
    M.at({2 * i + 1, 2 * i}) = -s;
    M.at({2 * i + 1, 2 * i + 1}) = c;
  }
  return M;
}
