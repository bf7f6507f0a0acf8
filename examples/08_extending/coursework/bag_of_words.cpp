// examples/08_extending/coursework/bag_of_words.cpp - a new model kind in one file: "bow", the
// encoder-decoder whose encoder forgets word order.
//
// The source's context vector is the mean (or, with --bow-pool max, the largest entry) of its
// word embeddings, over the real positions:
//   c = (1/S) sum_s E[x_s]                                      (B, E)
// so "a b c" and "c b a" give the same c. The decoder is the library's (nn/recurrent/seq2seq.h:
// a GRU fed [embedding; c] at every step), started from tanh(W c + b). Sorting needs no order
// and it learns to sort; reversing needs order, and it learns which letters to write but not
// in what order: the argument for a recurrent encoder, and then for attention, in one file.
// Everything the tool does with a model (train, translate, beam search, eval, save, load)
// comes from the nn::EncoderDecoder interface: logits() for teacher forcing, start() and
// step() for decoding.
//   make seqgrad EXTRA=examples/08_extending/coursework/bag_of_words.cpp
//   build/seqgrad train --task sort --arch bow --out bow.safetensors
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "seqgrad.h"

using namespace seqgrad;

// [docs:bag_of_words]
namespace {

class BagOfWords : public nn::Module, public nn::EncoderDecoder {
 public:
  BagOfWords(const nn::Seq2SeqOptions& o, bool max_pool) : options_(o), max_pool_(max_pool) {
    embedding = register_module("embedding", std::make_shared<nn::Embedding>(o.src_vocab, o.embed_dim, /*pad=*/0));
    bridge = register_module("bridge", std::make_shared<nn::Linear>(o.embed_dim, o.num_layers * o.hidden_size));
    decoder = register_module("decoder", std::make_shared<nn::Decoder>(o, /*context_size=*/o.embed_dim));
  }
  std::string name() const override { return "BagOfWords"; }

  // src (B, S) ids, lengths (B) -> c (B, E): the pooled embeddings of each row's real tokens.
  Variable context(const Tensor& src, const std::vector<int64_t>& lengths) {
    const int64_t B = src.size(0), S = src.size(1);
    const Variable e = embedding->forward(src);  // (B, S, E)
    Tensor pad = zeros({B, S, 1}), count = Tensor::empty({B, 1});  // 1 where a position is padding; real positions
    for (int64_t b = 0; b < B; ++b) {
      const int64_t length = lengths.empty() ? S : lengths[static_cast<size_t>(b)];
      for (int64_t s = length; s < S; ++s) pad.data()[b * S + s] = 1;
      count.data()[b] = static_cast<real>(length);
    }
    if (max_pool_) return max(masked_fill(e, pad, -std::numeric_limits<real>::infinity()), 1);
    return sum(masked_fill(e, pad, 0), 1) / Variable(count);  // padding left out, whatever it embeds as
  }
  // The decoder's first state, (L, B, H): tanh(W c + b), one slice per layer.
  nn::RNNState initial_state(const Variable& c) {
    const int64_t B = c.size(0), L = options_.num_layers, H = options_.hidden_size;
    return nn::RNNState{permute(reshape(tanh(bridge->forward(c)), {B, L, H}), {1, 0, 2}), Variable()};
  }

  // Teacher forcing: tgt_in (B, T) -> logits (B, T, V).
  Variable logits(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                  const std::vector<int64_t>&) override {
    const Variable c = context(src, src_lengths);
    nn::RNNState state = initial_state(c);
    return decoder->forward(tgt_in, c, state);
  }

  // Decoding: the state is c and the decoder's hidden state; a step is the decoder on one token.
  struct State : nn::DecoderState {
    Variable context;    // (N, E)
    nn::RNNState rnn;    // (L, N, H)
    void reorder_rows(const Tensor& index) override {  // row i continues row index[i]
      context = Variable(index_select(context.value(), 0, index));
      rnn.h = Variable(index_select(rnn.h.value(), 1, index));
    }
  };
  std::unique_ptr<nn::DecoderState> start(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                          const nn::StartOptions&) override {
    auto state = std::make_unique<State>();
    state->context = context(src, src_lengths);
    state->rnn = initial_state(state->context);
    return state;
  }
  // tokens (N) -> log P(next token) (N, V).
  Tensor step(nn::DecoderState& base, const Tensor& tokens) override {
    auto& state = static_cast<State&>(base);
    const int64_t N = tokens.numel();
    const Variable out = decoder->forward(tokens.reshape({N, 1}), state.context, state.rnn);  // (N, 1, V)
    return log_softmax(out.value().reshape({N, out.size(2)}), -1);
  }
  nn::Module& module() override { return *this; }
  int64_t width() const override { return options_.embed_dim; }

  std::shared_ptr<nn::Embedding> embedding;
  std::shared_ptr<nn::Linear> bridge;     // (E -> L*H)
  std::shared_ptr<nn::Decoder> decoder;   // the library's recurrent decoder, a GRU

 private:
  nn::Seq2SeqOptions options_;
  bool max_pool_;
};

// The kind's options: the library's shared ones, and one of its own.
std::vector<nn::Option> bow_options(const nn::Settings*) {
  return {nn::layers_option(), nn::hidden_option(), nn::dim_option(), nn::dropout_option(),
          choice_option("bow_pool", "mean", [] { return std::vector<std::string>{"mean", "max"}; },
                        "bow: how the source's embeddings become one vector, their mean or their largest entries")};
}

std::shared_ptr<nn::EncoderDecoder> build_bow(const nn::Settings& s, const nn::ModelContext& c) {
  return std::make_shared<BagOfWords>(nn::Seq2SeqOptions(c.src_vocab, c.tgt_vocab)
                                          .with_cell("gru").with_num_layers(s.integer("layers"))
                                          .with_hidden_size(s.integer("hidden")).with_embed_dim(s.integer("dim"))
                                          .with_dropout(static_cast<real>(s.number("dropout"))),
                                      s.text("bow_pool") == "max");
}

}  // namespace

// The one line that makes "bow" a model kind: seqgrad train --arch bow.
SEQGRAD_REGISTER_MODEL(nn::ModelKind{"bow", "the bag of words: the source as the mean of its embeddings, order forgotten",
                                     bow_options, nullptr, build_bow})
// [docs:end]
