// examples/14_captioning - show, attend and tell: captions for pictures of coloured shapes.
//
// New since 11: the decoder writes words, not characters, and what it must say depends on how
// the objects stand to each other ("a red circle left of a blue square"). Each picture (2-3
// shapes on a 3 x 3 board, data/scenes.h) goes through the same kind of CNN as example 11
// (nn::CnnEncoder: a 6 x 6 grid of features with one-hot row and column codes), and the same
// attention LSTM decoder (nn::ImageToText) writes the caption one word per step. We score the
// captions of held-out pictures, written greedily and with beam search (K = 4) through
// nn::decode, with BLEU-4 and exact match, check that each colour and shape word looked at its
// object, and draw the attention of each word over the picture (SVG).
// --no-attention gives the decoder the mean of the grid at every step instead: the baseline.
// With --seeds 1,2,3 the model trains once per seed (its initial weights; the pictures stay the
// same), two at a time, and the table shows mean and range.
//   build/examples/14_captioning [--steps N] [--warmup N] [--seeds S,S,...] [--no-attention] [--quick] [--out DIR]
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <mutex>

#include "data/batch.h"
#include "data/metrics.h"
#include "data/scenes.h"
#include "data/tokenizer.h"
#include "examples/common/args.h"
#include "examples/common/seeds.h"
#include "nn/decoding/decoding.h"
#include "nn/vision/image_to_text.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "nn/optim/schedule.h"
#include "seqgrad.h"
#include "viz/image_attention.h"

using namespace seqgrad;

// ===============================================================================================
// Config

constexpr int64_t kBeam = 4;  // the beam search compared with greedy decoding

struct Config {
  int64_t steps = 4000, batch = 16, test_scenes = 500;
  int64_t warmup = 100;  // steps of the learning rate's linear ramp, before its cosine decay
  bool attention = true;
  real lr = real(0.01);
  std::vector<int64_t> seeds{14};  // one model per seed (its initial weights)
  std::string out_dir = "build/out";
};

Config parse(int argc, char** argv) {
  const cli::Args a("14_captioning",
                    "14_captioning [--steps N] [--warmup N] [--seeds S,S,...] [--no-attention] [--quick] [--out DIR]",
                    {{"steps", "4000", "training steps"},
                     {"warmup", "100", "steps over which the learning rate rises to 0.01 before its cosine decay; 0: none"},
                     {"seeds", "14", "seeds of the initial weights, comma-separated; two or more: mean and range"},
                     {"no-attention", "false", "the decoder gets the mean of the CNN's grid at every step", true},
                     {"quick", "false", "2400 steps, 200 test scenes", true},
                     {"out", "build/out", "folder for the SVGs"}},
                    argc, argv);
  Config c;
  c.steps = a.on("quick") && !a.given("steps") ? 2400 : a.integer("steps", 1, 1000000);
  if (a.on("quick")) c.test_scenes = 200;
  c.warmup = a.integer("warmup", 0, 1000000);
  c.seeds = a.integers("seeds", 0, 4294967295);
  c.attention = !a.on("no-attention");
  c.out_dir = a.text("out");
  return c;
}

// ===============================================================================================
// Data: pictures (B, 3, 24, 24) and their captions as teacher-forcing pairs

struct Batch {
  Tensor images;
  data::TeacherForcing words;  // tgt_in <bos> y, tgt_out y <eos> (B, T)
};

Batch make_batch(const data::Scenes& s, const data::Vocab& vocab) {
  std::vector<std::vector<int64_t>> ids;
  for (const data::Tokens& caption : s.captions) ids.push_back(vocab.encode(caption));
  return {s.images, data::teacher_forcing(ids)};
}

// Did a word that names an object ("red", "circle") look at that object? The grid cell with the
// most weight must overlap the object's box (grid cell = a 4 x 4 block of pixels here).
bool looked_at_object(const Tensor& weights, const data::SceneShape& s, int64_t cols, int64_t cell_px, int64_t box) {
  const int64_t best = static_cast<int64_t>(argmax(weights, 0).item()), r = best / cols, c = best % cols;
  return r * cell_px < s.top + box && s.top < (r + 1) * cell_px && c * cell_px < s.left + box && s.left < (c + 1) * cell_px;
}

// Where caption k's words looked: (steps, rows * cols), one layer and one head.
Tensor looked(const nn::DecodeResult& r, int64_t k) {
  const Tensor& w = r.cross_attention[k][0];  // (1, steps, S)
  return w.reshape({w.size(1), w.size(2)});
}

