// nn/attention/attention_seq2seq.h - encoder-decoder with attention: Bahdanau and Luong decoders,
// global or local (Luong's local-p, or local-m) attention, soft or hard (sampled) alignment.
//
// The encoder is nn/recurrent/seq2seq.h's, but the decoder no longer relies on one context vector: at every
// step it scores all encoder states against its own state, turns the scores into alignment
// weights, and reads their weighted sum c_t. The two classic decoders differ in when they look:
//   Bahdanau (2015): query = previous state s_{t-1}; s_t = RNN([y_{t-1}; c_t], s_{t-1});
//                    logits = W_o [s_t; c_t]
//   Luong (2015):    h_t = RNN([y_{t-1}; h~_{t-1}], h_{t-1})   (input feeding); query = h_t;
//                    h~_t = tanh(W_c [c_t; h_t]);  logits = W_s h~_t
// Local-p attention predicts a centre p_t = (len - 1) sigmoid(v_p^T tanh(W_p h_t)) and only looks
// at [p_t - D, p_t + D], weighting by a Gaussian exp(-(s - p_t)^2 / (2 (D/2)^2)). Hard
// attention samples one position from the weights instead of averaging; it is trained with
// REINFORCE (reinforce_loss below). Each step is built from named pieces, declared below as
// free functions: align_global, align_local_m, align_local_p (where to look), soft_context
// (nn/attention/attention.h) and hard_context (what is read), attentional_state and input_feed (Luong's
// h~ and how it reaches the next step). Read next: nn/transformer/transformer.h, which drops the recurrence.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/attention/attention.h"
#include "nn/core/loss.h"
#include "nn/recurrent/seq2seq.h"
#include "tensor/random.h"

namespace seqgrad::nn {

enum class AttentionStyle { Bahdanau, Luong };

struct AttentionSeq2SeqOptions {
  AttentionSeq2SeqOptions(int64_t src_vocab, int64_t tgt_vocab) : src_vocab(src_vocab), tgt_vocab(tgt_vocab) {}
  int64_t src_vocab, tgt_vocab;
  int64_t embed_dim = 32, hidden_size = 64, num_layers = 1;  // num_layers: encoder only
  std::string cell = "gru";  // the decoder's and encoder's cell: "rnn", "lstm", "gru", ... (rnn.h)
  Settings cell_settings;    // the cell's own options, if it has any (defaults otherwise)
  bool bidirectional = false;  // encoder
  AttentionStyle style = AttentionStyle::Luong;
  std::string score = "general";  // a registered score's name (attention.h)
  Settings score_settings;         // the score's own options, if it has any (defaults otherwise)
  int64_t attention_size = 0;  // hidden width of concat/additive/mlp scores (0 = hidden_size)
  int64_t max_source_len = 0;  // the location score: the longest source it scores
  bool local = false;          // Luong's local attention: local-p (predicted p_t), or local-m
  int64_t window = 3;          // D: the window is 2D + 1 positions
  bool monotonic = false;      // local-m: the window centres on p_t = t (capped at the source's end)
  bool hard = false;           // sample one position (train) / take the argmax (eval)
  real dropout = 0;

