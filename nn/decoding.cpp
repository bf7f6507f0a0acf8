// nn/decoding.cpp - greedy decoding, sampling and beam search, for any EncoderDecoder.
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

namespace seqgrad::nn {

// ================================================================================================
// DecoderState (encoder_decoder.h)

void DecoderState::reorder(const Tensor& index) {
  reorder_rows(index);
  for (Tensor& a : attention) a = index_select(a, 0, index);
}

void DecoderState::record_attention(const std::vector<Tensor>& step) {
  attention.resize(step.size());
  for (size_t l = 0; l < step.size(); ++l)
    attention[l] = attention[l].defined() ? concat({attention[l], step[l]}, 2) : step[l];  // (N, NH, t, S)
}

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Row `row`'s attention in every layer, cut to its first `steps` steps and `S` source
// positions: per layer (NH, steps, S).
std::vector<Tensor> attention_of(const DecoderState& state, int64_t row, int64_t steps, int64_t S) {
  std::vector<Tensor> out;
  for (const Tensor& layer : state.attention) {
    const Tensor a = slice(layer, 0, row, row + 1);  // (1, NH, t, S_max)
    out.push_back(slice(slice(a, 2, 0, steps), 3, 0, S).reshape({a.size(1), steps, S}));
  }
  return out;
}

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
  check(o.length_penalty >= 0, op, ": expected length_penalty >= 0, got ", o.length_penalty);
}

int64_t source_length(const Tensor& src, const std::vector<int64_t>& src_lengths, int64_t b) {
  return src_lengths.empty() ? src.size(1) : src_lengths[b];
}

}  // namespace

// ================================================================================================
// Greedy decoding and sampling: one token per step, chosen from that step's distribution

namespace {

// Runs the decoder from <bos>, letting `choose` pick each row's next token from its
// log-probabilities (N, V), until every row has produced <eos> or max_len tokens. A row that has
// produced <eos> stops contributing: the state keeps only the rows still decoding (row r of it
// continues source live[r]), so the later steps' products shrink with it. Since every kernel
// computes a row the same way however many rows there are, this changes no result.
DecodeResult decode_token_by_token(EncoderDecoder& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                                   const DecodeOptions& o, const std::function<Tensor(const Tensor&)>& choose) {
  InferenceGuard guard(model.module());
  const int64_t B = src.size(0);
  std::unique_ptr<DecoderState> state = model.start(src, src_lengths, {o.need_weights, o.use_cache});
  DecodeResult r;
  r.tokens.resize(B);
  r.log_probs.assign(B, 0);
  if (o.need_weights) r.cross_attention.resize(B);
  std::vector<int64_t> steps(B, 0);  // decoder steps each output used (its tokens, plus <eos>)
  std::vector<int64_t> live(B);      // the source of each row of the state
  for (int64_t b = 0; b < B; ++b) live[b] = b;
  // A finished row's attention is taken before the row leaves the state.
  auto keep_attention = [&](int64_t row) {
    const int64_t b = live[row];
    if (o.need_weights && !state->attention.empty())
      r.cross_attention[b] = attention_of(*state, row, steps[b], source_length(src, src_lengths, b));
  };
  Tensor token = full({B}, static_cast<real>(kBosId));
  // [docs:greedy_loop]
  for (int64_t t = 0; t < o.max_len && !live.empty(); ++t) {
    const Tensor logp = model.step(*state, token);  // (N, V), N = rows still decoding
    const Tensor next = choose(logp);               // (N)
    const int64_t N = logp.size(0), V = logp.size(1);
    std::vector<int64_t> kept;  // rows that go on
    for (int64_t row = 0; row < N; ++row) {
      const int64_t b = live[row], id = static_cast<int64_t>(next.data()[row]);
      r.log_probs[b] += logp.data()[row * V + id];
      ++steps[b];
      if (id == kEosId) keep_attention(row);
      else r.tokens[b].push_back(id), kept.push_back(row);
    }
    if (static_cast<int64_t>(kept.size()) == N) {  // no row finished: go on with all of them
      token = next;
      continue;
    }
    Tensor index = Tensor::empty({static_cast<int64_t>(kept.size())});  // (N')
    std::vector<int64_t> still(kept.size());
    for (size_t i = 0; i < kept.size(); ++i) {
      index.data()[i] = static_cast<real>(kept[i]);
      still[i] = live[kept[i]];
    }
    live = std::move(still);
    if (live.empty()) break;
    state->reorder(index);             // row i continues row kept[i]
    token = index_select(next, 0, index);
  }
  // [docs:end]
  for (int64_t row = 0; row < static_cast<int64_t>(live.size()); ++row) keep_attention(row);  // stopped at max_len
  if (o.need_weights && state->attention.empty()) r.cross_attention.clear();  // a model without attention
  return r;
}

}  // namespace

