// nn/transformer/transformer.h - the Transformer: encoder and decoder layers, their stacks, the full model.
//
// "Attention Is All You Need" without recurrence: every position of the source attends to every
// other one (self-attention), then a position-wise feed-forward network; the decoder adds a
// causal mask and attention over the encoder's output. Each sub-layer is wrapped in a residual
// connection and LayerNorm, after it (post-norm, the paper) or before it (pre-norm, norm_first).
// Names follow torch.nn.TransformerEncoderLayer / DecoderLayer / Transformer, so their state
// dicts load here. What this is not: activations other than ReLU, or fused kernels (every piece
// is composed from autograd ops). Read next: nn/decoding/decoding.h (greedy, beam search, the KV cache).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/attention/attention.h"
#include "nn/core/dropout.h"
#include "nn/core/embedding.h"
#include "nn/decoding/encoder_decoder.h"
#include "nn/core/layernorm.h"
#include "nn/core/linear.h"
#include "nn/transformer/multihead_attention.h"
#include "nn/transformer/positional.h"

namespace seqgrad::nn {

// ================================================================================================
// Layers

struct TransformerLayerOptions {
  TransformerLayerOptions(int64_t d_model, int64_t nhead) : d_model(d_model), nhead(nhead) {}
  int64_t d_model, nhead;             // C, NH
  int64_t dim_feedforward = 2048;     // the FFN's hidden width (4C in the paper)
  real dropout = real(0.1);           // after attention weights, inside the FFN, on each sub-layer
  real layer_norm_eps = real(1e-5);
  bool norm_first = false;            // pre-norm: x + f(norm(x)) instead of norm(x + f(x))

  TransformerLayerOptions& with_dim_feedforward(int64_t v) { dim_feedforward = v; return *this; }
  TransformerLayerOptions& with_dropout(real v) { dropout = v; return *this; }
  TransformerLayerOptions& with_layer_norm_eps(real v) { layer_norm_eps = v; return *this; }
  TransformerLayerOptions& with_norm_first(bool v) { norm_first = v; return *this; }
};

// Self-attention, add & norm, feed-forward, add & norm:
//   post-norm   x = norm1(x + SA(x));        x = norm2(x + FF(x))
//   pre-norm    x = x + SA(norm1(x));        x = x + FF(norm2(x))
//   FF(x) = linear2(dropout(relu(linear1(x))))        (each sub-layer output also dropped out)
class TransformerEncoderLayer : public Module {
 public:
  explicit TransformerEncoderLayer(const TransformerLayerOptions& options);
  std::string name() const override { return "TransformerEncoderLayer"; }
  std::string extra_repr() const override;
  // src (B, S, C) -> (B, S, C). src_mask (S, S), src_key_padding_mask (B, S), 1 = masked.
  Variable forward(const Variable& src, const Tensor& src_mask, const Tensor& src_key_padding_mask = Tensor());
  Variable forward(const Variable& src) override { return forward(src, Tensor(), Tensor()); }
  // The feed-forward block alone: (..., C) -> (..., C)
  Variable feed_forward(const Variable& x);

  TransformerLayerOptions options;
  std::shared_ptr<MultiHeadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2;  // C -> dim_feedforward -> C
  std::shared_ptr<Dropout> dropout;          // inside the FFN
  std::shared_ptr<LayerNorm> norm1, norm2;
  std::shared_ptr<Dropout> dropout1, dropout2;  // on the sub-layer outputs
};

// What a decoder layer keeps between decoding steps: its own past keys/values and the
// projected encoder memory.
struct DecoderLayerCache {
  KVCache self_attn, cross_attn;
};

struct DecoderLayerResult {
  Variable output;         // (B, T, C)
  Variable cross_weights;  // (B, NH, T, S) encoder-decoder attention; undefined unless asked
};

// Masked self-attention, encoder-decoder attention, feed-forward, each with add & norm:
//   post-norm   x = norm1(x + SA(x, causal));  x = norm2(x + MHA(x, memory));  x = norm3(x + FF(x))
//   pre-norm    x = x + SA(norm1(x), causal);  x = x + MHA(norm2(x), memory);  x = x + FF(norm3(x))
// Queries of the second attention come from the decoder, keys and values from the memory.
class TransformerDecoderLayer : public Module {
 public:
  explicit TransformerDecoderLayer(const TransformerLayerOptions& options);
  std::string name() const override { return "TransformerDecoderLayer"; }
  std::string extra_repr() const override;
  // tgt (B, T, C), memory (B, S, C) -> (B, T, C). tgt_mask (T, T) (usually causal_mask(T)),
  // memory_mask (T, S), tgt_key_padding_mask (B, T), memory_key_padding_mask (B, S).
  Variable forward(const Variable& tgt, const Variable& memory, const Tensor& tgt_mask = Tensor(),
                   const Tensor& memory_mask = Tensor(), const Tensor& tgt_key_padding_mask = Tensor(),
                   const Tensor& memory_key_padding_mask = Tensor());
  // The general form: with a cache (tgt holds only the new positions, tgt_mask is (T_new,
  // cached + T_new) or undefined), and the encoder-decoder weights on request.
  DecoderLayerResult forward(const Variable& tgt, const Variable& memory, DecoderLayerCache* cache,
                             const Tensor& tgt_mask, const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                             const Tensor& memory_key_padding_mask, bool need_weights);
  Variable feed_forward(const Variable& x);

