// nn/decoding.cpp - one decoder step at a time (cached or not), greedy decoding, beam search.
#include "nn/decoding.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include "io/special_tokens.h"
#include "tensor/check.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"

namespace seqgrad::nn {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// ================================================================================================
// Stepper: the next-token distribution for N growing prefixes

// Feeds one token per row and returns log P(next token | prefix, source) for each row. With
// the cache only the new token runs through the decoder; without it the whole prefix does.
// Keeps the encoder-decoder attention of every step so far, per layer (N, NH, t, S).
class Stepper {
 public:
  Stepper(Transformer& model, TransformerMemory memory, const DecodeOptions& o)
      : model_(model), memory_(std::move(memory)), use_cache_(o.use_cache), need_weights_(o.need_weights) {}

  // tokens (N, 1) -> log-probabilities (N, V)
  // [docs:stepper]
  Tensor step(const Tensor& tokens) {
    TransformerStep s;
    if (use_cache_) {
      s = model_.decode_step(tokens, memory_, cache_, need_weights_);  // logits (N, 1, V)
    } else {
      prefix_ = prefix_.defined() ? concat({prefix_, tokens}, 1) : tokens;  // (N, t+1)
      s = model_.decode(prefix_, memory_, {}, need_weights_);              // logits (N, t+1, V)
    }
    const int64_t T = s.logits.size(1), N = s.logits.size(0), V = s.logits.size(2);
    if (need_weights_) {
      attention.resize(s.cross_weights.size());
      for (size_t l = 0; l < s.cross_weights.size(); ++l) {
        const Tensor w = slice(s.cross_weights[l].value(), 2, T - 1, T);  // this step only (N, NH, 1, S)
        attention[l] = attention[l].defined() ? concat({attention[l], w}, 2) : w;
      }
    }
    return log_softmax(slice(s.logits.value(), 1, T - 1, T).reshape({N, V}), -1);  // (N, V)
  }
  // [docs:end]

  // Row i continues the prefix of row index[i] (beam search's reordering).
  void reorder(const Tensor& index) {
    cache_.reorder(index);
    if (prefix_.defined()) prefix_ = index_select(prefix_, 0, index);
    for (Tensor& a : attention) a = index_select(a, 0, index);
  }

  // Row `row`'s attention in layer l, cut to its first `steps` steps and `S` source positions.
  Tensor attention_of(size_t l, int64_t row, int64_t steps, int64_t S) const {
    const Tensor a = slice(attention[l], 0, row, row + 1);  // (1, NH, t, S_max)
    return slice(slice(a, 2, 0, steps), 3, 0, S).reshape({a.size(1), steps, S});  // (NH, steps, S)
  }

  std::vector<Tensor> attention;  // per layer (N, NH, t, S)

 private:
  Transformer& model_;
  TransformerMemory memory_;
  bool use_cache_, need_weights_;
  DecoderCache cache_;
  Tensor prefix_;  // (N, t), uncached mode
};

// Decoding never trains: no graph, and dropout off for as long as this lives.
class InferenceGuard {
 public:
  explicit InferenceGuard(Module& m) : module_(m), was_training_(m.is_training()) { m.eval(); }
  ~InferenceGuard() { module_.train(was_training_); }
  InferenceGuard(const InferenceGuard&) = delete;
  InferenceGuard& operator=(const InferenceGuard&) = delete;

 private:
  Module& module_;
  bool was_training_;
  NoGradGuard no_grad_;
};

void check_decode(const Tensor& src, const std::vector<int64_t>& src_lengths, const DecodeOptions& o, const char* op) {
  check(src.dim() == 2, op, ": expected source ids of shape (B, S), got ", src.shape());
  check(src_lengths.empty() || static_cast<int64_t>(src_lengths.size()) == src.size(0), op, ": expected ", src.size(0),
        " source lengths, got ", src_lengths.size());
  check(o.max_len >= 1, op, ": expected max_len >= 1, got ", o.max_len);
  check(o.beam_size >= 1, op, ": expected beam_size >= 1, got ", o.beam_size);
}

int64_t source_length(const Tensor& src, const std::vector<int64_t>& src_lengths, int64_t b) {
  return src_lengths.empty() ? src.size(1) : src_lengths[b];
}

}  // namespace

