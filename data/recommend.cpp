// data/recommend.cpp - the pairwise-interaction task and the click-history task (see recommend.h).
#include "data/recommend.h"

#include <algorithm>
#include <cmath>

#include "tensor/check.h"
#include "tensor/random.h"

namespace seqgrad::data {

FieldData make_field_interactions(const FieldTaskOptions& o) {
  const int64_t F = static_cast<int64_t>(o.sizes.size());
  check(F >= 2, "make_field_interactions: expected at least 2 fields, got ", F);
  check(o.n > 0, "make_field_interactions: expected a positive n, got ", o.n);
  check(o.noise >= 0, "make_field_interactions: expected noise >= 0, got ", o.noise);
  std::vector<int64_t> offset(F, 0);
  for (int64_t f = 0; f < F; ++f) {
    check(o.sizes[f] >= 1, "make_field_interactions: expected every field to have >= 1 value, got ", o.sizes[f],
          " for field ", f);
    if (f > 0) offset[f] = offset[f - 1] + o.sizes[f - 1];
  }
  check(o.rank >= 1, "make_field_interactions: expected a rank >= 1, got ", o.rank);
  for (const auto& [f, h] : o.pairs)
    check(f >= 0 && h >= 0 && f < F && h < F && f != h, "make_field_interactions: expected a pair of two different ",
          "fields in 0..", F - 1, ", got (", f, ", ", h, ")");
  // The hidden vectors u, row offset_f + v for value v of field f: the world the examples are
  // drawn from. Each has variance 1/rank per number, so u . u' has variance 1/rank.
  Generator world(o.table_seed);
  std::vector<double> u((offset[F - 1] + o.sizes[F - 1]) * o.rank);
  for (double& v : u) v = world.normal() / std::sqrt(static_cast<double>(o.rank));
  Generator g(o.seed);
  FieldData d{Tensor::empty({o.n, F}), Tensor::empty({o.n}), offset[F - 1] + o.sizes[F - 1]};
  std::vector<int64_t> x(F);
  for (int64_t k = 0; k < o.n; ++k) {
    for (int64_t f = 0; f < F; ++f) {
      x[f] = static_cast<int64_t>(g.randint(static_cast<uint64_t>(o.sizes[f])));
      d.ids.data()[k * F + f] = static_cast<real>(offset[f] + x[f]);
    }
    double y = o.noise * g.normal();
    for (const auto& [f, h] : o.pairs) {
      const double* a = u.data() + (offset[f] + x[f]) * o.rank;
      const double* b = u.data() + (offset[h] + x[h]) * o.rank;
      double dot = 0;
      for (int64_t r = 0; r < o.rank; ++r) dot += a[r] * b[r];
      y += dot * std::sqrt(static_cast<double>(o.rank));
    }
    d.target.data()[k] = static_cast<real>(y);
  }
  return d;
}

ClickData make_click_histories(const ClickTaskOptions& o) {
  check(o.categories >= 2 && o.per_category >= 1, "make_click_histories: expected at least 2 categories of at least 1 item, got ",
        o.categories, " of ", o.per_category);
  check(o.max_liked >= 1 && o.max_liked < o.categories, "make_click_histories: expected max_liked in 1..", o.categories - 1,
        ", got ", o.max_liked);
  check(o.min_clicks >= 1 && o.min_clicks <= o.max_clicks, "make_click_histories: expected 1 <= min_clicks <= max_clicks, got ",
        o.min_clicks, " and ", o.max_clicks);
  check(o.n > 0, "make_click_histories: expected a positive n, got ", o.n);
  Generator g(o.seed);
  const auto draw = [&g](int64_t k) { return static_cast<int64_t>(g.randint(static_cast<uint64_t>(k))); };  // 0..k-1
  const auto is_liked = [](const std::vector<int64_t>& liked, int64_t c) {
    return std::find(liked.begin(), liked.end(), c) != liked.end();
  };
  const auto item_of = [&](int64_t category) { return category * o.per_category + draw(o.per_category); };
  ClickData d;
  d.num_items = o.categories * o.per_category;
  d.history = full({o.n, o.max_clicks}, static_cast<real>(d.num_items));
  d.candidate = Tensor::empty({o.n});
  d.label = Tensor::empty({o.n});
  for (int64_t k = 0; k < o.n; ++k) {
    std::vector<int64_t> liked;  // 1..max_liked different categories
    const int64_t count = 1 + draw(o.max_liked);
    while (static_cast<int64_t>(liked.size()) < count) {
      const int64_t c = draw(o.categories);
      if (!is_liked(liked, c)) liked.push_back(c);
    }
    const int64_t length = o.min_clicks + draw(o.max_clicks - o.min_clicks + 1);
    for (int64_t s = 0; s < length; ++s) d.history.at({k, s}) = static_cast<real>(item_of(liked[draw(count)]));
    d.lengths.push_back(length);
    const bool positive = g.uniform() < 0.5;
    int64_t c = liked[draw(count)];
    while (!positive && is_liked(liked, c)) c = draw(o.categories);
    d.candidate.data()[k] = static_cast<real>(item_of(c));
    d.label.data()[k] = positive ? 1 : 0;
  }
  return d;
}

}  // namespace seqgrad::data
