// autograd/ops_shape.cpp - layout and indexing ops: each backward puts the gradient back
// where the forward took the values from (reshape back, transpose back, scatter, pad).
#include <algorithm>

#include "autograd/ops.h"
#include "tensor/elementwise.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"

namespace seqgrad {

// ================================================================================================
// reshape / transpose / permute

Variable reshape(const Variable& x, const Shape& shape) {
  return make_result("reshape", x.value().reshape(shape), {x}, [](const Tensor& dout, Node& n) {
    n.add_grad(0, dout.reshape(n.inputs[0].shape()));  // same numbers, original shape
  });
}

Variable permute(const Variable& x, const std::vector<int64_t>& order) {
  Tensor out = permute(x.value(), order);
  // Output axis i is input axis order[i]; the inverse permutation sends it back.
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[normalize_axis(order[i], x.dim(), "permute")] = i;
  return make_result("permute", out, {x}, [inverse](const Tensor& dout, Node& n) {
    n.add_grad(0, permute(dout, inverse));
  });
}

Variable transpose(const Variable& x, int64_t axis0, int64_t axis1) {
  const int a = normalize_axis(axis0, x.dim(), "transpose"), b = normalize_axis(axis1, x.dim(), "transpose");
  return make_result("transpose", transpose(x.value(), a, b), {x}, [a, b](const Tensor& dout, Node& n) {
    n.add_grad(0, transpose(dout, a, b));  // swapping twice is the identity
  });
}

Variable unsqueeze(const Variable& x, int64_t axis) {
  Shape shape = x.shape();
  shape.insert(shape.begin() + normalize_axis(axis, x.dim() + 1, "unsqueeze"), 1);
  return reshape(x, shape);
}

Variable squeeze(const Variable& x, int64_t axis) {
  return reshape(x, squeeze(x.value(), axis).shape());
}

// ================================================================================================
// slice / narrow / concat / stack / split / chunk

Variable slice(const Variable& x, int64_t axis, int64_t start, int64_t end) {
  const int a = normalize_axis(axis, x.dim(), "slice");
  const int64_t s = start < 0 ? start + x.shape()[a] : start;
  return make_result("slice", slice(x.value(), a, start, end), {x}, [a, s](const Tensor& dout, Node& n) {
    // out = x[s:e] along a  =>  dx[s:e] += dout, and nothing elsewhere
    n.add_grad_slice(0, a, s, dout);
  });
}

Variable narrow(const Variable& x, int64_t axis, int64_t start, int64_t length) {
  check(length >= 0, "narrow: expected a non-negative length, got ", length);
  const int a = normalize_axis(axis, x.dim(), "narrow");
  const int64_t s = start < 0 ? start + x.shape()[a] : start;
  return slice(x, a, s, s + length);
}

Variable concat(const std::vector<Variable>& xs, int64_t axis) {
  std::vector<Tensor> values;
  for (const Variable& x : xs) values.push_back(x.value());
  Tensor out = concat(values, axis);
  const int a = normalize_axis(axis, out.dim(), "concat");
  return make_result("concat", out, xs, [a](const Tensor& dout, Node& n) {
    // out = [x0; x1; ...] along a  =>  dx_i = the matching piece of dout
    int64_t at = 0;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int64_t len = n.inputs[i].shape()[a];
      if (n.needs_grad(i)) n.add_grad(i, slice(dout, a, at, at + len));
      at += len;
    }
  });
}

Variable stack(const std::vector<Variable>& xs, int64_t axis) {
  check(!xs.empty(), "stack: expected at least one tensor, got none");
  std::vector<Variable> expanded;
  for (size_t i = 0; i < xs.size(); ++i) {
    check(xs[i].shape() == xs[0].shape(), "stack: expected every tensor to have shape ", xs[0].shape(),
          ", got ", xs[i].shape(), " at position ", i);
    expanded.push_back(unsqueeze(xs[i], axis));
  }
  return concat(expanded, normalize_axis(axis, xs[0].dim() + 1, "stack"));
}

std::vector<Variable> split(const Variable& x, const std::vector<int64_t>& sizes, int64_t axis) {
  const int a = normalize_axis(axis, x.dim(), "split");
  check_split_sizes(x.shape(), a, sizes);
  // Each piece is a slice: its backward writes its gradient back into its own range.
  std::vector<Variable> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, a, at, at + s));
    at += s;
  }
  return out;
}

