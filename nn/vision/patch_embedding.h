// nn/vision/patch_embedding.h - an image cut into patches, each patch one "token" for attention.
//
// An attention decoder reads a sequence of vectors; an image is a grid of pixels. The Vision
// Transformer's bridge: cut the (H, W) image into non-overlapping p x p patches, flatten each
// into p*p numbers, and project every patch with the same Linear to C features. The result is
// a (H/p) x (W/p) grid of C-vectors, flattened row by row into a sequence of S = H W / p^2.
// That is exactly a convolution with kernel size p and stride p (no overlap, no padding): one
// output position per patch, the same weights at every position. What this is not: a general
// convolution (overlapping windows, padding, several input channels). Add the grid positions
// with SinusoidalPositionalEncoding2d (nn/transformer/positional.h). Read next: cnn_encoder.h (overlapping windows).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "nn/core/linear.h"
#include "nn/core/module.h"
#include "tensor/check.h"

namespace seqgrad::nn {

// x (B, H, W) -> (B, S, p*p), S = (H/p)(W/p): patch s = i (W/p) + j holds the pixels
// x[b, i p + u, j p + v] at feature u p + v (row by row inside the patch). H and W must be
// multiples of p. Composed of reshape and permute, so gradients flow back to the pixels.
Variable patchify(const Variable& x, int64_t patch_size);

// weight (C, p*p), bias (C), in a child "proj" (timm's PatchEmbed uses the same name for its
// Conv2d, whose weight (C, 1, p, p) is this one reshaped).
//   y[b, i (W/p) + j, :] = proj( patch (i, j) of image b )
//                        = sum_{u,v} W[:, u p + v] x[b, i p + u, j p + v] + bias     (a strided conv)
class PatchEmbedding : public Module {
 public:
  PatchEmbedding(int64_t patch_size, int64_t embed_dim);
  std::string name() const override { return "PatchEmbedding"; }
  std::string extra_repr() const override { return cat("patch_size=", patch_size, ", embed_dim=", embed_dim); }
  // x (B, H, W) -> (B, S, C), S = (H/p)(W/p)
  Variable forward(const Variable& x) override;

  int64_t patch_size, embed_dim;  // p, C
  std::shared_ptr<Linear> proj;   // p*p -> C
};

}  // namespace seqgrad::nn
