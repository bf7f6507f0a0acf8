// exercises/solutions/10_relative_positions/exercise.cpp - reference solution of exercise 10.
#include "exercise.h"

#include <algorithm>
#include <cmath>

using namespace seqgrad;

nn::AttentionResult relative_attention(const Variable& q, const Variable& k, const Variable& v, const Variable& bias,
                                       int64_t K, const Tensor& mask) {
  check(bias.dim() == 1 && bias.size(0) == 2 * K + 1, "relative_attention: expected a bias (", 2 * K + 1,
        ") for K = ", K, ", got ", bias.shape());
  const int64_t T = q.size(-2), S = k.size(-2);
  // The bucket of every (t, s) pair: clip(s - t, -K, K) + K, in [0, 2K].
  Tensor bucket = Tensor::empty({T * S});
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < S; ++s) bucket.data()[t * S + s] = static_cast<real>(std::clamp(s - t, -K, K) + K);
  const Variable table = reshape(index_select(bias, 0, bucket), {T, S});  // (T, S), differentiable in bias
  const Variable scores = matmul(q, k, false, /*trans_b=*/true) / std::sqrt(static_cast<real>(q.size(-1))) +
                          table;  // (..., T, S)
  nn::AttentionResult r;
  r.weights = nn::masked_softmax(scores, mask);  // (..., T, S)
  r.context = matmul(r.weights, v);              // (..., T, HS)
  return r;
}
// Absolute positions: the bias alone cannot tell "the first word" from "the fifth": every
// token sees the same pattern of distances around it. A model that needs absolute facts (the
// sentence start, the slot of a date) needs absolute positions too, unless the <bos> token or
// the causal mask lets it count from the start; for most translation the distances suffice.
