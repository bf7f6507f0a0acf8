// tests/nn/test_attention_seq2seq.cpp - attention decoders: shapes, weights that sum to 1 and
// skip padding, the local window (equal to scoring everything and masking, at 2D + 1 scores a
// step), hard attention and REINFORCE, the pieces' error messages, and "it learns".
#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "data/batch.h"
#include "data/tasks.h"
#include "nn/attention/attention_seq2seq.h"
#include "nn/decoding/model_kind.h"
#include "nn/decoding/decoding.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "tests/nn/learns_to_reverse.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;
using seqgrad::testing::scores_that_fit;

TEST_CASE("shapes, and alignments that sum to 1 and ignore padding") {
  manual_seed(1);
  const data::Batch b = data::make_batch({{5, 6, 7, 8}, {8, 9}}, {{5, 6, 7}, {9}});
  for (auto style : {nn::AttentionStyle::Luong, nn::AttentionStyle::Bahdanau}) {
    nn::AttentionSeq2Seq model(nn::AttentionSeq2SeqOptions(12, 12).with_style(style).with_score("additive")
                                   .with_bidirectional(true).with_hidden_size(8));
    const nn::AttentionOutput out = model.forward(b.src, b.src_lengths, b.tgt_in);
    CHECK(out.logits.shape() == Shape{2, 4, 12});
    CHECK(out.weights.shape() == Shape{2, 4, 4});
    CHECK(allclose(sum(out.weights.value(), -1), ones({2, 4}), 1e-5));
    for (int64_t t = 0; t < 4; ++t) {
      CHECK(out.weights.value().at({1, t, 2}) == 0);  // the second source has 2 real positions
      CHECK(out.weights.value().at({1, t, 3}) == 0);
    }
    const nn::DecodeResult d =
        nn::greedy_decode(model, b.src, b.src_lengths, nn::DecodeOptions().with_max_len(5).with_need_weights(true));
    CHECK(d.tokens.size() == 2);
    REQUIRE(d.cross_attention[1].size() == 1);  // one layer
    const Tensor& w = d.cross_attention[1][0];  // one head: (1, T_out, 2), only the real source positions
    CHECK(w.shape() == Shape{1, static_cast<int64_t>(std::min<size_t>(d.tokens[1].size() + 1, 5)), 2});
  }
}

TEST_CASE("local-p attention: zero weight outside the window of 2D + 1 positions") {
  manual_seed(2);
  nn::AttentionSeq2Seq model(nn::AttentionSeq2SeqOptions(12, 12).with_local(true, 2).with_hidden_size(8));
  const Tensor src = from_vector({5, 6, 7, 8, 9, 10, 11, 5, 6, 7}, {1, 10});
  const nn::AttentionOutput out = model.forward(src, {10}, from_vector({1, 5, 6}, {1, 3}));
  const Tensor w = out.weights.value();
  for (int64_t t = 0; t < 3; ++t) {
    int64_t nonzero = 0, first = -1, last = -1;
    for (int64_t s = 0; s < 10; ++s)
      if (w.at({0, t, s}) > 0) {
        ++nonzero;
        if (first < 0) first = s;
        last = s;
      }
    CHECK(nonzero >= 1);
    CHECK(nonzero <= 5);           // at most 2D + 1 positions
    CHECK(last - first <= 4);      // and they are contiguous around p_t
  }
}

