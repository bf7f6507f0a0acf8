// tests/viz/test_svg.cpp - the drawing layer: escaping, text widths, colours, nice ticks,
// scales, the canvas's output (checked for well-formedness) and the atomic file writer.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "tests/test_util.h"
#include "tests/viz/svg_check.h"
#include "viz/svg.h"

using namespace seqgrad;
using namespace seqgrad::viz;
using seqgrad::testing::count_of;
using seqgrad::testing::svg_problem;
namespace fs = std::filesystem;

namespace {

void check_all_equal(const std::vector<double>& got, const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-12));
}

}  // namespace

// ================================================================================================
// Text

TEST_CASE("escape_xml turns markup characters into entities") {
  CHECK(escape_xml("a<b & \"c\" 'd' > e") == "a&lt;b &amp; &quot;c&quot; &apos;d&apos; &gt; e");
  CHECK(escape_xml("") == "");
  CHECK(escape_xml("&amp;") == "&amp;amp;");  // escaping is not idempotent, and must not be
}

TEST_CASE("escape_xml passes valid UTF-8 through and replaces what XML cannot hold") {
  CHECK(escape_xml("注意力 attention") == "注意力 attention");
  CHECK(escape_xml("tab\tnewline\n") == "tab\tnewline\n");
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(escape_xml("a\xFF" "b") == "a" + fffd + "b");         // not UTF-8 at all
  CHECK(escape_xml("\xE6\xB3") == fffd + fffd);                // a truncated 3-byte sequence
  CHECK(escape_xml("\xC0\xAF") == fffd + fffd);                // an overlong '/'
  CHECK(escape_xml("\xED\xA0\x80") == fffd + fffd + fffd);     // a UTF-16 surrogate
  CHECK(escape_xml("bell\x07") == "bell" + fffd);              // control characters
}

TEST_CASE("text_width counts narrow characters as 0.6 em and CJK ones as 1 em") {
  CHECK(text_width("abc", 10) == doctest::Approx(18));
  CHECK(text_width("注意", 10) == doctest::Approx(20));
  CHECK(text_width("", 10) == 0);
}

// ================================================================================================
// Colours

TEST_CASE("colours: hex strings, the palette wraps, lighten and the sequential ramp") {
  CHECK(Color{255, 0, 16}.hex() == "#ff0010");
  CHECK(palette(0).hex() == palette(10).hex());
  CHECK(palette(0).hex() != palette(1).hex());
  CHECK(palette(-1).hex() == "#969696");
  CHECK(lighten({0, 0, 0}, 0.5).hex() == "#808080");
  CHECK(mix({0, 0, 0}, {200, 100, 50}, 2.0).hex() == Color{200, 100, 50}.hex());  // t is clamped
  CHECK(sequential(0).hex() == "#ffffff");
  CHECK(sequential(1).hex() == "#08306b");
  CHECK(sequential(std::nan("")).hex() == "#bebebe");
}

// ================================================================================================
// Ticks and scales

TEST_CASE("nice_step picks 1, 2 or 5 times a power of ten") {
  CHECK(nice_step(2.3, 5) == doctest::Approx(0.5));
  CHECK(nice_step(1000, 5) == doctest::Approx(200));
  CHECK(nice_step(1, 5) == doctest::Approx(0.2));
  CHECK(nice_step(7, 5) == doctest::Approx(1));
  CHECK(nice_step(0.003, 3) == doctest::Approx(0.001));
  CHECK(nice_step(90, 2) == doctest::Approx(50));
}

