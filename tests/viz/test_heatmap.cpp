// tests/viz/test_heatmap.cpp - alignment maps: well-formed SVG with one cell per weight, labels
// escaped and UTF-8 kept, colours darkening with the value, the value range, printed values,
// HeatmapGrid's layout, the pinned terminal form and the pinned errors.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "tests/test_util.h"
#include "tests/viz/svg_check.h"
#include "viz/heatmap.h"

using namespace seqgrad;
using namespace seqgrad::viz;
using seqgrad::testing::count_of;
using seqgrad::testing::svg_problem;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The fill colours of the grid's cells, in row-major order: the rects of the first crispEdges
// group (the second one is the colour bar).
std::vector<std::string> cell_fills(const std::string& svg) {
  const size_t begin = svg.find("<g shape-rendering=\"crispEdges\">");
  const size_t end = svg.find("</g>", begin);
  std::vector<std::string> fills;
  for (size_t p = svg.find("fill=\"", begin); p < end; p = svg.find("fill=\"", p + 1))
    fills.push_back(svg.substr(p + 6, 7));
  return fills;
}

int brightness(const std::string& hex) {  // r + g + b of "#rrggbb"
  return std::stoi(hex.substr(1, 2), nullptr, 16) + std::stoi(hex.substr(3, 2), nullptr, 16) +
         std::stoi(hex.substr(5, 2), nullptr, 16);
}

// Chinese target tokens generated from an English source, the alignment nearly diagonal.
Heatmap chinese_example() {
  return Heatmap({"我", "爱", "你", "<eos>"}, {"I", "love", "you", "<eos>"},
                 std::vector<double>{0.90, 0.05, 0.03, 0.02,   // 我
                                     0.10, 0.80, 0.05, 0.05,   // 爱
                                     0.02, 0.08, 0.85, 0.05,   // 你
                                     0.01, 0.01, 0.08, 0.90}); // <eos>
}

}  // namespace

// ================================================================================================
// SVG

TEST_CASE("Heatmap draws one cell per weight, both label axes, a title and a colour bar") {
  Heatmap map = chinese_example();
  map.set_title("English -> Chinese & back");
  CHECK(map.rows() == 4);
  CHECK(map.cols() == 4);
  CHECK(map.value(1, 1) == 0.80);
  const std::string svg = map.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(cell_fills(svg).size() == 16);
  CHECK(contains(svg, ">English -&gt; Chinese &amp; back</text>"));
  CHECK(count_of(svg, ">&lt;eos&gt;</text>") == 2);  // once on each axis
  for (const char* label : {">我</text>", ">爱</text>", ">你</text>", ">I</text>", ">love</text>", ">you</text>"})
    CHECK(contains(svg, label));
  // The colour bar: labelled with the ends of the value range, 0 and the largest weight.
  CHECK(contains(svg, ">0.9</text>"));
  CHECK(contains(svg, ">0</text>"));
  CHECK(contains(svg, "<!-- heatmap: 4 rows x 4 columns, colours from 0 (white) to 0.9 (dark) -->"));
  CHECK_FALSE(contains(svg, "0.90</text>"));  // values only when asked for
}

TEST_CASE("Heatmap cell colours darken as the value grows and follow viz::sequential") {
  const std::vector<double> values = {0, 0.1, 0.2, 0.4, 0.6, 0.8};
  Heatmap map({"t"}, {"a", "b", "c", "d", "e", "f"}, values);
  const std::vector<std::string> fills = cell_fills(map.to_svg());
  REQUIRE(fills.size() == values.size());
  CHECK(fills[0] == "#ffffff");             // 0 is white
  CHECK(fills[5] == sequential(1).hex());   // the largest value is the darkest colour
  for (size_t i = 0; i < values.size(); ++i) CHECK(fills[i] == sequential(values[i] / 0.8).hex());
  for (size_t i = 1; i < values.size(); ++i) CHECK(brightness(fills[i]) < brightness(fills[i - 1]));
}