std::vector<Variable> split(const Variable& x, int64_t size, int64_t axis) {
  return split(x, split_sizes(x.shape()[normalize_axis(axis, x.dim(), "split")], size), axis);
}

std::vector<Variable> chunk(const Variable& x, int64_t chunks, int64_t axis) {
  return split(x, chunk_sizes(x.shape()[normalize_axis(axis, x.dim(), "chunk")], chunks), axis);
}

// ================================================================================================
// index_select / embedding / gather / scatter_add

Variable index_select(const Variable& x, int64_t axis, const Tensor& index) {
  const int a = normalize_axis(axis, x.dim(), "index_select");
  return make_result("index_select", index_select(x.value(), a, index), {x}, [a, index](const Tensor& dout, Node& n) {
    // out[j] = x[index[j]]  =>  dx[r] = sum of dout[j] over every j with index[j] == r
    n.add_grad(0, index_add(n.inputs[0].shape(), a, index, dout));
  });
}

Variable embedding(const Variable& weight, const Tensor& ids, int64_t padding_idx) {
  check(weight.dim() == 2, "embedding: expected a weight of shape (V, C), got ", weight.shape());
  const int64_t V = weight.size(0), C = weight.size(1);
  check_index(padding_idx < V, "embedding: padding_idx ", padding_idx, " is out of range for ", V, " embeddings");
  for (int64_t i = 0; i < ids.numel(); ++i) checked_index(ids.data()[i], V, 0, "embedding");
  Shape shape = ids.shape();
  shape.push_back(C);
  const Tensor flat = ids.reshape({ids.numel()});
  const Tensor out = index_select(weight.value(), 0, flat).reshape(shape);  // (..., C)
  return make_result("embedding", out, {weight}, [flat, padding_idx, C](const Tensor& dout, Node& n) {
    // out[..., :] = weight[id, :]  =>  dweight[v, :] = sum of dout rows whose id is v
    Tensor dweight = index_add(n.inputs[0].shape(), 0, flat, dout.reshape({flat.numel(), C}));
    if (padding_idx >= 0) std::fill(dweight.data() + padding_idx * C, dweight.data() + (padding_idx + 1) * C, real(0));
    n.add_grad(0, dweight);
  });
}

Variable gather(const Variable& x, int64_t axis, const Tensor& index) {
  const int a = normalize_axis(axis, x.dim(), "gather");
  return make_result("gather", gather(x.value(), a, index), {x}, [a, index](const Tensor& dout, Node& n) {
    n.add_grad(0, scatter_add(n.inputs[0].shape(), a, index, dout));  // adjoint of gather
  });
}

Variable scatter_add(const Shape& shape, int64_t axis, const Tensor& index, const Variable& src) {
  check(index.shape() == src.shape(), "scatter_add: expected an index of src's shape ", src.shape(), ", got ",
        index.shape());
  const int a = normalize_axis(axis, static_cast<int64_t>(shape.size()), "scatter_add");
  return make_result("scatter_add", scatter_add(shape, a, index, src.value()), {src}, [a, index](const Tensor& dout, Node& n) {
    // out[..., index[j], ...] += src[..., j, ...]  =>  dsrc[..., j, ...] = dout[..., index[j], ...]: a gather
    n.add_grad(0, gather(dout, a, index));
  });
}

// ================================================================================================
// masked_fill / where

Variable masked_fill(const Variable& x, const Tensor& mask, real value) {
  return make_result("masked_fill", masked_fill(x.value(), mask, value), {x}, [mask](const Tensor& dout, Node& n) {
    // filled places are constants: their gradient is 0
    n.add_grad(0, masked_fill(dout, mask, 0));
  });
}

Variable where(const Tensor& cond, const Variable& a, const Variable& b) {
  return make_result("where", where(cond, a.value(), b.value()), {a, b}, [cond](const Tensor& dout, Node& n) {
    // out = cond ? a : b  =>  da = dout where cond, db = dout elsewhere (summed to each shape)
    const Tensor zero = zeros({});
    if (n.needs_grad(0)) n.add_grad(0, sum_to_shape(where(cond, dout, zero), n.inputs[0].shape()));
    if (n.needs_grad(1)) n.add_grad(1, sum_to_shape(where(cond, zero, dout), n.inputs[1].shape()));
  });
}

}  // namespace seqgrad
