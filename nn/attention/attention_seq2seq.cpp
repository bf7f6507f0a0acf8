// nn/attention/attention_seq2seq.cpp - the pieces of an attention decoder's step (the global, local-m and
// local-p alignments, the hard read, input feeding), the Bahdanau and Luong steps built from
// them, teacher forcing, decoding one token at a time, and REINFORCE for hard attention.
#include "nn/attention/attention_seq2seq.h"
#include "nn/decoding/model_kind.h"

#include <algorithm>
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
                                                                       .with_cell(o.cell, o.cell_settings)
                                                                       .with_bidirectional(o.bidirectional)
                                                                       .with_dropout(o.dropout)));
  const int64_t M = encoder->output_size();  // memory width: H, or 2H for a bidirectional encoder
  bridge = register_module("bridge", std::make_shared<Linear>(M, H));
  embedding = register_module("embedding", std::make_shared<Embedding>(o.tgt_vocab, E, /*padding_idx=*/0));
  const bool luong = o.style == AttentionStyle::Luong;
  // Bahdanau's RNN reads [y; c_t]; Luong's reads [y; h~_{t-1}] (input feeding).
  cell = register_module("cell", make_recurrent_cell(o.cell, CellOptions(luong ? E + H : E + M, H)
                                                                  .with_settings(o.cell_settings)));
  score = register_module("score", make_score(o.score, ScoreOptions(H, M).with_attention_size(o.attention_size)
                                                         .with_max_positions(o.max_source_len)
                                                         .with_settings(o.score_settings)));
  if (luong) combine = register_module("combine", std::make_shared<Linear>(M + H, H, /*bias=*/false));
  out = register_module("out", std::make_shared<Linear>(luong ? H : H + M, o.tgt_vocab));
  if (o.local && !o.monotonic) {  // local-p predicts its window's centre
    position = register_module("position", std::make_shared<Linear>(H, H, /*bias=*/false));
    position_v = register_parameter("position_v", randn({H}) / std::sqrt(static_cast<real>(H)));
  }
}

std::string AttentionSeq2Seq::extra_repr() const {
  return cat(options.style == AttentionStyle::Luong ? "luong" : "bahdanau", ", score=", options.score,
             options.local ? cat(options.monotonic ? ", local-m D=" : ", local-p D=", options.window) : std::string(), options.hard ? ", hard" : "");
}

// ================================================================================================
// Alignment: global, local-m and local-p (Luong et al. 2015, sections 3.1 and 3.2)

// [docs:align_global]
Alignment align_global(AttentionScore& score, const Variable& query, const Variable& memory, const Tensor& mask) {
  const Variable a = masked_softmax(score.forward(query, memory), mask);  // a_t (B, S)
  return {a, a, memory};                                                   // the window is the whole source
}
// [docs:end]

