// tensor/tensor.cpp - storage, element access, factories and printing for Tensor.
#include "tensor/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>

#include "tensor/allocator.h"
#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/random.h"
#include "tensor/thread_pool.h"

namespace seqgrad {

// ================================================================================================
// Storage: 64-byte aligned, so every row of floats starts on a cache line. The blocks come from
// the caching allocator (allocator.h), which hands a freed block to the next request of its size.

Storage::Storage(int64_t n) : size_(n) {
  check(n >= 0, "Tensor: expected a non-negative number of elements, got ", n);
  if (static_cast<uint64_t>(n) > SIZE_MAX / sizeof(real) / 2)  // the byte count would overflow
    throw OutOfMemory(cat("out of memory: cannot allocate ", n, " elements for a tensor"));
  // Allocate at least one element so data() is never null for a defined tensor.
  data_ = static_cast<real*>(allocate_block(sizeof(real) * static_cast<size_t>(std::max<int64_t>(n, 1))));
}

Storage::~Storage() { release_block(data_, sizeof(real) * static_cast<size_t>(std::max<int64_t>(size_, 1))); }

// ================================================================================================
// Tensor

Tensor Tensor::empty(const Shape& shape) {
  for (int64_t s : shape)
    check(s >= 0, "Tensor: expected non-negative sizes, got shape ", shape);
  Tensor t;
  t.shape_ = shape;
  t.numel_ = seqgrad::numel(shape);
  t.storage_ = std::make_shared<Storage>(t.numel_);
  return t;
}

int64_t Tensor::size(int64_t axis) const { return shape_[normalize_axis(axis, dim(), "size")]; }

namespace {

int64_t flat_index(const Shape& shape, std::initializer_list<int64_t> index) {
  check(static_cast<int64_t>(index.size()) == static_cast<int64_t>(shape.size()),
        "at: expected ", shape.size(), " indices for a tensor of shape ", shape, ", got ",
        index.size());
  int64_t flat = 0, axis = 0;
  for (int64_t i : index) {
    check_index(i >= 0 && i < shape[axis], "at: index ", i, " is out of range for axis ", axis,
                " of size ", shape[axis]);
    flat = flat * shape[axis] + i;
    ++axis;
  }
  return flat;
}

}  // namespace

real& Tensor::at(std::initializer_list<int64_t> index) {
  check(defined(), "at: the tensor is undefined");
  return data()[flat_index(shape_, index)];
}

real Tensor::at(std::initializer_list<int64_t> index) const {
  check(defined(), "at: the tensor is undefined");
  return data()[flat_index(shape_, index)];
}

real Tensor::item() const {
  check(defined(), "item: the tensor is undefined");
  check(numel_ == 1, "item: expected a tensor with one element, got shape ", shape_);
  return data()[0];
}

std::vector<real> Tensor::to_vector() const {
  if (!defined()) return {};
  return std::vector<real>(data(), data() + numel_);
}

Tensor Tensor::clone() const {
  if (!defined()) return Tensor();
  Tensor out = empty(shape_);
  std::memcpy(out.data(), data(), sizeof(real) * numel_);
  return out;
}

Tensor Tensor::reshape(const Shape& shape) const {
  check(defined(), "reshape: the tensor is undefined");
  Shape target = shape;
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      check(infer_at < 0, "reshape: only one size may be -1, got ", shape);
      infer_at = static_cast<int64_t>(i);
    } else {
      check(target[i] >= 0, "reshape: expected sizes >= 0 or one -1, got ", shape);
      known *= target[i];
    }
  }
  if (infer_at >= 0) {
    check(known != 0 && numel_ % known == 0, "reshape: cannot infer the -1 in ", shape,
          " for a tensor of shape ", shape_, " (", numel_, " elements)");
    target[infer_at] = numel_ / known;
  }
  check(seqgrad::numel(target) == numel_, "reshape: expected a shape with ", numel_,
        " elements (from shape ", shape_, "), got ", shape);
  Tensor out = *this;
  out.shape_ = target;
  return out;
}

