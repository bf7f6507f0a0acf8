// tests/viz/test_image_attention.cpp - ImageAttention: one panel per step, the image's pixels,
// the attention laid over the grid cells, a well-formed file; errors.
#include <string>

#include "tests/test_util.h"
#include "tests/viz/svg_check.h"
#include "viz/image_attention.h"

using namespace seqgrad;

namespace {
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("ImageAttention draws each panel's pixels and the step's attention over the grid cells") {
  // A 2 x 4 grey image, a 1 x 2 grid: step 0 looks at the left half only, step 1 at both.
  const Tensor image = from_vector({0, 1, 0, 1, 1, 0, 1, 0}, {2, 4});
  const Tensor weights = from_vector({1, 0, 0.5f, 0.5f}, {2, 1, 2});
  const std::string svg = viz::ImageAttention(image, {"a", "<eos>"}, weights).set_title("t").set_pixel_size(5).to_svg();
  CHECK(testing::svg_problem(svg) == "");
  CHECK(count(svg, "fill=\"#000000\"") == 2 * 4);          // 4 black pixels in each of 2 panels
  CHECK(count(svg, "fill=\"#ffffff\"") == 2 * 4);          // and 4 white ones
  CHECK(count(svg, "fill=\"#f97316\"") == 1 + 2);          // the weight-0 cell is left clear
  CHECK(count(svg, "fill-opacity=\"0.75\"") == 3);         // each step's largest weight: the most opaque
  CHECK(svg.find("&lt;eos&gt;") != std::string::npos);
  // Colour images: (3, H, W), one rectangle per pixel in its own colour.
  Tensor rgb = zeros({3, 1, 2});
  rgb.at({0, 0, 0}) = 1, rgb.at({2, 0, 1}) = 1;
  const std::string c = viz::ImageAttention(rgb, {"x"}, from_vector({1}, {1, 1, 1})).to_svg();
  CHECK(count(c, "fill=\"#ff0000\"") == 1);
  CHECK(count(c, "fill=\"#0000ff\"") == 1);
}

TEST_CASE("ImageAttention::save writes the same document as to_svg") {
  testing::TempDir dir;
  const viz::ImageAttention a(zeros({4, 4}), {"x", "y"}, full({2, 2, 2}, real(0.25)));
  a.save(dir.file("a.svg"));
  CHECK(testing::read_file(dir.file("a.svg")) == a.to_svg());
}

TEST_CASE("ImageAttention errors say what was expected and what was found") {
  CHECK_THROWS_WITH_AS(viz::ImageAttention(zeros({2, 4, 4}), {"a"}, zeros({1, 2, 2})),
                       "ImageAttention: expected an image of shape (H, W) or (3, H, W), got [2, 4, 4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(viz::ImageAttention(zeros({4, 4}), {"a"}, zeros({2, 2, 2})),
                       "ImageAttention: expected weights of shape (1, rows, cols) with rows <= 4 and cols <= 4 (one grid "
                       "per label), got [2, 2, 2]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(viz::ImageAttention(zeros({4, 4}), {"a"}, full({1, 1, 1}, real(NAN))),
                       "ImageAttention: expected finite weights, got nan", std::invalid_argument);
  viz::ImageAttention a(zeros({4, 4}), {"a"}, zeros({1, 2, 2}));
  CHECK_THROWS_WITH_AS(a.set_columns(0), "ImageAttention: expected at least 1 panel per row, got 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(a.set_pixel_size(-1), "ImageAttention: expected a positive pixel size, got -1", std::invalid_argument);
}
