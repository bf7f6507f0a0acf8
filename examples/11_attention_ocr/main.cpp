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
// beam search (K = 4), check that each character looked where it was drawn, count the CNN's
// channels that still fire, and draw where each character looked over the image (SVG). With
// --seeds 1,2,3 the reader trains once per seed (its initial weights; the images stay the
// same), two at a time, and the table shows mean and range.
//   build/examples/11_attention_ocr [--steps N] [--warmup N] [--seeds S,S,...] [--no-attention]
//                                   [--position onehot|concat|add|none] [--anywhere] [--quick] [--out DIR]
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <mutex>

#include "data/batch.h"
#include "data/images.h"
#include "data/metrics.h"
#include "examples/11_attention_ocr/where_it_looked.h"
#include "examples/common/args.h"
#include "examples/common/seeds.h"
#include "nn/decoding/decoding.h"
#include "nn/vision/image_to_text.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "nn/optim/schedule.h"
#include "seqgrad.h"

using namespace seqgrad;

// ===============================================================================================
// Config

struct Config {
  int64_t steps = 6000, batch = 16, test_images = 500;
  int64_t warmup = 100;   // steps of the learning rate's linear ramp, before its cosine decay
  int64_t height = 8, width = 40;
  bool attention = true;  // --no-attention: the decoder sees the mean of the grid only
  nn::GridPosition position = nn::GridPosition::OneHot;
  int64_t max_left = 4;   // the text starts in the first 5 pixel columns; --anywhere: wherever it fits
  real lr = real(0.01);
  std::vector<int64_t> seeds{11};  // one reader per seed (its initial weights)
  std::string out_dir = "build/out";
};

