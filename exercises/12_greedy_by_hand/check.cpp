// exercises/12_greedy_by_hand/check.cpp - make -C exercises check EX=12
#include <doctest/doctest.h>

#include "exercise.h"

using namespace seqgrad;

namespace {
nn::Transformer small_model() {
  return nn::Transformer(nn::TransformerOptions(12, 12).with_d_model(16).with_nhead(2).with_num_layers(1)
                             .with_dim_feedforward(32).with_dropout(real(0.1)));
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
