// tests/nn/test_grad_pool.cpp - gradcheck through max_pool2d and avg_pool2d (with padding and
// stride != kernel) and batch_norm (training and eval, input, weight and bias; the fused op
// and its composed definition). Compiled in float32 and float64.
#include <utility>

#include "nn/vision/batchnorm.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;
using seqgrad::testing::positive;

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

TEST_CASE("grad through batch_norm in training: input, weight and bias, fused and composed") {
  manual_seed(6);
  const Tensor x = randn({3, 2, 4, 3}), w = randn({2}), b = randn({2});
  const real eps = real(1e-5);
  CHECK_GRAD([eps](const Vars& v) { return batch_norm(v[0], Tensor(), Tensor(), v[1], v[2], true, real(0.1), eps); },
             {x, w, b});
  CHECK_GRAD([eps](const Vars& v) { return nn::batch_norm_composed(v[0], v[1], v[2], eps); }, {x, w, b});
  // Without the affine part, and on (N, C) input (one value per image and channel).
  CHECK_GRAD([eps](const Vars& v) { return batch_norm(v[0], Tensor(), Tensor(), Variable(), Variable(), true, real(0.1), eps); },
             {randn({5, 3})});
}

TEST_CASE("grad through batch_norm in eval (running statistics): input, weight and bias") {
  manual_seed(7);
  const Tensor mean = randn({2}), var = positive({2});
  CHECK_GRAD([mean, var](const Vars& v) { return batch_norm(v[0], mean, var, v[1], v[2], false, real(0.1), real(1e-5)); },
             {randn({2, 2, 3, 3}), randn({2}), randn({2})});
}

TEST_CASE("grad through the BatchNorm2d layer's parameters, in training") {
  manual_seed(8);
  nn::BatchNorm2d bn(nn::BatchNorm2dOptions(3));
  bn.weight.value().copy_(randn({3}));
  bn.bias.value().copy_(randn({3}));
  const Variable x(randn({2, 3, 3, 4}));
  const GradcheckResult r = gradcheck_parameters([&] { return bn.forward(x); }, bn.parameters());
  CHECK_MESSAGE(r.ok, r.message);
}

TEST_SUITE_END();
