// viz/heatmap.cpp - Heatmap (SVG and terminal text) and HeatmapGrid.
//
// The SVG layout, left to right: row labels (right-aligned against the grid), the T x S grid of
// cells, the colour bar; top to bottom: title, column labels (rotated to read upwards when one
// is wider than a cell), the grid. Margins are sized from the text they hold (text_width), so a
// long token pushes the grid inwards instead of overlapping it. The terminal form counts
// columns instead of pixels: a CJK character takes two, everything else one.
#include "viz/heatmap.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "io/atomic_file.h"
#include "tensor/check.h"

namespace seqgrad::viz {
namespace {

constexpr double kPad = 10;        // blank border around the picture
constexpr double kTitleFont = 15, kBarFont = 11;
constexpr double kTitleLine = 19;   // from one line of a wrapped title to the next
constexpr double kMinWidth = 320;   // the narrowest picture, so that a small matrix's title wraps into few lines
constexpr double kBold = 1.1;       // bold text is about this much wider than text_width says
constexpr double kBarWidth = 12, kBarMinHeight = 72;
constexpr int kBarSteps = 48;      // the colour bar is a stack of this many strips
constexpr size_t kMaxVertical = 8; // longer column labels are numbered in the terminal form
constexpr size_t kTextWidth = 80;  // the terminal form wraps its label list at this column
const char* const kInk = "#333333";
const char* const kFrame = "#9aa1ab";

// ================================================================================================
// Numbers and text

std::string fixed2(double v) { return format_fixed(v, 2); }  // 0.4271 -> "0.43"

std::string short_number(double v) {  // 0.8734 -> "0.873", 1 -> "1"
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v == 0 ? 0.0 : v);
  return buf;
}

// One character of a label in the terminal: its bytes and how many columns it takes.
struct Glyph {
  std::string text;
  int width = 1;
};

// Splits UTF-8 text into characters. CJK characters are two columns wide (text_width gives them
// a full em); broken UTF-8 and control characters, which would garble the layout, become '?'.
std::vector<Glyph> glyphs(const std::string& s) {
  std::vector<Glyph> out;
  for (size_t i = 0; i < s.size();) {
    size_t n = 1;
    while (n < 4 && i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
    Glyph g{s.substr(i, n), 1};
    const unsigned char lead = static_cast<unsigned char>(g.text[0]);
    if (n == 1 && (lead < 0x20 || lead >= 0x7F)) g.text = "?";   // control byte or broken lead
    else if (n > 1 && escape_xml(g.text) != g.text) g.text = "?";  // broken multi-byte sequence
    else if (n > 1 && text_width(g.text, 1) == 1.0) g.width = 2;   // wide (CJK)
    out.push_back(g);
    i += n;
  }
  return out;
}

int columns_of(const std::vector<Glyph>& gs) {
  int w = 0;
  for (const Glyph& g : gs) w += g.width;
  return w;
}

std::string joined(const std::vector<Glyph>& gs) {
  std::string s;
  for (const Glyph& g : gs) s += g.text;
  return s;
}

std::string repeat(const std::string& s, int64_t n) {
  std::string out;
  for (int64_t i = 0; i < n; ++i) out += s;
  return out;
}

std::string rtrim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::vector<std::string> positions(int64_t n) {
  std::vector<std::string> labels;
  for (int64_t i = 0; i < n; ++i) labels.push_back(std::to_string(i));
  return labels;
}

// ================================================================================================
// Tensor input

// The checks and conversions the tensor constructor makes before delegating; each helper checks
// the shape itself, since the order in which arguments are evaluated is unspecified.
void check_matrix(const Tensor& weights) {
  check(weights.defined() && weights.dim() == 2, "Heatmap: expected a 2-D tensor of weights (T, S), got shape ",
        weights.defined() ? weights.shape() : Shape{},
        weights.defined() && weights.dim() > 2 ? "; pick one example and head first, e.g. weights[b][h]" : "");
}

std::vector<double> matrix_values(const Tensor& weights) {
  check_matrix(weights);
  return std::vector<double>(weights.data(), weights.data() + weights.numel());
}

// The labels along one axis of the weights: the given ones, or "0", "1", ... when none are given.
std::vector<std::string> axis_labels(std::vector<std::string> labels, const Tensor& weights, int axis) {
  check_matrix(weights);
  const int64_t n = weights.size(axis);
  if (labels.empty()) return positions(n);
  check(static_cast<int64_t>(labels.size()) == n, "Heatmap: expected ", n, axis == 0 ? " row" : " column",
        " labels (one per ", axis == 0 ? "row" : "column", " of the ", weights.shape(), " weights), got ",
        labels.size());
  return labels;
}

}  // namespace

// ================================================================================================
// Heatmap: construction and settings

Heatmap::Heatmap(std::vector<std::string> row_labels, std::vector<std::string> col_labels,
                 std::vector<double> values)
    : row_labels_(std::move(row_labels)), col_labels_(std::move(col_labels)), values_(std::move(values)) {
  const int64_t T = rows(), S = cols();
  check(T >= 1 && S >= 1, "Heatmap: expected at least one row and one column, got ", T, " x ", S);
  check(static_cast<int64_t>(values_.size()) == T * S, "Heatmap: expected rows*cols = ", T, "*", S, " = ",
        T * S, " values, got ", values_.size());
  double lo = 0, hi = values_[0];
  for (size_t i = 0; i < values_.size(); ++i) {
    const double v = values_[i];
    check(std::isfinite(v), "Heatmap: expected finite values, got ", v, " at row ", i / S, ", column ", i % S,
          " (\"", row_labels_[i / S], "\", \"", col_labels_[i % S], "\")");
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (hi <= lo) hi = lo + 1;  // all values equal (to 0, or negative)
  lo_ = lo, hi_ = hi;
}

Heatmap::Heatmap(std::vector<std::string> row_labels, std::vector<std::string> col_labels, const Tensor& weights)
    : Heatmap(axis_labels(std::move(row_labels), weights, 0), axis_labels(std::move(col_labels), weights, 1),
              matrix_values(weights)) {}

double Heatmap::value(int64_t row, int64_t col) const {
  check_index(row >= 0 && row < rows() && col >= 0 && col < cols(), "Heatmap::value: expected a cell of the ",
              rows(), " x ", cols(), " matrix, got (", row, ", ", col, ")");
  return values_[static_cast<size_t>(row * cols() + col)];
}

Heatmap& Heatmap::set_value_range(double lo, double hi) {
  check(std::isfinite(lo) && std::isfinite(hi) && lo < hi,
        "Heatmap::set_value_range: expected finite lo < hi, got [", lo, ", ", hi, "]");
  lo_ = lo, hi_ = hi;
  return *this;
}

std::pair<double, double> Heatmap::value_range() const { return {lo_, hi_}; }

Heatmap& Heatmap::set_title(std::string title) { title_ = std::move(title); return *this; }
Heatmap& Heatmap::set_show_values(bool show) { show_values_ = show; return *this; }

Heatmap& Heatmap::set_cell_size(double pixels) {
  check(pixels >= 4 && pixels <= 200, "Heatmap::set_cell_size: expected 4..200 pixels, got ", pixels);
  cell_size_ = pixels;
  return *this;
}

double Heatmap::shade(double v) const { return std::clamp((v - lo_) / (hi_ - lo_), 0.0, 1.0); }

// ================================================================================================
// Heatmap: SVG

// Where everything goes, in pixels from the picture's top-left corner.
struct Heatmap::Layout {
  double cell = 0;
  double label_font = 0;
  double value_font = 0;  // 0: values are not printed
  bool rotate_cols = false;
  double grid_left = 0, grid_top = 0;
  double bar_left = 0, bar_height = 0;
  std::string lo_text, hi_text;
  std::vector<std::string> title_lines;  // the title, wrapped to the picture's width
  double width = 0, height = 0;
};

Heatmap::Layout Heatmap::layout() const {
  const double T = static_cast<double>(rows()), S = static_cast<double>(cols());
  Layout l;
  l.cell = cell_size_ > 0 ? cell_size_ : std::clamp(560 / std::max(T, S), 12.0, 36.0);
  l.label_font = std::clamp(0.7 * l.cell, 6.0, 13.0);

  double row_w = 0, col_w = 0;
  for (const std::string& s : row_labels_) row_w = std::max(row_w, text_width(s, l.label_font));
  for (const std::string& s : col_labels_) col_w = std::max(col_w, text_width(s, l.label_font));
  l.rotate_cols = col_w > l.cell - 2;  // does not fit across its column: read it upwards
  const double col_h = l.rotate_cols ? col_w : l.label_font;
  // The picture is as wide as the grid and its colour bar need (at least kMinWidth): a long
  // title wraps onto more lines instead of widening it.
  const double grid_w = S * l.cell, grid_h = T * l.cell;
  const double bar_labels_w = std::max(text_width(short_number(lo_), kBarFont), text_width(short_number(hi_), kBarFont));
  l.width = std::max(kPad + row_w + 8 + grid_w + 16 + kBarWidth + 6 + bar_labels_w + kPad, kMinWidth);
  l.title_lines = wrap_text(title_, kBold * kTitleFont, l.width - 2 * kPad);
  const double title_h = title_.empty() ? 0 : 30 + kTitleLine * static_cast<double>(l.title_lines.size() - 1);
  l.grid_left = kPad + row_w + 8;
  l.grid_top = kPad + title_h + col_h + 8;

  if (show_values_) {  // the largest font in which every "0.43" fits its cell with 2 px to spare
    double ems = 0;
    for (double v : values_) ems = std::max(ems, text_width(fixed2(v), 1));
    l.value_font = std::min({11.0, (l.cell - 4) / ems, 0.45 * l.cell});
    if (l.value_font < 6) l.value_font = 0;  // too small to read: leave the cells plain
  }

  l.lo_text = short_number(lo_), l.hi_text = short_number(hi_);
  l.bar_left = l.grid_left + grid_w + 16;
  l.bar_height = std::max(grid_h, kBarMinHeight);
  l.height = l.grid_top + std::max(grid_h, l.bar_height) + kPad + kBarFont / 2;
  return l;
}

std::pair<double, double> Heatmap::svg_size() const {
  const Layout l = layout();
  return {l.width, l.height};
}

void Heatmap::draw(SvgCanvas& c, double x, double y) const {
  const Layout l = layout();
  const int64_t T = rows(), S = cols();
  const double grid_w = static_cast<double>(S) * l.cell, grid_h = static_cast<double>(T) * l.cell;
  const auto col_x = [&](int64_t s) { return l.grid_left + static_cast<double>(s) * l.cell; };
  const auto row_y = [&](int64_t t) { return l.grid_top + static_cast<double>(t) * l.cell; };

  c.begin_group({{"transform", cat("translate(", x, " ", y, ")")}});
  c.comment(cat("heatmap: ", T, " rows x ", S, " columns, colours from ", l.lo_text, " (white) to ", l.hi_text,
                " (dark)"));

  // --- title, each line centred over the grid unless that would push it off the picture
  for (size_t i = 0; i < l.title_lines.size(); ++i) {
    TextStyle s{kTitleFont, "middle", "#111111"};
    s.bold = true;
    const double half = kBold * text_width(l.title_lines[i], kTitleFont) / 2;
    const double cx = std::clamp(l.grid_left + grid_w / 2, kPad + half, std::max(kPad + half, l.width - kPad - half));
    c.text(cx, kPad + 16 + kTitleLine * static_cast<double>(i), l.title_lines[i], s);
  }

  // --- cells, edge to edge, and a frame so that white cells still show where the grid ends
  c.begin_group({{"shape-rendering", "crispEdges"}});
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < S; ++s)
      c.rect(col_x(s), row_y(t), l.cell, l.cell, sequential(shade(value(t, s))).hex());
  c.end_group();
  c.rect(l.grid_left, l.grid_top, grid_w, grid_h, "none", kFrame, 1);

  if (show_values_ && l.value_font == 0) c.comment("values not printed: the cells are too small");
  if (l.value_font > 0) {
    for (int64_t t = 0; t < T; ++t)
      for (int64_t s = 0; s < S; ++s) {
        TextStyle st{l.value_font, "middle", shade(value(t, s)) > 0.55 ? "white" : "#222222"};
        st.dy = 0.35;
        c.text(col_x(s) + l.cell / 2, row_y(t) + l.cell / 2, fixed2(value(t, s)), st);
      }
  }

  // --- labels: target tokens down the left, source tokens along the top
  TextStyle row_style{l.label_font, "end", kInk};
  row_style.dy = 0.35;
  for (int64_t t = 0; t < T; ++t) c.text(l.grid_left - 6, row_y(t) + l.cell / 2, row_labels_[t], row_style);
  TextStyle col_style{l.label_font, l.rotate_cols ? "start" : "middle", kInk};
  if (l.rotate_cols) col_style.rotate = -90, col_style.dy = 0.35;
  for (int64_t s = 0; s < S; ++s) {
    const double cx = col_x(s) + l.cell / 2;
    const std::vector<Glyph> gs = glyphs(col_labels_[s]);
    const bool all_wide = std::all_of(gs.begin(), gs.end(), [](const Glyph& g) { return g.width == 2; });
    if (!l.rotate_cols || !all_wide) {
      c.text(cx, l.grid_top - 6, col_labels_[s], col_style);
      continue;
    }
    // A Chinese word reads top to bottom with its characters upright, not on its side: one
    // character per em, the last one nearest the grid (the same space the rotated text takes).
    TextStyle upright{l.label_font, "middle", kInk};
    for (size_t k = 0; k < gs.size(); ++k)
      c.text(cx, l.grid_top - 6 - static_cast<double>(gs.size() - 1 - k) * l.label_font, gs[k].text, upright);
  }

  // --- colour bar: strips from the top (the largest value) down to the bottom (the smallest)
  c.begin_group({{"shape-rendering", "crispEdges"}});
  const double strip = l.bar_height / kBarSteps;
  for (int i = 0; i < kBarSteps; ++i)
    c.rect(l.bar_left, l.grid_top + i * strip, kBarWidth, strip + 0.5,  // + 0.5: no hairline gaps
           sequential(1 - (i + 0.5) / kBarSteps).hex());
  c.end_group();
  c.rect(l.bar_left, l.grid_top, kBarWidth, l.bar_height, "none", kFrame, 1);
  TextStyle bar_style{kBarFont, "start", kInk};
  bar_style.dy = 0.35;
  c.text(l.bar_left + kBarWidth + 6, l.grid_top + 4, l.hi_text, bar_style);
  c.text(l.bar_left + kBarWidth + 6, l.grid_top + l.bar_height - 4, l.lo_text, bar_style);
  c.end_group();
}

std::string Heatmap::to_svg() const {
  const auto [width, height] = svg_size();
  SvgCanvas c(width, height);
  c.rect(0, 0, width, height, "white");
  draw(c, 0, 0);
  return c.str();
}

void Heatmap::save(const std::string& path) const { io::write_file_atomic(path, to_svg(), "save"); }

// ================================================================================================
// Heatmap: terminal text

std::string Heatmap::to_text(bool unicode) const {
  static const std::vector<std::string> kUnicode = {" ", "░", "▒", "▓", "█"};
  static const std::vector<std::string> kAscii = {" ", ".", ":", "-", "=", "+", "*", "#", "%", "@"};
  const std::vector<std::string>& shades = unicode ? kUnicode : kAscii;
  const std::string bar = unicode ? "│" : "|", dash = unicode ? "─" : "-";
  const std::string top_l = unicode ? "┌" : "+", top_r = unicode ? "┐" : "+";
  const std::string bottom_l = unicode ? "└" : "+", bottom_r = unicode ? "┘" : "+";
  const int64_t T = rows(), S = cols();

  // --- row labels, right-aligned in a column as wide as the widest
  std::vector<std::vector<Glyph>> row_glyphs;
  int label_w = 0;
  for (const std::string& s : row_labels_) {
    row_glyphs.push_back(glyphs(s));
    label_w = std::max(label_w, columns_of(row_glyphs.back()));
  }
  const std::string indent(static_cast<size_t>(label_w) + 2, ' ');  // label, space, border

  // --- column heads: the labels themselves, or their numbers when one is long
  std::vector<std::vector<Glyph>> col_glyphs;
  bool numbered = false;
  for (const std::string& s : col_labels_) {
    col_glyphs.push_back(glyphs(s));
    numbered = numbered || col_glyphs.back().size() > kMaxVertical;
  }
  std::vector<std::vector<Glyph>> heads = col_glyphs;
  if (numbered)
    for (int64_t s = 0; s < S; ++s) heads[s] = glyphs(std::to_string(s));
  size_t head_lines = 0;
  for (const auto& h : heads) head_lines = std::max(head_lines, h.size());

  std::string out;
  if (!title_.empty()) out += joined(glyphs(title_)) + "\n";
  for (size_t k = 0; k < head_lines; ++k) {  // written downwards, one character per line
    std::string line = indent;
    for (const auto& h : heads)
      line += k < h.size() ? h[k].text + (h[k].width == 1 ? " " : "") : "  ";
    out += rtrim(line) + "\n";
  }

  // --- the grid: two shade characters per cell, so that cells come out roughly square
  out += std::string(static_cast<size_t>(label_w) + 1, ' ') + top_l + repeat(dash, 2 * S) + top_r + "\n";
  for (int64_t t = 0; t < T; ++t) {
    out += std::string(static_cast<size_t>(label_w - columns_of(row_glyphs[t])), ' ') + joined(row_glyphs[t]) +
           " " + bar;
    for (int64_t s = 0; s < S; ++s) {
      const auto level = static_cast<size_t>(std::lround(shade(value(t, s)) * static_cast<double>(shades.size() - 1)));
      out += shades[level] + shades[level];
    }
    out += bar + "\n";
  }
  out += std::string(static_cast<size_t>(label_w) + 1, ' ') + bottom_l + repeat(dash, 2 * S) + bottom_r + "\n";

  // --- the numbered column labels, as many to a line as fit in kTextWidth columns
  if (numbered) {
    std::string line = indent;
    size_t line_w = indent.size();
    for (int64_t s = 0; s < S; ++s) {
      const std::string entry = std::to_string(s) + ": " + joined(col_glyphs[s]);
      const size_t entry_w = std::to_string(s).size() + 2 + static_cast<size_t>(columns_of(col_glyphs[s]));
      if (line_w > indent.size() && line_w + 2 + entry_w > kTextWidth) {
        out += line + "\n";
        line = indent, line_w = indent.size();
      }
      if (line_w > indent.size()) line += "  ", line_w += 2;
      line += entry, line_w += entry_w;
    }
    out += line + "\n";
  }

  // --- the scale: the lowest value, the shades in order, the highest value
  std::string ramp;
  for (size_t i = 1; i < shades.size(); ++i) ramp += shades[i];
  out += indent + short_number(lo_) + " " + ramp + " " + short_number(hi_) + "\n";
  return out;
}

// ================================================================================================
// HeatmapGrid

HeatmapGrid::HeatmapGrid(int64_t columns) : columns_(columns) {
  check(columns >= 1, "HeatmapGrid: expected columns >= 1, got ", columns);
}

HeatmapGrid& HeatmapGrid::add(Heatmap map) {
  maps_.push_back(std::move(map));
  return *this;
}

HeatmapGrid& HeatmapGrid::set_title(std::string title) { title_ = std::move(title); return *this; }

std::string HeatmapGrid::to_svg() const {
  check(!maps_.empty(), "HeatmapGrid::to_svg: expected at least one heatmap, got 0");
  const int64_t n = size(), ncols = std::min(columns_, n), nrows = (n + ncols - 1) / ncols;
  constexpr double kGap = 12;

  // --- each column as wide as its widest map, each row as tall as its tallest
  std::vector<double> col_w(static_cast<size_t>(ncols), 0), row_h(static_cast<size_t>(nrows), 0);
  for (int64_t i = 0; i < n; ++i) {
    const auto [w, h] = maps_[i].svg_size();
    col_w[i % ncols] = std::max(col_w[i % ncols], w);
    row_h[i / ncols] = std::max(row_h[i / ncols], h);
  }
  // As wide as the maps; a longer title wraps onto more lines.
  double width = kGap * static_cast<double>(ncols - 1);
  for (double w : col_w) width += w;
  const std::vector<std::string> lines = wrap_text(title_, kBold * 17, width - 2 * kPad);
  const double title_h = title_.empty() ? 0 : 36 + 22 * static_cast<double>(lines.size() - 1);
  double height = title_h + kGap * static_cast<double>(nrows - 1);
  for (double h : row_h) height += h;

  SvgCanvas c(width, height);
  c.rect(0, 0, width, height, "white");
  for (size_t i = 0; i < lines.size(); ++i) {
    TextStyle s{17, "middle", "#111111"};
    s.bold = true;
    c.text(width / 2, 26 + 22 * static_cast<double>(i), lines[i], s);
  }
  double y = title_h;
  for (int64_t r = 0; r < nrows; ++r) {
    double x = 0;
    for (int64_t k = 0; k < ncols && r * ncols + k < n; ++k) {
      maps_[r * ncols + k].draw(c, x, y);
      x += col_w[k] + kGap;
    }
    y += row_h[r] + kGap;
  }
  return c.str();
}

void HeatmapGrid::save(const std::string& path) const { io::write_file_atomic(path, to_svg(), "save"); }

}  // namespace seqgrad::viz