TEST_CASE("Heatmap value range: [min(0, smallest), largest] by default, or fixed by hand") {
  CHECK(chinese_example().value_range() == std::make_pair(0.0, 0.9));
  CHECK(Heatmap({"t"}, {"a", "b"}, std::vector<double>{-2, 3}).value_range() == std::make_pair(-2.0, 3.0));
  CHECK(Heatmap({"t"}, {"a", "b"}, std::vector<double>{0, 0}).value_range() == std::make_pair(0.0, 1.0));

  // A fixed range of [0, 1]: 0.5 is half-way, and values outside are clamped.
  Heatmap map({"t"}, {"a", "b", "c"}, std::vector<double>{0.5, 1, 2});
  map.set_value_range(0, 1);
  const std::vector<std::string> fills = cell_fills(map.to_svg());
  CHECK(fills == std::vector<std::string>{sequential(0.5).hex(), sequential(1).hex(), sequential(1).hex()});
  CHECK(contains(map.to_svg(), "colours from 0 (white) to 1 (dark)"));
}

TEST_CASE("Heatmap keeps UTF-8 labels and replaces what XML cannot hold") {
  Heatmap map({"注意力", "bad\xFF"}, {"源", "tab\x01"}, std::vector<double>{1, 0, 0, 1});
  const std::string svg = map.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(contains(svg, ">注意力</text>"));
  CHECK(contains(svg, ">源</text>"));
  CHECK(contains(svg, ">bad\xEF\xBF\xBD</text>"));  // U+FFFD
}

TEST_CASE("Heatmap rotates the column labels only when one is wider than a cell") {
  const std::string short_labels = Heatmap({"a", "b"}, {"x", "y"}, std::vector<double>{1, 0, 0, 1}).to_svg();
  CHECK_FALSE(contains(short_labels, "rotate("));
  const std::string long_labels =
      Heatmap({"a", "b"}, {"x", "Aufmerksamkeit"}, std::vector<double>{1, 0, 0, 1}).to_svg();
  CHECK(count_of(long_labels, "rotate(-90") == 2);  // every column label, so they read alike
  CHECK(svg_problem(long_labels) == "");
  // Longer labels make room for themselves: the picture grows instead of text overlapping cells.
  Heatmap wide({"a", "a much longer target token, with a few more words"}, {"x", "y"}, std::vector<double>{1, 0, 0, 1});
  Heatmap narrow({"a", "b"}, {"x", "y"}, std::vector<double>{1, 0, 0, 1});
  CHECK(wide.svg_size().first > narrow.svg_size().first + 100);
}

TEST_CASE("Heatmap is as wide as its matrix needs: a long title wraps instead of widening the picture") {
  // A sentence of 16 words as the title of a 4 x 4 map: the picture stays at the width the
  // grid and its colour bar need, and the title takes several lines, none wider than it.
  std::string title;
  for (int i = 0; i < 16; ++i) title += (i ? " " : "") + std::string("token") + std::to_string(i);
  Heatmap plain({"a", "b", "c", "d"}, {"w", "x", "y", "z"}, std::vector<double>(16, 0.5));
  Heatmap titled = plain;
  titled.set_title(title);
  CHECK(titled.svg_size().first == plain.svg_size().first);
  CHECK(titled.svg_size().second > plain.svg_size().second);
  const std::string svg = titled.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(count_of(svg, ">token0 ") == 1);   // the first line starts the title,
  CHECK(count_of(svg, "token15</text>") == 1);  // the last ends it,
  CHECK(count_of(svg, "font-weight=\"bold\"") >= 3);  // and it took three lines or more
  // wrap_text itself: at spaces, within the width, a long word alone on its line.
  CHECK(wrap_text("a long title", 12, 60) == std::vector<std::string>{"a long", "title"});
  CHECK(wrap_text("antidisestablishment x", 12, 30) == std::vector<std::string>{"antidisestablishment", "x"});
  CHECK(wrap_text("", 12, 30).empty());
}

TEST_CASE("Heatmap stands long Chinese column labels upright, one character above another") {
  const std::string svg = Heatmap({"the", "cat"}, {"注意力", "猫", "word"}, std::vector<double>(6, 0.5)).to_svg();
  CHECK(svg_problem(svg) == "");
  for (const char* ch : {">注</text>", ">意</text>", ">力</text>", ">猫</text>"}) CHECK(contains(svg, ch));
  CHECK_FALSE(contains(svg, ">注意力</text>"));
  CHECK(count_of(svg, "rotate(-90") == 1);  // only "word" lies on its side
}

TEST_CASE("Heatmap prints values in the cells when asked and the cells are large enough") {
  Heatmap map = chinese_example();
  map.set_show_values(true);
  const std::string svg = map.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(count_of(svg, ">0.90</text>") == 2);
  CHECK(count_of(svg, ">0.05</text>") == 4);
  CHECK(contains(svg, "fill=\"white\" text-anchor=\"middle\""));  // light text on dark cells

  map.set_cell_size(8);  // too small for "0.90": the cells stay plain and the file says so
  const std::string small = map.to_svg();
  CHECK(svg_problem(small) == "");
  CHECK_FALSE(contains(small, ">0.90</text>"));
  CHECK(contains(small, "values not printed: the cells are too small"));
}

