// nn/attention.h - attention: score functions, masked softmax, and the weighted sum.
//
// Attention is a soft dictionary lookup. A query is scored against every key; a softmax turns
// the scores into weights a_s >= 0 that sum to 1; the result is the weighted sum of the values,
// context = sum_s a_s v_s. In an encoder-decoder the query is the decoder state and the keys and
// values are the encoder states. The score function is the only thing the variants change:
//   dot        q . k                        general   q^T W k           scaled-dot  q . k / sqrt(H)
//   concat     v^T tanh(W [q; k])           additive  v^T tanh(W q + U k + b)   (Bahdanau)
//   cosine     q . k / (|q| |k|)            mlp       w2^T relu(W1 [q; k] + b1) + b2
//   location   (W q)_s: one row of W per source position, the keys only give S (Luong)
// Masks are Tensors where 1 marks a position that must NOT be attended (padding, the future);
// a masked position gets weight exactly 0, and a row with every position masked gets all-zero
// weights and zero gradients, never NaN. Read next: attention_seq2seq.h, then transformer.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/linear.h"
#include "nn/module.h"

namespace seqgrad::nn {

// ================================================================================================
// Masks (1 = masked out)

// (B, S): 1 at positions s >= lengths[b].
Tensor padding_mask(const std::vector<int64_t>& lengths, int64_t S);
// (T, T): 1 above the diagonal, so position t cannot see positions after t.
Tensor causal_mask(int64_t T);

// softmax over `axis` with masked positions removed: weight 0 where mask != 0 (mask broadcasts
// to scores). Implemented as masked_fill(-inf) then softmax, whose all--inf rows give zeros.
Variable masked_softmax(const Variable& scores, const Tensor& mask, int64_t axis = -1);

// ================================================================================================
// Score functions: query (B, H_q) or (B, T, H_q), keys (B, S, H_k) -> scores (B, S) or (B, T, S)

enum class ScoreKind { Dot, General, Concat, Additive, ScaledDot, Cosine, MLP, Location };
// "dot", "general", "concat", "additive", "scaled-dot", "cosine", "mlp", "location"
ScoreKind parse_score(const std::string& name);
std::string score_name(ScoreKind kind);

class AttentionScore : public Module {
 public:
  Variable forward(const Variable& query, const Variable& keys);
  ScoreKind kind;
  int64_t query_size, key_size;

 protected:
  AttentionScore(ScoreKind kind, int64_t query_size, int64_t key_size);
  // q (B, T, H_q), k (B, S, H_k) -> (B, T, S)
  virtual Variable score(const Variable& q, const Variable& k) = 0;
};

// Builds any score function. attention_size is the hidden width of concat, additive and mlp;
// max_positions the longest source the location score can score (it needs one).
std::shared_ptr<AttentionScore> make_score(ScoreKind kind, int64_t query_size, int64_t key_size,
                                           int64_t attention_size = 0, int64_t max_positions = 0);

// ================================================================================================
// The weighted sum

struct AttentionResult {
  Variable context;  // (B, H_v) or (B, T, H_v)
  Variable weights;  // (B, S) or (B, T, S), each row sums to 1 (or is all 0 if fully masked)
};

// c = sum_s a_s v_s: weights (B, S) or (B, T, S), values (B, S, H_v) -> (B, H_v) or (B, T, H_v).
// One batched matmul. Every weighted read of a set of vectors in seqgrad is this one function:
// attend below, the attention decoders, a memory read, DIN's and AFM's pooling.
Variable soft_context(const Variable& weights, const Variable& values);

// weights = masked_softmax(scores, mask), context = soft_context(weights, values).
// scores (B, S) or (B, T, S); values (B, S, H_v); mask (B, S) or undefined.
AttentionResult attend(const Variable& scores, const Variable& values, const Tensor& mask);

// softmax(q k^T / sqrt(HS) + masked) v for q (..., T, HS), k and v (..., S, HS); the mask
// broadcasts to (..., T, S). Returns the output (..., T, HS) and the weights (..., T, S).
// The Transformer's attention, with heads as one of the leading axes: (B, NH, T, HS).
AttentionResult scaled_dot_product_attention(const Variable& q, const Variable& k, const Variable& v,
                                             const Tensor& mask = Tensor());

}  // namespace seqgrad::nn