Tensor& Tensor::fill_(real value) {
  real* y = data();
  parallel_for(0, numel_, kElementwiseGrain, [&](int64_t i0, int64_t i1) { std::fill(y + i0, y + i1, value); });
  return *this;
}

Tensor& Tensor::copy_(const Tensor& src) {
  check(src.numel() == numel_, "copy_: expected a source with ", numel_, " elements (shape ",
        shape_, "), got shape ", src.shape());
  if (numel_ > 0) std::memmove(data(), src.data(), sizeof(real) * numel_);
  return *this;
}

Tensor& Tensor::add_(const Tensor& other, real alpha) {
  check(other.shape() == shape_, "add_: expected a tensor of shape ", shape_, ", got ",
        other.shape());
  real* y = data();
  const real* x = other.data();
  parallel_for(0, numel_, kElementwiseGrain, [=](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) y[i] += alpha * x[i];
  });
  return *this;
}

// ================================================================================================
// Factories

Tensor full(const Shape& shape, real value) { return Tensor::empty(shape).fill_(value); }
Tensor zeros(const Shape& shape) { return full(shape, 0); }
Tensor ones(const Shape& shape) { return full(shape, 1); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape()); }
Tensor scalar(real value) { return full({}, value); }

Tensor arange(int64_t n) { return arange(0, static_cast<real>(n), 1); }

Tensor arange(real start, real end, real step) {
  check(step != 0, "arange: expected a non-zero step, got 0");
  const double count = std::ceil((static_cast<double>(end) - start) / step);
  const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  Tensor t = Tensor::empty({n});
  for (int64_t i = 0; i < n; ++i) t.data()[i] = static_cast<real>(start + i * static_cast<double>(step));
  return t;
}

Tensor from_vector(const std::vector<real>& values, const Shape& shape) {
  check(static_cast<int64_t>(values.size()) == numel(shape), "from_vector: expected ",
        numel(shape), " values for shape ", shape, ", got ", values.size());
  Tensor t = Tensor::empty(shape);
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

Tensor from_vector(const std::vector<real>& values) {
  return from_vector(values, {static_cast<int64_t>(values.size())});
}

Tensor randn(const Shape& shape) {
  Tensor t = Tensor::empty(shape);
  Generator& g = default_generator();
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<real>(g.normal());
  return t;
}

Tensor rand(const Shape& shape) {
  Tensor t = Tensor::empty(shape);
  Generator& g = default_generator();
  // Keep as many random bits as `real` holds, so the value is exact and never rounds up to 1.
  constexpr int kBits = std::numeric_limits<real>::digits;
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data()[i] = static_cast<real>(std::ldexp(static_cast<double>(g.next_u64() >> (64 - kBits)), -kBits));
  return t;
}

// ================================================================================================
// Printing

namespace {

constexpr int64_t kSummarizeAbove = 1000;  // elements; PyTorch's default threshold
constexpr int64_t kEdgeItems = 3;

void print_axis(std::ostream& os, const Tensor& t, const std::vector<int64_t>& st, int axis,
                int64_t offset, bool summarize) {
  const int64_t n = t.shape()[axis];
  os << '[';
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      os << "..., ";
      i = n - kEdgeItems;
    }
    if (axis + 1 == t.dim()) {
      os << t.data()[offset + i];
    } else {
      print_axis(os, t, st, axis + 1, offset + i * st[axis], summarize);
    }
    if (i + 1 < n) os << ", ";
  }
  os << ']';
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  std::ostringstream body;
  body.precision(4);
  if (t.dim() == 0) {
    body << t.data()[0];
  } else {
    print_axis(body, t, strides(t.shape()), 0, 0, t.numel() > kSummarizeAbove);
  }
  return os << "tensor(" << body.str() << ", shape=" << t.shape() << ')';
}

std::string to_string(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

}  // namespace seqgrad
