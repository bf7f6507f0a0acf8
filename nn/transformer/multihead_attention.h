// nn/transformer/multihead_attention.h - multi-head attention, the Transformer's one attention layer.
//
// Queries, keys and values are projected NH times into heads of size HS = C / NH, each head
// runs scaled dot-product attention (nn/attention/attention.h) on its own, and the heads' outputs are
// joined and projected back to C. Parameter names, shapes and initialisation are those of
// torch.nn.MultiheadAttention (batch_first=True), so its weights load unchanged. A KVCache keeps
// projected keys and values between decoding steps. A hook (attention_hook.h) may add a bias to
// each head's logits and transform the queries and keys; that is how ALiBi, T5 buckets and
// rotary positions get in. What this is not: masks other than 0/1, separate key/value widths
// (kdim/vdim), or bias_k/add_zero_attn. Read next: attention_hook.h, positional.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "nn/core/linear.h"
#include "nn/core/module.h"
#include "nn/transformer/attention_hook.h"

namespace seqgrad::nn {

// ================================================================================================
// The key/value cache of incremental decoding

// Keys and values already projected and split into heads, kept from one decoding step to the
// next. In self-attention each step appends its own position, so step t projects one token
// instead of t; in encoder-decoder attention the memory is projected once, at the first step.
struct KVCache {
  Variable k, v;  // (B, NH, S, HS) each; undefined before the first step
  bool empty() const { return !k.defined(); }
  int64_t length() const { return empty() ? 0 : k.size(2); }  // S
  // Keep rows index[0], index[1], ... of the batch axis (beam search reorders its beams).
  void reorder(const Tensor& index);
};

// How forward() uses a cache: Append the new keys/values (self-attention), or project the
// given keys/values once and then reuse them (Static, for the encoder's memory).
enum class CacheMode { Append, Static };

// ================================================================================================
// MultiHeadAttention

struct MultiHeadAttentionResult {
  Variable output;   // (B, T, C)
  Variable weights;  // (B, NH, T, S) per head, before dropout; undefined unless need_weights
};

class MultiHeadAttention : public Module {
 public:
  // embed_dim C must be divisible by num_heads NH. dropout applies to the attention weights.
  MultiHeadAttention(int64_t embed_dim, int64_t num_heads, real dropout = 0, bool bias = true);
  std::string name() const override { return "MultiHeadAttention"; }
  std::string extra_repr() const override;

  // For each head h (W_q^h = rows h*HS .. (h+1)*HS of the first C rows of in_proj_weight):
  //   q^h = query W_q^h^T + b_q^h        (B, T, HS)      likewise k^h, v^h from key, value (B, S, HS)
  //   head_h = softmax(q^h k^h^T / sqrt(HS) + mask) v^h                          (B, T, HS)
  // With a hook attached (attach below): q^h, k^h are first hook.transform_heads(...) at their
  // positions, and hook.attention_bias(...) (NH, T, S) is added to the logits before the mask.
  //   output = [head_0 ... head_NH-1] W_o^T + b_o                                (B, T, C)
  // query (B, T, C), key and value (B, S, C). key_padding_mask (B, S) and attn_mask (T, S) hold
  // 1 where attention is forbidden; a position masked by either one gets weight exactly 0.
  //   auto r = mha.forward(x, x, x, padding_mask(lengths, S));          // self-attention
  MultiHeadAttentionResult forward(const Variable& query, const Variable& key, const Variable& value,
                                   const Tensor& key_padding_mask = Tensor(), const Tensor& attn_mask = Tensor(),
                                   bool need_weights = false);

  // The same with a cache (incremental decoding). Append: key/value hold only the new
  // positions; their projections are added to the cache and the queries attend to all of it
  // (S = cached + new; masks must cover all S). Static: on the first call key/value are
  // projected and stored, on later calls they are ignored (may be undefined) and the cache is
  // used. Usually called with no graph being recorded (NoGradGuard). With a hook, Append
  // only: the new queries and keys are at positions cached .. cached + T - 1.
  MultiHeadAttentionResult forward(const Variable& query, const Variable& key, const Variable& value,
                                   KVCache& cache, CacheMode mode, const Tensor& key_padding_mask = Tensor(),
                                   const Tensor& attn_mask = Tensor(), bool need_weights = false);

  // Positions inside attention: `hook` is asked for a bias and a transform of q and k at every
  // call (attention_hook.h); causal says whether this layer's queries see no later key. The
  // hook is shared, not owned as a submodule: its parameters keep their names in the module
  // that registered it (a Transformer's pos_encoding). Null: no hook, the plain layer.
  void attach(std::shared_ptr<AttentionHook> hook, bool causal);
  AttentionSite site() const { return {num_heads, head_dim, causal}; }

  int64_t embed_dim, num_heads, head_dim;  // C, NH, HS
  real dropout;
  Variable in_proj_weight;  // (3C, C): W_q, W_k, W_v stacked
  Variable in_proj_bias;    // (3C), undefined without bias
  std::shared_ptr<Linear> out_proj;  // W_o (C, C), b_o (C)
  std::shared_ptr<AttentionHook> hook;  // null unless attached
  bool causal = false;

 private:
  // x (B, L, C) -> part p (0 = q, 1 = k, 2 = v) of the projection, in heads (B, NH, L, HS)
  Variable project(const Variable& x, int64_t part) const;
  // x (B, L, C) at positions first .. -> part p in heads, transformed by the hook if any
  Variable project_at(const Variable& x, int64_t part, int64_t first) const;
  // Queries (at positions query_first ..) and full keys/values (from position 0) in heads ->
  // the result, masks combined and checked, the hook's bias added if it gives one.
  MultiHeadAttentionResult attend_heads(const Variable& q, const Variable& k, const Variable& v,
                                        const Tensor& key_padding_mask, const Tensor& attn_mask, bool need_weights,
                                        int64_t query_first);
};

}  // namespace seqgrad::nn
