// nn/attention_seq2seq.cpp - the attention decoders, one step at a time.
#include "nn/attention_seq2seq.h"

#include <cmath>
#include <limits>

#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"

namespace seqgrad::nn {

AttentionSeq2Seq::AttentionSeq2Seq(const AttentionSeq2SeqOptions& o) : options(o) {
  check(o.src_vocab > 4 && o.tgt_vocab > 4, "AttentionSeq2Seq: expected vocabularies larger than the 4 special tokens, got ",
        o.src_vocab, " and ", o.tgt_vocab);
  check(!o.local || o.window >= 1, "AttentionSeq2Seq: expected a local window D >= 1, got ", o.window);
  check(o.local || !o.monotonic, "AttentionSeq2Seq: monotonic (local-m) alignment needs local attention");
  const int64_t H = o.hidden_size, E = o.embed_dim;
  encoder = register_module("encoder", std::make_shared<Encoder>(Seq2SeqOptions(o.src_vocab, o.tgt_vocab)
                                                                       .with_embed_dim(E)
                                                                       .with_hidden_size(H)
                                                                       .with_num_layers(o.num_layers)
                                                                       .with_cell(o.cell)
                                                                       .with_bidirectional(o.bidirectional)
                                                                       .with_dropout(o.dropout)));
  const int64_t M = encoder->output_size();  // memory width: H, or 2H for a bidirectional encoder
  bridge = register_module("bridge", std::make_shared<Linear>(M, H));
  embedding = register_module("embedding", std::make_shared<Embedding>(o.tgt_vocab, E, /*padding_idx=*/0));
  const bool luong = o.style == AttentionStyle::Luong;
  // Bahdanau's RNN reads [y; c_t]; Luong's reads [y; h~_{t-1}] (input feeding).
  cell = register_module("cell", make_recurrent_cell(o.cell, luong ? E + H : E + M, H));
  score = register_module("score", make_score(o.score, H, M, o.attention_size > 0 ? o.attention_size : H,
                                                   o.max_source_len));
  if (luong) combine = register_module("combine", std::make_shared<Linear>(M + H, H, /*bias=*/false));
  out = register_module("out", std::make_shared<Linear>(luong ? H : H + M, o.tgt_vocab));
  if (o.local && !o.monotonic) {  // local-p predicts its window's centre
    position = register_module("position", std::make_shared<Linear>(H, H, /*bias=*/false));
    position_v = register_parameter("position_v", randn({H}) / std::sqrt(static_cast<real>(H)));
  }
}

std::string AttentionSeq2Seq::extra_repr() const {
  return cat(options.style == AttentionStyle::Luong ? "luong" : "bahdanau", ", score=", score_name(options.score),
             options.local ? cat(options.monotonic ? ", local-m D=" : ", local-p D=", options.window) : std::string(), options.hard ? ", hard" : "");
}

// ================================================================================================
// Alignment

// [docs:align]
Variable AttentionSeq2Seq::align(const Variable& query, const Source& source) {
  const Variable& memory = source.memory;
  Variable scores = score->forward(query, memory);  // (B, S)
  if (!options.local) return masked_softmax(scores, source.mask);
  const int64_t B = memory.size(0), S = memory.size(1), D = options.window;
  Tensor last = Tensor::empty({B, 1});  // each source's last position, len - 1
  for (int64_t b = 0; b < B; ++b) last.data()[b] = static_cast<real>((source.lengths.empty() ? S : source.lengths[b]) - 1);
  // The window's centre p_t (B, 1). Local-m: p_t = t, source and target assumed roughly in
  // step (capped at len - 1, so a step past the source's end still sees its last D + 1 words).
  // Local-p: p_t = (len - 1) sigmoid(v_p^T tanh(W_p h_t)), a real position the decoder predicts.
  const Variable p = options.monotonic
                         ? Variable(minimum(last, full({B, 1}, static_cast<real>(source.t))))
                         : Variable(last) * sigmoid(sum(tanh(position->forward(query)) * position_v, -1, /*keepdim=*/true));
  // Only positions within D of p_t take part (plus the padding mask).
  Tensor window = source.mask.defined() ? source.mask.clone() : zeros({B, S});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      if (std::abs(static_cast<real>(s) - p.value().data()[b]) > static_cast<real>(D)) window.data()[b * S + s] = 1;
  if (options.monotonic) return masked_softmax(scores, window);
  // a_t(s) = align_t(s) exp(-(s - p_t)^2 / (2 sigma^2)), sigma = D / 2: the Gaussian favours
  // positions near p_t, and is what lets p_t learn (the window itself is not differentiable).
  const real sigma = static_cast<real>(D) / 2;
  Variable distance = Variable(arange(S).reshape({1, S})) - p;                 // (B, S)
  Variable gaussian = exp(distance * distance * (-1 / (2 * sigma * sigma)));  // (B, S)
  return masked_softmax(scores, window) * gaussian;
}
// [docs:end]

// ================================================================================================
// Reading the memory: soft (a weighted sum) or hard (one sampled position)

namespace {

// One position per row as a one-hot (B, S): drawn from the weights a_t (training; they need not
// sum to 1), or their argmax (evaluation).
Tensor sample_position(const Tensor& a, bool sample, Generator& generator) {
  const int64_t B = a.size(0), S = a.size(1);
  Tensor onehot = zeros({B, S});
  for (int64_t b = 0; b < B; ++b) {
    const real* row = a.data() + b * S;
    double total = 0;
    for (int64_t s = 0; s < S; ++s) total += row[s];
    int64_t chosen = 0;
    if (sample) {
      double u = generator.uniform() * total, acc = 0;
      for (chosen = 0; chosen < S - 1; ++chosen)
        if ((acc += row[chosen]) > u) break;
    } else {
      for (int64_t s = 1; s < S; ++s)
        if (row[s] > row[chosen]) chosen = s;
    }
    onehot.data()[b * S + chosen] = 1;
  }
  return onehot;
}

}  // namespace

// The alignment of `query` over the memory, and the context read with it.
AttentionSeq2Seq::Attended AttentionSeq2Seq::attend(const Variable& query, const Source& source) {
  Attended r;
  r.weights = align(query, source);  // (B, S)
  if (!options.hard) {
    r.context = soft_context(r.weights, source.memory);  // (B, M)
    return r;
  }
  // Hard attention: c_t = m_{chosen}, and log pi(chosen) for REINFORCE = log a[chosen] -
  // log sum a (the local Gaussian weights need renormalising).
  const Variable pick(sample_position(r.weights.value(), is_training(), sampler));
  r.context = soft_context(pick, source.memory);
  r.log_prob = log(sum(r.weights * pick, -1) + real(1e-12)) - log(sum(r.weights, -1) + real(1e-12));
  return r;
}

// ================================================================================================
// The two decoders, one step each

// [docs:step]
// Bahdanau et al. (2015): the previous state asks, and the context is an input of this step.
AttentionSeq2Seq::Step AttentionSeq2Seq::bahdanau_step(const Variable& y, RNNState& state, const Source& source) {
  const Attended c = attend(state.h, source);                     // a_t = align(s_{t-1}, m); c_t
  state = cell->forward(concat({y, c.context}, 1), state);        // s_t = RNN([y_{t-1}; c_t], s_{t-1})
  const Variable logits = out->forward(concat({state.h, c.context}, 1));  // W_o [s_t; c_t]
  return {logits, c.weights, c.log_prob};
}

// Luong et al. (2015): the new state asks, and its attentional state h~ is fed to the next step.
AttentionSeq2Seq::Step AttentionSeq2Seq::luong_step(const Variable& y, RNNState& state, Variable& feed,
                                                    const Source& source) {
  state = cell->forward(concat({y, feed}, 1), state);                // h_t = RNN([y_{t-1}; h~_{t-1}], h_{t-1})
  const Attended c = attend(state.h, source);                       // a_t = align(h_t, m); c_t
  feed = tanh(combine->forward(concat({c.context, state.h}, 1)));    // h~_t = tanh(W_c [c_t; h_t])
  return {out->forward(feed), c.weights, c.log_prob};                // W_s h~_t
}
// [docs:end]

AttentionSeq2Seq::Step AttentionSeq2Seq::decode_one(const Variable& y, RNNState& state, Variable& feed,
                                                    const Source& source) {
  return options.style == AttentionStyle::Luong ? luong_step(y, state, feed, source) : bahdanau_step(y, state, source);
}

// ================================================================================================
// Forward (teacher forcing)

namespace {

// The decoder's starting point: h_0 = tanh(W c + b) from the encoder's context; c_0 = 0.
RNNState first_state(Linear& bridge, const EncoderOutput& enc, const RecurrentCell& cell) {
  RNNState s{tanh(bridge.forward(enc.context)), Variable()};
  if (cell.has_cell_state()) s.c = Variable(zeros(s.h.shape()));
  return s;
}

}  // namespace

AttentionOutput AttentionSeq2Seq::forward(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in) {
  check(tgt_in.dim() == 2 && tgt_in.size(0) == src.size(0), "AttentionSeq2Seq: expected target ids of shape (",
        src.size(0), ", T), got ", tgt_in.shape());
  const int64_t B = src.size(0), S = src.size(1), T = tgt_in.size(1);
  const EncoderOutput enc = encoder->forward(src, src_lengths);  // memory (B, S, M)
  const Tensor mask = padding_mask(src_lengths.empty() ? std::vector<int64_t>(B, S) : src_lengths, S);
  RNNState state = first_state(*bridge, enc, *cell);
  Variable feed(zeros({B, options.hidden_size}));  // h~_0 = 0 (Luong's input feeding)
  const Variable y_all = embedding->forward(tgt_in);  // (B, T, E)
  std::vector<Variable> logits, weights, log_probs;
  for (int64_t t = 0; t < T; ++t) {
    const Variable y = reshape(slice(y_all, 1, t, t + 1), {B, options.embed_dim});  // (B, E)
    Step r = decode_one(y, state, feed, Source{enc.outputs, mask, src_lengths, t});
    logits.push_back(r.logits);
    weights.push_back(r.weights);
    if (r.log_prob.defined()) log_probs.push_back(r.log_prob);
  }
  AttentionOutput result{stack(logits, 1), stack(weights, 1), Variable()};  // (B, T, V), (B, T, S)
  if (!log_probs.empty()) result.log_prob = stack(log_probs, 1);            // (B, T)
  return result;
}

// ================================================================================================
// Decoding, one token at a time (encoder_decoder.h)

namespace {

struct AttentionState : DecoderState {
  Variable memory;               // (N, S, M): the encoder's outputs
  Tensor mask;                   // (N, S): 1 at padding
  std::vector<int64_t> lengths;  // (N)
  RNNState rnn;                  // (N, H)
  Variable feed;                 // (N, H): h~ of the last step (Luong's input feeding)
  int64_t t = 0;                 // the index of the next output token (local-m's window centre)
  bool need_weights = false;

