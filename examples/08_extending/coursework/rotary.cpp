// examples/08_extending/coursework/rotary.cpp - rotary position embeddings (Su et al., 2021): a
// positional encoding in one file that rotates the queries and keys of every head.
//
// The HS features of a head are HS/2 pairs; pair f of a vector at position p is turned by the
// angle p theta_f, with theta_f = base^(-2f / HS) (base 10000 by default, --rotary-base):
//   (x_2f, x_2f+1) -> (x_2f cos(p theta_f) - x_2f+1 sin(p theta_f),
//                      x_2f sin(p theta_f) + x_2f+1 cos(p theta_f))          R(p) x
// Rotations compose, and a rotation is undone by its transpose, so
//   R(i) q . R(j) k = q . R(i)^T R(j) k = q . R(j - i) k
// the logit depends on the positions through j - i alone. This is not a bias: R(j - i) acts
// on q and k themselves, so it goes through the hook's transform (attention_hook.h), applied to
// the queries and keys of self-attention at their absolute positions. Keys are rotated once,
// before a decoder caches them. Nothing is learned and nothing added to the embeddings.
// Build the tool with it, and train a Transformer that uses it:
//   make seqgrad EXTRA=examples/08_extending/coursework/rotary.cpp
//   build/seqgrad train --task reverse --arch transformer --positional rotary --out m.safetensors
#include <cmath>

#include "seqgrad.h"

using namespace seqgrad;

class Rotary : public nn::PositionalEncoding {
 public:
  explicit Rotary(const nn::PositionalOptions& o)
      : nn::PositionalEncoding(o.d_model, o.max_len), head_dim(o.d_model / o.num_heads), base(o.settings.number("rotary_base")) {
    check(o.d_model % o.num_heads == 0 && head_dim % 2 == 0, "rotary: expected an even head size (pairs of features ",
          "are rotated), got --dim ", o.d_model, " / --heads ", o.num_heads);
  }
  std::string name() const override { return "Rotary"; }
  std::string extra_repr() const override { return cat("head_dim=", head_dim, ", base=", base); }

  using nn::PositionalEncoding::forward;
  Variable forward(const Variable& x, int64_t offset) override {  // nothing added: x (B, T, C) -> x
    check_positions(x, offset);
    return x;
  }

  // cos(p theta_f) or sin(p theta_f) for p = first .. first + L - 1: (L, HS/2, 1), computed in
  // double and rounded once.
  Tensor table(int64_t first, int64_t L, bool sine) const {
    const int64_t half = head_dim / 2;
    Tensor out = Tensor::empty({L, half, 1});
    for (int64_t p = 0; p < L; ++p)
      for (int64_t f = 0; f < half; ++f) {
        const double angle = static_cast<double>(first + p) * std::pow(base, -2.0 * f / head_dim);
        out.data()[p * half + f] = static_cast<real>(sine ? std::sin(angle) : std::cos(angle));
      }
    return out;
  }

  // x (B, NH, L, HS) at positions first .. -> R(p) x, pair by pair (B, NH, L, HS).
  Variable transform_heads(const nn::AttentionSite& site, const Variable& x, int64_t first) override {
    check(x.dim() == 4 && x.size(3) == head_dim && site.head_dim == head_dim, "rotary: built for heads of ", head_dim,
          " features, got queries or keys of shape ", x.shape());
    const int64_t B = x.size(0), NH = x.size(1), L = x.size(2);
    const Variable pairs = reshape(x, {B, NH, L, head_dim / 2, 2});  // (B, NH, L, HS/2, 2)
    const Variable even = slice(pairs, 4, 0, 1), odd = slice(pairs, 4, 1, 2);  // (B, NH, L, HS/2, 1) each
    const Variable c(table(first, L, false)), s(table(first, L, true));      // (L, HS/2, 1)
    const Variable turned = concat({even * c - odd * s, even * s + odd * c}, 4);  // (B, NH, L, HS/2, 2)
    return reshape(turned, {B, NH, L, head_dim});
  }

  int64_t head_dim;
  double base;
};

SEQGRAD_REGISTER_POSITIONAL(Rotary, "rotary",
                            "no vector added; each head's q and k rotated pair by pair by position (Su et al., 2021)",
                            nn::number_option("rotary_base", 10000, 2, 1e9,
                                              "rotary: pair f turns by p base^(-2f / head size) at position p"))
