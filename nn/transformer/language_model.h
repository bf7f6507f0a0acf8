// nn/transformer/language_model.h - a decoder-only Transformer: the language model (GPT's shape).
//
// The encoder-decoder (transformer.h) models a target given a source, P(y | x). A language model
// models text alone, one token at a time, each from the tokens before it:
//   P(y_1 .. y_T) = P(y_1) P(y_2 | y_1) ... P(y_T | y_1 .. y_{T-1})
// What is left of the Transformer is one stack: embeddings + positions, N blocks of causal
// self-attention and a feed-forward network (each in a residual connection with LayerNorm), a
// final LayerNorm, and the projection to the vocabulary. Against the encoder-decoder, three
// things change: there is no source and so no encoder; the decoder's layers lose their attention
// to the source (cross-attention) and its LayerNorm; and every block runs under the causal mask,
// so that position t sees positions 0..t only. The blocks are TransformerEncoderLayers under
// that mask (the encoder's layer is exactly "self-attention + FFN").
//
// Trained by teacher forcing like the decoder: tgt_in = <bos> y_1 .. y_{T-1}, targets y_1 .. y_T
// <eos>. As a model kind ("lm": `seqgrad train --arch lm`) it trains on the target side of the
// pairs it is given and ignores their sources. To generate, its "source" is a prompt (target ids):
// start() reads <bos> + prompt, and the output continues it (`seqgrad sample --prompt`).
// Names: tgt_embed, pos_encoding, decoder.layers.N..., decoder.norm, generator: the
// encoder-decoder's own, less src_embed, encoder and each layer's multihead_attn and norm3.
// Read first: transformer.h. Read next: nn/decoding/decoding.h (sampling).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/transformer/transformer.h"

namespace seqgrad::nn {

struct TransformerLMOptions {
  explicit TransformerLMOptions(int64_t vocab) : vocab(vocab) {}
  int64_t vocab;
  int64_t d_model = 64, nhead = 4, num_layers = 2, dim_feedforward = 256;
  real dropout = real(0.1);
  bool norm_first = false;        // pre-norm blocks (GPT-2's choice)
  bool tie_embeddings = false;    // the generator's weight is tgt_embed's (V, C) table
  std::string positional = "sinusoidal";
  Settings positional_settings;   // its options' values (missing ones: their defaults)
  int64_t max_len = 256;          // positions: the prompt, <bos> and the output together

  TransformerLMOptions& with_d_model(int64_t v) { d_model = v; return *this; }
  TransformerLMOptions& with_nhead(int64_t v) { nhead = v; return *this; }
  TransformerLMOptions& with_num_layers(int64_t v) { num_layers = v; return *this; }
  TransformerLMOptions& with_dim_feedforward(int64_t v) { dim_feedforward = v; return *this; }
  TransformerLMOptions& with_dropout(real v) { dropout = v; return *this; }
  TransformerLMOptions& with_norm_first(bool v) { norm_first = v; return *this; }
  TransformerLMOptions& with_tie_embeddings(bool v) { tie_embeddings = v; return *this; }
  TransformerLMOptions& with_positional(std::string v) { positional = std::move(v); return *this; }
  TransformerLMOptions& with_positional_settings(Settings v) { positional_settings = std::move(v); return *this; }
  TransformerLMOptions& with_max_len(int64_t v) { max_len = v; return *this; }
};

class TransformerLM : public Module, public EncoderDecoder {
 public:
  explicit TransformerLM(const TransformerLMOptions& options);
  std::string name() const override { return "TransformerLM"; }

  // tokens (B, T) = <bos> y_1 .. -> the last block's output (B, T, C); position t sees 0..t.
  Variable states(const Tensor& tokens);
  // tokens (B, T) -> logits (B, T, V): row t scores the token after position t.
  Variable forward(const Tensor& tokens);

  // The EncoderDecoder interface. Training: the source is ignored (the target is the text).
  Variable logits(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                  const std::vector<int64_t>& tgt_lengths) override;
  Variable training_loss(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                         const std::vector<int64_t>& tgt_lengths, const Tensor& tgt_out,
                         const CrossEntropyOptions& options) override;
  // Decoding: src (N, P) is each row's prompt in target ids, P >= 0 (<pad>, id 0, is no token:
  // a shorter prompt is right-padded). Each step runs the whole prefix <bos> prompt y_1 .. y_t
  // again (no key/value cache: simpler, and cheap for short texts).
  std::unique_ptr<DecoderState> start(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                      const StartOptions& options) override;
  Tensor step(DecoderState& state, const Tensor& tokens) override;
  Module& module() override { return *this; }
  int64_t width() const override { return options.d_model; }
  bool reads_source() const override { return false; }

  TransformerLMOptions options;
  std::shared_ptr<Embedding> tgt_embed;
  std::shared_ptr<PositionalEncoding> pos_encoding;
  std::shared_ptr<TransformerEncoder> decoder;  // self-attention blocks under the causal mask
  std::shared_ptr<Linear> generator;            // C -> V; with tie_embeddings its weight is tgt_embed's
};

}  // namespace seqgrad::nn