  AttentionSeq2SeqOptions& with_embed_dim(int64_t v) { embed_dim = v; return *this; }
  AttentionSeq2SeqOptions& with_hidden_size(int64_t v) { hidden_size = v; return *this; }
  AttentionSeq2SeqOptions& with_num_layers(int64_t v) { num_layers = v; return *this; }
  AttentionSeq2SeqOptions& with_cell(std::string v, Settings s = {}) {
    cell = std::move(v);
    cell_settings = std::move(s);
    return *this;
  }
  AttentionSeq2SeqOptions& with_bidirectional(bool v) { bidirectional = v; return *this; }
  AttentionSeq2SeqOptions& with_style(AttentionStyle v) { style = v; return *this; }
  AttentionSeq2SeqOptions& with_score(std::string v, Settings s = {}) {
    score = std::move(v);
    score_settings = std::move(s);
    return *this;
  }
  AttentionSeq2SeqOptions& with_attention_size(int64_t v) { attention_size = v; return *this; }
  AttentionSeq2SeqOptions& with_max_source_len(int64_t v) { max_source_len = v; return *this; }
  AttentionSeq2SeqOptions& with_local(bool v, int64_t d = 3, bool m = false) {
    local = v;
    window = d;
    monotonic = m;
    return *this;
  }
  AttentionSeq2SeqOptions& with_hard(bool v) { hard = v; return *this; }
  AttentionSeq2SeqOptions& with_dropout(real v) { dropout = v; return *this; }
};

struct AttentionOutput {
  Variable logits;     // (B, T, V); undefined from AttentionSeq2Seq::features
  Variable weights;    // (B, T, S): the alignment at every decoder step
  Variable log_prob;   // (B, T): hard attention only, log a_t[chosen position] at every step
  Variable features;   // (B, T, F): what the output layer reads at every step
};

// ================================================================================================
// The pieces of a decoder step, as Luong et al. (2015) name them. The alignments take the
// decoder's query h_t (B, H) and the memory h̄ (B, S, M), the encoder's outputs, which are both
// the keys and the values, with its padding mask (B, S), 1 at padding (or undefined).

// What an alignment returns. weights is a_t over the whole source, the shape that callers record
// and sample from. Local attention is zero outside its window, so it also gives the W positions
// it can be non-zero at, with their memory rows: a context read from those costs W M, not S M.
// Global attention's window is the whole source (W = S, window_memory is the memory).
struct Alignment {
  Variable weights;         // (B, S): a_t
  Variable window_weights;  // (B, W): a_t at the window's positions
  Variable window_memory;   // (B, W, M): the memory rows there
};

// Global attention (section 3.1): a_t(s) = softmax_s score(h_t, h̄_s), over every position.
Alignment align_global(AttentionScore& score, const Variable& query, const Variable& memory, const Tensor& mask);

// Local attention (section 3.2) looks only at the window [p_t - D, p_t + D] around a centre p
// (B, 1), and scores only the window's 2D + 1 positions, so its cost grows with D, not with S:
//   local-m (monotonic)   a_t(s) = softmax over the window of score(h_t, h̄_s)
//   local-p (predictive)  the same, times exp(-(s - p_t)^2 / (2 sigma^2)), sigma = D / 2
// Outside the window, and at padding, a_t is exactly 0. The window itself is a hard cut: p_t
// gets its gradient (local-p) through the Gaussian alone.
Alignment align_local_m(AttentionScore& score, const Variable& query, const Variable& memory, const Tensor& mask,
                        const Tensor& p, int64_t D);
Alignment align_local_p(AttentionScore& score, const Variable& query, const Variable& memory, const Tensor& mask,
                        const Variable& p, int64_t D);
// The centres (B, 1), from each source's length: local-m's p_t = t, capped at len - 1, and
// local-p's p_t = (len - 1) sigmoid(v_p^T tanh(W_p h_t)), a real position the decoder predicts.
Tensor local_m_centre(const std::vector<int64_t>& lengths, int64_t t);
Variable local_p_centre(Linear& W_p, const Variable& v_p, const Variable& query, const std::vector<int64_t>& lengths);

// Hard attention's read: one position per row, drawn from the weights a_t (B, S) (sample; they
// need not sum to 1) or their argmax, and that position's memory row c_t = h̄_s (B, M). log_prob
// (B) is log pi(s) = log a_t(s) - log sum a_t, what REINFORCE needs. (The soft read is
// soft_context, nn/attention/attention.h.)
struct HardContext {
  Variable context;   // (B, M)
  Variable log_prob;  // (B)
};
HardContext hard_context(const Variable& weights, const Variable& memory, bool sample, Generator& generator);

// Luong's attentional state h~_t = tanh(W_c [c_t; h_t]) (B, H), and input feeding (section
// 3.3): the next step's RNN reads [y; h~], so it knows where the decoder looked last.
Variable attentional_state(Linear& W_c, const Variable& context, const Variable& h);
Variable input_feed(const Variable& y, const Variable& feed);  // y (B, E), h~ (B, H) -> (B, E + H)

// ================================================================================================
// The model

class AttentionSeq2Seq : public Module, public EncoderDecoder {
 public:
  explicit AttentionSeq2Seq(const AttentionSeq2SeqOptions& options);
  std::string name() const override { return "AttentionSeq2Seq"; }
  std::string extra_repr() const override;

  // Teacher forcing: src (B, S), tgt_in (B, T) -> logits (B, T, V) and the alignments.
  AttentionOutput forward(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in);
  // The same up to the output layer: the features it reads at every step (B, T, F), F = H + M
  // (Bahdanau: [s_t; c_t]) or H (Luong: h~_t), and the alignments; no logits. forward()
  // projects them all at once; training_loss only at the positions whose target counts.
  AttentionOutput features(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in);
  // The decoding interface (nn/decoding/encoder_decoder.h): the state is the encoder's memory, the decoder's
  // recurrent state and the fed-back h~; the attention recorded is the alignment of each step
  // (one layer, one head). Hard attention takes the argmax position when decoding.
  Variable logits(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                  const std::vector<int64_t>&) override {
    return forward(src, src_lengths, tgt_in).logits;
  }
  std::unique_ptr<DecoderState> start(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                      const StartOptions& options) override;
  Tensor step(DecoderState& state, const Tensor& tokens) override;
  Module& module() override { return *this; }
  int64_t width() const override { return options.embed_dim; }

