// exercises/solutions/14_beam_stop/exercise.cpp - reference solution of exercise 14.
#include "exercise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace {

// fairseq's length penalty: log P / |Y|^alpha
double normalised(double log_prob, int64_t length, double alpha) {
  return log_prob / std::pow(static_cast<double>(length), alpha);
}

struct Live {
  std::vector<int64_t> tokens;
  double log_prob;
};

struct Extension {
  double log_prob;  // of the extended prefix
  int64_t beam, id;
};

}  // namespace

Hypothesis beam_search_one(const NextLogProbs& next, int64_t K, int64_t max_len, double alpha, int64_t eos) {
  if (K < 1 || max_len < 1 || alpha < 0)
    throw std::invalid_argument("beam_search_one: expected K >= 1, max_len >= 1 and alpha >= 0");
  // The stop bound (chapter 10 leaves the derivation here). Every output that a live prefix of
  // log-probability L can still become has log-probability L' <= L <= 0 (each token adds a
  // log-probability <= 0) and length |Y| <= max_len. Its score is
  //   L' / |Y|^alpha  <=  L / |Y|^alpha  <=  L / max_len^alpha,
  // the first step because |Y|^alpha > 0, the second because L <= 0 and |Y|^alpha <=
  // max_len^alpha for alpha >= 0 (a negative number divided by a larger positive one is
  // larger). So once K hypotheses have finished and the best live L / max_len^alpha is not
  // above the best finished score, no live prefix can produce a better output, and stopping
  // loses nothing: the search returns what it would have returned at max_len. Comparing L with
  // the finished log-probabilities instead drops the division, and stops while a live prefix,
  // worse in L, can still end better in score (a longer output divides by more).
  const double longest_penalty = std::pow(static_cast<double>(max_len), alpha);

  std::vector<Live> live{{{}, 0.0}};  // the empty prefix: one beam, not K copies of it
  std::vector<Hypothesis> finished;
  std::vector<double> finished_score;
  bool done = false;
  for (int64_t t = 0; t < max_len && !done; ++t) {
    // Every one-token extension of every live prefix, best first (ties: earlier beam, lower id).
    std::vector<Extension> ext;
    for (int64_t k = 0; k < static_cast<int64_t>(live.size()); ++k) {
      const std::vector<double> logp = next(live[static_cast<size_t>(k)].tokens);  // (V)
      for (int64_t id = 0; id < static_cast<int64_t>(logp.size()); ++id)
        ext.push_back({live[static_cast<size_t>(k)].log_prob + logp[static_cast<size_t>(id)], k, id});
    }
    std::stable_sort(ext.begin(), ext.end(), [](const Extension& a, const Extension& b) { return a.log_prob > b.log_prob; });
    // Walk the best 2K: an <eos> among the best K finishes; the first K others live on. (2K
    // always hold K that do not end in <eos>: each live prefix has one <eos> extension.)
    std::vector<Live> next_live;
    const int64_t top = std::min<int64_t>(static_cast<int64_t>(ext.size()), 2 * K);
    for (int64_t c = 0; c < top && static_cast<int64_t>(next_live.size()) < K; ++c) {
      const Extension& e = ext[static_cast<size_t>(c)];
      if (!std::isfinite(e.log_prob)) break;  // impossible extensions: nothing after them either
      const std::vector<int64_t>& prefix = live[static_cast<size_t>(e.beam)].tokens;
      if (e.id == eos) {
        if (c < K) {
          finished.push_back({prefix, e.log_prob});
          finished_score.push_back(normalised(e.log_prob, static_cast<int64_t>(prefix.size()) + 1, alpha));
        }
        continue;
      }
      Live l{prefix, e.log_prob};
      l.tokens.push_back(e.id);
      next_live.push_back(std::move(l));
    }
    live = std::move(next_live);
    // Stop once K have finished and the best live prefix cannot beat the best of them.
    if (static_cast<int64_t>(finished.size()) >= K) {
      const double best_finished = *std::max_element(finished_score.begin(), finished_score.end());
      double best_live = -std::numeric_limits<double>::infinity();
      for (const Live& l : live) best_live = std::max(best_live, l.log_prob);
      done = live.empty() || best_live / longest_penalty <= best_finished;
    }
  }
  // Still searching at max_len: the live prefixes count as finished, without <eos>.
  if (!done)
    for (const Live& l : live) {
      finished.push_back({l.tokens, l.log_prob});
      finished_score.push_back(normalised(l.log_prob, static_cast<int64_t>(l.tokens.size()), alpha));
    }
  if (finished.empty()) return {{}, -std::numeric_limits<double>::infinity()};  // nothing was possible
  const size_t best = static_cast<size_t>(std::max_element(finished_score.begin(), finished_score.end()) -
                                          finished_score.begin());  // the first of equal ones
  return finished[best];
}
