// data/images.h - a toy OCR task: short digit strings drawn into small noisy bitmaps.
//
// Each image is a (height, width) grid of pixels in [0, 1] (0 background, 1 ink) holding a
// string of 3-6 digits drawn with a built-in 3 x 5 pixel font, at a random position, with
// random gaps between the glyphs, a random ink strength per glyph and Gaussian noise. The
// label is the string. Where each glyph was drawn is kept too, so a model's attention can be
// checked against it. Deterministic from a seed, no files. Depends on tensor/ only.
// Used by examples/11_attention_ocr; read nn/vision/cnn_encoder.h for how a model sees it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace seqgrad::data {

// The font: glyph rows of '#' (ink) and '.' (background), kGlyphHeight rows of kGlyphWidth.
constexpr int64_t kGlyphHeight = 5, kGlyphWidth = 3;
// Digit d's glyph as kGlyphHeight strings; throws std::out_of_range unless 0 <= d <= 9.
const std::vector<std::string>& digit_glyph(int64_t d);

struct DigitImageOptions {
  int64_t n = 1000;                      // images
  int64_t height = 12, width = 40;       // pixels
  int64_t min_digits = 3, max_digits = 6;
  int64_t min_gap = 1, max_gap = 2;      // background columns between two glyphs
  int64_t max_left = -1;                 // the first glyph starts at a column <= max_left (-1: anywhere it fits)
  real noise = real(0.15);               // std of the Gaussian noise added to every pixel
  uint64_t seed = 0;

  DigitImageOptions& with_n(int64_t v) { n = v; return *this; }
  DigitImageOptions& with_size(int64_t h, int64_t w) { height = h; width = w; return *this; }
  DigitImageOptions& with_digits(int64_t lo, int64_t hi) { min_digits = lo; max_digits = hi; return *this; }
  DigitImageOptions& with_gaps(int64_t lo, int64_t hi) { min_gap = lo; max_gap = hi; return *this; }
  DigitImageOptions& with_max_left(int64_t v) { max_left = v; return *this; }
  DigitImageOptions& with_noise(real v) { noise = v; return *this; }
  DigitImageOptions& with_seed(uint64_t v) { seed = v; return *this; }
};

struct DigitImages {
  Tensor images;                           // (N, height, width), values clamped to [0, 1]
  std::vector<std::string> texts;          // N strings of digits
  std::vector<std::vector<int64_t>> left;  // per image, the first pixel column of each glyph
  std::vector<int64_t> top;                // per image, the first pixel row of the glyphs
};

// Throws std::invalid_argument when the longest string cannot fit: the width must hold
// max_digits glyphs and max_digits - 1 gaps of max_gap, the height one glyph.
DigitImages make_digit_images(const DigitImageOptions& options);

}  // namespace seqgrad::data
