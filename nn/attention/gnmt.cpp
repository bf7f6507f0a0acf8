// nn/attention/gnmt.cpp - the GNMT encoder and decoder, layer by layer, and one decoding step.
#include "nn/attention/gnmt.h"
#include "nn/decoding/model_kind.h"

#include "tensor/check.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"

namespace seqgrad::nn {

namespace {

// One unidirectional (or bidirectional) single-layer LSTM: PyTorch's names, weight_ih_l0 ...
std::shared_ptr<LSTM> lstm_layer(int64_t input_size, int64_t hidden_size, bool bidirectional = false) {
  return std::make_shared<LSTM>(RNNOptions(input_size, hidden_size).with_bidirectional(bidirectional));
}

}  // namespace

// ================================================================================================
// Encoder

GNMTEncoder::GNMTEncoder(const GNMTOptions& o) : options_(o) {
  const int64_t H = o.hidden_size;
  embedding = register_module("embedding", std::make_shared<Embedding>(o.src_vocab, o.embed_dim, /*padding_idx=*/0));
  layers = register_module("layers", std::make_shared<ModuleList<LSTM>>());
  // Layer 1 reads the sentence both ways, H per direction side by side (2H); layer 2 reads those
  // 2H and brings the width back to H, acting as the projection; from layer 3 on, H -> H.
  layers->push_back(lstm_layer(o.embed_dim, H, /*bidirectional=*/true));
  layers->push_back(lstm_layer(2 * H, H));
  for (int64_t l = 2; l < o.num_layers; ++l) layers->push_back(lstm_layer(H, H));
}

// [docs:gnmt_encoder]
Variable GNMTEncoder::forward(const Tensor& src, const std::vector<int64_t>& lengths) {
  check(src.dim() == 2, "GNMTEncoder: expected source ids of shape (B, S), got ", src.shape());
  const real p = options_.dropout;
  Variable x = embedding->forward(src);  // (B, S, E)
  for (size_t l = 0; l < layers->size(); ++l) {
    const Variable y = (*layers)[l]->forward(dropout(x, p, is_training()), RNNState{}, lengths).output;
    // x_{l+1} = LSTM_l(x_l) + x_l from layer 3 on: the sum carries the gradient past the layer
    // unchanged (d x_{l+1} / d x_l = I + d LSTM_l / d x_l), so a deep stack still trains.
    const bool residual = options_.residual && static_cast<int64_t>(l) >= kFirstResidualLayer;
    x = residual ? y + x : y;  // (B, S, 2H) after layer 1, then (B, S, H)
  }
  return x;  // padded positions stay zero: every layer outputs zeros there
}
// [docs:end]

// ================================================================================================
// Decoder

GNMTDecoder::GNMTDecoder(const GNMTOptions& o) : options_(o) {
  const int64_t H = o.hidden_size;
  embedding = register_module("embedding", std::make_shared<Embedding>(o.tgt_vocab, o.embed_dim, /*padding_idx=*/0));
  layers = register_module("layers", std::make_shared<ModuleList<LSTM>>());
  layers->push_back(lstm_layer(o.embed_dim, H));                                 // reads y_{t-1} alone
  for (int64_t l = 1; l < o.num_layers; ++l) layers->push_back(lstm_layer(2 * H, H));  // [x_l; c_t]
  score = register_module("score", make_score(o.score, ScoreOptions(H, H).with_attention_size(o.attention_size)
                                                         .with_max_positions(o.max_source_len)
                                                         .with_settings(o.score_settings)));
  out = register_module("out", std::make_shared<Linear>(2 * H, o.tgt_vocab));
}

// [docs:gnmt_decoder]
GNMTOutput GNMTDecoder::forward(const Tensor& tokens, const Variable& memory, const Tensor& mask,
                                std::vector<RNNState>& states) {
  GNMTOutput r = this->states(tokens, memory, mask, states);
  r.logits = out->forward(r.features);  // W_out [x_L; c_t] (B, T, V)
  return r;
}

GNMTOutput GNMTDecoder::states(const Tensor& tokens, const Variable& memory, const Tensor& mask,
                               std::vector<RNNState>& states) {
  check(tokens.dim() == 2 && memory.dim() == 3 && tokens.size(0) == memory.size(0),
        "GNMTDecoder: expected target ids (B, T) and a memory (B, S, H) with the same B, got ", tokens.shape(), " and ",
        memory.shape());
  const real p = options_.dropout;
  const bool training = is_training();
  states.resize(layers->size());
  // Layer 1 over the whole target, then the attention of every step at once: its queries are
  // layer 1's outputs, known for all t before anything else runs.
  RNNResult bottom = (*layers)[0]->forward(dropout(embedding->forward(tokens), p, training), states[0]);  // (B, T, H)
  states[0] = bottom.state;
  const AttentionResult attention = attend(score->forward(bottom.output, memory), memory, mask);
  const Variable& c = attention.context;  // (B, T, H): c_t for every step
  Variable x = bottom.output;
  for (size_t l = 1; l < layers->size(); ++l) {
    RNNResult r = (*layers)[l]->forward(concat({dropout(x, p, training), c}, 2), states[l]);  // [x_l; c_t] (B, T, 2H)
    states[l] = r.state;
    const bool residual = options_.residual && static_cast<int64_t>(l) >= kFirstResidualLayer;
    x = residual ? r.output + x : r.output;  // (B, T, H)
  }
  return {Variable(), attention.weights, concat({dropout(x, p, training), c}, 2)};  // [x_L; c_t] (B, T, 2H)
}
// [docs:end]

// ================================================================================================
// GNMT

GNMT::GNMT(const GNMTOptions& o) : options(o) {
  check(o.src_vocab > 4 && o.tgt_vocab > 4, "GNMT: expected vocabularies larger than the 4 special tokens, got ",
        o.src_vocab, " and ", o.tgt_vocab);
  check(o.num_layers >= 2, "GNMT: expected num_layers >= 2 (a bidirectional bottom layer and one above it), got ",
        o.num_layers);
  encoder = register_module("encoder", std::make_shared<GNMTEncoder>(o));
  decoder = register_module("decoder", std::make_shared<GNMTDecoder>(o));
}

std::string GNMT::extra_repr() const {
  return cat("layers=", options.num_layers, ", hidden=", options.hidden_size, ", score=", options.score,
             ", residual=", options.residual ? "true" : "false");
}

namespace {

Tensor source_mask(const std::vector<int64_t>& lengths, int64_t B, int64_t S) {
  return padding_mask(lengths.empty() ? std::vector<int64_t>(B, S) : lengths, S);  // (B, S)
}

}  // namespace

GNMTOutput GNMT::forward(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in) {
  GNMTOutput r = decoder_states(src, src_lengths, tgt_in);
  r.logits = decoder->out->forward(r.features);  // (B, T, V)
  return r;
}

Variable GNMT::training_loss(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                             const std::vector<int64_t>&, const Tensor& tgt_out, const CrossEntropyOptions& options) {
  return projected_cross_entropy(decoder_states(src, src_lengths, tgt_in).features, *decoder->out, tgt_out, options);
}

GNMTOutput GNMT::decoder_states(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in) {
  decoder->check_child("score", decoder->score.get());  // a score swapped in must be registered (replace_module)
  check(tgt_in.dim() == 2 && tgt_in.size(0) == src.size(0), "GNMT: expected target ids of shape (", src.size(0),
        ", T), got ", tgt_in.shape());
  const Variable memory = encoder->forward(src, src_lengths);  // (B, S, H)
  std::vector<RNNState> states;  // every decoder layer starts from zeros: the source arrives by attention
  return decoder->states(tgt_in, memory, source_mask(src_lengths, src.size(0), src.size(1)), states);
}

// ================================================================================================
// Decoding, one token at a time (nn/decoding/encoder_decoder.h)

namespace {

struct GNMTState : DecoderState {
  Variable memory;                // (N, S, H)
  Tensor mask;                    // (N, S): 1 at padding
  std::vector<RNNState> layers;   // per decoder layer, (1, N, H) each
  bool need_weights = false;

