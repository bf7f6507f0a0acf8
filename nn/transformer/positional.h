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
// column, each half a 1-D table.
// An encoding may also act inside attention: every encoding is an AttentionHook
// (attention_hook.h), which the Transformer attaches to its self-attention layers, so an
// encoding may add to the embeddings, add a bias (NH, T, S) to the logits, transform q and k,
// or any mix; sinusoidal and learned only add. A new encoding is one file that registers
// itself (SEQGRAD_REGISTER_POSITIONAL below), with options of its own if it likes: see
// examples/08_extending/coursework/alibi.cpp. Read next: transformer.h, then
// nn/vision/patch_embedding.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "nn/core/module.h"
#include "nn/core/registry.h"
#include "nn/transformer/attention_hook.h"
#include "tensor/check.h"

namespace seqgrad::nn {

// The (max_len, C) table of sines and cosines above (C may be odd: the last column is a sine).
Tensor sinusoidal_table(int64_t max_len, int64_t C);

// What a registered encoding is built with: the model's width, the longest sequence, the number
// of attention heads it will be attached to, and the values of its own options.
struct PositionalOptions {
  PositionalOptions(int64_t d_model, int64_t max_len, int64_t num_heads = 1, Settings settings = Settings())
      : d_model(d_model), max_len(max_len), num_heads(num_heads), settings(std::move(settings)) {}
  int64_t d_model, max_len, num_heads;  // C, the positions covered, NH
  Settings settings;                    // the entry's options, every one set (make_positional_encoding)
};

// What every encoding shares: x (B, T, C) -> x + P[offset .. offset + T) (B, T, C), where
// offset is the position of x's first token: 0 for a whole sequence, t when decoding step t alone.
// An encoding that works inside attention only returns x (after check_positions), and
// overrides attention_bias and/or transform_heads (attention_hook.h).
class PositionalEncoding : public Module, public AttentionHook {
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
// An entry's options become the tool's flags (--buckets) and keys of a checkpoint's
// configuration, as a score's do; the model kinds built of Transformer layers take the chosen
// encoding's options (positional_options).
struct PositionalEntry {
  std::string name, help;
  std::function<std::shared_ptr<PositionalEncoding>(const PositionalOptions&)> make;
  std::vector<Option> options;  // the encoding's own options
};
Registry<PositionalEntry>& positional_encodings();
// Builds the encoding registered as `name`; its options missing from options.settings are set to
// their defaults, and every value is checked against its declaration first.
std::shared_ptr<PositionalEncoding> make_positional_encoding(const std::string& name, const PositionalOptions& options);
std::shared_ptr<PositionalEncoding> make_positional_encoding(const PositionalEntry& entry, const PositionalOptions& options);
std::shared_ptr<PositionalEncoding> make_positional_encoding(const std::string& name, int64_t d_model, int64_t max_len);
// The options of the encoding chosen in `chosen` ("positional"), once it is chosen; with
// chosen = nullptr, those of every registered encoding (for a program's list of flags).
std::vector<Option> positional_options(const Settings* chosen);

// Class is built from a PositionalOptions if it has such a constructor, else from
// (d_model, max_len), as the encodings that need neither heads nor options are.
template <class Class>
std::shared_ptr<PositionalEncoding> build_positional_encoding(const PositionalOptions& o) {
  if constexpr (std::is_constructible_v<Class, const PositionalOptions&>) return std::make_shared<Class>(o);
  else return std::make_shared<Class>(o.d_model, o.max_len);
}

// One line in an encoding's own file registers it; options (optional) lists the Options it
// declares, which it reads from PositionalOptions::settings.
//   SEQGRAD_REGISTER_POSITIONAL(Rotary, "rotary", "rotated q and k", nn::number_option("rotary_base", ...));
#define SEQGRAD_REGISTER_POSITIONAL(Class, name, help, ...)                                                 \
  SEQGRAD_REGISTER(::seqgrad::nn::positional_encodings(),                                                   \
                   ::seqgrad::nn::PositionalEntry{name, help,                                               \
                                                  ::seqgrad::nn::build_positional_encoding<Class>,          \
                                                  std::vector<::seqgrad::nn::Option>{__VA_ARGS__}})

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
