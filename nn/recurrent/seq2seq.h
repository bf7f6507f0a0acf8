// nn/recurrent/seq2seq.h - the encoder-decoder (sequence to sequence) without attention.
//
// The encoder reads the source and squeezes it into one fixed-length context vector c: its
// final hidden state (or the mean / max of all its states). The decoder starts from a state
// made of c and writes the target one token at a time, y_i = g(c, y_1..y_{i-1}), with c also
// fed to every step. Training uses teacher forcing (the decoder reads the true previous
// token); decoding (nn/decoding/decoding.h) feeds back its own choice from <bos> until <eos>. One vector for a
// whole sentence is the bottleneck attention removes (nn/attention/attention.h, chapter 7 of the docs).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/core/embedding.h"
#include "nn/decoding/encoder_decoder.h"
#include "nn/core/linear.h"
#include "nn/recurrent/rnn.h"

namespace seqgrad::nn {

// How the encoder's states become the context: the final state, or the mean or max over
// every (non-padding) position.
enum class ContextKind { Last, Mean, Max };

struct Seq2SeqOptions {
  Seq2SeqOptions(int64_t src_vocab, int64_t tgt_vocab) : src_vocab(src_vocab), tgt_vocab(tgt_vocab) {}
  int64_t src_vocab, tgt_vocab;
  int64_t embed_dim = 32, hidden_size = 64, num_layers = 1;
  std::string cell = "gru";  // a registered recurrent cell (rnn.h): "rnn", "lstm", "gru", ...
  Settings cell_settings;    // the cell's own options, if it has any (defaults otherwise)
  bool bidirectional = false;  // encoder only
  ContextKind context = ContextKind::Last;
  bool reverse_source = false;  // the encoder reads each source backwards (Sutskever et al., 2014)
  real dropout = 0;

  Seq2SeqOptions& with_embed_dim(int64_t v) { embed_dim = v; return *this; }
  Seq2SeqOptions& with_hidden_size(int64_t v) { hidden_size = v; return *this; }
  Seq2SeqOptions& with_num_layers(int64_t v) { num_layers = v; return *this; }
  Seq2SeqOptions& with_cell(std::string v, Settings s = {}) {
    cell = std::move(v);
    cell_settings = std::move(s);
    return *this;
  }
  Seq2SeqOptions& with_bidirectional(bool v) { bidirectional = v; return *this; }
  Seq2SeqOptions& with_context(ContextKind v) { context = v; return *this; }
  Seq2SeqOptions& with_reverse_source(bool v) { reverse_source = v; return *this; }
  Seq2SeqOptions& with_dropout(real v) { dropout = v; return *this; }
};


struct EncoderOutput {
  Variable outputs;  // (B, S, D*H): the top layer's state at every source position
  RNNState state;    // (L*D, B, H)
  Variable context;  // (B, D*H): the whole source in one vector
};

class Encoder : public Module {
 public:
  explicit Encoder(const Seq2SeqOptions& options);
  std::string name() const override { return "Encoder"; }
  // src (B, S) ids, lengths (B) -> outputs, final state, context
  EncoderOutput forward(const Tensor& src, const std::vector<int64_t>& lengths);
  int64_t output_size() const { return options_.hidden_size * (options_.bidirectional ? 2 : 1); }

  std::shared_ptr<Embedding> embedding;
  std::shared_ptr<RecurrentLayer> rnn;

 private:
  Seq2SeqOptions options_;
};

class Decoder : public Module {
 public:
  Decoder(const Seq2SeqOptions& options, int64_t context_size);
  std::string name() const override { return "Decoder"; }
  // tokens (B, T) -> logits (B, T, V). Each step reads [embedding; context]; `state` (L, B, H)
  // is read and replaced by the state after the last step, so one call can run a whole
  // target (teacher forcing) or a single step (decoding).
  Variable forward(const Tensor& tokens, const Variable& context, RNNState& state);
  // The same before the output layer: the top layer's state at every step (B, T, H).
  Variable states(const Tensor& tokens, const Variable& context, RNNState& state);

  std::shared_ptr<Embedding> embedding;
  std::shared_ptr<RecurrentLayer> rnn;
  std::shared_ptr<Linear> out;  // (H -> V)
};

class Seq2Seq : public Module, public EncoderDecoder {
 public:
  explicit Seq2Seq(const Seq2SeqOptions& options);
  std::string name() const override { return "Seq2Seq"; }
  // Teacher forcing: src (B, S), tgt_in (B, T) = <bos> y1 .. -> logits (B, T, V)
  Variable forward(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in);
  // The same before the output layer: the decoder's top state at every step (B, T, H).
  Variable decoder_states(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in);
  // The decoding interface (nn/decoding/encoder_decoder.h): the state is the context and the decoder's
  // recurrent state; a step runs the decoder on one token. Decode with nn/decoding/decoding.h.
  Variable logits(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                  const std::vector<int64_t>&) override {
    return forward(src, src_lengths, tgt_in);
  }
  std::unique_ptr<DecoderState> start(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                      const StartOptions& options) override;
  Tensor step(DecoderState& state, const Tensor& tokens) override;
  Module& module() override { return *this; }
  int64_t width() const override { return options.embed_dim; }
  // The cross-entropy of the positions whose target counts (projected_cross_entropy).
  Variable training_loss(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                         const std::vector<int64_t>& tgt_lengths, const Tensor& tgt_out,
                         const CrossEntropyOptions& options) override;
  // The decoder's first state: tanh(W c + b) for every decoder layer (the "bridge").
  RNNState initial_state(const Variable& context);
  // The sources as the encoder reads them: with reverse_source, each row's first
  // src_lengths[b] ids backwards (the padding stays at the end); otherwise src itself.
  Tensor encoder_input(const Tensor& src, const std::vector<int64_t>& src_lengths) const;

  std::shared_ptr<Encoder> encoder;
  std::shared_ptr<Linear> bridge;  // (D*H -> L*H)
  std::shared_ptr<Decoder> decoder;
  Seq2SeqOptions options;
};

}  // namespace seqgrad::nn
