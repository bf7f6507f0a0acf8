// exercises/solutions/11_pe_shift/exercise.cpp - reference solution of exercise 11.
#include "exercise.h"

#include <cmath>

using namespace seqgrad;

Tensor shift_matrix(int64_t k, int64_t C) {
  check(C > 0 && C % 2 == 0, "shift_matrix: expected an even C, got ", C);
  // Proof that PE(p + k) = M_k PE(p) (chapter 9 leaves it here). Take the pair of features
  // 2i, 2i+1, frequency w = w_i = 1 / 10000^(2i/C). By the angle-addition formulas
  //   sin(w(p + k)) =  cos(wk) sin(wp) + sin(wk) cos(wp)
  //   cos(w(p + k)) = -sin(wk) sin(wp) + cos(wk) cos(wp)
  // so, with s = sin(wp), c = cos(wp),
  //   [ sin(w(p+k)) ]   [  cos(wk)  sin(wk) ] [ s ]
  //   [ cos(w(p+k)) ] = [ -sin(wk)  cos(wk) ] [ c ]  =  R(wk) [s c]^T,
  // and R(wk) holds only w and k, not p. Pair i only ever mixes with itself, so M_k is
  // block-diagonal with the blocks R(w_0 k), ..., R(w_{C/2-1} k), and PE(p + k) = M_k PE(p) for
  // every p. The check's three properties follow block by block: R(0) = I; R(a) R(b) = R(a + b)
  // (the same angle-addition formulas), so M_3 M_4 = M_7; and R(a)^T R(a) = I since
  // cos^2 + sin^2 = 1, so M_k^T M_k = I.
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
