// exercises/08_low_rank_score - a new score function: the general score with a low-rank W_a
// (chapter 7), registered by name so every attention model can use it.
//
// The general score e(q, k) = q^T W_a k learns a full (H_q, H_k) matrix. Factor it as
// W_a = U^T V with U (r, H_q) and V (r, H_k): r (H_q + H_k) numbers instead of H_q H_k, and
//   e(q, k) = (U q) . (V k)
// which is cheaper too: project the T queries and the S keys once each, then one dot product
// of length r per pair. LowRankScore is an nn::AttentionScore: its base class checks the
// shapes and turns one query (B, H_q) into T = 1 queries, so you write only `score`:
//   q (B, T, H_q), k (B, S, H_k) -> scores (B, T, S)
// Its parameters are two bias-free nn::Linear layers registered as "U" and "V" (checkpoint
// names "U.weight" and "V.weight"). exercise.cpp registers it as "lowrank", with its rank as an
// option of its own, so that an attention decoder takes it by name:
//   nn::AttentionSeq2SeqOptions(V, V).with_score("lowrank", nn::Settings().set("rank", 4))
// and `make seqgrad EXTRA=exercises/08_low_rank_score/exercise.cpp` puts it in the tool:
//   build/seqgrad train --task reverse --arch lstm-attn --attention lowrank --rank 4 --out m.safetensors
#pragma once

#include <memory>
#include <string>

#include "nn/attention/attention.h"
#include "seqgrad.h"

class LowRankScore : public seqgrad::nn::AttentionScore {
 public:
  // The rank r is the option "rank" (options.settings).
  explicit LowRankScore(const seqgrad::nn::ScoreOptions& options);
  LowRankScore(int64_t query_size, int64_t key_size, int64_t rank);
  std::string name() const override { return "LowRankScore"; }
  // q (B, T, H_q), k (B, S, H_k) -> (B, T, S)
  seqgrad::Variable score(const seqgrad::Variable& q, const seqgrad::Variable& k) override;

  int64_t rank;
  std::shared_ptr<seqgrad::nn::Linear> U, V;  // U (r, H_q), V (r, H_k)
};
