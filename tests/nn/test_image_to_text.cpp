// tests/nn/test_image_to_text.cpp - ImageToText decoded through nn/decoding/decoding.h: greedy decoding
// gives the tokens, log-probabilities and attention of a plain loop over the one-step function
// (the reader ImageToText had of its own before: every image steps max_len times, never
// stopping early); beam search with K = 1 is greedy decoding, and teacher forcing gives the
// log-probability beam search reports for its output; sampling with top_k = 1 is greedy; the
// attention kept is (steps, S) rows that sum to 1; and the errors a caller can hit.
#include <memory>
#include <vector>

#include "data/batch.h"
#include "data/images.h"
#include "io/special_tokens.h"
#include "nn/decoding/decoding.h"
#include "nn/vision/image_to_text.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "tests/test_util.h"

using namespace seqgrad;

namespace {

constexpr int64_t kMaxLen = 3, kV = 13, kCells = 2 * 4;  // 8 x 16 images -> a 2 x 4 grid

// Images (N, 1, 8, 16) of 1-3 digits, and their strings as token ids (digit d is 3 + d).
struct Digits {
  Tensor images;
  std::vector<std::vector<int64_t>> ids;
};
Digits digit_images(int64_t n, uint64_t seed) {
  const data::DigitImages d = data::make_digit_images(
      data::DigitImageOptions().with_size(8, 16).with_digits(1, 3).with_max_left(2).with_noise(real(0.1)).with_n(n).with_seed(seed));
  Digits r{d.images.reshape({n, 1, 8, 16}), {}};
  for (const std::string& text : d.texts) {
    r.ids.emplace_back();
    for (char ch : text) r.ids.back().push_back(3 + ch - '0');
  }
  return r;
}

// A small reader trained for 150 steps: far from perfect, but it writes strings of 1 to 3
// digits, so with max_len = 3 some outputs end with <eos> and some are cut at max_len, and
// both ways a row can stop are decoded.
std::unique_ptr<nn::ImageToText> trained_reader(bool attention) {
  manual_seed(21);
  auto model = std::make_unique<nn::ImageToText>(
      nn::ImageToTextOptions(nn::CnnEncoderOptions(1, {4, 8}).with_strides({2, 2}), kV)
          .with_hidden_size(16)
          .with_attention_size(12)
          .with_attention(attention));
  nn::Adam opt(model->parameters(), nn::AdamOptions(real(0.01)));
  for (int64_t step = 0; step < 150; ++step) {
    const Digits batch = digit_images(16, 100 + static_cast<uint64_t>(step));
    const data::TeacherForcing t = data::teacher_forcing(batch.ids);
    Variable loss = nn::cross_entropy(model->forward(batch.images, t.tgt_in), t.tgt_out,
                                      nn::CrossEntropyOptions().with_ignore_index(kPadId));
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  return model;
}

// The reference: all B images step together max_len times from <bos>, each feeding back its
// argmax. An image's output ends at its first <eos>; its weights are a_t for the steps up to
// and including that one, (steps, S).
struct Reading {
  std::vector<int64_t> tokens;
  double log_prob = 0;
  Tensor weights;
};

std::vector<Reading> read_step_by_step(nn::ImageToText& model, const Tensor& images, int64_t max_len) {
  NoGradGuard no_grad;
  const Variable memory = model.encode(images);  // (B, S, D)
  const int64_t B = memory.size(0), S = memory.size(1);
  nn::RNNState state;
  Variable u = mean(memory, 1);  // u_0
  Tensor y = full({B}, static_cast<real>(kBosId));
  std::vector<Reading> r(static_cast<size_t>(B));
  std::vector<std::vector<Tensor>> looked(static_cast<size_t>(B));
  std::vector<bool> done(static_cast<size_t>(B), false);
  for (int64_t t = 0; t < max_len; ++t) {
    Variable w;
    const Tensor logp = log_softmax(model.step(y, state, u, memory, &w).value(), -1);  // (B, V)
    y = argmax(logp, -1);
    for (int64_t b = 0; b < B; ++b) {
      if (done[b]) continue;
      const int64_t id = static_cast<int64_t>(y.data()[b]);
      looked[b].push_back(slice(w.value(), 0, b, b + 1).reshape({S}));
      r[b].log_prob += logp.data()[b * logp.size(1) + id];
      if (id == kEosId) done[b] = true;
      else r[b].tokens.push_back(id);
    }
  }
  for (int64_t b = 0; b < B; ++b) r[b].weights = stack(looked[b], 0);
  return r;
}

// log P(tokens <eos> | image b) by teacher forcing (logits), or without the <eos> when the
// output ran to max_len.
double teacher_forced_log_prob(nn::ImageToText& model, const Tensor& images, int64_t b, const std::vector<int64_t>& tokens) {
  NoGradGuard no_grad;
  std::vector<int64_t> target = tokens;
  if (static_cast<int64_t>(tokens.size()) < kMaxLen) target.push_back(kEosId);
  const int64_t T = static_cast<int64_t>(target.size());
  Tensor tgt_in = Tensor::empty({1, T});  // <bos> y1 .. y_{T-1}
  for (int64_t t = 0; t < T; ++t) tgt_in.data()[t] = static_cast<real>(t == 0 ? kBosId : target[t - 1]);
  const Tensor logp = log_softmax(model.logits(slice(images, 0, b, b + 1), {}, tgt_in, {}).value(), -1);  // (1, T, V)
  double total = 0;
  for (int64_t t = 0; t < T; ++t) total += logp.data()[t * kV + target[t]];
  return total;
}

}  // namespace

TEST_CASE("ImageToText, greedy_decode: the tokens, log-probabilities and attention of a plain step loop") {
  for (const bool attention : {true, false}) {
    CAPTURE(attention);
    const std::unique_ptr<nn::ImageToText> reader = trained_reader(attention);
    nn::ImageToText& model = *reader;
    const Tensor images = digit_images(16, 1).images;
    const std::vector<Reading> want = read_step_by_step(model, images, kMaxLen);
    const nn::DecodeResult got =
        nn::greedy_decode(model, images, {}, nn::DecodeOptions().with_max_len(kMaxLen).with_need_weights(true));
    REQUIRE(got.tokens.size() == 16);
    REQUIRE(got.cross_attention.size() == 16);
    int64_t ended = 0;  // outputs that wrote <eos> before max_len
    for (int64_t b = 0; b < 16; ++b) {
      CAPTURE(b);
      CHECK(got.tokens[b] == want[b].tokens);
      CHECK(got.log_probs[b] == doctest::Approx(want[b].log_prob).epsilon(1e-6));
      ended += static_cast<int64_t>(want[b].tokens.size()) < kMaxLen;
      // One layer, one head: (1, steps, S); row t is a_t of the step that wrote token t.
      REQUIRE(got.cross_attention[b].size() == 1);
      const Tensor& w = got.cross_attention[b][0];
      const int64_t steps = want[b].weights.size(0);
      REQUIRE(w.shape() == Shape{1, steps, kCells});
      CHECK(w.reshape({steps, kCells}).to_vector() == want[b].weights.to_vector());
      for (real total : sum(w, -1).to_vector()) CHECK(total == doctest::Approx(1).epsilon(1e-5));
      if (!attention) CHECK(testing::allclose(w, full({1, steps, kCells}, real(1) / kCells)));  // the mean: 1/S
    }
    // Both ways to stop were taken, so the loop above compared both.
    CHECK(ended > 0);
    CHECK(ended < 16);
  }
}

TEST_CASE("ImageToText, beam search and sampling: K = 1 is greedy, teacher forcing agrees with beam 4") {
  const std::unique_ptr<nn::ImageToText> reader = trained_reader(true);
  nn::ImageToText& model = *reader;
  const Tensor images = digit_images(6, 1).images;
  const auto o = nn::DecodeOptions().with_max_len(kMaxLen).with_need_weights(true);
  const nn::DecodeResult greedy = nn::greedy_decode(model, images, {}, o);
  CHECK(nn::beam_search(model, images, {}, nn::DecodeOptions(o).with_beam_size(1)).tokens == greedy.tokens);
  Generator g(3);
  CHECK(nn::sample(model, images, {}, nn::DecodeOptions(o).with_top_k(1), g).tokens == greedy.tokens);

  const auto beam_options = nn::DecodeOptions(o).with_beam_size(4);
  const nn::DecodeResult beam = nn::decode(model, images, {}, beam_options);
  CHECK(beam.tokens == nn::beam_search(model, images, {}, beam_options).tokens);
  REQUIRE(beam.tokens.size() == 6);
  for (int64_t b = 0; b < 6; ++b) {
    CAPTURE(b);
    CHECK(beam.log_probs[b] == doctest::Approx(teacher_forced_log_prob(model, images, b, beam.tokens[b])).epsilon(1e-5));
    const int64_t n = static_cast<int64_t>(beam.tokens[b].size()), steps = n < kMaxLen ? n + 1 : n;
    REQUIRE(beam.cross_attention[b].size() == 1);
    REQUIRE(beam.cross_attention[b][0].shape() == Shape{1, steps, kCells});
    for (real total : sum(beam.cross_attention[b][0], -1).to_vector()) CHECK(total == doctest::Approx(1).epsilon(1e-5));
  }
  CHECK(model.is_training());  // decoding puts the mode back
}

TEST_CASE("ImageToText decoding errors say what was expected and what was found") {
  const std::unique_ptr<nn::ImageToText> reader = trained_reader(true);
  nn::ImageToText& model = *reader;
  const Tensor images = zeros({2, 1, 8, 16});
  CHECK_THROWS_WITH_AS(nn::greedy_decode(model, images, {12, 12}),
                       "ImageToText: expected no source lengths (every cell of an image's grid is real), got 2",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(model.logits(images, {12, 12}, full({2, 3}, 1), {}),
                       "ImageToText: expected no source lengths (every cell of an image's grid is real), got 2",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::greedy_decode(model, images, {}, nn::DecodeOptions().with_max_len(0)),
                       "greedy_decode: expected max_len >= 1, got 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::beam_search(model, zeros({2, 8, 16}), {}),
                       "CnnEncoder: expected images of shape (B, 1, H, W), got [2, 8, 16] (a batch of one-channel images "
                       "(B, H, W) needs unsqueeze(x, 1))",
                       std::invalid_argument);
}