  TransformerLayerOptions options;
  std::shared_ptr<MultiHeadAttention> self_attn, multihead_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<LayerNorm> norm1, norm2, norm3;
  std::shared_ptr<Dropout> dropout1, dropout2, dropout3;
};

// ================================================================================================
// Stacks

// N encoder layers (layers.0 ... layers.N-1), then an optional final LayerNorm ("norm"), which
// pre-norm needs: otherwise the last residual sum reaches the output un-normalised.
class TransformerEncoder : public Module {
 public:
  TransformerEncoder(const TransformerLayerOptions& layer, int64_t num_layers, bool final_norm = true);
  std::string name() const override { return "TransformerEncoder"; }
  // src (B, S, C) -> (B, S, C)
  Variable forward(const Variable& src, const Tensor& mask, const Tensor& src_key_padding_mask = Tensor());
  Variable forward(const Variable& src) override { return forward(src, Tensor(), Tensor()); }

  std::shared_ptr<ModuleList<TransformerEncoderLayer>> layers;
  std::shared_ptr<LayerNorm> norm;  // null without final_norm
};

// Every layer's cache, and how many target positions have been decoded so far.
struct DecoderCache {
  std::vector<DecoderLayerCache> layers;
  int64_t length = 0;
  // Keep rows index[0], index[1], ... of the batch in every layer (beam search).
  void reorder(const Tensor& index);
};

struct DecoderResult {
  Variable output;                     // (B, T, C)
  std::vector<Variable> cross_weights;  // per layer (B, NH, T, S); empty unless asked
};

class TransformerDecoder : public Module {
 public:
  TransformerDecoder(const TransformerLayerOptions& layer, int64_t num_layers, bool final_norm = true);
  std::string name() const override { return "TransformerDecoder"; }
  // tgt (B, T, C), memory (B, S, C) -> (B, T, C); masks as in TransformerDecoderLayer.
  Variable forward(const Variable& tgt, const Variable& memory, const Tensor& tgt_mask = Tensor(),
                   const Tensor& memory_mask = Tensor(), const Tensor& tgt_key_padding_mask = Tensor(),
                   const Tensor& memory_key_padding_mask = Tensor());
  // With a cache (may be null; it is sized on first use) and the weights on request.
  DecoderResult forward(const Variable& tgt, const Variable& memory, DecoderCache* cache, const Tensor& tgt_mask,
                        const Tensor& tgt_key_padding_mask, const Tensor& memory_key_padding_mask, bool need_weights);

  std::shared_ptr<ModuleList<TransformerDecoderLayer>> layers;
  std::shared_ptr<LayerNorm> norm;
};

// ================================================================================================
// The encoder-decoder model


struct TransformerOptions {
  TransformerOptions(int64_t src_vocab, int64_t tgt_vocab) : src_vocab(src_vocab), tgt_vocab(tgt_vocab) {}
  int64_t src_vocab, tgt_vocab;
  int64_t d_model = 64, nhead = 4, num_encoder_layers = 2, num_decoder_layers = 2, dim_feedforward = 256;
  real dropout = real(0.1);
  bool norm_first = false;
  bool share_embeddings = false;  // one table for both sides (needs src_vocab == tgt_vocab)
  bool tie_embeddings = false;    // the generator's weight is the target embedding table (V, C)
  std::string positional = "sinusoidal";  // a registered positional encoding (positional.h)
  Settings positional_settings;           // its options' values (missing ones: their defaults)
  int64_t max_len = 256;  // longest sequence the positional encoding covers

