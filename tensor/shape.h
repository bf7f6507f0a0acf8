// tensor/shape.h - shapes, axes and numpy-style broadcasting rules.
//
// A Shape is a list of sizes, row-major: Shape{B, T, C} means the last axis C is contiguous.
// A 0-dimensional shape {} is a scalar with one element. This file only computes with shapes;
// the data lives in tensor.h. Read next: tensor.h.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace seqgrad {

// A std::vector of sizes that prints as [2, 3]. Deriving lets ADL find operator<< below.
struct Shape : std::vector<int64_t> {
  using std::vector<int64_t>::vector;
  Shape() = default;
};

std::ostream& operator<<(std::ostream& os, const Shape& shape);
std::string to_string(const Shape& shape);

// Number of elements: the product of the sizes (1 for a scalar shape {}).
int64_t numel(const Shape& shape);

// Row-major strides in elements: strides({2, 3, 4}) == {12, 4, 1}.
std::vector<int64_t> strides(const Shape& shape);

// The index on every axis of element `flat` in row-major order (numpy.unravel_index):
// unravel_index(5, {2, 3}) == {1, 2}, which prints as [1, 2], the way messages name an element.
Shape unravel_index(int64_t flat, const Shape& shape);

// Turns a possibly negative axis (-1 = last) into 0..dim-1, or throws naming the op:
//   "sum: axis 3 is out of range for a tensor of 2 dimensions (valid: -2..1)".
int normalize_axis(int64_t axis, int64_t dim, const char* op);

// The broadcast of two shapes under numpy rules: align from the right; sizes must match or
// one of them be 1. broadcast_shapes({4, 1, 3}, {5, 1}) == {4, 5, 3}.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Strides for reading a tensor of shape `from` as if it had the (broadcast) shape `to`:
// broadcast axes get stride 0, so the same element is read again.
std::vector<int64_t> broadcast_strides(const Shape& from, const Shape& to);

// The sizes before, at, and after an axis: a tensor of shape (outer, n, inner) in disguise.
// Most axis-wise kernels (reductions, softmax, concat, slicing) loop over exactly this view.
struct AxisView {
  int64_t outer, n, inner;
};
AxisView axis_view(const Shape& shape, int axis);

}  // namespace seqgrad
