// tensor/tensor.h - Tensor: an n-dimensional array of `real` (float32) values.
//
// A Tensor is a Shape plus a contiguous, row-major, 64-byte-aligned buffer that is shared
// through a reference count. Copying a Tensor is SHALLOW: `Tensor b = a;` makes b another
// name for the same numbers, and writing through b changes a. Use clone() for a deep copy.
// reshape() of a tensor shares the buffer; every other layout change (transpose, slicing)
// makes a new contiguous tensor. Tensors know nothing about gradients: that is autograd/.
// Read next: elementwise.h (math), reduce.h, shape_ops.h, matmul.h.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/shape.h"

namespace seqgrad {

// The buffer behind one or more tensors: n reals, aligned to 64 bytes (one cache line, and
// wide enough for any SIMD load).
class Storage {
 public:
  explicit Storage(int64_t n);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  real* data() { return data_; }
  int64_t size() const { return size_; }

 private:
  real* data_;
  int64_t size_;
};

class Tensor {
 public:
  // An undefined tensor: no shape, no storage. Gradients start out like this.
  Tensor() = default;

  // An uninitialised tensor of the given shape (use zeros() when the values matter).
  static Tensor empty(const Shape& shape);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size(int64_t axis) const;  // negative axes count from the end
  int64_t numel() const { return numel_; }

  real* data() { return storage_ ? storage_->data() : nullptr; }
  const real* data() const { return storage_ ? storage_->data() : nullptr; }

  // Element access by full index, checked: t.at({1, 2}).
  real& at(std::initializer_list<int64_t> index);
  real at(std::initializer_list<int64_t> index) const;
  // The value of a one-element tensor.
  real item() const;
  // All values, row-major.
  std::vector<real> to_vector() const;

  Tensor clone() const;
  // Same numbers, new shape (shares storage). One size may be -1: it is inferred.
  Tensor reshape(const Shape& shape) const;
  Tensor flatten() const { return reshape({numel_}); }

  // In-place helpers.
  Tensor& fill_(real value);
  Tensor& copy_(const Tensor& src);  // same numel, values copied
  Tensor& add_(const Tensor& other, real alpha = 1);  // this += alpha * other, same shape

  // True when no other Tensor shares this storage, so writing in place is invisible to others.
  bool is_unique() const { return storage_.use_count() == 1; }
  bool shares_storage(const Tensor& other) const { return storage_ == other.storage_; }

 private:
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<Storage> storage_;
};

// ----------------------------------------------------------------------------------------------
// Factories

Tensor zeros(const Shape& shape);
Tensor ones(const Shape& shape);
Tensor full(const Shape& shape, real value);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
// A 0-dimensional tensor holding one value.
Tensor scalar(real value);
// 0, 1, ..., n-1 as a 1-D tensor; arange(start, end, step) like Python's range.
Tensor arange(int64_t n);
Tensor arange(real start, real end, real step = 1);
// Values laid out row-major in the given shape: from_vector({1, 2, 3, 4}, {2, 2}).
// Without a shape the result is 1-D.
Tensor from_vector(const std::vector<real>& values, const Shape& shape);
Tensor from_vector(const std::vector<real>& values);
// Random tensors from the default generator (random.h): N(0, 1) and U[0, 1).
Tensor randn(const Shape& shape);
Tensor rand(const Shape& shape);

// Prints the shape and values, e.g. "tensor([[1, 2], [3, 4]], shape=[2, 2])". Tensors with
// more than 1000 elements show the first and last 3 entries of each axis, like PyTorch.
std::ostream& operator<<(std::ostream& os, const Tensor& t);
std::string to_string(const Tensor& t);

}  // namespace seqgrad
