// exercises/08_location_score - a new score function: Luong's location-based score (chapter 7).
//
// Every score in nn/attention.cpp compares the query with each key. Luong et al. (2015) also
// tried a score that ignores the keys entirely and predicts the alignment from the decoder
// state alone:   e_t = W_a h_t   (one number per source POSITION, up to max_len)
// For a source of S <= max_len positions, the scores are the first S of those numbers:
//   query (B, H_q)    -> scores (B, S)
//   query (B, T, H_q) -> scores (B, T, S)
// keys (B, S, H_k) only supply B and S. S > max_len throws std::invalid_argument.
// W is an nn::Linear(H_q, max_len) registered as "W" (so the checkpoint name is "W.weight").
#pragma once

#include <memory>
#include <string>

#include "nn/attention.h"
#include "seqgrad.h"

class LocationScore : public seqgrad::nn::Module {
 public:
  LocationScore(int64_t query_size, int64_t max_len);
  std::string name() const override { return "LocationScore"; }
  seqgrad::Variable forward(const seqgrad::Variable& query, const seqgrad::Variable& keys);

  int64_t query_size, max_len;
  std::shared_ptr<seqgrad::nn::Linear> W;
};
