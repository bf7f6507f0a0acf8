// nn/vision/image_to_text.cpp - the attention decoder over an image grid: one step, teacher forcing,
// and the decoding interface (start, step) that greedy decoding, beam search and sampling use.
#include "nn/vision/image_to_text.h"

#include "tensor/check.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"

namespace seqgrad::nn {

ImageToText::ImageToText(const ImageToTextOptions& o) : options(o) {
  check(o.vocab_size > 0 && o.embed_dim > 0 && o.hidden_size > 0 && o.attention_size > 0, name(),
        ": expected positive vocab_size, embed_dim, hidden_size and attention_size, got ", o.vocab_size, ", ",
        o.embed_dim, ", ", o.hidden_size, " and ", o.attention_size);
  encoder = register_module("encoder", std::make_shared<CnnEncoder>(o.encoder));
  const int64_t D = encoder->memory_size();
  embedding = register_module("embedding", std::make_shared<Embedding>(o.vocab_size, o.embed_dim));
  cell = register_module("cell", std::make_shared<LSTMCell>(o.embed_dim + D, o.hidden_size));
  if (o.attention) score = register_module("score", make_score(o.score, o.hidden_size, D, o.attention_size));
  out = register_module("out", std::make_shared<Linear>(o.hidden_size + D, o.vocab_size));
}

std::string ImageToText::extra_repr() const {
  return cat("vocab_size=", options.vocab_size, ", hidden_size=", options.hidden_size,
             ", attention=", options.attention ? "additive" : "none (mean of the memory)");
}

Variable ImageToText::encode(const Tensor& images) { return encoder->forward(Variable(images)); }

// [docs:image_to_text_step]
Variable ImageToText::step(const Tensor& y_prev, RNNState& state, Variable& u, const Variable& memory,
                           Variable* weights) {
  const int64_t B = memory.size(0), S = memory.size(1);
  state = cell->forward(concat({embedding->forward(y_prev), u}, 1), state);  // s_t from [E y_{t-1}; u_{t-1}]
  if (options.attention) {
    const AttentionResult a = attend(score->forward(state.h, memory), memory, Tensor());  // a_t (B, S)
    u = a.context;                                                                        // u_t (B, D)
    if (weights) *weights = a.weights;
  } else {
    u = mean(memory, 1);  // the whole image, the same vector at every step
    if (weights) *weights = Variable(full({B, S}, real(1) / static_cast<real>(S)));
  }
  return out->forward(concat({state.h, u}, 1));  // W_o [o_t; u_t] (B, V)
}
// [docs:end]

Variable ImageToText::forward(const Tensor& images, const Tensor& tgt_in) {
  check(tgt_in.dim() == 2 && images.dim() >= 1 && tgt_in.size(0) == images.size(0), name(),
        ": expected tgt_in of shape (", images.dim() >= 1 ? images.size(0) : 0, ", T), one row per image, got ",
        tgt_in.shape());
  const Variable memory = encode(images);  // (B, S, D)
  const int64_t B = tgt_in.size(0), T = tgt_in.size(1);
  RNNState state;
  Variable u = mean(memory, 1);  // u_0 (B, D)
  std::vector<Variable> logits;
  for (int64_t t = 0; t < T; ++t) logits.push_back(step(slice(tgt_in, 1, t, t + 1).reshape({B}), state, u, memory));
  return stack(logits, 1);  // (B, T, V)
}

// ================================================================================================
// Decoding, one token at a time (nn/decoding/encoder_decoder.h)

namespace {

void check_no_lengths(const std::vector<int64_t>& src_lengths) {
  check(src_lengths.empty(), "ImageToText: expected no source lengths (every cell of an image's grid is real), got ",
        src_lengths.size());
}

struct ImageToTextState : DecoderState {
  Variable memory;  // (N, S, D): the image's grid, f
  RNNState lstm;    // (N, H): s_t (undefined before the first step: the cell starts from zeros)
  Variable u;       // (N, D): the glimpse of the last step (u_0: the mean of the memory)
  bool need_weights = false;

  void reorder_rows(const Tensor& index) override {
    auto rows = [&](const Variable& v) { return v.defined() ? Variable(index_select(v.value(), 0, index)) : v; };
    memory = rows(memory);
    lstm = {rows(lstm.h), rows(lstm.c)};
    u = rows(u);
  }
};

}  // namespace

Variable ImageToText::logits(const Tensor& images, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                             const std::vector<int64_t>&) {
  check_no_lengths(src_lengths);
  return forward(images, tgt_in);
}

// [docs:image_to_text_decode]
std::unique_ptr<DecoderState> ImageToText::start(const Tensor& images, const std::vector<int64_t>& src_lengths,
                                                 const StartOptions& start_options) {
  check_no_lengths(src_lengths);
  auto state = std::make_unique<ImageToTextState>();
  state->memory = encode(images);     // (B, S, D)
  state->u = mean(state->memory, 1);  // u_0 (B, D)
  state->need_weights = start_options.need_weights;
  return state;
}

// tokens (N) -> log-probabilities (N, V); a_t is recorded as one layer, one head.
Tensor ImageToText::step(DecoderState& base, const Tensor& tokens) {
  auto& state = static_cast<ImageToTextState&>(base);
  const int64_t N = tokens.numel();
  Variable a;  // a_t (N, S)
  const Variable logits = step(tokens.reshape({N}), state.lstm, state.u, state.memory, state.need_weights ? &a : nullptr);
  if (state.need_weights) state.record_attention({a.value().reshape({N, 1, 1, a.size(1)})});
  return log_softmax(logits.value(), -1);  // (N, V)
}
// [docs:end]

}  // namespace seqgrad::nn
