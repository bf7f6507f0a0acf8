// nn/transformer/transformer.cpp - encoder/decoder layers (post-norm and pre-norm), stacks, the model.
#include "nn/transformer/transformer.h"
#include "nn/decoding/model_kind.h"

#include <cmath>

#include "nn/attention/attention.h"
#include "nn/core/init.h"
#include "tensor/check.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"

namespace seqgrad::nn {

namespace {

void check_layer_options(const std::string& op, const TransformerLayerOptions& o) {
  check(o.d_model > 0 && o.nhead > 0 && o.d_model % o.nhead == 0, op,
        ": expected d_model divisible by nhead, got d_model=", o.d_model, " and nhead=", o.nhead);
  check(o.dim_feedforward > 0, op, ": expected a positive dim_feedforward, got ", o.dim_feedforward);
}

void check_sequence(const std::string& op, const char* what, const Variable& x, int64_t C) {
  check(x.defined() && x.dim() == 3 && x.size(2) == C, op, ": expected ", what, " of shape (B, L, ", C, "), got ",
        x.defined() ? x.shape() : Shape{});
}

std::string layer_repr(const TransformerLayerOptions& o) {
  return cat("d_model=", o.d_model, ", nhead=", o.nhead, ", dim_feedforward=", o.dim_feedforward, ", dropout=", o.dropout,
             ", norm_first=", o.norm_first ? "true" : "false");
}

}  // namespace

// ================================================================================================
// TransformerEncoderLayer

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerLayerOptions& o) : options(o) {
  check_layer_options(name(), o);
  // Registered in PyTorch's order, so named_parameters() lists them as its state_dict does.
  self_attn = register_module("self_attn", std::make_shared<MultiHeadAttention>(o.d_model, o.nhead, o.dropout));
  linear1 = register_module("linear1", std::make_shared<Linear>(o.d_model, o.dim_feedforward));
  dropout = register_module("dropout", std::make_shared<Dropout>(o.dropout));
  linear2 = register_module("linear2", std::make_shared<Linear>(o.dim_feedforward, o.d_model));
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(o.dropout));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(o.dropout));
}

std::string TransformerEncoderLayer::extra_repr() const { return layer_repr(options); }

// [docs:encoder_layer]
// FF(x) = max(0, x W1^T + b1) W2^T + b2, applied to every position alike: (..., C) -> (..., C)
Variable TransformerEncoderLayer::feed_forward(const Variable& x) {
  return linear2->forward(dropout->forward(relu(linear1->forward(x))));
}

Variable TransformerEncoderLayer::forward(const Variable& src, const Tensor& src_mask, const Tensor& src_key_padding_mask) {
  check_sequence(name(), "src", src, options.d_model);
  auto sa = [&](const Variable& x) {  // (B, S, C) -> (B, S, C)
    return dropout1->forward(self_attn->forward(x, x, x, src_key_padding_mask, src_mask).output);
  };
  auto ff = [&](const Variable& x) { return dropout2->forward(feed_forward(x)); };
  Variable x = src;
  if (options.norm_first) {
    x = x + sa(norm1->forward(x));
    x = x + ff(norm2->forward(x));
  } else {
    x = norm1->forward(x + sa(x));
    x = norm2->forward(x + ff(x));
  }
  return x;
}
// [docs:end]

// ================================================================================================
// TransformerDecoderLayer

TransformerDecoderLayer::TransformerDecoderLayer(const TransformerLayerOptions& o) : options(o) {
  check_layer_options(name(), o);
  self_attn = register_module("self_attn", std::make_shared<MultiHeadAttention>(o.d_model, o.nhead, o.dropout));
  multihead_attn = register_module("multihead_attn", std::make_shared<MultiHeadAttention>(o.d_model, o.nhead, o.dropout));
  linear1 = register_module("linear1", std::make_shared<Linear>(o.d_model, o.dim_feedforward));
  dropout = register_module("dropout", std::make_shared<Dropout>(o.dropout));
  linear2 = register_module("linear2", std::make_shared<Linear>(o.dim_feedforward, o.d_model));
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps));
  norm3 = register_module("norm3", std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(o.dropout));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(o.dropout));
  dropout3 = register_module("dropout3", std::make_shared<Dropout>(o.dropout));
}

std::string TransformerDecoderLayer::extra_repr() const { return layer_repr(options); }

Variable TransformerDecoderLayer::feed_forward(const Variable& x) {
  return linear2->forward(dropout->forward(relu(linear1->forward(x))));
}

