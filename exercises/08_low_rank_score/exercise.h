// exercises/08_low_rank_score - a new score function: the general score with a low-rank W_a
// (chapter 7).
//
// The general score e(q, k) = q^T W_a k learns a full (H_q, H_k) matrix. Factor it as
// W_a = U^T V with U (r, H_q) and V (r, H_k): r (H_q + H_k) numbers instead of H_q H_k, and
//   e(q, k) = (U q) . (V k)
// which is cheaper too: project the T queries and the S keys once each, then one dot product
// of length r per pair. Write it as a Module whose parameters are two bias-free nn::Linear
// layers registered as "U" and "V" (checkpoint names "U.weight" and "V.weight"):
//   query (B, H_q), keys (B, S, H_k)    -> scores (B, S)
//   query (B, T, H_q), keys (B, S, H_k) -> scores (B, T, S)
// A query or keys of another width, or another batch size, throws std::invalid_argument.
#pragma once

#include <memory>
#include <string>

#include "nn/attention.h"
#include "seqgrad.h"

class LowRankScore : public seqgrad::nn::Module {
 public:
  LowRankScore(int64_t query_size, int64_t key_size, int64_t rank);
  std::string name() const override { return "LowRankScore"; }
  seqgrad::Variable forward(const seqgrad::Variable& query, const seqgrad::Variable& keys);

  int64_t query_size, key_size, rank;
  std::shared_ptr<seqgrad::nn::Linear> U, V;  // U (r, H_q), V (r, H_k)
};
