// tensor/shape_ops.cpp - layout changes and indexing, mostly memcpy over (outer, n, inner).
#include "tensor/shape_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/thread_pool.h"

namespace seqgrad {

int64_t checked_index(real value, int64_t n, int axis, const char* op) {
  check(std::isfinite(value) && value == std::floor(value), op,
        ": expected whole-number indices, got ", value);
  check_index(value >= 0 && value < static_cast<real>(n), op, ": index ", value,
              " is out of range for axis ", axis, " of size ", n);
  return static_cast<int64_t>(value);
}

// ================================================================================================
// transpose / permute

Tensor permute(const Tensor& x, const std::vector<int64_t>& order) {
  check(static_cast<int64_t>(order.size()) == x.dim(), "permute: expected an order of ", x.dim(),
        " axes for shape ", x.shape(), ", got ", order.size());
  std::vector<int64_t> axes(order.size());
  std::vector<bool> seen(order.size(), false);
  Shape shape(order.size());
  const std::vector<int64_t> in_strides = strides(x.shape());
  std::vector<int64_t> st(order.size());  // stride in x for each output axis
  for (size_t i = 0; i < order.size(); ++i) {
    const int a = normalize_axis(order[i], x.dim(), "permute");
    check(!seen[a], "permute: expected each axis once, got axis ", a, " twice");
    seen[a] = true;
    shape[i] = x.shape()[a];
    st[i] = in_strides[a];
  }
  Tensor out = Tensor::empty(shape);
  if (out.numel() == 0) return out;
  // Same walk as map2: output rows along the last axis, x read through permuted strides.
  const RowWalk<1> walk(shape, {st});
  const int64_t cols = walk.cols(), step = walk.step(0);
  const real* px = x.data();
  real* po = out.data();
  parallel_for(0, walk.rows(), row_grain(cols), [&](int64_t r0, int64_t r1) {
    RowWalk<1> w = walk;
    w.seek(r0);
    for (int64_t r = r0; r < r1; ++r, w.next()) {
      const real* src = px + w.offset(0);
      real* dst = po + r * cols;
      if (step == 1)
        std::copy(src, src + cols, dst);
      else
        for (int64_t j = 0; j < cols; ++j) dst[j] = src[j * step];
    }
  });
  return out;
}

Tensor transpose(const Tensor& x, int64_t axis0, int64_t axis1) {
  std::vector<int64_t> order(x.dim());
  for (int64_t i = 0; i < x.dim(); ++i) order[i] = i;
  std::swap(order[normalize_axis(axis0, x.dim(), "transpose")],
            order[normalize_axis(axis1, x.dim(), "transpose")]);
  return permute(x, order);
}

Tensor unsqueeze(const Tensor& x, int64_t axis) {
  Shape shape = x.shape();
  shape.insert(shape.begin() + normalize_axis(axis, x.dim() + 1, "unsqueeze"), 1);
  return x.reshape(shape);
}

Tensor squeeze(const Tensor& x, int64_t axis) {
  const int a = normalize_axis(axis, x.dim(), "squeeze");
  check(x.shape()[a] == 1, "squeeze: expected axis ", a, " to have size 1, got shape ", x.shape());
  Shape shape = x.shape();
  shape.erase(shape.begin() + a);
  return x.reshape(shape);
}

// ================================================================================================
// slice / narrow, and their adjoints slice_add_ and slice_add

namespace {

// The checks slice_add_ and slice_add share: src has dst's shape but n rows along the axis,
// and those fit at `start`. Returns the normalized axis.
int check_slice_add(const char* op, const Shape& dst, int64_t axis, int64_t start, const Tensor& src) {
  const int a = normalize_axis(axis, static_cast<int64_t>(dst.size()), op);
  const int64_t n = src.dim() == static_cast<int64_t>(dst.size()) ? src.shape()[a] : -1;
  Shape expect = dst;
  if (n >= 0) expect[a] = n;
  check(n >= 0 && src.shape() == expect, op, ": expected a source of shape ", expect, ", got ", src.shape());
  check_index(start >= 0 && start <= dst[a] && n <= dst[a] - start, op, ": ", n, " rows at ", start,
              " do not fit axis ", a, " of size ", dst[a]);  // (written so that a huge start cannot overflow)
  return a;
}

}  // namespace

Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t end) {
  const int a = normalize_axis(axis, x.dim(), "slice");
  const int64_t n = x.shape()[a];
  const int64_t s = start < 0 ? start + n : start, e = end < 0 ? end + n : end;
  check_index(0 <= s && s <= e && e <= n, "slice: range ", start, ":", end,
              " is out of bounds for axis ", a, " of size ", n, " (shape ", x.shape(), ")");
  Shape shape = x.shape();
  shape[a] = e - s;
  Tensor out = Tensor::empty(shape);
  // Viewed as (outer, n, inner), x holds for each outer index a contiguous run of n * inner
  // elements, and the slice is the part of it from s * inner on, (e - s) * inner long. The
  // outer indices are shared out between threads.
  const AxisView v = axis_view(x.shape(), a);
  const int64_t run = (e - s) * v.inner;
  const real* px = x.data();
  real* po = out.data();
  parallel_for(0, v.outer, row_grain(run), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) std::copy_n(px + (o * n + s) * v.inner, run, po + o * run);
  });
  return out;
}