Variable TransformerDecoderLayer::forward(const Variable& tgt, const Variable& memory, const Tensor& tgt_mask,
                                          const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                          const Tensor& memory_key_padding_mask) {
  return forward(tgt, memory, nullptr, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                 /*need_weights=*/false)
      .output;
}

// [docs:decoder_layer]
DecoderLayerResult TransformerDecoderLayer::forward(const Variable& tgt, const Variable& memory, DecoderLayerCache* cache,
                                                    const Tensor& tgt_mask, const Tensor& memory_mask,
                                                    const Tensor& tgt_key_padding_mask,
                                                    const Tensor& memory_key_padding_mask, bool need_weights) {
  check_sequence(name(), "tgt", tgt, options.d_model);
  // With a filled cache the memory has been projected already and may be left undefined.
  if (!cache || cache->cross_attn.empty()) check_sequence(name(), "memory", memory, options.d_model);
  // Masked self-attention: with a cache, the new positions attend to the cached ones too.
  auto sa = [&](const Variable& x) {  // (B, T, C) -> (B, T, C)
    MultiHeadAttentionResult r =
        cache ? self_attn->forward(x, x, x, cache->self_attn, CacheMode::Append, tgt_key_padding_mask, tgt_mask)
              : self_attn->forward(x, x, x, tgt_key_padding_mask, tgt_mask);
    return dropout1->forward(r.output);
  };
  // Encoder-decoder attention: queries from the decoder, keys and values from the memory.
  Variable cross_weights;
  auto ca = [&](const Variable& x) {  // (B, T, C), memory (B, S, C) -> (B, T, C)
    MultiHeadAttentionResult r =
        cache ? multihead_attn->forward(x, memory, memory, cache->cross_attn, CacheMode::Static, memory_key_padding_mask,
                                        memory_mask, need_weights)
              : multihead_attn->forward(x, memory, memory, memory_key_padding_mask, memory_mask, need_weights);
    cross_weights = r.weights;  // (B, NH, T, S)
    return dropout2->forward(r.output);
  };
  auto ff = [&](const Variable& x) { return dropout3->forward(feed_forward(x)); };
  Variable x = tgt;
  if (options.norm_first) {
    x = x + sa(norm1->forward(x));
    x = x + ca(norm2->forward(x));
    x = x + ff(norm3->forward(x));
  } else {
    x = norm1->forward(x + sa(x));
    x = norm2->forward(x + ca(x));
    x = norm3->forward(x + ff(x));
  }
  return {x, cross_weights};
}
// [docs:end]

// ================================================================================================
// Stacks

TransformerEncoder::TransformerEncoder(const TransformerLayerOptions& layer, int64_t num_layers, bool final_norm) {
  check(num_layers > 0, "TransformerEncoder: expected at least one layer, got ", num_layers);
  layers = register_module("layers", std::make_shared<ModuleList<TransformerEncoderLayer>>());
  for (int64_t i = 0; i < num_layers; ++i) layers->push_back(std::make_shared<TransformerEncoderLayer>(layer));
  if (final_norm) norm = register_module("norm", std::make_shared<LayerNorm>(layer.d_model, layer.layer_norm_eps));
}

Variable TransformerEncoder::forward(const Variable& src, const Tensor& mask, const Tensor& src_key_padding_mask) {
  Variable x = src;  // (B, S, C)
  for (const auto& layer : *layers) x = layer->forward(x, mask, src_key_padding_mask);
  return norm ? norm->forward(x) : x;
}

void DecoderCache::reorder(const Tensor& index) {
  for (DecoderLayerCache& c : layers) {
    c.self_attn.reorder(index);
    c.cross_attn.reorder(index);
  }
}

TransformerDecoder::TransformerDecoder(const TransformerLayerOptions& layer, int64_t num_layers, bool final_norm) {
  check(num_layers > 0, "TransformerDecoder: expected at least one layer, got ", num_layers);
  layers = register_module("layers", std::make_shared<ModuleList<TransformerDecoderLayer>>());
  for (int64_t i = 0; i < num_layers; ++i) layers->push_back(std::make_shared<TransformerDecoderLayer>(layer));
  if (final_norm) norm = register_module("norm", std::make_shared<LayerNorm>(layer.d_model, layer.layer_norm_eps));
}

