// tensor/softmax.cpp - stable softmax / log-softmax / cross-entropy over (outer, n, inner) views.
#include "tensor/softmax.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/isa_loop.h"
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
  const int64_t grain = row_grain(v.n);
  parallel_for(0, v.outer * v.inner, grain, [&](int64_t r0, int64_t r1) {
    for_isa([&] {  // the rows' loops compiled per instruction set (tensor/isa_loop.h)
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t o = r / v.inner, i = r % v.inner;
        fn(o * v.n * v.inner + i, v.n, v.inner);  // offset of the row's first element, length, stride
      }
    });
  });
}

}  // namespace

// ================================================================================================
// softmax

// max over x[0 : n), the same as a loop of m = std::max(m, x[k]) from -inf, but with 8 maxima
// running side by side in a vector: one running maximum makes every step wait for the last.
// (A NaN is skipped in both forms: a comparison with it is false.)
static SEQGRAD_INLINE_LOOP real row_max(const real* x, int64_t n) {
  typedef real vec __attribute__((vector_size(32)));
  constexpr int64_t lanes = 32 / sizeof(real);
  vec lm = vec{} + kNegInf;
  int64_t k = 0;
  for (; k + lanes <= n; k += lanes) {
    vec v;
    std::memcpy(&v, x + k, sizeof v);
    lm = lm < v ? v : lm;
  }
  real m = kNegInf;
  for (int64_t j = 0; j < lanes; ++j) m = std::max(m, lm[j]);
  for (; k < n; ++k) m = std::max(m, x[k]);
  return m;
}

// [docs:softmax_kernel]
// y = softmax(x) for each of `rows` contiguous rows of n values; x and y may be the same memory.
// Exponentials dominate, and one row of attention scores is only 20 values: exp on 20 values
// waits on the latency of a long chain of vector operations, so it is run over a whole block
// of rows at once (vmath.h), keeping the vector unit busy. The sums go in lanes (reduce.h).
static int64_t softmax_block_rows(int64_t n) { return std::max<int64_t>(1, 2048 / n); }  // about 8 KB: in L1

static SEQGRAD_INLINE_LOOP void softmax_rows_loop(const real* x, real* y, int64_t rows, int64_t n) {
  const int64_t block = softmax_block_rows(n);
  for (int64_t b0 = 0; b0 < rows; b0 += block) {
    const int64_t b1 = std::min(rows, b0 + block);
    for (int64_t r = b0; r < b1; ++r) {  // y = x - max(x): exp then cannot overflow
      const real* xr = x + r * n;
      real* yr = y + r * n;
      const real m = row_max(xr, n);
      const real shift = m == kNegInf ? 0 : m;  // every entry masked: stays -inf, exp gives 0
      for (int64_t k = 0; k < n; ++k) yr[k] = xr[k] - shift;
    }
    vmath::exp(y + b0 * n, y + b0 * n, (b1 - b0) * n);
    for (int64_t r = b0; r < b1; ++r) {
      real* yr = y + r * n;
      const double total = lane_sum(n, [yr](int64_t k) { return static_cast<double>(yr[k]); });
      // total >= 1 (the maximum gave exp(0)) unless the row was all -inf: no distribution, zeros.
      // (A NaN in the row makes total NaN, and the whole row NaN, as it should.)
      const real inv = total == 0 ? 0 : static_cast<real>(1.0 / total);
      for (int64_t k = 0; k < n; ++k) yr[k] *= inv;
    }
  }
}

static void softmax_rows(const real* x, real* y, int64_t rows, int64_t n) {
  for_isa([&] { softmax_rows_loop(x, y, rows, n); });  // compiled per instruction set (isa_loop.h)
}

Tensor softmax(const Tensor& x, int64_t axis) {
  const int a = normalize_axis(axis, x.dim(), "softmax");
  Tensor y = Tensor::empty(x.shape());
  const real* px = x.data();
  real* py = y.data();
  if (a == x.dim() - 1) {  // the last axis: the rows lie one after another
    const int64_t n = x.size(-1), rows = n == 0 ? 0 : x.numel() / n;
    parallel_for(0, rows, row_grain(n),
                 [&](int64_t r0, int64_t r1) { softmax_rows(px + r0 * n, py + r0 * n, r1 - r0, n); });
    return y;
  }
  for_each_row(x.shape(), a, [&](int64_t off, int64_t n, int64_t st) {  // another axis: strided rows
    real m = kNegInf;
    for (int64_t k = 0; k < n; ++k) m = std::max(m, px[off + k * st]);
    if (m == kNegInf) {  // every entry masked: no distribution, all zeros
      for (int64_t k = 0; k < n; ++k) py[off + k * st] = 0;
      return;
    }
    double total = 0;
    for (int64_t k = 0; k < n; ++k) {
      const real e = std::exp(px[off + k * st] - m);
      py[off + k * st] = e;
      total += e;
    }
    const real inv = static_cast<real>(1.0 / total);
    for (int64_t k = 0; k < n; ++k) py[off + k * st] *= inv;
  });
  return y;
}
// [docs:end]

