// examples/11_attention_ocr - reading a digit string off an image: attention over a 2-D grid.
//
// New since 05: the source is a picture, not a sentence. Each image (a string of 3-6 digits in
// a 3 x 5 pixel font, shifted at random, with random gaps, ink and noise; data/images.h) is cut
// into 4 x 4 patches, each projected to C features (nn::PatchEmbedding: a convolution whose
// stride equals its kernel), and a 2-D sinusoidal encoding of (row, column) is added
// (nn::SinusoidalPositionalEncoding2d). One Transformer encoder layer lets patches see their
// neighbours. Then a Luong-style LSTM decoder (as in 05) reads the string one character at a
// time, attending over the 3 x 10 grid as if it were a 30-word sentence, with multi-head
// attention: a glyph straddles patches, and separate heads can fetch its left and right halves.
// We print sequence accuracy on held-out images, check that each character looked where it was
// drawn, and draw the attention maps under the image (SVG).
//   build/examples/11_attention_ocr [--steps N] [--anywhere] [--no-pe] [--quick] [--out DIR]
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "data/batch.h"
#include "data/images.h"
#include "examples/11_attention_ocr/where_it_looked.h"
#include "examples/common/args.h"
#include "nn/multihead_attention.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/loss.h"
#include "nn/optim.h"
#include "nn/patch_embedding.h"
#include "nn/positional.h"
#include "nn/lstm.h"
#include "nn/schedule.h"
#include "nn/transformer.h"
#include "seqgrad.h"
#include "viz/progress.h"

using namespace seqgrad;

// ===============================================================================================
// Config

struct Config {
  int64_t steps = 3000, batch = 32, test_images = 500;
  int64_t height = 12, width = 40, patch = 4;  // a 3 x 10 grid of patches
  int64_t dim = 64, heads = 4, embed = 16;  // the decoder's hidden size is dim too: it queries the grid
  bool positions = true;  // --no-pe drops the 2-D positional encoding
  int64_t max_left = 4;   // the text starts in the first 5 pixel columns; --anywhere: wherever it fits
  real lr = real(0.003);
  std::string out_dir = "build/out";
};

Config parse(int argc, char** argv) {
  const cli::Args a("11_attention_ocr", "11_attention_ocr [--steps N] [--anywhere] [--no-pe] [--quick] [--out DIR]",
                    {{"steps", "3000", "training steps"},
                     {"anywhere", "false", "the text may start anywhere it fits, not only in the first 5 columns", true},
                     {"no-pe", "false", "no 2-D positional encoding", true},
                     {"quick", "false", "200 steps, 200 test images", true},
                     {"out", "build/out", "folder for the SVG"}},
                    argc, argv);
  Config c;
  c.steps = a.on("quick") && !a.given("steps") ? 200 : a.integer("steps", 1, 1000000);
  if (a.on("quick")) c.test_images = 200;
  if (a.on("anywhere")) c.max_left = -1;
  c.positions = !a.on("no-pe");
  c.out_dir = a.text("out");
  return c;
}

// Output tokens: <pad> 0, <bos> 1, <eos> 2, digit d is 3 + d.
constexpr int64_t kPad = 0, kBos = 1, kEos = 2, kVocab = 13;

// ===============================================================================================
// Data: images (B, H, W) and the teacher-forcing pair <bos> y -> y <eos>, padded

struct Batch {
  Tensor images, tgt_in, tgt_out;  // (B, H, W), (B, T), (B, T)
};

Batch make_batch(const data::DigitImages& d, int64_t start, int64_t count) {
  std::vector<std::vector<int64_t>> in, out;
  for (int64_t k = start; k < start + count; ++k) {
    in.push_back({kBos});
    for (char ch : d.texts[k]) in.back().push_back(3 + ch - '0');
    out.emplace_back(in.back().begin() + 1, in.back().end());
    out.back().push_back(kEos);
  }
  const int64_t H = d.images.size(1), W = d.images.size(2);
  return {slice(d.images, 0, start, start + count).reshape({count, H, W}), data::pad_sequences(in, kPad),
          data::pad_sequences(out, kPad)};
}

// ===============================================================================================
// The model: patches + 2-D positions -> one encoder layer -> a Luong attention decoder

struct Reading {
  std::string text;
  std::vector<Tensor> weights;  // per output character (<eos> included), (S) over the grid
};