TEST_CASE("nice_ticks cover the range with round values") {
  check_all_equal(nice_ticks(0.03, 2.3), {0, 0.5, 1, 1.5, 2, 2.5});
  check_all_equal(nice_ticks(0, 999), {0, 200, 400, 600, 800, 1000});
  check_all_equal(nice_ticks(-1, 1), {-1, -0.5, 0, 0.5, 1});
  check_all_equal(nice_ticks(2.3, 0.03), {0, 0.5, 1, 1.5, 2, 2.5});  // reversed bounds
  check_all_equal(nice_ticks(3, 3), {2.7, 2.8, 2.9, 3, 3.1, 3.2, 3.3});  // one value: widened by 10%
  check_all_equal(nice_ticks(0, 0), {-1, -0.5, 0, 0.5, 1});
  // Exact decimals: 0.6 is the double nearest 0.6, not 3 * 0.2.
  const std::vector<double> t = nice_ticks(0, 1);
  REQUIRE(t.size() == 6);
  CHECK(t[3] == 0.6);
  CHECK(t[0] == 0);
  CHECK_FALSE(std::signbit(nice_ticks(-0.3, 0.7)[3]));  // no -0
}

TEST_CASE("nice_ticks rejects a non-finite range") {
  CHECK_THROWS_WITH_AS(nice_ticks(std::nan(""), 1), "nice_ticks: expected a finite range, got [nan, 1]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nice_ticks(0, std::numeric_limits<double>::infinity()),
                       "nice_ticks: expected a finite range, got [0, inf]", std::invalid_argument);
}

TEST_CASE("log_ticks are powers of ten covering the range, thinned past 9") {
  check_all_equal(log_ticks(0.03, 2.3), {0.01, 0.1, 1, 10});
  check_all_equal(log_ticks(1, 1), {1, 10});
  check_all_equal(log_ticks(1, 100), {1, 10, 100});
  check_all_equal(log_ticks(1e-6, 1e6), {1e-6, 1e-4, 1e-2, 1, 1e2, 1e4, 1e6});
  CHECK_THROWS_WITH_AS(log_ticks(0, 1), "log_ticks: expected 0 < lo <= hi, got [0, 1]", std::invalid_argument);
}

TEST_CASE("format_tick shows the decimals the step needs") {
  CHECK(format_tick(1.5, 0.5) == "1.5");
  CHECK(format_tick(2, 0.5) == "2.0");
  CHECK(format_tick(200, 200) == "200");
  CHECK(format_tick(0.05, 0.05) == "0.05");
  CHECK(format_tick(-0.0, 0.5) == "0.0");
  CHECK(format_tick(1e-17, 0.1) == "0.0");  // rounding noise around zero
  CHECK(format_tick(0.001, 0.001) == "0.001");
  CHECK(format_tick(1e6, 1e6) == "1e+06");
  CHECK(format_tick(1e-5, 1e-5) == "1e-05");
  CHECK(format_tick(1e6, 2e5) == "1000000");  // the step decides, so an axis stays consistent
  CHECK(format_tick(4e6, 2e6) == "4e+06");
  CHECK(format_tick(0, 2e-5) == "0");
}

TEST_CASE("Scale maps data to pixels, linearly or by log10") {
  const Scale x{0, 10, 100, 300};
  CHECK(x(0) == doctest::Approx(100));
  CHECK(x(5) == doctest::Approx(200));
  CHECK(x(10) == doctest::Approx(300));
  const Scale y{1, 100, 400, 0, /*log=*/true};  // y axis: bottom pixel first
  CHECK(y(1) == doctest::Approx(400));
  CHECK(y(10) == doctest::Approx(200));
  CHECK(y(100) == doctest::Approx(0));
}

// ================================================================================================
// SvgCanvas

TEST_CASE("SvgCanvas writes a well-formed SVG 1.1 document") {
  SvgCanvas c(200, 100);
  c.rect(0, 0, 200, 100, "white", "#333333", 1);
  c.line(10, 90, 190, 10, "#2563eb", 2, "4 2");
  c.polyline({{0, 0}, {50, 25.5}, {100, 3.14159}}, "red");
  c.circle(5, 5, 2, "blue", "white", 0.5);
  c.text(100, 50, "a < b & \"c\" 注意", {});
  c.begin_group({{"shape-rendering", "crispEdges"}});
  c.rect(1, 1, 2, 2, "black");
  c.end_group();
  const std::string svg = c.str();
  CHECK(svg_problem(svg) == "");
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"200\" height=\"100\"", 0) == 0);
  CHECK(svg.find(">a &lt; b &amp; &quot;c&quot; 注意</text>") != std::string::npos);
  CHECK(svg.find("points=\"0,0 50,25.5 100,3.14\"") != std::string::npos);  // two decimals at most
  CHECK(svg.find("stroke-dasharray=\"4 2\"") != std::string::npos);
  CHECK(count_of(svg, "<rect") == 2);
}

