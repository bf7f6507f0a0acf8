// viz/heatmap.h - alignment maps: an attention matrix drawn as an SVG heatmap (one shaded cell
// per weight, target tokens down the left, source tokens along the top, a colour bar) and as a
// grid of shade characters for the terminal. HeatmapGrid puts several maps side by side, one
// per attention head, say.
//
// It draws numbers it is given; it does not run a decoder or pick a head: the caller slices one
// (T, S) matrix out of the model's (B, NH, T, S) weights. Built on viz/svg.h like viz/plot.h.
// Read next: examples/05_attention/main.cpp, which draws the alignment of one long example.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"
#include "viz/svg.h"

namespace seqgrad::viz {

// ================================================================================================
// Heatmap

// A T x S matrix of weights: row t is generated (target) token t, column s is source token s,
// the cell is how much step t attended to position s.
//   viz::Heatmap map({"我", "爱", "你"}, {"I", "love", "you"}, weights);  // (T, S) Tensor
//   map.set_title("Luong attention, general score").set_show_values(true);
//   map.save("alignment.svg");
//   std::cout << map.to_text();
// Colours run from white (the low end of the value range, 0 for attention weights) to dark blue
// (the largest value) along viz::sequential; set_value_range fixes the range instead, so maps
// drawn side by side share one scale.
class Heatmap {
 public:
  // T row labels, S column labels and T*S finite values, row-major. Throws std::invalid_argument
  // for an empty matrix, a wrong number of values, or a NaN or infinite value.
  Heatmap(std::vector<std::string> row_labels, std::vector<std::string> col_labels, std::vector<double> values);
  // The same from a (T, S) tensor. Empty label lists stand for the positions "0", "1", ...
  Heatmap(std::vector<std::string> row_labels, std::vector<std::string> col_labels, const Tensor& weights);

  int64_t rows() const { return static_cast<int64_t>(row_labels_.size()); }  // T
  int64_t cols() const { return static_cast<int64_t>(col_labels_.size()); }  // S
  double value(int64_t row, int64_t col) const;
  const std::vector<std::string>& row_labels() const { return row_labels_; }
  const std::vector<std::string>& col_labels() const { return col_labels_; }

  // Values at or below lo are white, at or above hi darkest. Default: [min(0, smallest value),
  // largest value], or [0, 1] when all values are equal to 0.
  Heatmap& set_value_range(double lo, double hi);
  std::pair<double, double> value_range() const;

  Heatmap& set_title(std::string title);
  // Print each value (two decimals) in its cell, when the cells are large enough to hold it.
  Heatmap& set_show_values(bool show);
  // Side of one square cell in pixels. Default: 560 / max(T, S), clamped to 12..36.
  Heatmap& set_cell_size(double pixels);

  // The SVG document, and the same written atomically to `path`.
  std::string to_svg() const;
  void save(const std::string& path) const;

  // Size in pixels of the picture to_svg draws, and drawing it onto a larger canvas with its
  // top-left corner at (x, y) (HeatmapGrid does this).
  std::pair<double, double> svg_size() const;
  void draw(SvgCanvas& canvas, double x, double y) const;

  // The matrix as text: one line per row, two shade characters per cell (" ░▒▓█", or
  // " .:-=+*#%@" with unicode = false), row labels on the left, column labels written
  // vertically above their columns (or, when one is longer than 8 characters, column numbers
  // above and a numbered list of the labels below), and the value range on the last line.
  std::string to_text(bool unicode = true) const;

 private:
  struct Layout;
  Layout layout() const;
  double shade(double v) const;  // v's position in the value range, in [0, 1]

  std::vector<std::string> row_labels_, col_labels_;
  std::vector<double> values_;  // (T, S) row-major
  double lo_ = 0, hi_ = 1;
  std::string title_;
  bool show_values_ = false;
  double cell_size_ = 0;  // 0: chosen from the matrix size
};

// ================================================================================================
// HeatmapGrid

// Several heatmaps in rows of `columns`, each with its own title and colour bar, in one SVG:
//   viz::HeatmapGrid grid(/*columns=*/4);
//   for (int64_t h = 0; h < NH; ++h)
//     grid.add(viz::Heatmap(tgt, src, head_weights[h]).set_title(cat("head ", h)).set_value_range(0, 1));
//   grid.set_title("decoder cross-attention, layer 1").save("heads.svg");
class HeatmapGrid {
 public:
  explicit HeatmapGrid(int64_t columns = 4);

  HeatmapGrid& add(Heatmap map);
  HeatmapGrid& set_title(std::string title);
  int64_t size() const { return static_cast<int64_t>(maps_.size()); }

  // Throws std::invalid_argument when no heatmap was added.
  std::string to_svg() const;
  void save(const std::string& path) const;

 private:
  int64_t columns_;
  std::vector<Heatmap> maps_;
  std::string title_;
};

}  // namespace seqgrad::viz
