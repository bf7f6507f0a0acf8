// nn/image_to_text.cpp - the attention decoder over an image grid: one step, teacher forcing,
// greedy reading.
#include "nn/image_to_text.h"

#include "tensor/check.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"

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

std::vector<ImageReading> ImageToText::read(const Tensor& images, int64_t bos, int64_t eos, int64_t max_len) {
  check(max_len >= 1, name(), ": expected max_len >= 1, got ", max_len);
  NoGradGuard no_grad;
  const bool was_training = is_training();
  eval();
  const Variable memory = encode(images);
  const int64_t B = memory.size(0), S = memory.size(1);
  RNNState state;
  Variable u = mean(memory, 1);
  Tensor y = full({B}, static_cast<real>(bos));
  std::vector<ImageReading> r(B);
  std::vector<std::vector<Tensor>> looked(B);
  std::vector<bool> done(B, false);
  for (int64_t t = 0; t < max_len; ++t) {
    Variable w;
    y = argmax(step(y, state, u, memory, &w).value(), -1);  // (B)
    for (int64_t b = 0; b < B; ++b) {
      if (done[b]) continue;
      looked[b].push_back(slice(w.value(), 0, b, b + 1).reshape({S}));
      const int64_t id = static_cast<int64_t>(y.data()[b]);
      if (id == eos) done[b] = true;
      else r[b].tokens.push_back(id);
    }
  }
  for (int64_t b = 0; b < B; ++b) r[b].weights = stack(looked[b], 0);  // (steps, S)
  train(was_training);
  return r;
}

}  // namespace seqgrad::nn
