// tests/nn/learns_to_reverse.h - the "it learns" run the attention encoder-decoders share: a
// few hundred Adam steps of teacher forcing on encoded pairs, then greedy decoding of the first
// 200 pairs, scored by exact match. Used by the attention decoders' and GNMT's tests.
#pragma once

#include <cstdint>
#include <vector>

#include "data/batch.h"
#include "nn/decoding/decoding.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "tests/test_util.h"

namespace seqgrad::testing {

// Trains `model` (forward(src, lengths, tgt_in).logits, and the decoding interface) for `steps`
// batches of 32 (lr 0.01, gradients clipped to norm 1), then returns how many of enc's first
// 200 pairs it writes exactly, decoding at most max_len tokens.
template <class Model>
int exact_after_training(Model& model, const data::EncodedPairs& enc, int64_t steps, int64_t max_len) {
  nn::Adam opt(model.parameters(), nn::AdamOptions(real(0.01)));
  std::vector<int64_t> lengths;
  for (const auto& s : enc.src) lengths.push_back(static_cast<int64_t>(s.size()));
  int64_t step = 0;
  for (uint64_t epoch = 0; step < steps; ++epoch)
    for (const auto& idx : data::make_batches(lengths, 32, epoch)) {
      if (++step > steps) break;
      const data::Batch b = enc.batch(idx);
      opt.zero_grad();
      nn::cross_entropy(model.forward(b.src, b.src_lengths, b.tgt_in).logits, b.tgt_out,
                        nn::CrossEntropyOptions().with_ignore_index(0))
          .backward();
      nn::clip_grad_norm(model.parameters(), 1);
      opt.step();
    }
  model.eval();
  std::vector<size_t> first(200);
  for (size_t i = 0; i < first.size(); ++i) first[i] = i;
  const data::Batch test = enc.batch(first);
  const nn::DecodeResult d = nn::greedy_decode(model, test.src, test.src_lengths, nn::DecodeOptions().with_max_len(max_len));
  int correct = 0;
  for (size_t i = 0; i < first.size(); ++i) correct += d.tokens[i] == enc.tgt[i];
  return correct;
}

}  // namespace seqgrad::testing
