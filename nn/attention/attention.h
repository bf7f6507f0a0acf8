// nn/attention/attention.h - attention: score functions, masked softmax, and the weighted sum.
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
// weights and zero gradients, never NaN. Read next: attention_seq2seq.h, then nn/transformer/transformer.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/core/linear.h"
#include "nn/core/module.h"
#include "nn/core/registry.h"

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

// A score's sizes, and its own options (those it declares when it registers, below).
struct ScoreOptions {
  ScoreOptions(int64_t query_size, int64_t key_size) : query_size(query_size), key_size(key_size) {}
  int64_t query_size, key_size;  // H_q, H_k
  int64_t attention_size = 0;    // concat, additive, mlp: the hidden width A (0: H_q)
  int64_t max_positions = 0;     // location: the longest source it can score
  Settings settings;             // the score's own options by key ("rank": 16); defaults filled in

  ScoreOptions& with_attention_size(int64_t v) { attention_size = v; return *this; }
  ScoreOptions& with_max_positions(int64_t v) { max_positions = v; return *this; }
  ScoreOptions& with_settings(Settings v) { settings = std::move(v); return *this; }
};

// What every score shares: the shape checks, and 2-D queries as 1-step 3-D ones.
class AttentionScore : public Module {
 public:
  Variable forward(const Variable& query, const Variable& keys);
  // Whether a position's score depends on its key (it does for every score but location, which
  // reads the query alone and takes from the keys only how many there are). Local attention
  // scores only its window's keys when it does, and the whole source when it does not.
  virtual bool compares_keys() const { return true; }
  int64_t query_size, key_size;

 protected:
  explicit AttentionScore(const ScoreOptions& options);
  // q (B, T, H_q), k (B, S, H_k) -> (B, T, S)
  virtual Variable score(const Variable& q, const Variable& k) = 0;
};

// ================================================================================================
// The registry of scores: "dot", "general", "concat", "additive", "scaled-dot", "cosine", "mlp",
// "location", and whatever else registers (nn/core/registry.h).

struct ScoreEntry {
  std::string name, help;
  std::function<std::shared_ptr<AttentionScore>(const ScoreOptions&)> make;
  std::vector<Option> options;  // the score's own options, beyond ScoreOptions' sizes
};
Registry<ScoreEntry>& scores();

// Builds the score registered as `name`, its own options' missing values set to their defaults.
std::shared_ptr<AttentionScore> make_score(const std::string& name, const ScoreOptions& options);
// The same, for the common case: attention_size is the hidden width of concat, additive and
// mlp (0: query_size); max_positions the longest source the location score can score.
std::shared_ptr<AttentionScore> make_score(const std::string& name, int64_t query_size, int64_t key_size,
                                           int64_t attention_size = 0, int64_t max_positions = 0);

// One line in a score's own file registers it: Class is built from a ScoreOptions; options
// (optional) lists the Options it declares.
//   SEQGRAD_REGISTER_SCORE(DotScore, "dot", "q . k");
#define SEQGRAD_REGISTER_SCORE(Class, name, help, ...)                                                          \
  SEQGRAD_REGISTER(::seqgrad::nn::scores(),                                                                      \
                   ::seqgrad::nn::ScoreEntry{name, help,                                                         \
                                             [](const ::seqgrad::nn::ScoreOptions& o)                            \
                                                 -> std::shared_ptr<::seqgrad::nn::AttentionScore> {             \
                                               return std::make_shared<Class>(o);                                \
                                             },                                                                  \
                                             std::vector<::seqgrad::nn::Option>{__VA_ARGS__}})

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
//   dropout_p     dropout on the weights before they weigh v (the weights returned are those
//                 before it); as torch's scaled_dot_product_attention, pass 0 when evaluating
//   need_weights  false: the weights are not returned (undefined), nor assembled
//   query_block   when T is at least 4 of these, the queries are cut into min(8, T / query_block)
//                 blocks of equal size (the last may be shorter), and each block is scored only
//                 against the keys its rows can see: with a causal mask, the blocks of scores
//                 above the diagonal, wholly masked, are never computed. The result is one
//                 block's within rounding (to the bit in the forward while S <= 256); with
//                 dropout, each block draws its own, so the same in distribution only. 0: always
//                 one block.
constexpr int64_t kAttentionQueryBlock = 32;
AttentionResult scaled_dot_product_attention(const Variable& q, const Variable& k, const Variable& v,
                                             const Tensor& mask = Tensor(), real dropout_p = 0,
                                             bool need_weights = true, int64_t query_block = kAttentionQueryBlock);

}  // namespace seqgrad::nn
