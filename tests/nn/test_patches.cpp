// tests/nn/test_patches.cpp - attention over an image: the 2-D sinusoidal encoding, the patch
// embedding (a strided convolution), and a tiny reader that learns two digits off a bitmap.
#include <cmath>

#include "data/images.h"
#include "nn/transformer/multihead_attention.h"
#include "nn/vision/patch_embedding.h"
#include "nn/transformer/positional.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

// ================================================================================================
// The 2-D positional encoding

TEST_CASE("2-D sinusoidal encoding: half the features are PE(row), half PE(column)") {
  const int64_t H = 3, W = 5, C = 8;
  const Tensor pe = nn::sinusoidal_table_2d(H, W, C);
  CHECK(pe.shape() == Shape{H, W, C});
  for (int64_t r = 0; r < H; ++r)
    for (int64_t c = 0; c < W; ++c)
      for (int64_t i = 0; i < C / 4; ++i) {
        // Each half is a 1-D table of width C/2: frequencies 1 / 10000^(2i / (C/2)).
        const double w = 1 / std::pow(10000.0, 2.0 * static_cast<double>(i) / (C / 2.0));
        CHECK(pe.at({r, c, 2 * i}) == doctest::Approx(std::sin(w * r)).epsilon(1e-6));
        CHECK(pe.at({r, c, 2 * i + 1}) == doctest::Approx(std::cos(w * r)).epsilon(1e-6));
        CHECK(pe.at({r, c, C / 2 + 2 * i}) == doctest::Approx(std::sin(w * c)).epsilon(1e-6));
        CHECK(pe.at({r, c, C / 2 + 2 * i + 1}) == doctest::Approx(std::cos(w * c)).epsilon(1e-6));
      }
  // The halves are the 1-D tables: cells of one row share the first half, of one column the second.
  const Tensor rows = nn::sinusoidal_table(H, C / 2), cols = nn::sinusoidal_table(W, C / 2);
  CHECK(allclose(slice(slice(pe, 1, 2, 3), 2, 0, C / 2).reshape({H, C / 2}), rows));
  CHECK(allclose(slice(slice(pe, 0, 1, 2), 2, C / 2, C).reshape({W, C / 2}), cols));
  // PE2(r, c) . PE2(r + dr, c + dc) depends only on the shift (dr, dc), not on (r, c).
  const auto dot = [&](int64_t r0, int64_t c0, int64_t r1, int64_t c1) {
    double s = 0;
    for (int64_t j = 0; j < C; ++j) s += pe.at({r0, c0, j}) * pe.at({r1, c1, j});
    return s;
  };
  CHECK(dot(0, 0, 1, 2) == doctest::Approx(dot(1, 2, 2, 4)).epsilon(1e-5));
  CHECK(dot(0, 1, 2, 1) == doctest::Approx(dot(0, 3, 2, 3)).epsilon(1e-5));
}

TEST_CASE("SinusoidalPositionalEncoding2d adds the table to a grid flattened row by row") {
  nn::SinusoidalPositionalEncoding2d pe(/*d_model=*/4, /*height=*/2, /*width=*/3);
  CHECK(pe.named_buffers().size() == 1);
  CHECK(pe.named_buffers()[0].first == "pe");
  CHECK(pe.parameters().empty());
  CHECK(pe.to_string() == "SinusoidalPositionalEncoding2d(d_model=4, height=2, width=3)");
  const Tensor x = randn({2, 6, 4});
  const Tensor y = pe.forward(Variable(x)).value();
  CHECK(y.shape() == Shape{2, 6, 4});
  // Position s = r * width + c: s = 4 is row 1, column 1.
  const Tensor table = nn::sinusoidal_table_2d(2, 3, 4);
  for (int64_t j = 0; j < 4; ++j) CHECK(y.at({1, 4, j}) == doctest::Approx(x.at({1, 4, j}) + table.at({1, 1, j})));
}

// ================================================================================================
// Patches

TEST_CASE("patchify: patch i * (W/p) + j holds pixels (i p + u, j p + v) at feature u p + v") {
  const Tensor x = arange(2 * 4 * 6).reshape({2, 4, 6});  // B = 2, H = 4, W = 6, p = 2
  const Tensor p = nn::patchify(Variable(x), 2).value();
  CHECK(p.shape() == Shape{2, 6, 4});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t u = 0; u < 2; ++u)
          for (int64_t v = 0; v < 2; ++v) CHECK(p.at({b, i * 3 + j, u * 2 + v}) == x.at({b, i * 2 + u, j * 2 + v}));
}

TEST_CASE("PatchEmbedding is a convolution whose stride equals its kernel size") {
  manual_seed(3);
  const int64_t p = 3, C = 5, B = 2, H = 6, W = 9;
  nn::PatchEmbedding embed(p, C);
  CHECK(embed.to_string() ==
        "PatchEmbedding(patch_size=3, embed_dim=5,\n  (proj): Linear(in_features=9, out_features=5, bias=true)\n)");
  const std::vector<std::string> expected{"proj.weight", "proj.bias"};
  std::vector<std::string> got;
  for (const auto& [name, v] : embed.named_parameters()) got.push_back(name);
  CHECK(got == expected);
  const Tensor x = randn({B, H, W});
  const Tensor y = embed.forward(Variable(x)).value();
  REQUIRE(y.shape() == Shape{B, (H / p) * (W / p), C});
  // The convolution by its definition: out[b, c, i, j] = bias[c] + sum_{u,v} w[c, u, v] x[b, i p + u, j p + v]
  const Tensor w = embed.proj->weight.value(), bias = embed.proj->bias.value();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < H / p; ++i)
      for (int64_t j = 0; j < W / p; ++j)
        for (int64_t c = 0; c < C; ++c) {
          double conv = bias.at({c});
          for (int64_t u = 0; u < p; ++u)
            for (int64_t v = 0; v < p; ++v) conv += w.at({c, u * p + v}) * x.at({b, i * p + u, j * p + v});
          CHECK(y.at({b, i * (W / p) + j, c}) == doctest::Approx(conv).epsilon(1e-5));
        }
}

