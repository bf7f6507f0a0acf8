// exercises/solutions/09_attention_pooling/exercise.cpp - reference solution of exercise 09.
#include "exercise.h"

using namespace seqgrad;

PoolResult attention_pool(const Variable& behaviours, const Variable& candidate, const std::vector<int64_t>& lengths,
                          nn::Linear& W1, nn::Linear& W2) {
  check(behaviours.dim() == 3 && candidate.dim() == 2 && candidate.size(0) == behaviours.size(0) &&
            candidate.size(1) == behaviours.size(2),
        "attention_pool: expected behaviours (B, S, H) and a candidate (B, H), got ", behaviours.shape(), " and ",
        candidate.shape());
  const int64_t B = behaviours.size(0), S = behaviours.size(1), H = behaviours.size(2);
  // The candidate beside every behaviour: (B, 1, H) broadcast against ones (B, S, H).
  const Variable c = unsqueeze(candidate, 1) * Variable(ones({B, S, H}));           // (B, S, H)
  const Variable features = concat({behaviours, c, behaviours * c}, 2);             // (B, S, 3H)
  const Variable e = squeeze(W2.forward(relu(W1.forward(features))), 2);            // (B, S)
  PoolResult r;
  r.weights = nn::masked_softmax(e, nn::padding_mask(lengths, S));                  // (B, S), 0 at padding
  r.pooled = nn::soft_context(r.weights, behaviours);                               // sum_s a_s b_s (B, H)
  return r;
}
