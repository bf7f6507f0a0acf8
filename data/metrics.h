// data/metrics.h - scoring translations: exact match, token error rate, and BLEU.
//
// All three compare hypotheses with references token by token (after tokenisation):
//   exact_match      fraction of hypotheses identical to their reference
//   token_error_rate total edit distance / total reference tokens (insertions, deletions and
//                    substitutions each cost 1; can exceed 1 for long wrong outputs)
//   bleu             corpus BLEU-4 in 0..100: the geometric mean of the clipped 1- to 4-gram
//                    precisions, times the brevity penalty exp(1 - r/c) when the hypotheses
//                    are shorter in total (c) than the references (r). No smoothing: a corpus
//                    with no matching 4-gram scores 0, as in the original definition.
#pragma once

#include <string>
#include <vector>

namespace seqgrad::data {

using Tokens = std::vector<std::string>;

int64_t edit_distance(const Tokens& a, const Tokens& b);
double exact_match(const std::vector<Tokens>& hypotheses, const std::vector<Tokens>& references);
double token_error_rate(const std::vector<Tokens>& hypotheses, const std::vector<Tokens>& references);
double bleu(const std::vector<Tokens>& hypotheses, const std::vector<Tokens>& references, int max_n = 4);

}  // namespace seqgrad::data