  void reorder_rows(const Tensor& index) override {
    memory = Variable(index_select(memory.value(), 0, index));
    mask = index_select(mask, 0, index);
    auto rows = [&](const Variable& v) { return v.defined() ? Variable(index_select(v.value(), 1, index)) : v; };
    for (RNNState& s : layers) s = {rows(s.h), rows(s.c)};
  }
};

}  // namespace

std::unique_ptr<DecoderState> GNMT::start(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                          const StartOptions& start_options) {
  decoder->check_child("score", decoder->score.get());
  auto state = std::make_unique<GNMTState>();
  state->memory = encoder->forward(src, src_lengths);
  state->mask = source_mask(src_lengths, src.size(0), src.size(1));
  state->need_weights = start_options.need_weights;
  return state;
}

// tokens (N) -> log-probabilities (N, V): the decoder run on one token.
Tensor GNMT::step(DecoderState& base, const Tensor& tokens) {
  auto& state = static_cast<GNMTState&>(base);
  const int64_t N = tokens.numel();
  const GNMTOutput r = decoder->forward(tokens.reshape({N, 1}), state.memory, state.mask, state.layers);
  if (state.need_weights) {
    const Tensor w = r.weights.value();  // (N, 1, S)
    state.record_attention({w.reshape({N, 1, 1, w.size(2)})});
  }
  return log_softmax(r.logits.value().reshape({N, r.logits.size(2)}), -1);  // (N, V)
}

// ================================================================================================
// The model kind "gnmt" (nn/decoding/model_kind.h)

namespace {

std::vector<Option> gnmt_options(const Settings* chosen) {
  Option residual = switch_option("residual", true, "gnmt: no residual connections (they add each layer's input "
                                                     "from layer 3 on)");
  residual.flag = "no-residual";
  residual.flag_turns_off = true;
  std::vector<Option> o{layers_option(), hidden_option(), dim_option(), dropout_option(), attention_option(), residual};
  for (const Option& extra : score_options(chosen)) o.push_back(extra);
  return o;
}

void gnmt_check(const Settings& s) {
  check(s.integer("layers") >= 2, "--arch gnmt needs --layers 2 or more (a bidirectional bottom layer and at least "
        "one above it), got ", s.integer("layers"));
}

std::shared_ptr<EncoderDecoder> build_gnmt(const Settings& s, const ModelContext& c) {
  return std::make_shared<GNMT>(
      GNMTOptions(c.src_vocab, c.tgt_vocab).with_num_layers(s.integer("layers")).with_hidden_size(s.integer("hidden"))
          .with_embed_dim(s.integer("dim")).with_dropout(static_cast<real>(s.number("dropout")))
          .with_residual(s.on("residual")).with_score(s.text("attention"), s)
          .with_attention_size(s.has("attention_size") ? s.integer("attention_size") : 0).with_max_source_len(c.max_len));
}

}  // namespace

SEQGRAD_REGISTER_MODEL(ModelKind{"gnmt", "Google's neural machine translation system (Wu et al., 2016)", gnmt_options,
                                 gnmt_check, build_gnmt})

}  // namespace seqgrad::nn
