// exercises/14_beam_stop - beam search with fairseq's length penalty, and when it may stop
// (chapter 10).
//
// nn::beam_search ranks finished outputs by GNMT's log P / ((5 + |Y|) / 6)^alpha. fairseq
// divides by |Y|^alpha instead. Write beam search for ONE source with that penalty:
//   score(Y) = log P(Y) / |Y|^alpha          |Y| counts the <eos>; alpha >= 0
// The model is a function: next(prefix) gives log P(token | prefix) for every token (V numbers;
// prefix is the output so far, without <bos>). With K beams, starting from the empty prefix:
//   each step, extend every live prefix by every token; order the extensions by log P, best
//   first (ties: the earlier beam, then the lower id); walk the best 2K of them:
//     - one ending in <eos> among the best K finishes: it becomes a hypothesis (without <eos>)
//     - otherwise it becomes one of the next step's K live prefixes (stop walking at K)
//   after max_len steps the live prefixes count as finished too (|Y| = their length).
// The answer is the hypothesis with the best score (the earliest found, on ties).
// Stopping: a source may stop before max_len once K hypotheses have finished and no live
// prefix can still beat the best of them. Work out that bound for this penalty: log P only
// falls as a prefix grows, but |Y|^alpha grows too. (Comparing log P alone stops too early.)
// With alpha = 0 this is nn::beam_search with length_penalty 0, token for token.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

using NextLogProbs = std::function<std::vector<double>(const std::vector<int64_t>& prefix)>;

struct Hypothesis {
  std::vector<int64_t> tokens;  // without <eos>
  double log_prob = 0;          // log P(tokens [+ <eos>])
};

Hypothesis beam_search_one(const NextLogProbs& next, int64_t K, int64_t max_len, double alpha, int64_t eos);