namespace {

void check_local(const char* op, const Variable& memory, const Tensor& mask, const Tensor& p, int64_t D) {
  check(D >= 1, op, ": expected a window D >= 1, got ", D);
  check(memory.dim() == 3, op, ": expected a memory of shape (B, S, M), got ", memory.shape());
  const int64_t B = memory.size(0), S = memory.size(1);
  check(!mask.defined() || mask.shape() == Shape{B, S}, op, ": expected a mask of shape (", B, ", ", S, "), got ",
        mask.shape());
  check(p.shape() == Shape{B, 1}, op, ": expected centres p_t of shape (", B, ", 1), got ", p.shape());
  for (int64_t b = 0; b < B; ++b)
    check(p.data()[b] >= 0 && p.data()[b] <= static_cast<real>(S - 1), op, ": expected each centre p_t in [0, ", S - 1,
          "], got ", p.data()[b]);
}

// [docs:local_window]
// The window [p_t - D, p_t + D] of each row as W = 2D + 1 slots, c - D .. c + D around the whole
// position c nearest p_t: every position within D of p_t has a slot (any other is D + 1/2 or
// more away). A slot takes no part (mask 1) when it is off the source, at padding, or further
// than D from p_t: a p_t between two positions has only 2D of them within reach.
struct Window {
  Tensor positions;  // (B, W): each slot's source position s (off the source: s < 0 or s >= S)
  Tensor index;      // (B, W): s clamped into [0, S), the memory row the slot reads
  Tensor mask;       // (B, W): 1 = takes no part
};

Window local_window(const Tensor& p, const Tensor& padding, int64_t S, int64_t D) {
  const int64_t B = p.size(0), W = 2 * D + 1;
  Window w{Tensor::empty({B, W}), Tensor::empty({B, W}), Tensor::empty({B, W})};
  for (int64_t b = 0; b < B; ++b) {
    const real centre = p.data()[b];
    const int64_t c = static_cast<int64_t>(std::floor(static_cast<double>(centre) + 0.5));
    for (int64_t j = 0; j < W; ++j) {
      const int64_t s = c - D + j, row = std::min(std::max<int64_t>(s, 0), S - 1), at = b * W + j;
      const bool off = s != row || (padding.defined() && padding.data()[b * S + row] != 0) ||
                       std::abs(static_cast<real>(s) - centre) > static_cast<real>(D);
      w.positions.data()[at] = static_cast<real>(s);
      w.index.data()[at] = static_cast<real>(row);
      w.mask.data()[at] = off ? 1 : 0;
    }
  }
  return w;
}

// The window's memory rows, gathered: memory (B, S, M) seen as (B S, M), rows b S + index.
// -> (B, W, M). index_select's backward adds each gathered row's gradient to the row it came from.
Variable window_rows(const Variable& memory, const Tensor& index) {
  const int64_t B = memory.size(0), S = memory.size(1), M = memory.size(2), W = index.size(1);
  Tensor rows = Tensor::empty({B * W});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < W; ++j)
      rows.data()[b * W + j] = static_cast<real>(b * S + static_cast<int64_t>(index.data()[b * W + j]));
  return reshape(index_select(reshape(memory, {B * S, M}), 0, rows), {B, W, M});
}

// The query's scores at the window's slots (B, W): a score compares the query with keys, so it
// is given the window's 2D + 1 rows, not all S. The location score is the exception: it reads
// no keys (its score of position s is row s of W_a h_t, whatever the keys say), so it scores
// the whole source and the window's columns are taken.
Variable window_scores(AttentionScore& score, const Variable& query, const Variable& memory, const Variable& rows,
                       const Tensor& index) {
  if (!score.compares_keys()) return gather(score.forward(query, memory), 1, index);
  return score.forward(query, rows);
}

// What local-m and local-p share: the window around p (B, 1), its memory rows (B, W, M), and
// the softmax of the query's scores over the slots that take part (B, W).
struct Local {
  Window window;
  Variable rows;
  Variable softmax;
};

Local local_softmax(const char* op, AttentionScore& score, const Variable& query, const Variable& memory,
                    const Tensor& mask, const Tensor& p, int64_t D) {
  check_local(op, memory, mask, p, D);
  Local l;
  l.window = local_window(p, mask, memory.size(1), D);
  l.rows = window_rows(memory, l.window.index);
  l.softmax = masked_softmax(window_scores(score, query, memory, l.rows, l.window.index), l.window.mask);
  return l;
}

// a_t over the window (B, W), spread back over the whole source (B, S) with zeros elsewhere.
Alignment spread(const Variable& a, const Local& l, int64_t S) {
  return {scatter_add({a.size(0), S}, 1, l.window.index, a), a, l.rows};
}
// [docs:end]

}  // namespace

// [docs:align_local]
Alignment align_local_m(AttentionScore& score, const Variable& query, const Variable& memory, const Tensor& mask,
                        const Tensor& p, int64_t D) {
  const Local l = local_softmax("align_local_m", score, query, memory, mask, p, D);
  return spread(l.softmax, l, memory.size(1));  // a_t = the softmax over the window
}