Tensor softmax_backward(const Tensor& y, const Tensor& dy, int64_t axis, real scale) {
  // forward: y = softmax(x).  dy_j/dx_i = y_j (delta_ij - y_i), so
  // dx_i = sum_j dy_j y_j (delta_ij - y_i) = y_i (dy_i - sum_j dy_j y_j).
  // For y = softmax(scale * x) the chain rule multiplies that by scale.
  const int a = normalize_axis(axis, y.dim(), "softmax_backward");
  Tensor dx = Tensor::empty(y.shape());
  const real *py = y.data(), *pg = dy.data();
  real* pd = dx.data();
  for_each_row(y.shape(), a, [&](int64_t off, int64_t n, int64_t st) {
    const double dot =
        lane_sum(n, [&](int64_t k) { return static_cast<double>(pg[off + k * st]) * py[off + k * st]; });
    for (int64_t k = 0; k < n; ++k)  // (times a scale of 1 is exact: plain softmax is unchanged)
      pd[off + k * st] = py[off + k * st] * (pg[off + k * st] - static_cast<real>(dot)) * scale;
  });
  return dx;
}

// ================================================================================================
// Attention's softmax: scale, mask and softmax in one pass over the scores

// y[k] = -inf where m[k] != 0, else scale x[k] (m null: no mask). Two loops, because GCC keeps
// a branch in the one-loop form `m[k] != 0 ? -inf : x[k] * scale` (the multiply could raise a
// floating-point exception, so it is not computed where the branch would skip it); each loop
// alone becomes vector multiplies or vector blends.
static SEQGRAD_INLINE_LOOP void scale_and_mask(const real* __restrict x, const real* __restrict m, real* __restrict y, int64_t n,
                           real scale) {
  for (int64_t k = 0; k < n; ++k) y[k] = x[k] * scale;
  if (m)
    for (int64_t k = 0; k < n; ++k) y[k] = m[k] != 0 ? kNegInf : y[k];
}

// [docs:scaled_masked_softmax]
Tensor scaled_masked_softmax(const Tensor& x, const Tensor& mask, real scale) {
  check(x.dim() >= 1, "scaled_masked_softmax: expected scores with at least one axis, got ", x.shape());
  check(!mask.defined() || broadcast_shapes(x.shape(), mask.shape(), "scaled_masked_softmax") == x.shape(),
        "scaled_masked_softmax: expected a mask broadcastable to the scores' shape ", x.shape(), ", got ",
        mask.shape());
  Tensor y = Tensor::empty(x.shape());
  if (y.numel() == 0) return y;
  const int64_t n = x.size(-1), rows = x.numel() / n;  // softmax over the last axis: rows of n
  const real* px = x.data();
  real* py = y.data();
  // Where each row's mask is. The mask's own layout (broadcast to x's shape) gives a stride
  // per axis: along the row it is 1, or 0 if one mask value covers the row. The other axes
  // count rows, and RowWalk (tensor/shape.h) steps through them: row r is element r % cols of
  // walk row r / cols, a (20, 20) causal mask over (64, 4, 20, 20) scores being 256 walk rows
  // of 20 score rows each.
  const std::vector<int64_t> mst = mask.defined() ? broadcast_strides(mask.shape(), x.shape())
                                                  : std::vector<int64_t>(x.dim(), 0);
  const int64_t along = mst.back();
  const RowWalk<1> walk(Shape(x.shape().begin(), x.shape().end() - 1), {std::vector<int64_t>(mst.begin(), mst.end() - 1)});
  const int64_t cols = walk.cols();
  const real* pm = mask.defined() ? mask.data() : nullptr;
  parallel_for(0, rows, row_grain(n), [&](int64_t r0, int64_t r1) {
    RowWalk<1> w = walk;
    w.seek(r0 / cols);
    int64_t c = r0 % cols;
    const int64_t block = softmax_block_rows(n);
    for_isa([&] {  // compiled per instruction set (tensor/isa_loop.h)
      for (int64_t b0 = r0; b0 < r1; b0 += block) {  // a block of rows: y = scale x, or -inf where masked
        const int64_t b1 = std::min(r1, b0 + block);
        for (int64_t r = b0; r < b1; ++r) {
          const real* xr = px + r * n;
          real* yr = py + r * n;
          const real* mr = pm ? pm + w.offset(0) + c * w.step(0) : nullptr;
          if (mr && along == 1)
            scale_and_mask(xr, mr, yr, n, scale);
          else if (mr && mr[0] != 0)  // one mask value for the whole row, and it is set
            std::fill(yr, yr + n, kNegInf);
          else
            scale_and_mask(xr, nullptr, yr, n, scale);
          if (++c == cols) c = 0, w.next();
        }
        softmax_rows_loop(py + b0 * n, py + b0 * n, b1 - b0, n);  // then the softmax of those rows
      }
    });
  });
  return y;
}
// [docs:end]

