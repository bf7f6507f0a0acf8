// tensor/shape_ops.h - moving data between layouts: transpose, slice, concat, index.
//
// Every op here returns a new contiguous tensor (reshape, which shares storage, is a method
// of Tensor). The helpers at the end (slice_add_, slice_add, index_add, scatter_add) are the adjoints
// autograd needs: they put a gradient back where the forward took it from.
// Indices are whole numbers stored as real (see dtype.h) and are checked for range.
// Read next: softmax.h.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace seqgrad {

// Swap two axes / reorder all axes: permute(x of shape (B, T, C), {0, 2, 1}) -> (B, C, T).
Tensor transpose(const Tensor& x, int64_t axis0, int64_t axis1);
Tensor permute(const Tensor& x, const std::vector<int64_t>& order);

// Insert / remove an axis of size 1 (these share storage, like reshape).
Tensor unsqueeze(const Tensor& x, int64_t axis);
Tensor squeeze(const Tensor& x, int64_t axis);

// Elements start..end-1 along an axis (negative start/end count from the end; unlike
// Python, out-of-range bounds are an error, not clamped). narrow takes a length instead.
Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t end);
Tensor narrow(const Tensor& x, int64_t axis, int64_t start, int64_t length);

// Join tensors along an existing axis (concat) or a new one (stack).
Tensor concat(const std::vector<Tensor>& xs, int64_t axis);
Tensor stack(const std::vector<Tensor>& xs, int64_t axis);

// Cut along an axis into pieces of the given sizes (they must add up to the axis size), into
// pieces of `size` (the last may be smaller), or into `chunks` near-equal pieces (torch.chunk).
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis);
std::vector<Tensor> split(const Tensor& x, int64_t size, int64_t axis);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t axis);
// The piece sizes split(x, size, axis) and chunk(x, chunks, axis) use for an axis of length n.
std::vector<int64_t> split_sizes(int64_t n, int64_t size);
std::vector<int64_t> chunk_sizes(int64_t n, int64_t chunks);
// Throws unless `sizes` are non-negative and add up to shape[axis].
void check_split_sizes(const Shape& shape, int axis, const std::vector<int64_t>& sizes);

// Rows picked by a 1-D index: index_select(x of shape (V, C), 0, ids of shape (N)) -> (N, C).
Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index);
// torch.gather: index has x's number of axes; out[..., j, ...] = x[..., index[..., j, ...], ...]
// along `axis`, so out has index's shape.
Tensor gather(const Tensor& x, int64_t axis, const Tensor& index);

// ----------------------------------------------------------------------------------------------
// Adjoints (used by backward passes)

// dst[..., start:start+n, ...] += src along axis, in place (adjoint of slice). Adding into
// one region of an existing gradient keeps an RNN unrolled over T steps O(T), not O(T^2).
void slice_add_(Tensor& dst, int64_t axis, int64_t start, const Tensor& src);
// zeros(shape) with src at rows [start, start+n) along axis: the same, for a gradient not yet
// written, in one pass (no zero fill of the slice's rows followed by an addition to them).
Tensor slice_add(const Shape& shape, int64_t axis, int64_t start, const Tensor& src);
// zeros(shape) with src's rows added at rows index[j] along axis (adjoint of index_select).
Tensor index_add(const Shape& shape, int64_t axis, const Tensor& index, const Tensor& src);
// zeros(shape) with src added at the positions gather read (adjoint of gather).
Tensor scatter_add(const Shape& shape, int64_t axis, const Tensor& index, const Tensor& src);

// Checks that an index value is a whole number in [0, n), or throws naming the op:
//   "index_select: index 7 is out of range for axis 0 of size 5".
int64_t checked_index(real value, int64_t n, int axis, const char* op);

}  // namespace seqgrad
