// tests/viz/test_plot.cpp - LinePlot and DecisionMap: well-formed output, legend and labels,
// non-finite points skipped, log axes, the decision grid's layout and the pinned errors.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "tests/test_util.h"
#include "tests/viz/svg_check.h"
#include "viz/plot.h"

using namespace seqgrad;
using namespace seqgrad::viz;
using seqgrad::testing::count_of;
using seqgrad::testing::svg_problem;
namespace fs = std::filesystem;

namespace {
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

// ================================================================================================
// LinePlot

TEST_CASE("LinePlot draws every series, a legend, a title and axis labels") {
  LinePlot plot("Loss <train & valid>", /*xlabel=*/"step", /*ylabel=*/"loss");
  plot.add_series("train", {0, 1, 2, 3}, {2.3, 1.2, 0.7, 0.5});
  plot.add_series("valid \"held out\"", {2.4, 1.4, 0.9, 0.8});
  CHECK(plot.num_series() == 2);
  const std::string svg = plot.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(count_of(svg, "<polyline") == 2);
  CHECK(contains(svg, ">train</text>"));
  CHECK(contains(svg, ">valid &quot;held out&quot;</text>"));
  CHECK(contains(svg, ">Loss &lt;train &amp; valid&gt;</text>"));
  CHECK(contains(svg, ">step</text>"));
  CHECK(contains(svg, "rotate(-90"));  // the y label
  // Loose ticks: y from 0 to 2.5 in steps of 0.5, x from 0 to 3.
  for (const char* tick : {">0.0</text>", ">0.5</text>", ">2.5</text>", ">3.0</text>"}) CHECK(contains(svg, tick));
  // The two series get different palette colours.
  CHECK(contains(svg, "stroke=\"" + palette(0).hex() + "\""));
  CHECK(contains(svg, "stroke=\"" + palette(1).hex() + "\""));
}

TEST_CASE("LinePlot skips NaN and infinite points, breaks the line and says so") {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  LinePlot plot;
  plot.add_series("loss", {1, 2, 3, 4, 5, 6, 7}, {1.0, 0.8, nan, 0.6, 0.5, inf, 0.4});
  const std::string svg = plot.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(count_of(svg, "<polyline") == 2);  // [1, 2] and [4, 5]
  CHECK(count_of(svg, "<circle") == 1);    // 7 alone
  CHECK(contains(svg, "<!-- series \"loss\": 2 of 7 points skipped (NaN, inf) -->"));
  CHECK_FALSE(contains(svg, "nan"));
  CHECK_FALSE(contains(svg, "inf\""));
}

TEST_CASE("LinePlot with no finite data still writes valid axes") {
  LinePlot plot("empty");
  plot.add_series("all nan", {std::nan(""), std::nan("")});
  const std::string svg = plot.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(contains(svg, "no finite data to plot"));
  CHECK(svg_problem(LinePlot().to_svg()) == "");
}

TEST_CASE("LinePlot on a log y axis: decade ticks, values <= 0 skipped") {
  LinePlot plot("loss", "step", "loss");
  plot.add_series("loss", {0, 1, 2, 3}, {2.3, 0.4, 0.0, 0.03}).set_log_y(true);
  const std::string svg = plot.to_svg();
  CHECK(svg_problem(svg) == "");
  for (const char* tick : {">0.01</text>", ">0.1</text>", ">1</text>", ">10</text>"}) CHECK(contains(svg, tick));
  CHECK(contains(svg, "1 of 4 points skipped (NaN, inf or <= 0 on the log axis)"));
}

TEST_CASE("LinePlot keeps UTF-8 labels") {
  LinePlot plot("训练损失", "步数", "损失");
  plot.add_series("训练", {1.0, 0.5});
  const std::string svg = plot.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(contains(svg, ">训练损失</text>"));
  CHECK(contains(svg, ">训练</text>"));
}

TEST_CASE("LinePlot errors: mismatched lengths, tiny sizes, unwritable paths") {
  LinePlot plot;
  CHECK_THROWS_WITH_AS(plot.add_series("acc", {1, 2, 3}, {0.5, 0.6}),
                       "LinePlot::add_series: expected x and y of the same length, got 3 and 2 (series \"acc\")",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(plot.set_size(100, 100), "LinePlot::set_size: expected at least 200 x 150 pixels, got 100 x 100",
                       std::invalid_argument);
  const std::string path = "/nonexistent-seqgrad-dir/loss.svg";
  CHECK_THROWS_WITH_AS(plot.save(path), ("save: cannot create a temporary file next to '" + path + "': " + std::strerror(ENOENT)).c_str(),
                       std::runtime_error);
}

TEST_CASE("LinePlot::save writes the same document as to_svg") {
  const fs::path p = fs::temp_directory_path() / "seqgrad_test_viz_lineplot.svg";
  LinePlot plot("acc", "epoch", "accuracy");
  plot.add_series("acc", {0.5, 0.7, 0.8, 0.9});
  plot.save(p.string());
  std::ifstream in(p);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == plot.to_svg());
  fs::remove(p);
}

// ================================================================================================
// DecisionMap

TEST_CASE("DecisionMap::grid holds the cell centres, row iy*nx + ix, bottom row first") {
  DecisionMap map(0, 4, -1, 1, /*nx=*/4, /*ny=*/2);
  const Tensor g = map.grid();
  CHECK(g.shape() == Shape{8, 2});
  CHECK(g.at({0, 0}) == doctest::Approx(0.5));   // cell (0, 0)
  CHECK(g.at({0, 1}) == doctest::Approx(-0.5));
  CHECK(g.at({3, 0}) == doctest::Approx(3.5));   // cell (3, 0)
  CHECK(g.at({4, 0}) == doctest::Approx(0.5));   // cell (0, 1)
  CHECK(g.at({4, 1}) == doctest::Approx(0.5));
  CHECK(map.cell_x(1) == doctest::Approx(1.5));
  CHECK(map.cell_y(1) == doctest::Approx(0.5));
}

TEST_CASE("DecisionMap draws one cell rect per run of equal classes, then the points") {
  DecisionMap map(0, 4, 0, 2, /*nx=*/4, /*ny=*/2);
  map.set_predictions(std::vector<int64_t>{0, 0, 1, 1,    // bottom row: 2 runs
                                           0, 1, 1, 0});  // top row: 3 runs
  map.add_point(0.5, 0.5, 0).add_point(3.5, 1.5, 1).add_point(9, 9, 1).add_point(std::nan(""), 1, 0);
  map.set_class_names({"inner", "outer & more"}).set_title("regions");
  const std::string svg = map.to_svg();
  CHECK(svg_problem(svg) == "");
  const std::string cell0 = lighten(palette(0)).hex(), cell1 = lighten(palette(1)).hex();
  // 5 cell runs + 2 legend swatches, in the light colours
  CHECK(count_of(svg, "fill=\"" + cell0 + "\"") == 3 + 1);
  CHECK(count_of(svg, "fill=\"" + cell1 + "\"") == 2 + 1);
  CHECK(contains(svg, "shape-rendering=\"crispEdges\""));
  // 2 points drawn + 2 legend dots; the point at (9, 9) and the NaN one are skipped
  CHECK(count_of(svg, "<circle") == 4);
  CHECK(contains(svg, "2 of 4 points skipped (outside the grid or NaN)"));
  CHECK(contains(svg, ">inner</text>"));
  CHECK(contains(svg, ">outer &amp; more</text>"));
  CHECK(contains(svg, ">regions</text>"));
}

TEST_CASE("DecisionMap takes tensors: argmax of logits and (N, 2) points") {
  DecisionMap map(-1, 1, -1, 1, 3, 3);
  const Tensor g = map.grid();                                        // (9, 2)
  map.set_predictions(from_vector({0, 0, 0, 1, 1, 1, 2, 2, 2}));      // by row
  map.add_points(from_vector({0, 0, 0.5, 0.5}, {2, 2}), from_vector({1, 2}));
  const std::string svg = map.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(contains(svg, ">class 2</text>"));
  CHECK(count_of(svg, "<circle") == 2 + 3);
  CHECK(g.size(0) == 9);
}

TEST_CASE("DecisionMap errors are pinned") {
  CHECK_THROWS_WITH_AS(DecisionMap(1, 0, 0, 1),
                       "DecisionMap: expected finite xmin < xmax and ymin < ymax, got [1, 0] x [0, 1]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(DecisionMap(0, 1, 0, 1, 0, 10), "DecisionMap: expected 1..2000 cells per axis, got nx = 0, ny = 10",
                       std::invalid_argument);
  DecisionMap map(0, 1, 0, 1, 4, 3);
  CHECK_THROWS_WITH_AS(map.set_predictions(std::vector<int64_t>(11, 0)),
                       "DecisionMap::set_predictions: expected 12 class ids (ny*nx = 3*4), got 11", std::invalid_argument);
  CHECK_THROWS_WITH_AS(map.add_points(zeros({5, 3}), zeros({5})),
                       "DecisionMap::add_points: expected points of shape (N, 2), got [5, 3]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(map.add_points(zeros({5, 2}), zeros({4})),
                       "DecisionMap::add_points: expected 5 labels (one per point), got shape [4]", std::invalid_argument);
  const std::string path = "/nonexistent-seqgrad-dir/regions.svg";
  CHECK_THROWS_WITH_AS(map.save(path), ("save: cannot create a temporary file next to '" + path + "': " + std::strerror(ENOENT)).c_str(),
                       std::runtime_error);
}

TEST_CASE("DecisionMap without predictions still writes valid axes") {
  DecisionMap map(0, 1, 0, 1);
  const std::string svg = map.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(contains(svg, "no predictions set"));
}

TEST_CASE("LinePlot with a log x axis: decades as ticks, x <= 0 skipped") {
  LinePlot plot("cost", "S", "macs");
  plot.add_series("global", {0, 8, 80, 800}, {1, 2, 3, 4}).set_log_x(true);
  const std::string svg = plot.to_svg();
  CHECK(seqgrad::testing::svg_problem(svg) == "");
  for (const char* tick : {">1</text>", ">10</text>", ">100</text>", ">1000</text>"}) CHECK_MESSAGE(contains(svg, tick), tick);
  CHECK(contains(svg, "1 of 4 points skipped (NaN, inf or <= 0 on the log axis)"));
}