// ================================================================================================
// log_softmax

// The same two kernels run on a contiguous last axis and on strided rows: a row is read into a
// buffer, whose exponentials vmath::exp takes all at once (one std::exp call per value would
// be a fifth of a large-vocabulary model's step), and written back.
Tensor log_softmax(const Tensor& x, int64_t axis) {
  const int a = normalize_axis(axis, x.dim(), "log_softmax");
  Tensor y = Tensor::empty(x.shape());
  const real* px = x.data();
  real* py = y.data();
  for_each_row(x.shape(), a, [&](int64_t off, int64_t n, int64_t st) {
    thread_local std::vector<real> e;  // this row's x - m, then exp(x - m)
    e.resize(static_cast<size_t>(n));
    real m = kNegInf;
    for (int64_t k = 0; k < n; ++k) m = std::max(m, px[off + k * st]);
    if (m == kNegInf) {
      for (int64_t k = 0; k < n; ++k) py[off + k * st] = kNegInf;
      return;
    }
    for (int64_t k = 0; k < n; ++k) e[k] = px[off + k * st] - m;
    vmath::exp(e.data(), e.data(), n);
    const double total = lane_sum(n, [&](int64_t k) { return static_cast<double>(e[k]); });
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
    thread_local std::vector<real> p;  // this row's softmax, exp(y)
    p.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) p[k] = py[off + k * st];
    vmath::exp(p.data(), p.data(), n);
    const real total = static_cast<real>(lane_sum(n, [&](int64_t k) { return static_cast<double>(pg[off + k * st]); }));
    for (int64_t k = 0; k < n; ++k) pd[off + k * st] = pg[off + k * st] - p[k] * total;
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
  parallel_for(0, N, row_grain(V), [&](int64_t n0, int64_t n1) {
    std::vector<real> e(static_cast<size_t>(V));  // one row's exp(x - m)
    for (int64_t n = n0; n < n1; ++n) {
      if (t[n] < 0) {  // an ignored row (padding): no loss, and nothing the backward needs
        out.loss.data()[n] = 0;
        out.lse.data()[n] = 0;
        continue;
      }
      const real* x = logits.data() + n * V;
      const real m = row_max(x, V);
      for (int64_t v = 0; v < V; ++v) e[v] = x[v] - m;
      vmath::exp(e.data(), e.data(), V);  // all V exponentials at once (vmath.h)
      const double total = lane_sum(V, [&](int64_t v) { return static_cast<double>(e[v]); });
      const double sum_x = lane_sum(V, [x](int64_t v) { return static_cast<double>(x[v]); });
      const double lse = m + std::log(total);  // log sum_v exp(x_v)
      out.lse.data()[n] = static_cast<real>(lse);
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
  parallel_for(0, N, row_grain(V), [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      real* d = dx.data() + n * V;
      const int64_t t = target_of(targets.data()[n], ignore_index, V);
      if (t < 0) {
        std::fill(d, d + V, real(0));
        continue;
      }
      const real* x = logits.data() + n * V;
      const real g = dloss.data()[n], l = lse.data()[n];
      for (int64_t v = 0; v < V; ++v) d[v] = x[v] - l;
      vmath::exp(d, d, V);  // p_v = exp(x_v - lse), all V at once
      const real smooth = eps / static_cast<real>(V);  // q_v for v != t
      const real p_t = d[t];
      for (int64_t v = 0; v < V; ++v) d[v] = g * (d[v] - smooth);
      d[t] = g * (p_t - ((1 - eps) + smooth));  // q_t = 1 - eps + eps / V
    }
  });
  return dx;
}
// [docs:end]

}  // namespace seqgrad
