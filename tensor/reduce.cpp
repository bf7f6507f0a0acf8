// tensor/reduce.cpp - axis reductions over the (outer, n, inner) view of a tensor.
#include "tensor/reduce.h"

#include <algorithm>
#include <limits>

#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/isa_loop.h"
#include "tensor/thread_pool.h"

namespace seqgrad {
namespace {

Shape reduced_shape(const Shape& shape, int axis, bool keepdim) {
  Shape out = shape;
  if (keepdim) {
    out[axis] = 1;
  } else {
    out.erase(out.begin() + axis);
  }
  return out;
}

// The sum of n contiguous values, in double, in lane_sum's fixed order (reduce.h).
SEQGRAD_INLINE_LOOP double sum_contiguous(const real* x, int64_t n) {
  return lane_sum(n, [x](int64_t k) { return static_cast<double>(x[k]); });
}

// out[o, i] = sum_k x[o, k, i], accumulated in double.
//   inner == 1 (the last axis): each row is contiguous, summed by sum_contiguous.
//   inner > 1: a running sum per column i, k in order; neighbouring columns are independent, so
//   the loop over i vectorises. Work items are (outer row, block of 256 columns), so summing a
//   tall (N, C) matrix over axis 0, as a bias gradient does, is split between threads too.
// Every output element is computed by one thread in a fixed order: the same bits on any
// number of threads.
void sum_kernel(const real* x, real* out, AxisView v) {
  if (v.inner == 1) {
    parallel_for(0, v.outer, row_grain(v.n),
                 [&](int64_t o0, int64_t o1) {
                   for_isa([&] {  // compiled per instruction set (tensor/isa_loop.h)
                     for (int64_t o = o0; o < o1; ++o) out[o] = static_cast<real>(sum_contiguous(x + o * v.n, v.n));
                   });
                 });
    return;
  }
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (v.inner + kBlock - 1) / kBlock;
  const int64_t work = std::max<int64_t>(1, v.n * std::min(v.inner, kBlock));  // elements per item
  parallel_for(0, v.outer * blocks, row_grain(work), [&](int64_t j0, int64_t j1) {
    for_isa([&] {  // compiled per instruction set (tensor/isa_loop.h)
      double acc[kBlock];
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t o = j / blocks, i0 = (j % blocks) * kBlock, w = std::min(kBlock, v.inner - i0);
        std::fill(acc, acc + w, 0.0);
        for (int64_t k = 0; k < v.n; ++k) {
          const real* row = x + (o * v.n + k) * v.inner + i0;
          for (int64_t i = 0; i < w; ++i) acc[i] += row[i];
        }
        for (int64_t i = 0; i < w; ++i) out[o * v.inner + i0 + i] = static_cast<real>(acc[i]);
      }
    });
  });
}

std::vector<int64_t> sorted_unique_axes(const std::vector<int64_t>& axes, int64_t dim, const char* op) {
  std::vector<int64_t> norm;
  for (int64_t a : axes) norm.push_back(normalize_axis(a, dim, op));
  std::sort(norm.begin(), norm.end());
  check(std::adjacent_find(norm.begin(), norm.end()) == norm.end(), op,
        ": expected distinct axes, got an axis listed twice");
  return norm;
}

}  // namespace

// ================================================================================================
// sum and mean

Tensor sum(const Tensor& x, int64_t axis, bool keepdim) {
  const int a = normalize_axis(axis, x.dim(), "sum");
  Tensor out = Tensor::empty(reduced_shape(x.shape(), a, keepdim));
  sum_kernel(x.data(), out.data(), axis_view(x.shape(), a));
  return out;
}

Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  // Reduce the highest axis first, so the lower axis numbers stay valid.
  const std::vector<int64_t> norm = sorted_unique_axes(axes, x.dim(), "sum");
  Tensor out = x;
  for (auto it = norm.rbegin(); it != norm.rend(); ++it) out = sum(out, *it, keepdim);
  return out;
}

Tensor sum(const Tensor& x) {
  Tensor out = Tensor::empty({});
  sum_kernel(x.data(), out.data(), AxisView{1, x.numel(), 1});
  return out;
}

Tensor mean(const Tensor& x, int64_t axis, bool keepdim) {
  const int a = normalize_axis(axis, x.dim(), "mean");
  return sum(x, a, keepdim) / static_cast<real>(x.shape()[a]);
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim) {
  int64_t count = 1;
  for (int64_t a : sorted_unique_axes(axes, x.dim(), "mean")) count *= x.shape()[a];
  return sum(x, axes, keepdim) / static_cast<real>(count);
}

Tensor mean(const Tensor& x) { return sum(x) / static_cast<real>(x.numel()); }

// ================================================================================================
// max and argmax

MaxResult max_with_indices(const Tensor& x, int64_t axis, bool keepdim) {
  const int a = normalize_axis(axis, x.dim(), "max");
  check(x.shape()[a] > 0, "max: cannot reduce axis ", a, " of size 0 (shape ", x.shape(), ")");
  const Shape shape = reduced_shape(x.shape(), a, keepdim);
  MaxResult r{Tensor::empty(shape), Tensor::empty(shape)};
  const AxisView v = axis_view(x.shape(), a);
  const real* px = x.data();
  real* pv = r.values.data();
  real* pi = r.indices.data();
  parallel_for(0, v.outer * v.inner, kElementwiseGrain / v.n + 1, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t o = j / v.inner, i = j % v.inner;
      const real* xs = px + o * v.n * v.inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < v.n; ++k)
        if (xs[k * v.inner] > xs[best * v.inner]) best = k;
      pv[j] = xs[best * v.inner];
      pi[j] = static_cast<real>(best);
    }
  });
  return r;
}

Tensor max(const Tensor& x, int64_t axis, bool keepdim) { return max_with_indices(x, axis, keepdim).values; }
Tensor argmax(const Tensor& x, int64_t axis, bool keepdim) { return max_with_indices(x, axis, keepdim).indices; }

Tensor max(const Tensor& x) {
  check(x.numel() > 0, "max: cannot reduce an empty tensor (shape ", x.shape(), ")");
  return scalar(*std::max_element(x.data(), x.data() + x.numel()));
}

// ================================================================================================
// sum_to_shape: undo broadcasting

// [docs:sum_to_shape]
Tensor sum_to_shape(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const int64_t lead = x.dim() - static_cast<int64_t>(shape.size());
  check(lead >= 0 && broadcast_shapes(shape, x.shape(), "sum_to_shape") == x.shape(),
        "sum_to_shape: shape ", shape, " does not broadcast to the gradient's shape ", x.shape());
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (i < lead || (shape[i - lead] == 1 && x.shape()[i] != 1)) axes.push_back(i);
  // Sum with keepdim, then drop the leading axes by reshaping.
  return sum(x, axes, /*keepdim=*/true).reshape(shape);
}
// [docs:end]

}  // namespace seqgrad
