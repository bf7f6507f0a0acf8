// viz/plot.h - SVG plots: LinePlot (loss and accuracy curves) and DecisionMap (the regions a
// 2-D classifier assigns to each class, with the data on top).
//
// Both draw on viz/svg.h's SvgCanvas: axes with 1-2-5 ticks, light grid lines, a legend to the
// right of the plot area (so it never covers data), UTF-8 titles and labels. Files are written
// atomically; an unwritable path throws std::runtime_error naming the path and the reason.
// They do not run models: the caller evaluates the model and hands over plain numbers.
// Read next: examples/02_mlp/main.cpp, which draws both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"
#include "viz/svg.h"

namespace seqgrad::viz {

// ================================================================================================
// LinePlot

// Several named series of (x, y) points, each a polyline in its own palette colour.
//   viz::LinePlot plot("Training loss", /*xlabel=*/"step", /*ylabel=*/"loss");
//   plot.add_series("train", steps, train_loss);
//   plot.add_series("valid", steps, valid_loss);
//   plot.set_log_y(true).save("loss.svg");
// Points with a non-finite x or y (and y <= 0 on a log axis) are skipped: the line breaks
// there, and the file says how many were skipped in a comment.
class LinePlot {
 public:
  explicit LinePlot(std::string title = "", std::string xlabel = "", std::string ylabel = "");

  // x and y of the same length N. Throws std::invalid_argument otherwise.
  LinePlot& add_series(const std::string& name, const std::vector<double>& x, const std::vector<double>& y);
  // x = 0, 1, ..., N-1 (as matplotlib's plot(y)).
  LinePlot& add_series(const std::string& name, const std::vector<double>& y);

  LinePlot& set_title(std::string title);
  LinePlot& set_xlabel(std::string xlabel);
  LinePlot& set_ylabel(std::string ylabel);
  LinePlot& set_log_y(bool log_y);
  LinePlot& set_log_x(bool log_x);  // a log10 x axis (points with x <= 0 are skipped)
  LinePlot& set_size(double width, double height);  // the whole image in pixels, legend included

  int64_t num_series() const { return static_cast<int64_t>(series_.size()); }
  std::string to_svg() const;
  void save(const std::string& path) const;

 private:
  struct Series {
    std::string name;
    std::vector<double> x, y;
  };
  std::vector<Series> series_;
  std::string title_, xlabel_, ylabel_;
  bool log_y_ = false, log_x_ = false;
  double width_ = 720, height_ = 420;
};

// ================================================================================================
// DecisionMap

// A grid of nx x ny cells over [xmin, xmax] x [ymin, ymax], each filled with a light colour
// for the class a model predicts at its centre, and data points coloured by their true class
// on top (a point on a cell of another colour is a mistake).
//   viz::DecisionMap map(-1.5, 2.5, -1, 1.5);               // 100 x 100 cells
//   Tensor logits = model.forward(map.grid());               // (ny*nx, 2) -> (ny*nx, K)
//   map.set_predictions(argmax(logits, -1));                 // (ny*nx)
//   map.add_points(xy, labels);                              // (N, 2), (N)
//   map.save("regions.svg");
class DecisionMap {
 public:
  DecisionMap(double xmin, double xmax, double ymin, double ymax, int64_t nx = 100, int64_t ny = 100);

  int64_t nx() const { return nx_; }
  int64_t ny() const { return ny_; }
  // The centre of cell (ix, iy); iy = 0 is the bottom row.
  double cell_x(int64_t ix) const;
  double cell_y(int64_t iy) const;
  // All cell centres as a (ny*nx, 2) tensor of (x, y) rows; row iy*nx + ix is cell (ix, iy).
  Tensor grid() const;

  // One class id per cell in grid() order: ny*nx values. Negative ids are drawn grey.
  DecisionMap& set_predictions(const std::vector<int64_t>& classes);
  DecisionMap& set_predictions(const Tensor& classes);  // ny*nx values (whole numbers)

  // Data points with their true classes. Points outside the grid's range are skipped.
  DecisionMap& add_point(double x, double y, int64_t label);
  DecisionMap& add_points(const Tensor& xy, const Tensor& labels);  // (N, 2), (N)

  // Legend names for classes 0, 1, ...; classes without a name are called "class k".
  DecisionMap& set_class_names(std::vector<std::string> names);
  DecisionMap& set_title(std::string title);
  DecisionMap& set_xlabel(std::string xlabel);
  DecisionMap& set_ylabel(std::string ylabel);
  DecisionMap& set_size(double width, double height);  // the whole image in pixels, legend included

  std::string to_svg() const;
  void save(const std::string& path) const;

 private:
  struct Point {
    double x, y;
    int64_t label;
  };
  double xmin_, xmax_, ymin_, ymax_;
  int64_t nx_, ny_;
  std::vector<int64_t> classes_;  // (ny*nx), empty until set_predictions
  std::vector<Point> points_;
  std::vector<std::string> class_names_;
  std::string title_, xlabel_ = "x", ylabel_ = "y";
  double width_ = 600, height_ = 480;
};

}  // namespace seqgrad::viz
