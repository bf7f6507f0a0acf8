// viz/image_attention.cpp - the panels: label, image pixels, attention on top.
#include "viz/image_attention.h"

#include <algorithm>
#include <cmath>

#include "io/atomic_file.h"
#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "viz/svg.h"

namespace seqgrad::viz {
namespace {

constexpr double kPad = 10, kLabelHeight = 20, kTitleHeight = 32;
const char* const kOverlay = "#f97316";  // orange: visible on black, white and every scene colour

}  // namespace

ImageAttention::ImageAttention(const Tensor& image, std::vector<std::string> labels, const Tensor& weights)
    : labels_(std::move(labels)) {
  check(image.dim() == 2 || (image.dim() == 3 && image.size(0) == 3),
        "ImageAttention: expected an image of shape (H, W) or (3, H, W), got ", image.shape());
  image_ = image.dim() == 2 ? broadcast_to(image.reshape({1, image.size(0), image.size(1)}),
                                           {3, image.size(0), image.size(1)})
                            : image.clone();
  const int64_t H = image_.size(1), W = image_.size(2), T = static_cast<int64_t>(labels_.size());
  check(weights.dim() == 3 && weights.size(0) == T && weights.size(1) >= 1 && weights.size(1) <= H &&
            weights.size(2) >= 1 && weights.size(2) <= W,
        "ImageAttention: expected weights of shape (", T, ", rows, cols) with rows <= ", H, " and cols <= ", W,
        " (one grid per label), got ", weights.shape());
  for (int64_t i = 0; i < weights.numel(); ++i)
    check(std::isfinite(weights.data()[i]), "ImageAttention: expected finite weights, got ", weights.data()[i]);
  weights_ = weights.clone();
}

ImageAttention& ImageAttention::set_title(std::string title) {
  title_ = std::move(title);
  return *this;
}

ImageAttention& ImageAttention::set_columns(int64_t n) {
  check(n >= 1, "ImageAttention: expected at least 1 panel per row, got ", n);
  columns_ = n;
  return *this;
}

ImageAttention& ImageAttention::set_pixel_size(double pixels) {
  check(pixels > 0 && std::isfinite(pixels), "ImageAttention: expected a positive pixel size, got ", pixels);
  pixel_ = pixels;
  return *this;
}

std::string ImageAttention::to_svg() const {
  const int64_t H = image_.size(1), W = image_.size(2), T = weights_.size(0);
  const int64_t rows = weights_.size(1), cols = weights_.size(2);
  const int64_t ncols = std::max<int64_t>(1, std::min(columns_, T)), nrows = (T + ncols - 1) / ncols;
  const double panel_w = static_cast<double>(W) * pixel_, panel_h = static_cast<double>(H) * pixel_ + kLabelHeight;
  const double title_h = title_.empty() ? 0 : kTitleHeight;
  double width = static_cast<double>(ncols) * (panel_w + kPad) + kPad;
  width = std::max(width, text_width(title_, 15) * 1.1 + 2 * kPad);
  const double height = title_h + static_cast<double>(nrows) * (panel_h + kPad) + kPad;

  SvgCanvas c(width, height);
  c.rect(0, 0, width, height, "white");
  if (!title_.empty()) {
    TextStyle s{15, "middle", "#111111"};
    s.bold = true;
    c.text(width / 2, 22, title_, s);
  }
  auto channel = [&](int64_t k, int64_t y, int64_t x) {
    const double v = std::clamp(static_cast<double>(image_.data()[(k * H + y) * W + x]), 0.0, 1.0);
    return static_cast<int>(std::lround(255 * v));
  };
  for (int64_t t = 0; t < T; ++t) {
    const double x0 = kPad + static_cast<double>(t % ncols) * (panel_w + kPad);
    const double y0 = title_h + kPad + static_cast<double>(t / ncols) * (panel_h + kPad);
    c.text(x0, y0 + 14, labels_[static_cast<size_t>(t)], TextStyle{13, "start", "#222222"});
    const double top = y0 + kLabelHeight;
    // The image, one rectangle per pixel.
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x)
        c.rect(x0 + static_cast<double>(x) * pixel_, top + static_cast<double>(y) * pixel_, pixel_, pixel_,
               Color{channel(0, y, x), channel(1, y, x), channel(2, y, x)}.hex());
    // Step t's attention: cell (r, q) covers pixel rows [r H / rows, (r + 1) H / rows) and the
    // columns likewise, its opacity the weight over the step's largest weight.
    const real* w = weights_.data() + t * rows * cols;
    const double most = *std::max_element(w, w + rows * cols);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t q = 0; q < cols; ++q) {
        const double opacity = most > 0 ? 0.75 * std::max(0.0, static_cast<double>(w[r * cols + q])) / most : 0;
        if (opacity < 0.02) continue;
        const double cx = x0 + panel_w * static_cast<double>(q) / static_cast<double>(cols);
        const double cy = top + (panel_h - kLabelHeight) * static_cast<double>(r) / static_cast<double>(rows);
        c.begin_group({{"fill-opacity", cat(std::round(opacity * 100) / 100)}});
        c.rect(cx, cy, panel_w / static_cast<double>(cols), (panel_h - kLabelHeight) / static_cast<double>(rows),
               kOverlay);
        c.end_group();
      }
    c.rect(x0, top, panel_w, panel_h - kLabelHeight, "none", "#9aa1ab");
  }
  return c.str();
}

void ImageAttention::save(const std::string& path) const { io::write_file_atomic(path, to_svg(), "save"); }

}  // namespace seqgrad::viz
