// tests/nn/test_grad_conv.cpp - gradcheck through conv2d with respect to the input, the weight
// and the bias, with stride, padding, dilation and groups. Compiled in float32 and float64.
#include "autograd/ops.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("conv grad float64");
#else
TEST_SUITE_BEGIN("conv grad float32");
#endif

TEST_CASE("grad through conv2d: input, weight and bias") {
  manual_seed(2);
  struct Case {
    int64_t s, p, d, groups;
  };
  for (const Case& c : {Case{1, 0, 1, 1}, Case{2, 1, 1, 1}, Case{1, 2, 2, 2}}) {
    CAPTURE(c.s);
    CAPTURE(c.groups);
    Conv2dArgs a;
    a.stride_h = a.stride_w = c.s, a.pad_h = a.pad_w = c.p, a.dil_h = a.dil_w = c.d, a.groups = c.groups;
    CHECK_GRAD([a](const Vars& v) { return conv2d(v[0], v[1], v[2], a); },
               {randn({2, 2, 5, 4}), randn({4, 2 / c.groups, 3, 2}), randn({4})});
  }
}

TEST_SUITE_END();
