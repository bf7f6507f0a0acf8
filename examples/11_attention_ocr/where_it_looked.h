// examples/11_attention_ocr/where_it_looked.h - the reader's batches and its score: images and
// the teacher-forcing pair, how many strings and characters it read right, whether each
// character looked where its glyph was drawn, and a picture of where it looked, laid over the
// image. Shared by the example and its test (tests/examples/test_attention_ocr.cpp).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "data/batch.h"
#include "data/images.h"
#include "nn/decoding/decoding.h"
#include "tensor/check.h"
#include "tensor/shape_ops.h"
#include "tensor/tensor.h"
#include "viz/image_attention.h"

namespace seqgrad {

// Output tokens: <pad> 0, <bos> 1, <eos> 2, digit d is 3 + d.
inline std::vector<int64_t> digit_ids(const std::string& text) {
  std::vector<int64_t> ids;
  for (char ch : text) ids.push_back(3 + ch - '0');
  return ids;
}

// Images (N, 1, H, W) and the teacher-forcing pair <bos> y -> y <eos>, padded (N, T).
struct OcrBatch {
  Tensor images;
  data::TeacherForcing text;
};
inline OcrBatch ocr_batch(const data::DigitImages& d) {
  std::vector<std::vector<int64_t>> ids;
  for (const std::string& text : d.texts) ids.push_back(digit_ids(text));
  const int64_t N = d.images.size(0), H = d.images.size(1), W = d.images.size(2);
  return {d.images.reshape({N, 1, H, W}), data::teacher_forcing(ids)};
}

// Token ids back to the digit string; anything but a digit reads as '?'.
inline std::string digits_of(const std::vector<int64_t>& tokens) {
  std::string s;
  for (int64_t id : tokens) s += id >= 3 && id <= 12 ? static_cast<char>('0' + id - 3) : '?';
  return s;
}

// Did a character look where it was drawn? The grid column with the most attention (summed
// over the rows) must overlap the glyph's pixel columns [left, left + 3). Grid column j covers
// pixel columns [j W / cols, (j + 1) W / cols), W = width.
inline bool looked_at_glyph(const Tensor& weights, int64_t left, int64_t rows, int64_t cols, int64_t width) {
  int64_t best = 0;
  double best_mass = -1;
  for (int64_t j = 0; j < cols; ++j) {
    double mass = 0;
    for (int64_t i = 0; i < rows; ++i) mass += weights.data()[i * cols + j];
    if (mass > best_mass) best_mass = mass, best = j;
  }
  return best * width < (left + data::kGlyphWidth) * cols && left * cols < (best + 1) * width;
}

struct OcrScore {
  double sequence_accuracy = 0, character_accuracy = 0;
  int64_t right = 0, on_glyph = 0;  // correct characters, and those that looked at their glyph
};

// Where image k's reading looked: (steps, rows * cols), row t the step that wrote character t
// (the last: <eos>, if it was written). `readings` come from nn::decode with need_weights: the
// decoder's one layer and one head, (1, steps, rows * cols) per image.
inline Tensor where_it_looked(const nn::DecodeResult& readings, int64_t k) {
  check(static_cast<int64_t>(readings.cross_attention.size()) > k && !readings.cross_attention[k].empty(),
        "where_it_looked: expected readings decoded with need_weights, got no attention for image ", k);
  const Tensor& w = readings.cross_attention[k][0];  // (1, steps, S)
  return w.reshape({w.size(1), w.size(2)});
}

// texts[k] is what readings.tokens[k] wrote for image k of `truth`.
inline OcrScore score_readings(const nn::DecodeResult& readings, const std::vector<std::string>& texts,
                               const data::DigitImages& truth, int64_t rows, int64_t cols) {
  OcrScore s;
  int64_t exact = 0, chars = 0;
  const int64_t n = static_cast<int64_t>(readings.tokens.size()), width = truth.images.size(2);
  for (int64_t k = 0; k < n; ++k) {
    exact += texts[k] == truth.texts[k];
    chars += static_cast<int64_t>(truth.texts[k].size());
    const Tensor looked = where_it_looked(readings, k);  // (steps, rows * cols)
    for (size_t t = 0; t < std::min(texts[k].size(), truth.texts[k].size()); ++t) {
      if (texts[k][t] != truth.texts[k][t]) continue;
      ++s.right;
      const Tensor w = slice(looked, 0, static_cast<int64_t>(t), static_cast<int64_t>(t) + 1);
      s.on_glyph += looked_at_glyph(w, truth.left[k][t], rows, cols, width);
    }
  }
  s.sequence_accuracy = static_cast<double>(exact) / static_cast<double>(n);
  s.character_accuracy = static_cast<double>(s.right) / static_cast<double>(chars);
  return s;
}

// The image, once per output step, with that step's attention over the grid laid on top of it.
// image (H, W), weights (steps, rows, cols): one step per character of `text`, then <eos>.
inline void draw_attention(const Tensor& image, const std::string& text, const Tensor& weights, const std::string& path) {
  std::vector<std::string> labels;
  for (int64_t t = 0; t < weights.size(0); ++t)
    labels.push_back(t < static_cast<int64_t>(text.size()) ? cat("step ", t + 1, ": '", text[t], "'")
                                                           : cat("step ", t + 1, ": <eos>"));
  viz::ImageAttention(image, labels, weights)
      .set_title("Where each output character attended (orange = more weight)")
      .save(path);
}

}  // namespace seqgrad
