// exercises/solutions/10_relative_positions/exercise.cpp - reference solution of exercise 10.
#include "exercise.h"

#include <algorithm>

using namespace seqgrad;

Variable relative_bias(const Variable& w, int64_t K, int64_t query_first, int64_t T, int64_t key_first, int64_t S) {
  check(w.dim() == 2 && w.size(1) == 2 * K + 1, "relative_bias: expected w (NH, ", 2 * K + 1, ") for K = ", K, ", got ",
        w.shape());
  // The bucket of every (t, s) pair: clip(j - i, -K, K) + K in [0, 2K], with i and j absolute.
  Tensor bucket = Tensor::empty({T * S});
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < S; ++s)
      bucket.data()[t * S + s] = static_cast<real>(std::clamp((key_first + s) - (query_first + t), -K, K) + K);
  return reshape(index_select(w, 1, bucket), {w.size(0), T, S});  // (NH, T S) -> (NH, T, S), differentiable in w
}

// Given: the line that makes "relative" a positional encoding (nn/transformer/positional.h).
SEQGRAD_REGISTER_POSITIONAL(RelativePositions, "relative", "a learned bias per head and clipped distance (exercise 10)")

// Absolute positions: the bias alone cannot tell "the first word" from "the fifth": every
// token sees the same pattern of distances around it. A model that needs absolute facts (the
// sentence start, the slot of a date) needs absolute positions too, unless the <bos> token or
// the causal mask lets it count from the start; for most translation the distances suffice.
