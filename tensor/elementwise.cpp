// tensor/elementwise.cpp - the named elementwise ops, each one map() or map2() (see the header).
#include "tensor/elementwise.h"

#include <cmath>

#include "tensor/vmath.h"

namespace seqgrad {

// ================================================================================================
// Binary ops

Tensor add(const Tensor& a, const Tensor& b) { return map2(a, b, [](real x, real y) { return x + y; }, "add"); }
Tensor sub(const Tensor& a, const Tensor& b) { return map2(a, b, [](real x, real y) { return x - y; }, "sub"); }
Tensor mul(const Tensor& a, const Tensor& b) { return map2(a, b, [](real x, real y) { return x * y; }, "mul"); }
Tensor div(const Tensor& a, const Tensor& b) { return map2(a, b, [](real x, real y) { return x / y; }, "div"); }
Tensor maximum(const Tensor& a, const Tensor& b) {
  return map2(a, b, [](real x, real y) { return x > y ? x : y; }, "maximum");
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  return map2(a, b, [](real x, real y) { return x < y ? x : y; }, "minimum");
}
Tensor eq(const Tensor& a, const Tensor& b) { return map2(a, b, [](real x, real y) -> real { return x == y; }, "eq"); }
Tensor ne(const Tensor& a, const Tensor& b) { return map2(a, b, [](real x, real y) -> real { return x != y; }, "ne"); }
Tensor lt(const Tensor& a, const Tensor& b) { return map2(a, b, [](real x, real y) -> real { return x < y; }, "lt"); }
Tensor le(const Tensor& a, const Tensor& b) { return map2(a, b, [](real x, real y) -> real { return x <= y; }, "le"); }
Tensor gt(const Tensor& a, const Tensor& b) { return map2(a, b, [](real x, real y) -> real { return x > y; }, "gt"); }
Tensor ge(const Tensor& a, const Tensor& b) { return map2(a, b, [](real x, real y) -> real { return x >= y; }, "ge"); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, real s) { return map(a, [s](real x) { return x + s; }); }
Tensor operator-(const Tensor& a, real s) { return map(a, [s](real x) { return x - s; }); }
Tensor operator*(const Tensor& a, real s) { return map(a, [s](real x) { return x * s; }); }
Tensor operator/(const Tensor& a, real s) { return map(a, [s](real x) { return x / s; }); }
Tensor operator+(real s, const Tensor& a) { return map(a, [s](real x) { return s + x; }); }
Tensor operator-(real s, const Tensor& a) { return map(a, [s](real x) { return s - x; }); }
Tensor operator*(real s, const Tensor& a) { return map(a, [s](real x) { return s * x; }); }
Tensor operator/(real s, const Tensor& a) { return map(a, [s](real x) { return s / x; }); }
Tensor operator-(const Tensor& a) { return neg(a); }

// ================================================================================================
// Unary ops

real sigmoid(real x) {
  // For x >= 0, e^-x <= 1 cannot overflow; for x < 0 use the equal form e^x / (1 + e^x).
  if (x >= 0) return 1 / (1 + std::exp(-x));
  const real e = std::exp(x);
  return e / (1 + e);
}

real gelu(real x) { return real(0.5) * x * (1 + std::erf(x * real(M_SQRT1_2))); }

real gelu_grad(real x) {
  const real cdf = real(0.5) * (1 + std::erf(x * real(M_SQRT1_2)));       // Phi(x)
  const real pdf = real(0.5 * M_2_SQRTPI * M_SQRT1_2) * std::exp(real(-0.5) * x * x);  // phi(x)
  return cdf + x * pdf;
}

Tensor neg(const Tensor& x) { return map(x, [](real v) { return -v; }); }
Tensor exp(const Tensor& x) { return map(x, [](real v) { return std::exp(v); }); }
Tensor log(const Tensor& x) { return map(x, [](real v) { return std::log(v); }); }
Tensor sqrt(const Tensor& x) { return map(x, [](real v) { return std::sqrt(v); }); }
Tensor abs(const Tensor& x) { return map(x, [](real v) { return std::abs(v); }); }
Tensor pow(const Tensor& x, real p) { return map(x, [p](real v) { return std::pow(v, p); }); }
// tanh and sigmoid run vmath's 8-lane versions over chunks of the array (4 to 15 times faster
// than calling std::tanh per element; accurate to about one unit in the last place).
Tensor tanh(const Tensor& x) { return map_chunks(x, vmath::tanh, kVmathElementCost); }
Tensor sigmoid(const Tensor& x) { return map_chunks(x, vmath::sigmoid, kVmathElementCost); }
Tensor relu(const Tensor& x) { return map(x, [](real v) { return v > 0 ? v : real(0); }); }
Tensor gelu(const Tensor& x) { return map(x, [](real v) { return gelu(v); }); }

// ================================================================================================
// Selection

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  const Shape b = broadcast_shapes(x.shape(), shape, "broadcast_to");
  check(b == shape, "broadcast_to: cannot broadcast shape ", x.shape(), " to ", shape);
  return map2(x, zeros(shape), [](real v, real) { return v; }, "broadcast_to");
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  const Shape shape = broadcast_shapes(cond.shape(), broadcast_shapes(a.shape(), b.shape(), "where"), "where");
  const Tensor c = broadcast_to(cond, shape), x = broadcast_to(a, shape), y = broadcast_to(b, shape);
  Tensor out = Tensor::empty(shape);
  const real *pc = c.data(), *px = x.data(), *py = y.data();
  real* po = out.data();
  parallel_for(0, out.numel(), kElementwiseGrain, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) po[i] = pc[i] != 0 ? px[i] : py[i];
  });
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, real value) {
  check(broadcast_shapes(x.shape(), mask.shape(), "masked_fill") == x.shape(),
        "masked_fill: expected a mask broadcastable to the input's shape ", x.shape(), ", got ",
        mask.shape());
  return map2(x, mask, [value](real v, real m) { return m != 0 ? value : v; }, "masked_fill");
}

}  // namespace seqgrad