TEST_CASE("local-m attention: the window of step t is [t - D, t + D], capped at the source's end") {
  manual_seed(2);
  const int64_t D = 1;
  nn::AttentionSeq2Seq model(nn::AttentionSeq2SeqOptions(12, 12).with_local(true, D, /*monotonic=*/true).with_hidden_size(8));
  CHECK(model.to_string().find("local-m D=1") != std::string::npos);
  CHECK_FALSE(model.position);  // nothing to predict: p_t = t
  const std::vector<int64_t> lengths{6, 3};
  const Tensor src = from_vector({5, 6, 7, 8, 9, 10, 11, 5, 6, 0, 0, 0}, {2, 6});
  const Tensor tgt_in = from_vector({1, 5, 6, 7, 8, 9, 1, 5, 6, 7, 8, 9}, {2, 6});
  const Tensor w = model.forward(src, lengths, tgt_in).weights.value();  // (2, 6, 6)
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 6; ++t) {
      CAPTURE(b);
      CAPTURE(t);
      const int64_t p = std::min(t, lengths[b] - 1);
      double total = 0;
      for (int64_t s = 0; s < 6; ++s) {
        const bool inside = std::abs(s - p) <= D && s < lengths[b];
        if (!inside) CHECK(w.at({b, t, s}) == 0);
        if (inside) CHECK(w.at({b, t, s}) > 0);
        total += w.at({b, t, s});
      }
      CHECK(total == doctest::Approx(1).epsilon(1e-5));  // no Gaussian: a softmax over the window
    }
  // Decoding step by step counts t itself: its weights equal teacher forcing's on the same tokens.
  model.eval();
  std::unique_ptr<nn::DecoderState> state = model.start(src, lengths, nn::StartOptions{/*need_weights=*/true});
  for (int64_t t = 0; t < 6; ++t) model.step(*state, slice(tgt_in, 1, t, t + 1).reshape({2}));
  const Tensor taught = model.forward(src, lengths, tgt_in).weights.value();
  REQUIRE(state->attention.size() == 1);  // one layer: (2, 1 head, 6 steps, 6)
  CHECK(allclose(state->attention[0].reshape({2, 6, 6}), taught, 1e-6));
  CHECK_THROWS_WITH_AS(nn::AttentionSeq2Seq(nn::AttentionSeq2SeqOptions(12, 12).with_local(false, 3, true)),
                       "AttentionSeq2Seq: monotonic (local-m) alignment needs local attention", std::invalid_argument);
}

namespace {

// Local attention as it was computed before the window was gathered: score all S positions,
// then mask those further than D from p_t (and padding); local-p multiplies by the Gaussian.
Variable align_local_by_masking(nn::AttentionScore& score, const Variable& query, const Variable& memory,
                                const Tensor& mask, const Variable& p, int64_t D, bool gaussian) {
  const int64_t B = memory.size(0), S = memory.size(1);
  const Variable scores = score.forward(query, memory);  // (B, S)
  Tensor window = mask.clone();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      if (std::abs(static_cast<real>(s) - p.value().data()[b]) > static_cast<real>(D)) window.data()[b * S + s] = 1;
  if (!gaussian) return nn::masked_softmax(scores, window);
  const real sigma = static_cast<real>(D) / 2;
  const Variable distance = Variable(arange(S).reshape({1, S})) - p;
  return nn::masked_softmax(scores, window) * exp(distance * distance * (-1 / (2 * sigma * sigma)));
}

// Counts the keys of every call, and scores them with the score it wraps (a child, so the
// model's parameters stay the wrapped score's).
class CountingScore : public nn::AttentionScore {
 public:
  explicit CountingScore(std::shared_ptr<nn::AttentionScore> inner)
      : nn::AttentionScore(nn::ScoreOptions(inner->query_size, inner->key_size)),
        inner_(register_module("inner", std::move(inner))) {}
  std::string name() const override { return "CountingScore"; }
  bool compares_keys() const override { return inner_->compares_keys(); }
  std::vector<int64_t> keys;  // how many keys each call scored

 protected:
  Variable score(const Variable& q, const Variable& k) override {
    keys.push_back(k.size(1));
    return inner_->forward(q, k);
  }

 private:
  std::shared_ptr<nn::AttentionScore> inner_;
};

}  // namespace