Alignment align_local_p(AttentionScore& score, const Variable& query, const Variable& memory, const Tensor& mask,
                        const Variable& p, int64_t D) {
  const Local l = local_softmax("align_local_p", score, query, memory, mask, p.value(), D);
  // a_t(s) = align(h_t, h̄_s) exp(-(s - p_t)^2 / (2 sigma^2)), sigma = D / 2: the Gaussian
  // favours positions near p_t, and is what lets p_t learn (the window is not differentiable).
  const real sigma = static_cast<real>(D) / 2;
  const Variable distance = Variable(l.window.positions) - p;                      // s - p_t (B, W)
  const Variable gaussian = exp(distance * distance * (-1 / (2 * sigma * sigma)));  // (B, W)
  return spread(l.softmax * gaussian, l, memory.size(1));
}
// [docs:end]

// [docs:centres]
Tensor local_m_centre(const std::vector<int64_t>& lengths, int64_t t) {
  check(t >= 0, "local_m_centre: expected a step t >= 0, got ", t);
  const int64_t B = static_cast<int64_t>(lengths.size());
  Tensor p = Tensor::empty({B, 1});
  // Source and target assumed roughly in step; capped, so a step past the source's end still
  // sees its last D + 1 positions.
  for (int64_t b = 0; b < B; ++b) p.data()[b] = static_cast<real>(std::min(t, lengths[b] - 1));
  return p;
}

Variable local_p_centre(Linear& W_p, const Variable& v_p, const Variable& query, const std::vector<int64_t>& lengths) {
  const int64_t B = query.size(0);
  check(static_cast<int64_t>(lengths.size()) == B, "local_p_centre: expected ", B, " lengths (one per query), got ",
        lengths.size());
  Tensor last = Tensor::empty({B, 1});  // each source's last position, len - 1
  for (int64_t b = 0; b < B; ++b) last.data()[b] = static_cast<real>(lengths[b] - 1);
  return Variable(last) * sigmoid(sum(tanh(W_p.forward(query)) * v_p, -1, /*keepdim=*/true));  // (B, 1)
}
// [docs:end]

// ================================================================================================
// Reading the memory: soft (the weighted sum, soft_context in nn/attention/attention.h) or hard (one position)

namespace {

// One position per row: drawn from the weights a (B, S) (they need not sum to 1), or their argmax.
std::vector<int64_t> choose_positions(const Tensor& a, bool sample, Generator& generator) {
  const int64_t B = a.size(0), S = a.size(1);
  std::vector<int64_t> chosen(static_cast<size_t>(B), 0);
  for (int64_t b = 0; b < B; ++b) {
    const real* row = a.data() + b * S;
    int64_t& s = chosen[static_cast<size_t>(b)];
    if (sample) {
      double total = 0;
      for (int64_t i = 0; i < S; ++i) total += row[i];
      double u = generator.uniform() * total, acc = 0;
      for (s = 0; s < S - 1; ++s)
        if ((acc += row[s]) > u) break;
    } else {
      for (int64_t i = 1; i < S; ++i)
        if (row[i] > row[s]) s = i;
    }
  }
  return chosen;
}

}  // namespace

// [docs:hard_context]
HardContext hard_context(const Variable& weights, const Variable& memory, bool sample, Generator& generator) {
  check(weights.dim() == 2 && memory.dim() == 3 && memory.size(0) == weights.size(0) &&
            memory.size(1) == weights.size(1),
        "hard_context: expected weights (B, S) and a memory (B, S, M), got ", weights.shape(), " and ", memory.shape());
  const int64_t B = memory.size(0), S = memory.size(1), M = memory.size(2);
  const std::vector<int64_t> chosen = choose_positions(weights.value(), sample, generator);
  Tensor onehot = zeros({B, S}), rows = Tensor::empty({B});
  for (int64_t b = 0; b < B; ++b) {
    onehot.data()[b * S + chosen[static_cast<size_t>(b)]] = 1;
    rows.data()[b] = static_cast<real>(b * S + chosen[static_cast<size_t>(b)]);
  }
  HardContext r;
  r.context = index_select(reshape(memory, {B * S, M}), 0, rows);  // c_t = h̄_s, the chosen row (B, M)
  // log pi(s) = log a_t(s) - log sum a_t (the local-p weights do not sum to 1)
  r.log_prob = log(sum(weights * Variable(onehot), -1) + real(1e-12)) - log(sum(weights, -1) + real(1e-12));
  return r;
}
// [docs:end]

