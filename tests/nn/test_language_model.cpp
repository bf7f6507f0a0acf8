// tests/nn/test_language_model.cpp - the decoder-only Transformer (nn/transformer/language_model.h):
// names and shapes, the causal mask, decoding from a prompt as teacher forcing scores it, and
// that it learns to continue a pattern.
#include <algorithm>
#include <set>

#include "io/special_tokens.h"
#include "nn/decoding/decoding.h"
#include "nn/optim/optim.h"
#include "nn/transformer/language_model.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

namespace {

nn::TransformerLMOptions tiny(int64_t vocab) {
  return nn::TransformerLMOptions(vocab).with_d_model(8).with_nhead(2).with_num_layers(2).with_dim_feedforward(16)
      .with_dropout(0).with_max_len(24);
}

}  // namespace

TEST_CASE("TransformerLM: the encoder-decoder's names less the source side; logits (B, T, V)") {
  manual_seed(1);
  nn::TransformerLM lm(tiny(10));
  std::set<std::string> names;
  for (const auto& [n, p] : lm.named_parameters()) names.insert(n);
  for (const char* want : {"tgt_embed.weight", "decoder.layers.0.self_attn.in_proj_weight", "decoder.layers.1.linear2.bias",
                           "decoder.norm.weight", "generator.weight", "generator.bias"})
    CHECK_MESSAGE(names.count(want) == 1, want);
  for (const std::string& n : names) {  // no source, so no encoder and no attention to it
    CHECK(n.find("src_embed") == std::string::npos);
    CHECK(n.find("multihead_attn") == std::string::npos);
    CHECK(n.find("norm3") == std::string::npos);
  }
  CHECK(lm.forward(from_vector({1, 5, 6, 1, 7, 0}, {2, 3})).shape() == Shape{2, 3, 10});
  CHECK_FALSE(lm.reads_source());
  nn::TransformerLM tied(nn::TransformerLMOptions(tiny(10)).with_tie_embeddings(true));
  CHECK(tied.num_parameters() == lm.num_parameters() - 10 * 8);
  CHECK_THROWS_WITH_AS(lm.forward(zeros({1, 25})), "TransformerLM: 25 positions, more than max_len 24", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::TransformerLM(nn::TransformerLMOptions(4)),
                       "TransformerLM: expected a vocabulary larger than the 4 special tokens, got 4", std::invalid_argument);
}

TEST_CASE("TransformerLM: position t sees positions 0..t only (the causal mask)") {
  manual_seed(2);
  nn::TransformerLM lm(tiny(10));
  lm.eval();
  const Tensor a = from_vector({1, 5, 6, 7, 8}, {1, 5}), b = from_vector({1, 5, 6, 9, 4}, {1, 5});  // differ from t = 3
  const Tensor la = lm.forward(a).value(), lb = lm.forward(b).value();
  CHECK(slice(la, 1, 0, 3).to_vector() == slice(lb, 1, 0, 3).to_vector());
  CHECK(slice(la, 1, 3, 4).to_vector() != slice(lb, 1, 3, 4).to_vector());
}

TEST_CASE("TransformerLM: a step after <bos> and the prompt gives the teacher-forced log-probabilities") {
  manual_seed(3);
  nn::TransformerLM lm(tiny(10));
  lm.eval();
  NoGradGuard no_grad;
  // Two prompts, the shorter right-padded: rows <bos> 5 6 and <bos> 7.
  const Tensor prompts = from_vector({5, 6, 7, 0}, {2, 2});
  std::unique_ptr<nn::DecoderState> state = lm.start(prompts, {2, 1}, {});
  const Tensor first = lm.step(*state, full({2}, static_cast<real>(kBosId)));  // (2, V)
  const Tensor second = lm.step(*state, from_vector({8, 9}, {2}));             // after 8 and after 9
  const Tensor whole0 = log_softmax(lm.forward(from_vector({1, 5, 6, 8}, {1, 4})).value(), -1);  // (1, 4, V)
  const Tensor whole1 = log_softmax(lm.forward(from_vector({1, 7, 9}, {1, 3})).value(), -1);
  CHECK(allclose(slice(first, 0, 0, 1).reshape({10}), slice(whole0, 1, 2, 3).reshape({10})));
  CHECK(allclose(slice(second, 0, 0, 1).reshape({10}), slice(whole0, 1, 3, 4).reshape({10})));
  CHECK(allclose(slice(first, 0, 1, 2).reshape({10}), slice(whole1, 1, 1, 2).reshape({10})));
  CHECK(allclose(slice(second, 0, 1, 2).reshape({10}), slice(whole1, 1, 2, 3).reshape({10})));
  CHECK_THROWS_WITH_AS(lm.start(from_vector({12}, {1, 1}), {}, {}),
                       "TransformerLM: prompt token id 12 is out of range for vocab 10", std::invalid_argument);
}

// The text: "5 6 7 8 9 5 6 7 8 9 ..." from any start, 8 tokens then <eos>. After training, greedy
// decoding continues any prompt in the cycle, and from <bos> alone writes a whole line of it.
TEST_CASE("it learns: a tiny language model continues a cycle of tokens from a prompt") {
  manual_seed(4);
  nn::TransformerLM lm(tiny(10));
  nn::Adam opt(lm.parameters(), nn::AdamOptions(real(0.01)));
  const int64_t B = 5, T = 9;  // tgt_in <bos> y1..y8, tgt_out y1..y8 <eos>
  Tensor in = zeros({B, T}), target = zeros({B, T});
  for (int64_t b = 0; b < B; ++b) {
    in.data()[b * T] = kBosId;
    for (int64_t t = 0; t < 8; ++t) {
      const real y = static_cast<real>(5 + (b + t) % 5);
      target.data()[b * T + t] = y;
      in.data()[b * T + t + 1] = y;
    }
    target.data()[b * T + 8] = kEosId;
  }
  const auto ce = CrossEntropyOptions().with_ignore_index(0);
  real first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    opt.zero_grad();
    const Variable loss = lm.training_loss(Tensor(), {}, in, {}, target, ce);
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.value().item();
  }
  CHECK(last < first / 10);
  const nn::DecodeResult r = nn::greedy_decode(lm, from_vector({7, 8}, {1, 2}), {}, nn::DecodeOptions().with_max_len(6));
  CHECK(r.tokens[0] == std::vector<int64_t>{9, 5, 6, 7, 8, 9});  // the prompt 7 8 goes on: 9 5 6 ...
}
