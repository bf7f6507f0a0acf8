// examples/11_attention_ocr - reading a digit string off an image: attention over a CNN's grid.
//
// New since 05: the source is a picture, not a sentence. Each 8 x 40 image (a string of 3-6
// digits in a 3 x 5 pixel font, with random gaps, ink and noise; data/images.h) goes through a
// small convolutional network (nn::CnnEncoder: three 3 x 3 convolutions, two with stride 2)
// into a 2 x 10 grid of feature vectors, and one-hot codes of each cell's row and column are
// concatenated to them. An LSTM decoder writes the string one character per step, looking over
// the 20 cells with the additive score, as attention OCR (Wojna et al., 2017) does
// (nn::ImageToText). --no-attention gives the decoder the mean of the grid instead (the
// encoder-decoder without attention); --position swaps the one-hot codes for the 2-D
// sinusoidal encoding, or drops them. The model reads through nn::decode, like every decoder
// here: we print sequence and character accuracy on held-out images, read greedily and with
// beam search (K = 4), check that each character looked where it was drawn, and draw where
// each character looked over the image (SVG).
//   build/examples/11_attention_ocr [--steps N] [--no-attention] [--position onehot|concat|add|none]
//                                   [--anywhere] [--quick] [--out DIR]
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "data/batch.h"
#include "data/images.h"
#include "examples/11_attention_ocr/where_it_looked.h"
#include "examples/common/args.h"
#include "nn/decoding/decoding.h"
#include "nn/vision/image_to_text.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "nn/optim/schedule.h"
#include "seqgrad.h"
#include "viz/progress.h"

using namespace seqgrad;

// ===============================================================================================
// Config

struct Config {
  int64_t steps = 3000, batch = 32, test_images = 500;
  int64_t height = 8, width = 40;
  bool attention = true;  // --no-attention: the decoder sees the mean of the grid only
  nn::GridPosition position = nn::GridPosition::OneHot;
  int64_t max_left = 4;   // the text starts in the first 5 pixel columns; --anywhere: wherever it fits
  real lr = real(0.01);
  std::string out_dir = "build/out";
};

Config parse(int argc, char** argv) {
  const cli::Args a("11_attention_ocr",
                    "11_attention_ocr [--steps N] [--no-attention] [--position onehot|concat|add|none] [--anywhere] [--quick] [--out DIR]",
                    {{"steps", "3000", "training steps"},
                     {"no-attention", "false", "the decoder gets the mean of the CNN's grid at every step", true},
                     {"position", "onehot", "the cells' positions: onehot, concat or add (sinusoidal), or none"},
                     {"anywhere", "false", "the text may start anywhere it fits, not only in the first 5 columns", true},
                     {"quick", "false", "300 steps, 200 test images", true},
                     {"out", "build/out", "folder for the SVG"}},
                    argc, argv);
  Config c;
  c.steps = a.on("quick") && !a.given("steps") ? 300 : a.integer("steps", 1, 1000000);
  if (a.on("quick")) c.test_images = 200;
  if (a.on("anywhere")) c.max_left = -1;
  c.attention = !a.on("no-attention");
  const std::string p = a.choice("position", {"onehot", "concat", "add", "none"});
  c.position = p == "onehot"   ? nn::GridPosition::OneHot
               : p == "concat" ? nn::GridPosition::Concat
               : p == "add"    ? nn::GridPosition::Add
                               : nn::GridPosition::None;
  c.out_dir = a.text("out");
  return c;
}

// Output tokens: <pad> 0, <bos> 1, <eos> 2, digit d is 3 + d; batches: ocr_batch (where_it_looked.h).
constexpr int64_t kPad = 0, kVocab = 13;
constexpr int64_t kBeam = 4;  // the beam search compared with greedy decoding

// ===============================================================================================
// The model: 8 x 40 -> conv 3x3 (16) -> conv 3x3 stride 2 (32) -> conv 3x3 stride 2 (32):
// a 2 x 10 grid of 32 features, + 2 + 10 one-hot position features, read by the decoder.

nn::ImageToTextOptions ocr_model(const Config& c) {
  auto encoder = nn::CnnEncoderOptions(/*in_channels=*/1, {16, 32, 32}).with_strides({1, 2, 2}).with_position(c.position);
  const auto [rows, cols] = encoder.grid_size(c.height, c.width);
  if (c.position == nn::GridPosition::OneHot) encoder.with_one_hot_positions(rows, cols);
  return nn::ImageToTextOptions(encoder, kVocab).with_attention(c.attention);
}

