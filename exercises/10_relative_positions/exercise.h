// exercises/10_relative_positions - relative position biases in self-attention (chapters 8-9).
//
// Sinusoidal encodings give each token its ABSOLUTE position; attention then has to work out
// distances itself. A relative scheme (Shaw et al. 2018; the scalar form of T5) adds to every
// logit of head h a learned number that depends only on the distance j - i from query i to key
// j, clipped to [-K, K]:
//   logits_h[i, j] = q_i . k_j / sqrt(HS) + w[h, clip(j - i, -K, K) + K]        w (NH, 2K + 1)
// Your part is the bias, for queries at positions query_first .. query_first + T - 1 and keys at
// key_first .. key_first + S - 1:
//   relative_bias(w, K, query_first, T, key_first, S) -> (NH, T, S)
// Positions are absolute, so that a decoder caching its keys (step t alone: query_first = t,
// T = 1, keys 0..t) gets row t of the whole sequence's table. w must receive a gradient: build
// a (T S) table of indices clip(j - i, -K, K) + K and gather columns of w with index_select (an
// autograd op), then shape the result.
// The plumbing is given: RelativePositions below is a positional encoding that adds nothing to
// the embeddings and hands your bias to attention (nn/transformer/attention_hook.h); exercise.cpp
// registers it as "relative", so nn::Transformer(...with_positional("relative")) uses it.
#pragma once

#include <cstdint>

#include "seqgrad.h"

seqgrad::Variable relative_bias(const seqgrad::Variable& w, int64_t K, int64_t query_first, int64_t T,
                                int64_t key_first, int64_t S);

// w (NH, 2K + 1), K = 4, starting at zero: attention starts as plain attention.
class RelativePositions : public seqgrad::nn::PositionalEncoding {
 public:
  static constexpr int64_t K = 4;
  explicit RelativePositions(const seqgrad::nn::PositionalOptions& o)
      : seqgrad::nn::PositionalEncoding(o.d_model, o.max_len) {
    w = register_parameter("w", seqgrad::zeros({o.num_heads, 2 * K + 1}));
  }
  std::string name() const override { return "RelativePositions"; }
  using seqgrad::nn::PositionalEncoding::forward;
  seqgrad::Variable forward(const seqgrad::Variable& x, int64_t offset) override {  // nothing added
    check_positions(x, offset);
    return x;
  }
  seqgrad::Variable attention_bias(const seqgrad::nn::AttentionSite&, int64_t query_first, int64_t T, int64_t key_first,
                                   int64_t S) override {
    return relative_bias(w, K, query_first, T, key_first, S);
  }
  seqgrad::Variable w;
};
