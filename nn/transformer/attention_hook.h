// nn/transformer/attention_hook.h - how positions reach inside attention: a bias on the logits
// and a transform of the queries and keys, per head.
//
// Added to the embeddings, a position is mixed into every feature before attention sees it
// (positional.h). Three other schemes act inside attention instead, where the pair (query i,
// key j) meets:
//   a bias on the logits      logits_h[i, j] = q_i . k_j / sqrt(HS) + bias_h(i, j)
//     ALiBi (Press et al., 2022): bias_h(i, j) = -m_h (i - j), a fixed slope per head
//     T5 (Raffel et al., 2020):   bias_h(i, j) = w_h[bucket(j - i)], learned per bucket and head
//   a transform of q and k    logits_h[i, j] = R(i) q_i . R(j) k_j / sqrt(HS)
//     rotary (Su et al., 2021): R(p) rotates each pair of features by an angle p theta_f
// Rotary is not a bias: R(i) q . R(j) k = q . R(j - i) k depends on the content of q and k, so
// no table of numbers (H, T, S) could stand for it. A hook therefore has both doors. A layer
// asks for each separately, with absolute positions, so that a cached decoder (step t alone:
// query position t, keys 0..t) gets exactly the numbers the whole sequence would (row t).
// Keys are transformed once, at their own positions, before they enter the cache.
// Any object may be a hook; the Transformer's positional encoding is one (positional.h), and
// the Transformer attaches it to every self-attention layer (MultiHeadAttention::attach).
// Both doors return autograd Variables, so a learned bias or transform trains with the rest.
// Read first: multihead_attention.h. Read next: positional.h.
#pragma once

#include <cstdint>

#include "autograd/variable.h"

namespace seqgrad::nn {

// Where an attention layer is, for a hook whose numbers depend on it.
struct AttentionSite {
  int64_t num_heads = 1, head_dim = 1;  // NH, HS
  // The layer's queries see no later key (a decoder's or language model's self-attention):
  // a unidirectional scheme (T5's decoder buckets) may use it; so may a cheaper bias.
  bool causal = false;
};

class AttentionHook {
 public:
  virtual ~AttentionHook() = default;

  // The bias added to every head's scaled logits, for queries at positions
  // query_first .. query_first + T - 1 and keys at key_first .. key_first + S - 1:
  //   -> (NH, T, S), or an undefined Variable for none (then attention runs exactly as without).
  virtual Variable attention_bias(const AttentionSite& site, int64_t query_first, int64_t T, int64_t key_first,
                                  int64_t S) {
    (void)site, (void)query_first, (void)T, (void)key_first, (void)S;
    return Variable();
  }

  // Queries or keys in heads, x (B, NH, L, HS), at positions first .. first + L - 1
  //   -> (B, NH, L, HS), transformed before any dot product. The same function serves both.
  // Returning x itself (the default) changes nothing.
  virtual Variable transform_heads(const AttentionSite& site, const Variable& x, int64_t first) {
    (void)site, (void)first;
    return x;
  }
};

}  // namespace seqgrad::nn
