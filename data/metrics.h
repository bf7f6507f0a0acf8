// data/metrics.h - scoring translations (exact match, edits per token, BLEU) and rankings (AUC).
//
// All three compare hypotheses with references token by token (after tokenisation):
//   exact_match      fraction of hypotheses identical to their reference
//   edits_per_token  total edit distance / total reference tokens (insertions, deletions and
//                    substitutions each cost 1). Not a rate: it exceeds 1 for long wrong outputs
//                    (speech recognition's "word error rate" is the same number)
//   bleu             corpus BLEU-4 in 0..100: the geometric mean of the clipped 1- to 4-gram
//                    precisions, times the brevity penalty exp(1 - r/c) when the hypotheses
//                    are shorter in total (c) than the references (r). No smoothing: a corpus
//                    with no matching 4-gram scores 0, as in the original definition.
// and, for the toy tasks of examples 04 to 06, exact match by source length:
//   LengthBuckets    counts right and wrong outputs per bucket of source lengths
//   bucket_table     the table those examples print, one row per bucket, one column per model
//   bucket_curve     the same figures as the x and y of a plot line
//   bucket_table_over_runs, bucket_mean   the table over several training runs (seeds): each
//                    cell the mean and the range, and the means alone for a plot
//   mean_range       one figure over several runs: "0.90 (0.88-0.92)"
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace seqgrad::data {

using Tokens = std::vector<std::string>;

int64_t edit_distance(const Tokens& a, const Tokens& b);
double exact_match(const std::vector<Tokens>& hypotheses, const std::vector<Tokens>& references);
double edits_per_token(const std::vector<Tokens>& hypotheses, const std::vector<Tokens>& references);
double bleu(const std::vector<Tokens>& hypotheses, const std::vector<Tokens>& references, int max_n = 4);

// Area under the ROC curve of a ranking (click prediction, chapter 14): the probability that a
// random positive example scores above a random negative one, ties counting half. 0.5 is
// chance, 1 a perfect ranking. labels are 1 (positive) or 0; both kinds must occur.
double auc(const std::vector<double>& scores, const std::vector<int>& labels);

// Exact match per bucket of `width` source lengths: bucket b holds the sources of length
// b .. b + width - 1, with b = min_len, min_len + width, ... A fixed-size context vector
// forgets more as the source grows, so this is where a model without attention shows it.
class LengthBuckets {
 public:
  explicit LengthBuckets(int64_t min_len, int64_t width = 5);
  void add(int64_t source_length, bool correct);
  std::map<int64_t, double> accuracy() const;  // bucket start -> fraction correct
  int64_t width() const { return width_; }

 private:
  int64_t min_len_, width_;
  std::map<int64_t, std::pair<int64_t, int64_t>> hits_;  // bucket start -> (correct, total)
};

// A header "length" + the column names, then one row per bucket of the first column's results:
//   length   seq2seq   reverse
//    3- 7      0.990     1.000
// Buckets end at max_len; each figure takes column_width characters, with 3 decimals.
using BucketResults = std::map<std::string, std::map<int64_t, double>>;  // column -> accuracy()
std::string bucket_table(const BucketResults& results, const std::vector<std::string>& columns, int64_t width,
                         int64_t max_len, int column_width = 10);

// The same table over several runs of the same experiment (one BucketResults per seed): each
// cell is the mean over the runs and, in brackets, the lowest and the highest run, 2 decimals:
//   length            seq2seq
//    3- 7    0.99 (0.98-1.00)
// One run is a model's luck; a difference between columns smaller than their ranges is not a
// ranking. Every run must have every column; a bucket a run lacks counts as 0, as above.
std::string bucket_table_over_runs(const std::vector<BucketResults>& runs, const std::vector<std::string>& columns,
                                   int64_t width, int64_t max_len, int column_width = 18);

// One figure over several runs (seeds): "mean (min-max)", each with `decimals` decimals:
//   mean_range({0.88, 0.90, 0.92}) == "0.90 (0.88-0.92)"
// One run gives its figure alone. Every table over seeds in the examples prints its cells so.
std::string mean_range(const std::vector<double>& runs, int decimals = 2);

// The mean over the runs, column by column and bucket by bucket (for bucket_curve).
BucketResults bucket_mean(const std::vector<BucketResults>& runs);

// The points of one model's line: x the middle of each bucket, y its exact match.
std::pair<std::vector<double>, std::vector<double>> bucket_curve(const std::map<int64_t, double>& accuracy,
                                                                 int64_t width);

}  // namespace seqgrad::data
