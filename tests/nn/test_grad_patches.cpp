// tests/nn/test_grad_patches.cpp - gradcheck through the pieces that let attention read an
// image: patchify (reshape + permute), PatchEmbedding (input and parameters) and the 2-D
// positional encoding. Compiled in float32 and float64, like every test_grad_*.cpp.
#include "nn/vision/patch_embedding.h"
#include "nn/transformer/positional.h"
#include "tests/test_util.h"

using namespace seqgrad;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("patch grad float64");
#else
TEST_SUITE_BEGIN("patch grad float32");
#endif

TEST_CASE("grad through patchify and PatchEmbedding (pixels, weight, bias)") {
  manual_seed(1);
  CHECK_GRAD([](const Vars& v) { return nn::patchify(v[0], 2); }, {randn({2, 4, 6})});
  nn::PatchEmbedding embed(/*patch_size=*/3, /*embed_dim=*/4);
  CHECK_GRAD([&embed](const Vars& v) {
    embed.proj->weight = v[1];
    embed.proj->bias = v[2];
    return embed.forward(v[0]);
  }, {randn({2, 3, 6}), embed.proj->weight.value(), embed.proj->bias.value()});
}

TEST_CASE("grad through the 2-D positional encoding (the input; the table is a constant)") {
  nn::SinusoidalPositionalEncoding2d pe(/*d_model=*/4, /*height=*/2, /*width=*/3);
  // Squared, so the gradient depends on the table that was added.
  CHECK_GRAD([&pe](const Vars& v) { return pe.forward(v[0]) * pe.forward(v[0]); }, {randn({2, 6, 4})});
}

TEST_SUITE_END();
