// viz/diagram.h - boxes joined by arrows, laid out in columns: what the book draws a computation
// graph, a beam-search tree and a model's module tree with.
//
// A Diagram is a directed graph of boxes, each holding a few lines of text (the first bold),
// and arrows, each with an optional label. Its layout is the simple layered one of Sugiyama et
// al.: a box's column is the length of the longest path of arrows into it (so every arrow
// points to the right, or down), boxes in a column are ordered by the mean position of their
// neighbours in the column before (a few sweeps, which undoes most crossings of a tree or a
// small graph), and columns are spaced by their widest box. It draws what it is given: the
// caller walks an autograd graph, a search or a module and adds the boxes (examples/book_figures).
// Built on viz/svg.h like viz/plot.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "viz/svg.h"

namespace seqgrad::viz {

struct BoxStyle {
  std::string fill = "#eef2ff";    // the box
  std::string stroke = "#334155";  // its border
  double stroke_width = 1.5;
  bool dashed = false;             // a box that stands for something absent or pruned
};

//   viz::Diagram d;
//   const int64_t x = d.add_box({"x", "value 2.0", "grad -6.0"});
//   const int64_t y = d.add_box({"mul", "value -6.0"});
//   d.add_arrow(x, y, "dy/dx = -3");
//   d.save("graph.svg");
class Diagram {
 public:
  enum class Direction { left_to_right, top_to_bottom };

  explicit Diagram(Direction direction = Direction::left_to_right) : direction_(direction) {}

  // A box with its lines of text (at least one); returns its id, 0, 1, 2, ... in order.
  int64_t add_box(std::vector<std::string> lines, BoxStyle style = BoxStyle());
  // An arrow from box `from` to box `to`, labelled in its middle when `label` is not empty.
  // Throws std::invalid_argument for an unknown id or an arrow from a box to itself, and
  // std::invalid_argument from to_svg() when the arrows make a cycle (no layout has every
  // arrow point forward).
  void add_arrow(int64_t from, int64_t to, std::string label = "", std::string color = "#334155");

  Diagram& set_title(std::string title);
  // Lines of small text under the picture: what the colours and dashes mean, say.
  Diagram& set_notes(std::vector<std::string> notes);
  int64_t size() const { return static_cast<int64_t>(boxes_.size()); }

  // The SVG document, and the same written atomically to `path`. Throws std::invalid_argument
  // for a diagram without boxes.
  std::string to_svg() const;
  void save(const std::string& path) const;

 private:
  struct Box {
    std::vector<std::string> lines;
    BoxStyle style;
  };
  struct Arrow {
    int64_t from, to;
    std::string label, color;
  };
  struct Layout;
  Layout layout() const;

  Direction direction_;
  std::vector<Box> boxes_;
  std::vector<Arrow> arrows_;
  std::string title_;
  std::vector<std::string> notes_;
};

}  // namespace seqgrad::viz