TEST_CASE("Heatmap takes a (T, S) tensor; without labels the axes show positions") {
  const Tensor w = from_vector({0.7f, 0.2f, 0.1f, 0.0f, 0.5f, 0.5f}, {2, 3});  // (T, S) = (2, 3)
  Heatmap map({}, {}, w);
  CHECK(map.row_labels() == std::vector<std::string>{"0", "1"});
  CHECK(map.col_labels() == std::vector<std::string>{"0", "1", "2"});
  CHECK(map.value(1, 2) == doctest::Approx(0.5));
  CHECK(svg_problem(map.to_svg()) == "");
  Heatmap labelled({"a", "b"}, {"x", "y", "z"}, w);
  CHECK(labelled.value(0, 0) == doctest::Approx(0.7));
}

TEST_CASE("Heatmap::save writes the same document as to_svg") {
  const fs::path p = fs::temp_directory_path() / "seqgrad_test_viz_heatmap.svg";
  const Heatmap map = chinese_example();
  map.save(p.string());
  std::ifstream in(p);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == map.to_svg());
  fs::remove(p);
}

// ================================================================================================
// HeatmapGrid

TEST_CASE("HeatmapGrid places the maps in rows of `columns`, each at its own offset") {
  HeatmapGrid grid(/*columns=*/2);
  for (int h = 0; h < 3; ++h)
    grid.add(Heatmap({"我", "爱"}, {"I", "love"}, std::vector<double>{0.9, 0.1, 0.2, 0.8})
                 .set_title(cat("head ", h))
                 .set_value_range(0, 1));
  grid.set_title("cross-attention <layer 1>");
  CHECK(grid.size() == 3);
  const std::string svg = grid.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(count_of(svg, "<!-- heatmap: 2 rows x 2 columns") == 3);
  for (const char* title : {">head 0</text>", ">head 1</text>", ">head 2</text>", ">cross-attention &lt;layer 1&gt;</text>"})
    CHECK(contains(svg, title));
  // Equal maps: the second one 12 px right of the first, the third one row down.
  const auto [w, h] = Heatmap({"我", "爱"}, {"I", "love"}, std::vector<double>{0.9, 0.1, 0.2, 0.8})
                          .set_title("head 0")
                          .set_value_range(0, 1)
                          .svg_size();
  CHECK(contains(svg, "transform=\"translate(0 36)\""));
  CHECK(contains(svg, "transform=\"translate(" + cat(w + 12) + " 36)\""));
  CHECK(contains(svg, "transform=\"translate(0 " + cat(36 + h + 12) + ")\""));
}

TEST_CASE("HeatmapGrid with fewer maps than columns is one row") {
  HeatmapGrid grid(4);
  grid.add(chinese_example());
  const std::string svg = grid.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(contains(svg, "transform=\"translate(0 0)\""));
  CHECK(count_of(svg, "<!-- heatmap:") == 1);
}

// ================================================================================================
// Terminal text

TEST_CASE("Heatmap::to_text draws shades, right-aligned row labels and vertical column labels") {
  Heatmap map({"我", "爱", "<eos>"}, {"I", "love", "you"},
              std::vector<double>{1, 0.25, 0,      // 我
                                  0, 0.75, 0.25,   // 爱
                                  0, 0.5, 1});     // <eos>
  CHECK(map.to_text() ==
        "       I l y\n"
        "         o o\n"
        "         v u\n"
        "         e\n"
        "      ┌──────┐\n"
        "   我 │██░░  │\n"
        "   爱 │  ▓▓░░│\n"
        "<eos> │  ▒▒██│\n"
        "      └──────┘\n"
        "       0 ░▒▓█ 1\n");
  CHECK(map.to_text(/*unicode=*/false) ==
        "       I l y\n"
        "         o o\n"
        "         v u\n"
        "         e\n"
        "      +------+\n"
        "   我 |@@::  |\n"
        "   爱 |  ##::|\n"
        "<eos> |  ++@@|\n"
        "      +------+\n"
        "       0 .:-=+*#%@ 1\n");
}