class OcrModel : public nn::Module {
 public:
  explicit OcrModel(const Config& c) : rows_(c.height / c.patch), cols_(c.width / c.patch), positions_(c.positions) {
    patches = register_module("patches", std::make_shared<nn::PatchEmbedding>(c.patch, c.dim));
    position = register_module("position", std::make_shared<nn::SinusoidalPositionalEncoding2d>(c.dim, rows_, cols_));
    const auto layer = nn::TransformerLayerOptions(c.dim, c.heads).with_dim_feedforward(2 * c.dim).with_dropout(0);
    encoder = register_module("encoder", std::make_shared<nn::TransformerEncoderLayer>(layer));
    embedding = register_module("embedding", std::make_shared<nn::Embedding>(kVocab, c.embed));
    cell = register_module("cell", std::make_shared<nn::LSTMCell>(c.embed + c.dim, c.dim));
    attention = register_module("attention", std::make_shared<nn::MultiHeadAttention>(c.dim, c.heads));
    combine = register_module("combine", std::make_shared<nn::Linear>(2 * c.dim, c.dim));
    out = register_module("out", std::make_shared<nn::Linear>(c.dim, kVocab));
  }
  std::string name() const override { return "OcrModel"; }

  // images (B, H, W) -> memory (B, S, C), S = rows * cols
  Variable encode(const Tensor& images) {
    Variable x = patches->forward(Variable(images));  // (B, S, C)
    if (positions_) x = position->forward(x);         // + PE2(row, column)
    return encoder->forward(x);                       // patches see each other
  }

  // One Luong step with input feeding: h_t from [y_{t-1}; h~_{t-1}]; h_t asks the grid with
  // multi-head attention (each head its own weights over the S patches); h~_t = tanh(W_c [c_t; h_t]);
  // logits from h~_t. If asked, *weights gets the heads' mean weights (B, S).
  Variable step(const Tensor& y_prev, nn::RNNState& state, Variable& feed, const Variable& memory, Variable* weights) {
    state = cell->forward(concat({embedding->forward(y_prev), feed}, 1), state);  // (B, H), H = C
    const int64_t B = memory.size(0), S = memory.size(1), C = memory.size(2);
    const nn::MultiHeadAttentionResult a = attention->forward(unsqueeze(state.h, 1), memory, memory, Tensor(), Tensor(),
                                                              /*need_weights=*/weights != nullptr);  // one query (B, 1, C)
    if (weights) *weights = mean(reshape(a.weights, {B, attention->num_heads, S}), 1);  // (B, NH, 1, S) -> (B, S)
    feed = tanh(combine->forward(concat({reshape(a.output, {B, C}), state.h}, 1)));    // h~_t (B, H)
    return out->forward(feed);                                                          // (B, V)
  }

  // Teacher forcing: tgt_in (B, T) -> logits (B, T, V)
  Variable forward(const Tensor& images, const Tensor& tgt_in) {
    const Variable memory = encode(images);
    const int64_t B = tgt_in.size(0), T = tgt_in.size(1);
    nn::RNNState state;
    Variable feed(zeros({B, cell->hidden_size}));
    std::vector<Variable> logits;
    for (int64_t t = 0; t < T; ++t)
      logits.push_back(step(slice(tgt_in, 1, t, t + 1).reshape({B}), state, feed, memory, nullptr));
    return stack(logits, 1);
  }

  // Greedy reading of each image, up to max_len characters, with the attention of each step.
  std::vector<Reading> read(const Tensor& images, int64_t max_len) {
    NoGradGuard no_grad;
    const Variable memory = encode(images);
    const int64_t B = images.size(0);
    nn::RNNState state;
    Variable feed(zeros({B, cell->hidden_size}));
    Tensor y = full({B}, kBos);
    std::vector<Reading> r(B);
    std::vector<bool> done(B, false);
    for (int64_t t = 0; t < max_len; ++t) {
      Variable w;
      y = argmax(step(y, state, feed, memory, &w).value(), -1);  // (B)
      for (int64_t b = 0; b < B; ++b) {
        if (done[b]) continue;
        r[b].weights.push_back(slice(w.value(), 0, b, b + 1).reshape({w.size(1)}));
        const int64_t id = static_cast<int64_t>(y.data()[b]);
        if (id == kEos || id < 3) done[b] = true;
        else r[b].text += static_cast<char>('0' + id - 3);
      }
    }
    return r;
  }