int main(int argc, char** argv) {
  try {
    const Config c = parse(argc, argv);
    // ---------------------------------------------------------------------------------------------
    // Data: training images are drawn fresh for every batch; the test images use another seed
    const auto images = data::DigitImageOptions().with_size(c.height, c.width).with_max_left(c.max_left);
    const data::DigitImages test = data::make_digit_images(data::DigitImageOptions(images).with_n(c.test_images).with_seed(2));

    // ---------------------------------------------------------------------------------------------
    // Model
    manual_seed(11);
    nn::ImageToText model(ocr_model(c));
    const auto [rows, cols] = model.encoder->options.grid_size(c.height, c.width);
    std::cout << "images " << c.height << " x " << c.width << " -> a " << rows << " x " << cols << " grid of "
              << model.encoder->memory_size() << " features; " << (c.attention ? "attention" : "no attention (mean of the grid)")
              << "\nmodel with " << model.num_parameters() << " parameters\n";

    // ---------------------------------------------------------------------------------------------
    // Training: cross-entropy of each next character under teacher forcing
    nn::Adam opt(model.parameters(), nn::AdamOptions(c.lr));
    nn::CosineAnnealingLR schedule(opt, c.steps);
    const auto loss_options = nn::CrossEntropyOptions().with_ignore_index(kPad);
    {
      viz::ProgressBar bar(c.steps, "train", std::cout, viz::ProgressOptions().with_mode(viz::ProgressMode::Log));
      for (int64_t step = 1; step <= c.steps; ++step) {
        const data::DigitImages d =
            data::make_digit_images(data::DigitImageOptions(images).with_n(c.batch).with_seed(1000 + static_cast<uint64_t>(step)));
        const OcrBatch b = ocr_batch(d);
        Variable loss = nn::cross_entropy(model.forward(b.images, b.text.tgt_in), b.text.tgt_out, loss_options);
        opt.zero_grad();
        loss.backward();
        nn::clip_grad_norm(model.parameters(), 1);
        opt.step();
        schedule.step();
        bar.update(step, {{"loss", loss.item()}});
      }
    }

    // ---------------------------------------------------------------------------------------------
    // Evaluation on held-out images: greedy decoding, then beam search with K = 4 (nn/decoding/decoding.h)
    const Tensor test_images = ocr_batch(test).images;
    const auto decoding = nn::DecodeOptions().with_max_len(8).with_need_weights(true);
    const nn::DecodeResult greedy = nn::decode(model, test_images, {}, decoding);
    const nn::DecodeResult beam = nn::decode(model, test_images, {}, nn::DecodeOptions(decoding).with_beam_size(kBeam));
    std::vector<std::string> greedy_texts, beam_texts;
    for (const auto& tokens : greedy.tokens) greedy_texts.push_back(digits_of(tokens));
    for (const auto& tokens : beam.tokens) beam_texts.push_back(digits_of(tokens));
    auto report = [&](const std::string& label, const nn::DecodeResult& readings, const std::vector<std::string>& texts) {
      const OcrScore s = score_readings(readings, texts, test, rows, cols);
      std::cout << label << "\n  sequence accuracy (the whole string right): " << s.sequence_accuracy
                << "\n  character accuracy (position by position): " << s.character_accuracy << "\n";
      if (c.attention)  // (without attention every step's weights are the uniform 1/S)
        std::cout << "  correct characters whose strongest attention column overlaps their glyph: " << s.on_glyph
                  << " / " << s.right << "\n";
    };
    std::cout << "\nheld-out images: " << c.test_images << std::fixed << std::setprecision(3) << "\n";
    report("greedy decoding", greedy, greedy_texts);
    report(cat("beam search, K = ", kBeam), beam, beam_texts);
    int64_t changed = 0;  // images beam search reads otherwise than greedy decoding
    for (int64_t k = 0; k < c.test_images; ++k) changed += beam_texts[k] != greedy_texts[k];
    std::cout << "beam search reads " << changed << " of " << c.test_images << " images otherwise than greedy decoding\n";
    for (int64_t k = 0; k < 5; ++k)
      std::cout << "  image " << k << ": greedy " << std::setw(6) << greedy_texts[k] << "   beam " << std::setw(6)
                << beam_texts[k] << "   truth " << test.texts[k] << "\n";

    // ---------------------------------------------------------------------------------------------
    // Where it looked, for the first held-out image beam search reads correctly
    int64_t shown = 0;
    while (shown + 1 < c.test_images && beam_texts[shown] != test.texts[shown]) ++shown;
    std::filesystem::create_directories(c.out_dir);
    const std::string path = c.out_dir + "/ocr_attention.svg";
    draw_attention(slice(test.images, 0, shown, shown + 1).reshape({c.height, c.width}), beam_texts[shown],
                   where_it_looked(beam, shown).reshape({-1, rows, cols}), path);
    std::cout << "wrote " << path << " (image " << shown << ", \"" << test.texts[shown] << "\")\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
