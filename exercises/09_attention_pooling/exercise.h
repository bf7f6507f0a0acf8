// exercises/09_attention_pooling - attention beyond translation: the Deep Interest Network's
// attention pooling for recommendation (chapters 7 and 14).
//
// A user's history is a sequence of behaviour embeddings b_1..b_S (items clicked), of
// different lengths per user. To score a candidate ad c, DIN pools the history with weights
// that depend on the candidate: a history of hiking boots matters for a tent, not for a phone.
// Its "activation unit" is a small MLP on each (behaviour, candidate) pair:
//   e_s = W2( relu( W1 [b_s; c; b_s * c] ) )          W1: Linear(3H, A), W2: Linear(A, 1)
//   a   = softmax over the user's real behaviours (padding masked out)      (B, S)
//   u   = sum_s a_s b_s                                                     (B, H)
// (The paper leaves the weights unnormalised to keep the "intensity" of interest, and so does
// nn::DINActivationUnit; here you normalise them with a masked softmax.) This is also the
// "many-to-one" shape of chapter 5: a whole sequence pooled into one vector.
#pragma once

#include <vector>

#include "nn/attention/attention.h"
#include "seqgrad.h"

struct PoolResult {
  seqgrad::Variable pooled;   // u (B, H)
  seqgrad::Variable weights;  // a (B, S), each row sums to 1, 0 at padding
};

// behaviours (B, S, H), candidate (B, H), lengths (B) with 1 <= lengths[b] <= S.
PoolResult attention_pool(const seqgrad::Variable& behaviours, const seqgrad::Variable& candidate,
                          const std::vector<int64_t>& lengths, seqgrad::nn::Linear& W1, seqgrad::nn::Linear& W2);
