// data/metrics.cpp - edit distance, exact match, edits per token, corpus BLEU, AUC.
#include "data/metrics.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "tensor/check.h"

namespace seqgrad::data {
namespace {

void check_sizes(const std::vector<Tokens>& h, const std::vector<Tokens>& r, const char* op) {
  check(h.size() == r.size(), op, ": expected as many hypotheses as references, got ", h.size(), " and ", r.size());
}

}  // namespace

int64_t edit_distance(const Tokens& a, const Tokens& b) {
  // Levenshtein with one row: d[j] = distance between a[0..i) and b[0..j).
  std::vector<int64_t> d(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) d[j] = static_cast<int64_t>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int64_t diagonal = d[0];  // d[i-1][j-1]
    d[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int64_t above = d[j];  // d[i-1][j]
      d[j] = std::min({above + 1, d[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return d[b.size()];
}

double exact_match(const std::vector<Tokens>& h, const std::vector<Tokens>& r) {
  check_sizes(h, r, "exact_match");
  if (h.empty()) return 0;
  int64_t same = 0;
  for (size_t i = 0; i < h.size(); ++i) same += h[i] == r[i];
  return static_cast<double>(same) / static_cast<double>(h.size());
}

double edits_per_token(const std::vector<Tokens>& h, const std::vector<Tokens>& r) {
  check_sizes(h, r, "edits_per_token");
  int64_t edits = 0, tokens = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    edits += edit_distance(h[i], r[i]);
    tokens += static_cast<int64_t>(r[i].size());
  }
  return tokens ? static_cast<double>(edits) / static_cast<double>(tokens) : (edits ? 1.0 : 0.0);
}

// With the examples sorted by score, a positive at (1-based) rank r is above r - 1 examples;
// summed over the positives, minus the P (P + 1) / 2 pairs of positives among themselves, that
// counts the (positive, negative) pairs in the right order: divide by P N. Tied scores share
// the mean of their ranks, so each tied pair counts half.
double auc(const std::vector<double>& scores, const std::vector<int>& labels) {
  check(scores.size() == labels.size(), "auc: expected as many labels as scores, got ", labels.size(), " and ",
        scores.size());
  for (size_t i = 0; i < scores.size(); ++i) check(std::isfinite(scores[i]), "auc: expected finite scores, got ", scores[i], " at ", i);
  std::vector<size_t> order(scores.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  double positive_rank_sum = 0, positives = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;  // a run of ties: ranks i+1 .. j
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      const int label = labels[order[k]];
      check(label == 0 || label == 1, "auc: expected labels 0 or 1, got ", label);
      if (label == 1) positive_rank_sum += mean_rank, positives += 1;
    }
    i = j;
  }
  const double negatives = static_cast<double>(scores.size()) - positives;
  check(positives > 0 && negatives > 0, "auc: expected both positive and negative examples, got ", positives,
        " positive and ", negatives, " negative");
  return (positive_rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

double bleu(const std::vector<Tokens>& h, const std::vector<Tokens>& r, int max_n) {
  check_sizes(h, r, "bleu");
  check(max_n >= 1, "bleu: expected max_n >= 1, got ", max_n);
  std::vector<int64_t> matched(max_n, 0), total(max_n, 0);
  int64_t hyp_len = 0, ref_len = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    hyp_len += static_cast<int64_t>(h[i].size());
    ref_len += static_cast<int64_t>(r[i].size());
    for (int n = 1; n <= max_n; ++n) {
      // Clipped counts: a hypothesis n-gram counts at most as often as it appears in the reference.
      std::map<Tokens, int64_t> ref_counts;
      for (size_t k = 0; k + n <= r[i].size(); ++k) ++ref_counts[Tokens(r[i].begin() + k, r[i].begin() + k + n)];
      std::map<Tokens, int64_t> hyp_counts;
      for (size_t k = 0; k + n <= h[i].size(); ++k) ++hyp_counts[Tokens(h[i].begin() + k, h[i].begin() + k + n)];
      for (const auto& [gram, count] : hyp_counts) {
        const auto it = ref_counts.find(gram);
        matched[n - 1] += std::min(count, it == ref_counts.end() ? int64_t(0) : it->second);
        total[n - 1] += count;
      }
    }
  }
  double log_precision = 0;
  for (int n = 0; n < max_n; ++n) {
    if (matched[n] == 0 || total[n] == 0) return 0;
    log_precision += std::log(static_cast<double>(matched[n]) / static_cast<double>(total[n])) / max_n;
  }
  const double brevity = hyp_len < ref_len ? std::exp(1 - static_cast<double>(ref_len) / static_cast<double>(hyp_len)) : 1;
  return 100 * brevity * std::exp(log_precision);
}

// ================================================================================================
// Exact match by source length

LengthBuckets::LengthBuckets(int64_t min_len, int64_t width) : min_len_(min_len), width_(width) {
  check(width > 0, "LengthBuckets: expected a positive bucket width, got ", width);
}

void LengthBuckets::add(int64_t source_length, bool correct) {
  check(source_length >= min_len_, "LengthBuckets: expected a source length of at least ", min_len_, ", got ",
        source_length);
  const int64_t bucket = min_len_ + (source_length - min_len_) / width_ * width_;
  hits_[bucket].first += correct;
  hits_[bucket].second += 1;
}

std::map<int64_t, double> LengthBuckets::accuracy() const {
  std::map<int64_t, double> out;
  for (const auto& [bucket, h] : hits_) out[bucket] = static_cast<double>(h.first) / static_cast<double>(h.second);
  return out;
}

std::string bucket_table(const BucketResults& results, const std::vector<std::string>& columns, int64_t width,
                         int64_t max_len, int column_width) {
  check(!columns.empty(), "bucket_table: expected at least one column");
  for (const std::string& c : columns)
    check(results.count(c) == 1, "bucket_table: expected results for column '", c, "'");
  std::ostringstream out;
  out << "length ";
  for (const std::string& c : columns) out << std::setw(column_width) << c;
  out << "\n";
  for (const auto& [bucket, first] : results.at(columns[0])) {
    out << std::setw(2) << bucket << "-" << std::setw(2) << std::min(bucket + width - 1, max_len) << "  ";
    for (const std::string& c : columns) {
      const auto& acc = results.at(c);
      const auto it = acc.find(bucket);
      out << std::setw(column_width) << std::fixed << std::setprecision(3) << (it == acc.end() ? 0.0 : it->second);
    }
    out << "\n";
  }
  return out.str();
}

std::string bucket_table_over_runs(const std::vector<BucketResults>& runs, const std::vector<std::string>& columns,
                                   int64_t width, int64_t max_len, int column_width) {
  check(!runs.empty(), "bucket_table_over_runs: expected at least one run");
  check(!columns.empty(), "bucket_table_over_runs: expected at least one column");
  for (size_t r = 0; r < runs.size(); ++r)
    for (const std::string& c : columns)
      check(runs[r].count(c) == 1, "bucket_table_over_runs: expected results for column '", c, "' in run ", r + 1,
            " of ", runs.size());
  // The rows are the buckets any run of any column has.
  std::set<int64_t> buckets;
  for (const BucketResults& run : runs)
    for (const std::string& c : columns)
      for (const auto& [bucket, acc] : run.at(c)) buckets.insert(bucket);
  std::ostringstream out;
  out << "length ";
  for (const std::string& c : columns) out << std::setw(column_width) << c;
  out << "\n" << std::fixed << std::setprecision(2);
  for (const int64_t bucket : buckets) {
    out << std::setw(2) << bucket << "-" << std::setw(2) << std::min(bucket + width - 1, max_len) << "  ";
    for (const std::string& c : columns) {
      std::vector<double> cell;  // this bucket's figure in each run
      for (const BucketResults& run : runs) {
        const auto& acc = run.at(c);
        const auto it = acc.find(bucket);
        cell.push_back(it == acc.end() ? 0.0 : it->second);
      }
      out << std::setw(column_width) << mean_range(cell);
    }
    out << "\n";
  }
  return out.str();
}

std::string mean_range(const std::vector<double>& runs, int decimals) {
  check(!runs.empty(), "mean_range: expected at least one run");
  check(decimals >= 0 && decimals <= 9, "mean_range: expected 0 to 9 decimals, got ", decimals);
  double sum = 0, lo = runs[0], hi = runs[0];
  for (const double x : runs) {
    sum += x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << sum / static_cast<double>(runs.size());
  if (runs.size() > 1) out << " (" << lo << "-" << hi << ")";
  return out.str();
}

BucketResults bucket_mean(const std::vector<BucketResults>& runs) {
  check(!runs.empty(), "bucket_mean: expected at least one run");
  BucketResults mean;
  for (const BucketResults& run : runs)
    for (const auto& [column, acc] : run)
      for (const auto& [bucket, x] : acc) mean[column][bucket] += x / static_cast<double>(runs.size());
  return mean;
}

std::pair<std::vector<double>, std::vector<double>> bucket_curve(const std::map<int64_t, double>& accuracy,
                                                                 int64_t width) {
  std::pair<std::vector<double>, std::vector<double>> xy;
  for (const auto& [bucket, acc] : accuracy) {
    xy.first.push_back(static_cast<double>(bucket) + static_cast<double>(width - 1) / 2);
    xy.second.push_back(acc);
  }
  return xy;
}

}  // namespace seqgrad::data
