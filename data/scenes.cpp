// data/scenes.cpp - drawing the shapes and writing the caption (see scenes.h).
#include "data/scenes.h"

#include <algorithm>
#include <cmath>

#include "tensor/check.h"
#include "tensor/random.h"

namespace seqgrad::data {
namespace {

// RGB of red, green, blue, yellow.
constexpr real kRgb[4][3] = {{0.9f, 0.15f, 0.15f}, {0.15f, 0.8f, 0.2f}, {0.2f, 0.35f, 0.95f}, {0.95f, 0.85f, 0.15f}};

// Is pixel (y, x) of an s x s box inside the shape? circle, square, triangle (point up).
bool inside(int64_t shape, int64_t y, int64_t x, int64_t s) {
  const double c = static_cast<double>(s - 1) / 2, dy = static_cast<double>(y) - c, dx = static_cast<double>(x) - c;
  if (shape == 0) return dx * dx + dy * dy <= (c + 0.5) * (c + 0.5) - 0.5;  // the square's corners cut off
  if (shape == 1) return true;
  return std::abs(dx) <= (static_cast<double>(y) + 0.5) / 2;  // one pixel wider every row
}

}  // namespace

const std::vector<std::string>& scene_colors() {
  static const std::vector<std::string> names{"red", "green", "blue", "yellow"};
  return names;
}

const std::vector<std::string>& scene_shapes() {
  static const std::vector<std::string> names{"circle", "square", "triangle"};
  return names;
}

// [docs:scene_caption]
std::vector<std::string> scene_caption(const std::vector<SceneShape>& shapes) {
  check(shapes.size() >= 2, "scene_caption: expected at least 2 shapes, got ", shapes.size());
  auto name = [](const SceneShape& s) {
    return std::vector<std::string>{"a", scene_colors().at(s.color), scene_shapes().at(s.shape)};
  };
  std::vector<std::string> words = name(shapes[0]);
  // Where the second shape stands from the first, on the axis that separates them more. The
  // first is the leftmost (and of two in one column the upper), so dc >= 0.
  const int64_t dc = shapes[1].col - shapes[0].col, dr = shapes[1].row - shapes[0].row;
  if (dc > std::abs(dr)) words.insert(words.end(), {"left", "of"});
  else words.push_back(dr > 0 ? "above" : "below");
  for (size_t i = 1; i < shapes.size(); ++i) {
    if (i == 2) words.push_back("and");
    for (const std::string& w : name(shapes[i])) words.push_back(w);
  }
  return words;
}
// [docs:end]

Vocab scene_vocab() {
  Vocab v;
  v.add("a");
  for (const std::string& w : scene_colors()) v.add(w);
  for (const std::string& w : scene_shapes()) v.add(w);
  for (const char* w : {"left", "of", "above", "below", "and"}) v.add(w);
  return v;
}

std::vector<int64_t> object_word_positions(const std::vector<std::string>& caption) {
  std::vector<int64_t> at;
  for (size_t i = 0; i < caption.size(); ++i)
    if (caption[i] == "a") at.push_back(static_cast<int64_t>(i));
  return at;
}

Scenes make_scenes(const SceneOptions& o) {
  check(o.n > 0, "make_scenes: expected n > 0, got ", o.n);
  check(2 <= o.min_shapes && o.min_shapes <= o.max_shapes && o.max_shapes <= 3,
        "make_scenes: expected 2 <= min_shapes <= max_shapes <= 3, got ", o.min_shapes, " and ", o.max_shapes);
  check(o.cell >= 5, "make_scenes: expected cells of at least 5 pixels, got ", o.cell);
  check(o.noise >= 0, "make_scenes: expected noise >= 0, got ", o.noise);
  Generator g(o.seed);
  const int64_t side = 3 * o.cell, box = o.cell - 2;  // a shape fills a (cell - 2)-pixel box
  Scenes out{zeros({o.n, 3, side, side}), {}, {}};
  for (int64_t k = 0; k < o.n; ++k) {
    // Which cells, which shapes: distinct cells, any colours and shapes.
    const int64_t count = o.min_shapes + static_cast<int64_t>(g.randint(static_cast<uint64_t>(o.max_shapes - o.min_shapes + 1)));
    std::vector<int64_t> cells{0, 1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<SceneShape> shapes;
    for (int64_t i = 0; i < count; ++i) {
      std::swap(cells[i], cells[i + static_cast<int64_t>(g.randint(static_cast<uint64_t>(9 - i)))]);
      SceneShape s{static_cast<int64_t>(g.randint(4)), static_cast<int64_t>(g.randint(3)), cells[i] / 3, cells[i] % 3, 0, 0};
      s.top = s.row * o.cell + static_cast<int64_t>(g.randint(3));  // shifted 0-2 pixels inside its cell
      s.left = s.col * o.cell + static_cast<int64_t>(g.randint(3));
      shapes.push_back(s);
    }
    // Caption order: left to right, then top to bottom.
    std::sort(shapes.begin(), shapes.end(),
              [](const SceneShape& a, const SceneShape& b) { return a.col != b.col ? a.col < b.col : a.row < b.row; });
    real* image = out.images.data() + k * 3 * side * side;  // (3, side, side)
    for (const SceneShape& s : shapes)
      for (int64_t y = 0; y < box; ++y)
        for (int64_t x = 0; x < box; ++x)
          if (inside(s.shape, y, x, box))
            for (int64_t ch = 0; ch < 3; ++ch) image[(ch * side + s.top + y) * side + s.left + x] = kRgb[s.color][ch];
    for (int64_t i = 0; i < 3 * side * side; ++i)
      image[i] = std::clamp(image[i] + real(0.05) + static_cast<real>(o.noise * g.normal()), real(0), real(1));
    out.captions.push_back(scene_caption(shapes));
    out.shapes.push_back(shapes);
  }
  return out;
}

}  // namespace seqgrad::data