// ================================================================================================
// Greedy decoding

DecodeResult greedy_decode(Transformer& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                           const DecodeOptions& o) {
  check_decode(src, src_lengths, o, "greedy_decode");
  InferenceGuard guard(model);
  const int64_t B = src.size(0);
  Stepper stepper(model, model.encode(src, src_lengths), o);

  DecodeResult r;
  r.tokens.resize(B);
  r.log_probs.assign(B, 0);
  std::vector<int64_t> steps(B, 0);  // decoder steps each output used (its tokens, plus <eos>)
  std::vector<bool> done(B, false);
  Tensor token = full({B, 1}, static_cast<real>(kBosId));
  // [docs:greedy_loop]
  for (int64_t t = 0; t < o.max_len; ++t) {
    const Tensor logp = stepper.step(token);  // (B, V)
    const Tensor next = argmax(logp, -1);     // (B)
    const int64_t V = logp.size(1);
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      if (done[b]) continue;
      const int64_t id = static_cast<int64_t>(next.data()[b]);
      r.log_probs[b] += logp.data()[b * V + id];
      ++steps[b];
      if (id == kEosId) done[b] = true;
      else r.tokens[b].push_back(id);
      all_done = all_done && done[b];
    }
    if (all_done) break;
    token = next.reshape({B, 1});
  }
  // [docs:end]
  if (o.need_weights) {
    r.cross_attention.resize(B);
    for (int64_t b = 0; b < B; ++b)
      for (size_t l = 0; l < stepper.attention.size(); ++l)
        r.cross_attention[b].push_back(stepper.attention_of(l, b, steps[b], source_length(src, src_lengths, b)));
  }
  return r;
}

// ================================================================================================
// Beam search