Variable TransformerDecoder::forward(const Variable& tgt, const Variable& memory, const Tensor& tgt_mask,
                                     const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                     const Tensor& memory_key_padding_mask) {
  Variable x = tgt;  // (B, T, C)
  for (const auto& layer : *layers)
    x = layer->forward(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
  return norm ? norm->forward(x) : x;
}

DecoderResult TransformerDecoder::forward(const Variable& tgt, const Variable& memory, DecoderCache* cache,
                                          const Tensor& tgt_mask, const Tensor& tgt_key_padding_mask,
                                          const Tensor& memory_key_padding_mask, bool need_weights) {
  if (cache && cache->layers.empty()) cache->layers.resize(layers->size());
  check(!cache || cache->layers.size() == layers->size(), "TransformerDecoder: the cache has ",
        cache ? cache->layers.size() : 0, " layers, expected ", layers->size());
  DecoderResult out;
  Variable x = tgt;  // (B, T, C)
  for (size_t i = 0; i < layers->size(); ++i) {
    DecoderLayerResult r = (*layers)[i]->forward(x, memory, cache ? &cache->layers[i] : nullptr, tgt_mask, Tensor(),
                                                 tgt_key_padding_mask, memory_key_padding_mask, need_weights);
    x = r.output;
    if (need_weights) out.cross_weights.push_back(r.cross_weights);  // (B, NH, T, S)
  }
  out.output = norm ? norm->forward(x) : x;
  if (cache) cache->length += tgt.size(1);
  return out;
}

// ================================================================================================
// Transformer

TransformerLayerOptions TransformerOptions::layer() const {
  return TransformerLayerOptions(d_model, nhead).with_dim_feedforward(dim_feedforward).with_dropout(dropout).with_norm_first(norm_first);
}

Tensor causal_mask_after(int64_t T, int64_t past) {
  Tensor m = zeros({T, past + T});
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = past + t + 1; s < past + T; ++s) m.data()[t * (past + T) + s] = 1;
  return m;
}

Transformer::Transformer(const TransformerOptions& o) : options(o) {
  check(o.src_vocab > 4 && o.tgt_vocab > 4, "Transformer: expected vocabularies larger than the 4 special tokens, got ",
        o.src_vocab, " and ", o.tgt_vocab);
  check(!o.share_embeddings || o.src_vocab == o.tgt_vocab,
        "Transformer: share_embeddings needs one vocabulary, got sizes ", o.src_vocab, " and ", o.tgt_vocab);
  check(o.max_len > 0, "Transformer: expected a positive max_len, got ", o.max_len);
  const int64_t C = o.d_model;
  const TransformerLayerOptions layer = o.layer();
  check_layer_options(name(), layer);

  // Embeddings start at N(0, 1/C), so that after the sqrt(C) scale each feature has variance 1,
  // of the order of the positional encoding they are added to (whose features have mean square
  // 1/2). With sharing, tgt_embed is src_embed.
  auto make_table = [C](int64_t V) {
    auto e = std::make_shared<Embedding>(V, C, /*padding_idx=*/0);
    init::normal_(e->weight.value(), 0, 1 / std::sqrt(static_cast<real>(C)));
    std::fill(e->weight.value().data(), e->weight.value().data() + C, real(0));  // <pad> stays 0
    return e;
  };
  src_embed = register_module("src_embed", make_table(o.src_vocab));
  tgt_embed = o.share_embeddings ? src_embed : register_module("tgt_embed", make_table(o.tgt_vocab));
  pos_encoding = register_module(
      "pos_encoding", make_positional_encoding(o.positional, PositionalOptions(C, o.max_len, o.nhead, o.positional_settings)));
  encoder = register_module("encoder", std::make_shared<TransformerEncoder>(layer, o.num_encoder_layers));
  decoder = register_module("decoder", std::make_shared<TransformerDecoder>(layer, o.num_decoder_layers));
  // The encoding reaches inside self-attention (attention_hook.h): the encoder's sees both
  // ways, the decoder's is causal. Sinusoidal and learned give neither a bias nor a transform.
  for (const auto& l : *encoder->layers) l->self_attn->attach(pos_encoding, /*causal=*/false);
  for (const auto& l : *decoder->layers) l->self_attn->attach(pos_encoding, /*causal=*/true);
  generator = register_module("generator", std::make_shared<Linear>(C, o.tgt_vocab));
  // Tied (Press & Wolf, 2017): logits_v = h . e_v + b_v, scoring each word by its own input
  // embedding; the (V, C) table is one parameter, trained by both ends and saved once.
  if (o.tie_embeddings) generator->tie_weight(tgt_embed->weight);
  // torch.nn.Transformer re-initialises every matrix of its encoder and decoder with
  // xavier_uniform_; so do we.
  for (auto& [n, p] : encoder->named_parameters())
    if (p.dim() > 1) init::xavier_uniform_(p.value());
  for (auto& [n, p] : decoder->named_parameters())
    if (p.dim() > 1) init::xavier_uniform_(p.value());
}

