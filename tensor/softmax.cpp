// tensor/softmax.cpp - stable softmax / log-softmax / cross-entropy over (outer, n, inner) views.
#include "tensor/softmax.h"

#include <cmath>
#include <limits>
#include <vector>

#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"
#include "tensor/thread_pool.h"
#include "tensor/vmath.h"

namespace seqgrad {
namespace {

constexpr real kNegInf = -std::numeric_limits<real>::infinity();

// Runs fn(row pointer in, row pointer out, stride) for every 1-D row along `axis`; rows are
// independent, so they are spread over the pool.
template <class F>
void for_each_row(const Shape& shape, int axis, F fn) {
  const AxisView v = axis_view(shape, axis);
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, v.n));
  parallel_for(0, v.outer * v.inner, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o = r / v.inner, i = r % v.inner;
      fn(o * v.n * v.inner + i, v.n, v.inner);  // offset of the row's first element, length, stride
    }
  });
}

}  // namespace

// ================================================================================================
// softmax

// [docs:softmax_kernel]
Tensor softmax(const Tensor& x, int64_t axis) {
  const int a = normalize_axis(axis, x.dim(), "softmax");
  Tensor y = Tensor::empty(x.shape());
  const real* px = x.data();
  real* py = y.data();
  for_each_row(x.shape(), a, [&](int64_t off, int64_t n, int64_t st) {
    real m = kNegInf;
    for (int64_t k = 0; k < n; ++k) m = std::max(m, px[off + k * st]);
    if (m == kNegInf) {  // every entry masked: no distribution, all zeros
      for (int64_t k = 0; k < n; ++k) py[off + k * st] = 0;
      return;
    }
    double total = 0;
    if (st == 1) {  // a contiguous row: exp on vectors (vmath.h), the sum in lanes (reduce.h)
      real* yr = py + off;
      for (int64_t k = 0; k < n; ++k) yr[k] = px[off + k] - m;
      vmath::exp(yr, yr, n);
      total = lane_sum(n, [yr](int64_t k) { return static_cast<double>(yr[k]); });
    } else {
      for (int64_t k = 0; k < n; ++k) {
        const real e = std::exp(px[off + k * st] - m);
        py[off + k * st] = e;
        total += e;
      }
    }
    const real inv = static_cast<real>(1.0 / total);
    for (int64_t k = 0; k < n; ++k) py[off + k * st] *= inv;
  });
  return y;
}
// [docs:end]

Tensor softmax_backward(const Tensor& y, const Tensor& dy, int64_t axis) {
  // forward: y = softmax(x).  dy_j/dx_i = y_j (delta_ij - y_i), so
  // dx_i = sum_j dy_j y_j (delta_ij - y_i) = y_i (dy_i - sum_j dy_j y_j).
  const int a = normalize_axis(axis, y.dim(), "softmax_backward");
  Tensor dx = Tensor::empty(y.shape());
  const real *py = y.data(), *pg = dy.data();
  real* pd = dx.data();
  for_each_row(y.shape(), a, [&](int64_t off, int64_t n, int64_t st) {
    const double dot =
        lane_sum(n, [&](int64_t k) { return static_cast<double>(pg[off + k * st]) * py[off + k * st]; });
    for (int64_t k = 0; k < n; ++k)
      pd[off + k * st] = py[off + k * st] * (pg[off + k * st] - static_cast<real>(dot));
  });
  return dx;
}

// ================================================================================================
// log_softmax

Tensor log_softmax(const Tensor& x, int64_t axis) {
  const int a = normalize_axis(axis, x.dim(), "log_softmax");
  Tensor y = Tensor::empty(x.shape());
  const real* px = x.data();
  real* py = y.data();
  for_each_row(x.shape(), a, [&](int64_t off, int64_t n, int64_t st) {
    real m = kNegInf;
    for (int64_t k = 0; k < n; ++k) m = std::max(m, px[off + k * st]);
    if (m == kNegInf) {
      for (int64_t k = 0; k < n; ++k) py[off + k * st] = kNegInf;
      return;
    }
    double total = 0;
    for (int64_t k = 0; k < n; ++k) total += std::exp(px[off + k * st] - m);
    const real log_total = static_cast<real>(std::log(total));
    for (int64_t k = 0; k < n; ++k) py[off + k * st] = px[off + k * st] - m - log_total;
  });
  return y;
}