namespace {

struct Finished {
  std::vector<int64_t> tokens;  // without <eos>
  double log_prob, score;       // score = log_prob / length penalty
  std::vector<Tensor> attention;
};

// GNMT's length penalty: log P / ((5 + |Y|) / 6)^alpha
double normalised(double log_prob, int64_t length, double alpha) {
  return log_prob / std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

struct Candidate {
  double total;   // log-probability of the extended prefix
  int64_t k, id;  // from beam k, adding token id
};

}  // namespace

DecodeResult beam_search(Transformer& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                         const DecodeOptions& o) {
  check_decode(src, src_lengths, o, "beam_search");
  InferenceGuard guard(model);
  const int64_t B = src.size(0), K = o.beam_size, N = B * K;
  const double alpha = o.length_penalty;

  // Row b*K + k is beam k of source b: the memory is repeated K times per source.
  TransformerMemory memory = model.encode(src, src_lengths);
  Tensor repeat = Tensor::empty({N});
  for (int64_t i = 0; i < N; ++i) repeat.data()[i] = static_cast<real>(i / K);
  memory.memory = index_select(memory.memory, 0, repeat);  // (N, S, C)
  if (memory.key_padding_mask.defined()) memory.key_padding_mask = index_select(memory.key_padding_mask, 0, repeat);
  Stepper stepper(model, memory, o);

  // All K beams of a source start as the same empty prefix; only beam 0 may extend it at the
  // first step (the others start at -inf), or the K beams would be K copies of one.
  std::vector<std::vector<int64_t>> prefix(N);
  std::vector<double> score(N, kNegInf);
  for (int64_t b = 0; b < B; ++b) score[b * K] = 0;
  std::vector<std::vector<Finished>> finished(B);
  std::vector<bool> done(B, false);
  auto attention_of = [&](int64_t row, int64_t steps, int64_t b) {
    std::vector<Tensor> a;
    for (size_t l = 0; l < stepper.attention.size(); ++l)
      a.push_back(stepper.attention_of(l, row, steps, source_length(src, src_lengths, b)));
    return a;
  };

  Tensor tokens = full({N, 1}, static_cast<real>(kBosId));
  for (int64_t t = 0; t < o.max_len; ++t) {
    const Tensor logp = stepper.step(tokens);  // (N, V)
    const int64_t V = logp.size(1);
    Tensor parent = Tensor::empty({N}), next = full({N, 1}, static_cast<real>(kEosId));
    std::vector<std::vector<int64_t>> new_prefix(N);
    std::vector<double> new_score(N, kNegInf);
    for (int64_t i = 0; i < N; ++i) parent.data()[i] = static_cast<real>(i);
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      if (done[b]) continue;
      // [docs:beam_step]
      // Every one-token extension of every live beam, best first (ties: lower beam, lower id).
      std::vector<Candidate> cands;
      for (int64_t k = 0; k < K; ++k) {
        const int64_t row = b * K + k;
        if (score[row] == kNegInf) continue;
        for (int64_t id = 0; id < V; ++id) cands.push_back({score[row] + logp.data()[row * V + id], k, id});
      }
      const size_t top = std::min(cands.size(), static_cast<size_t>(2 * K));
      std::partial_sort(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(top), cands.end(),
                        [](const Candidate& x, const Candidate& y) {
                          return x.total != y.total ? x.total > y.total : (x.k != y.k ? x.k < y.k : x.id < y.id);
                        });
      // Walk the candidates best first. One ending in <eos> among the best K finishes its
      // hypothesis; the first K others become the new beams (2K candidates hold at least K that
      // do not end in <eos>: each beam has only one <eos> extension).
      int64_t live = 0;
      double best_live = kNegInf;
      for (size_t c = 0; c < top && live < K; ++c) {
        const Candidate& cand = cands[c];
        const int64_t row = b * K + cand.k;
        if (!std::isfinite(cand.total)) break;
        if (cand.id == kEosId) {
          if (static_cast<int64_t>(c) < K) {
            const int64_t length = static_cast<int64_t>(prefix[row].size()) + 1;
            finished[b].push_back({prefix[row], cand.total, normalised(cand.total, length, alpha),
                                   o.need_weights ? attention_of(row, length, b) : std::vector<Tensor>()});
          }
          continue;
        }
        const int64_t slot = b * K + live++;
        parent.data()[slot] = static_cast<real>(row);
        next.data()[slot] = static_cast<real>(cand.id);
        new_prefix[slot] = prefix[row];
        new_prefix[slot].push_back(cand.id);
        new_score[slot] = cand.total;
        best_live = std::max(best_live, cand.total);
      }
      // Done once K hypotheses have finished and every live one is already less likely than
      // the K-th best of them: extending a prefix only lowers its log-probability.
      if (static_cast<int64_t>(finished[b].size()) >= K) {
        std::vector<double> ends;
        for (const Finished& f : finished[b]) ends.push_back(f.log_prob);
        std::nth_element(ends.begin(), ends.begin() + (K - 1), ends.end(), std::greater<double>());
        done[b] = best_live <= ends[K - 1];
      }
      // [docs:end]
      all_done = all_done && done[b];
    }
    if (all_done) break;
    stepper.reorder(parent);
    prefix = std::move(new_prefix);
    score = std::move(new_score);
    tokens = next;
  }

  // Sources still searching at max_len: their live beams count as finished (without <eos>).
  DecodeResult r;
  for (int64_t b = 0; b < B; ++b) {
    if (!done[b])
      for (int64_t k = 0; k < K; ++k) {
        const int64_t row = b * K + k, length = static_cast<int64_t>(prefix[row].size());
        if (score[row] == kNegInf) continue;
        finished[b].push_back({prefix[row], score[row], normalised(score[row], length, alpha),
                               o.need_weights ? attention_of(row, length, b) : std::vector<Tensor>()});
      }
    if (finished[b].empty()) finished[b].push_back({{}, kNegInf, kNegInf, {}});  // nothing was ever possible
    const Finished* best = &finished[b].front();
    for (const Finished& f : finished[b])
      if (f.score > best->score) best = &f;
    r.tokens.push_back(best->tokens);
    r.log_probs.push_back(best->log_prob);
    if (o.need_weights) r.cross_attention.push_back(best->attention);
  }
  return r;
}

}  // namespace seqgrad::nn
