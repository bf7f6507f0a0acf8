// exercises/solutions/15_rotary_positions/exercise.cpp - reference solution of exercise 15.
#include "exercise.h"

#include <cmath>

using namespace seqgrad;

namespace {

// Rotates every feature pair (2i, 2i+1) of every row t of x (..., T, C) by the angle whose
// cosine and sine are cos[t, i] and sign * sin[t, i]; sign -1 turns the other way.
Tensor rotate_pairs(const Tensor& x, const Tensor& cos, const Tensor& sin, real sign) {
  const int64_t T = x.size(-2), C = x.size(-1), half = C / 2, rows = x.numel() / C;
  Tensor y = Tensor::empty(x.shape());
  const real* px = x.data();
  real* py = y.data();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = r % T;  // the position of this row
    for (int64_t i = 0; i < half; ++i) {
      const real c = cos.data()[t * half + i], s = sign * sin.data()[t * half + i];
      const real a = px[r * C + 2 * i], b = px[r * C + 2 * i + 1];
      py[r * C + 2 * i] = a * c - b * s;      // [y_2i  ]   [cos -sin] [x_2i  ]
      py[r * C + 2 * i + 1] = a * s + b * c;  // [y_2i+1] = [sin  cos] [x_2i+1]
    }
  }
  return y;
}

}  // namespace

Variable rotary(const Variable& x, int64_t offset) {
  check(x.dim() >= 2 && x.size(-1) % 2 == 0, "rotary: expected x (..., T, C) with an even C, got ", x.shape());
  const int64_t T = x.size(-2), C = x.size(-1), half = C / 2;
  // cos(p w_i) and sin(p w_i) for p = offset + t: (T, C / 2) each, in double like the table.
  Tensor cos = Tensor::empty({T, half}), sin = Tensor::empty({T, half});
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const double w = 1.0 / std::pow(10000.0, static_cast<double>(2 * i) / static_cast<double>(C));
      const double angle = static_cast<double>(offset + t) * w;
      cos.data()[t * half + i] = static_cast<real>(std::cos(angle));
      sin.data()[t * half + i] = static_cast<real>(std::sin(angle));
    }
  return make_result("rotary", rotate_pairs(x.value(), cos, sin, 1), {x}, [cos, sin](const Tensor& dy, Node& n) {
    // y = R x per pair, R a rotation  =>  dx = R^T dy, and R^T = R^-1 is the rotation by -angle.
    n.add_grad(0, rotate_pairs(dy, cos, sin, -1));
  });
}
// Given: the line that makes "rope" a positional encoding (nn/transformer/positional.h).
SEQGRAD_REGISTER_POSITIONAL(RotaryPositions, "rope", "q and k rotated pair by pair by position (exercise 15)")

// The question: the score is q^T R(m w)^T R(n w) k = q^T R((n - m) w) k, because rotations by
// angles compose by adding them. Distance enters the dot product itself, with no parameter to
// learn; exercise 10's table had to learn one number per clipped distance.
