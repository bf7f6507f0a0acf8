// tensor/shape.cpp - shape arithmetic and broadcasting rules (see shape.h).
#include "tensor/shape.h"

#include <algorithm>
#include <sstream>

#include "tensor/check.h"

namespace seqgrad {

std::ostream& operator<<(std::ostream& os, const Shape& shape) {
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  return os << ']';
}

std::string to_string(const Shape& shape) {
  std::ostringstream os;
  os << shape;
  return os.str();
}

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::vector<int64_t> strides(const Shape& shape) {
  std::vector<int64_t> st(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = s;
    s *= shape[i];
  }
  return st;
}

Shape unravel_index(int64_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

int normalize_axis(int64_t axis, int64_t dim, const char* op) {
  // A scalar has no axes, but PyTorch lets axis 0 / -1 name "the whole thing"; we do not.
  check_index(axis >= -dim && axis < dim, op, ": axis ", axis, " is out of range for a tensor of ",
              dim, " dimensions (valid: ", -dim, "..", dim - 1, ")");
  return static_cast<int>(axis < 0 ? axis + dim : axis);
}

// [docs:broadcast_shapes]
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    // Align from the right: missing leading axes count as size 1.
    const int64_t sa = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t sb = i < n - b.size() ? 1 : b[i - (n - b.size())];
    check(sa == sb || sa == 1 || sb == 1, op, ": shapes ", a, " and ", b,
          " cannot be broadcast together; expected equal sizes or 1 in each axis (from the right), "
          "got ", sa, " and ", sb, " in axis ", i);
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}
// [docs:end]

std::vector<int64_t> broadcast_strides(const Shape& from, const Shape& to) {
  std::vector<int64_t> st(to.size(), 0);
  const std::vector<int64_t> own = strides(from);
  const size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) st[lead + i] = from[i] == 1 ? 0 : own[i];
  return st;
}

AxisView axis_view(const Shape& shape, int axis) {
  AxisView v{1, shape[axis], 1};
  for (int i = 0; i < axis; ++i) v.outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) v.inner *= shape[i];
  return v;
}

}  // namespace seqgrad