  void reorder_rows(const Tensor& index) override {
    auto rows = [&](const Variable& v) { return v.defined() ? Variable(index_select(v.value(), 0, index)) : v; };
    memory = rows(memory);
    mask = index_select(mask, 0, index);
    rnn = {rows(rnn.h), rows(rnn.c)};
    feed = rows(feed);
    std::vector<int64_t> reordered;
    for (int64_t i = 0; i < index.numel(); ++i) reordered.push_back(lengths[static_cast<size_t>(index.data()[i])]);
    lengths = std::move(reordered);
  }
};

}  // namespace

std::unique_ptr<DecoderState> AttentionSeq2Seq::start(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                                      const StartOptions& start_options) {
  const int64_t B = src.size(0), S = src.size(1);
  auto state = std::make_unique<AttentionState>();
  state->lengths = src_lengths.empty() ? std::vector<int64_t>(B, S) : src_lengths;
  const EncoderOutput enc = encoder->forward(src, state->lengths);
  state->memory = enc.outputs;
  state->mask = padding_mask(state->lengths, S);
  state->rnn = first_state(*bridge, enc, *cell);
  state->feed = Variable(zeros({B, options.hidden_size}));
  state->need_weights = start_options.need_weights;
  return state;
}

// tokens (N) -> log-probabilities (N, V); the alignment is recorded as one layer, one head.
Tensor AttentionSeq2Seq::step(DecoderState& base, const Tensor& tokens) {
  auto& state = static_cast<AttentionState&>(base);
  const Step r = decode_one(embedding->forward(tokens.reshape({tokens.numel()})), state.rnn, state.feed,
                            Source{state.memory, state.mask, state.lengths, state.t++});
  if (state.need_weights) {
    const Tensor w = r.weights.value();  // (N, S)
    state.record_attention({w.reshape({w.size(0), 1, 1, w.size(1)})});
  }
  return log_softmax(r.logits.value(), -1);  // (N, V)
}

// ================================================================================================
// REINFORCE for hard attention

// [docs:reinforce]
Variable reinforce_loss(const Tensor& nll, const Variable& log_prob, const Tensor& keep, real& baseline) {
  check(nll.shape() == log_prob.shape() && keep.shape() == nll.shape(),
        "reinforce_loss: expected nll, log_prob and keep of the same shape, got ", nll.shape(), ", ", log_prob.shape(),
        " and ", keep.shape());
  const real count = sum(keep).item();
  if (count == 0) return sum(log_prob) * real(0);
  const real batch_mean = sum(nll * keep).item() / count;
  if (baseline < 0) baseline = batch_mean;                   // first call: start the running mean here
  const Tensor advantage = (nll - scalar(baseline)) * keep;  // > 0: worse than usual; 0 on padding
  baseline = real(0.9) * baseline + real(0.1) * batch_mean;
  return sum(Variable(advantage) * log_prob) / count;
}
// [docs:end]

Variable attention_training_loss(AttentionSeq2Seq& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                                 const Tensor& tgt_in, const Tensor& tgt_out, const CrossEntropyOptions& options,
                                 real& baseline) {
  const AttentionOutput out = model.forward(src, src_lengths, tgt_in);
  const Variable token_loss = cross_entropy(out.logits, tgt_out, options);
  if (!out.log_prob.defined() || !model.is_training()) return token_loss;
  const Tensor nll = cross_entropy(out.logits, tgt_out, CrossEntropyOptions(options).with_reduction(Reduction::None))
                         .value();                                       // (B, T)
  const Tensor keep = ne(tgt_out, scalar(static_cast<real>(options.ignore_index)));  // (B, T)
  return token_loss + reinforce_loss(nll, out.log_prob, keep, baseline);
}

}  // namespace seqgrad::nn
