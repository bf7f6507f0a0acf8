// viz/image_attention.h - where a decoder looked on an image: one panel per output token, the
// image drawn pixel by pixel with that step's attention over the grid laid on top of it.
//
// A CNN encoder (nn/vision/cnn_encoder.h) turns an H x W image into a rows x cols grid; the decoder's
// attention at step t is one weight per grid cell. Each panel shows the image and, over every
// cell's block of pixels, a translucent orange whose opacity is the cell's weight divided by the
// step's largest weight, so the brightest spot of each panel is where that token looked most.
// What this is not: a heatmap with axes and a colour bar (heatmap.h draws those).
//   viz::ImageAttention(image, {"a", "red", "circle"}, weights).set_title("a red circle").save("a.svg");
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace seqgrad::viz {

class ImageAttention {
 public:
  // image (H, W) grey or (3, H, W) colour, values in [0, 1] (clamped); one label per step;
  // weights (T, rows, cols), T = labels.size(), rows <= H and cols <= W.
  ImageAttention(const Tensor& image, std::vector<std::string> labels, const Tensor& weights);

  ImageAttention& set_title(std::string title);
  ImageAttention& set_columns(int64_t panels_per_row);  // default 1
  ImageAttention& set_pixel_size(double pixels);        // side of one image pixel; default 8

  std::string to_svg() const;
  void save(const std::string& path) const;  // written atomically

 private:
  Tensor image_;  // (3, H, W)
  std::vector<std::string> labels_;
  Tensor weights_;  // (T, rows, cols)
  std::string title_;
  int64_t columns_ = 1;
  double pixel_ = 8;
};

}  // namespace seqgrad::viz
