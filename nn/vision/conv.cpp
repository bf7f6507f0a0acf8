// nn/vision/conv.cpp - Conv2d's parameters, initialisation and forward.
#include "nn/vision/conv.h"

#include <cmath>

#include "nn/core/init.h"
#include "tensor/check.h"

namespace seqgrad::nn {

Conv2d::Conv2d(const Conv2dOptions& o) : options(o) {
  check(o.in_channels > 0 && o.out_channels > 0 && o.kernel_h > 0 && o.kernel_w > 0, name(),
        ": expected positive channels and kernel size, got in_channels ", o.in_channels, ", out_channels ",
        o.out_channels, ", kernel (", o.kernel_h, ", ", o.kernel_w, ")");
  check(o.groups >= 1 && o.in_channels % o.groups == 0 && o.out_channels % o.groups == 0, name(), ": expected groups (",
        o.groups, ") to divide in_channels (", o.in_channels, ") and out_channels (", o.out_channels, ")");
  Tensor w = Tensor::empty({o.out_channels, o.in_channels / o.groups, o.kernel_h, o.kernel_w});
  init::kaiming_uniform_(w, std::sqrt(real(5)));  // = U(-1/sqrt(fan_in), 1/sqrt(fan_in))
  weight = register_parameter("weight", w);
  if (o.bias) {
    const real bound = 1 / std::sqrt(static_cast<real>(o.in_channels / o.groups * o.kernel_h * o.kernel_w));
    Tensor b = Tensor::empty({o.out_channels});
    init::uniform_(b, -bound, bound);
    bias = register_parameter("bias", b);
  }
}

std::string Conv2d::extra_repr() const {
  const Conv2dOptions& o = options;
  auto pair = [](int64_t h, int64_t w) { return cat("(", h, ", ", w, ")"); };
  std::string s = cat(o.in_channels, ", ", o.out_channels, ", kernel_size=", pair(o.kernel_h, o.kernel_w),
                      ", stride=", pair(o.stride_h, o.stride_w));
  if (o.padding_h || o.padding_w) s += ", padding=" + pair(o.padding_h, o.padding_w);
  if (o.dilation_h != 1 || o.dilation_w != 1) s += ", dilation=" + pair(o.dilation_h, o.dilation_w);
  if (o.groups != 1) s += cat(", groups=", o.groups);
  if (!o.bias) s += ", bias=false";
  return s;
}

Variable Conv2d::forward(const Variable& x) {
  const Conv2dOptions& o = options;
  Conv2dArgs a;
  a.stride_h = o.stride_h, a.stride_w = o.stride_w, a.pad_h = o.padding_h, a.pad_w = o.padding_w;
  a.dil_h = o.dilation_h, a.dil_w = o.dilation_w, a.groups = o.groups;
  return conv2d(x, weight, bias, a);
}

}  // namespace seqgrad::nn
