// nn/recommenders/din.h - the Deep Interest Network's activation unit (DIN, Zhou et al. 2018): a user's
// history pooled with weights that depend on the candidate item.
//
// A user's history is a sequence of behaviour embeddings b_1..b_S (items clicked), and a
// recommender must score one candidate c. A history of hiking boots matters for a tent and not
// for a phone, so DIN weights each behaviour by a small network that sees the pair:
//   x_s = [b_s; c; b_s - c; b_s * c]                   (B, S, 4H)   the pair and how they differ
//   w_s = W3 sigmoid(W2 sigmoid(W1 x_s + b1) + b2) + b3 (B, S)       hidden widths A1, A2
//   u   = sum_s w_s b_s   over the real behaviours      (B, H)
// Unlike the attention of chapter 7, the weights are not normalised by a softmax: the paper
// keeps them raw so that u also says how much of the history matches (a history full of tents
// gives a larger u than one tent among phones). The sigmoid layers of 80 and 40 units are the
// paper's published code. What it is not: the paper's Dice activation or its mini-batch aware
// regularisation. Read first: nn/attention/attention.h; then examples/12_recommenders.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/core/linear.h"
#include "nn/core/module.h"

namespace seqgrad::nn {

struct DINOptions {
  explicit DINOptions(int64_t embed_dim) : embed_dim(embed_dim) {}
  int64_t embed_dim;                 // H: behaviours and candidate are (.., H)
  int64_t hidden1 = 80, hidden2 = 40;  // A1, A2

  DINOptions& with_hidden(int64_t a1, int64_t a2) { hidden1 = a1; hidden2 = a2; return *this; }
};

struct DINResult {
  Variable pooled;   // u (B, H)
  Variable weights;  // w (B, S): raw, unnormalised; 0 at padding
};

class DINActivationUnit : public Module {
 public:
  explicit DINActivationUnit(const DINOptions& options);
  std::string name() const override { return "DINActivationUnit"; }
  std::string extra_repr() const override;
  // behaviours (B, S, H), candidate (B, H), lengths (B) with 1 <= lengths[b] <= S (empty: all S)
  DINResult forward(const Variable& behaviours, const Variable& candidate, const std::vector<int64_t>& lengths = {});

  DINOptions options;
  std::shared_ptr<Linear> W1, W2, W3;
};

}  // namespace seqgrad::nn