Tensor narrow(const Tensor& x, int64_t axis, int64_t start, int64_t length) {
  check(length >= 0, "narrow: expected a non-negative length, got ", length);
  const int a = normalize_axis(axis, x.dim(), "narrow");
  const int64_t s = start < 0 ? start + x.shape()[a] : start;
  return slice(x, a, s, s + length);
}

void slice_add_(Tensor& dst, int64_t axis, int64_t start, const Tensor& src) {
  const int a = check_slice_add("slice_add_", dst.shape(), axis, start, src);
  const AxisView v = axis_view(dst.shape(), a);
  const int64_t run = src.shape()[a] * v.inner;  // one outer index's contiguous run in src
  real* pd = dst.data();
  const real* ps = src.data();
  parallel_for(0, v.outer, row_grain(run), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      real* d = pd + (o * v.n + start) * v.inner;
      const real* s = ps + o * run;
      for (int64_t i = 0; i < run; ++i) d[i] += s[i];
    }
  });
}

// zeros(shape) with src at rows [start, start + n) along the axis, written in one pass: each
// outer index's run is zeros before the slice, src's run, zeros after.
Tensor slice_add(const Shape& shape, int64_t axis, int64_t start, const Tensor& src) {
  const int a = check_slice_add("slice_add", shape, axis, start, src);
  Tensor out = Tensor::empty(shape);
  const AxisView v = axis_view(shape, a);
  const int64_t before = start * v.inner, run = src.shape()[a] * v.inner, row = v.n * v.inner;
  real* po = out.data();
  const real* ps = src.data();
  parallel_for(0, v.outer, row_grain(row), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      real* d = po + o * row;
      std::fill(d, d + before, real(0));
      std::copy(ps + o * run, ps + (o + 1) * run, d + before);
      std::fill(d + before + run, d + row, real(0));
    }
  });
  return out;
}

// ================================================================================================
// concat / stack / split / chunk

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  check(!xs.empty(), "concat: expected at least one tensor, got none");
  const int a = normalize_axis(axis, xs[0].dim(), "concat");
  Shape shape = xs[0].shape();
  shape[a] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    Shape expect = xs[0].shape(), got = xs[i].shape();
    check(got.size() == expect.size(), "concat: expected tensors of ", expect.size(),
          " dimensions, got shape ", got, " at position ", i);
    expect[a] = got[a];
    check(got == expect, "concat: expected shape ", expect, " (all axes but ", a,
          " equal to the first tensor's), got ", got, " at position ", i);
    shape[a] += got[a];
  }
  Tensor out = Tensor::empty(shape);
  // Viewed as (outer, n, inner), each outer index of out is the inputs' runs side by side:
  // [x0's n0 * inner elements | x1's n1 * inner | ...]. The outer indices are shared out
  // between threads, each copying every input's run for its own.
  const AxisView v = axis_view(shape, a);
  const int64_t row = shape[a] * v.inner;
  real* po = out.data();
  parallel_for(0, v.outer, row_grain(row), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      real* d = po + o * row;
      for (const Tensor& x : xs) {
        const int64_t run = x.shape()[a] * v.inner;
        d = std::copy_n(x.data() + o * run, run, d);
      }
    }
  });
  return out;
}

Tensor stack(const std::vector<Tensor>& xs, int64_t axis) {
  check(!xs.empty(), "stack: expected at least one tensor, got none");
  std::vector<Tensor> expanded;
  for (size_t i = 0; i < xs.size(); ++i) {
    check(xs[i].shape() == xs[0].shape(), "stack: expected every tensor to have shape ",
          xs[0].shape(), ", got ", xs[i].shape(), " at position ", i);
    expanded.push_back(unsqueeze(xs[i], axis));
  }
  return concat(expanded, normalize_axis(axis, xs[0].dim() + 1, "stack"));
}

void check_split_sizes(const Shape& shape, int axis, const std::vector<int64_t>& sizes) {
  int64_t total = 0;
  for (int64_t s : sizes) {
    check(s >= 0, "split: expected non-negative sizes, got ", s);
    total += s;
  }
  check(total == shape[axis], "split: expected sizes adding up to ", shape[axis], " (axis ", axis,
        " of shape ", shape, "), got ", total);
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis) {
  const int a = normalize_axis(axis, x.dim(), "split");
  check_split_sizes(x.shape(), a, sizes);
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, a, at, at + s));
    at += s;
  }
  return out;
}

