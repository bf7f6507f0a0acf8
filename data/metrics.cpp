// data/metrics.cpp - edit distance, exact match, token error rate, corpus BLEU.
#include "data/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>

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

double token_error_rate(const std::vector<Tokens>& h, const std::vector<Tokens>& r) {
  check_sizes(h, r, "token_error_rate");
  int64_t edits = 0, tokens = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    edits += edit_distance(h[i], r[i]);
    tokens += static_cast<int64_t>(r[i].size());
  }
  return tokens ? static_cast<double>(edits) / static_cast<double>(tokens) : (edits ? 1.0 : 0.0);
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

}  // namespace seqgrad::data