  std::shared_ptr<nn::PatchEmbedding> patches;
  std::shared_ptr<nn::SinusoidalPositionalEncoding2d> position;
  std::shared_ptr<nn::TransformerEncoderLayer> encoder;
  std::shared_ptr<nn::Embedding> embedding;
  std::shared_ptr<nn::LSTMCell> cell;
  std::shared_ptr<nn::MultiHeadAttention> attention;
  std::shared_ptr<nn::Linear> combine, out;

 private:
  int64_t rows_, cols_;
  bool positions_;
};

int main(int argc, char** argv) {
  try {
    const Config c = parse(argc, argv);
    // ---------------------------------------------------------------------------------------------
    // Data: training images are drawn fresh for every batch; the test images use another seed
    const auto images = data::DigitImageOptions().with_size(c.height, c.width).with_max_left(c.max_left);
    const data::DigitImages test = data::make_digit_images(data::DigitImageOptions(images).with_n(c.test_images).with_seed(2));
    std::cout << "images " << c.height << " x " << c.width << ", " << c.patch << " x " << c.patch << " patches: a "
              << c.height / c.patch << " x " << c.width / c.patch << " grid, S = " << (c.height / c.patch) * (c.width / c.patch)
              << " positions; 2-D positional encoding " << (c.positions ? "on" : "off") << "\n";

    // ---------------------------------------------------------------------------------------------
    // Model
    manual_seed(11);
    OcrModel model(c);
    std::cout << "model with " << model.num_parameters() << " parameters\n";

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
        const Batch b = make_batch(d, 0, c.batch);
        Variable loss = nn::cross_entropy(model.forward(b.images, b.tgt_in), b.tgt_out, loss_options);
        opt.zero_grad();
        loss.backward();
        nn::clip_grad_norm(model.parameters(), 1);
        opt.step();
        schedule.step();
        bar.update(step, {{"loss", loss.item()}});
      }
    }

    // ---------------------------------------------------------------------------------------------
    // Evaluation on held-out images
    model.eval();
    const int64_t rows = c.height / c.patch, cols = c.width / c.patch;
    int64_t exact = 0, chars = 0, right = 0, on_glyph = 0;
    std::vector<Reading> readings;
    for (int64_t start = 0; start < c.test_images; start += 100) {
      const int64_t n = std::min<int64_t>(100, c.test_images - start);
      const Batch b = make_batch(test, start, n);
      for (Reading& r : model.read(b.images, /*max_len=*/8)) readings.push_back(std::move(r));
    }
    for (int64_t k = 0; k < c.test_images; ++k) {
      const Reading& r = readings[k];
      exact += r.text == test.texts[k];
      chars += static_cast<int64_t>(test.texts[k].size());
      for (size_t t = 0; t < std::min(r.text.size(), test.texts[k].size()); ++t) {
        if (r.text[t] != test.texts[k][t]) continue;
        ++right;
        on_glyph += looked_at_glyph(r.weights[t], test.left[k][t], rows, cols, c.patch);
      }
    }
    std::cout << "\nheld-out images: " << c.test_images << "\nsequence accuracy (the whole string right): " << std::fixed
              << std::setprecision(3) << static_cast<double>(exact) / static_cast<double>(c.test_images)
              << "\ncharacter accuracy (position by position): " << static_cast<double>(right) / static_cast<double>(chars)
              << "\ncorrect characters whose strongest attention column overlaps their glyph: " << on_glyph << " / " << right
              << "\n";
    for (int64_t k = 0; k < 5; ++k)
      std::cout << "  image " << k << ": read " << std::setw(6) << readings[k].text << "   truth " << test.texts[k] << "\n";

    // ---------------------------------------------------------------------------------------------
    // Where it looked, for the first held-out image it reads correctly
    int64_t shown = 0;
    while (shown + 1 < c.test_images && readings[shown].text != test.texts[shown]) ++shown;
    std::filesystem::create_directories(c.out_dir);
    const std::string path = c.out_dir + "/ocr_attention.svg";
    draw_attention(slice(test.images, 0, shown, shown + 1).reshape({c.height, c.width}), readings[shown].text,
                   readings[shown].weights, c.patch, path);
    std::cout << "wrote " << path << " (image " << shown << ", \"" << test.texts[shown] << "\")\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