std::vector<int64_t> split_sizes(int64_t n, int64_t size) {
  check(size > 0, "split: expected a positive piece size, got ", size);
  std::vector<int64_t> sizes;
  for (int64_t at = 0; at < n; at += size) sizes.push_back(std::min(size, n - at));
  return sizes;
}

std::vector<int64_t> chunk_sizes(int64_t n, int64_t chunks) {
  check(chunks > 0, "chunk: expected a positive number of chunks, got ", chunks);
  return split_sizes(n, std::max<int64_t>(1, (n + chunks - 1) / chunks));  // like torch.chunk
}

std::vector<Tensor> split(const Tensor& x, int64_t size, int64_t axis) {
  return split(x, split_sizes(x.shape()[normalize_axis(axis, x.dim(), "split")], size), axis);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t axis) {
  return split(x, chunk_sizes(x.shape()[normalize_axis(axis, x.dim(), "chunk")], chunks), axis);
}

// ================================================================================================
// index_select / index_add

Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index) {
  const int a = normalize_axis(axis, x.dim(), "index_select");
  check(index.dim() == 1, "index_select: expected a 1-D index, got shape ", index.shape());
  Shape shape = x.shape();
  shape[a] = index.numel();
  Tensor out = Tensor::empty(shape);
  const AxisView v = axis_view(x.shape(), a);
  const real* pi = index.data();
  for (int64_t j = 0; j < index.numel(); ++j) {
    const int64_t row = checked_index(pi[j], v.n, a, "index_select");
    for (int64_t o = 0; o < v.outer; ++o)
      std::memcpy(out.data() + (o * index.numel() + j) * v.inner, x.data() + (o * v.n + row) * v.inner,
                  sizeof(real) * v.inner);
  }
  return out;
}

Tensor index_add(const Shape& shape, int64_t axis, const Tensor& index, const Tensor& src) {
  const int a = normalize_axis(axis, static_cast<int64_t>(shape.size()), "index_add");
  Tensor out = zeros(shape);
  const AxisView v = axis_view(shape, a);
  const real* pi = index.data();
  const real* ps = src.data();
  real* po = out.data();
  // Sequential in j: rows picked twice (a repeated token) add up in a fixed order.
  for (int64_t j = 0; j < index.numel(); ++j) {
    const int64_t row = checked_index(pi[j], v.n, a, "index_add");
    for (int64_t o = 0; o < v.outer; ++o) {
      real* dst = po + (o * v.n + row) * v.inner;
      const real* s = ps + (o * index.numel() + j) * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) dst[i] += s[i];
    }
  }
  return out;
}

// ================================================================================================
// gather / scatter_add

namespace {

void check_gather_shapes(const Shape& x, const Tensor& index, int a, const char* op) {
  check(index.dim() == static_cast<int64_t>(x.size()), op, ": expected an index with ", x.size(),
        " dimensions like the input ", x, ", got shape ", index.shape());
  for (size_t d = 0; d < x.size(); ++d)
    check(static_cast<int>(d) == a || index.shape()[d] == x[d], op, ": expected index size ", x[d],
          " in axis ", d, " (input shape ", x, "), got index shape ", index.shape());
}

}  // namespace

Tensor gather(const Tensor& x, int64_t axis, const Tensor& index) {
  const int a = normalize_axis(axis, x.dim(), "gather");
  check_gather_shapes(x.shape(), index, a, "gather");
  Tensor out = Tensor::empty(index.shape());
  const AxisView vx = axis_view(x.shape(), a), vi = axis_view(index.shape(), a);
  for (int64_t o = 0; o < vi.outer; ++o)
    for (int64_t j = 0; j < vi.n; ++j)
      for (int64_t i = 0; i < vi.inner; ++i) {
        const int64_t at = (o * vi.n + j) * vi.inner + i;
        const int64_t k = checked_index(index.data()[at], vx.n, a, "gather");
        out.data()[at] = x.data()[(o * vx.n + k) * vx.inner + i];
      }
  return out;
}

Tensor scatter_add(const Shape& shape, int64_t axis, const Tensor& index, const Tensor& src) {
  const int a = normalize_axis(axis, static_cast<int64_t>(shape.size()), "scatter_add");
  check_gather_shapes(shape, index, a, "scatter_add");
  Tensor out = zeros(shape);
  const AxisView vx = axis_view(shape, a), vi = axis_view(index.shape(), a);
  for (int64_t o = 0; o < vi.outer; ++o)
    for (int64_t j = 0; j < vi.n; ++j)
      for (int64_t i = 0; i < vi.inner; ++i) {
        const int64_t at = (o * vi.n + j) * vi.inner + i;
        const int64_t k = checked_index(index.data()[at], vx.n, a, "scatter_add");
        out.data()[(o * vx.n + k) * vx.inner + i] += src.data()[at];
      }
  return out;
}

}  // namespace seqgrad
