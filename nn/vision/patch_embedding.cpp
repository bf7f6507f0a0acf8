// nn/vision/patch_embedding.cpp - patchify by reshape and permute, then one Linear.
#include "nn/vision/patch_embedding.h"

#include "tensor/check.h"

namespace seqgrad::nn {

// [docs:patchify]
Variable patchify(const Variable& x, int64_t p) {
  check(p > 0, "patchify: expected a positive patch size, got ", p);
  check(x.dim() == 3, "patchify: expected images of shape (B, H, W), got ", x.shape());
  const int64_t B = x.size(0), H = x.size(1), W = x.size(2);
  check(H % p == 0 && W % p == 0, "patchify: expected H and W to be multiples of the patch size ", p, ", got ",
        x.shape());
  // Row index h = i p + u splits into (i, u), column w = j p + v into (j, v): a free reshape.
  Variable grid = reshape(x, {B, H / p, p, W / p, p});  // (B, i, u, j, v)
  // Bring the two patch indices together, then the two pixel indices inside the patch.
  grid = permute(grid, {0, 1, 3, 2, 4});             // (B, i, j, u, v)
  return reshape(grid, {B, (H / p) * (W / p), p * p});  // (B, S, p*p)
}
// [docs:end]

PatchEmbedding::PatchEmbedding(int64_t p, int64_t c) : patch_size(p), embed_dim(c) {
  check(p > 0 && c > 0, "PatchEmbedding: expected a positive patch_size and embed_dim, got ", p, " and ", c);
  proj = register_module("proj", std::make_shared<Linear>(p * p, c));
}

// [docs:patch_forward]
Variable PatchEmbedding::forward(const Variable& x) {
  check(x.dim() == 3, "PatchEmbedding: expected images of shape (B, H, W), got ", x.shape());
  // One Linear applied to every patch = a convolution whose stride equals its kernel size.
  return proj->forward(patchify(x, patch_size));  // (B, S, p*p) -> (B, S, C)
}
// [docs:end]

}  // namespace seqgrad::nn
