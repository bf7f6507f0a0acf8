// nn/recurrent/seq2seq.cpp - encoder, context, bridge, decoder, and one decoding step.
#include "nn/recurrent/seq2seq.h"
#include "nn/decoding/model_kind.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "nn/recurrent/gru.h"
#include "nn/recurrent/lstm.h"
#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"

namespace seqgrad::nn {

// ================================================================================================
// Encoder

Encoder::Encoder(const Seq2SeqOptions& o) : options_(o) {
  embedding = register_module("embedding", std::make_shared<Embedding>(o.src_vocab, o.embed_dim, /*padding_idx=*/0));
  rnn = register_module("rnn", make_recurrent_layer(o.cell, RNNOptions(o.embed_dim, o.hidden_size)
                                                           .with_num_layers(o.num_layers)
                                                           .with_bidirectional(o.bidirectional)
                                                           .with_dropout(o.dropout)
                                                           .with_settings(o.cell_settings)));
}

// [docs:encoder_forward]
EncoderOutput Encoder::forward(const Tensor& src, const std::vector<int64_t>& lengths) {
  check(src.dim() == 2, "Encoder: expected source ids of shape (B, S), got ", src.shape());
  const int64_t B = src.size(0), S = src.size(1), H = options_.hidden_size, D = options_.bidirectional ? 2 : 1;
  Variable x = dropout(embedding->forward(src), options_.dropout, is_training());  // (B, S, E)
  RNNResult r = rnn->forward(x, RNNState{}, lengths);
  EncoderOutput out{r.output, r.state, Variable()};
  switch (options_.context) {
    case ContextKind::Last: {
      // The top layer's final state, both directions side by side: rows (L-1)*D .. L*D-1.
      const int64_t top = (options_.num_layers - 1) * D;
      Variable h = slice(r.state.h, 0, top, top + D);                 // (D, B, H)
      out.context = reshape(permute(h, {1, 0, 2}), {B, D * H});       // (B, D*H)
      break;
    }
    case ContextKind::Mean: {
      // Padded outputs are zero, so the sum over S counts real positions only.
      Tensor len = Tensor::empty({B, 1});
      for (int64_t b = 0; b < B; ++b) len.data()[b] = static_cast<real>(lengths.empty() ? S : lengths[b]);
      out.context = sum(r.output, 1) / Variable(len);                  // (B, D*H)
      break;
    }
    case ContextKind::Max: {
      Tensor pad = zeros({B, S, 1});
      for (int64_t b = 0; b < B; ++b)
        for (int64_t s = lengths.empty() ? S : lengths[b]; s < S; ++s) pad.data()[b * S + s] = 1;
      out.context = max(masked_fill(r.output, pad, -std::numeric_limits<real>::infinity()), 1);  // (B, D*H)
      break;
    }
  }
  return out;
}
// [docs:end]

// ================================================================================================
// Decoder

Decoder::Decoder(const Seq2SeqOptions& o, int64_t context_size) {
  embedding = register_module("embedding", std::make_shared<Embedding>(o.tgt_vocab, o.embed_dim, /*padding_idx=*/0));
  rnn = register_module("rnn", make_recurrent_layer(o.cell, RNNOptions(o.embed_dim + context_size, o.hidden_size)
                                                           .with_num_layers(o.num_layers)
                                                           .with_dropout(o.dropout)
                                                           .with_settings(o.cell_settings)));
  out = register_module("out", std::make_shared<Linear>(o.hidden_size, o.tgt_vocab));
}

// [docs:decoder_forward]
Variable Decoder::forward(const Tensor& tokens, const Variable& context, RNNState& state) {
  return out->forward(states(tokens, context, state));  // (B, T, H) -> (B, T, V)
}

Variable Decoder::states(const Tensor& tokens, const Variable& context, RNNState& state) {
  const int64_t B = tokens.size(0), T = tokens.size(1), C = context.size(1);
  Variable e = embedding->forward(tokens);                                      // (B, T, E)
  Variable c = unsqueeze(context, 1) + Variable(zeros({B, T, C}));             // (B, T, C): c at every step
  RNNResult r = rnn->forward(concat({e, c}, 2), state);
  state = r.state;
  return r.output;                                                              // (B, T, H)
}
// [docs:end]

// ================================================================================================
// Seq2Seq

Seq2Seq::Seq2Seq(const Seq2SeqOptions& o) : options(o) {
  check(o.src_vocab > 4 && o.tgt_vocab > 4, "Seq2Seq: expected vocabularies larger than the 4 special tokens, got ",
        o.src_vocab, " and ", o.tgt_vocab);
  encoder = register_module("encoder", std::make_shared<Encoder>(o));
  bridge = register_module("bridge", std::make_shared<Linear>(encoder->output_size(), o.num_layers * o.hidden_size));
  decoder = register_module("decoder", std::make_shared<Decoder>(o, encoder->output_size()));
}

// [docs:bridge]
RNNState Seq2Seq::initial_state(const Variable& context) {
  const int64_t B = context.size(0), L = options.num_layers, H = options.hidden_size;
  Variable h = permute(reshape(tanh(bridge->forward(context)), {B, L, H}), {1, 0, 2});  // (L, B, H)
  RNNState s{h, Variable()};
  if (decoder->rnn->has_cell_state()) s.c = Variable(zeros({L, B, H}));
  return s;
}
// [docs:end]

Variable Seq2Seq::forward(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in) {
  return decoder->out->forward(decoder_states(src, src_lengths, tgt_in));  // (B, T, V)
}

Variable Seq2Seq::training_loss(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                                const std::vector<int64_t>&, const Tensor& tgt_out, const CrossEntropyOptions& options) {
  return projected_cross_entropy(decoder_states(src, src_lengths, tgt_in), *decoder->out, tgt_out, options);
}

// Teacher forcing up to the output layer: the decoder's top state at every step (B, T, H).
Variable Seq2Seq::decoder_states(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in) {
  check(tgt_in.dim() == 2 && tgt_in.size(0) == src.size(0), "Seq2Seq: expected target ids of shape (", src.size(0),
        ", T), got ", tgt_in.shape());
  EncoderOutput enc = encoder->forward(encoder_input(src, src_lengths), src_lengths);
  RNNState state = initial_state(enc.context);
  return decoder->states(tgt_in, enc.context, state);
}

Tensor Seq2Seq::encoder_input(const Tensor& src, const std::vector<int64_t>& src_lengths) const {
  if (!options.reverse_source) return src;
  check(src.dim() == 2, "Seq2Seq: expected source ids of shape (B, S), got ", src.shape());
  const int64_t B = src.size(0), S = src.size(1);
  Tensor reversed = src.clone();
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = b < static_cast<int64_t>(src_lengths.size()) ? std::min(std::max<int64_t>(src_lengths[b], 0), S) : S;
    std::reverse(reversed.data() + b * S, reversed.data() + b * S + n);
  }
  return reversed;
}

