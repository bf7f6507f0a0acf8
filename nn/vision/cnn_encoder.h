// nn/vision/cnn_encoder.h - CnnEncoder: a small convolutional network that turns an image into a set
// of vectors an attention decoder can read, each knowing where on the image it sits.
//
// A stack of 3 x 3 convolutions, each followed by a ReLU; a convolution with stride 2 halves
// the grid (no pooling layers: a strided convolution learns its own downsampling). The feature
// map (B, C, H', W') is flattened row by row into S = H' W' vectors, and where each cell sits is
// attached to it: one-hot codes of its row and its column concatenated, as attention OCR does
// (e_i, e_j), or the 2-D sinusoidal encoding (nn/transformer/positional.h) concatenated or added. What this is
// not: a pretrained or deep network (no pooling, no normalisation, no residual connections).
// Read first: conv.h, nn/transformer/positional.h.
// Read next: image_to_text.h (the decoder that attends over this memory).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/core/module.h"

namespace seqgrad::nn {

// How the position of a grid cell reaches the memory.
enum class GridPosition {
  None,    // features only: attention sees a set, and cannot tell left from right
  Add,     // features + PE2(row, column), C features (C must be even)
  Concat,  // [features; PE2(row, column)], C + P features
  OneHot,  // [features; e_row; e_column], C + H' + W' features, e one-hot: attention OCR's codes
};

struct CnnEncoderOptions {
  // in_channels: 1 for grey images, 3 for colour; channels: the out_channels of each convolution.
  CnnEncoderOptions(int64_t in_channels, std::vector<int64_t> channels)
      : in_channels(in_channels), channels(std::move(channels)) {}
  int64_t in_channels;
  std::vector<int64_t> channels;
  std::vector<int64_t> strides;   // one per convolution; empty = all 1
  int64_t kernel_size = 3;        // padding kernel_size / 2: stride 1 keeps the size, stride 2 halves it
  GridPosition position = GridPosition::Concat;
  int64_t position_features = 32; // P, for Concat (even, >= 2): half per axis, P/4 frequencies each
  int64_t grid_rows = 0, grid_cols = 0;  // OneHot: the grid (H', W') the codes are made for

  CnnEncoderOptions& with_strides(std::vector<int64_t> v) { strides = std::move(v); return *this; }
  CnnEncoderOptions& with_kernel_size(int64_t v) { kernel_size = v; return *this; }
  CnnEncoderOptions& with_position(GridPosition v) { position = v; return *this; }
  CnnEncoderOptions& with_position_features(int64_t v) { position_features = v; return *this; }
  // One-hot codes need the grid's size up front (they are H' + W' features): see grid_size().
  CnnEncoderOptions& with_one_hot_positions(int64_t rows, int64_t cols) {
    position = GridPosition::OneHot, grid_rows = rows, grid_cols = cols;
    return *this;
  }

  // The grid (H', W') the convolutions make of an H x W image: per convolution, as Conv2d,
  // out = (in + 2 (k / 2) - k) / stride + 1.
  std::pair<int64_t, int64_t> grid_size(int64_t H, int64_t W) const;
};

// convs: a Sequential of Conv2d, ReLU, Conv2d, ReLU, ... so the weights are named
// "convs.0.weight", "convs.2.weight", ... as a PyTorch nn.Sequential would name them.
class CnnEncoder : public Module {
 public:
  explicit CnnEncoder(const CnnEncoderOptions& options);
  std::string name() const override { return "CnnEncoder"; }
  std::string extra_repr() const override;

  // images (B, C_in, H, W) -> memory (B, S, D), S = H' W', cell s = r W' + c, D = memory_size()
  Variable forward(const Variable& images) override;
  // images (B, C_in, H, W) -> the feature map (B, C, H', W'), before positions are added
  Variable features(const Variable& images);

  // D: C (the last convolution's channels), plus P or H' + W' when positions are concatenated.
  int64_t memory_size() const;

  CnnEncoderOptions options;
  std::shared_ptr<Sequential> convs;

 private:
  Tensor positions(int64_t rows, int64_t cols);  // (rows, cols, C, P or rows + cols), once per grid size
  Tensor table_;
};

}  // namespace seqgrad::nn