TEST_CASE("patch and 2-D position errors say what was expected and what was found") {
  CHECK_THROWS_WITH_AS(nn::patchify(Variable(zeros({2, 6, 7})), 3),
                       "patchify: expected H and W to be multiples of the patch size 3, got [2, 6, 7]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::patchify(Variable(zeros({6, 6})), 3), "patchify: expected images of shape (B, H, W), got [6, 6]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::patchify(Variable(zeros({1, 6, 6})), 0), "patchify: expected a positive patch size, got 0",
                       std::invalid_argument);
  nn::PatchEmbedding embed(2, 4);
  CHECK_THROWS_WITH_AS(embed.forward(Variable(zeros({1, 3, 4, 4}))),
                       "PatchEmbedding: expected images of shape (B, H, W), got [1, 3, 4, 4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::PatchEmbedding(0, 4), "PatchEmbedding: expected a positive patch_size and embed_dim, got 0 and 4",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::sinusoidal_table_2d(2, 3, 5),
                       "sinusoidal_table_2d: expected an even number of features C >= 2 (half for the row, half for the "
                       "column), got 5",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::sinusoidal_table_2d(0, 3, 4),
                       "sinusoidal_table_2d: expected a positive height and width, got 0 and 3", std::invalid_argument);
  nn::SinusoidalPositionalEncoding2d pe(4, 2, 3);
  CHECK_THROWS_WITH_AS(pe.forward(Variable(zeros({1, 5, 4}))),
                       "SinusoidalPositionalEncoding2d: expected input of shape (B, 6, 4) (a 2 x 3 grid flattened row by "
                       "row), got [1, 5, 4]",
                       std::invalid_argument);
}

// ================================================================================================
// It learns: two learned queries read a two-digit image, one digit each

namespace {
// Patches + (optionally) 2-D positions -> two learned queries attend over the 2 x 4 grid with
// multi-head attention -> an MLP names each digit. Returns per-digit accuracy on held-out images.
double read_two_digits(bool positions) {
  manual_seed(5);
  const int64_t C = 32, B = 32, steps = 800;
  nn::PatchEmbedding patches(/*patch_size=*/4, C);
  nn::SinusoidalPositionalEncoding2d grid(C, /*height=*/2, /*width=*/4);
  nn::MultiHeadAttention attention(C, /*num_heads=*/4);
  nn::Linear hidden(C, 64), out(64, 10);
  Variable slots(randn({2, C}), /*requires_grad=*/true);  // one query per digit to read
  std::vector<Variable> params{slots};
  for (nn::Module* m : {static_cast<nn::Module*>(&patches), static_cast<nn::Module*>(&attention),
                        static_cast<nn::Module*>(&hidden), static_cast<nn::Module*>(&out)})
    for (const Variable& p : m->parameters()) params.push_back(p);
  nn::Adam opt(params, nn::AdamOptions(real(0.01)));
  const auto images = data::DigitImageOptions().with_size(8, 16).with_digits(2, 2).with_max_left(1);
  const auto logits = [&](const Tensor& x) {
    Variable memory = patches.forward(Variable(x));  // (B, 8, C)
    if (positions) memory = grid.forward(memory);
    const Variable queries = slots + Variable(zeros({x.size(0), 2, C}));  // (B, 2, C)
    return out.forward(relu(hidden.forward(attention.forward(queries, memory, memory).output)));  // (B, 2, 10)
  };
  const auto labels = [](const data::DigitImages& d) {
    Tensor t = Tensor::empty({static_cast<int64_t>(d.texts.size()), 2});
    for (size_t k = 0; k < d.texts.size(); ++k)
      for (int64_t i = 0; i < 2; ++i) t.at({static_cast<int64_t>(k), i}) = static_cast<real>(d.texts[k][i] - '0');
    return t;
  };
  for (int64_t step = 0; step < steps; ++step) {
    const data::DigitImages d = data::make_digit_images(data::DigitImageOptions(images).with_n(B).with_seed(100 + step));
    Variable loss = nn::cross_entropy(logits(d.images), labels(d));
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  NoGradGuard no_grad;
  const data::DigitImages test = data::make_digit_images(data::DigitImageOptions(images).with_n(300).with_seed(1));
  return mean(eq(argmax(logits(test.images).value(), -1), labels(test))).item();
}
}  // namespace

TEST_CASE("it learns: attention over a patch grid reads two digits, and needs the 2-D positions to") {
  const double with = read_two_digits(true), without = read_two_digits(false);
  CAPTURE(with);
  CAPTURE(without);
  CHECK(with > 0.75);            // chance is 0.1
  CHECK(with - without > 0.15);  // without positions the two queries cannot tell left from right
}