DecodeResult greedy_decode(EncoderDecoder& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                           const DecodeOptions& o) {
  check_decode(src, src_lengths, o, "greedy_decode");
  return decode_token_by_token(model, src, src_lengths, o, [](const Tensor& logp) { return argmax(logp, -1); });
}

DecodeResult decode(EncoderDecoder& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                    const DecodeOptions& o) {
  return o.beam_size > 1 ? beam_search(model, src, src_lengths, o) : greedy_decode(model, src, src_lengths, o);
}

DecodeResult sample(EncoderDecoder& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                    const DecodeOptions& o, Generator& generator) {
  check_decode(src, src_lengths, o, "sample");
  check(o.temperature > 0, "sample: expected temperature > 0, got ", o.temperature);
  check(o.top_k >= 0, "sample: expected top_k >= 0 (0: every token), got ", o.top_k);
  // p_i proportional to exp(log p_i / temperature), over the top_k most likely tokens.
  return decode_token_by_token(model, src, src_lengths, o, [&](const Tensor& logp) {
    const int64_t N = logp.size(0), V = logp.size(1);
    const int64_t k = o.top_k > 0 ? std::min(o.top_k, V) : V;
    Tensor next = Tensor::empty({N});
    std::vector<int64_t> order(V);
    std::vector<double> weight(V);
    for (int64_t n = 0; n < N; ++n) {
      const real* row = logp.data() + n * V;
      for (int64_t v = 0; v < V; ++v) order[v] = v;
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [&](int64_t x, int64_t y) { return row[x] != row[y] ? row[x] > row[y] : x < y; });
      double total = 0;
      for (int64_t j = 0; j < k; ++j)  // relative to the best, so exp cannot overflow
        total += weight[j] = std::exp((row[order[j]] - row[order[0]]) / static_cast<double>(o.temperature));
      double u = generator.uniform() * total;
      int64_t j = 0;
      while (j < k - 1 && (u -= weight[j]) >= 0) ++j;
      next.data()[n] = static_cast<real>(order[j]);
    }
    return next;
  });
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

