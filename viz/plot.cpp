// viz/plot.cpp - layout and drawing of LinePlot and DecisionMap on an SvgCanvas.
//
// Both plots share one layout: title on top, y label and tick labels on the left, x tick
// labels and x label below, the legend in a column right of the plot area. Margins are sized
// from the text they hold (viz/svg.h's text_width), so long labels push the plot area inwards
// instead of overlapping it.
#include "viz/plot.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "io/atomic_file.h"
#include "tensor/check.h"

namespace seqgrad::viz {
namespace {

constexpr double kTickFont = 11, kLabelFont = 13, kTitleFont = 15, kLegendFont = 12;
constexpr double kLegendRow = 20;  // pixels per legend entry
const char* const kInk = "#333333";
const char* const kGrid = "#e3e6ea";

// ================================================================================================
// Shared layout: axes, titles, legend

// The plot area in canvas pixels.
struct Frame {
  double left, top, width, height;
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

// One axis: its ticks, the step used to label them, and the data -> pixel mapping.
struct Axis {
  std::vector<double> ticks;
  double step = 1;
  Scale scale;
};

// Ticks for [lo, hi]: loose (the axis grows to the outer ticks) or tight (the axis stays at
// [lo, hi] and only ticks inside it are kept).
Axis make_axis(double lo, double hi, int target, bool log, bool tight) {
  Axis a;
  if (log) {
    a.ticks = log_ticks(lo, hi);
  } else {
    a.ticks = nice_ticks(lo, hi, target);
    a.step = a.ticks.size() > 1 ? a.ticks[1] - a.ticks[0] : 1;
  }
  a.scale.log = log;
  if (tight) {
    const double eps = 1e-9 * (hi - lo);
    a.ticks.erase(std::remove_if(a.ticks.begin(), a.ticks.end(),
                                 [&](double t) { return t < lo - eps || t > hi + eps; }),
                  a.ticks.end());
    a.scale.lo = lo, a.scale.hi = hi;
  } else {
    a.scale.lo = a.ticks.front(), a.scale.hi = a.ticks.back();
  }
  return a;
}

std::string tick_label(const Axis& a, double v) { return format_tick(v, a.scale.log ? v : a.step); }

double max_label_width(const Axis& a) {
  double w = 0;
  for (double t : a.ticks) w = std::max(w, text_width(tick_label(a, t), kTickFont));
  return w;
}

// Grid lines (optional), the frame, tick marks and tick labels.
void draw_axes(SvgCanvas& c, const Frame& f, const Axis& x, const Axis& y, bool grid) {
  if (grid) {
    for (double t : x.ticks) c.line(x.scale(t), f.top, x.scale(t), f.bottom(), kGrid);
    for (double t : y.ticks) c.line(f.left, y.scale(t), f.right(), y.scale(t), kGrid);
  }
  c.rect(f.left, f.top, f.width, f.height, "none", kInk, 1);
  TextStyle below{kTickFont, "middle", kInk};
  below.dy = 0.8;
  for (double t : x.ticks) {
    const double px = x.scale(t);
    c.line(px, f.bottom(), px, f.bottom() + 5, kInk);
    c.text(px, f.bottom() + 8, tick_label(x, t), below);
  }
  TextStyle left{kTickFont, "end", kInk};
  left.dy = 0.35;
  for (double t : y.ticks) {
    const double py = y.scale(t);
    c.line(f.left - 5, py, f.left, py, kInk);
    c.text(f.left - 8, py, tick_label(y, t), left);
  }
}

// Title above the plot area, x label below, y label rotated along the left edge.
// A title wrapped to a picture `width` pixels wide (bold text is about 1.1 times text_width).
std::vector<std::string> title_lines(const std::string& title, double width) {
  return wrap_text(title, 1.1 * kTitleFont, width - 16);
}
double top_margin(const std::string& title, double width) {
  return title.empty() ? 16 : 44 + 19 * static_cast<double>(title_lines(title, width).size() - 1);
}

void draw_titles(SvgCanvas& c, const Frame& f, const std::string& title, const std::string& xlabel,
                 const std::string& ylabel) {
  // The title is centred over the plot area, or over the whole picture when it is too wide for
  // that, and wraps onto more lines when it is wider than the picture (top_margin left room).
  const std::vector<std::string> lines = title_lines(title, c.width());
  for (size_t i = 0; i < lines.size(); ++i) {
    TextStyle s{kTitleFont, "middle", "#111111"};
    s.bold = true;
    const double half = 1.1 * text_width(lines[i], kTitleFont) / 2;
    const double cx = std::clamp(f.left + f.width / 2, half + 8, std::max(half + 8, c.width() - half - 8));
    c.text(cx, 24 + 19 * static_cast<double>(i), lines[i], s);
  }
  if (!xlabel.empty()) c.text(f.left + f.width / 2, f.bottom() + 44, xlabel, {kLabelFont, "middle", kInk});
  if (!ylabel.empty()) {
    TextStyle s{kLabelFont, "middle", kInk};
    s.rotate = -90;
    s.dy = 0.35;
    c.text(16, f.top + f.height / 2, ylabel, s);
  }
}

double bottom_margin(const std::string& xlabel) { return xlabel.empty() ? 36 : 60; }
double left_margin(const Axis& y, const std::string& ylabel) {
  return (ylabel.empty() ? 10 : 32) + max_label_width(y) + 10;
}

// A legend entry: a short line (LinePlot) or a pale square with a dot (DecisionMap).
struct LegendEntry {
  std::string name;
  Color color;
  bool swatch = false;
};

double legend_width(const std::vector<LegendEntry>& entries) {
  if (entries.empty()) return 0;
  double w = 0;
  for (const auto& e : entries) w = std::max(w, text_width(e.name, kLegendFont));
  return 10 + 24 + 8 + w + 12;
}

void draw_legend(SvgCanvas& c, double x, double y, const std::vector<LegendEntry>& entries) {
  if (entries.empty()) return;
  c.rect(x, y, legend_width(entries), 8 + kLegendRow * static_cast<double>(entries.size()), "white",
         "#c8ccd2", 1);
  TextStyle s{kLegendFont, "start", kInk};
  s.dy = 0.35;
  for (size_t i = 0; i < entries.size(); ++i) {
    const double cy = y + 4 + kLegendRow * (static_cast<double>(i) + 0.5);
    const LegendEntry& e = entries[i];
    if (e.swatch) {
      c.rect(x + 14, cy - 8, 16, 16, lighten(e.color).hex(), "#c8ccd2", 1);
      c.circle(x + 22, cy, 3.5, e.color.hex(), "white", 1);
    } else {
      c.line(x + 10, cy, x + 34, cy, e.color.hex(), 2.5);
    }
    c.text(x + 42, cy, e.name, s);
  }
}

}  // namespace

// ================================================================================================
// LinePlot

LinePlot::LinePlot(std::string title, std::string xlabel, std::string ylabel)
    : title_(std::move(title)), xlabel_(std::move(xlabel)), ylabel_(std::move(ylabel)) {}

LinePlot& LinePlot::add_series(const std::string& name, const std::vector<double>& x,
                               const std::vector<double>& y) {
  check(x.size() == y.size(), "LinePlot::add_series: expected x and y of the same length, got ", x.size(),
        " and ", y.size(), " (series \"", name, "\")");
  series_.push_back({name, x, y});
  return *this;
}

LinePlot& LinePlot::add_series(const std::string& name, const std::vector<double>& y) {
  std::vector<double> x(y.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i);
  return add_series(name, x, y);
}

LinePlot& LinePlot::set_title(std::string title) { title_ = std::move(title); return *this; }
LinePlot& LinePlot::set_xlabel(std::string xlabel) { xlabel_ = std::move(xlabel); return *this; }
LinePlot& LinePlot::set_ylabel(std::string ylabel) { ylabel_ = std::move(ylabel); return *this; }
LinePlot& LinePlot::set_log_y(bool log_y) { log_y_ = log_y; return *this; }
LinePlot& LinePlot::set_log_x(bool log_x) { log_x_ = log_x; return *this; }

LinePlot& LinePlot::set_size(double width, double height) {
  check(width >= 200 && height >= 150, "LinePlot::set_size: expected at least 200 x 150 pixels, got ", width,
        " x ", height);
  width_ = width, height_ = height;
  return *this;
}

std::string LinePlot::to_svg() const {
  // A point is drawn when x and y are finite (and > 0 on a log axis).
  const auto drawable = [&](double x, double y) {
    return std::isfinite(x) && std::isfinite(y) && (!log_y_ || y > 0) && (!log_x_ || x > 0);
  };

  // --- data ranges over the drawable points
  const double inf = std::numeric_limits<double>::infinity();
  double xlo = inf, xhi = -inf, ylo = inf, yhi = -inf;
  for (const Series& s : series_)
    for (size_t i = 0; i < s.x.size(); ++i)
      if (drawable(s.x[i], s.y[i])) {
        xlo = std::min(xlo, s.x[i]), xhi = std::max(xhi, s.x[i]);
        ylo = std::min(ylo, s.y[i]), yhi = std::max(yhi, s.y[i]);
      }
  const bool empty = !(xlo <= xhi);
  if (empty) xlo = log_x_ ? 1 : 0, xhi = log_x_ ? 10 : 1, ylo = log_y_ ? 1 : 0, yhi = log_y_ ? 10 : 1;

  // --- layout: margins from the text they hold, the legend in a column on the right
  std::vector<LegendEntry> legend;
  for (size_t i = 0; i < series_.size(); ++i)
    if (!series_[i].name.empty()) legend.push_back({series_[i].name, palette(static_cast<int64_t>(i))});
  const int ytarget = static_cast<int>(std::clamp(height_ / 80, 3.0, 10.0));
  const int xtarget = static_cast<int>(std::clamp(width_ / 110, 3.0, 10.0));
  Axis y = make_axis(ylo, yhi, ytarget, log_y_, /*tight=*/false);
  Axis x = make_axis(xlo, xhi, xtarget, log_x_, /*tight=*/false);
  Frame f;
  f.left = left_margin(y, ylabel_);
  f.top = top_margin(title_, width_);
  const double right = legend.empty() ? 24 : legend_width(legend) + 32;
  f.width = std::max(60.0, width_ - f.left - right);
  f.height = std::max(60.0, height_ - f.top - bottom_margin(xlabel_));
  x.scale.p0 = f.left, x.scale.p1 = f.right();
  y.scale.p0 = f.bottom(), y.scale.p1 = f.top;

  // --- drawing
  SvgCanvas c(f.right() + right, f.bottom() + bottom_margin(xlabel_));
  c.rect(0, 0, c.width(), c.height(), "white");
  if (empty) c.comment("no finite data to plot");
  draw_axes(c, f, x, y, /*grid=*/true);
  for (size_t k = 0; k < series_.size(); ++k) {
    const Series& s = series_[k];
    const std::string color = palette(static_cast<int64_t>(k)).hex();
    // Split the series into runs of drawable points: a skipped point breaks the line.
    std::vector<std::pair<double, double>> run;
    int64_t skipped = 0;
    const auto flush = [&] {
      if (run.size() == 1) c.circle(run[0].first, run[0].second, 2.5, color);  // an isolated point
      if (run.size() > 1) c.polyline(run, color, 2);
      run.clear();
    };
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (drawable(s.x[i], s.y[i])) {
        run.emplace_back(x.scale(s.x[i]), y.scale(s.y[i]));
      } else {
        ++skipped;
        flush();
      }
    }
    flush();
    if (skipped > 0)
      c.comment(cat("series \"", s.name, "\": ", skipped, " of ", s.x.size(), " points skipped (NaN, inf",
                    log_y_ || log_x_ ? " or <= 0 on the log axis" : "", ")"));
  }
  draw_legend(c, f.right() + 16, f.top, legend);
  draw_titles(c, f, title_, xlabel_, ylabel_);
  return c.str();
}

void LinePlot::save(const std::string& path) const { io::write_file_atomic(path, to_svg(), "save"); }

// ================================================================================================
// DecisionMap

DecisionMap::DecisionMap(double xmin, double xmax, double ymin, double ymax, int64_t nx, int64_t ny)
    : xmin_(xmin), xmax_(xmax), ymin_(ymin), ymax_(ymax), nx_(nx), ny_(ny) {
  check(std::isfinite(xmin) && std::isfinite(xmax) && xmin < xmax && std::isfinite(ymin) &&
            std::isfinite(ymax) && ymin < ymax,
        "DecisionMap: expected finite xmin < xmax and ymin < ymax, got [", xmin, ", ", xmax, "] x [", ymin,
        ", ", ymax, "]");
  check(nx >= 1 && ny >= 1 && nx <= 2000 && ny <= 2000,
        "DecisionMap: expected 1..2000 cells per axis, got nx = ", nx, ", ny = ", ny);
}

double DecisionMap::cell_x(int64_t ix) const {
  return xmin_ + (static_cast<double>(ix) + 0.5) * (xmax_ - xmin_) / static_cast<double>(nx_);
}
double DecisionMap::cell_y(int64_t iy) const {
  return ymin_ + (static_cast<double>(iy) + 0.5) * (ymax_ - ymin_) / static_cast<double>(ny_);
}

Tensor DecisionMap::grid() const {
  Tensor g = Tensor::empty({ny_ * nx_, 2});  // (ny*nx, 2)
  real* p = g.data();
  for (int64_t iy = 0; iy < ny_; ++iy)
    for (int64_t ix = 0; ix < nx_; ++ix) {
      *p++ = static_cast<real>(cell_x(ix));
      *p++ = static_cast<real>(cell_y(iy));
    }
  return g;
}

DecisionMap& DecisionMap::set_predictions(const std::vector<int64_t>& classes) {
  check(static_cast<int64_t>(classes.size()) == nx_ * ny_, "DecisionMap::set_predictions: expected ",
        nx_ * ny_, " class ids (ny*nx = ", ny_, "*", nx_, "), got ", classes.size());
  classes_ = classes;
  return *this;
}

DecisionMap& DecisionMap::set_predictions(const Tensor& classes) {
  check(classes.numel() == nx_ * ny_, "DecisionMap::set_predictions: expected ", nx_ * ny_,
        " class ids (ny*nx = ", ny_, "*", nx_, "), got shape ", classes.shape());
  std::vector<int64_t> ids(static_cast<size_t>(classes.numel()));
  for (int64_t i = 0; i < classes.numel(); ++i) ids[i] = std::llround(classes.data()[i]);
  return set_predictions(ids);
}

DecisionMap& DecisionMap::add_point(double x, double y, int64_t label) {
  points_.push_back({x, y, label});
  return *this;
}

DecisionMap& DecisionMap::add_points(const Tensor& xy, const Tensor& labels) {
  check(xy.dim() == 2 && xy.size(1) == 2, "DecisionMap::add_points: expected points of shape (N, 2), got ",
        xy.shape());
  check(labels.numel() == xy.size(0), "DecisionMap::add_points: expected ", xy.size(0),
        " labels (one per point), got shape ", labels.shape());
  for (int64_t i = 0; i < xy.size(0); ++i)
    add_point(xy.data()[2 * i], xy.data()[2 * i + 1], std::llround(labels.data()[i]));
  return *this;
}

DecisionMap& DecisionMap::set_class_names(std::vector<std::string> names) {
  class_names_ = std::move(names);
  return *this;
}
DecisionMap& DecisionMap::set_title(std::string title) { title_ = std::move(title); return *this; }
DecisionMap& DecisionMap::set_xlabel(std::string xlabel) { xlabel_ = std::move(xlabel); return *this; }
DecisionMap& DecisionMap::set_ylabel(std::string ylabel) { ylabel_ = std::move(ylabel); return *this; }

DecisionMap& DecisionMap::set_size(double width, double height) {
  check(width >= 200 && height >= 150, "DecisionMap::set_size: expected at least 200 x 150 pixels, got ",
        width, " x ", height);
  width_ = width, height_ = height;
  return *this;
}

std::string DecisionMap::to_svg() const {
  // --- legend: every class seen in the predictions or the points
  std::set<int64_t> seen(classes_.begin(), classes_.end());
  for (const Point& p : points_) seen.insert(p.label);
  std::vector<LegendEntry> legend;
  for (int64_t k : seen) {
    std::string name = k < 0 ? "no class" : cat("class ", k);
    if (k >= 0 && k < static_cast<int64_t>(class_names_.size())) name = class_names_[k];
    legend.push_back({name, palette(k), /*swatch=*/true});
  }

  // --- layout: the largest plot area with equal units on both axes (shapes stay undistorted)
  Axis x = make_axis(xmin_, xmax_, 6, /*log=*/false, /*tight=*/true);
  Axis y = make_axis(ymin_, ymax_, 6, /*log=*/false, /*tight=*/true);
  const double right = legend.empty() ? 24 : legend_width(legend) + 32;
  const double left = left_margin(y, ylabel_), top = top_margin(title_, width_), bottom = bottom_margin(xlabel_);
  const double avail_w = std::max(60.0, width_ - left - right), avail_h = std::max(60.0, height_ - top - bottom);
  const double unit = std::min(avail_w / (xmax_ - xmin_), avail_h / (ymax_ - ymin_));  // pixels per unit
  const Frame f{left, top, unit * (xmax_ - xmin_), unit * (ymax_ - ymin_)};
  x.scale.p0 = f.left, x.scale.p1 = f.right();
  y.scale.p0 = f.bottom(), y.scale.p1 = f.top;

  SvgCanvas c(f.right() + right, f.bottom() + bottom);
  c.rect(0, 0, c.width(), c.height(), "white");

  // --- cells: one rect per run of equal classes along a row (a 100 x 100 grid of two classes
  // becomes a few hundred rects instead of 10,000)
  if (classes_.empty()) {
    c.comment("no predictions set");
  } else {
    c.begin_group({{"shape-rendering", "crispEdges"}});
    const double dx = f.width / static_cast<double>(nx_), dy = f.height / static_cast<double>(ny_);
    for (int64_t iy = 0; iy < ny_; ++iy) {
      const int64_t* row = classes_.data() + iy * nx_;
      for (int64_t ix0 = 0; ix0 < nx_;) {
        int64_t ix1 = ix0 + 1;
        while (ix1 < nx_ && row[ix1] == row[ix0]) ++ix1;
        c.rect(f.left + static_cast<double>(ix0) * dx, f.bottom() - static_cast<double>(iy + 1) * dy,
               static_cast<double>(ix1 - ix0) * dx, dy, lighten(palette(row[ix0])).hex());
        ix0 = ix1;
      }
    }
    c.end_group();
  }
  draw_axes(c, f, x, y, /*grid=*/false);

  // --- data points on top
  int64_t outside = 0;
  for (const Point& p : points_) {
    if (!(p.x >= xmin_ && p.x <= xmax_ && p.y >= ymin_ && p.y <= ymax_)) {  // NaN lands here too
      ++outside;
      continue;
    }
    c.circle(x.scale(p.x), y.scale(p.y), 3.5, palette(p.label).hex(), "white", 0.8);
  }
  if (outside > 0) c.comment(cat(outside, " of ", points_.size(), " points skipped (outside the grid or NaN)"));

  draw_legend(c, f.right() + 16, f.top, legend);
  draw_titles(c, f, title_, xlabel_, ylabel_);
  return c.str();
}

void DecisionMap::save(const std::string& path) const { io::write_file_atomic(path, to_svg(), "save"); }

}  // namespace seqgrad::viz
