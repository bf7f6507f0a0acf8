// nn/positional.h - where a token is: sinusoidal and learned positional encodings.
//
// Attention treats its input as a set; the order of the tokens has to be added to them. The
// paper adds a fixed pattern of sines and cosines (section 3.5):
//   PE(p, 2i) = sin(p / 10000^(2i/C))        PE(p, 2i+1) = cos(p / 10000^(2i/C))
// one frequency per pair of features, from 1 down to 1/10000 radians per position. For any
// shift k, PE(p + k) is a rotation of PE(p), pair by pair (a linear map that does not depend
// on p), so attention can learn "k positions back". The learned alternative is a plain table
// of max_len vectors. Neither scales the embeddings: the model does that. Read next: transformer.h.
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"
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

}  // namespace seqgrad::nn
