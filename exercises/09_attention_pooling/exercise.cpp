// exercises/09_attention_pooling/exercise.cpp - your solution goes here.
#include "exercise.h"

using namespace seqgrad;

PoolResult attention_pool(const Variable& behaviours, const Variable& candidate, const std::vector<int64_t>& lengths,
                          nn::Linear& W1, nn::Linear& W2) {
  // TODO(exercise 09):
  //   1. broadcast the candidate to every position: (B, H) -> (B, S, H)  (unsqueeze, then
  //      an op that broadcasts, e.g. c * ones, or concat after expanding)
  //   2. features [b; c; b * c] (B, S, 3H) -> W1 -> relu -> W2 -> (B, S, 1) -> (B, S)
  //   3. nn::masked_softmax with nn::padding_mask(lengths, S); the weighted sum with nn::soft_context
  (void)candidate;
  (void)lengths;
  (void)W1;
  (void)W2;
  const int64_t B = behaviours.size(0), S = behaviours.size(1);
  return {mean(behaviours, 1), Variable(full({B, S}, real(1) / static_cast<real>(S)))};
}
