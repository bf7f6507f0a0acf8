// data/scenes.h - a toy image-captioning task: small colour pictures of 2-3 shapes, each with a
// caption generated from the scene ("a red circle left of a blue square").
//
// The picture is a 3 x 3 board of cells; each shape (circle, square or triangle, in red, green,
// blue or yellow) sits in its own cell, shifted by a pixel or two at random, on a dark noisy
// background. The caption names the shapes from left to right (ties: the upper one first), and
// says where the second stands from the first: "left of", "above" or "below" (whichever axis
// separates them more); a third shape is added with "and". One caption per picture, so it can
// be read off the pixels with nothing left to guess. Where each shape was drawn is kept, to
// check a model's attention. Deterministic from a seed, no files. Depends on tensor/ only.
// Used by examples/14_captioning; read nn/vision/image_to_text.h for the model that captions it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/vocab.h"
#include "tensor/tensor.h"

namespace seqgrad::data {

// The words a shape can be named with.
const std::vector<std::string>& scene_colors();  // red green blue yellow
const std::vector<std::string>& scene_shapes();  // circle square triangle

struct SceneOptions {
  int64_t n = 1000;                       // pictures
  int64_t cell = 8;                       // pixels per board cell: the picture is 3 cell x 3 cell
  int64_t min_shapes = 2, max_shapes = 3;
  real noise = real(0.05);                // std of the Gaussian noise on every channel
  uint64_t seed = 0;

  SceneOptions& with_n(int64_t v) { n = v; return *this; }
  SceneOptions& with_cell(int64_t v) { cell = v; return *this; }
  SceneOptions& with_shapes(int64_t lo, int64_t hi) { min_shapes = lo; max_shapes = hi; return *this; }
  SceneOptions& with_noise(real v) { noise = v; return *this; }
  SceneOptions& with_seed(uint64_t v) { seed = v; return *this; }
};

struct SceneShape {
  int64_t color, shape;  // indices into scene_colors() and scene_shapes()
  int64_t row, col;      // board cell, 0..2 each
  int64_t top, left;     // first pixel row and column of its cell-sized box
};

struct Scenes {
  Tensor images;                             // (N, 3, 3 cell, 3 cell), RGB in [0, 1]
  std::vector<std::vector<std::string>> captions;  // N word lists
  std::vector<std::vector<SceneShape>> shapes;     // per picture, in the caption's order
};

// Throws std::invalid_argument for 2 > min_shapes, min_shapes > max_shapes, max_shapes > 3,
// a cell smaller than 5 pixels, n <= 0 or negative noise.
Scenes make_scenes(const SceneOptions& options);

// The caption of shapes already in caption order: "a red circle left of a blue square and a
// green triangle" as words.
std::vector<std::string> scene_caption(const std::vector<SceneShape>& shapes);

// Every word a caption can use, after the four special tokens, in a fixed order (13 words).
Vocab scene_vocab();
// Where each object's "a" stands in a caption: object i is named by words [p_i, p_i + 3),
// "a COLOUR SHAPE". {0, 5, 9} for "a red circle left of a blue square and a green triangle".
std::vector<int64_t> object_word_positions(const std::vector<std::string>& caption);

}  // namespace seqgrad::data
