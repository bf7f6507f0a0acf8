// nn/vision/cnn_encoder.cpp - the convolution stack, the grid flattened into a memory, and the 2-D
// positions attached to it.
#include "nn/vision/cnn_encoder.h"

#include "nn/core/activation.h"
#include "nn/vision/conv.h"
#include "nn/transformer/positional.h"
#include "tensor/check.h"
#include "tensor/elementwise.h"

namespace seqgrad::nn {

CnnEncoder::CnnEncoder(const CnnEncoderOptions& o) : options(o) {
  const int64_t L = static_cast<int64_t>(o.channels.size());
  check(L >= 1, name(), ": expected at least one convolution, got an empty list of channels");
  if (options.strides.empty()) options.strides.assign(L, 1);
  check(static_cast<int64_t>(options.strides.size()) == L, name(), ": expected one stride per convolution (", L,
        "), got ", options.strides.size());
  if (o.position == GridPosition::Add)
    check(o.channels.back() % 2 == 0, name(), ": adding the 2-D positions needs an even number of channels in the last ",
          "convolution (half for the row, half for the column), got ", o.channels.back());
  if (o.position == GridPosition::OneHot)
    check(o.grid_rows > 0 && o.grid_cols > 0, name(), ": one-hot positions need the grid's size; expected positive ",
          "rows and columns, got ", o.grid_rows, " x ", o.grid_cols);
  if (o.position == GridPosition::Concat)
    check(o.position_features >= 2 && o.position_features % 2 == 0, name(),
          ": expected an even number of position features >= 2 (half for the row, half for the column), got ",
          o.position_features);
  // [docs:cnn_stack]
  convs = register_module("convs", std::make_shared<Sequential>());
  int64_t in = o.in_channels;
  for (int64_t l = 0; l < L; ++l) {
    const int64_t k = o.kernel_size, s = options.strides[l];
    // A stride of 2 halves the grid here. To downsample by pooling instead, give this
    // convolution stride 1 and push a 2 x 2 pooling layer after its ReLU.
    convs->push_back(std::make_shared<Conv2d>(Conv2dOptions(in, o.channels[l], k).with_padding(k / 2).with_stride(s)));
    convs->push_back(std::make_shared<ReLU>());
    in = o.channels[l];
  }
  // [docs:end]
}

std::string CnnEncoder::extra_repr() const {
  const CnnEncoderOptions& o = options;
  std::string s = cat("in_channels=", o.in_channels, ", channels=(");
  for (size_t l = 0; l < o.channels.size(); ++l) s += cat(l ? ", " : "", o.channels[l]);
  s += "), strides=(";
  for (size_t l = 0; l < options.strides.size(); ++l) s += cat(l ? ", " : "", options.strides[l]);
  s += "), position=";
  switch (o.position) {
    case GridPosition::None: return s + "none";
    case GridPosition::Add: return s + "add";
    case GridPosition::Concat: return s + cat("concat(", o.position_features, ")");
    case GridPosition::OneHot: return s + cat("one-hot(", o.grid_rows, " x ", o.grid_cols, ")");
  }
  return s;
}

std::pair<int64_t, int64_t> CnnEncoderOptions::grid_size(int64_t H, int64_t W) const {
  const int64_t k = kernel_size;
  for (size_t l = 0; l < channels.size(); ++l) {
    const int64_t s = strides.empty() ? 1 : strides.at(l);
    H = (H + 2 * (k / 2) - k) / s + 1;
    W = (W + 2 * (k / 2) - k) / s + 1;
  }
  return {H, W};
}

int64_t CnnEncoder::memory_size() const {
  const int64_t C = options.channels.back();
  if (options.position == GridPosition::OneHot) return C + options.grid_rows + options.grid_cols;
  return options.position == GridPosition::Concat ? C + options.position_features : C;
}

Variable CnnEncoder::features(const Variable& images) {
  check(images.dim() == 4 && images.size(1) == options.in_channels, name(), ": expected images of shape (B, ",
        options.in_channels, ", H, W), got ", images.shape(),
        images.dim() == 3 ? " (a batch of one-channel images (B, H, W) needs unsqueeze(x, 1))" : "");
  return convs->forward(images);  // (B, C, H', W')
}

// The codes of every cell, (rows, cols, K): constants, never trained, made once per grid size.
Tensor CnnEncoder::positions(int64_t rows, int64_t cols) {
  if (table_.defined() && table_.size(0) == rows && table_.size(1) == cols) return table_;
  if (options.position == GridPosition::OneHot) {
    // [e_row; e_column]: a 1 at feature r and at feature rows + c.
    check(rows == options.grid_rows && cols == options.grid_cols, name(), ": one-hot positions were made for a ",
          options.grid_rows, " x ", options.grid_cols, " grid, got ", rows, " x ", cols);
    table_ = zeros({rows, cols, rows + cols});
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) table_.at({r, c, r}) = 1, table_.at({r, c, rows + c}) = 1;
    return table_;
  }
  const int64_t P = options.position == GridPosition::Add ? options.channels.back() : options.position_features;
  table_ = sinusoidal_table_2d(rows, cols, P);  // half PE(row), half PE(column)
  return table_;
}

// [docs:cnn_forward]
Variable CnnEncoder::forward(const Variable& images) {
  const Variable map = features(images);  // (B, C, H', W')
  const int64_t B = map.size(0), C = map.size(1), rows = map.size(2), cols = map.size(3), S = rows * cols;
  // The grid flattened row by row: cell (r, c) becomes memory position s = r W' + c.
  const Variable memory = reshape(permute(map, {0, 2, 3, 1}), {B, S, C});  // (B, H', W', C) -> (B, S, C)
  if (options.position == GridPosition::None) return memory;
  const Tensor pe = positions(rows, cols).reshape({S, -1});               // (S, K)
  if (options.position == GridPosition::Add) return memory + Variable(pe);  // (B, S, C) + (S, C)
  const int64_t K = pe.size(1);  // P sinusoidal features, or H' + W' one-hot ones
  const Tensor codes = broadcast_to(pe.reshape({1, S, K}), {B, S, K});     // the same codes for every image
  return concat({memory, Variable(codes)}, 2);                              // (B, S, C + K)
}
// [docs:end]

}  // namespace seqgrad::nn
