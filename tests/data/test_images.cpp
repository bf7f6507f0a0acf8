// tests/data/test_images.cpp - the toy OCR images and the toy recommendation tasks: shapes,
// where the glyphs are, determinism, and errors.
#include <map>
#include <set>

#include "data/images.h"
#include "data/recommend.h"
#include "tests/test_util.h"

using namespace seqgrad;

TEST_CASE("digit images: each glyph is drawn where `left` and `top` say, and nowhere else") {
  const auto o = data::DigitImageOptions().with_n(20).with_size(12, 40).with_noise(0).with_seed(3);
  const data::DigitImages d = data::make_digit_images(o);
  CHECK(d.images.shape() == Shape{20, 12, 40});
  REQUIRE(d.texts.size() == 20);
  for (int64_t k = 0; k < 20; ++k) {
    const std::string& text = d.texts[k];
    CHECK(text.size() >= 3);
    CHECK(text.size() <= 6);
    REQUIRE(d.left[k].size() == text.size());
    // Without noise, a pixel has ink exactly where a glyph's '#' was drawn.
    Tensor expected = zeros({12, 40});
    for (size_t i = 0; i < text.size(); ++i) {
      if (i > 0) CHECK(d.left[k][i] - d.left[k][i - 1] - data::kGlyphWidth >= 1);  // a gap of 1-2 columns
      if (i > 0) CHECK(d.left[k][i] - d.left[k][i - 1] - data::kGlyphWidth <= 2);
      const auto& glyph = data::digit_glyph(text[i] - '0');
      for (int64_t r = 0; r < data::kGlyphHeight; ++r)
        for (int64_t c = 0; c < data::kGlyphWidth; ++c)
          if (glyph[r][c] == '#') expected.at({d.top[k] + r, d.left[k][i] + c}) = 1;
    }
    for (int64_t y = 0; y < 12; ++y)
      for (int64_t x = 0; x < 40; ++x) {
        const real v = d.images.at({k, y, x});
        if (expected.at({y, x}) == 1) CHECK((v >= real(0.6) && v <= 1));  // ink strength 0.6..1
        else CHECK(v == 0);
      }
  }
  // Deterministic from the seed; noise stays inside [0, 1].
  CHECK(data::make_digit_images(o).images.to_vector() == d.images.to_vector());
  const data::DigitImages noisy = data::make_digit_images(data::DigitImageOptions(o).with_noise(real(0.3)));
  CHECK(noisy.texts == d.texts);
  CHECK(max(-noisy.images).item() <= 0);
  CHECK(max(noisy.images).item() <= 1);
  // max_left keeps the text at the left edge.
  for (const auto& left : data::make_digit_images(data::DigitImageOptions(o).with_max_left(2)).left) CHECK(left[0] <= 2);
}

TEST_CASE("digit images: errors") {
  CHECK_THROWS_WITH_AS(data::make_digit_images(data::DigitImageOptions().with_size(12, 20)),
                       "make_digit_images: 6 digits with gaps of 2 need an image of at least 5 x 28 pixels, got 12 x 20",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(data::make_digit_images(data::DigitImageOptions().with_digits(4, 3)),
                       "make_digit_images: expected 1 <= min_digits <= max_digits and 0 <= min_gap <= max_gap, got "
                       "digits 4..3 and gaps 1..2",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(data::digit_glyph(10), "digit_glyph: expected a digit 0..9, got 10", std::out_of_range);
}

TEST_CASE("field interactions: global ids per field, a target from the chosen pairs only") {
  const auto o = data::FieldTaskOptions().with_sizes({3, 2, 4}).with_pairs({{0, 2}}).with_n(500).with_noise(0).with_seed(1);
  const data::FieldData d = data::make_field_interactions(o);
  CHECK(d.ids.shape() == Shape{500, 3});
  CHECK(d.target.shape() == Shape{500});
  CHECK(d.num_features == 9);
  std::map<std::pair<real, real>, real> value;  // (x_0, x_2) -> y
  for (int64_t k = 0; k < 500; ++k) {
    const real a = d.ids.at({k, 0}), b = d.ids.at({k, 1}), c = d.ids.at({k, 2});
    CHECK((a >= 0 && a < 3));
    CHECK((b >= 3 && b < 5));  // field 1's ids start after field 0's 3 values
    CHECK((c >= 5 && c < 9));
    // Without noise, y depends on fields 0 and 2 only: field 1 is irrelevant.
    const auto key = std::make_pair(a, c);
    if (value.count(key)) CHECK(value[key] == d.target.data()[k]);
    value[key] = d.target.data()[k];
  }
  CHECK(value.size() == 12);  // every (x_0, x_2) combination occurred
  CHECK(data::make_field_interactions(o).target.to_vector() == d.target.to_vector());
  CHECK_THROWS_WITH_AS(data::make_field_interactions(data::FieldTaskOptions().with_pairs({{1, 1}})),
                       "make_field_interactions: expected a pair of two different fields in 0..4, got (1, 1)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(data::make_field_interactions(data::FieldTaskOptions().with_sizes({3})),
                       "make_field_interactions: expected at least 2 fields, got 1", std::invalid_argument);
}

TEST_CASE("click histories: clicks on liked categories only, the label says whether the candidate's is one") {
  const auto o = data::ClickTaskOptions().with_categories(6).with_per_category(3).with_max_liked(2).with_clicks(2, 7)
                     .with_n(400).with_seed(3);
  const data::ClickData d = data::make_click_histories(o);
  CHECK(d.num_items == 18);
  CHECK(d.history.shape() == Shape{400, 7});
  CHECK(d.candidate.shape() == Shape{400});
  REQUIRE(d.lengths.size() == 400);
  int64_t positives = 0;
  for (int64_t k = 0; k < 400; ++k) {
    const int64_t len = d.lengths[k];
    CHECK((len >= 2 && len <= 7));
    std::set<int64_t> clicked;  // the categories in the history: the liked ones, as far as it shows
    for (int64_t s = 0; s < 7; ++s) {
      const int64_t item = static_cast<int64_t>(d.history.at({k, s}));
      if (s >= len) {
        CHECK(item == 18);  // padding
        continue;
      }
      CHECK((item >= 0 && item < 18));
      clicked.insert(item / 3);
    }
    CHECK(clicked.size() <= 2);
    const int64_t candidate = static_cast<int64_t>(d.candidate.data()[k]) / 3;
    // A negative's category is never one the user clicked; a positive's is liked, so it shows
    // in the history unless the user's clicks all fell on another liked category.
    if (d.label.data()[k] == 0) CHECK(clicked.count(candidate) == 0);
    positives += d.label.data()[k] == 1;
  }
  CHECK((positives > 150 && positives < 250));  // half the time each
  CHECK(data::make_click_histories(o).history.to_vector() == d.history.to_vector());  // deterministic
  CHECK_THROWS_WITH_AS(data::make_click_histories(data::ClickTaskOptions().with_categories(3).with_max_liked(3)),
                       "make_click_histories: expected max_liked in 1..2, got 3", std::invalid_argument);
  CHECK_THROWS_WITH_AS(data::make_click_histories(data::ClickTaskOptions().with_categories(1)),
                       "make_click_histories: expected at least 2 categories of at least 1 item, got 1 of 4",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(data::make_click_histories(data::ClickTaskOptions().with_n(0)),
                       "make_click_histories: expected a positive n, got 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(data::make_click_histories(data::ClickTaskOptions().with_clicks(4, 3)),
                       "make_click_histories: expected 1 <= min_clicks <= max_clicks, got 4 and 3", std::invalid_argument);
}
