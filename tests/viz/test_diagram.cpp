// tests/viz/test_diagram.cpp - boxes and arrows (viz/diagram.h): well-formed SVG with every box's
// text and every label, the layered layout (arrows point forward, a leaf sits just before its
// reader, a tree's children keep their order), and the pinned errors.
#include <string>
#include <vector>

#include "tests/test_util.h"
#include "tests/viz/svg_check.h"
#include "viz/diagram.h"

using namespace seqgrad;
using namespace seqgrad::viz;
using seqgrad::testing::count_of;
using seqgrad::testing::svg_problem;

namespace {

// The x (or y) of the first <text> element holding exactly `label`.
double coordinate_of(const std::string& svg, const std::string& label, const char* axis) {
  const size_t at = svg.find(">" + label + "</text>");
  REQUIRE(at != std::string::npos);
  const size_t start = svg.rfind("<text", at);
  const std::string key = std::string(" ") + axis + "=\"";
  const size_t k = svg.find(key, start) + key.size();
  return std::stod(svg.substr(k, svg.find('"', k) - k));
}

}  // namespace

TEST_CASE("Diagram draws every box's lines and every arrow's label, and lays a graph out in columns") {
  Diagram d;
  const int64_t a = d.add_box({"a", "leaf"}), b = d.add_box({"b", "leaf"});
  const int64_t e = d.add_box({"mul", "value -6"}), c = d.add_box({"c", "leaf"}), out = d.add_box({"add"});
  d.add_arrow(a, e, "dL/da");
  d.add_arrow(b, e, "dL/db");
  d.add_arrow(e, out, "dL/de", "#2563eb");
  d.add_arrow(c, out, "dL/dc");
  d.set_title("a b + c").set_notes({"one note"});
  const std::string svg = d.to_svg();
  CHECK(svg_problem(svg) == "");
  for (const char* text : {"a", "b", "mul", "value -6", "c", "add", "dL/da", "dL/db", "dL/de", "dL/dc", "a b + c", "one note"})
    CHECK_MESSAGE(count_of(svg, std::string(">") + text + "</text>") == 1, text);
  CHECK(count_of(svg, "<polygon") == 4);  // one arrowhead per arrow
  // Columns: a and b, then mul, then add; c has no arrows in, so it sits in mul's column, just
  // before the box it feeds, not in the first column.
  const double xa = coordinate_of(svg, "a", "x"), xmul = coordinate_of(svg, "mul", "x");
  CHECK(coordinate_of(svg, "b", "x") == xa);
  CHECK(xmul > xa);
  CHECK(coordinate_of(svg, "add", "x") > xmul);
  CHECK(coordinate_of(svg, "c", "x") == xmul);
  // Children of one box keep the order they were added in (top to bottom).
  CHECK(coordinate_of(svg, "a", "y") < coordinate_of(svg, "b", "y"));
}

TEST_CASE("Diagram top to bottom: later columns are lower") {
  Diagram d(Diagram::Direction::top_to_bottom);
  const int64_t root = d.add_box({"root"});
  d.add_arrow(root, d.add_box({"left"}));
  d.add_arrow(root, d.add_box({"right"}));
  const std::string svg = d.to_svg();
  CHECK(svg_problem(svg) == "");
  CHECK(coordinate_of(svg, "left", "y") > coordinate_of(svg, "root", "y"));
  CHECK(coordinate_of(svg, "left", "y") == coordinate_of(svg, "right", "y"));
  CHECK(coordinate_of(svg, "left", "x") < coordinate_of(svg, "right", "x"));
}

TEST_CASE("Diagram errors are pinned") {
  Diagram d;
  CHECK_THROWS_WITH_AS(d.to_svg(), "Diagram::to_svg: no boxes to draw", std::invalid_argument);
  CHECK_THROWS_WITH_AS(d.add_box({}), "Diagram::add_box: expected at least one line of text, got none",
                       std::invalid_argument);
  const int64_t a = d.add_box({"a"}), b = d.add_box({"b"});
  CHECK_THROWS_WITH_AS(d.add_arrow(a, 5), "Diagram::add_arrow: expected box ids in [0, 2), got 0 -> 5",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(d.add_arrow(a, a), "Diagram::add_arrow: an arrow from box 0 to itself", std::invalid_argument);
  d.add_arrow(a, b);
  d.add_arrow(b, a);
  CHECK_THROWS_WITH_AS(d.to_svg(), "Diagram::to_svg: the arrows make a cycle; expected every arrow to point forward",
                       std::invalid_argument);
}

TEST_CASE("stack_vertically puts pictures one under another, as wide as the widest") {
  SvgCanvas a(200, 100), b(300, 50);
  a.text(10, 20, "first", {});
  b.text(10, 20, "second", {});
  const std::string both = stack_vertically({a.str(), b.str()});
  CHECK(svg_problem(both) == "");
  CHECK(both.find("width=\"300\" height=\"150\"") != std::string::npos);
  CHECK(count_of(both, "<svg x=\"0\" y=\"0\"") == 1);
  CHECK(count_of(both, "<svg x=\"0\" y=\"100\"") == 1);
  CHECK(count_of(both, ">first</text>") == 1);
  CHECK(count_of(both, ">second</text>") == 1);
  CHECK_THROWS_WITH_AS(stack_vertically({}), "stack_vertically: expected at least one picture, got none",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(stack_vertically({"<p>not a picture</p>"}), "stack_vertically: expected an <svg> document",
                       std::invalid_argument);
}
