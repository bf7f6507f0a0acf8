// examples/11_attention_ocr/where_it_looked.h - where each output character of the reader
// attended: a check against where its glyph was drawn, and a picture of it under the image.
#pragma once

#include <string>
#include <vector>

#include "data/images.h"
#include "tensor/check.h"
#include "tensor/tensor.h"
#include "viz/heatmap.h"

namespace seqgrad {

// Did character t look where it was drawn? The grid column with the most attention (summed over
// the rows) must overlap the glyph's pixel columns [left, left + 3).
inline bool looked_at_glyph(const Tensor& weights, int64_t left, int64_t rows, int64_t cols, int64_t patch) {
  int64_t best = 0;
  double best_mass = -1;
  for (int64_t j = 0; j < cols; ++j) {
    double mass = 0;
    for (int64_t i = 0; i < rows; ++i) mass += weights.data()[i * cols + j];
    if (mass > best_mass) best_mass = mass, best = j;
  }
  return best * patch < left + data::kGlyphWidth && left < (best + 1) * patch;
}

// The image and, under it, where each output character attended: the grid of weights blown up
// to pixels (every p x p patch shares its weight), so both line up column for column.
inline void draw_attention(const Tensor& image, const std::string& text, const std::vector<Tensor>& weights, int64_t patch,
                           const std::string& path) {
  const int64_t H = image.size(0), W = image.size(1), cols = W / patch;
  const std::vector<std::string> no_rows(H, ""), no_cols(W, "");
  viz::HeatmapGrid grid(/*columns=*/1);
  grid.add(viz::Heatmap(no_rows, no_cols, image).set_title("input image").set_cell_size(10));
  for (size_t t = 0; t < weights.size(); ++t) {
    Tensor pixels = Tensor::empty({H, W});
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x) pixels.at({y, x}) = weights[t].data()[(y / patch) * cols + x / patch];
    const std::string what = t < text.size() ? cat("'", text[t], "'") : std::string("<eos>");
    grid.add(viz::Heatmap(no_rows, no_cols, pixels).set_title(cat("step ", t + 1, ": ", what)).set_cell_size(10));
  }
  grid.set_title("Where each output character attended (darker = more weight)").save(path);
}

}  // namespace seqgrad
