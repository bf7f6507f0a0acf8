// data/images.cpp - the 3 x 5 digit font and the renderer (see images.h).
#include "data/images.h"

#include <algorithm>

#include "tensor/check.h"
#include "tensor/random.h"

namespace seqgrad::data {

const std::vector<std::string>& digit_glyph(int64_t d) {
  static const std::vector<std::vector<std::string>> font{
      {"###", "#.#", "#.#", "#.#", "###"},  // 0
      {".#.", "##.", ".#.", ".#.", "###"},  // 1
      {"###", "..#", "###", "#..", "###"},  // 2
      {"###", "..#", ".##", "..#", "###"},  // 3
      {"#.#", "#.#", "###", "..#", "..#"},  // 4
      {"###", "#..", "###", "..#", "###"},  // 5
      {"###", "#..", "###", "#.#", "###"},  // 6
      {"###", "..#", ".#.", ".#.", ".#."},  // 7
      {"###", "#.#", "###", "#.#", "###"},  // 8
      {"###", "#.#", "###", "..#", "###"},  // 9
  };
  check_index(d >= 0 && d <= 9, "digit_glyph: expected a digit 0..9, got ", d);
  return font[d];
}

DigitImages make_digit_images(const DigitImageOptions& o) {
  check(o.n > 0 && o.height > 0 && o.width > 0, "make_digit_images: expected positive n, height and width, got ", o.n,
        ", ", o.height, " and ", o.width);
  check(o.min_digits >= 1 && o.min_digits <= o.max_digits && o.min_gap >= 0 && o.min_gap <= o.max_gap,
        "make_digit_images: expected 1 <= min_digits <= max_digits and 0 <= min_gap <= max_gap, got digits ",
        o.min_digits, "..", o.max_digits, " and gaps ", o.min_gap, "..", o.max_gap);
  check(o.noise >= 0, "make_digit_images: expected noise >= 0, got ", o.noise);
  const int64_t widest = o.max_digits * kGlyphWidth + (o.max_digits - 1) * o.max_gap;
  check(widest <= o.width && kGlyphHeight <= o.height, "make_digit_images: ", o.max_digits, " digits with gaps of ",
        o.max_gap, " need an image of at least ", kGlyphHeight, " x ", widest, " pixels, got ", o.height, " x ",
        o.width);
  Generator g(o.seed);
  auto between = [&g](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(g.randint(static_cast<uint64_t>(hi - lo + 1))); };
  DigitImages out{zeros({o.n, o.height, o.width}), {}, {}, {}};
  for (int64_t k = 0; k < o.n; ++k) {
    // The string and its layout: gaps first, then a free left margin and top row.
    const int64_t digits = between(o.min_digits, o.max_digits);
    std::string text;
    std::vector<int64_t> gaps(digits, 0);
    int64_t used = digits * kGlyphWidth;
    for (int64_t i = 0; i < digits; ++i) {
      text += static_cast<char>('0' + g.randint(10));
      if (i > 0) used += gaps[i] = between(o.min_gap, o.max_gap);
    }
    const int64_t top = between(0, o.height - kGlyphHeight);
    int64_t x = between(0, o.max_left < 0 ? o.width - used : std::min(o.max_left, o.width - used));
    real* image = out.images.data() + k * o.height * o.width;
    std::vector<int64_t> left;
    for (int64_t i = 0; i < digits; ++i) {
      x += gaps[i];
      left.push_back(x);
      const real ink = static_cast<real>(0.6 + 0.4 * g.uniform());  // a fainter or darker glyph
      const std::vector<std::string>& glyph = digit_glyph(text[i] - '0');
      for (int64_t r = 0; r < kGlyphHeight; ++r)
        for (int64_t c = 0; c < kGlyphWidth; ++c)
          if (glyph[r][c] == '#') image[(top + r) * o.width + x + c] = ink;
      x += kGlyphWidth;
    }
    for (int64_t i = 0; i < o.height * o.width; ++i)
      image[i] = std::clamp(image[i] + static_cast<real>(o.noise * g.normal()), real(0), real(1));
    out.texts.push_back(text);
    out.left.push_back(left);
    out.top.push_back(top);
  }
  return out;
}

}  // namespace seqgrad::data