// [docs:embed]
Variable Transformer::embed(Embedding& table, const Tensor& ids, int64_t offset) {
  check(ids.dim() == 2, name(), ": expected token ids of shape (B, L), got ", ids.shape());
  Variable x = table.forward(ids) * std::sqrt(static_cast<real>(options.d_model));  // (B, L, C)
  return dropout(pos_encoding->forward(x, offset), options.dropout, is_training());
}
// [docs:end]

// [docs:encode]
TransformerMemory Transformer::encode(const Tensor& src, const std::vector<int64_t>& src_lengths) {
  check(src.dim() == 2, name(), ": expected source ids of shape (B, S), got ", src.shape());
  const int64_t B = src.size(0), S = src.size(1);
  check(src_lengths.empty() || static_cast<int64_t>(src_lengths.size()) == B, name(), ": expected ", B,
        " source lengths, got ", src_lengths.size());
  for (int64_t n : src_lengths)
    check(n >= 1 && n <= S, name(), ": expected source lengths in 1..", S, ", got ", n);
  TransformerMemory m;
  if (!src_lengths.empty()) m.key_padding_mask = padding_mask(src_lengths, S);  // (B, S)
  m.memory = encoder->forward(embed(*src_embed, src, 0), Tensor(), m.key_padding_mask);  // (B, S, C)
  return m;
}
// [docs:end]

// [docs:decode]
DecoderResult Transformer::decoder_states(const Tensor& tgt_in, const TransformerMemory& memory,
                                          const std::vector<int64_t>& tgt_lengths, bool need_weights) {
  check(tgt_in.dim() == 2 && tgt_in.size(0) == memory.memory.size(0), name(), ": expected target ids of shape (",
        memory.memory.size(0), ", T), got ", tgt_in.shape());
  const int64_t T = tgt_in.size(1);
  const Tensor tgt_padding = tgt_lengths.empty() ? Tensor() : padding_mask(tgt_lengths, T);  // (B, T)
  return decoder->forward(embed(*tgt_embed, tgt_in, 0), memory.memory, nullptr, causal_mask(T), tgt_padding,
                          memory.key_padding_mask, need_weights);  // output (B, T, C)
}

TransformerStep Transformer::decode(const Tensor& tgt_in, const TransformerMemory& memory,
                                    const std::vector<int64_t>& tgt_lengths, bool need_weights) {
  DecoderResult r = decoder_states(tgt_in, memory, tgt_lengths, need_weights);
  return {generator->forward(r.output), r.cross_weights};  // (B, T, V)
}
// [docs:end]

// [docs:training_loss]
Variable Transformer::training_loss(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                                    const std::vector<int64_t>& tgt_lengths, const Tensor& tgt_out,
                                    const CrossEntropyOptions& options) {
  const Variable states = decoder_states(tgt_in, encode(src, src_lengths), tgt_lengths).output;  // (B, T, C)
  return projected_cross_entropy(states, *generator, tgt_out, options);
}
// [docs:end]

// [docs:decode_step]
TransformerStep Transformer::decode_step(const Tensor& tokens, const TransformerMemory& memory, DecoderCache& cache,
                                         bool need_weights) {
  check(tokens.dim() == 2 && tokens.size(0) == memory.memory.size(0), name(), ": expected target ids of shape (",
        memory.memory.size(0), ", T_new), got ", tokens.shape());
  const int64_t T = tokens.size(1), past = cache.length;
  // One new position may see every cached one: no mask. A chunk of several is causal inside.
  const Tensor mask = T > 1 ? causal_mask_after(T, past) : Tensor();
  DecoderResult r = decoder->forward(embed(*tgt_embed, tokens, past), memory.memory, &cache, mask, Tensor(),
                                     memory.key_padding_mask, need_weights);
  return {generator->forward(r.output), r.cross_weights};  // (B, T_new, V)
}
// [docs:end]

// [docs:model_forward]
Variable Transformer::forward(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                              const std::vector<int64_t>& tgt_lengths) {
  return decode(tgt_in, encode(src, src_lengths), tgt_lengths).logits;
}
// [docs:end]

// ================================================================================================
// Decoding, one token at a time (nn/decoding/encoder_decoder.h)

