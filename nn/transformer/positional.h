// nn/transformer/positional.h - where a token is: sinusoidal and learned positional encodings.
//
// Attention treats its input as a set; the order of the tokens has to be added to them. The
// paper adds a fixed pattern of sines and cosines (section 3.5):
//   PE(p, 2i) = sin(p / 10000^(2i/C))        PE(p, 2i+1) = cos(p / 10000^(2i/C))
// one frequency per pair of features, from 1 down to 1/10000 radians per position. For any
// shift k, PE(p + k) is a rotation of PE(p), pair by pair (a linear map that does not depend
// on p), so attention can learn "k positions back". The learned alternative is a plain table
// of max_len vectors. Neither scales the embeddings: the model does that. For a grid of image
// patches, SinusoidalPositionalEncoding2d gives half the features to the row and half to the
// column, each half a 1-D table. Read next: transformer.h, then nn/vision/patch_embedding.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "nn/core/module.h"
#include "nn/core/registry.h"
#include "tensor/check.h"

namespace seqgrad::nn {

// The (max_len, C) table of sines and cosines above (C may be odd: the last column is a sine).
Tensor sinusoidal_table(int64_t max_len, int64_t C);

// What both encodings share: x (B, T, C) -> x + P[offset .. offset + T) (B, T, C), where
// offset is the position of x's first token: 0 for a whole sequence, t when decoding step t alone.
class PositionalEncoding : public Module {
 public:
  PositionalEncoding(int64_t d_model, int64_t max_len);
  std::string extra_repr() const override { return cat("d_model=", d_model, ", max_len=", max_len); }
  virtual Variable forward(const Variable& x, int64_t offset) = 0;
  Variable forward(const Variable& x) override { return forward(x, 0); }

  int64_t d_model, max_len;

 protected:
  void check_positions(const Variable& x, int64_t offset) const;  // shape and range, naming the class
};

// Adds PE to its input. The table is a buffer named "pe": saved in checkpoints, never trained.
class SinusoidalPositionalEncoding : public PositionalEncoding {
 public:
  SinusoidalPositionalEncoding(int64_t d_model, int64_t max_len = 1024);
  std::string name() const override { return "SinusoidalPositionalEncoding"; }
  using PositionalEncoding::forward;
  Variable forward(const Variable& x, int64_t offset) override;

  Tensor pe;  // (max_len, C)
};

// Adds a trained vector per position: weight (max_len, C) ~ N(0, 0.02^2), as GPT-2 starts it.
class LearnedPositionalEncoding : public PositionalEncoding {
 public:
  LearnedPositionalEncoding(int64_t d_model, int64_t max_len = 1024);
  std::string name() const override { return "LearnedPositionalEncoding"; }
  using PositionalEncoding::forward;
  Variable forward(const Variable& x, int64_t offset) override;

  Variable weight;  // (max_len, C)
};

// ================================================================================================
// Two dimensions: positions on a grid (image patches, a CNN feature map)

// The registry of 1-D positional encodings: "sinusoidal", "learned", and whatever else
// registers (nn/core/registry.h). A Transformer takes one by name (TransformerOptions::positional).
struct PositionalEntry {
  std::string name, help;
  std::function<std::shared_ptr<PositionalEncoding>(int64_t d_model, int64_t max_len)> make;
};
Registry<PositionalEntry>& positional_encodings();
std::shared_ptr<PositionalEncoding> make_positional_encoding(const std::string& name, int64_t d_model, int64_t max_len);

// One line in an encoding's own file registers it; Class is built from (d_model, max_len).
#define SEQGRAD_REGISTER_POSITIONAL(Class, name, help)                                                     \
  SEQGRAD_REGISTER(::seqgrad::nn::positional_encodings(),                                                  \
                   ::seqgrad::nn::PositionalEntry{                                                         \
                       name, help, [](int64_t d, int64_t n) -> std::shared_ptr<::seqgrad::nn::PositionalEncoding> { \
                         return std::make_shared<Class>(d, n);                                             \
                       }})

// The (height, width, C) table for a grid, C even: the first C/2 features of cell (r, c) are
// row r of the 1-D table of width C/2, the last C/2 are row c of the same table:
//   PE2(r, c, j)       = PE(r, j)      j < C/2        (which row)
//   PE2(r, c, C/2 + j) = PE(c, j)                     (which column)
// with PE the 1-D table above computed for width C/2. Cells in one row share the first half,
// cells in one column the second, and PE2(r + dr, c + dc) is a rotation of PE2(r, c) that
// depends only on (dr, dc).
Tensor sinusoidal_table_2d(int64_t height, int64_t width, int64_t C);

// Adds PE2 to a grid that has been flattened row by row, as attention takes it:
// x (B, S, C) with S = height * width, position s = r * width + c  ->  x + PE2 (B, S, C).
// The table is a buffer named "pe" (height, width, C): saved in checkpoints, never trained.
class SinusoidalPositionalEncoding2d : public Module {
 public:
  SinusoidalPositionalEncoding2d(int64_t d_model, int64_t height, int64_t width);
  std::string name() const override { return "SinusoidalPositionalEncoding2d"; }
  std::string extra_repr() const override { return cat("d_model=", d_model, ", height=", height, ", width=", width); }
  Variable forward(const Variable& x) override;

  int64_t d_model, height, width;
  Tensor pe;  // (height, width, C)
};

}  // namespace seqgrad::nn
