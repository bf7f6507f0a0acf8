// nn/recommenders/afm.h - the attentional factorization machine (AFM, Xiao et al. 2017): attention over
// pairwise feature interactions, for recommendation and click prediction.
//
// A recommender sees an example as F categorical fields (user, item, category, hour, ...), each
// with an embedding v_i of K numbers. A factorization machine (FM) models every pair of fields
// by the element-wise product v_i * v_j and adds them all up with equal weight. AFM lets the
// model decide which pairs matter: a small network scores each interaction, a softmax over the
// F(F-1)/2 pairs turns the scores into weights, and the weighted sum is projected to a number:
//   p_ij = v_i * v_j                                   (B, P, K)   P = F(F-1)/2, pairs i < j
//   e_ij = h^T relu(W p_ij + b)                        (B, P)      W (A, K), b (A), h (A)
//   a    = softmax over the pairs of e                 (B, P)
//   y    = p^T sum_{i<j} a_ij p_ij                     (B)         p (K)
// In attention terms the pairs are both keys and values, and there is no query: the score
// depends on the interaction alone (like a learned "importance" of each pair). This layer is
// the interaction term only; a model adds a bias and per-feature weights (examples/12_recommenders).
// What it is not: the paper's dropout and L2 on the attention network. Read next: nn/attention/attention.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/core/linear.h"
#include "nn/core/module.h"

namespace seqgrad::nn {

// The pairs (i, j), i < j, of F fields in the order AFM lists them:
// (0,1), (0,2), ..., (0,F-1), (1,2), ..., (F-2,F-1).
std::vector<std::pair<int64_t, int64_t>> field_pairs(int64_t F);

struct AFMResult {
  Variable output;   // y (B)
  Variable weights;  // a (B, P), each row sums to 1, pairs in field_pairs order
};

class AttentionalFactorizationMachine : public Module {
 public:
  // embed_dim K (the fields' embedding width), attention_size A (the scoring network's width).
  AttentionalFactorizationMachine(int64_t embed_dim, int64_t attention_size);
  std::string name() const override { return "AttentionalFactorizationMachine"; }
  std::string extra_repr() const override;

  // fields (B, F, K), F >= 2 -> y (B) and the attention weights a (B, P)
  AFMResult forward_with_weights(const Variable& fields);
  Variable forward(const Variable& fields) override { return forward_with_weights(fields).output; }

  int64_t embed_dim, attention_size;    // K, A
  std::shared_ptr<Linear> attention;    // W (A, K), b (A)
  std::shared_ptr<Linear> score;        // h (1, A), no bias (a constant would cancel in the softmax)
  std::shared_ptr<Linear> projection;   // p (1, K), no bias (the model's own bias stands for it)
};

}  // namespace seqgrad::nn
