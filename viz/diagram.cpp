// viz/diagram.cpp - the layered layout of boxes and arrows (see diagram.h): columns by longest
// path, order within a column by the neighbours' mean position, then drawing.
#include "viz/diagram.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "io/atomic_file.h"
#include "tensor/check.h"

namespace seqgrad::viz {

namespace {

constexpr double kHeadSize = 13;  // the first line of a box, bold
constexpr double kLineSize = 12;  // the other lines
constexpr double kLabelSize = 11;
constexpr double kLineHeight = 16;
constexpr double kPad = 8;         // inside a box
constexpr double kMargin = 16;     // around the picture
constexpr double kGapInColumn = 14;

}  // namespace

int64_t Diagram::add_box(std::vector<std::string> lines, BoxStyle style) {
  check(!lines.empty(), "Diagram::add_box: expected at least one line of text, got none");
  boxes_.push_back({std::move(lines), std::move(style)});
  return size() - 1;
}

void Diagram::add_arrow(int64_t from, int64_t to, std::string label, std::string color) {
  check(from >= 0 && from < size() && to >= 0 && to < size(), "Diagram::add_arrow: expected box ids in [0, ",
        size(), "), got ", from, " -> ", to);
  check(from != to, "Diagram::add_arrow: an arrow from box ", from, " to itself");
  arrows_.push_back({from, to, std::move(label), std::move(color)});
}

Diagram& Diagram::set_title(std::string title) {
  title_ = std::move(title);
  return *this;
}

Diagram& Diagram::set_notes(std::vector<std::string> notes) {
  notes_ = std::move(notes);
  return *this;
}

// ================================================================================================
// Layout

struct Diagram::Layout {
  std::vector<double> x, y, w, h;  // per box: top-left corner and size
  std::vector<double> out_edge, in_edge;  // per box: where its column ends and begins (along the flow)
  double width = 0, height = 0;    // the whole picture
  double top = 0;                  // where the boxes start (below the title)
};

Diagram::Layout Diagram::layout() const {
  const int64_t n = size();
  check(n > 0, "Diagram::to_svg: no boxes to draw");
  std::vector<std::vector<int64_t>> in(n), out(n);
  for (const Arrow& a : arrows_) {
    out[a.from].push_back(a.to);
    in[a.to].push_back(a.from);
  }
  // 1. Column = longest path into the box, in a topological order (Kahn's algorithm).
  std::vector<int64_t> level(n, 0), waiting(n), ready;
  for (int64_t i = 0; i < n; ++i) waiting[i] = static_cast<int64_t>(in[i].size());
  for (int64_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.push_back(i);
  int64_t placed = 0;
  for (size_t r = 0; r < ready.size(); ++r, ++placed) {
    const int64_t i = ready[r];
    for (int64_t j : out[i]) {
      level[j] = std::max(level[j], level[i] + 1);
      if (--waiting[j] == 0) ready.push_back(j);
    }
  }
  check(placed == n, "Diagram::to_svg: the arrows make a cycle; expected every arrow to point forward");
  // A box with no arrows in (a leaf of a graph, an input) moves up to the column just before
  // its first reader, so its arrows stay short and do not cross the columns in between.
  for (int64_t i = 0; i < n; ++i) {
    if (!in[i].empty() || out[i].empty()) continue;
    int64_t first = level[out[i][0]];
    for (int64_t j : out[i]) first = std::min(first, level[j]);
    level[i] = first - 1;
  }
  const int64_t columns = *std::max_element(level.begin(), level.end()) + 1;
  std::vector<std::vector<int64_t>> column(columns);
  for (int64_t i = 0; i < n; ++i) column[level[i]].push_back(i);

  // 2. Order within a column: by the mean position (0..1) of the neighbours in later columns,
  //    then in earlier ones. Boxes without such neighbours keep their place.
  std::vector<double> pos(n);
  auto number = [&]() {
    for (const auto& c : column)
      for (size_t k = 0; k < c.size(); ++k) pos[c[k]] = (static_cast<double>(k) + 0.5) / static_cast<double>(c.size());
  };
  number();
  auto sweep = [&](int64_t l, const std::vector<std::vector<int64_t>>& neighbours) {
    std::vector<std::pair<double, int64_t>> keyed;
    for (int64_t i : column[l]) {
      double key = pos[i];
      if (!neighbours[i].empty()) {
        key = 0;
        for (int64_t j : neighbours[i]) key += pos[j];
        key /= static_cast<double>(neighbours[i].size());
      }
      keyed.push_back({key, i});
    }
    // Ties (the children of one box) keep the order they were added in.
    std::sort(keyed.begin(), keyed.end(),
              [](const auto& a, const auto& b) { return a.first != b.first ? a.first < b.first : a.second < b.second; });
    for (size_t k = 0; k < keyed.size(); ++k) column[l][k] = keyed[k].second;
    number();
  };
  // The last sweep is by the earlier columns, so that the children of one box in a tree stay
  // together, in the order they were added.
  for (int pass = 0; pass < 4; ++pass) {
    for (int64_t l = columns - 2; l >= 0; --l) sweep(l, out);
    for (int64_t l = 1; l < columns; ++l) sweep(l, in);
  }

  // 3. Sizes, then places: columns side by side (or rows one under another), each centred.
  Layout L;
  L.x.resize(n), L.y.resize(n), L.w.resize(n), L.h.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    double w = 0;
    const auto& lines = boxes_[i].lines;
    for (size_t k = 0; k < lines.size(); ++k) w = std::max(w, text_width(lines[k], k == 0 ? kHeadSize : kLineSize));
    L.w[i] = w + 2 * kPad;
    L.h[i] = static_cast<double>(lines.size()) * kLineHeight + 2 * kPad - 4;
  }
  double longest_label = 0;
  for (const Arrow& a : arrows_) longest_label = std::max(longest_label, text_width(a.label, kLabelSize));
  const bool across = direction_ == Direction::left_to_right;
  // The gap between columns holds a label (left to right) or a label's line (top to bottom).
  const double gap = across ? std::max(48.0, longest_label + 28) : (longest_label > 0 ? 54.0 : 40.0);
  std::vector<double> thickness(columns, 0), length(columns, 0);  // across the flow, along it
  for (int64_t l = 0; l < columns; ++l)
    for (int64_t i : column[l]) {
      thickness[l] = std::max(thickness[l], across ? L.w[i] : L.h[i]);
      length[l] += (across ? L.h[i] : L.w[i]) + (length[l] > 0 ? kGapInColumn : 0);
    }
  const double longest = *std::max_element(length.begin(), length.end());
  L.top = kMargin + (title_.empty() ? 0 : 26);
  double along = across ? kMargin : L.top;
  L.out_edge.resize(n), L.in_edge.resize(n);
  for (int64_t l = 0; l < columns; ++l) {
    double at = (across ? L.top : kMargin) + (longest - length[l]) / 2;
    for (int64_t i : column[l]) {
      L.in_edge[i] = along, L.out_edge[i] = along + thickness[l];
      if (across) {
        L.x[i] = along + (thickness[l] - L.w[i]) / 2, L.y[i] = at;
        at += L.h[i] + kGapInColumn;
      } else {
        L.x[i] = at, L.y[i] = along + (thickness[l] - L.h[i]) / 2;
        at += L.w[i] + kGapInColumn;
      }
    }
    along += thickness[l] + (l + 1 < columns ? gap : 0);
  }
  const double flow_end = along + kMargin;
  const double cross_end = longest + 2 * kMargin;
  L.width = across ? flow_end : cross_end;
  L.height = across ? L.top + longest + kMargin : flow_end;
  L.width = std::max(L.width, text_width(title_, 15) + 2 * kMargin);
  for (const std::string& note : notes_) L.width = std::max(L.width, text_width(note, kLabelSize) + 2 * kMargin);
  L.height += static_cast<double>(notes_.size()) * 15 + (notes_.empty() ? 0 : 6);
  return L;
}

// ================================================================================================
// Drawing

std::string Diagram::to_svg() const {
  const Layout L = layout();
  SvgCanvas c(std::ceil(L.width), std::ceil(L.height));
  c.rect(0, 0, c.width(), c.height(), "white");
  if (!title_.empty()) c.text(kMargin, kMargin + 12, title_, {15, "start", "#222222", true});
  const bool across = direction_ == Direction::left_to_right;

  // Arrows first, so the boxes and labels sit on top: from the middle of one box's far side to
  // the middle of the other's near side, with a filled head.
  // A box narrower than its column first runs straight on to the column's edge (and a line
  // into a narrower box runs straight from its column's edge), so no line crosses a wider box
  // of the same column.
  for (const Arrow& a : arrows_) {
    const double x1 = across ? L.x[a.from] + L.w[a.from] : L.x[a.from] + L.w[a.from] / 2;
    const double y1 = across ? L.y[a.from] + L.h[a.from] / 2 : L.y[a.from] + L.h[a.from];
    const double x2 = across ? L.x[a.to] : L.x[a.to] + L.w[a.to] / 2;
    const double y2 = across ? L.y[a.to] + L.h[a.to] / 2 : L.y[a.to];
    const double ex1 = across ? L.out_edge[a.from] : x1, ey1 = across ? y1 : L.out_edge[a.from];
    const double ex2 = across ? L.in_edge[a.to] : x2, ey2 = across ? y2 : L.in_edge[a.to];
    std::vector<std::pair<double, double>> path = {{x1, y1}};
    if (std::hypot(ex1 - x1, ey1 - y1) > 0.5) path.push_back({ex1, ey1});
    // The straight run into the box, when it is long enough to hold the head.
    if (std::hypot(x2 - ex2, y2 - ey2) > 10) path.push_back({ex2, ey2});
    const auto [px, py] = path.back();
    const double len = std::hypot(x2 - px, y2 - py), ux = (x2 - px) / len, uy = (y2 - py) / len;
    const double hx = x2 - 8 * ux, hy = y2 - 8 * uy;  // the base of the head, along the last segment
    path.push_back({hx, hy});
    c.polyline(path, a.color, 1.4);
    c.polygon({{x2, y2}, {hx - 4 * uy, hy + 4 * ux}, {hx + 4 * uy, hy - 4 * ux}}, a.color);
  }
  // Labels at the middle of their arrow, on a white patch so that a line never crosses the text.
  for (const Arrow& a : arrows_) {
    if (a.label.empty()) continue;
    const double x1 = across ? L.out_edge[a.from] : L.x[a.from] + L.w[a.from] / 2;
    const double y1 = across ? L.y[a.from] + L.h[a.from] / 2 : L.out_edge[a.from];
    const double x2 = across ? L.in_edge[a.to] : L.x[a.to] + L.w[a.to] / 2;
    const double y2 = across ? L.y[a.to] + L.h[a.to] / 2 : L.in_edge[a.to];
    const double mx = (x1 + x2) / 2, my = (y1 + y2) / 2, w = text_width(a.label, kLabelSize) + 6;
    c.rect(mx - w / 2, my - 8, w, 16, "white");
    c.text(mx, my, a.label, {kLabelSize, "middle", a.color == "#334155" ? "#475569" : a.color, false, 0, 0.35});
  }
  for (int64_t i = 0; i < size(); ++i) {
    const Box& b = boxes_[i];
    if (b.style.dashed) c.begin_group({{"stroke-dasharray", "5,3"}});
    c.round_rect(L.x[i], L.y[i], L.w[i], L.h[i], 6, b.style.fill, b.style.stroke, b.style.stroke_width);
    if (b.style.dashed) c.end_group();
    for (size_t k = 0; k < b.lines.size(); ++k)
      c.text(L.x[i] + L.w[i] / 2, L.y[i] + kPad + 8 + static_cast<double>(k) * kLineHeight, b.lines[k],
             {k == 0 ? kHeadSize : kLineSize, "middle", k == 0 ? "#222222" : "#475569", k == 0, 0, 0.35});
  }
  double y = L.height - kMargin - static_cast<double>(notes_.size() - 1) * 15 + 4;
  for (const std::string& note : notes_) {
    c.text(kMargin, y, note, {kLabelSize, "start", "#475569"});
    y += 15;
  }
  return c.str();
}

void Diagram::save(const std::string& path) const { io::write_file_atomic(path, to_svg(), "Diagram::save"); }

}  // namespace seqgrad::viz
