// tests/nn/test_grad_pool.cpp - gradcheck through max_pool2d and avg_pool2d (with padding and
// stride != kernel). Compiled in float32 and float64.
#include <utility>

#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("pool grad float64");
#else
TEST_SUITE_BEGIN("pool grad float32");
#endif

namespace {

// Values 0.1 apart in random order: no two cells of a window are within a finite-difference
// step of each other, so the winner of every max never changes while the check nudges a cell.
Tensor distinct(const Shape& shape) {
  Tensor x = Tensor::empty(shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = real(0.1) * static_cast<real>(i) - real(0.05) * x.numel();
  for (int64_t i = x.numel() - 1; i > 0; --i)
    std::swap(x.data()[i], x.data()[default_generator().randint(static_cast<uint64_t>(i + 1))]);
  return x;
}

}  // namespace

TEST_CASE("grad through max_pool2d and avg_pool2d: plain, strided, padded, overlapping") {
  manual_seed(5);
  for (const Pool2dOptions& o : {Pool2dOptions(2), Pool2dOptions(3, 2).with_stride(2, 1).with_padding(1, 1),
                                 Pool2dOptions(3).with_stride(1).with_padding(1), Pool2dOptions(2).with_stride(3)}) {
    CAPTURE(o.kernel_h);
    CAPTURE(o.stride_h);
    CAPTURE(o.padding_h);
    const Tensor x = distinct({2, 3, 7, 6});
    CHECK_GRAD([o](const Vars& v) { return max_pool2d(v[0], o); }, {x});
    CHECK_GRAD([o](const Vars& v) { return avg_pool2d(v[0], o); }, {x});
  }
}

TEST_SUITE_END();
