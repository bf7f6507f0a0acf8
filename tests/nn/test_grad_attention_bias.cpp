// tests/nn/test_grad_attention_bias.cpp - gradcheck through the attention hook
// (nn/transformer/attention_hook.h): a learned bias on the logits and a transform of q and k,
// in multi-head attention with a causal mask; and through every registered positional encoding
// attached to a self-attention layer (ALiBi, T5 buckets and rotary too, when the coursework is
// linked: tests/examples/coursework.sh). Compiled in float32 and float64.
#include <algorithm>

#include "nn/transformer/transformer.h"
#include "tests/test_util.h"

using namespace seqgrad;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("attention bias grad float64");
#else
TEST_SUITE_BEGIN("attention bias grad float32");
#endif

namespace {

// A learned bias per head and clipped distance j - i (NH, 5), and keys and queries scaled by
// (1 + position), a transform whose gradient is easy to get wrong by a position.
struct LearnedHook : nn::AttentionHook {
  Variable table{randn({2, 5}), true};
  Variable attention_bias(const nn::AttentionSite& site, int64_t qf, int64_t T, int64_t kf, int64_t S) override {
    Tensor index = Tensor::empty({T * S});
    for (int64_t t = 0; t < T; ++t)
      for (int64_t s = 0; s < S; ++s)
        index.data()[t * S + s] = static_cast<real>(std::clamp<int64_t>((kf + s) - (qf + t), -2, 2) + 2);
    return reshape(index_select(table, 1, index), {site.num_heads, T, S});  // (NH, T, S)
  }
  Variable transform_heads(const nn::AttentionSite&, const Variable& x, int64_t first) override {
    Tensor scale = Tensor::empty({x.size(2), 1});
    for (int64_t p = 0; p < x.size(2); ++p) scale.data()[p] = static_cast<real>(1 + (first + p) % 3) / 2;
    return x * Variable(scale);
  }
};

}  // namespace

TEST_CASE("grad through a hook's bias and transform: the input, the attention's parameters and the bias table") {
  manual_seed(21);
  auto mha = std::make_shared<nn::MultiHeadAttention>(4, 2);
  auto hook = std::make_shared<LearnedHook>();
  mha->attach(hook, /*causal=*/true);
  const Tensor causal = nn::causal_mask(3);
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Variable>& x) { return mha->forward(x[0], x[0], x[0], Tensor(), causal).output; },
      {randn({2, 3, 4})});
  CHECK_MESSAGE(r.ok, r.message);
  std::vector<Variable> params = mha->parameters();
  params.push_back(hook->table);
  const Variable x(randn({2, 3, 4}));
  const GradcheckResult p = gradcheck_parameters([&] { return mha->forward(x, x, x, Tensor(), causal).output; }, params);
  CHECK_MESSAGE(p.ok, p.message);
}

TEST_CASE("grad through every registered positional encoding attached to self-attention, both ways and causal") {
  for (const std::string& name : nn::positional_encodings().names()) {
    for (bool causal : {false, true}) {
      CAPTURE(name);
      CAPTURE(causal);
      manual_seed(22);
      auto pe = nn::make_positional_encoding(name, nn::PositionalOptions(8, 16, 2));
      auto mha = std::make_shared<nn::MultiHeadAttention>(8, 2);
      mha->attach(pe, causal);
      const Tensor mask = causal ? nn::causal_mask(4) : Tensor();
      const GradcheckResult r = gradcheck(
          [&](const std::vector<Variable>& x) { return mha->forward(x[0], x[0], x[0], Tensor(), mask).output; },
          {randn({2, 4, 8})});
      CHECK_MESSAGE(r.ok, r.message);
      if (pe->parameters().empty()) continue;
      const Variable x(randn({2, 4, 8}));
      const GradcheckResult p =
          gradcheck_parameters([&] { return mha->forward(x, x, x, Tensor(), mask).output; }, pe->parameters());
      CHECK_MESSAGE(p.ok, p.message);
    }
  }
}

TEST_SUITE_END();