Tensor log_softmax_backward(const Tensor& y, const Tensor& dy, int64_t axis) {
  // forward: y_i = x_i - log sum_j exp(x_j).  dy_j/dx_i = delta_ij - softmax_i = delta_ij - exp(y_i),
  // so dx_i = dy_i - exp(y_i) sum_j dy_j.
  const int a = normalize_axis(axis, y.dim(), "log_softmax_backward");
  Tensor dx = Tensor::empty(y.shape());
  const real *py = y.data(), *pg = dy.data();
  real* pd = dx.data();
  for_each_row(y.shape(), a, [&](int64_t off, int64_t n, int64_t st) {
    double total = 0;
    for (int64_t k = 0; k < n; ++k) total += pg[off + k * st];
    for (int64_t k = 0; k < n; ++k)
      pd[off + k * st] = pg[off + k * st] - std::exp(py[off + k * st]) * static_cast<real>(total);
  });
  return dx;
}

// ================================================================================================
// cross-entropy (fused log-softmax + negative log-likelihood)

namespace {

void check_cross_entropy_args(const Tensor& logits, const Tensor& targets, real label_smoothing) {
  check(logits.dim() == 2, "cross_entropy: expected logits of shape (N, V), got ", logits.shape());
  check(targets.dim() == 1 && targets.size(0) == logits.size(0),
        "cross_entropy: expected targets of shape [", logits.size(0), "] for logits of shape ",
        logits.shape(), ", got ", targets.shape());
  check(label_smoothing >= 0 && label_smoothing <= 1,
        "cross_entropy: expected label_smoothing in [0, 1], got ", label_smoothing);
}

// The target class of row n, or -1 for an ignored row.
int64_t target_of(real t, int64_t ignore_index, int64_t V) {
  if (t == static_cast<real>(ignore_index)) return -1;
  return checked_index(t, V, 1, "cross_entropy");
}

}  // namespace

// [docs:ce_forward]
CrossEntropyForward cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                          int64_t ignore_index, real label_smoothing) {
  check_cross_entropy_args(logits, targets, label_smoothing);
  const int64_t N = logits.size(0), V = logits.size(1);
  CrossEntropyForward out{Tensor::empty({N}), Tensor::empty({N})};
  // Check every target up front, so a bad id throws before any work is done.
  std::vector<int64_t> t(N);
  for (int64_t n = 0; n < N; ++n) t[n] = target_of(targets.data()[n], ignore_index, V);
  const real eps = label_smoothing;
  parallel_for(0, N, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(V, 1)), [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const real* x = logits.data() + n * V;
      real m = kNegInf;
      for (int64_t v = 0; v < V; ++v) m = std::max(m, x[v]);
      double total = 0, sum_x = 0;
      for (int64_t v = 0; v < V; ++v) {
        total += std::exp(x[v] - m);
        sum_x += x[v];
      }
      const double lse = m + std::log(total);  // log sum_v exp(x_v)
      out.lse.data()[n] = static_cast<real>(lse);
      if (t[n] < 0) {
        out.loss.data()[n] = 0;
        continue;
      }
      // log p[v] = x[v] - lse, so sum_v log p[v] = sum_x - V * lse.
      const double nll = lse - x[t[n]];
      const double smooth = lse - sum_x / static_cast<double>(V);
      out.loss.data()[n] = static_cast<real>((1 - eps) * nll + eps * smooth);
    }
  });
  return out;
}
// [docs:end]

// [docs:ce_backward]
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse,
                              const Tensor& dloss, int64_t ignore_index, real label_smoothing) {
  // forward: loss = (1 - eps)(lse - x[t]) + eps (lse - mean_v x[v]);  d lse / dx_v = p_v, so
  // dloss/dx_v = p_v - (1 - eps) [v == t] - eps / V = p_v - q_v.
  const int64_t N = logits.size(0), V = logits.size(1);
  Tensor dx = Tensor::empty(logits.shape());
  const real eps = label_smoothing;
  parallel_for(0, N, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(V, 1)), [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      real* d = dx.data() + n * V;
      const int64_t t = target_of(targets.data()[n], ignore_index, V);
      if (t < 0) {
        std::fill(d, d + V, real(0));
        continue;
      }
      const real* x = logits.data() + n * V;
      const real g = dloss.data()[n], l = lse.data()[n];
      for (int64_t v = 0; v < V; ++v) {
        const real q = (v == t ? 1 - eps : 0) + eps / static_cast<real>(V);
        d[v] = g * (std::exp(x[v] - l) - q);
      }
    }
  });
  return dx;
}
// [docs:end]

}  // namespace seqgrad
