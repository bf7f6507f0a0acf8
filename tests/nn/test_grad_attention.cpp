// tests/nn/test_grad_attention.cpp - gradcheck through every score function, soft_context, attend
// (with a padding mask) and scaled dot-product attention. Compiled in float32 and float64.
#include "nn/attention/attention.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("attention grad float64");
#else
TEST_SUITE_BEGIN("attention grad float32");
#endif

TEST_CASE("grad through each score function: query, keys and every parameter") {
  // Every registered score (a new one is tested here as soon as it registers), each from the
  // same seed, so that one score's test does not depend on which others are registered.
  for (const std::string& kind : nn::scores().names()) {
    CAPTURE(kind);
    manual_seed(1);
    auto score = nn::make_score(kind, 4, 4, 5, /*max_positions=*/6);
    CHECK_GRAD([score](const Vars& v) { return score->forward(v[0], v[1]); }, {randn({2, 4}), randn({2, 3, 4})});
    CHECK_GRAD([score](const Vars& v) { return score->forward(v[0], v[1]); }, {randn({2, 2, 4}), randn({2, 3, 4})});
    if (score->parameters().empty()) continue;
    const Variable q(randn({2, 2, 4})), k(randn({2, 3, 4}));
    // The MLP's ReLU has a kink; float32's default step (0.01) can straddle it, so use a smaller one.
    GradcheckOptions opt;
    if (kind == "mlp" && sizeof(real) == 4) opt.with_eps(1e-3).with_atol(2e-2);
    const GradcheckResult r = gradcheck_parameters([&] { return score->forward(q, k); }, score->parameters(), opt);
    CHECK_MESSAGE(r.ok, r.message);
  }
}

TEST_CASE("grad through soft_context, weights and values, one query and several") {
  manual_seed(2);
  CHECK_GRAD([](const Vars& v) { return nn::soft_context(v[0], v[1]); }, {randn({2, 3}), randn({2, 3, 4})});
  CHECK_GRAD([](const Vars& v) { return nn::soft_context(v[0], v[1]); }, {randn({2, 5, 3}), randn({2, 3, 4})});
}

TEST_CASE("grad through attend with a padding mask, and through scaled dot-product attention") {
  manual_seed(3);
  const Tensor mask = nn::padding_mask({3, 1}, 3);  // second row attends to one position only
  CHECK_GRAD([mask](const Vars& v) { return nn::attend(v[0], v[1], mask).context; }, {randn({2, 3}), randn({2, 3, 4})});
  CHECK_GRAD([mask](const Vars& v) { return nn::attend(v[0], v[1], mask).weights; }, {randn({2, 2, 3}), randn({2, 3, 4})});
  const Tensor causal = nn::causal_mask(3);
  CHECK_GRAD([causal](const Vars& v) { return nn::scaled_dot_product_attention(v[0], v[1], v[2], causal).context; },
             {randn({2, 2, 3, 4}), randn({2, 2, 3, 4}), randn({2, 2, 3, 4})});
  // In query blocks: 4 blocks of 2 queries, each against the keys it can see.
  const Tensor causal8 = nn::causal_mask(8);
  CHECK_GRAD([causal8](const Vars& v) {
    return nn::scaled_dot_product_attention(v[0], v[1], v[2], causal8, 0, true, /*query_block=*/2).context;
  }, {randn({1, 2, 8, 3}), randn({1, 2, 8, 3}), randn({1, 2, 8, 3})});
}

TEST_SUITE_END();