// ================================================================================================
// Input feeding (Luong et al. 2015, section 3.3)

// [docs:input_feed]
Variable attentional_state(Linear& W_c, const Variable& context, const Variable& h) {
  return tanh(W_c.forward(concat({context, h}, 1)));  // h~_t = tanh(W_c [c_t; h_t]) (B, H)
}

Variable input_feed(const Variable& y, const Variable& feed) {
  return concat({y, feed}, 1);  // [y_{t-1}; h~_{t-1}] (B, E + H)
}
// [docs:end]

// ================================================================================================
// The two decoders, one step each

// [docs:align]
// The model's alignment, as its options say: global, local-m or local-p.
Alignment AttentionSeq2Seq::align(const Variable& query, const Source& s) {
  if (!options.local) return align_global(*score, query, s.memory, s.mask);
  const int64_t D = options.window;
  if (options.monotonic) return align_local_m(*score, query, s.memory, s.mask, local_m_centre(s.lengths, s.t), D);
  return align_local_p(*score, query, s.memory, s.mask, local_p_centre(*position, position_v, query, s.lengths), D);
}

// The alignment of `query` over the memory, and the context read with it: soft, the weighted
// sum over the window, or hard, one position's row.
AttentionSeq2Seq::Attended AttentionSeq2Seq::attend(const Variable& query, const Source& source) {
  const Alignment a = align(query, source);  // a_t (B, S)
  if (!options.hard) return {a.weights, soft_context(a.window_weights, a.window_memory), Variable()};  // c_t (B, M)
  const HardContext h = hard_context(a.weights, source.memory, is_training(), sampler);
  return {a.weights, h.context, h.log_prob};
}
// [docs:end]

// [docs:step]
// Bahdanau et al. (2015): the previous state asks, and the context is an input of this step.
AttentionSeq2Seq::Step AttentionSeq2Seq::bahdanau_step(const Variable& y, RNNState& state, const Source& source) {
  const Attended c = attend(state.h, source);                     // a_t = align(s_{t-1}, h̄); c_t
  state = cell->forward(concat({y, c.context}, 1), state);        // s_t = RNN([y_{t-1}; c_t], s_{t-1})
  return {concat({state.h, c.context}, 1), c.weights, c.log_prob};  // the output layer reads [s_t; c_t]: W_o [s_t; c_t]
}

// Luong et al. (2015): the new state asks, and its attentional state h~ is fed to the next step.
AttentionSeq2Seq::Step AttentionSeq2Seq::luong_step(const Variable& y, RNNState& state, Variable& feed,
                                                    const Source& source) {
  state = cell->forward(input_feed(y, feed), state);       // h_t = RNN([y_{t-1}; h~_{t-1}], h_{t-1})
  const Attended c = attend(state.h, source);              // a_t = align(h_t, h̄); c_t
  feed = attentional_state(*combine, c.context, state.h);  // h~_t = tanh(W_c [c_t; h_t])
  return {feed, c.weights, c.log_prob};                    // the output layer reads h~_t: W_s h~_t
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
  AttentionOutput result = features(src, src_lengths, tgt_in);
  result.logits = out->forward(result.features);  // (B, T, V): one product for every step
  return result;
}

