// data/recommend.h - two toy recommendation tasks: feature pairs that interact, and click
// histories in which only some clicks matter for a candidate item.
//
// 1. Field interactions.
// Each example has F categorical fields (think user age group, item category, hour, device),
// field f taking one of sizes[f] values. Every value has a hidden vector u_f[v] of `rank`
// numbers ~ N(0, 1/rank), the same in every pair it takes part in (a factorization machine's
// own assumption), and the target adds up the interactions of a few chosen pairs only:
//   y = sum_{(f, g) in pairs} u_f[x_f] . u_g[x_g] * sqrt(rank) + noise      (each term has variance 1)
// Every other pair of fields carries no signal. A factorization machine weights all pairs
// equally; an attentional one (nn/recommenders/afm.h) can learn which pairs matter, which is what the task
// is for. Ids are global, so one embedding table serves all fields: field f's value v has id
// offset_f + v with offset_f = sizes[0] + ... + sizes[f-1]. Deterministic from a seed.
//
// 2. Click histories (the Deep Interest Network's setting). Items belong to categories. Each
// user likes 1..max_liked categories, and the history holds min_clicks..max_clicks clicks on
// items of liked categories. The candidate comes from a liked category or from another one,
// half the time each; the label says which. Averaging the history blurs the liked categories
// together; attention against the candidate can look for its category among the clicks.
// Item ids: category k's items are k * per_category .. (k + 1) * per_category - 1; the
// padding id is num_items = categories * per_category.
// Depends on tensor/ only.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace seqgrad::data {

struct FieldTaskOptions {
  std::vector<int64_t> sizes{8, 8, 8, 8, 8};                       // values per field; F = sizes.size()
  std::vector<std::pair<int64_t, int64_t>> pairs{{0, 1}, {1, 2}, {3, 4}};  // the pairs that carry signal
  int64_t rank = 4;         // length of the hidden vectors
  int64_t n = 1000;
  real noise = real(0.1);  // std of the Gaussian noise on y
  uint64_t table_seed = 1;  // the hidden vectors: the same "world" for train and test
  uint64_t seed = 0;        // the examples

  FieldTaskOptions& with_sizes(std::vector<int64_t> v) { sizes = std::move(v); return *this; }
  FieldTaskOptions& with_pairs(std::vector<std::pair<int64_t, int64_t>> v) { pairs = std::move(v); return *this; }
  FieldTaskOptions& with_rank(int64_t v) { rank = v; return *this; }
  FieldTaskOptions& with_n(int64_t v) { n = v; return *this; }
  FieldTaskOptions& with_noise(real v) { noise = v; return *this; }
  FieldTaskOptions& with_table_seed(uint64_t v) { table_seed = v; return *this; }
  FieldTaskOptions& with_seed(uint64_t v) { seed = v; return *this; }
};

struct FieldData {
  Tensor ids;     // (N, F) global feature ids, field f's in [offset_f, offset_f + sizes[f])
  Tensor target;  // (N)
  int64_t num_features = 0;  // sum of sizes: the embedding table's size
};

// Throws std::invalid_argument for fewer than two fields, a size or rank < 1, or a pair that is not
// two different fields in range.
FieldData make_field_interactions(const FieldTaskOptions& options);

struct ClickTaskOptions {
  int64_t categories = 20, per_category = 4;  // 80 items
  int64_t max_liked = 5;                      // a user likes 1..max_liked categories
  int64_t min_clicks = 5, max_clicks = 20;    // history lengths
  int64_t n = 1000;
  uint64_t seed = 0;

  ClickTaskOptions& with_categories(int64_t v) { categories = v; return *this; }
  ClickTaskOptions& with_per_category(int64_t v) { per_category = v; return *this; }
  ClickTaskOptions& with_max_liked(int64_t v) { max_liked = v; return *this; }
  ClickTaskOptions& with_clicks(int64_t lo, int64_t hi) { min_clicks = lo; max_clicks = hi; return *this; }
  ClickTaskOptions& with_n(int64_t v) { n = v; return *this; }
  ClickTaskOptions& with_seed(uint64_t v) { seed = v; return *this; }
};

struct ClickData {
  Tensor history;    // (N, max_clicks) item ids, padded with num_items
  Tensor candidate;  // (N) item ids
  Tensor label;      // (N) 1 = the candidate's category is liked, 0 = it is not
  std::vector<int64_t> lengths;  // N history lengths
  int64_t num_items = 0;
};

// Throws std::invalid_argument for fewer than two categories, max_liked outside
// 1..categories - 1 (a disliked category must exist), or click counts outside 1 <= min <= max.
ClickData make_click_histories(const ClickTaskOptions& options);

}  // namespace seqgrad::data
