// nn/vision/pool.cpp - the printed form of the pooling layers (their forward is the op, see pool.h).
#include "nn/vision/pool.h"

#include "tensor/check.h"

namespace seqgrad::nn {

namespace {

// "kernel_size=(2, 2), stride=(2, 2)", and the padding when there is some (as Conv2d prints).
std::string pool_repr(const Pool2dOptions& o) {
  auto pair = [](int64_t h, int64_t w) { return cat("(", h, ", ", w, ")"); };
  std::string s = cat("kernel_size=", pair(o.kernel_h, o.kernel_w), ", stride=", pair(o.stride_h, o.stride_w));
  if (o.padding_h || o.padding_w) s += ", padding=" + pair(o.padding_h, o.padding_w);
  return s;
}

}  // namespace

std::string MaxPool2d::extra_repr() const { return pool_repr(options); }
std::string AvgPool2d::extra_repr() const { return pool_repr(options); }

}  // namespace seqgrad::nn