TEST_CASE("local-m and local-p score the window alone and equal scoring all S positions, then masking") {
  manual_seed(5);
  const int64_t B = 4, S = 9, H = 6;
  const std::vector<int64_t> lengths{9, 6, 3, 1};
  const Tensor mask = nn::padding_mask(lengths, S);
  // Centres p_t inside each source (0 .. len - 1): whole and half positions, the ends, and one
  // a float's rounding away from 1, where s - p_t for s = 1 + D rounds to D itself.
  const std::vector<std::vector<real>> centres{
      {0.99999994f, 4.5f, 2, 0}, {8, 0.3f, 1.7f, 0}, {3.25f, 5, 0.5f, 0}, {6.5f, 2.75f, 1, 0}};
  for (const std::string& kind : nn::scores().names()) {
    auto score = nn::make_score(kind, H, H, 5, /*max_positions=*/S);
    for (int64_t D : {1, 2, 3, 8}) {
      for (size_t c = 0; c < centres.size(); ++c)
        for (bool gaussian : {false, true}) {
          CAPTURE(kind);
          CAPTURE(D);
          CAPTURE(c);
          CAPTURE(gaussian);
          Variable query(randn({B, H}), true), memory(randn({B, S, H}), true), p(from_vector(centres[c], {B, 1}), true);
          const nn::Alignment a = gaussian ? nn::align_local_p(*score, query, memory, mask, p, D)
                                           : nn::align_local_m(*score, query, memory, mask, p.value(), D);
          const Variable reference = align_local_by_masking(*score, query, memory, mask, p, D, gaussian);
          CHECK(a.weights.shape() == Shape{B, S});
          CHECK(a.window_weights.shape() == Shape{B, 2 * D + 1});
          CHECK(a.window_memory.shape() == Shape{B, 2 * D + 1, H});
          CHECK(allclose(a.weights.value(), reference.value(), 1e-6, 1e-6));
          for (int64_t i = 0; i < B * S; ++i)  // zero outside the window, as exactly as before
            if (reference.value().data()[i] == 0) CHECK(a.weights.value().data()[i] == 0);
          // The context read from the window is the weighted sum over the whole source, and the
          // gradients agree too.
          const Variable context = nn::soft_context(a.window_weights, a.window_memory);
          const Variable reference_context = nn::soft_context(reference, memory);
          CHECK(allclose(context.value(), reference_context.value(), 1e-6, 1e-6));
          const Tensor r1 = randn({B, S}), r2 = randn({B, H});
          (sum(a.weights * Variable(r1)) + sum(context * Variable(r2))).backward();
          const Tensor dq = query.grad(), dm = memory.grad(), dp = gaussian ? p.grad() : Tensor();
          query.zero_grad();
          memory.zero_grad();
          p.zero_grad();
          (sum(reference * Variable(r1)) + sum(reference_context * Variable(r2))).backward();
          CHECK(allclose(dq, query.grad(), 1e-5, 1e-5));
          CHECK(allclose(dm, memory.grad(), 1e-5, 1e-5));
          if (gaussian) CHECK(allclose(dp, p.grad(), 1e-5, 1e-5));
        }
    }
  }
}

TEST_CASE("local attention scores 2D + 1 keys a step, however long the source; global scores all S") {
  manual_seed(6);
  const int64_t D = 2;
  for (int64_t S : {10, 40}) {
    for (int mode = 0; mode < 3; ++mode) {  // global, local-m, local-p
      CAPTURE(S);
      CAPTURE(mode);
      nn::AttentionSeq2Seq model(
          nn::AttentionSeq2SeqOptions(12, 12).with_hidden_size(8).with_local(mode > 0, D, /*monotonic=*/mode == 1));
      std::vector<real> ids;
      for (int64_t s = 0; s < 2 * S; ++s) ids.push_back(static_cast<real>(5 + s % 7));
      const Tensor src = from_vector(ids, {2, S}), tgt_in = from_vector({1, 5, 6, 1, 7, 8}, {2, 3});
      const std::vector<int64_t> lengths{S, S - 3};
      const Tensor before = model.forward(src, lengths, tgt_in).logits.value();
      auto counting = std::make_shared<CountingScore>(model.score);
      model.score = model.replace_module("score", counting);
      const Tensor after = model.forward(src, lengths, tgt_in).logits.value();
      CHECK(after.to_vector() == before.to_vector());  // the wrapper changes nothing
      CHECK(counting->keys == std::vector<int64_t>(3, mode == 0 ? S : 2 * D + 1));  // one call a step, T = 3
    }
  }
}

