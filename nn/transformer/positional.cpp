// nn/transformer/positional.cpp - the sinusoid table, and adding a slice of a table to a batch.
#include "nn/transformer/positional.h"

#include <cmath>

#include "nn/core/init.h"
#include "tensor/check.h"
#include "tensor/shape_ops.h"

namespace seqgrad::nn {

// [docs:sinusoidal_table]
Tensor sinusoidal_table(int64_t max_len, int64_t C) {
  check(max_len > 0 && C > 0, "sinusoidal_table: expected positive max_len and C, got ", max_len, " and ", C);
  Tensor pe = Tensor::empty({max_len, C});
  for (int64_t p = 0; p < max_len; ++p)
    for (int64_t j = 0; j < C; ++j) {
      // Features 2i and 2i+1 share the frequency 1 / 10000^(2i/C). Computed in double, so the
      // table is the formula rounded once.
      const double two_i = static_cast<double>(j - j % 2);
      const double angle = static_cast<double>(p) / std::pow(10000.0, two_i / static_cast<double>(C));
      pe.data()[p * C + j] = static_cast<real>(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  return pe;
}
// [docs:end]

// ================================================================================================
// The shared part

PositionalEncoding::PositionalEncoding(int64_t c, int64_t n) : d_model(c), max_len(n) {
  check(c > 0 && n > 0, "PositionalEncoding: expected positive d_model and max_len, got ", c, " and ", n);
}

void PositionalEncoding::check_positions(const Variable& x, int64_t offset) const {
  check(x.dim() == 3 && x.size(2) == d_model, name(), ": expected input of shape (B, T, ", d_model, "), got ", x.shape());
  check_index(offset >= 0 && offset + x.size(1) <= max_len, name(), ": positions ", offset, "..", offset + x.size(1) - 1,
              " are out of range for max_len ", max_len);
}

// ================================================================================================
// Sinusoidal

SinusoidalPositionalEncoding::SinusoidalPositionalEncoding(int64_t c, int64_t n) : PositionalEncoding(c, n) {
  pe = register_buffer("pe", sinusoidal_table(n, c));
}

// [docs:sinusoidal_forward]
Variable SinusoidalPositionalEncoding::forward(const Variable& x, int64_t offset) {
  check_positions(x, offset);
  return x + Variable(slice(pe, 0, offset, offset + x.size(1)));  // (B, T, C) + (T, C)
}
// [docs:end]

// ================================================================================================
// Learned

LearnedPositionalEncoding::LearnedPositionalEncoding(int64_t c, int64_t n) : PositionalEncoding(c, n) {
  Tensor w = Tensor::empty({n, c});
  init::normal_(w, 0, real(0.02));
  weight = register_parameter("weight", w);
}

Variable LearnedPositionalEncoding::forward(const Variable& x, int64_t offset) {
  check_positions(x, offset);
  return x + seqgrad::slice(weight, 0, offset, offset + x.size(1));  // (B, T, C) + (T, C)
}

// ================================================================================================
// Two dimensions

// [docs:sinusoidal_table_2d]
Tensor sinusoidal_table_2d(int64_t height, int64_t width, int64_t C) {
  check(height > 0 && width > 0, "sinusoidal_table_2d: expected a positive height and width, got ", height, " and ",
        width);
  check(C >= 2 && C % 2 == 0, "sinusoidal_table_2d: expected an even number of features C >= 2 (half for the row, ",
        "half for the column), got ", C);
  const int64_t half = C / 2;
  const Tensor rows = sinusoidal_table(height, half), cols = sinusoidal_table(width, half);  // (H, C/2), (W, C/2)
  Tensor pe = Tensor::empty({height, width, C});
  for (int64_t r = 0; r < height; ++r)
    for (int64_t c = 0; c < width; ++c) {
      real* cell = pe.data() + (r * width + c) * C;
      for (int64_t j = 0; j < half; ++j) {
        cell[j] = rows.data()[r * half + j];         // which row
        cell[half + j] = cols.data()[c * half + j];  // which column
      }
    }
  return pe;
}
// [docs:end]

SinusoidalPositionalEncoding2d::SinusoidalPositionalEncoding2d(int64_t c, int64_t h, int64_t w)
    : d_model(c), height(h), width(w) {
  pe = register_buffer("pe", sinusoidal_table_2d(h, w, c));
}

// [docs:sinusoidal_2d_forward]
Variable SinusoidalPositionalEncoding2d::forward(const Variable& x) {
  check(x.dim() == 3 && x.size(1) == height * width && x.size(2) == d_model, name(), ": expected input of shape (B, ",
        height * width, ", ", d_model, ") (a ", height, " x ", width, " grid flattened row by row), got ", x.shape());
  return x + Variable(pe.reshape({height * width, d_model}));  // (B, S, C) + (S, C)
}
// [docs:end]

// ================================================================================================
// The registry

SEQGRAD_REGISTER_POSITIONAL(SinusoidalPositionalEncoding, "sinusoidal", "fixed sines and cosines (Vaswani et al., 2017)")
SEQGRAD_REGISTER_POSITIONAL(LearnedPositionalEncoding, "learned", "a trained vector per position (BERT, GPT)")

Registry<PositionalEntry>& positional_encodings() {
  static Registry<PositionalEntry> registry("positional encoding");
  return registry;
}

std::shared_ptr<PositionalEncoding> make_positional_encoding(const std::string& name, const PositionalOptions& options) {
  return make_positional_encoding(positional_encodings().get(name), options);
}

std::shared_ptr<PositionalEncoding> make_positional_encoding(const PositionalEntry& entry, const PositionalOptions& options) {
  const std::string& name = entry.name;
  PositionalOptions o = options;
  o.settings = with_defaults(entry.options, o.settings);
  for (const Option& option : entry.options) {
    std::string why;
    const io::Json& value = *o.settings.json().find(option.key);
    check(option.accepts(value, why), "positional encoding '", name, "': option '", option.key, "' must be ", why,
          ", got ", value.dump());
  }
  return entry.make(o);
}

std::shared_ptr<PositionalEncoding> make_positional_encoding(const std::string& name, int64_t d_model, int64_t max_len) {
  return make_positional_encoding(name, PositionalOptions(d_model, max_len));
}

std::vector<Option> positional_options(const Settings* chosen) {
  return chosen_options(positional_encodings(), "positional", chosen);
}

}  // namespace seqgrad::nn
