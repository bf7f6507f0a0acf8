// tests/nn/test_cnn_encoder.cpp - CnnEncoder and ImageToText: names, shapes, the grid
// flattened row by row with its 2-D positions, the printed form, errors, the same numbers on 1
// and 2 threads. (Decoding ImageToText: tests/nn/test_image_to_text.cpp. Their "it learns":
// tests/examples/test_attention_ocr.cpp reads digit strings, tests/data/test_scenes.cpp
// captions scenes.)
#include "nn/vision/cnn_encoder.h"
#include "nn/vision/conv.h"
#include "nn/vision/image_to_text.h"
#include "nn/transformer/positional.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

TEST_CASE("CnnEncoder: PyTorch-style names, the grid size, and memory (B, H' W', D)") {
  manual_seed(1);
  nn::CnnEncoder enc(nn::CnnEncoderOptions(1, {4, 8, 6}).with_strides({1, 2, 2}));
  std::vector<std::string> names;
  for (const auto& [name, p] : enc.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"convs.0.weight", "convs.0.bias", "convs.2.weight", "convs.2.bias",
                                          "convs.4.weight", "convs.4.bias"});
  CHECK(enc.named_parameters()[2].second.shape() == Shape{8, 4, 3, 3});
  CHECK(enc.options.grid_size(12, 40) == std::pair<int64_t, int64_t>{3, 10});
  CHECK(enc.options.grid_size(11, 9) == std::pair<int64_t, int64_t>{3, 3});  // stride 2 with padding 1: ceil(n / 2)
  CHECK(enc.memory_size() == 6 + 32);
  CHECK(enc.to_string() ==
        "CnnEncoder(in_channels=1, channels=(4, 8, 6), strides=(1, 2, 2), position=concat(32),\n"
        "  (convs): Sequential(\n"
        "    (0): Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))\n"
        "    (1): ReLU()\n"
        "    (2): Conv2d(4, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))\n"
        "    (3): ReLU()\n"
        "    (4): Conv2d(8, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))\n"
        "    (5): ReLU()\n"
        "  )\n"
        ")");
  const Variable memory = enc.forward(Variable(randn({2, 1, 12, 40})));
  CHECK(memory.shape() == Shape{2, 30, 38});
  CHECK(enc.forward(Variable(randn({1, 1, 11, 9}))).shape() == Shape{1, 9, 38});  // a new grid, a new table
}

TEST_CASE("CnnEncoder: cell (r, c) is memory row r W' + c, with PE2(r, c) concatenated or added") {
  manual_seed(2);
  const Tensor x = randn({2, 3, 6, 8});
  for (nn::GridPosition position : {nn::GridPosition::None, nn::GridPosition::Add, nn::GridPosition::Concat}) {
    nn::CnnEncoder enc(nn::CnnEncoderOptions(3, {4}).with_strides({2}).with_position(position).with_position_features(6));
    const Tensor map = enc.features(Variable(x)).value();  // (2, 4, 3, 4)
    REQUIRE(map.shape() == Shape{2, 4, 3, 4});
    const Tensor memory = enc.forward(Variable(x)).value();
    const Tensor pe = nn::sinusoidal_table_2d(3, 4, position == nn::GridPosition::Add ? 4 : 6);
    const int64_t D = enc.memory_size();
    CHECK(memory.shape() == Shape{2, 12, D});
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t c = 0; c < 4; ++c) {
          const int64_t s = r * 4 + c;
          for (int64_t k = 0; k < 4; ++k) {
            const real added = position == nn::GridPosition::Add ? pe.at({r, c, k}) : real(0);
            CHECK(memory.at({b, s, k}) == doctest::Approx(map.at({b, k, r, c}) + added));
          }
          if (position == nn::GridPosition::Concat)
            for (int64_t k = 0; k < 6; ++k) CHECK(memory.at({b, s, 4 + k}) == pe.at({r, c, k}));
        }
  }
}

TEST_CASE("CnnEncoder: one-hot codes, a 1 at the cell's row and at H' + its column") {
  manual_seed(5);
  nn::CnnEncoder enc(nn::CnnEncoderOptions(1, {4}).with_strides({2}).with_one_hot_positions(3, 4));
  CHECK(enc.memory_size() == 4 + 3 + 4);
  const Tensor memory = enc.forward(Variable(randn({2, 1, 6, 8}))).value();  // a 3 x 4 grid
  REQUIRE(memory.shape() == Shape{2, 12, 11});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 4; ++c)
        for (int64_t k = 0; k < 7; ++k)
          CHECK(memory.at({b, r * 4 + c, 4 + k}) == (k == r || k == 3 + c ? 1 : 0));
  CHECK(enc.to_string().find("position=one-hot(3 x 4)") != std::string::npos);
  CHECK_THROWS_WITH_AS(enc.forward(Variable(zeros({1, 1, 8, 8}))),
                       "CnnEncoder: one-hot positions were made for a 3 x 4 grid, got 4 x 4", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::CnnEncoder(nn::CnnEncoderOptions(1, {4}).with_one_hot_positions(0, 4)),
                       "CnnEncoder: one-hot positions need the grid's size; expected positive rows and columns, got 0 x 4",
                       std::invalid_argument);
}