TEST_CASE("hard_context reads one row of the memory exactly, with log pi of its position") {
  const Variable memory(from_vector({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 3, 2}));
  const Variable weights(from_vector({0.2, 0.5, 0.3, 0.6, 0.1, 0.1}, {2, 3}));  // the second row sums to 0.8
  Generator unused(1);
  const nn::HardContext h = nn::hard_context(weights, memory, /*sample=*/false, unused);  // the argmax
  CHECK(h.context.value().to_vector() == std::vector<real>{3, 4, 7, 8});
  CHECK(allclose(h.log_prob.value(), from_vector({std::log(real(0.5)), std::log(real(0.6) / real(0.8))}), 1e-6));
  // Sampling draws each position in proportion to its weight.
  Generator g(7);
  std::vector<int> drawn(3, 0);
  for (int i = 0; i < 2000; ++i) {
    const real first = nn::hard_context(weights, memory, /*sample=*/true, g).context.value().data()[0];
    ++drawn[static_cast<size_t>((first - 1) / 2)];
  }
  CHECK(drawn[0] == doctest::Approx(400).epsilon(0.15));
  CHECK(drawn[1] == doctest::Approx(1000).epsilon(0.1));
  CHECK(drawn[2] == doctest::Approx(600).epsilon(0.1));
}

TEST_CASE("input feeding: h~ = tanh(W_c [c; h]) goes into the next step's input [y; h~]") {
  manual_seed(7);
  nn::Linear W_c(5, 2, /*bias=*/false);
  const Variable c(randn({3, 3})), h(randn({3, 2})), y(randn({3, 4}));
  const Variable feed = nn::attentional_state(W_c, c, h);
  CHECK(allclose(feed.value(), tanh(matmul(concat({c.value(), h.value()}, 1), W_c.weight.value(), false, true))));
  const Variable x = nn::input_feed(y, feed);
  CHECK(x.shape() == Shape{3, 6});
  CHECK(slice(x.value(), 1, 4, 6).to_vector() == feed.value().to_vector());
}

TEST_CASE("the alignment pieces name what is wrong") {
  auto score = nn::make_score("dot", 4, 4);
  const Variable q(zeros({2, 4})), memory(zeros({2, 6, 4}));
  const Tensor mask = nn::padding_mask({6, 3}, 6), p = from_vector({1, 2}, {2, 1});
  CHECK_THROWS_WITH_AS(nn::align_local_m(*score, q, memory, mask, p, 0), "align_local_m: expected a window D >= 1, got 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::align_local_m(*score, q, memory, mask, from_vector({1, 2}), 1),
                       "align_local_m: expected centres p_t of shape (2, 1), got [2]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::align_local_p(*score, q, memory, zeros({2, 5}), Variable(p), 1),
                       "align_local_p: expected a mask of shape (2, 6), got [2, 5]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::align_local_p(*score, q, memory, mask, Variable(from_vector({1, 6}, {2, 1})), 1),
                       "align_local_p: expected each centre p_t in [0, 5], got 6", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::align_local_m(*score, q, Variable(zeros({2, 6})), Tensor(), p, 1),
                       "align_local_m: expected a memory of shape (B, S, M), got [2, 6]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::local_m_centre({6, 3}, -1), "local_m_centre: expected a step t >= 0, got -1",
                       std::invalid_argument);
  nn::Linear W_p(4, 4, /*bias=*/false);
  CHECK_THROWS_WITH_AS(nn::local_p_centre(W_p, Variable(zeros({4})), q, {6, 3, 2}),
                       "local_p_centre: expected 2 lengths (one per query), got 3", std::invalid_argument);
  Generator g(1);
  CHECK_THROWS_WITH_AS(nn::hard_context(Variable(zeros({2, 5})), memory, true, g),
                       "hard_context: expected weights (B, S) and a memory (B, S, M), got [2, 5] and [2, 6, 4]",
                       std::invalid_argument);
}