  // Training: with hard attention, in training mode, attention_training_loss (below), with
  // reinforce_baseline as its running baseline; otherwise the cross-entropy of the positions
  // whose target counts (projected_cross_entropy, nn/core/loss.h).
  Variable training_loss(const Tensor& src, const std::vector<int64_t>& src_lengths, const Tensor& tgt_in,
                         const std::vector<int64_t>& tgt_lengths, const Tensor& tgt_out,
                         const CrossEntropyOptions& options) override;
  // Hard attention: {"sampler": its random state, "baseline": reinforce_baseline}; else null.
  io::Json training_state() const override;
  void set_training_state(const io::Json& state) override;

  // The parts a student may swap (model.score = model.replace_module("score", ...)) are the
  // registered ones: refuses to run otherwise (Module::check_child).
  void check_members() const;

  // The random numbers hard attention samples with (its own, so decoding stays reproducible).
  Generator sampler{1234};
  real reinforce_baseline = -1;  // REINFORCE's running baseline (-1: none yet)

  std::shared_ptr<Encoder> encoder;
  std::shared_ptr<Linear> bridge;          // encoder context -> first decoder state
  std::shared_ptr<Embedding> embedding;    // target tokens
  std::shared_ptr<RecurrentCell> cell;     // the decoder RNN, one step at a time
  std::shared_ptr<AttentionScore> score;
  std::shared_ptr<Linear> combine;         // Luong: W_c [c_t; h_t] -> h~_t
  std::shared_ptr<Linear> out;             // to the vocabulary
  std::shared_ptr<Linear> position;        // local-p: W_p
  Variable position_v;                     // local-p: v_p
  AttentionSeq2SeqOptions options;

 private:
  struct Step {
    Variable features;  // (B, F): what the output layer reads, [s_t; c_t] or h~_t
    Variable weights;   // (B, S)
    Variable log_prob;  // (B), hard only
  };
  struct Attended {
    Variable weights;   // (B, S): a_t
    Variable context;   // (B, M): c_t
    Variable log_prob;  // (B), hard only: log pi(the position read)
  };
  // What one decoder step reads: the memory (B, S, M), its padding mask and lengths (B, one
  // per source), and the step's index t (0 for the first output token; local-m's centre).
  struct Source {
    const Variable& memory;
    const Tensor& mask;
    const std::vector<int64_t>& lengths;
    int64_t t;
  };
  // One decoder step of either style: y (B, E) the embedded previous token; updates the
  // recurrent state and (Luong) the fed-back h~.
  Step decode_one(const Variable& y_embedded, RNNState& state, Variable& feed, const Source& source);
  Step bahdanau_step(const Variable& y_embedded, RNNState& state, const Source& source);
  Step luong_step(const Variable& y_embedded, RNNState& state, Variable& feed, const Source& source);
  // Align `query` (B, H) over the memory and read the context, soft or hard.
  Attended attend(const Variable& query, const Source& source);
  // The alignment of one query (B, H) over the memory (B, S, M): global, local-m or local-p.
  Alignment align(const Variable& query, const Source& source);
};

// The REINFORCE surrogate for hard attention, one reward per decoding step. nll (B, T) is each
// target token's negative log-likelihood (the reward is -nll), log_prob (B, T) the
// log-probability of the position sampled at that step, keep (B, T) 1 for real tokens and 0 for
// padding; baseline is a running mean of nll, updated here (b <- 0.9 b + 0.1 mean(nll)).
// Minimising
//   sum_{b,t} keep (nll_bt - baseline) log_prob_bt / sum keep      (nll and baseline constant)
// follows E[(R - b) grad log pi], the gradient of the expected reward: a position that led to a
// better-than-usual prediction becomes more likely. Rewarding each step for its own token,
// rather than the whole sequence for its total, keeps the estimate's variance manageable.
Variable reinforce_loss(const Tensor& nll, const Variable& log_prob, const Tensor& keep, real& baseline);

// The training loss of a teacher-forced batch: src (B, S), tgt_in and tgt_out (B, T). Mean
// cross-entropy over the target tokens (those equal to options.ignore_index are padding); with
// hard attention in training mode, plus reinforce_loss with each step rewarded by -nll of its
// own token, which is what trains where the model looks. `baseline` as in reinforce_loss.
Variable attention_training_loss(AttentionSeq2Seq& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                                 const Tensor& tgt_in, const Tensor& tgt_out, const CrossEntropyOptions& options,
                                 real& baseline);

}  // namespace seqgrad::nn
