// autograd/ops_reduce.cpp - sum, mean and max, forward and backward.
//
// A reduction's backward is a broadcast: every input element that was added into an output
// receives that output's gradient (times 1/count for mean). max sends it to the winner only.
#include <algorithm>

#include "autograd/ops.h"
#include "tensor/elementwise.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"

namespace seqgrad {
namespace {

// The shape of a keepdim reduction of `shape` over `axes` (already normalised).
Shape keepdim_shape(const Shape& shape, const std::vector<int64_t>& axes) {
  Shape out = shape;
  for (int64_t a : axes) out[a] = 1;
  return out;
}

std::vector<int64_t> normalized(const std::vector<int64_t>& axes, int64_t dim, const char* op) {
  std::vector<int64_t> out;
  for (int64_t a : axes) out.push_back(normalize_axis(a, dim, op));
  return out;
}

// d(sum over axes)/dx: dout, viewed with the reduced axes kept as size 1, broadcast to x.
Tensor spread(const Tensor& dout, const Shape& x_shape, const std::vector<int64_t>& axes) {
  return broadcast_to(dout.reshape(keepdim_shape(x_shape, axes)), x_shape);
}

std::vector<int64_t> all_axes(int64_t dim) {
  std::vector<int64_t> axes(dim);
  for (int64_t i = 0; i < dim; ++i) axes[i] = i;
  return axes;
}

}  // namespace

// ================================================================================================
// sum

Variable sum(const Variable& x, const std::vector<int64_t>& axes, bool keepdim) {
  const std::vector<int64_t> norm = normalized(axes, x.dim(), "sum");
  return make_result("sum", sum(x.value(), norm, keepdim), {x}, [norm](const Tensor& dout, Node& n) {
    // out = sum_{axes} x  =>  dx = dout broadcast back over the summed axes
    n.add_grad(0, spread(dout, n.inputs[0].shape(), norm));
  });
}

Variable sum(const Variable& x, int64_t axis, bool keepdim) {
  return sum(x, std::vector<int64_t>{axis}, keepdim);
}

Variable sum(const Variable& x) {
  return make_result("sum", sum(x.value()), {x}, [](const Tensor& dout, Node& n) {
    n.add_grad(0, full(n.inputs[0].shape(), dout.item()));  // every element gets dout
  });
}

// ================================================================================================
// mean

Variable mean(const Variable& x, const std::vector<int64_t>& axes, bool keepdim) {
  const std::vector<int64_t> norm = normalized(axes, x.dim(), "mean");
  int64_t count = 1;
  for (int64_t a : norm) count *= x.shape()[a];
  return make_result("mean", mean(x.value(), norm, keepdim), {x}, [norm, count](const Tensor& dout, Node& n) {
    // out = (1/count) sum_{axes} x  =>  dx = dout / count, broadcast
    n.add_grad(0, spread(dout, n.inputs[0].shape(), norm) / static_cast<real>(count));
  });
}

Variable mean(const Variable& x, int64_t axis, bool keepdim) {
  return mean(x, std::vector<int64_t>{axis}, keepdim);
}

Variable mean(const Variable& x) {
  return mean(x, all_axes(x.dim()), /*keepdim=*/false);
}

// ================================================================================================
// max

Variable max(const Variable& x, int64_t axis, bool keepdim) {
  const int a = normalize_axis(axis, x.dim(), "max");
  const MaxResult r = max_with_indices(x.value(), a, /*keepdim=*/true);
  const Tensor values = keepdim ? r.values : squeeze(r.values, a);
  const Tensor idx = r.indices;
  return make_result("max", values, {x}, [a, idx](const Tensor& dout, Node& n) {
    // out = x[argmax]  =>  dx = dout at the argmax position, 0 elsewhere
    n.add_grad(0, scatter_add(n.inputs[0].shape(), a, idx, dout.reshape(idx.shape())));
  });
}

}  // namespace seqgrad