// One model, trained from one seed, and how it captioned the test scenes.
struct Captioner {
  struct Score {
    double bleu = 0, exact = 0;
    int64_t named = 0, on_object = 0;  // correct colour and shape words, and those that looked at their object
  };
  int64_t seed = 0;
  std::unique_ptr<nn::ImageToText> model;
  nn::DecodeResult beam;  // with need_weights: where each word looked
  std::vector<data::Tokens> beam_captions;
  Score greedy_score, beam_score;
  int64_t changed = 0;  // scenes beam search captions otherwise than greedy decoding
};

// ===============================================================================================
// Training: cross-entropy of each next word under teacher forcing, Adam, the learning rate ramped
// up over c.warmup steps and then decayed along a half cosine (nn::WarmupCosineLR)

void train(Captioner& m, const Config& c, const data::Vocab& vocab, std::mutex& print) {
  nn::Adam opt(m.model->parameters(), nn::AdamOptions(c.lr));
  nn::WarmupCosineLR schedule(opt, c.warmup, c.steps);
  const auto loss_options = nn::CrossEntropyOptions().with_ignore_index(data::Vocab::kPad);
  for (int64_t step = 1; step <= c.steps; ++step) {
    // Training scenes are drawn fresh for every batch, the same ones for every seed.
    const data::Scenes s = data::make_scenes(data::SceneOptions().with_n(c.batch).with_seed(1000 + static_cast<uint64_t>(step)));
    const Batch b = make_batch(s, vocab);
    Variable loss = nn::cross_entropy(m.model->forward(b.images, b.words.tgt_in), b.words.tgt_out, loss_options);
    opt.zero_grad();
    loss.backward();
    nn::clip_grad_norm(m.model->parameters(), 1);
    opt.step();
    schedule.step();
    examples::print_progress(print, m.seed, step, c.steps, loss.item());
  }
}

// ===============================================================================================
// Evaluation on held-out scenes, captioned greedily and with beam search (K = 4, nn/decoding/decoding.h):
// BLEU-4, exact match, and where the object words looked

void evaluate(Captioner& m, const data::Scenes& test, const data::Vocab& vocab, int64_t rows, int64_t cols) {
  const int64_t side = test.images.size(2), n = test.images.size(0);
  auto captions_of = [&](const nn::DecodeResult& r) {
    std::vector<data::Tokens> captions;
    for (const auto& tokens : r.tokens) captions.push_back(vocab.decode(tokens));
    return captions;
  };
  auto score = [&](const nn::DecodeResult& r, const std::vector<data::Tokens>& captions) {
    Captioner::Score s{data::bleu(captions, test.captions), data::exact_match(captions, test.captions), 0, 0};
    for (int64_t k = 0; k < n; ++k) {
      // Object words stand at fixed places: "a COLOUR SHAPE ..." for each object in caption order.
      const std::vector<int64_t> at = data::object_word_positions(test.captions[k]);
      const Tensor weights = looked(r, k);
      for (size_t i = 0; i < at.size(); ++i)
        for (int64_t w : {at[i] + 1, at[i] + 2}) {
          if (w >= static_cast<int64_t>(captions[k].size()) || captions[k][w] != test.captions[k][w]) continue;
          ++s.named;
          s.on_object += looked_at_object(slice(weights, 0, w, w + 1).reshape({rows * cols}), test.shapes[k][i], cols,
                                          side / cols, side / 3 - 2);
        }
    }
    return s;
  };
  const auto decoding = nn::DecodeOptions().with_max_len(16).with_need_weights(true);
  const nn::DecodeResult greedy = nn::decode(*m.model, test.images, {}, decoding);
  m.beam = nn::decode(*m.model, test.images, {}, nn::DecodeOptions(decoding).with_beam_size(kBeam));
  const std::vector<data::Tokens> greedy_captions = captions_of(greedy);
  m.beam_captions = captions_of(m.beam);
  m.greedy_score = score(greedy, greedy_captions);
  m.beam_score = score(m.beam, m.beam_captions);
  for (int64_t k = 0; k < n; ++k) m.changed += m.beam_captions[k] != greedy_captions[k];
}