DecodeResult beam_search(EncoderDecoder& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                         const DecodeOptions& o) {
  check_decode(src, src_lengths, o, "beam_search");
  InferenceGuard guard(model.module());
  const int64_t B = src.size(0), K = o.beam_size, N = B * K;
  const double alpha = o.length_penalty;
  // The best score a live prefix of log-probability L can still reach: L / lp(max_len).
  const double longest_penalty = std::pow((5.0 + static_cast<double>(o.max_len)) / 6.0, alpha);

  // Row s*K + k is beam k of the source in slot s (source[s]): the encoded source is repeated K
  // times per source. A source that is done leaves the state, and the slots after it move up.
  std::unique_ptr<DecoderState> state = model.start(src, src_lengths, {o.need_weights, o.use_cache});
  Tensor repeat = Tensor::empty({N});
  for (int64_t i = 0; i < N; ++i) repeat.data()[i] = static_cast<real>(i / K);
  state->reorder(repeat);
  std::vector<int64_t> source(B);
  for (int64_t b = 0; b < B; ++b) source[b] = b;

  // All K beams of a source start as the same empty prefix; only beam 0 may extend it at the
  // first step (the others start at -inf), or the K beams would be K copies of one.
  std::vector<std::vector<int64_t>> prefix(N);
  std::vector<double> score(N, kNegInf);
  for (int64_t b = 0; b < B; ++b) score[b * K] = 0;
  std::vector<std::vector<Finished>> finished(B);
  std::vector<bool> done(B, false);
  auto attention = [&](int64_t row, int64_t steps, int64_t b) {
    return o.need_weights ? attention_of(*state, row, steps, source_length(src, src_lengths, b)) : std::vector<Tensor>();
  };

  Tensor tokens = full({N}, static_cast<real>(kBosId));
  for (int64_t t = 0; t < o.max_len; ++t) {
    const Tensor logp = model.step(*state, tokens);  // (slots * K, V)
    const int64_t V = logp.size(1);
    // The next step's rows, for the sources still searching: which row each continues, with
    // which token, and its prefix and log-probability.
    std::vector<real> parent, next;
    std::vector<std::vector<int64_t>> new_prefix;
    std::vector<double> new_score;
    std::vector<int64_t> new_source;
    for (int64_t slot = 0; slot < static_cast<int64_t>(source.size()); ++slot) {
      const int64_t b = source[slot];
      // Unfilled beams (fewer than K possible extensions) stay at -inf, fed <eos>.
      const size_t first = parent.size();
      for (int64_t k = 0; k < K; ++k) {
        parent.push_back(static_cast<real>(slot * K + k));
        next.push_back(static_cast<real>(kEosId));
        new_prefix.emplace_back();
        new_score.push_back(kNegInf);
      }
      // [docs:beam_step]
      // Every one-token extension of every live beam, best first (ties: lower beam, lower id).
      std::vector<Candidate> cands;
      for (int64_t k = 0; k < K; ++k) {
        const int64_t row = slot * K + k;
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
        const int64_t row = slot * K + cand.k;
        if (!std::isfinite(cand.total)) break;
        if (cand.id == kEosId) {
          if (static_cast<int64_t>(c) < K) {
            const int64_t length = static_cast<int64_t>(prefix[row].size()) + 1;
            finished[b].push_back({prefix[row], cand.total, normalised(cand.total, length, alpha), attention(row, length, b)});
          }
          continue;
        }
        const size_t beam = first + static_cast<size_t>(live++);
        parent[beam] = static_cast<real>(row);
        next[beam] = static_cast<real>(cand.id);
        new_prefix[beam] = prefix[row];
        new_prefix[beam].push_back(cand.id);
        new_score[beam] = cand.total;
        best_live = std::max(best_live, cand.total);
      }
      // Done once K hypotheses have finished and no live prefix can still beat the best of
      // them: its log-probability only falls, but the length penalty can raise its score up
      // to best_live / lp(max_len). (Comparing log-probabilities alone would stop too early:
      // a finished L = -2.0 at length 3 scores -1.68, a live L = -2.15 ending at length 5, -1.58.)
      if (static_cast<int64_t>(finished[b].size()) >= K) {
        double best_finished = kNegInf;
        for (const Finished& f : finished[b]) best_finished = std::max(best_finished, f.score);
        done[b] = best_live == kNegInf || best_live / longest_penalty <= best_finished;
      }
      // [docs:end]
      if (done[b]) {  // its K rows leave the state
        parent.resize(first);
        next.resize(first);
        new_prefix.resize(first);
        new_score.resize(first);
      } else {
        new_source.push_back(b);
      }
    }
    if (new_source.empty()) break;
    // Row i of the next step continues row parent[i] of this one: (slots' * K)
    state->reorder(from_vector(parent, {static_cast<int64_t>(parent.size())}));
    source = std::move(new_source);
    prefix = std::move(new_prefix);
    score = std::move(new_score);
    tokens = from_vector(next, {static_cast<int64_t>(next.size())});
  }

  // Sources still searching at max_len: their live beams count as finished (without <eos>).
  for (int64_t slot = 0; slot < static_cast<int64_t>(source.size()); ++slot) {
    const int64_t b = source[slot];
    if (done[b]) continue;
    for (int64_t k = 0; k < K; ++k) {
      const int64_t row = slot * K + k, length = static_cast<int64_t>(prefix[row].size());
      if (score[row] == kNegInf) continue;
      finished[b].push_back({prefix[row], score[row], normalised(score[row], length, alpha), attention(row, length, b)});
    }
  }
  DecodeResult r;
  for (int64_t b = 0; b < B; ++b) {
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
