// nn/decoding/decoding.cpp - greedy decoding, sampling and beam search, for any EncoderDecoder.
#include "nn/decoding/decoding.h"

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

// Row `row`'s attention in every layer, cut to its first `steps` steps and to source b's
// length (without src_lengths, all S_max positions: an image has no padding): per layer
// (NH, steps, S).
std::vector<Tensor> attention_of(const DecoderState& state, int64_t row, int64_t steps,
                                 const std::vector<int64_t>& src_lengths, int64_t b) {
  std::vector<Tensor> out;
  for (const Tensor& layer : state.attention) {
    const Tensor a = slice(layer, 0, row, row + 1);  // (1, NH, t, S_max)
    const int64_t S = src_lengths.empty() ? a.size(3) : src_lengths[b];
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
  check(src.dim() >= 2, op, ": expected a batch of sources (B, ...): ids (B, S) or images (B, C, H, W), got ",
        src.shape());
  check(src_lengths.empty() || static_cast<int64_t>(src_lengths.size()) == src.size(0), op, ": expected ", src.size(0),
        " source lengths, got ", src_lengths.size());
  check(o.max_len >= 1, op, ": expected max_len >= 1, got ", o.max_len);
  check(o.beam_size >= 1, op, ": expected beam_size >= 1, got ", o.beam_size);
  check(o.length_penalty >= 0, op, ": expected length_penalty >= 0, got ", o.length_penalty);
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
  const ReusePackedWeights reuse(model.module().parameters());  // every step multiplies by them (autograd/ops.h)
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
      r.cross_attention[b] = attention_of(*state, row, steps[b], src_lengths, b);
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
//
// Row s * K + k of the decoder state is beam k of the source in slot s (Beams::source[s]); a
// source that is done leaves the state, and the slots after it move up. One step runs, for each
// slot, the stages below, then reorder_beams moves the state to the rows that go on:
//   expand_beams  every one-token extension of the slot's live beams, the best 2K first
//   select_best   those ending in <eos> (among the best K) finish; the first K others live on
//   can_stop      the source is done once no live beam can beat its best finished hypothesis
// At max_len, finish_hypotheses counts the live beams as finished, and best_hypotheses picks
// each source's answer.

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

// The live beams of the sources still searching, K rows per slot, and what each row feeds the
// decoder next.
struct Beams {
  std::vector<int64_t> source;               // (slots): the source each slot searches for
  std::vector<std::vector<int64_t>> prefix;  // (slots * K): each beam's output so far
  std::vector<double> score;                 // (slots * K): its log-probability; -inf: no beam
  std::vector<real> parent;                  // (slots * K): the row of the last step it continues
  std::vector<real> token;                   // (slots * K): the token it feeds the next step

  int64_t slots() const { return static_cast<int64_t>(source.size()); }
  Tensor tokens() const { return from_vector(token, {static_cast<int64_t>(token.size())}); }  // (slots * K)
  void append(const Beams& more) {
    source.insert(source.end(), more.source.begin(), more.source.end());
    prefix.insert(prefix.end(), more.prefix.begin(), more.prefix.end());
    score.insert(score.end(), more.score.begin(), more.score.end());
    parent.insert(parent.end(), more.parent.begin(), more.parent.end());
    token.insert(token.end(), more.token.begin(), more.token.end());
  }
};

// What the stages share: the beam size, the length penalty, and how to take a finished row's
// attention out of the decoder state.
struct Search {
  int64_t K;
  double alpha;            // the length penalty's exponent
  int64_t max_len;         // the longest output
  std::function<std::vector<Tensor>(int64_t row, int64_t steps, int64_t b)> attention;  // per layer (NH, steps, S)

  // Row `row`'s prefix as a finished hypothesis of `length` steps (<eos> counted, if it ended so).
  Finished hypothesis(const std::vector<int64_t>& prefix, double log_prob, int64_t length, int64_t row, int64_t b) const {
    return {prefix, log_prob, normalised(log_prob, length, alpha), attention(row, length, b)};
  }
};

// The first beams: each source's state repeated K times (row b * K + k is beam k of source b),
// all K the same empty prefix fed <bos>. Only beam 0 may extend it at the first step (the others
// start at -inf), or the K beams would be K copies of one.
Beams first_beams(DecoderState& state, int64_t B, int64_t K) {
  Tensor repeat = Tensor::empty({B * K});  // (B * K): row i starts from source i / K
  for (int64_t i = 0; i < B * K; ++i) repeat.data()[i] = static_cast<real>(i / K);
  state.reorder(repeat);
  Beams beams;
  for (int64_t b = 0; b < B; ++b) beams.source.push_back(b);
  beams.prefix.resize(static_cast<size_t>(B * K));
  beams.score.assign(static_cast<size_t>(B * K), kNegInf);
  for (int64_t b = 0; b < B; ++b) beams.score[b * K] = 0;
  beams.token.assign(static_cast<size_t>(B * K), static_cast<real>(kBosId));
  return beams;
}

// [docs:beam_expand]
// Expand: every one-token extension of every live beam of `slot`, with the log-probability of
// the extended prefix; logp (slots * K, V). Returns the best 2K, best first (ties: the lower
// beam, then the lower id).
std::vector<Candidate> expand_beams(const Tensor& logp, const Beams& beams, int64_t slot, int64_t K) {
  const int64_t V = logp.size(1);
  std::vector<Candidate> cands;
  for (int64_t k = 0; k < K; ++k) {
    const int64_t row = slot * K + k;
    if (beams.score[row] == kNegInf) continue;
    for (int64_t id = 0; id < V; ++id) cands.push_back({beams.score[row] + logp.data()[row * V + id], k, id});
  }
  const size_t top = std::min(cands.size(), static_cast<size_t>(2 * K));
  std::partial_sort(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(top), cands.end(),
                    [](const Candidate& x, const Candidate& y) {
                      return x.total != y.total ? x.total > y.total : (x.k != y.k ? x.k < y.k : x.id < y.id);
                    });
  cands.resize(top);
  return cands;
}
// [docs:end]

// [docs:beam_select]
// Select: walk the candidates best first. One ending in <eos> among the best K finishes its
// hypothesis (into `finished`); the first K others become the slot's next beams (2K candidates
// hold at least K that do not end in <eos>: each beam has only one <eos> extension). Returns
// those K beams; any left unfilled (fewer than K possible extensions) stay at -inf, fed <eos>.
Beams select_best(const std::vector<Candidate>& cands, const Beams& beams, int64_t slot, const Search& search,
                  std::vector<Finished>& finished) {
  const int64_t K = search.K, b = beams.source[slot];
  Beams next;
  next.source = {b};
  for (int64_t k = 0; k < K; ++k) {  // unfilled: continues its own row, -inf
    next.parent.push_back(static_cast<real>(slot * K + k));
    next.token.push_back(static_cast<real>(kEosId));
  }
  next.prefix.resize(static_cast<size_t>(K));
  next.score.assign(static_cast<size_t>(K), kNegInf);
  int64_t live = 0;
  for (size_t c = 0; c < cands.size() && live < K; ++c) {
    const Candidate& cand = cands[c];
    const int64_t row = slot * K + cand.k;
    if (!std::isfinite(cand.total)) break;
    if (cand.id == kEosId) {
      const int64_t length = static_cast<int64_t>(beams.prefix[row].size()) + 1;
      if (static_cast<int64_t>(c) < K) finished.push_back(search.hypothesis(beams.prefix[row], cand.total, length, row, b));
      continue;
    }
    next.parent[live] = static_cast<real>(row);
    next.token[live] = static_cast<real>(cand.id);
    next.prefix[live] = beams.prefix[row];
    next.prefix[live].push_back(cand.id);
    next.score[live] = cand.total;
    ++live;
  }
  return next;
}
// [docs:end]

// Stop test: a source is done once K hypotheses have finished and no live beam can still beat
// the best of them. A beam's log-probability L only falls as it grows, but the length penalty
// can raise its score up to L / lp(max_len), the score of L at the longest length. (Comparing log-probabilities alone would stop too
// early: a finished L = -2.0 at length 3 scores -1.68, a live L = -2.15 ending at length 5, -1.58.)
bool can_stop(const std::vector<Finished>& finished, const Beams& live, const Search& search) {
  if (static_cast<int64_t>(finished.size()) < search.K) return false;
  double best_finished = kNegInf;
  for (const Finished& f : finished) best_finished = std::max(best_finished, f.score);
  const double best_live = *std::max_element(live.score.begin(), live.score.end());
  return best_live == kNegInf || normalised(best_live, search.max_len, search.alpha) <= best_finished;
}

// Reorder: row i of the next step continues row next.parent[i] of this one (slots' * K rows).
// When every source is done, nothing is left to reorder.
void reorder_beams(DecoderState& state, Beams& beams, Beams next) {
  if (next.slots() > 0) state.reorder(from_vector(next.parent, {static_cast<int64_t>(next.parent.size())}));
  beams = std::move(next);
}

// At max_len: the live beams of the sources still searching count as finished (without <eos>).
void finish_hypotheses(const Beams& beams, const Search& search, std::vector<std::vector<Finished>>& finished) {
  for (int64_t slot = 0; slot < beams.slots(); ++slot) {
    const int64_t b = beams.source[slot];
    for (int64_t k = 0; k < search.K; ++k) {
      const int64_t row = slot * search.K + k, length = static_cast<int64_t>(beams.prefix[row].size());
      if (beams.score[row] == kNegInf) continue;
      finished[b].push_back(search.hypothesis(beams.prefix[row], beams.score[row], length, row, b));
    }
  }
}

// For DecodeResult::search: the live beams a step kept for one source, and the hypotheses it
// finished (those of `found` from index `from` on).
void keep_step(std::vector<SearchNode>& kept, int64_t step, const Beams& live, const std::vector<Finished>& found,
               size_t from, bool eos) {
  for (size_t i = from; i < found.size(); ++i)
    kept.push_back({step, found[i].tokens, found[i].log_prob, found[i].score, true, eos});
  for (size_t k = 0; k < live.score.size(); ++k)
    if (live.score[k] != kNegInf) kept.push_back({step, live.prefix[k], live.score[k], std::nan(""), false, false});
}

// Each source's answer: its finished hypothesis with the best score (the first found, on ties).
DecodeResult best_hypotheses(std::vector<std::vector<Finished>>& finished, bool need_weights) {
  DecodeResult r;
  for (std::vector<Finished>& found : finished) {
    if (found.empty()) found.push_back({{}, kNegInf, kNegInf, {}});  // nothing was ever possible
    const Finished* best = &found.front();
    for (const Finished& f : found)
      if (f.score > best->score) best = &f;
    r.tokens.push_back(best->tokens);
    r.log_probs.push_back(best->log_prob);
    if (need_weights) r.cross_attention.push_back(best->attention);
  }
  return r;
}

}  // namespace

// [docs:beam_search]
DecodeResult beam_search(EncoderDecoder& model, const Tensor& src, const std::vector<int64_t>& src_lengths,
                         const DecodeOptions& o) {
  check_decode(src, src_lengths, o, "beam_search");
  InferenceGuard guard(model.module());
  const ReusePackedWeights reuse(model.module().parameters());  // every step multiplies by them (autograd/ops.h)
  const int64_t B = src.size(0), K = o.beam_size;
  std::unique_ptr<DecoderState> state = model.start(src, src_lengths, {o.need_weights, o.use_cache});
  auto attention = [&](int64_t row, int64_t steps, int64_t b) {
    return o.need_weights ? attention_of(*state, row, steps, src_lengths, b) : std::vector<Tensor>();
  };
  const Search search{K, o.length_penalty, o.max_len, attention};

  Beams beams = first_beams(*state, B, K);
  std::vector<std::vector<Finished>> finished(B);  // per source: the hypotheses found so far
  std::vector<std::vector<SearchNode>> kept(o.keep_search ? B : 0);
  for (int64_t t = 0; t < o.max_len && beams.slots() > 0; ++t) {
    const Tensor logp = model.step(*state, beams.tokens());  // (slots * K, V)
    Beams next;                                              // the beams of the sources that go on
    for (int64_t slot = 0; slot < beams.slots(); ++slot) {
      std::vector<Finished>& found = finished[beams.source[slot]];
      const size_t found_before = found.size();
      const Beams chosen = select_best(expand_beams(logp, beams, slot, K), beams, slot, search, found);
      if (o.keep_search) keep_step(kept[beams.source[slot]], t, chosen, found, found_before, /*eos=*/true);
      if (!can_stop(found, chosen, search)) next.append(chosen);  // else its K rows leave the state
    }
    reorder_beams(*state, beams, std::move(next));
  }
  std::vector<size_t> found_before(B);
  for (int64_t b = 0; b < B; ++b) found_before[b] = finished[b].size();
  finish_hypotheses(beams, search, finished);  // max_len: the live beams count as finished
  DecodeResult r = best_hypotheses(finished, o.need_weights);
  if (o.keep_search) {
    for (int64_t b = 0; b < B; ++b) keep_step(kept[b], o.max_len - 1, Beams(), finished[b], found_before[b], false);
    r.search = std::move(kept);
  }
  return r;
}
// [docs:end]

}  // namespace seqgrad::nn
