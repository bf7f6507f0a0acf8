// nn/transformer/multihead_attention.cpp - projections into heads, masks, attention per head, the join.
#include "nn/transformer/multihead_attention.h"

#include <cmath>

#include "nn/attention/attention.h"
#include "nn/core/init.h"
#include "tensor/check.h"
#include "tensor/elementwise.h"

namespace seqgrad::nn {

// ================================================================================================
// KVCache

void KVCache::reorder(const Tensor& index) {
  if (empty()) return;
  k = index_select(k, 0, index);  // (B', NH, S, HS)
  v = index_select(v, 0, index);
}

// ================================================================================================
// Parameters: torch.nn.MultiheadAttention's names and initialisation

MultiHeadAttention::MultiHeadAttention(int64_t c, int64_t nh, real p, bool bias)
    : embed_dim(c), num_heads(nh), head_dim(nh > 0 ? c / nh : 0), dropout(p) {
  check(c > 0 && nh > 0, "MultiHeadAttention: expected positive embed_dim and num_heads, got ", c, " and ", nh);
  check(c % nh == 0, "MultiHeadAttention: expected embed_dim divisible by num_heads, got ", c, " and ", nh);
  check(p >= 0 && p <= 1, "MultiHeadAttention: expected a dropout probability in [0, 1], got ", p);
  // xavier_uniform_ over the whole (3C, C) matrix (fan_in = C, fan_out = 3C), biases 0, and
  // out_proj a Linear with its usual weight but a zero bias, exactly as PyTorch does.
  Tensor w = Tensor::empty({3 * c, c});
  init::xavier_uniform_(w);
  in_proj_weight = register_parameter("in_proj_weight", w);
  if (bias) in_proj_bias = register_parameter("in_proj_bias", zeros({3 * c}));
  out_proj = register_module("out_proj", std::make_shared<Linear>(c, c, bias));
  if (bias) out_proj->bias.value().fill_(0);
}

void MultiHeadAttention::attach(std::shared_ptr<AttentionHook> h, bool is_causal) {
  hook = std::move(h);
  causal = is_causal;
}

std::string MultiHeadAttention::extra_repr() const {
  return cat("embed_dim=", embed_dim, ", num_heads=", num_heads, ", dropout=", dropout,
             ", bias=", in_proj_bias.defined() ? "true" : "false");
}

// ================================================================================================
// Projection into heads

// [docs:project]
Variable MultiHeadAttention::project(const Variable& x, int64_t part) const {
  const int64_t B = x.size(0), L = x.size(1), C = embed_dim;
  // Rows part*C .. (part+1)*C of the stacked matrix are W_q, W_k or W_v.
  const Variable W = slice(in_proj_weight, 0, part * C, (part + 1) * C);  // (C, C)
  const Variable b = in_proj_bias.defined() ? slice(in_proj_bias, 0, part * C, (part + 1) * C) : Variable();
  const Variable y = linear(x, W, b);  // x W^T + b: (B, L, C)
  // Head h owns features h*HS .. (h+1)*HS: split the last axis, then bring heads forward.
  return permute(reshape(y, {B, L, num_heads, head_dim}), {0, 2, 1, 3});  // (B, NH, L, HS)
}
// [docs:end]

// [docs:project_at]
// The hook sees each projection once, at absolute positions: keys are transformed before they
// enter a cache, so a cached key is never transformed twice, and step t's query meets every
// key where the whole sequence would have put it.
Variable MultiHeadAttention::project_at(const Variable& x, int64_t part, int64_t first) const {
  const Variable heads = project(x, part);  // (B, NH, L, HS)
  return hook && part < 2 ? hook->transform_heads(site(), heads, first) : heads;
}
// [docs:end]

// ================================================================================================
// Attention per head, with both masks

MultiHeadAttentionResult MultiHeadAttention::attend_heads(const Variable& q, const Variable& k, const Variable& v,
                                                          const Tensor& key_padding_mask, const Tensor& attn_mask,
                                                          bool need_weights, int64_t query_first) {
  const int64_t B = q.size(0), T = q.size(2), S = k.size(2);
  check(!key_padding_mask.defined() || key_padding_mask.shape() == Shape{B, S},
        "MultiHeadAttention: expected key_padding_mask of shape (B, S) = ", Shape{B, S}, ", got ",
        key_padding_mask.shape());
  check(!attn_mask.defined() || attn_mask.shape() == Shape{T, S}, "MultiHeadAttention: expected attn_mask of shape (T, S) = ",
        Shape{T, S}, ", got ", attn_mask.shape());

  // [docs:mask]
  // One mask for every head: 1 where either mask forbids the pair (t, s).
  //   key_padding_mask (B, S) -> (B, 1, 1, S)      attn_mask (T, S)      both -> (B, 1, T, S)
  Tensor mask;
  if (key_padding_mask.defined()) mask = key_padding_mask.reshape({B, 1, 1, S});
  if (attn_mask.defined()) mask = mask.defined() ? maximum(mask, attn_mask) : attn_mask;
  // [docs:end]

  // [docs:bias]
  // A hook's bias (attention_hook.h), for queries at query_first .. and keys at 0 .. S - 1:
  //   logits = q k^T / sqrt(HS) + bias        (B, NH, T, S) + (NH, T, S)
  // then the masked softmax and the weighted sum, as scaled_dot_product_attention does in one
  // block. Without a bias, that function runs as before, to the bit.
  const Variable bias = hook ? hook->attention_bias(site(), query_first, T, 0, S) : Variable();
  if (bias.defined()) {
    check(bias.shape() == Shape{num_heads, T, S}, "MultiHeadAttention: expected an attention bias of shape (NH, T, S) = ",
          Shape{num_heads, T, S}, ", got ", bias.shape());
    const Variable logits = matmul(q, k, false, /*trans_b=*/true) * (1 / std::sqrt(static_cast<real>(head_dim))) + bias;
    const Variable weights = masked_softmax(logits, mask);  // (B, NH, T, S)
    const real p = is_training() ? dropout : 0;
    const Variable context = matmul(seqgrad::dropout(weights, p, p > 0), v);  // (B, NH, T, HS)
    Variable joined = reshape(permute(context, {0, 2, 1, 3}), {B, T, embed_dim});
    return {out_proj->forward(joined), need_weights ? weights : Variable()};
  }
  // [docs:end]

  // [docs:heads]
  // Dropout on the weights while training; with a causal mask, the blocks of wholly masked
  // scores are skipped (query_block in nn/attention/attention.h).
  const AttentionResult r = scaled_dot_product_attention(q, k, v, mask, is_training() ? dropout : 0, need_weights);
  const Variable& context = r.context;  // (B, NH, T, HS)
  // Join the heads: (B, NH, T, HS) -> (B, T, NH, HS) -> (B, T, C), then W_o.
  Variable joined = reshape(permute(context, {0, 2, 1, 3}), {B, T, embed_dim});
  return {out_proj->forward(joined), r.weights};
  // [docs:end]
}

// ================================================================================================
// forward

namespace {

void check_inputs(const MultiHeadAttention& m, const Variable& query, const Variable& key, const Variable& value,
                  bool need_kv) {
  const int64_t C = m.embed_dim;
  check(query.defined() && query.dim() == 3 && query.size(2) == C, "MultiHeadAttention: expected query of shape (B, T, ",
        C, "), got ", query.defined() ? query.shape() : Shape{});
  if (!need_kv) return;
  const int64_t B = query.size(0);
  check(key.defined() && key.dim() == 3 && key.size(0) == B && key.size(2) == C,
        "MultiHeadAttention: expected key of shape (", B, ", S, ", C, "), got ", key.defined() ? key.shape() : Shape{});
  check(value.defined() && value.shape() == key.shape(), "MultiHeadAttention: expected value of the key's shape ",
        key.shape(), ", got ", value.defined() ? value.shape() : Shape{});
}

}  // namespace

MultiHeadAttentionResult MultiHeadAttention::forward(const Variable& query, const Variable& key, const Variable& value,
                                                     const Tensor& key_padding_mask, const Tensor& attn_mask,
                                                     bool need_weights) {
  check_inputs(*this, query, key, value, /*need_kv=*/true);
  // Without a cache, queries and keys both start at position 0.
  return attend_heads(project_at(query, 0, 0), project_at(key, 1, 0), project(value, 2), key_padding_mask, attn_mask,
                      need_weights, 0);
}

// [docs:cached_forward]
MultiHeadAttentionResult MultiHeadAttention::forward(const Variable& query, const Variable& key, const Variable& value,
                                                     KVCache& cache, CacheMode mode, const Tensor& key_padding_mask,
                                                     const Tensor& attn_mask, bool need_weights) {
  const bool reuse = mode == CacheMode::Static && !cache.empty();
  check_inputs(*this, query, key, value, /*need_kv=*/!reuse);
  check(cache.empty() || cache.k.size(0) == query.size(0), "MultiHeadAttention: the cache holds ", cache.empty() ? 0 : cache.k.size(0),
        " sequences but the query has ", query.size(0), "; reorder the cache when the batch changes");
  check(!hook || mode == CacheMode::Append, "MultiHeadAttention: a positional hook needs the positions of the keys; "
        "attach it to self-attention (CacheMode::Append), not to attention over a fixed memory (CacheMode::Static)");
  // Appending, the new positions follow the cached ones: queries and new keys start there.
  const int64_t first = mode == CacheMode::Append ? cache.length() : 0;
  if (!reuse) {
    Variable k = project_at(key, 1, first), v = project(value, 2);  // (B, NH, S_new, HS)
    if (mode == CacheMode::Append && !cache.empty()) {
      k = concat({cache.k, k}, 2);  // (B, NH, S_cached + S_new, HS)
      v = concat({cache.v, v}, 2);
    }
    cache.k = k;
    cache.v = v;
  }
  return attend_heads(project_at(query, 0, first), cache.k, cache.v, key_padding_mask, attn_mask, need_weights, first);
}
// [docs:end]

}  // namespace seqgrad::nn