TEST_CASE("Heatmap::to_text numbers long column labels and lists them below, with the title on top") {
  Heatmap map({"a", "bb"}, {"short", "a_rather_long_token"}, std::vector<double>{0.5, 0, 0, 0.5});
  map.set_title("long <labels>");
  CHECK(map.to_text() ==
        "long <labels>\n"
        "    0 1\n"
        "   ┌────┐\n"
        " a │██  │\n"
        "bb │  ██│\n"
        "   └────┘\n"
        "    0: short  1: a_rather_long_token\n"
        "    0 ░▒▓█ 0.5\n");
}

TEST_CASE("Heatmap::to_text keeps Chinese columns two wide and replaces control characters") {
  Heatmap map({"x\ty"}, {"我", "爱"}, std::vector<double>{1, 0});
  CHECK(map.to_text() ==
        "     我爱\n"
        "    ┌────┐\n"
        "x?y │██  │\n"
        "    └────┘\n"
        "     0 ░▒▓█ 1\n");
}

TEST_CASE("Heatmap::to_text wraps a long list of numbered labels at 80 columns") {
  std::vector<std::string> cols;
  for (int s = 0; s < 12; ++s) cols.push_back(cat("source_token_", s));
  const std::string text = Heatmap({"t"}, cols, std::vector<double>(12, 0.5)).to_text();
  CHECK(contains(text, "\n   0: source_token_0  1: source_token_1  2: source_token_2  3: source_token_3\n"));
  CHECK(contains(text, "\n   8: source_token_8  9: source_token_9  10: source_token_10\n   11: source_token_11\n"));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (contains(line, ": ")) CHECK(line.size() <= 80);
}

// ================================================================================================
// Errors

TEST_CASE("Heatmap errors are pinned") {
  CHECK_THROWS_WITH_AS(Heatmap({}, {"a"}, std::vector<double>{}),
                       "Heatmap: expected at least one row and one column, got 0 x 1", std::invalid_argument);
  CHECK_THROWS_WITH_AS(Heatmap({"a", "b"}, {"x", "y", "z"}, std::vector<double>(5, 0.2)),
                       "Heatmap: expected rows*cols = 2*3 = 6 values, got 5", std::invalid_argument);
  CHECK_THROWS_WITH_AS(Heatmap({"a", "b"}, {"x", "y"}, std::vector<double>{0, 1, 0, std::nan("")}),
                       "Heatmap: expected finite values, got nan at row 1, column 1 (\"b\", \"y\")",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      Heatmap({"a"}, {"x", "y"}, std::vector<double>{-std::numeric_limits<double>::infinity(), 1}),
      "Heatmap: expected finite values, got -inf at row 0, column 0 (\"a\", \"x\")", std::invalid_argument);
  CHECK_THROWS_WITH_AS(Heatmap({}, {}, zeros({2, 3, 4})),
                       "Heatmap: expected a 2-D tensor of weights (T, S), got shape [2, 3, 4]; pick one example "
                       "and head first, e.g. weights[b][h]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Heatmap({}, {}, zeros({4})), "Heatmap: expected a 2-D tensor of weights (T, S), got shape [4]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Heatmap({"a", "b"}, {}, zeros({3, 4})),
                       "Heatmap: expected 3 row labels (one per row of the [3, 4] weights), got 2",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Heatmap({}, {"x"}, zeros({3, 4})),
                       "Heatmap: expected 4 column labels (one per column of the [3, 4] weights), got 1",
                       std::invalid_argument);

  Heatmap map({"a"}, {"x"}, std::vector<double>{1});
  CHECK_THROWS_WITH_AS(map.set_value_range(1, 0), "Heatmap::set_value_range: expected finite lo < hi, got [1, 0]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(map.set_cell_size(2), "Heatmap::set_cell_size: expected 4..200 pixels, got 2",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(map.value(1, 0), "Heatmap::value: expected a cell of the 1 x 1 matrix, got (1, 0)",
                       std::out_of_range);
  const std::string path = "/nonexistent-seqgrad-dir/alignment.svg";
  CHECK_THROWS_WITH_AS(map.save(path), ("save: cannot create a temporary file next to '" + path + "': " + std::strerror(ENOENT)).c_str(),
                       std::runtime_error);

  CHECK_THROWS_WITH_AS(HeatmapGrid(0), "HeatmapGrid: expected columns >= 1, got 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(HeatmapGrid().to_svg(), "HeatmapGrid::to_svg: expected at least one heatmap, got 0",
                       std::invalid_argument);
}
