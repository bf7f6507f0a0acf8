// exercises/12_greedy_by_hand/check.cpp - make -C exercises check EX=12
#include <doctest/doctest.h>

#include "exercise.h"

using namespace seqgrad;

namespace {
nn::Transformer small_model() {
  return nn::Transformer(nn::TransformerOptions(12, 12).with_d_model(16).with_nhead(2).with_num_layers(1)
                             .with_dim_feedforward(32).with_dropout(real(0.1)));
}

// Is `out` what greedy decoding with a minimum length gives for source row b? One
// teacher-forced decoder run on <bos> out gives the logits at every position; token t + 1 must
// be the best at position t (<eos> excluded while t < min_len), and a sequence that ended
// before max_len must have <eos> as the best at its last position.
bool is_greedy_with_min_len(nn::Transformer& model, const Tensor& src, int64_t b, int64_t length,
                            const std::vector<int64_t>& out, int64_t max_len, int64_t min_len) {
  NoGradGuard no_grad;
  const int64_t n = static_cast<int64_t>(out.size());
  Tensor tgt_in = Tensor::empty({1, n + 1});
  tgt_in.data()[0] = data::Vocab::kBos;
  for (int64_t t = 0; t < n; ++t) tgt_in.data()[t + 1] = static_cast<real>(out[static_cast<size_t>(t)]);
  const Tensor logits = model.logits(slice(src, 0, b, b + 1), {length}, tgt_in, {}).value();  // (1, n + 1, V)
  const int64_t V = logits.size(2);
  auto best = [&](int64_t t, bool may_stop) {
    int64_t id = -1;
    for (int64_t v = 0; v < V; ++v)
      if ((v != data::Vocab::kEos || may_stop) && (id < 0 || logits.at({0, t, v}) > logits.at({0, t, id}))) id = v;
    return id;
  };
  for (int64_t t = 0; t < n; ++t)
    if (out[static_cast<size_t>(t)] != best(t, t >= min_len)) return false;
  return n == max_len || (n >= min_len && best(n, true) == data::Vocab::kEos);
}
}  // namespace

TEST_CASE("12: the same tokens as nn::greedy_decode, stopped by max_len") {
  manual_seed(12);
  nn::Transformer model = small_model();
  model.generator->bias.value().at({data::Vocab::kEos}) = -100;  // never finishes: max_len stops it
  const Tensor src = from_vector({5, 6, 7, 8, 9, 10, 11, 0}, {2, 4});
  const std::vector<int64_t> lengths{4, 3};
  const auto mine = my_greedy_decode(model, src, lengths, 6);
  const auto ref = nn::greedy_decode(model, src, lengths, nn::DecodeOptions().with_max_len(6)).tokens;
  REQUIRE(mine.size() == 2);
  CHECK(mine[0].size() == 6);
  CHECK(mine == ref);
}

TEST_CASE("12: sequences stop at <eos>, each at its own step") {
  manual_seed(13);
  nn::Transformer model = small_model();
  // An <eos> bias that makes the outputs end at different steps (here 0, 1 and 7 tokens).
  model.generator->bias.value().at({data::Vocab::kEos}) -= real(0.1);
  const Tensor src = from_vector({5, 6, 7, 8, 9, 10, 11, 5, 6, 7, 7, 6, 5, 4, 9, 9, 8, 6, 11, 10}, {5, 4});
  const std::vector<int64_t> lengths{4, 4, 2, 3, 4};
  const auto mine = my_greedy_decode(model, src, lengths, 12);
  const auto ref = nn::greedy_decode(model, src, lengths, nn::DecodeOptions().with_max_len(12)).tokens;
  CHECK(mine == ref);
  for (const auto& seq : mine)
    for (int64_t id : seq) CHECK(id != data::Vocab::kEos);
}

TEST_CASE("12: decoding leaves the model's mode alone and records no graph") {
  manual_seed(14);
  nn::Transformer model = small_model();
  model.train();
  (void)my_greedy_decode(model, from_vector({5, 6}, {1, 2}), {2}, 3);
  CHECK(model.is_training());
  // With dropout on, two decodings would differ; in eval mode they are equal.
  const auto a = my_greedy_decode(model, from_vector({5, 6, 7}, {1, 3}), {3}, 8);
  const auto b = my_greedy_decode(model, from_vector({5, 6, 7}, {1, 3}), {3}, 8);
  CHECK(a == b);
  CHECK(a == nn::greedy_decode(model, from_vector({5, 6, 7}, {1, 3}), {3}, nn::DecodeOptions().with_max_len(8)).tokens);
}

TEST_CASE("12: with a minimum length, every output says at least min_len tokens, each the best allowed") {
  manual_seed(15);
  nn::Transformer model = small_model();
  model.eval();
  // A model that likes to stop: most outputs end after 0 to 2 tokens.
  model.generator->bias.value().at({data::Vocab::kEos}) += real(1.5);
  const Tensor src = from_vector({5, 6, 7, 8, 9, 10, 11, 5, 6, 7, 7, 6, 5, 4, 9, 9, 8, 6, 11, 10}, {5, 4});
  const std::vector<int64_t> lengths{4, 4, 2, 3, 4};
  const auto free = nn::greedy_decode(model, src, lengths, nn::DecodeOptions().with_max_len(10)).tokens;
  const auto mine = my_greedy_decode(model, src, lengths, 10, /*min_len=*/4);
  REQUIRE(mine.size() == 5);
  bool changed = false;
  for (int64_t b = 0; b < 5; ++b) {
    CAPTURE(b);
    // The verifier itself, on the library's own output without a minimum length:
    CHECK(is_greedy_with_min_len(model, src, b, lengths[static_cast<size_t>(b)], free[static_cast<size_t>(b)], 10, 0));
    CHECK(mine[static_cast<size_t>(b)].size() >= 4);
    CHECK(is_greedy_with_min_len(model, src, b, lengths[static_cast<size_t>(b)], mine[static_cast<size_t>(b)], 10, 4));
    changed = changed || mine[static_cast<size_t>(b)] != free[static_cast<size_t>(b)];
  }
  CHECK(changed);  // the constraint mattered for this model
  // min_len above max_len: max_len wins.
  for (const auto& seq : my_greedy_decode(model, src, lengths, 3, /*min_len=*/5)) CHECK(seq.size() == 3);
}