AttentionOutput AttentionSeq2Seq::features(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                           const Tensor& tgt_in) {
  check_members();
  check(tgt_in.dim() == 2 && tgt_in.size(0) == src.size(0), "AttentionSeq2Seq: expected target ids of shape (",
        src.size(0), ", T), got ", tgt_in.shape());
  const int64_t B = src.size(0), S = src.size(1), T = tgt_in.size(1);
  const EncoderOutput enc = encoder->forward(src, src_lengths);  // memory (B, S, M)
  const std::vector<int64_t> lengths = src_lengths.empty() ? std::vector<int64_t>(B, S) : src_lengths;
  const Tensor mask = padding_mask(lengths, S);
  RNNState state = first_state(*bridge, enc, *cell);
  Variable feed(zeros({B, options.hidden_size}));  // h~_0 = 0 (Luong's input feeding)
  const Variable y_all = embedding->forward(tgt_in);  // (B, T, E)
  std::vector<Variable> features, weights, log_probs;
  // The weights every step multiplies by (the cell's, the score's, W_c, local-p's W_p): packed
  // for the matrix kernel once, not at each of the T steps (autograd/ops.h).
  std::vector<Variable> per_step = cell->parameters();
  for (const Module* m : {static_cast<const Module*>(score.get()), static_cast<const Module*>(combine.get()),
                          static_cast<const Module*>(position.get())})
    if (m)
      for (const Variable& p : m->parameters()) per_step.push_back(p);
  const ReusePackedWeights reuse(per_step);
  for (int64_t t = 0; t < T; ++t) {
    const Variable y = reshape(slice(y_all, 1, t, t + 1), {B, options.embed_dim});  // (B, E)
    Step r = decode_one(y, state, feed, Source{enc.outputs, mask, lengths, t});
    features.push_back(r.features);
    weights.push_back(r.weights);
    if (r.log_prob.defined()) log_probs.push_back(r.log_prob);
  }
  AttentionOutput result{Variable(), stack(weights, 1), Variable(), stack(features, 1)};  // (B, T, S), (B, T, F)
  if (!log_probs.empty()) result.log_prob = stack(log_probs, 1);                        // (B, T)
  return result;
}

// ================================================================================================
// Decoding, one token at a time (nn/decoding/encoder_decoder.h)

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
  check_members();
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
  return log_softmax(out->forward(r.features).value(), -1);  // (N, V)
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

void AttentionSeq2Seq::check_members() const {
  check_child("score", score.get());
  check_child("cell", cell.get());
}

Variable AttentionSeq2Seq::training_loss(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                                         const std::vector<int64_t>&, const Tensor& tgt_out,
                                         const CrossEntropyOptions& options) {
  if (!this->options.hard) return projected_cross_entropy(features(src, src_lengths, tgt_in).features, *out, tgt_out, options);
  return attention_training_loss(*this, src, src_lengths, tgt_in, tgt_out, options, reinforce_baseline);
}

io::Json AttentionSeq2Seq::training_state() const {
  if (!options.hard) return io::Json();
  io::Json state = io::Json::object();
  state.set("sampler", sampler.state()).set("baseline", static_cast<double>(reinforce_baseline));
  return state;
}

void AttentionSeq2Seq::set_training_state(const io::Json& state) {
  if (!options.hard) return;
  const io::Json* s = state.is_object() ? state.find("sampler") : nullptr;
  const io::Json* b = state.is_object() ? state.find("baseline") : nullptr;
  check_state(s && s->is_string() && b && b->is_number() && std::isfinite(b->as_double()) &&
                  (b->as_double() >= 0 || b->as_double() == -1),
              "the training state's 'model_state' must hold hard attention's sampler state and a baseline >= 0 (or -1)");
  sampler.set_state(s->as_string());
  reinforce_baseline = static_cast<real>(b->as_double());
}

// ================================================================================================
// The model kinds "rnn-attn", "gru-attn", "lstm-attn", ...: one per registered cell (nn/decoding/model_kind.h)

