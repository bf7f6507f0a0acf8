// viz/svg.h - the drawing layer under every plot: an SVG canvas, text escaping, colours,
// "nice" axis ticks and a crash-safe file writer.
//
// SvgCanvas collects rect/line/polyline/circle/text elements and writes one SVG 1.1 document
// that any browser opens. Text goes through escape_xml (so <, &, quotes and broken UTF-8 can
// never break the file) and non-finite coordinates are skipped with a comment, so a plot can
// not produce an invalid file whatever numbers it is given. It knows nothing of series, axes
// or legends: that is viz/plot.h, which is built on it (read that next).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace seqgrad::viz {

// ================================================================================================
// Text

// Text made safe for SVG element content and attribute values: & < > " ' become entities;
// broken UTF-8 and control characters (not allowed in XML) become U+FFFD. Valid UTF-8 (Chinese
// labels, say) passes through unchanged.
//   escape_xml("a<b & \"c\"") == "a&lt;b &amp; &quot;c&quot;"
std::string escape_xml(const std::string& text);

// Approximate width in pixels of `text` drawn in a sans-serif font of `font_size` pixels:
// 0.6 em per narrow character, 1 em per wide (CJK) one. Used to size margins and legends.
double text_width(const std::string& text, double font_size);

// `text` cut at spaces into lines of at most `max_width` pixels (by text_width); a word longer
// than that gets a line of its own. Used to wrap long titles instead of widening the picture:
//   wrap_text("a long title", 12, 60) == {"a long", "title"}
std::vector<std::string> wrap_text(const std::string& text, double font_size, double max_width);

// ================================================================================================
// Colours

struct Color {
  int r = 0, g = 0, b = 0;  // 0..255
  std::string hex() const;  // "#rrggbb"
};

// A categorical palette of 10 distinct colours; index i wraps around. Series i and class i
// get palette(i). Negative indices (an "unknown" class) get grey.
Color palette(int64_t i);

// The colour a fraction t of the way from a to b (t in [0, 1], clamped).
Color mix(Color a, Color b, double t);

// A pale version of c for backgrounds: mix(c, white, amount).
Color lighten(Color c, double amount = 0.7);

// A white -> dark blue ramp for values in [0, 1] (clamped; NaN gives grey), for heatmaps.
Color sequential(double t);

// ================================================================================================
// Axis ticks

// A step of 1, 2 or 5 times a power of ten that cuts `range` into about `target` intervals:
//   nice_step(2.3, 5) == 0.5, nice_step(1000, 5) == 200.
double nice_step(double range, int target = 5);

// Multiples of nice_step(hi - lo, target) from the last one <= lo to the first one >= hi, so
// the ticks cover [lo, hi]: nice_ticks(0.03, 2.3) == {0, 0.5, 1, 1.5, 2, 2.5}. A zero-width
// range is widened first. Throws std::invalid_argument for a non-finite lo or hi.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

// Powers of ten covering [lo, hi] (0 < lo <= hi), every power while there are at most 9,
// else every second, third, ... power: log_ticks(0.03, 2.3) == {0.01, 0.1, 1, 10}.
std::vector<double> log_ticks(double lo, double hi);

// A tick label with as many decimals as the step needs: format_tick(1.5, 0.5) == "1.5",
// format_tick(2, 0.5) == "2.0", format_tick(200, 200) == "200"; exponent form when the step
// is >= 1e6 or < 1e-4 (format_tick(4e6, 2e6) == "4e+06"). On a log axis pass step = value.
std::string format_tick(double value, double step);

// `value` with `decimals` digits after the point, and no sign on a zero ("-0.00" is "0.00"):
// the numbers printed in cells, boxes and labels. format_fixed(0.4271, 2) == "0.43".
std::string format_fixed(double value, int decimals);

// Maps data values in [lo, hi] to pixels in [p0, p1], linearly or on a log10 scale.
// For a y axis p0 is the bottom pixel and p1 the top one (SVG's y grows downwards).
struct Scale {
  double lo = 0, hi = 1;
  double p0 = 0, p1 = 1;
  bool log = false;  // then lo, hi > 0
  double operator()(double v) const;
};

// ================================================================================================
// SvgCanvas

struct TextStyle {
  double size = 12;              // font size in pixels
  std::string anchor = "start";  // "start", "middle" or "end": which end of the text is at x
  std::string fill = "#222222";
  bool bold = false;
  double rotate = 0;  // degrees, clockwise, about (x, y); -90 reads bottom to top
  double dy = 0;      // vertical shift in em; 0.35 centres the text on y
};

// A width x height picture in pixels, origin top-left, y growing downwards. Paints (fill,
// stroke) are SVG colour strings: Color::hex(), "none", "white".
//   SvgCanvas c(200, 100);
//   c.line(10, 90, 190, 10, "#2563eb", /*width=*/2);
//   c.text(100, 20, "y = x", {});
//   c.save("line.svg");
class SvgCanvas {
 public:
  SvgCanvas(double width, double height);

  double width() const { return width_; }
  double height() const { return height_; }

  void rect(double x, double y, double w, double h, const std::string& fill,
            const std::string& stroke = "none", double stroke_width = 1);
  void line(double x1, double y1, double x2, double y2, const std::string& stroke, double width = 1,
            const std::string& dash = "");
  // One connected line through the points; callers split their data at gaps (see LinePlot).
  void polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke,
                double width = 1.5);
  void circle(double cx, double cy, double r, const std::string& fill, const std::string& stroke = "none",
              double stroke_width = 1);
  // A closed shape through the points (an arrowhead, say), filled.
  void polygon(const std::vector<std::pair<double, double>>& points, const std::string& fill);
  // A rectangle with corners rounded by `radius` pixels (the boxes of viz/diagram.h).
  void round_rect(double x, double y, double w, double h, double radius, const std::string& fill,
                  const std::string& stroke = "none", double stroke_width = 1);
  void text(double x, double y, const std::string& text, const TextStyle& style);
  // Another picture (an SVG document from to_svg or str()) placed with its top-left corner at
  // (x, y), as a nested <svg>: how panels are stacked into one figure (stack_vertically).
  void embed(double x, double y, const std::string& svg_document);
  // <!-- text -->, for notes a reader of the file should see (skipped points, say).
  void comment(const std::string& text);

  // <g name="value" ...> ... </g>: attributes shared by the elements in between.
  void begin_group(const std::vector<std::pair<std::string, std::string>>& attributes);
  void end_group();

  // The whole document: <svg xmlns=...> ... </svg>.
  std::string str() const;
  // Written atomically (io/atomic_file.h): the old file or the new one, never half.
  void save(const std::string& path) const;

 private:
  double width_, height_;
  std::string body_;
  int open_groups_ = 0;
};

// Several SVG documents one under another, left-aligned, in one document as wide as the widest:
//   save(stack_vertically({loss_plot.to_svg(), accuracy_plot.to_svg()}))
// Throws std::invalid_argument for an empty list or a part that is not an <svg> document with
// a width and a height.
std::string stack_vertically(const std::vector<std::string>& parts);

}  // namespace seqgrad::viz
