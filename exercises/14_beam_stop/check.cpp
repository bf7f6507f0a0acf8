// exercises/14_beam_stop/check.cpp - make -C exercises check EX=14
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "exercise.h"
#include "seqgrad.h"

using namespace seqgrad;

namespace {
constexpr int64_t kEos = 0, kA = 1, kB = 2;  // the scripted models' three tokens

// A scripted model: the probabilities after each listed prefix, `otherwise` after the rest.
// It counts its calls.
struct Script {
  std::map<std::vector<int64_t>, std::vector<double>> table;
  std::vector<double> otherwise;
  int calls = 0;
  NextLogProbs fn() {
    return [this](const std::vector<int64_t>& prefix) {
      ++calls;
      const auto it = table.find(prefix);
      std::vector<double> p = it == table.end() ? otherwise : it->second;
      for (double& v : p) v = std::log(v);
      return p;
    };
  }
};
}  // namespace

TEST_CASE("14: two beams find what greedy misses, and stop as soon as nothing can beat it") {
  //            <eos>   a     b
  // after []     .1   .5    .4
  // after [a]    .4   .3    .3      greedy: a <eos>, P = .5 x .4 = .20
  // after [b]    .9   .05   .05     better: b <eos>, P = .4 x .9 = .36
  Script s{{{{}, {.1, .5, .4}}, {{kA}, {.4, .3, .3}}, {{kB}, {.9, .05, .05}}}, {.6, .2, .2}};
  const Hypothesis greedy = beam_search_one(s.fn(), 1, 10, 0, kEos);
  CHECK(greedy.tokens == std::vector<int64_t>{kA});
  CHECK(greedy.log_prob == doctest::Approx(std::log(.2)));
  s.calls = 0;
  const Hypothesis beam = beam_search_one(s.fn(), 2, 10, 0, kEos);
  CHECK(beam.tokens == std::vector<int64_t>{kB});
  CHECK(beam.log_prob == doctest::Approx(std::log(.36)));
  // Step 1 finishes [b] (.36) and [a] (.20); the live [a a] has .15 < .36: done after
  // 1 + 2 calls, where running on to max_len = 10 would take 19.
  CHECK(s.calls <= 3);
}

TEST_CASE("14: the length penalty's bound: comparing log P alone would stop too early") {
  // after []: a (.9).  after [a]: <eos> .5, a .45.  after [a a]: <eos> .95.
  // [a]   <eos>: L = ln .45  = -0.799, |Y| = 2
  // [a a] <eos>: L = ln .385 = -0.955, |Y| = 3
  // alpha = 0 ranks by L: [a] wins, and at step 1 the live [a a] (L = ln .405 = -0.904) is
  // already below it, so K = 1 stops there. alpha = 1: [a] scores -0.399, but the live [a a]
  // could still reach -0.904 / max_len = -0.151; it goes on to finish at -0.955 / 3 = -0.318
  // and wins.
  Script s{{{{}, {.05, .9, .05}}, {{kA}, {.5, .45, .05}}, {{kA, kA}, {.95, .025, .025}}}, {.9, .05, .05}};
  const Hypothesis plain = beam_search_one(s.fn(), 1, 6, 0, kEos);
  CHECK(plain.tokens == std::vector<int64_t>{kA});
  CHECK(plain.log_prob == doctest::Approx(std::log(.9 * .5)));
  const Hypothesis penalised = beam_search_one(s.fn(), 1, 6, 1, kEos);
  CHECK(penalised.tokens == std::vector<int64_t>{kA, kA});
  CHECK(penalised.log_prob == doctest::Approx(std::log(.9 * .45 * .95)));
}

TEST_CASE("14: the bound takes the longest output, max_len: a live prefix may not end at the next step") {
  // after []: <eos> .67, a .32.  after [a] and [a a]: a .99.  after [a a a]: <eos> .99.
  // Step 1 finishes [] (L = ln .67 = -0.400, |Y| = 1, score -0.400); the live [a] has
  // L = ln .32 = -1.139. Were |Y| = 2 its longest output, its best score would be
  // -1.139 / 2 = -0.570, below -0.400, and K = 1 would stop with the empty output. But [a] can
  // grow to max_len: -1.139 / 10 = -0.114 is above -0.400, so the search goes on, and
  // a a a <eos> finishes at step 4 with L = ln(.32 x .99^3) = -1.170, score -1.170 / 4 = -0.292.
  Script s{{{{}, {.67, .32, .01}},
            {{kA}, {.005, .99, .005}},
            {{kA, kA}, {.005, .99, .005}},
            {{kA, kA, kA}, {.99, .005, .005}}},
           {.9, .05, .05}};
  const Hypothesis h = beam_search_one(s.fn(), 1, 10, 1, kEos);
  CHECK(h.tokens == std::vector<int64_t>{kA, kA, kA});
  CHECK(h.log_prob == doctest::Approx(std::log(.32 * .99 * .99 * .99)));
}

TEST_CASE("14: at max_len the live prefixes count as finished") {
  // <eos> is never likely: the best of length 3 is a a a, with P = .59^3.
  Script s{{}, {.01, .59, .4}};
  const Hypothesis h = beam_search_one(s.fn(), 2, 3, 0.6, kEos);
  CHECK(h.tokens == std::vector<int64_t>{kA, kA, kA});
  CHECK(h.log_prob == doctest::Approx(3 * std::log(.59)));
}

TEST_CASE("14: with alpha = 0, the same outputs as nn::beam_search with length_penalty 0") {
  manual_seed(14);
  nn::Transformer model(nn::TransformerOptions(12, 12).with_d_model(16).with_nhead(2).with_num_layers(1)
                            .with_dim_feedforward(32));
  model.eval();
  model.generator->bias.value().at({data::Vocab::kEos}) -= real(0.5);  // outputs of a few tokens
  NoGradGuard no_grad;
  const Tensor src = from_vector({5, 6, 7, 8, 9, 10, 11, 5, 7, 6, 5, 4}, {3, 4});
  for (int64_t b = 0; b < 3; ++b) {
    const Tensor one = slice(src, 0, b, b + 1);  // (1, S)
    // next(prefix): the decoder run on <bos> prefix, log-softmax of its last position.
    const NextLogProbs next = [&](const std::vector<int64_t>& prefix) {
      Tensor tgt_in = Tensor::empty({1, static_cast<int64_t>(prefix.size()) + 1});
      tgt_in.data()[0] = data::Vocab::kBos;
      for (size_t t = 0; t < prefix.size(); ++t) tgt_in.data()[t + 1] = static_cast<real>(prefix[t]);
      const Tensor logits = model.logits(one, {4}, tgt_in, {}).value();  // (1, T, V)
      const Tensor last = log_softmax(slice(logits, 1, tgt_in.size(1) - 1, tgt_in.size(1)), -1);
      return std::vector<double>(last.data(), last.data() + last.numel());
    };
    for (int64_t K : {1, 2, 4}) {
      CAPTURE(b);
      CAPTURE(K);
      const nn::DecodeResult ref =
          nn::beam_search(model, one, {4}, nn::DecodeOptions().with_beam_size(K).with_length_penalty(0).with_max_len(8));
      const Hypothesis mine = beam_search_one(next, K, 8, 0, data::Vocab::kEos);
      CHECK(mine.tokens == ref.tokens[0]);
      CHECK(mine.log_prob == doctest::Approx(ref.log_probs[0]).epsilon(1e-3));
    }
  }
}