  TransformerOptions& with_d_model(int64_t v) { d_model = v; return *this; }
  TransformerOptions& with_nhead(int64_t v) { nhead = v; return *this; }
  TransformerOptions& with_num_encoder_layers(int64_t v) { num_encoder_layers = v; return *this; }
  TransformerOptions& with_num_decoder_layers(int64_t v) { num_decoder_layers = v; return *this; }
  TransformerOptions& with_num_layers(int64_t v) { num_encoder_layers = num_decoder_layers = v; return *this; }
  TransformerOptions& with_dim_feedforward(int64_t v) { dim_feedforward = v; return *this; }
  TransformerOptions& with_dropout(real v) { dropout = v; return *this; }
  TransformerOptions& with_norm_first(bool v) { norm_first = v; return *this; }
  TransformerOptions& with_share_embeddings(bool v) { share_embeddings = v; return *this; }
  TransformerOptions& with_tie_embeddings(bool v) { tie_embeddings = v; return *this; }
  TransformerOptions& with_positional(std::string v) { positional = std::move(v); return *this; }
  TransformerOptions& with_positional_settings(Settings v) { positional_settings = std::move(v); return *this; }
  TransformerOptions& with_max_len(int64_t v) { max_len = v; return *this; }
  TransformerLayerOptions layer() const;
};

// The encoder's output and the source padding mask every decoder step needs.
struct TransformerMemory {
  Variable memory;          // (B, S, C)
  Tensor key_padding_mask;  // (B, S), 1 at padding
};

struct TransformerStep {
  Variable logits;                      // (B, T_new, V)
  std::vector<Variable> cross_weights;  // per decoder layer (B, NH, T_new, S); empty unless asked
};

// Embeddings (times sqrt(C)) + positional encoding -> encoder; the same for the target ->
// decoder (causal) reading the memory -> Linear to V logits. The positional encoding is also
// the hook (attention_hook.h) of every self-attention layer, the decoder's as causal; not of
// the encoder-decoder attention, whose keys are the source's positions, not the target's. As torch.nn.Transformer, the
// encoder and decoder stacks end in a LayerNorm. Token id 0 is <pad> (io/special_tokens.h).
class Transformer : public Module, public EncoderDecoder {
 public:
  explicit Transformer(const TransformerOptions& options);
  std::string name() const override { return "Transformer"; }

  // Teacher forcing: src (B, S), tgt_in (B, T) = <bos> y1 .. -> logits (B, T, V). Right-padded
  // targets need no mask of their own: the causal mask already hides later (padded) positions
  // from every real one; pass tgt_lengths to mask them anyway.
  Variable forward(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                   const std::vector<int64_t>& tgt_lengths = {});

  // The three stages, for decoding (nn/decoding/decoding.h):
  TransformerMemory encode(const Tensor& src, const std::vector<int64_t>& src_lengths);
  // tgt_in (B, T) from position 0 -> logits (B, T, V); the cross-attention weights on request.
  TransformerStep decode(const Tensor& tgt_in, const TransformerMemory& memory, const std::vector<int64_t>& tgt_lengths = {},
                         bool need_weights = false);
  // The decoder stack's output before the vocabulary projection: (B, T, C).
  DecoderResult decoder_states(const Tensor& tgt_in, const TransformerMemory& memory,
                               const std::vector<int64_t>& tgt_lengths = {}, bool need_weights = false);
  // The next positions only: tokens (B, T_new) at positions cache.length .. -> (B, T_new, V),
  // reading and extending the cache. Each step costs T_new positions, not the whole prefix.
  TransformerStep decode_step(const Tensor& tokens, const TransformerMemory& memory, DecoderCache& cache,
                              bool need_weights = false);

  // The decoding interface (nn/decoding/encoder_decoder.h). The state holds the memory and, with
  // use_cache, the decoder's keys and values of every step so far (else the prefix, rerun
  // whole each step); the attention recorded is every decoder layer's cross-attention.
  Variable logits(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                  const std::vector<int64_t>& tgt_lengths) override {
    return forward(src, src_lengths, tgt_in, tgt_lengths);
  }
  std::unique_ptr<DecoderState> start(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                      const StartOptions& options) override;
  Tensor step(DecoderState& state, const Tensor& tokens) override;
  Module& module() override { return *this; }
  int64_t width() const override { return options.d_model; }
  // Training: the vocabulary projection and the loss at the positions that count only (targets
  // other than options.ignore_index): a padded position would cost a (C x V) product for a loss
  // that is thrown away. The same loss as cross_entropy(logits(...)) (tested); with
  // Reduction::None, that (it returns every position).
  Variable training_loss(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                         const std::vector<int64_t>& tgt_lengths, const Tensor& tgt_out,
                         const CrossEntropyOptions& options) override;

  // ids (B, L) at positions offset.. -> embed(ids) * sqrt(C) + PE, dropped out (B, L, C)
  Variable embed(Embedding& table, const Tensor& ids, int64_t offset);

  TransformerOptions options;
  std::shared_ptr<Embedding> src_embed, tgt_embed;  // the same object with share_embeddings
  std::shared_ptr<PositionalEncoding> pos_encoding;
  std::shared_ptr<TransformerEncoder> encoder;
  std::shared_ptr<TransformerDecoder> decoder;
  std::shared_ptr<Linear> generator;  // C -> V; with tie_embeddings its weight is tgt_embed's
};

// The options of the model kinds built of Transformer layers ("transformer", and "lm",
// language_model.h): --layers --dim --heads --ffn --dropout --positional --pre-norm
// --tie-embeddings and the chosen encoding's own options (positional_options: every
// encoding's, with chosen = nullptr), and their rule (dim a multiple of heads).
std::vector<Option> transformer_kind_options(const Settings* chosen);
void transformer_kind_check(const Settings& settings);

// (T, past + T): 1 where query t (position past + t) would see a later position. causal_mask(T)
// when past = 0; what a decoder chunk of T new positions needs on top of `past` cached ones.
Tensor causal_mask_after(int64_t T, int64_t past);

}  // namespace seqgrad::nn
