// tests/nn/test_grad_din.cpp - gradcheck through DIN's activation unit: the behaviours, the
// candidate and every parameter, with padded histories. Compiled in float32 and float64.
#include "nn/recommenders/din.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("din grad float64");
#else
TEST_SUITE_BEGIN("din grad float32");
#endif

TEST_CASE("grad through DINActivationUnit: behaviours, candidate and every parameter") {
  manual_seed(4);
  nn::DINActivationUnit din(nn::DINOptions(3).with_hidden(4, 2));
  const std::vector<int64_t> lengths{4, 2};
  CHECK_GRAD([&din, lengths](const Vars& v) {
    const nn::DINResult r = din.forward(v[0], v[1], lengths);
    return concat({reshape(r.pooled, {-1}), reshape(r.weights, {-1})}, 0);
  }, {randn({2, 4, 3}), randn({2, 3})});
  const Variable b(randn({2, 4, 3})), c(randn({2, 3}));
  const GradcheckResult r = gradcheck_parameters([&] { return din.forward(b, c, lengths).pooled; }, din.parameters());
  CHECK_MESSAGE(r.ok, r.message);
}

TEST_SUITE_END();