Config parse(int argc, char** argv) {
  const cli::Args a("11_attention_ocr",
                    "11_attention_ocr [--steps N] [--warmup N] [--seeds S,S,...] [--no-attention] "
                    "[--position onehot|concat|add|none] [--anywhere] [--quick] [--out DIR]",
                    {{"steps", "6000", "training steps"},
                     {"warmup", "100", "steps over which the learning rate rises to 0.01 before its cosine decay; 0: none"},
                     {"seeds", "11", "seeds of the initial weights, comma-separated; two or more: mean and range"},
                     {"no-attention", "false", "the decoder gets the mean of the CNN's grid at every step", true},
                     {"position", "onehot", "the cells' positions: onehot, concat or add (sinusoidal), or none"},
                     {"anywhere", "false", "the text may start anywhere it fits, not only in the first 5 columns", true},
                     {"quick", "false", "3000 steps, 200 test images", true},
                     {"out", "build/out", "folder for the SVG"}},
                    argc, argv);
  Config c;
  c.steps = a.on("quick") && !a.given("steps") ? 3000 : a.integer("steps", 1, 1000000);
  if (a.on("quick")) c.test_images = 200;
  c.warmup = a.integer("warmup", 0, 1000000);
  c.seeds = a.integers("seeds", 0, 4294967295);
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

// One reader, trained from one seed, and what it read.
struct Reader {
  int64_t seed = 0;
  std::unique_ptr<nn::ImageToText> model;
  nn::DecodeResult greedy, beam;  // with need_weights: where each character looked
  std::vector<std::string> greedy_texts, beam_texts;
  OcrScore greedy_score, beam_score;
  int64_t changed = 0;  // images beam search reads otherwise than greedy decoding
  int64_t firing = 0;   // channels of the CNN's last convolution above 0 somewhere on the test images
};

// ===============================================================================================
// Training: cross-entropy of each next character under teacher forcing, Adam, the learning rate
// ramped up over c.warmup steps and then decayed along a half cosine (nn::WarmupCosineLR).

void train(Reader& r, const Config& c, const data::DigitImageOptions& images, std::mutex& print) {
  nn::Adam opt(r.model->parameters(), nn::AdamOptions(c.lr));
  nn::WarmupCosineLR schedule(opt, c.warmup, c.steps);
  const auto loss_options = nn::CrossEntropyOptions().with_ignore_index(kPad);
  for (int64_t step = 1; step <= c.steps; ++step) {
    // Training images are drawn fresh for every batch, the same ones for every seed.
    const data::DigitImages d =
        data::make_digit_images(data::DigitImageOptions(images).with_n(c.batch).with_seed(1000 + static_cast<uint64_t>(step)));
    const OcrBatch b = ocr_batch(d);
    Variable loss = nn::cross_entropy(r.model->forward(b.images, b.text.tgt_in), b.text.tgt_out, loss_options);
    opt.zero_grad();
    loss.backward();
    nn::clip_grad_norm(r.model->parameters(), 1);
    opt.step();
    schedule.step();
    examples::print_progress(print, r.seed, step, c.steps, loss.item());
  }
}

// ===============================================================================================
// Evaluation on held-out images: greedy decoding, then beam search with K = 4 (nn/decoding/decoding.h)

void evaluate(Reader& r, const data::DigitImages& test, int64_t rows, int64_t cols) {
  const Tensor images = ocr_batch(test).images;
  const auto decoding = nn::DecodeOptions().with_max_len(8).with_need_weights(true);
  r.greedy = nn::decode(*r.model, images, {}, decoding);
  r.beam = nn::decode(*r.model, images, {}, nn::DecodeOptions(decoding).with_beam_size(kBeam));
  for (const auto& tokens : r.greedy.tokens) r.greedy_texts.push_back(digits_of(tokens));
  for (const auto& tokens : r.beam.tokens) r.beam_texts.push_back(digits_of(tokens));
  r.greedy_score = score_readings(r.greedy, r.greedy_texts, test, rows, cols);
  r.beam_score = score_readings(r.beam, r.beam_texts, test, rows, cols);
  for (size_t k = 0; k < test.texts.size(); ++k) r.changed += r.beam_texts[k] != r.greedy_texts[k];
  // A ReLU channel that is 0 on every image passes no gradient: once all are, the CNN has died.
  NoGradGuard no_grad;
  const Tensor map = r.model->encoder->features(Variable(images)).value();  // (N, C, H', W')
  const int64_t N = map.size(0), C = map.size(1), cells = map.size(2) * map.size(3);
  for (int64_t k = 0; k < C; ++k) {
    bool fires = false;
    for (int64_t n = 0; n < N && !fires; ++n)
      for (int64_t s = 0; s < cells && !fires; ++s) fires = map.data()[(n * C + k) * cells + s] > 0;
    r.firing += fires;
  }
}

int main(int argc, char** argv) {
  try {
    const Config c = parse(argc, argv);
    // ---------------------------------------------------------------------------------------------
    // Data: training images are drawn fresh for every batch; the test images use another seed
    const auto images = data::DigitImageOptions().with_size(c.height, c.width).with_max_left(c.max_left);
    const data::DigitImages test = data::make_digit_images(data::DigitImageOptions(images).with_n(c.test_images).with_seed(2));

    // ---------------------------------------------------------------------------------------------
    // Models: one per seed, built in order (the seed sets the initial weights)
    std::vector<Reader> readers(c.seeds.size());
    for (size_t i = 0; i < c.seeds.size(); ++i) {
      manual_seed(static_cast<uint64_t>(c.seeds[i]));
      readers[i].seed = c.seeds[i];
      readers[i].model = std::make_unique<nn::ImageToText>(ocr_model(c));
    }
    nn::ImageToText& model = *readers[0].model;
    const auto grid = model.encoder->options.grid_size(c.height, c.width);
    const int64_t rows = grid.first, cols = grid.second;  // (plain variables: a lambda below reads them)
    std::cout << "images " << c.height << " x " << c.width << " -> a " << rows << " x " << cols << " grid of "
              << model.encoder->memory_size() << " features; " << (c.attention ? "attention" : "no attention (mean of the grid)")
              << "\nmodel with " << model.num_parameters() << " parameters; " << c.steps << " steps of " << c.batch
              << " images, learning rate " << c.lr << " (warm-up " << c.warmup << " steps, then cosine)\n";

    // ---------------------------------------------------------------------------------------------
    // Training and evaluation, two readers at a time
    std::mutex print;
    examples::two_at_a_time(readers.size(), [&](size_t i) {
      train(readers[i], c, images, print);
      evaluate(readers[i], test, rows, cols);
    });

    // ---------------------------------------------------------------------------------------------
    // Report: one row per decoding (over several seeds: mean and range)
    using Table = examples::SeedTable;
    const double none = Table::kNone;  // (without attention every step's weights are the uniform 1/S)
    Table table("decoding", {{"sequence accuracy", 3}, {"character accuracy", 3}, {"on their glyph", 2}});
    std::vector<double> changed, firing;
    for (const Reader& r : readers) {
      for (const auto& [label, s] : {std::make_pair("greedy", r.greedy_score), std::make_pair("beam search, K = 4", r.beam_score)})
        table.add(label, {s.sequence_accuracy, s.character_accuracy,
                          c.attention ? static_cast<double>(s.on_glyph) / static_cast<double>(std::max<int64_t>(1, s.right)) : none});
      changed.push_back(static_cast<double>(r.changed));
      firing.push_back(static_cast<double>(r.firing));
    }
    std::cout << "\n" << std::fixed << std::setprecision(3);
    for (const Reader& r : readers)  // each seed's own figures, when the table shows their mean
      if (readers.size() > 1)
        std::cout << "seed " << r.seed << ": greedy sequence accuracy " << r.greedy_score.sequence_accuracy
                  << ", character accuracy " << r.greedy_score.character_accuracy << "; CNN channels firing: " << r.firing
                  << "\n";
    std::cout << "held-out images: " << c.test_images << examples::over_seeds(c.seeds) << "\n" << table.to_string()
              << "(on their glyph: the share of correct characters whose strongest attention column overlaps their glyph)\n"
              << "beam search reads " << data::mean_range(changed, 0) << " of " << c.test_images
              << " images otherwise than greedy decoding\n"
              << "channels of the CNN's last layer that fire on some test image: " << data::mean_range(firing, 0) << " of "
              << model.encoder->options.channels.back() << "\n";

    // ---------------------------------------------------------------------------------------------
    // The first reader's first readings, and where it looked, for the first held-out image beam
    // search reads correctly
    const Reader& first = readers[0];
    std::cout << (readers.size() > 1 ? cat("seed ", first.seed, ":\n") : "");
    for (int64_t k = 0; k < 5; ++k)
      std::cout << "  image " << k << ": greedy " << std::setw(6) << first.greedy_texts[k] << "   beam " << std::setw(6)
                << first.beam_texts[k] << "   truth " << test.texts[k] << "\n";
    int64_t shown = 0;
    while (shown + 1 < c.test_images && first.beam_texts[shown] != test.texts[shown]) ++shown;
    std::filesystem::create_directories(c.out_dir);
    const std::string path = c.out_dir + "/ocr_attention.svg";
    draw_attention(slice(test.images, 0, shown, shown + 1).reshape({c.height, c.width}), first.beam_texts[shown],
                   where_it_looked(first.beam, shown).reshape({-1, rows, cols}), path);
    std::cout << "wrote " << path << " (image " << shown << ", \"" << test.texts[shown] << "\")\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
