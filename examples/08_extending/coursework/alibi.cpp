// examples/08_extending/coursework/alibi.cpp - ALiBi, attention with linear biases (Press et al.,
// 2022): a positional encoding in one file that adds nothing to the embeddings and a bias to the
// attention logits instead.
//
// Each head h penalises a key by its distance from the query, with a slope m_h of its own:
//   logits_h[i, j] = q_i . k_j / sqrt(HS) - m_h |i - j|          (NH, T, S) added to every batch row
//   m_h = 2^(-b (h + 1) / NH),  h = 0 .. NH - 1                 b = 8 in the paper (--alibi-max-bias)
// With 4 heads the slopes are 1/4, 1/16, 1/64, 1/256: a steep head looks close by, a gentle one
// far. In causal self-attention every key the mask lets through has j <= i, so the bias is the
// paper's -m_h (i - j); an encoder's self-attention, which looks both ways, takes the distance.
// Nothing is learned, and no table bounds the positions: the same slopes serve any length.
// Positions are absolute (i = query_first + t), so decoding step t alone (query t, keys 0..t)
// gets row t of the whole sequence's bias, and cached decoding equals uncached.
// Build the tool with it, and train a Transformer that uses it:
//   make seqgrad EXTRA=examples/08_extending/coursework/alibi.cpp
//   build/seqgrad train --task reverse --arch transformer --positional alibi --out m.safetensors
#include <cmath>
#include <cstdlib>

#include "seqgrad.h"

using namespace seqgrad;

// [docs:alibi]
class ALiBi : public nn::PositionalEncoding {
 public:
  explicit ALiBi(const nn::PositionalOptions& o)
      : nn::PositionalEncoding(o.d_model, o.max_len), num_heads(o.num_heads), max_bias(o.settings.number("alibi_max_bias")) {}
  std::string name() const override { return "ALiBi"; }
  std::string extra_repr() const override { return cat("heads=", num_heads, ", max_bias=", max_bias); }

  // Nothing is added to the embeddings: x (B, T, C) -> x.
  using nn::PositionalEncoding::forward;
  Variable forward(const Variable& x, int64_t offset) override {
    check_positions(x, offset);
    return x;
  }

  // Head h's slope m_h = 2^(-b (h + 1) / NH).
  double slope(int64_t h) const { return std::pow(2.0, -max_bias * static_cast<double>(h + 1) / num_heads); }

  // -m_h |i - j| for queries i = query_first + t and keys j = key_first + s: (NH, T, S).
  Variable attention_bias(const nn::AttentionSite& site, int64_t query_first, int64_t T, int64_t key_first,
                          int64_t S) override {
    check(site.num_heads == num_heads, "ALiBi: built for ", num_heads, " heads, attached to a layer of ",
          site.num_heads);
    Tensor bias = Tensor::empty({num_heads, T, S});
    for (int64_t h = 0; h < num_heads; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t s = 0; s < S; ++s) {
          const double distance = static_cast<double>(std::llabs((query_first + t) - (key_first + s)));
          bias.data()[(h * T + t) * S + s] = static_cast<real>(-slope(h) * distance);
        }
    return Variable(bias);  // a constant: nothing to learn
  }

  int64_t num_heads;
  double max_bias;
};

// The one line that makes "alibi" an encoding, with its own option: --alibi-max-bias on the
// tool's command line, "alibi_max_bias" in a checkpoint's configuration.
SEQGRAD_REGISTER_POSITIONAL(ALiBi, "alibi", "no vector added; -m_h |i - j| on head h's logits (Press et al., 2022)",
                            nn::number_option("alibi_max_bias", 8, 1, 16,
                                              "ALiBi: head h of NH has the slope 2^(-b (h + 1) / NH) for this b"))
// [docs:end]