int main(int argc, char** argv) {
  try {
    const Config c = parse(argc, argv);
    // ---------------------------------------------------------------------------------------------
    // Data: training scenes are drawn fresh for every batch; the test scenes use another seed
    const data::Scenes test = data::make_scenes(data::SceneOptions().with_n(c.test_scenes).with_seed(2));
    const data::Vocab vocab = data::scene_vocab();
    const int64_t side = test.images.size(2);
    std::cout << "pictures 3 x " << side << " x " << side << ", captions of " << vocab.size() << " words (specials included)\n"
              << "  e.g. \"" << data::join(test.captions[0], " ") << "\"\n";

    // ---------------------------------------------------------------------------------------------
    // Models, one per seed: 24 x 24 -> conv 3x3 (16) -> conv 3x3 stride 2 (32) -> conv 3x3 stride 2
    // (32): a 6 x 6 grid of 32 features, + 6 + 6 one-hot row and column codes; the attention LSTM
    // decoder on top.
    auto encoder = nn::CnnEncoderOptions(/*in_channels=*/3, {16, 32, 32}).with_strides({1, 2, 2});
    const auto grid = encoder.grid_size(side, side);
    const int64_t rows = grid.first, cols = grid.second;  // (plain variables: a lambda below reads them)
    encoder.with_one_hot_positions(rows, cols);
    std::vector<Captioner> models(c.seeds.size());
    for (size_t i = 0; i < c.seeds.size(); ++i) {
      manual_seed(static_cast<uint64_t>(c.seeds[i]));
      models[i].seed = c.seeds[i];
      models[i].model = std::make_unique<nn::ImageToText>(nn::ImageToTextOptions(encoder, vocab.size()).with_attention(c.attention));
    }
    std::cout << "grid " << rows << " x " << cols << " of " << models[0].model->encoder->memory_size() << " features; "
              << (c.attention ? "attention" : "no attention (mean of the grid)") << "; " << models[0].model->num_parameters()
              << " parameters; " << c.steps << " steps of " << c.batch << " pictures, learning rate " << c.lr << " (warm-up "
              << c.warmup << " steps, then cosine)\n";

    // ---------------------------------------------------------------------------------------------
    // Training and evaluation, two models at a time
    std::mutex print;
    examples::two_at_a_time(models.size(), [&](size_t i) {
      train(models[i], c, vocab, print);
      evaluate(models[i], test, vocab, rows, cols);
    });

    // ---------------------------------------------------------------------------------------------
    // Report: one row per decoding (over several seeds: mean and range), then the first model's captions
    using Table = examples::SeedTable;
    Table table("decoding", {{"BLEU-4", 1}, {"exact match", 3}, {"on their object", 2}});
    std::vector<double> changed;
    for (const Captioner& m : models) {
      for (const auto& [label, s] : {std::make_pair("greedy", m.greedy_score), std::make_pair("beam search, K = 4", m.beam_score)})
        table.add(label, {s.bleu, s.exact,  // (without attention every step's weights are the uniform 1/S)
                          c.attention ? static_cast<double>(s.on_object) / static_cast<double>(std::max<int64_t>(1, s.named))
                                      : Table::kNone});
      changed.push_back(static_cast<double>(m.changed));
    }
    std::cout << "\n" << std::fixed;
    for (const Captioner& m : models)  // each seed's own figures, when the table shows their mean
      if (models.size() > 1)
        std::cout << "seed " << m.seed << ": greedy BLEU-4 " << std::setprecision(1) << m.greedy_score.bleu
                  << ", exact match " << std::setprecision(3) << m.greedy_score.exact << "\n";
    std::cout << "held-out scenes: " << c.test_scenes << examples::over_seeds(c.seeds) << "\n" << table.to_string()
              << "(on their object: the share of correct colour and shape words whose strongest grid cell is on their object)\n"
              << "beam search captions " << data::mean_range(changed, 0) << " of " << c.test_scenes
              << " scenes otherwise than greedy decoding\n";
    const Captioner& first = models[0];
    std::cout << (models.size() > 1 ? cat("seed ", first.seed, ", beam search:\n") : "");
    for (int64_t k = 0; k < 4; ++k)
      std::cout << "  scene " << k << ": " << data::join(first.beam_captions[k], " ") << "\n           truth: "
                << data::join(test.captions[k], " ") << "\n";

    // ---------------------------------------------------------------------------------------------
    // Where each word of beam search's caption looked, for the first three scenes
    std::filesystem::create_directories(c.out_dir);
    for (int64_t k = 0; k < 3; ++k) {
      const Tensor weights = looked(first.beam, k);
      std::vector<std::string> labels = first.beam_captions[k];
      labels.resize(static_cast<size_t>(weights.size(0)), "<eos>");
      const std::string path = c.out_dir + "/caption_attention_" + std::to_string(k) + ".svg";
      viz::ImageAttention(slice(test.images, 0, k, k + 1).reshape({3, side, side}), labels,
                          weights.reshape({-1, rows, cols}))
          .set_title(data::join(first.beam_captions[k], " "))
          .set_columns(4)
          .save(path);
      std::cout << "wrote " << path << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