TEST_CASE("hard attention: one-hot contexts, a log-probability, REINFORCE's surrogate") {
  manual_seed(3);
  nn::AttentionSeq2Seq model(nn::AttentionSeq2SeqOptions(12, 12).with_hard(true).with_hidden_size(8));
  const data::Batch b = data::make_batch({{5, 6, 7}, {8, 9, 10}}, {{7, 6}, {10, 9}});
  const nn::AttentionOutput out = model.forward(b.src, b.src_lengths, b.tgt_in);
  REQUIRE(out.log_prob.defined());
  CHECK(out.log_prob.shape() == Shape{2, 3});  // (B, T)
  for (real lp : out.log_prob.value().to_vector()) CHECK(lp <= 0);
  // surrogate = sum(keep (nll - baseline) log_prob) / sum(keep); the first call starts the
  // baseline at the mean nll of the real tokens (here (3 + 5) / 2 = 4; the padded 9 is ignored)
  real baseline = -1;
  const Variable lp(from_vector({-1, -2, -7}, {1, 3}), true);
  const Variable s = nn::reinforce_loss(from_vector({3, 5, 9}, {1, 3}), lp, from_vector({1, 1, 0}, {1, 3}), baseline);
  CHECK(s.item() == doctest::Approx(((3 - 4) * -1 + (5 - 4) * -2) / 2.0));
  CHECK(baseline == doctest::Approx(4));
  s.backward();
  CHECK(lp.grad().to_vector() == std::vector<real>{-0.5, 0.5, 0});  // the worse step's choice is discouraged
}

TEST_CASE("it learns: Luong attention reverses sequences of length 4-10") {
  manual_seed(4);
  const auto pairs = data::make_pairs(data::Task::Reverse, data::TaskOptions().with_n(3000).with_lengths(4, 10).with_symbols(6).with_seed(9));
  data::Vocab vocab;
  for (char ch = 'a'; ch < 'a' + 6; ++ch) vocab.add(std::string(1, ch));
  const auto tok = data::Tokenization::Space;
  const data::EncodedPairs enc = data::encode_pairs(pairs, vocab, tok, vocab, tok);
  nn::AttentionSeq2Seq model(nn::AttentionSeq2SeqOptions(vocab.size(), vocab.size()).with_hidden_size(32).with_embed_dim(16));
  const int correct = testing::exact_after_training(model, enc, /*steps=*/500, /*max_len=*/12);
  INFO("exact match " << correct << " / 200");
  // 60% exact match; chance is (1/6)^length. Seeds 4 to 7 give 146 to 183 of 200: the exact
  // figure moves with any change in rounding, so the bar sits clear of that spread.
  CHECK(correct >= 120);
}

// The -attn kind checks its score on the model's sizes by building it, and a model is built
// right after its options are checked: the trial must not draw from the generator the model's
// weights come from (it did, and every -attn run of a given seed changed).
TEST_CASE("the -attn kind's check of the score's sizes leaves the random numbers alone, and names the flags") {
  auto value = [](const std::map<std::string, io::Json>& given) {
    return [given](const nn::Option& o) {
      const auto it = given.find(o.key);
      return it == given.end() ? io::Json() : it->second;
    };
  };
  auto flag = [](const nn::Option& o) { return "--" + o.flag_name(); };
  const std::vector<std::string> fit = scores_that_fit(8, 16);  // (a student's too)
  manual_seed(3);
  const auto before = default_generator().state();
  nn::resolve_options(nn::model_kind("gru-attn"), value({{"attention", io::Json("general")}, {"bidirectional", io::Json(true)}}),
                      flag);
  CHECK(default_generator().state() == before);
  const std::string refusal =
      "--attention scaled-dot cannot score queries of --hidden (8) against keys of 16 (2 x --hidden, with "
      "--bidirectional): ScaledDotScore: expected query and key sizes to be equal, got 8 and 16; give --attention " +
      nn::join_names(fit) + ", or drop --bidirectional";
  CHECK_THROWS_WITH_AS(
      nn::resolve_options(nn::model_kind("gru-attn"),
                          value({{"attention", io::Json("scaled-dot")}, {"bidirectional", io::Json(true)}, {"hidden", io::Json(8)}}),
                          flag),
      refusal.c_str(), std::invalid_argument);
  CHECK(default_generator().state() == before);
}

TEST_CASE("attention seq2seq errors") {
  CHECK_THROWS_WITH_AS(nn::AttentionSeq2Seq(nn::AttentionSeq2SeqOptions(12, 12).with_local(true, 0)),
                       "AttentionSeq2Seq: expected a local window D >= 1, got 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::AttentionSeq2Seq(nn::AttentionSeq2SeqOptions(12, 12).with_bidirectional(true).with_score("dot")),
                       "DotScore: expected query and key sizes to be equal, got 64 and 128", std::invalid_argument);
}
