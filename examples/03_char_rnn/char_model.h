// examples/03_char_rnn/char_model.h - example 03's character-level language model: an
// embedding, a recurrent layer ("rnn" or "lstm") and a linear head that predicts the next
// character at every step. It is also a decoder (nn/decoding/encoder_decoder.h), so nn::sample writes
// text with it, as it does for every other model: the source is the prompt. Shared by the
// example and its test (tests/examples/test_char_rnn.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/core/embedding.h"
#include "nn/decoding/encoder_decoder.h"
#include "nn/core/linear.h"
#include "nn/recurrent/seq2seq.h"
#include "tensor/check.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"

namespace seqgrad {

class CharModel : public nn::Module, public nn::EncoderDecoder {
 public:
  CharModel(const std::string& cell, int64_t vocab, int64_t hidden) {
    embed = register_module("embed", std::make_shared<nn::Embedding>(vocab, 16));
    rnn = register_module("rnn", nn::make_recurrent_layer(cell, nn::RNNOptions(16, hidden)));
    head = register_module("head", std::make_shared<nn::Linear>(hidden, vocab));
  }
  std::string name() const override { return "CharModel"; }

  // ids (B, T) -> logits (B, T, V); `state` (L, B, H) is read and replaced by the state after
  // the last character, so a text can be read in pieces.
  Variable forward(const Tensor& ids, nn::RNNState& state) {
    nn::RNNResult r = rnn->forward(embed->forward(ids), state);
    state = r.state;
    return head->forward(r.output);
  }

  // Writing (encoder_decoder.h). The source is a prompt, ids (B, P) (no lengths: every prompt
  // has P characters). start() reads it and keeps the prediction of the character after it.
  // The first step is fed <bos>, as every decoder's first step is; here <bos> means "the
  // prompt has been read", and the step returns that prediction. Each later step reads the
  // character drawn before it.
  struct State : nn::DecoderState {
    nn::RNNState rnn;     // (L, N, H): after the prompt and every character read since
    Tensor after_prompt;  // (N, V): log P(next character | prompt); undefined once returned

    void reorder_rows(const Tensor& index) override {
      rnn.h = Variable(index_select(rnn.h.value(), 1, index));
      if (rnn.c.defined()) rnn.c = Variable(index_select(rnn.c.value(), 1, index));
      if (after_prompt.defined()) after_prompt = index_select(after_prompt, 0, index);
    }
  };

  std::unique_ptr<nn::DecoderState> start(const Tensor& prompt, const std::vector<int64_t>& src_lengths,
                                          const nn::StartOptions&) override {
    check_prompt(prompt, src_lengths);
    auto state = std::make_unique<State>();
    const Tensor logits = forward(prompt, state->rnn).value();  // (B, P, V)
    const int64_t B = logits.size(0), P = logits.size(1), V = logits.size(2);
    state->after_prompt = log_softmax(slice(logits, 1, P - 1, P).reshape({B, V}), -1);
    return state;
  }

  // tokens (N) -> log-probabilities of the next character (N, V)
  Tensor step(nn::DecoderState& base, const Tensor& tokens) override {
    auto& state = static_cast<State&>(base);
    if (state.after_prompt.defined()) {  // the first step: the prompt's prediction
      const Tensor logp = state.after_prompt;
      state.after_prompt = Tensor();
      return logp;
    }
    const int64_t N = tokens.numel();
    const Tensor logits = forward(tokens.reshape({N, 1}), state.rnn).value();  // (N, 1, V)
    return log_softmax(logits.reshape({N, logits.size(2)}), -1);
  }

  // Teacher forcing in the same terms: prompt (B, P), tgt_in (B, T) = <bos> y1 .. y_{T-1} ->
  // logits (B, T, V), row t predicting y_{t+1} from the prompt and y1 .. y_t.
  Variable logits(const Tensor& prompt, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                  const std::vector<int64_t>&) override {
    check_prompt(prompt, src_lengths);
    const int64_t P = prompt.size(1), T = tgt_in.size(1);
    nn::RNNState state;
    const Tensor ids = T > 1 ? concat({prompt, slice(tgt_in, 1, 1, T)}, 1) : prompt;  // (B, P + T - 1)
    const Variable all = forward(ids, state);                                          // (B, P + T - 1, V)
    return slice(all, 1, P - 1, P + T - 1);
  }

  Module& module() override { return *this; }

  std::shared_ptr<nn::Embedding> embed;
  std::shared_ptr<nn::RecurrentLayer> rnn;
  std::shared_ptr<nn::Linear> head;

 private:
  static void check_prompt(const Tensor& prompt, const std::vector<int64_t>& src_lengths) {
    check(prompt.dim() == 2 && prompt.size(1) >= 1, "CharModel: expected a prompt of shape (B, P) with P >= 1, got ",
          prompt.shape());
    check(src_lengths.empty(), "CharModel: expected no prompt lengths (every prompt has P characters), got ",
          src_lengths.size());
  }
};

}  // namespace seqgrad
