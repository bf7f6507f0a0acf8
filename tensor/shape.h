// tensor/shape.h - shapes, axes and numpy-style broadcasting rules.
//
// A Shape is a list of sizes, row-major: Shape{B, T, C} means the last axis C is contiguous.
// A 0-dimensional shape {} is a scalar with one element. This file only computes with shapes;
// the data lives in tensor.h. Read next: tensor.h.
#pragma once

#include <array>
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

// Walks the rows (last axis) of a row-major output of shape `shape`, giving for each of N
// operands the offset where that row starts in it, read through the operand's own strides (0
// along broadcast axes; permuted, for permute). First, neighbouring axes that every operand
// steps through as one (outer stride = inner size x inner stride) are merged and axes of size 1
// dropped, without changing the order of the elements: adding a (20, 20) mask to (64, 4, 20,
// 20) scores walks 256 rows of 400, not 5,120 rows of 20. Then moving to the next row is an
// odometer: add the stride of the last row axis, and carry into the axes before it when it
// wraps, as a car's mileage counter does.
//   RowWalk<2> w(shape, {sa, sb});
//   w.seek(r0);
//   for (int64_t r = r0; r < r1; ++r, w.next())  // row r: a at w.offset(0), b at w.offset(1),
//     ...                                        // w.cols() elements, w.step(k) apart
template <int N>
class RowWalk {
 public:
  RowWalk(const Shape& shape, const std::array<std::vector<int64_t>, N>& strides) {
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;  // a size-1 axis moves nothing
      bool merge = !sizes_.empty();
      for (int k = 0; k < N && merge; ++k) merge = st_[k].back() == shape[d] * strides[k][d];
      if (merge) {  // the previous axis steps over exactly this one: one axis of both sizes
        sizes_.back() *= shape[d];
        for (int k = 0; k < N; ++k) st_[k].back() = strides[k][d];
      } else {
        sizes_.push_back(shape[d]);
        for (int k = 0; k < N; ++k) st_[k].push_back(strides[k][d]);
      }
    }
    if (!sizes_.empty()) {  // the last axis is the row; the others count rows
      cols_ = sizes_.back();
      for (int k = 0; k < N; ++k) step_[k] = st_[k].back();
    }
    for (size_t d = 0; d + 1 < sizes_.size(); ++d) rows_ *= sizes_[d];
  }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }         // elements per row
  int64_t step(int k) const { return step_[k]; }  // operand k's stride along a row
  int64_t offset(int k) const { return offset_[k]; }

  // Positions the walk at the start of row `row`.
  void seek(int64_t row) {
    index_.assign(sizes_.empty() ? 0 : sizes_.size() - 1, 0);
    offset_.fill(0);
    for (int64_t d = static_cast<int64_t>(index_.size()) - 1; d >= 0; --d) {  // unravel, innermost first
      index_[d] = row % sizes_[d];
      row /= sizes_[d];
      for (int k = 0; k < N; ++k) offset_[k] += index_[d] * st_[k][d];
    }
  }
  // On to the next row.
  void next() {
    for (int64_t d = static_cast<int64_t>(index_.size()) - 1; d >= 0; --d) {
      for (int k = 0; k < N; ++k) offset_[k] += st_[k][d];
      if (++index_[d] < sizes_[d]) return;
      for (int k = 0; k < N; ++k) offset_[k] -= sizes_[d] * st_[k][d];  // wrapped: carry
      index_[d] = 0;
    }
  }

 private:
  std::vector<int64_t> sizes_;              // the merged axes; the last is the row
  std::array<std::vector<int64_t>, N> st_;  // each operand's stride along each merged axis
  std::vector<int64_t> index_;              // the current row's index on every axis but the last
  std::array<int64_t, N> offset_{}, step_{};
  int64_t rows_ = 1, cols_ = 1;
};

// The sizes before, at, and after an axis: a tensor of shape (outer, n, inner) in disguise.
// Most axis-wise kernels (reductions, softmax, concat, slicing) loop over exactly this view.
struct AxisView {
  int64_t outer, n, inner;
};
AxisView axis_view(const Shape& shape, int axis);

}  // namespace seqgrad
