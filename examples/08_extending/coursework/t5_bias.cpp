// examples/08_extending/coursework/t5_bias.cpp - T5's relative position buckets (Raffel et al.,
// 2020): a positional encoding in one file that learns one number per head for each bucket of
// distances, and adds it to the attention logits.
//
// The distance from query i to key j, r = j - i, falls into one of B buckets (--buckets):
//   bidirectional (the encoder): half the buckets for r > 0, half for r <= 0; n = |r|
//   unidirectional (the decoder, which never sees r > 0): all B for n = max(-r, 0)
// and within a half (B' = B/2 or B), the first B'/2 distances get a bucket each; farther ones
// share log-spaced buckets up to max_distance (--max-distance), beyond which all share the last:
//   bucket(n) = n                                                       n < B'/2
//             = min(B'-1, B'/2 + floor(log(n / (B'/2)) / log(D / (B'/2)) (B' - B'/2)))   otherwise
// Each head h learns a scalar per bucket:
//   logits_h[i, j] = q_i . k_j / sqrt(HS) + w_h[bucket(j - i)]          w: (B, NH), per direction
// Two tables, "bidirectional" (B, NH) and "unidirectional" (B, NH): the encoder's and the
// decoder's self-attention (AttentionSite::causal says which layer asks). Nothing is added to
// the embeddings. The bias is a gather from w (index_select, an autograd op), so w is trained.
// Build the tool with it, and train a Transformer that uses it:
//   make seqgrad EXTRA=examples/08_extending/coursework/t5_bias.cpp
//   build/seqgrad train --task reverse --arch transformer --positional t5 --buckets 16 --out m.safetensors
#include <algorithm>
#include <cmath>

#include "seqgrad.h"

using namespace seqgrad;

class T5RelativeBias : public nn::PositionalEncoding {
 public:
  explicit T5RelativeBias(const nn::PositionalOptions& o)
      : nn::PositionalEncoding(o.d_model, o.max_len), num_heads(o.num_heads), buckets(o.settings.integer("buckets")),
        max_distance(o.settings.integer("max_distance")) {
    check(buckets % 2 == 0, "t5: expected an even number of buckets (half for each direction), got --buckets ", buckets);
    check(max_distance > buckets / 2, "t5: expected --max-distance above the exact buckets (", buckets / 2,
          " for --buckets ", buckets, "), got ", max_distance);
    // T5 starts its tables at N(0, 1/C).
    auto table = [&] {
      Tensor w = Tensor::empty({buckets, num_heads});
      nn::init::normal_(w, 0, 1 / std::sqrt(static_cast<real>(o.d_model)));
      return w;
    };
    bidirectional = register_parameter("bidirectional", table());
    unidirectional = register_parameter("unidirectional", table());
  }
  std::string name() const override { return "T5RelativeBias"; }
  std::string extra_repr() const override {
    return cat("heads=", num_heads, ", buckets=", buckets, ", max_distance=", max_distance);
  }

  using nn::PositionalEncoding::forward;
  Variable forward(const Variable& x, int64_t offset) override {  // nothing added: x (B, T, C) -> x
    check_positions(x, offset);
    return x;
  }

  // The bucket of the relative position r = j - i (above).
  int64_t bucket(int64_t r, bool both_ways) const {
    int64_t first = 0, half = buckets, n = std::max<int64_t>(-r, 0);
    if (both_ways) {
      half = buckets / 2;
      if (r > 0) first = half;  // keys after the query: the second half
      n = r < 0 ? -r : r;
    }
    const int64_t exact = half / 2;
    if (n < exact) return first + n;
    const double far = std::log(static_cast<double>(n) / exact) / std::log(static_cast<double>(max_distance) / exact);
    return first + std::min<int64_t>(half - 1, exact + static_cast<int64_t>(far * static_cast<double>(half - exact)));
  }

  // w_h[bucket(j - i)] for queries i = query_first + t, keys j = key_first + s: (NH, T, S).
  Variable attention_bias(const nn::AttentionSite& site, int64_t query_first, int64_t T, int64_t key_first,
                          int64_t S) override {
    check(site.num_heads == num_heads, "t5: built for ", num_heads, " heads, attached to a layer of ", site.num_heads);
    Tensor index = Tensor::empty({T * S});
    for (int64_t t = 0; t < T; ++t)
      for (int64_t s = 0; s < S; ++s)
        index.data()[t * S + s] = static_cast<real>(bucket((key_first + s) - (query_first + t), !site.causal));
    const Variable& w = site.causal ? unidirectional : bidirectional;          // (B, NH)
    const Variable gathered = reshape(index_select(w, 0, index), {T, S, num_heads});  // (T, S, NH)
    return permute(gathered, {2, 0, 1});                                       // (NH, T, S)
  }

  int64_t num_heads, buckets, max_distance;
  Variable bidirectional, unidirectional;  // (B, NH) each
};

SEQGRAD_REGISTER_POSITIONAL(T5RelativeBias, "t5",
                            "no vector added; a learned scalar per head and bucket of distances on the logits "
                            "(Raffel et al., 2020)",
                            nn::integer_option("buckets", 32, 4, 1024, "t5: buckets of relative distances (even)"),
                            nn::integer_option("max_distance", 128, 2, 1000000,
                                               "t5: distances from this on share the last bucket"))