TEST_CASE("SvgCanvas skips elements with non-finite coordinates and says so") {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  SvgCanvas c(100, 100);
  c.line(0, 0, nan, 1, "black");
  c.rect(inf, 0, 1, 1, "black");
  c.polyline({{0, 0}, {1, nan}}, "black");
  c.circle(1, 1, nan, "black");
  c.text(nan, 0, "x", {});
  const std::string svg = c.str();
  CHECK(svg_problem(svg) == "");
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
  CHECK(count_of(svg, "skipped: non-finite coordinate") == 5);
}

TEST_CASE("SvgCanvas comments cannot break the document") {
  SvgCanvas c(10, 10);
  c.comment("a -- b --> c -");
  c.comment("bad \xFF byte");
  c.begin_group({});  // left open: str() closes it
  CHECK(svg_problem(c.str()) == "");
  SvgCanvas d(10, 10);
  CHECK_THROWS_WITH_AS(d.end_group(), "SvgCanvas::end_group: no group is open", std::runtime_error);
  CHECK_THROWS_WITH_AS(SvgCanvas(0, 10), "SvgCanvas: expected a positive size, got 0 x 10", std::invalid_argument);
}

TEST_CASE("the well-formedness checker catches what it should") {
  CHECK(svg_problem("<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>\n") == "");
  CHECK(svg_problem("<svg></svg>") != "");                                                  // no namespace
  CHECK(svg_problem("<svg xmlns=\"http://www.w3.org/2000/svg\"><g></svg>") != "");          // unclosed <g>
  CHECK(svg_problem("<svg xmlns=\"http://www.w3.org/2000/svg\">a & b</svg>") != "");        // bare &
  CHECK(svg_problem("<svg xmlns=\"http://www.w3.org/2000/svg\"><t a=\"<\"/></svg>") != "");  // < in a value
  CHECK(svg_problem("<svg xmlns=\"http://www.w3.org/2000/svg\"><!-- a -- b --></svg>") != "");
  CHECK(svg_problem("<svg xmlns=\"http://www.w3.org/2000/svg\">\xFF</svg>") != "");
  CHECK(svg_problem("<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"></svg>") != "");
}

// ================================================================================================
// Files

TEST_CASE("saving an SVG over a device or a directory is refused, and the device stays") {
  // Every SVG goes through io::write_file_atomic (tests/io/test_atomic_file.cpp); these pin that
  // the drawing classes use it: /dev/null is looked at, never opened or renamed over.
  if (fs::exists("/dev/null")) {
    SvgCanvas c(10, 10);
    CHECK_THROWS_WITH_AS(c.save("/dev/null"),
                         "save: cannot write '/dev/null': expected a regular file or a new name, got a character device",
                         std::runtime_error);
    CHECK(fs::is_character_file("/dev/null"));
  }
  const fs::path folder = fs::temp_directory_path() / "seqgrad_test_svg_dir";
  fs::create_directories(folder);
  CHECK_THROWS_WITH_AS(SvgCanvas(10, 10).save(folder.string()),
                       ("save: cannot write '" + folder.string() + "': expected a regular file or a new name, got a directory").c_str(),
                       std::runtime_error);
  CHECK(fs::is_directory(folder));
  fs::remove_all(folder);
}

TEST_CASE("format_fixed: a fixed number of decimals, and no sign on a zero") {
  CHECK(format_fixed(0.4271, 2) == "0.43");
  CHECK(format_fixed(-7.052, 2) == "-7.05");
  CHECK(format_fixed(2, 1) == "2.0");
  CHECK(format_fixed(23, 0) == "23");
  CHECK(format_fixed(-0.001, 2) == "0.00");
  CHECK(format_fixed(-0.4, 0) == "0");
}
