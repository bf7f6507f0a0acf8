// nn/vision/image_to_text.h - ImageToText: a CNN encoder and an LSTM decoder that attends over the
// image's grid, writing one token per step (attention OCR; image captioning).
//
// The decoder of "Attention-based Extraction of Structured Information from Street View
// Imagery" (Wojna et al., 2017). With f_s the memory vectors (cnn_encoder.h), s_t the LSTM state:
//   (o_t, s_t) = LSTM([E y_{t-1}; u_{t-1}], s_{t-1})       the previous token and glimpse in
//   a_t        = softmax_s( v^T tanh(W_s s_t + W_f f_s) )   where to look (the additive score)
//   u_t        = sum_s a_ts f_s                              what it sees there
//   logits_t   = W_o [o_t; u_t]                              the next token
// u_0 is the mean of the memory. With attention off, u_t is that mean at every step: the
// decoder sees the whole image as one fixed vector, the encoder-decoder before attention.
// "Show, attend and tell" (Xu et al., 2015) is the same loop, looking before the LSTM step.
// It is an EncoderDecoder (nn/decoding/encoder_decoder.h) whose source is a batch of images, so greedy
// decoding, beam search and sampling (nn/decoding/decoding.h) read and caption with it:
//   auto out = nn::decode(model, images, {}, nn::DecodeOptions().with_max_len(8).with_beam_size(4));
// Read first: cnn_encoder.h, nn/attention/attention.h. Read next: nn/decoding/decoding.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/attention/attention.h"
#include "nn/vision/cnn_encoder.h"
#include "nn/core/embedding.h"
#include "nn/decoding/encoder_decoder.h"
#include "nn/core/linear.h"
#include "nn/recurrent/lstm.h"
#include "nn/core/module.h"

namespace seqgrad::nn {

struct ImageToTextOptions {
  ImageToTextOptions(CnnEncoderOptions encoder, int64_t vocab_size) : encoder(std::move(encoder)), vocab_size(vocab_size) {}
  CnnEncoderOptions encoder;
  int64_t vocab_size;           // V: output tokens, <pad> <bos> <eos> included
  int64_t embed_dim = 16;       // E y
  int64_t hidden_size = 64;     // H: the LSTM state s_t
  int64_t attention_size = 64;  // the width of tanh(W_s s + W_f f)
  bool attention = true;        // false: u_t = the mean of the memory at every step
  std::string score = "additive";  // the article's; any registered score fits (attention.h)

  ImageToTextOptions& with_embed_dim(int64_t v) { embed_dim = v; return *this; }
  ImageToTextOptions& with_hidden_size(int64_t v) { hidden_size = v; return *this; }
  ImageToTextOptions& with_attention_size(int64_t v) { attention_size = v; return *this; }
  ImageToTextOptions& with_attention(bool v) { attention = v; return *this; }
  ImageToTextOptions& with_score(std::string v) { score = std::move(v); return *this; }
};

class ImageToText : public Module, public EncoderDecoder {
 public:
  explicit ImageToText(const ImageToTextOptions& options);
  std::string name() const override { return "ImageToText"; }
  std::string extra_repr() const override;

  // images (B, C_in, H, W) -> memory f (B, S, D)
  Variable encode(const Tensor& images);
  // One step: y_prev (B) ids; state and glimpse u (B, D) move on to s_t and u_t -> logits (B, V).
  // If weights is given, it gets a_t (B, S) (with attention off: the uniform 1/S).
  Variable step(const Tensor& y_prev, RNNState& state, Variable& u, const Variable& memory, Variable* weights = nullptr);
  // Teacher forcing: images (B, C_in, H, W), tgt_in (B, T) = <bos> y1 .. -> logits (B, T, V)
  Variable forward(const Tensor& images, const Tensor& tgt_in);

  // The decoding interface (nn/decoding/encoder_decoder.h). The source is the batch of images (B, C_in, H,
  // W), with no lengths (src_lengths must be empty: every cell of the grid is real). The state
  // holds the memory, the LSTM state and the glimpse u; a step is step() above, and with
  // need_weights it records a_t as one layer and one head, (N, 1, 1, S) per step.
  Variable logits(const Tensor& images, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                  const std::vector<int64_t>&) override;
  std::unique_ptr<DecoderState> start(const Tensor& images, const std::vector<int64_t>& src_lengths,
                                      const StartOptions& options) override;
  // tokens (N) -> log-probabilities (N, V)
  Tensor step(DecoderState& state, const Tensor& tokens) override;
  Module& module() override { return *this; }

  ImageToTextOptions options;
  std::shared_ptr<CnnEncoder> encoder;
  std::shared_ptr<Embedding> embedding;
  std::shared_ptr<LSTMCell> cell;
  std::shared_ptr<AttentionScore> score;  // additive: v^T tanh(W s + U f + b)
  std::shared_ptr<Linear> out;            // W_o on [o_t; u_t]
};

}  // namespace seqgrad::nn