namespace {

struct TransformerState : DecoderState {
  TransformerMemory memory;
  DecoderCache cache;  // with use_cache
  Tensor prefix;       // without: every token so far (N, t)
  StartOptions options;

  void reorder_rows(const Tensor& index) override {
    memory.memory = index_select(memory.memory, 0, index);
    if (memory.key_padding_mask.defined()) memory.key_padding_mask = index_select(memory.key_padding_mask, 0, index);
    cache.reorder(index);
    if (prefix.defined()) prefix = index_select(prefix, 0, index);
  }
};

}  // namespace

std::unique_ptr<DecoderState> Transformer::start(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                                 const StartOptions& options) {
  auto state = std::make_unique<TransformerState>();
  state->memory = encode(src, src_lengths);
  state->options = options;
  return state;
}

// tokens (N) -> log-probabilities (N, V)
// [docs:stepper]
Tensor Transformer::step(DecoderState& base, const Tensor& tokens) {
  auto& state = static_cast<TransformerState&>(base);
  const int64_t N = tokens.numel();
  const Tensor token = tokens.reshape({N, 1});
  TransformerStep s;
  if (state.options.use_cache) {
    s = decode_step(token, state.memory, state.cache, state.options.need_weights);  // logits (N, 1, V)
  } else {
    state.prefix = state.prefix.defined() ? concat({state.prefix, token}, 1) : token;  // (N, t+1)
    s = decode(state.prefix, state.memory, {}, state.options.need_weights);          // logits (N, t+1, V)
  }
  const int64_t T = s.logits.size(1), V = s.logits.size(2);
  if (state.options.need_weights) {
    std::vector<Tensor> newest;  // per layer, this step only (N, NH, 1, S)
    for (const Variable& w : s.cross_weights) newest.push_back(slice(w.value(), 2, T - 1, T));
    state.record_attention(newest);
  }
  return log_softmax(slice(s.logits.value(), 1, T - 1, T).reshape({N, V}), -1);  // (N, V)
}
// [docs:end]

// ================================================================================================
// The model kind "transformer" (nn/decoding/model_kind.h)

// The encoding, by name: one of the registry's, so a checkpoint naming one this program lacks says
// how to build it in.
Option positional_option() {
  Option o = choice_option("positional", "sinusoidal", [] { return positional_encodings().names(); },
                           "the Transformer's positional encoding: " + join_names(positional_encodings().names(), ", "));
  o.from_registry = true;
  return o;
}

std::vector<Option> transformer_kind_options(const Settings* chosen) {
  std::vector<Option> options = {layers_option(), dim_option(),
          in_every_checkpoint(integer_option("heads", 4, 1, 64, "attention heads (Transformer)")),
          in_every_checkpoint(integer_option("ffn", 256, 1, 16384, "feed-forward width (Transformer)")), dropout_option(),
          positional_option(),
          switch_option("pre_norm", false, "Transformer: pre-norm layers, x + f(LayerNorm(x)), instead of the paper's "
                                           "post-norm LayerNorm(x + f(x)) (torch's norm_first; steadier without warm-up)"),
          switch_option("tie_embeddings", false, "Transformer: the output projection's weight is the target embedding "
                                                 "table (Press & Wolf, 2017): V x C fewer parameters")};
  for (Option& o : positional_options(chosen)) options.push_back(std::move(o));  // the encoding's own
  return options;
}

void transformer_kind_check(const Settings& s) {
  check(s.integer("dim") % s.integer("heads") == 0, "--dim (", s.integer("dim"), ") must be a multiple of --heads (",
        s.integer("heads"), ")");
}

namespace {

std::shared_ptr<EncoderDecoder> build_transformer(const Settings& s, const ModelContext& c) {
  return std::make_shared<Transformer>(
      TransformerOptions(c.src_vocab, c.tgt_vocab).with_d_model(s.integer("dim")).with_nhead(s.integer("heads"))
          .with_num_layers(s.integer("layers")).with_dim_feedforward(s.integer("ffn"))
          .with_dropout(static_cast<real>(s.number("dropout"))).with_positional(s.text("positional"))
          .with_positional_settings(s).with_norm_first(s.on("pre_norm")).with_tie_embeddings(s.on("tie_embeddings"))
          .with_max_len(c.max_len + 2));  // + <bos> and <eos>
}

}  // namespace

SEQGRAD_REGISTER_MODEL(ModelKind{"transformer", "the Transformer (Vaswani et al., 2017)",
                                 transformer_kind_options, transformer_kind_check,
                                 build_transformer})

}  // namespace seqgrad::nn
