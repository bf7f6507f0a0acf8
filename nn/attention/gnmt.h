// nn/attention/gnmt.h - a GNMT-style encoder-decoder (Wu et al. 2016): deep LSTM stacks with residual
// connections, and attention from the bottom decoder layer fed to every layer above it.
//
//   encoder  layer 1: bidirectional LSTM, H per direction -> (B, S, 2H)
//            layer 2: LSTM 2H -> H          layers l >= 3: x_{l+1} = LSTM_l(x_l) + x_l
//   decoder  layer 1: LSTM over the target embeddings; its output h^1_t asks the attention
//            c_t = sum_s a_t(s) m_s over the encoder's top outputs m (B, S, H)
//            layer 2: LSTM([x_2; c_t])      layers l >= 3: x_{l+1} = LSTM_l([x_l; c_t]) + x_l
//            logits = W_out [x_L; c_t]   (seqgrad's choice, not the paper's: in Wu et al. the
//            context goes to layers 2..L only and the softmax reads x_L alone; here the output
//            layer also reads c_t, as the Bahdanau and Luong decoders of attention_seq2seq.h do)
// No decoder layer reads its own past attention, so each layer runs over the whole target at
// once in teacher forcing (the paper's reason: layer l + 1 can start before layer l finishes).
// What this is not: the paper's wordpieces, quantisation or length-normalised beam search
// (nn/decoding/decoding.h has the latter). Read first: nn/recurrent/lstm.h, attention_seq2seq.h. Read next: nn/transformer/transformer.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/attention/attention.h"
#include "nn/core/embedding.h"
#include "nn/decoding/encoder_decoder.h"
#include "nn/core/linear.h"
#include "nn/recurrent/lstm.h"

namespace seqgrad::nn {

struct GNMTOptions {
  GNMTOptions(int64_t src_vocab, int64_t tgt_vocab) : src_vocab(src_vocab), tgt_vocab(tgt_vocab) {}
  int64_t src_vocab, tgt_vocab;
  int64_t embed_dim = 32, hidden_size = 64;
  int64_t num_layers = 4;  // L, in the encoder and in the decoder alike; 2 or more
  std::string score = "general";  // a registered score's name (attention.h)
  Settings score_settings;         // the score's own options, if it has any (defaults otherwise)
  int64_t attention_size = 0;  // hidden width of concat/additive/mlp scores (0 = hidden_size)
  int64_t max_source_len = 0;  // the location score: the longest source it scores
  bool residual = true;        // the residual connections from layer 3 on (off: a plain deep stack)
  real dropout = 0;            // on the input of every LSTM layer and of the output layer

  GNMTOptions& with_embed_dim(int64_t v) { embed_dim = v; return *this; }
  GNMTOptions& with_hidden_size(int64_t v) { hidden_size = v; return *this; }
  GNMTOptions& with_num_layers(int64_t v) { num_layers = v; return *this; }
  GNMTOptions& with_score(std::string v, Settings s = {}) {
    score = std::move(v);
    score_settings = std::move(s);
    return *this;
  }
  GNMTOptions& with_attention_size(int64_t v) { attention_size = v; return *this; }
  GNMTOptions& with_max_source_len(int64_t v) { max_source_len = v; return *this; }
  GNMTOptions& with_residual(bool v) { residual = v; return *this; }
  GNMTOptions& with_dropout(real v) { dropout = v; return *this; }
};

// The first layer that adds its input to its output (0-based: the paper's layer 3). Layer 1 is
// bidirectional (2H wide) and layer 2 brings the width back to H, so layer 3 is the first whose
// input and output have the same width.
constexpr int64_t kFirstResidualLayer = 2;

class GNMTEncoder : public Module {
 public:
  explicit GNMTEncoder(const GNMTOptions& options);
  std::string name() const override { return "GNMTEncoder"; }
  // src (B, S) ids, lengths (B) or empty -> the top layer's outputs (B, S, H), zero at padding
  Variable forward(const Tensor& src, const std::vector<int64_t>& lengths);

  std::shared_ptr<Embedding> embedding;
  std::shared_ptr<ModuleList<LSTM>> layers;  // layers[0] bidirectional

 private:
  GNMTOptions options_;
};

struct GNMTOutput {
  Variable logits;    // (B, T, V); undefined from GNMTDecoder::states
  Variable weights;   // (B, T, S): the alignment at every decoder step
  Variable features;  // (B, T, 2H): what the output layer reads, [x_L; c_t]
};

class GNMTDecoder : public Module {
 public:
  explicit GNMTDecoder(const GNMTOptions& options);
  std::string name() const override { return "GNMTDecoder"; }
  // tokens (B, T) <bos> y1 ..; memory (B, S, H); mask (B, S), 1 at padding. `states` holds one
  // RNNState per layer, (1, B, H) each (empty or undefined: zeros); it is read and replaced by
  // the states after the last step, so one call runs a whole target (teacher forcing) or one
  // step (decoding), with the same numbers.
  GNMTOutput forward(const Tensor& tokens, const Variable& memory, const Tensor& mask, std::vector<RNNState>& states);
  // The same up to the output layer: features and weights, no logits.
  GNMTOutput states(const Tensor& tokens, const Variable& memory, const Tensor& mask, std::vector<RNNState>& states);

  std::shared_ptr<Embedding> embedding;
  std::shared_ptr<ModuleList<LSTM>> layers;
  std::shared_ptr<AttentionScore> score;  // h^1_t against the memory
  std::shared_ptr<Linear> out;            // [x_L; c_t] (2H) -> V

 private:
  GNMTOptions options_;
};

class GNMT : public Module, public EncoderDecoder {
 public:
  explicit GNMT(const GNMTOptions& options);
  std::string name() const override { return "GNMT"; }
  std::string extra_repr() const override;

  // Teacher forcing: src (B, S), tgt_in (B, T) -> logits (B, T, V) and the alignments (B, T, S).
  GNMTOutput forward(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in);
  // The same up to the output layer (GNMTDecoder::states).
  GNMTOutput decoder_states(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in);
  // The cross-entropy of the positions whose target counts (projected_cross_entropy).
  Variable training_loss(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                         const std::vector<int64_t>& tgt_lengths, const Tensor& tgt_out,
                         const CrossEntropyOptions& options) override;
  // The decoding interface (nn/decoding/encoder_decoder.h): the state is the memory and every decoder
  // layer's (h, c); the attention recorded is the one alignment of each step (one layer, one head).
  Variable logits(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                  const std::vector<int64_t>&) override {
    return forward(src, src_lengths, tgt_in).logits;
  }
  std::unique_ptr<DecoderState> start(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                      const StartOptions& options) override;
  Tensor step(DecoderState& state, const Tensor& tokens) override;
  Module& module() override { return *this; }
  int64_t width() const override { return options.embed_dim; }

  std::shared_ptr<GNMTEncoder> encoder;
  std::shared_ptr<GNMTDecoder> decoder;
  GNMTOptions options;
};

}  // namespace seqgrad::nn
