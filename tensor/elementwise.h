// tensor/elementwise.h - elementwise math on tensors, with numpy broadcasting.
//
// Two building blocks do all the work: map(x, f) applies f to every element, and
// map2(a, b, f) combines two tensors whose shapes broadcast. Every named op below (add, exp,
// tanh, where, ...) is one line on top of them, and autograd's backward formulas use them too:
//   Tensor dx = map2(y, dy, [](real y, real g) { return g * (1 - y * y); });   // tanh'
// Large tensors are split across the thread pool; each element is computed independently, so
// the result does not depend on the number of threads. Read next: reduce.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tensor/check.h"
#include "tensor/tensor.h"
#include "tensor/thread_pool.h"

namespace seqgrad {

// Loops of at most this many elements run on the calling thread: for them, waking the pool
// costs more than it saves. (Measured on the training step, docs/performance.md section 3:
// 16,384 made two threads faster than 32,768; 8,192 was no faster again.)
constexpr int64_t kElementwiseGrain = 1 << 14;

// An element of vmath's tanh or sigmoid (an exp, a division, selects) costs about as much as
// 8 elements of a plain op like add, so those loops are split at 8 times fewer elements: the
// (64, 128) tanh of an LSTM's attentional state then runs on two threads instead of one.
constexpr int64_t kVmathElementCost = 8;

// The grain, in rows, of a parallel_for over rows of `cols` elements: such a loop is split only
// past about kElementwiseGrain elements, into at most one chunk per grain (of whole rows).
inline int64_t row_grain(int64_t cols) { return std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, cols)); }

// y[i] = f(x[i])
template <class F>
Tensor map(const Tensor& x, F f) {
  Tensor y = Tensor::empty(x.shape());
  const real* px = x.data();
  real* py = y.data();
  parallel_for(0, x.numel(), kElementwiseGrain, [&](int64_t i0, int64_t i1) {
    const F fn = f;  // a local copy: see map2_row
    for (int64_t i = i0; i < i1; ++i) py[i] = fn(px[i]);
  });
  return y;
}

// y = f over contiguous chunks: f(x + i0, y + i0, i1 - i0), for kernels that do a whole array
// at a time (tensor/vmath.h). `cost`: what one element costs, in elements of a plain op.
template <class F>
Tensor map_chunks(const Tensor& x, F f, int64_t cost = 1) {
  Tensor y = Tensor::empty(x.shape());
  const real* px = x.data();
  real* py = y.data();
  parallel_for(0, x.numel(), std::max<int64_t>(1, kElementwiseGrain / cost),
               [&](int64_t i0, int64_t i1) { f(px + i0, py + i0, i1 - i0); });
  return y;
}

// [docs:map2]
namespace detail {
// out[j] = f(a[j * sa], b[j * sb]) for j < n, each stride 1, or 0 where that operand is
// broadcast (its one value is then read once). Each case is a plain loop that the compiler
// turns into vector code. f comes by value: what it captured (masked_fill's value) stays in a
// register, where through a reference it might change with every store to out, as far as the
// compiler knows, and would be loaded again for each element.
template <class F>
void map2_row(F f, const real* a, int64_t sa, const real* b, int64_t sb, real* __restrict out, int64_t n) {
  if (sa == 1 && sb == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = f(a[j], b[j]);
  } else if (sb == 0) {
    const real bv = *b;
    for (int64_t j = 0; j < n; ++j) out[j] = f(a[j * sa], bv);
  } else {
    const real av = *a;
    for (int64_t j = 0; j < n; ++j) out[j] = f(av, b[j * sb]);
  }
}
}  // namespace detail

// out[i] = f(a[i], b[i]) where a and b broadcast to a common shape (numpy rules).
template <class F>
Tensor map2(const Tensor& a, const Tensor& b, F f, const char* op = "map2") {
  check(a.defined() && b.defined(), op, ": expected defined tensors");
  const real* pa = a.data();
  const real* pb = b.data();
  if (a.shape() == b.shape()) {  // the common case: no broadcasting at all
    Tensor out = Tensor::empty(a.shape());
    real* po = out.data();
    parallel_for(0, a.numel(), kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      detail::map2_row(f, pa + i0, 1, pb + i0, 1, po + i0, i1 - i0);
    });
    return out;
  }
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  Tensor out = Tensor::empty(shape);
  if (out.numel() == 0) return out;
  real* po = out.data();
  // Walk the output one row (last axis, after merging axes: see RowWalk) at a time; along a
  // row each operand advances by 1, or by 0 where it is broadcast.
  const RowWalk<2> walk(shape, {broadcast_strides(a.shape(), shape), broadcast_strides(b.shape(), shape)});
  const int64_t cols = walk.cols();
  parallel_for(0, walk.rows(), row_grain(cols), [&](int64_t r0, int64_t r1) {
    RowWalk<2> w = walk;
    w.seek(r0);
    for (int64_t r = r0; r < r1; ++r, w.next())
      detail::map2_row(f, pa + w.offset(0), w.step(0), pb + w.offset(1), w.step(1), po + r * cols, cols);
  });
  return out;
}
// [docs:end]

// ----------------------------------------------------------------------------------------------
// Binary ops (broadcasting). Comparisons return 1 where true and 0 where false.

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, real s);
Tensor operator-(const Tensor& a, real s);
Tensor operator*(const Tensor& a, real s);
Tensor operator/(const Tensor& a, real s);
Tensor operator+(real s, const Tensor& a);
Tensor operator-(real s, const Tensor& a);
Tensor operator*(real s, const Tensor& a);
Tensor operator/(real s, const Tensor& a);
Tensor operator-(const Tensor& a);

// ----------------------------------------------------------------------------------------------
// Unary ops. All stay finite wherever the true result is finite (sigmoid(-1000) = 0, not NaN).

Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor pow(const Tensor& x, real exponent);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);  // 1 / (1 + e^-x), evaluated without overflow
Tensor relu(const Tensor& x);     // max(x, 0)
Tensor gelu(const Tensor& x);     // x * Phi(x), Phi = standard normal CDF (exact, erf-based)

// Scalar forms used by the tensor ops and by autograd's backward formulas.
real sigmoid(real x);
real gelu(real x);
real gelu_grad(real x);  // d/dx [x Phi(x)] = Phi(x) + x phi(x)

// ----------------------------------------------------------------------------------------------
// Selection. Conditions and masks are tensors of 0/1 (any non-zero value counts as true).

// out = cond ? a : b, all three broadcast together.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// x with `value` wherever mask (broadcastable to x) is non-zero; x's shape is kept.
Tensor masked_fill(const Tensor& x, const Tensor& mask, real value);
// x repeated along its broadcast axes to `shape` (a new contiguous tensor).
Tensor broadcast_to(const Tensor& x, const Shape& shape);

}  // namespace seqgrad
