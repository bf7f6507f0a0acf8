// tests/examples/test_attention_ocr.cpp - example 11 at a small size: the CNN encoder and the
// attention decoder (nn::ImageToText) learn to read short digit strings, and each correctly
// read digit looks at its own glyph; the scoring helpers the example prints with.
#include "data/images.h"
#include "examples/11_attention_ocr/where_it_looked.h"
#include "nn/decoding/decoding.h"
#include "nn/vision/image_to_text.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "tests/test_util.h"

using namespace seqgrad;

TEST_CASE("looked_at_glyph, digits_of and where_it_looked: the strongest grid column against the glyph's pixels") {
  // A 1 x 4 grid over a 12-pixel-wide image: column j covers pixels [3j, 3j + 3).
  const Tensor w = from_vector({0.1f, 0.7f, 0.1f, 0.1f}, {1, 4});
  CHECK(looked_at_glyph(w, /*left=*/3, 1, 4, 12));   // glyph at [3, 6): column 1
  CHECK(looked_at_glyph(w, /*left=*/5, 1, 4, 12));   // [5, 8) still overlaps [3, 6)
  CHECK_FALSE(looked_at_glyph(w, /*left=*/6, 1, 4, 12));
  CHECK(digits_of({3, 12, 5, 0}) == "092?");
  // where_it_looked: image k's (1, steps, S) attention as (steps, S); decoding without
  // need_weights keeps none.
  nn::DecodeResult r;
  r.tokens = {{3}};
  r.cross_attention = {{from_vector({0.25f, 0.75f, 1.0f, 0.0f}, {1, 2, 2})}};
  CHECK(where_it_looked(r, 0).shape() == Shape{2, 2});
  CHECK(where_it_looked(r, 0).to_vector() == std::vector<real>{0.25f, 0.75f, 1.0f, 0.0f});
  r.cross_attention.clear();
  CHECK_THROWS_WITH_AS(where_it_looked(r, 0), "where_it_looked: expected readings decoded with need_weights, got no attention for image 0",
                       std::invalid_argument);
}

TEST_CASE("it learns: example 11's CNN and attention decoder read digit pairs and look at each glyph") {
  manual_seed(11);
  // 8 x 16 pictures of two digits; two stride-2 convolutions make a 2 x 4 grid, one-hot positions.
  const auto images = data::DigitImageOptions().with_size(8, 16).with_digits(2, 2).with_max_left(2).with_noise(real(0.1));
  const auto encoder = nn::CnnEncoderOptions(1, {8, 16}).with_strides({2, 2}).with_one_hot_positions(2, 4);
  nn::ImageToText model(nn::ImageToTextOptions(encoder, 13).with_hidden_size(32).with_attention_size(32));
  nn::Adam opt(model.parameters(), nn::AdamOptions(real(0.01)));
  for (int64_t step = 0; step < 600; ++step) {
    const OcrBatch b = ocr_batch(data::make_digit_images(data::DigitImageOptions(images).with_n(32).with_seed(100 + step)));
    Variable loss = nn::cross_entropy(model.forward(b.images, b.text.tgt_in), b.text.tgt_out,
                                      nn::CrossEntropyOptions().with_ignore_index(0));
    opt.zero_grad();
    loss.backward();
    nn::clip_grad_norm(model.parameters(), 1);
    opt.step();
  }
  const data::DigitImages test = data::make_digit_images(data::DigitImageOptions(images).with_n(200).with_seed(1));
  const nn::DecodeResult r =
      nn::greedy_decode(model, ocr_batch(test).images, {}, nn::DecodeOptions().with_max_len(4).with_need_weights(true));
  std::vector<std::string> texts;
  for (const auto& tokens : r.tokens) texts.push_back(digits_of(tokens));
  const OcrScore s = score_readings(r, texts, test, /*rows=*/2, /*cols=*/4);
  CAPTURE(s.character_accuracy);
  CAPTURE(s.sequence_accuracy);
  CAPTURE(s.on_glyph);
  CAPTURE(s.right);
  CHECK(s.character_accuracy > 0.6);  // chance is 0.1
  CHECK(s.on_glyph > 0.85 * static_cast<double>(s.right));
}
