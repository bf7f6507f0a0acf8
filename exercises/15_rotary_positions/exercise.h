// exercises/15_rotary_positions - rotary position embeddings, RoPE (chapter 9).
//
// Chapter 9 adds sinusoidal encodings to the embeddings, and exercise 11 shows that moving k
// positions rotates each pair of their features. RoFormer (Su et al., 2021) uses that rotation
// directly: instead of adding anything, it rotates the queries and the keys themselves, each
// pair (2i, 2i+1) of features at position p by the angle p w_i, w_i = 1 / 10000^(2i / C):
//   y[.., t, 2i]     = x[.., t, 2i] cos(p w_i) - x[.., t, 2i+1] sin(p w_i)        p = offset + t
//   y[.., t, 2i + 1] = x[.., t, 2i] sin(p w_i) + x[.., t, 2i+1] cos(p w_i)
// x, y (..., T, C) with C even, e.g. (B, NH, T, HS). Then q_m . k_n depends on m - n only: a
// rotation by m w and one by n w leave the angle (m - n) w between them.
// Write it as ONE op, make_result("rotary", ...), computing the angles in double as
// nn::sinusoidal_table does. The backward is short: what is the transpose of a rotation?
// An odd C throws std::invalid_argument.
// The plumbing is given: RotaryPositions below is a positional encoding that adds nothing to the
// embeddings and hands every head's queries and keys to your op (the hook's transform,
// nn/transformer/attention_hook.h), at their absolute positions: offset = the position of the
// first row. exercise.cpp registers it as "rope", so nn::Transformer(...with_positional("rope"))
// uses it, and a decoder caching its keys (rotated once, at their own positions) decodes as
// one that reruns the whole prefix.
#pragma once

#include <cstdint>

#include "seqgrad.h"

seqgrad::Variable rotary(const seqgrad::Variable& x, int64_t offset = 0);

class RotaryPositions : public seqgrad::nn::PositionalEncoding {
 public:
  explicit RotaryPositions(const seqgrad::nn::PositionalOptions& o) : seqgrad::nn::PositionalEncoding(o.d_model, o.max_len) {}
  std::string name() const override { return "RotaryPositions"; }
  using seqgrad::nn::PositionalEncoding::forward;
  seqgrad::Variable forward(const seqgrad::Variable& x, int64_t offset) override {  // nothing added
    check_positions(x, offset);
    return x;
  }
  // q or k (B, NH, L, HS) at positions first .. first + L - 1 -> rotated, the same shape.
  seqgrad::Variable transform_heads(const seqgrad::nn::AttentionSite&, const seqgrad::Variable& x,
                                    int64_t first) override {
    return rotary(x, first);
  }
};