namespace {

std::vector<Option> attention_options(const Settings* chosen) {
  auto names = [](std::vector<std::string> n) { return [n] { return n; }; };
  Option decoder = choice_option("decoder", "luong", names({"luong", "bahdanau"}),
                                 "decoder of -attn models: luong (attend with the new state, feed h~ on) or bahdanau "
                                 "(attend with the previous state)");
  Option window = choice_option("window", "global", names({"global", "local-p", "local-m"}),
                                "positions -attn models score: global (all), local-p (around a predicted p_t) or "
                                "local-m (around p_t = t)");
  window.flag = "attention-window";
  Option hard = switch_option("hard_attention", false, "-attn models: read the one source position sampled from the "
                                                       "weights, trained with REINFORCE (decoding reads the most likely one)");
  std::vector<Option> o{layers_option(), hidden_option(), dim_option(), dropout_option(), bidirectional_option(),
                        attention_option(), decoder, window, hard};
  if (!chosen || (chosen->has("window") && chosen->text("window") != "global")) {  // local windows only
    Option size = integer_option("window_size", 3, 1, 4096, "D of the local windows: 2D + 1 positions");
    size.flag = "window";
    o.push_back(size);
  }
  for (const Option& extra : score_options(chosen)) o.push_back(extra);
  for (const Option& extra : cell_options(chosen)) o.push_back(extra);  // the cell's own (model_kind.h)
  return o;
}

// A score built on the sizes the model gives it: queries of --hidden H (the decoder's state),
// keys of the encoder's width, 2H with --bidirectional. Some scores need the two equal (dot,
// scaled-dot, cosine: q . k); each says so in its constructor, so each is asked by being built,
// and a mismatch is said in terms of the flags, with the scores that do fit.
void check_attention(const Settings& s) {
  const int64_t H = s.integer("hidden"), M = s.on("bidirectional") ? 2 * H : H;
  // The trial scores initialise their weights from a generator of their own: the checks run while
  // a model is built, and must not move the random numbers its own weights are drawn from.
  Generator scratch(0);
  const GeneratorScope scope(scratch);
  std::string why;
  auto fits = [&](const std::string& name) {
    try {
      make_score(name, ScoreOptions(H, M).with_max_positions(1).with_settings(s));
      return true;
    } catch (const std::invalid_argument& e) {
      if (name == s.text("attention")) why = e.what();
      return false;
    }
  };
  if (fits(s.text("attention"))) return;
  std::vector<std::string> others;
  for (const std::string& name : scores().names())
    if (fits(name)) others.push_back(name);
  check(false, "--attention ", s.text("attention"), " cannot score queries of --hidden (", H, ") against keys of ", M,
        s.on("bidirectional") ? " (2 x --hidden, with --bidirectional)" : "", ": ", why, "; give --attention ",
        join_names(others), s.on("bidirectional") ? ", or drop --bidirectional" : "");
}

std::shared_ptr<EncoderDecoder> build_attention(const Settings& s, const ModelContext& c) {
  const std::string window = s.text("window");
  return std::make_shared<AttentionSeq2Seq>(
      AttentionSeq2SeqOptions(c.src_vocab, c.tgt_vocab).with_cell(c.cell(), s).with_num_layers(s.integer("layers"))
          .with_hidden_size(s.integer("hidden")).with_embed_dim(s.integer("dim")).with_bidirectional(s.on("bidirectional"))
          .with_dropout(static_cast<real>(s.number("dropout"))).with_score(s.text("attention"), s)
          .with_attention_size(s.has("attention_size") ? s.integer("attention_size") : 0).with_max_source_len(c.max_len)
          .with_style(s.text("decoder") == "bahdanau" ? AttentionStyle::Bahdanau : AttentionStyle::Luong)
          .with_local(window != "global", s.has("window_size") ? s.integer("window_size") : 3, window == "local-m")
          .with_hard(s.on("hard_attention")));
}

}  // namespace

SEQGRAD_REGISTER_MODEL(ModelKind{"{cell}-attn", "the encoder-decoder with attention (Bahdanau et al., 2015; Luong et "
                                                "al., 2015)", attention_options, check_attention, build_attention})

}  // namespace seqgrad::nn