// ================================================================================================
// Decoding, one token at a time (nn/decoding/encoder_decoder.h)

namespace {

struct Seq2SeqState : DecoderState {
  Variable context;  // (N, D*H): read at every step
  RNNState rnn;      // (L, N, H)

  void reorder_rows(const Tensor& index) override {
    context = Variable(index_select(context.value(), 0, index));
    rnn.h = Variable(index_select(rnn.h.value(), 1, index));
    if (rnn.c.defined()) rnn.c = Variable(index_select(rnn.c.value(), 1, index));
  }
};

}  // namespace

std::unique_ptr<DecoderState> Seq2Seq::start(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                             const StartOptions&) {
  auto state = std::make_unique<Seq2SeqState>();
  state->context = encoder->forward(encoder_input(src, src_lengths), src_lengths).context;
  state->rnn = initial_state(state->context);
  return state;
}

// [docs:s2s_step]
// One step is the decoder run on one token: tokens (N) -> log-probabilities (N, V).
Tensor Seq2Seq::step(DecoderState& base, const Tensor& tokens) {
  auto& state = static_cast<Seq2SeqState&>(base);
  const int64_t N = tokens.numel();
  const Variable logits = decoder->forward(tokens.reshape({N, 1}), state.context, state.rnn);  // (N, 1, V)
  return log_softmax(logits.value().reshape({N, logits.size(2)}), -1);
}
// [docs:end]

// ================================================================================================
// The model kinds "rnn", "gru", "lstm", ...: one per registered cell (nn/decoding/model_kind.h)

namespace {

std::vector<Option> seq2seq_options(const Settings* chosen) {
  Option context = choice_option("context", "last", [] { return std::vector<std::string>{"last", "mean", "max"}; },
                                 "plain seq2seq (rnn, gru, lstm): the source's context vector is the encoder's last "
                                 "state, or the mean or max of all");
  Option reverse = switch_option("reverse_source", false, "plain seq2seq (rnn, gru, lstm): the encoder reads the "
                                                           "source backwards (Sutskever et al.)");
  std::vector<Option> o{layers_option(), hidden_option(), dim_option(), dropout_option(), bidirectional_option(),
                        context, reverse};
  for (const Option& extra : cell_options(chosen)) o.push_back(extra);  // the cell's own (model_kind.h)
  return o;
}

std::shared_ptr<EncoderDecoder> build_seq2seq(const Settings& s, const ModelContext& c) {
  const std::string context = s.text("context");
  return std::make_shared<Seq2Seq>(
      Seq2SeqOptions(c.src_vocab, c.tgt_vocab).with_cell(c.cell(), s).with_num_layers(s.integer("layers"))
          .with_hidden_size(s.integer("hidden")).with_embed_dim(s.integer("dim")).with_bidirectional(s.on("bidirectional"))
          .with_dropout(static_cast<real>(s.number("dropout"))).with_reverse_source(s.on("reverse_source"))
          .with_context(context == "mean" ? ContextKind::Mean : context == "max" ? ContextKind::Max : ContextKind::Last));
}

}  // namespace

SEQGRAD_REGISTER_MODEL(ModelKind{"{cell}", "the encoder-decoder: the source as one context vector (Sutskever et al., "
                                           "Cho et al., 2014)", seq2seq_options, nullptr, build_seq2seq})

}  // namespace seqgrad::nn
