// exercises/solutions/12_greedy_by_hand/exercise.cpp - reference solution of exercise 12.
#include "exercise.h"

using namespace seqgrad;

std::vector<std::vector<int64_t>> my_greedy_decode(nn::Transformer& model, const Tensor& src,
                                                   const std::vector<int64_t>& src_lengths, int64_t max_len,
                                                   int64_t min_len) {
  NoGradGuard no_grad;                      // no graph: nothing here is trained
  const bool was_training = model.is_training();
  model.eval();                             // no dropout
  const int64_t B = src.size(0);
  const int64_t kBos = data::Vocab::kBos, kEos = data::Vocab::kEos;

  const nn::TransformerMemory memory = model.encode(src, src_lengths);
  Tensor prefix = full({B, 1}, static_cast<real>(kBos));  // (B, t)
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(B));
  std::vector<bool> done(static_cast<size_t>(B), false);
  for (int64_t t = 1; t <= max_len; ++t) {
    // Every prefix position again (no cache): (B, t, V), of which only the last row is new.
    const Tensor logits = model.decode(prefix, memory).logits.value();
    const Tensor last = slice(logits, 1, t - 1, t);  // (B, 1, V)
    const int64_t V = last.size(2);
    Tensor next = Tensor::empty({B, 1});
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      // The argmax of row b, skipping <eos> while the output is shorter than min_len.
      const real* row = last.data() + b * V;
      const bool may_stop = static_cast<int64_t>(out[static_cast<size_t>(b)].size()) >= min_len;
      int64_t best = -1;
      for (int64_t id = 0; id < V; ++id)
        if ((id != kEos || may_stop) && (best < 0 || row[id] > row[best])) best = id;
      next.data()[b] = static_cast<real>(best);
      if (!done[static_cast<size_t>(b)]) {
        if (best == kEos) done[static_cast<size_t>(b)] = true;
        else out[static_cast<size_t>(b)].push_back(best);
      }
      all_done = all_done && done[static_cast<size_t>(b)];
    }
    if (all_done) break;
    prefix = concat({prefix, next}, 1);  // (B, t + 1)
  }
  if (was_training) model.train();
  return out;
}
// Why uncached decoding is slower, and more so for long outputs: step t runs the decoder on all
// t prefix positions, so T tokens cost 1 + 2 + .. + T = T (T + 1) / 2 position-passes, where
// the cache projects only the newest token (T passes; its attention still reads t keys). For
// 40 tokens that is 820 against 40 positions through the feed-forward and projection layers.
