// tests/nn/test_grad_fused.cpp - gradcheck of the fused ops layer_norm and lstm_cell, every
// input, with and without LayerNorm's affine part. Compiled in float32 and float64.
#include "autograd/ops.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("fused grad float64");
#else
TEST_SUITE_BEGIN("fused grad float32");
#endif

TEST_CASE("grad through the fused layer_norm: x, weight and bias; no affine; bias only") {
  manual_seed(3);
  CHECK_GRAD([](const Vars& v) { return layer_norm(v[0], v[1], v[2], real(1e-5)); },
             {randn({2, 3, 5}), randn({5}), randn({5})});
  CHECK_GRAD([](const Vars& v) { return layer_norm(v[0], Variable(), Variable(), real(1e-5)); }, {randn({4, 6})});
  CHECK_GRAD([](const Vars& v) { return layer_norm(v[0], Variable(), v[1], real(1e-5)); }, {randn({3, 4}), randn({4})});
}

TEST_CASE("grad through the fused lstm_cell: gates and the previous cell") {
  manual_seed(4);
  CHECK_GRAD([](const Vars& v) { return lstm_cell(v[0], v[1]); }, {randn({3, 8}), randn({3, 2})});
}

TEST_SUITE_END();
