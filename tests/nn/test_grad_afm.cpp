// tests/nn/test_grad_afm.cpp - gradcheck through the attentional factorization machine: the
// field embeddings and every parameter of the attention network and the projection.
// Compiled in float32 and float64.
#include "nn/recommenders/afm.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("afm grad float64");
#else
TEST_SUITE_BEGIN("afm grad float32");
#endif

TEST_CASE("grad through AttentionalFactorizationMachine: fields, W, b, h and p") {
  manual_seed(2);
  nn::AttentionalFactorizationMachine afm(/*embed_dim=*/3, /*attention_size=*/4);
  // The attention network has a ReLU: float32's default step can straddle its kink.
  GradcheckOptions o;
  if (sizeof(real) == 4) o.with_eps(1e-3).with_atol(3e-2).with_rtol(3e-2);
  const GradcheckResult r = gradcheck(
      [&afm](const Vars& v) {
        afm.attention->weight = v[1];
        afm.attention->bias = v[2];
        afm.score->weight = v[3];
        afm.projection->weight = v[4];
        return afm.forward(v[0]);
      },
      {randn({2, 4, 3}), afm.attention->weight.value(), afm.attention->bias.value(), afm.score->weight.value(),
       afm.projection->weight.value()},
      o);
  CHECK_MESSAGE(r.ok, r.message);
}

TEST_SUITE_END();