TEST_CASE("CnnEncoder equals its convolutions and ReLUs applied by hand") {
  manual_seed(3);
  nn::CnnEncoder enc(nn::CnnEncoderOptions(1, {3, 5}).with_strides({2, 1}).with_position(nn::GridPosition::None));
  auto& c0 = static_cast<nn::Conv2d&>(*(*enc.convs)[0]);
  auto& c1 = static_cast<nn::Conv2d&>(*(*enc.convs)[2]);
  const Variable x(randn({2, 1, 7, 5}));
  Conv2dArgs s2, s1;
  s2.stride_h = s2.stride_w = 2, s2.pad_h = s2.pad_w = 1;
  s1.pad_h = s1.pad_w = 1;
  const Variable map = relu(conv2d(relu(conv2d(x, c0.weight, c0.bias, s2)), c1.weight, c1.bias, s1));  // (2, 5, 4, 3)
  CHECK(allclose(enc.features(x).value(), map.value()));
  CHECK(allclose(enc.forward(x).value(), permute(map, {0, 2, 3, 1}).value().reshape({2, 12, 5})));
}

TEST_CASE("ImageToText: names, shapes, the baseline without attention, and 1 and 2 threads bit for bit") {
  manual_seed(4);
  const auto encoder = nn::CnnEncoderOptions(1, {4, 8}).with_strides({2, 2});
  nn::ImageToText model(nn::ImageToTextOptions(encoder, 7).with_hidden_size(12).with_attention_size(10));
  std::vector<std::string> names;
  for (const auto& [name, p] : model.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"encoder.convs.0.weight", "encoder.convs.0.bias", "encoder.convs.2.weight",
                                          "encoder.convs.2.bias", "embedding.weight", "cell.weight_ih", "cell.weight_hh",
                                          "cell.bias_ih", "cell.bias_hh", "score.v", "score.W.weight",
                                          "score.U.weight", "score.U.bias", "out.weight", "out.bias"});
  CHECK(model.cell->weight_ih.shape() == Shape{48, 16 + 40});  // [E y; u], u of D = 8 + 32
  const Tensor images = randn({3, 1, 8, 12}), tgt_in = full({3, 5}, 1);
  CHECK(model.forward(images, tgt_in).shape() == Shape{3, 5, 7});

  nn::ImageToText baseline(nn::ImageToTextOptions(encoder, 7).with_hidden_size(12).with_attention(false));
  CHECK(baseline.score == nullptr);
  CHECK(baseline.num_parameters() < model.num_parameters());
  CHECK(baseline.to_string().find("attention=none (mean of the memory)") != std::string::npos);
  nn::RNNState state;
  const Variable memory = baseline.encode(images);
  Variable u = mean(memory, 1), w;
  baseline.step(full({3}, 1), state, u, memory, &w);
  CHECK(allclose(w.value(), full({3, 6}, real(1) / 6)));
  CHECK(allclose(u.value(), mean(memory, 1).value()));

  const Tensor probe = randn({3, 5, 7});
  auto run = [&](int threads) {
    testing::ThreadCount count(threads);
    model.zero_grad();
    const Variable logits = model.forward(images, tgt_in);
    sum(logits * Variable(probe)).backward();
    std::vector<real> all = logits.value().to_vector();
    for (const Variable& p : model.parameters())
      for (real v : p.grad().to_vector()) all.push_back(v);
    return all;
  };
  const std::vector<real> one = run(1), two = run(2);
  CHECK(one == two);
}

TEST_CASE("CnnEncoder and ImageToText errors say what was expected and what was found") {
  CHECK_THROWS_WITH_AS(nn::CnnEncoder(nn::CnnEncoderOptions(1, {})),
                       "CnnEncoder: expected at least one convolution, got an empty list of channels", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::CnnEncoder(nn::CnnEncoderOptions(1, {4, 8}).with_strides({2})),
                       "CnnEncoder: expected one stride per convolution (2), got 1", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::CnnEncoder(nn::CnnEncoderOptions(1, {5}).with_position(nn::GridPosition::Add)),
                       "CnnEncoder: adding the 2-D positions needs an even number of channels in the last convolution "
                       "(half for the row, half for the column), got 5",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::CnnEncoder(nn::CnnEncoderOptions(1, {4}).with_position_features(3)),
                       "CnnEncoder: expected an even number of position features >= 2 (half for the row, half for the "
                       "column), got 3",
                       std::invalid_argument);
  nn::CnnEncoder enc(nn::CnnEncoderOptions(1, {4}));
  CHECK_THROWS_WITH_AS(enc.forward(Variable(zeros({2, 8, 8}))),
                       "CnnEncoder: expected images of shape (B, 1, H, W), got [2, 8, 8] (a batch of one-channel images "
                       "(B, H, W) needs unsqueeze(x, 1))",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(enc.forward(Variable(zeros({2, 3, 8, 8}))), "CnnEncoder: expected images of shape (B, 1, H, W), got [2, 3, 8, 8]",
                       std::invalid_argument);
  nn::ImageToText model(nn::ImageToTextOptions(nn::CnnEncoderOptions(1, {4}), 5));
  CHECK_THROWS_WITH_AS(model.forward(zeros({2, 1, 4, 4}), zeros({3, 4})),
                       "ImageToText: expected tgt_in of shape (2, T), one row per image, got [3, 4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::ImageToText(nn::ImageToTextOptions(nn::CnnEncoderOptions(1, {4}), 0)),
                       "ImageToText: expected positive vocab_size, embed_dim, hidden_size and attention_size, got 0, 16, "
                       "64 and 64",
                       std::invalid_argument);
}
