// tests/nn/test_grad_transformer.cpp - gradcheck through multi-head attention (with both masks,
// and with dropout on the weights), the learned positional encoding, encoder and decoder layers
// (post-norm and pre-norm), a whole tiny Transformer's loss and a tiny language model's (pre-norm,
// tied embeddings). Compiled in float32 and float64.
#include "nn/transformer/language_model.h"
#include "nn/transformer/transformer.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("transformer grad float64");
#else
TEST_SUITE_BEGIN("transformer grad float32");
#endif

namespace {

// The FFN's ReLU has a kink; float32's default step (0.01) can straddle it, so use a smaller one
// there. float64 keeps the strict defaults.
GradcheckOptions relu_safe() {
  GradcheckOptions o;
  if (sizeof(real) == 4) o.with_eps(1e-3).with_atol(3e-2).with_rtol(3e-2);
  return o;
}

void check_params(const std::function<Variable()>& fn, nn::Module& m, const GradcheckOptions& o = GradcheckOptions()) {
  const GradcheckResult r = gradcheck_parameters(fn, m.parameters(), o);
  CHECK_MESSAGE(r.ok, r.message);
}

}  // namespace

TEST_CASE("grad through multi-head attention: inputs and parameters, key padding + causal masks") {
  manual_seed(1);
  auto mha = std::make_shared<nn::MultiHeadAttention>(4, 2);
  for (auto& p : mha->parameters()) p.value().copy_(randn(p.shape()) * real(0.5));  // non-zero biases too
  const Tensor kpm = nn::padding_mask({3, 2}, 3), causal = nn::causal_mask(3);
  // Self-attention: one input used as query, key and value.
  CHECK_GRAD([mha, kpm, causal](const Vars& v) { return mha->forward(v[0], v[0], v[0], kpm, causal).output; },
             {randn({2, 3, 4})});
  // Cross-attention: query, key and value separately; the weights as an output too.
  CHECK_GRAD([mha, kpm](const Vars& v) { return mha->forward(v[0], v[1], v[2], kpm).output; },
             {randn({2, 2, 4}), randn({2, 3, 4}), randn({2, 3, 4})});
  CHECK_GRAD([mha, kpm](const Vars& v) { return mha->forward(v[0], v[1], v[1], kpm, Tensor(), true).weights; },
             {randn({2, 2, 4}), randn({2, 3, 4})});
  const Variable q(randn({2, 2, 4})), kv(randn({2, 3, 4}));
  check_params([&] { return mha->forward(q, kv, kv, kpm).output; }, *mha);
}

TEST_CASE("grad through multi-head attention with dropout on the weights, and with a fully masked row") {
  manual_seed(2);
  auto mha = std::make_shared<nn::MultiHeadAttention>(4, 2, /*dropout=*/real(0.3));
  mha->train();  // gradcheck replays the same dropout mask on every call
  const Tensor kpm = from_vector({0, 0, 1, 1, 1, 1}, {2, 3});  // the second sequence sees nothing
  CHECK_GRAD([mha, kpm](const Vars& v) { return mha->forward(v[0], v[1], v[1], kpm).output; },
             {randn({2, 2, 4}), randn({2, 3, 4})});
}

TEST_CASE("grad through the learned positional encoding") {
  manual_seed(3);
  nn::LearnedPositionalEncoding pe(4, 6);
  const Variable x(randn({2, 3, 4}));
  check_params([&] { return pe.forward(x, 2) * pe.forward(x, 1); }, pe);
}

TEST_CASE("grad through encoder and decoder layers, post-norm and pre-norm") {
  for (bool norm_first : {false, true}) {
    CAPTURE(norm_first);
    manual_seed(4);
    const auto o = nn::TransformerLayerOptions(4, 2).with_dim_feedforward(6).with_dropout(0).with_norm_first(norm_first);
    auto enc = std::make_shared<nn::TransformerEncoderLayer>(o);
    const Tensor kpm = nn::padding_mask({3, 2}, 3);
    CHECK_GRAD([enc, kpm](const Vars& v) { return enc->forward(v[0], Tensor(), kpm); }, {randn({2, 3, 4})}, relu_safe());
    const Variable x(randn({2, 3, 4}));
    check_params([&] { return enc->forward(x, Tensor(), kpm); }, *enc, relu_safe());

    auto dec = std::make_shared<nn::TransformerDecoderLayer>(o);
    const Tensor causal = nn::causal_mask(2);
    CHECK_GRAD([dec, causal, kpm](const Vars& v) { return dec->forward(v[0], v[1], causal, Tensor(), Tensor(), kpm); },
               {randn({2, 2, 4}), randn({2, 3, 4})}, relu_safe());
    const Variable y(randn({2, 2, 4}));
    check_params([&] { return dec->forward(y, x, causal, Tensor(), Tensor(), kpm); }, *dec, relu_safe());
  }
}

TEST_CASE("grad through a tiny decoder-only language model's loss: causal blocks, pre-norm, tied embeddings") {
  manual_seed(6);
  nn::TransformerLM lm(nn::TransformerLMOptions(7).with_d_model(4).with_nhead(2).with_num_layers(1)
                           .with_dim_feedforward(6).with_dropout(0).with_norm_first(true).with_tie_embeddings(true));
  const Tensor tgt_in = from_vector({1, 6, 4, 1, 5, 0}, {2, 3}), tgt_out = from_vector({6, 4, 2, 5, 2, 0}, {2, 3});
  const auto ce = CrossEntropyOptions().with_ignore_index(0);
  check_params([&] { return lm.training_loss(Tensor(), {}, tgt_in, {}, tgt_out, ce); }, lm, relu_safe());
}

TEST_CASE("grad through a whole tiny Transformer's label-smoothed loss") {
  manual_seed(5);
  nn::Transformer model(nn::TransformerOptions(7, 7).with_d_model(4).with_nhead(2).with_num_layers(1)
                            .with_dim_feedforward(6).with_dropout(0).with_share_embeddings(true));
  const Tensor src = from_vector({4, 5, 6, 5, 4, 0}, {2, 3}), tgt_in = from_vector({1, 6, 4, 1, 5, 0}, {2, 3});
  const Tensor tgt_out = from_vector({6, 4, 2, 5, 2, 0}, {2, 3});
  const auto ce = CrossEntropyOptions().with_ignore_index(0).with_label_smoothing(real(0.1));
  check_params([&] { return cross_entropy(model.forward(src, {3, 2}, tgt_in), tgt_out, ce); }, model, relu_safe());
}

TEST_SUITE_END();
