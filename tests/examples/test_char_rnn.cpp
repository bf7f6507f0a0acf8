// tests/examples/test_char_rnn.cpp - example 03's character model as a decoder
// (examples/03_char_rnn/char_model.h): the prompt is the source, the first step returns the
// prediction after it, and nn::sample writes from there. Greedy decoding and top_k = 1 equal
// an argmax loop over forward(); teacher forcing (logits) gives what the steps give; each
// character is drawn from softmax(logits / temperature); and the errors a caller can hit.
#include <cmath>
#include <vector>

#include "examples/03_char_rnn/char_model.h"
#include "io/special_tokens.h"
#include "nn/decoding/decoding.h"
#include "tests/test_util.h"

using namespace seqgrad;

namespace {

constexpr int64_t kV = 9;

Tensor prompt_of(const std::vector<real>& ids) { return from_vector(ids, {1, static_cast<int64_t>(ids.size())}); }

}  // namespace

TEST_CASE("CharModel through nn::sample: top_k = 1 and greedy decoding are an argmax loop over forward()") {
  for (const char* cell : {"rnn", "lstm"}) {
    CAPTURE(cell);
    manual_seed(3);
    CharModel model(cell, kV, 8);
    const Tensor prompt = prompt_of({4, 7, 5});
    // The reference: read the prompt, then feed back the argmax, until <eos> or 12 characters.
    std::vector<int64_t> want;
    {
      NoGradGuard no_grad;
      nn::RNNState state;
      Tensor logits = model.forward(prompt, state).value();  // (1, P, V)
      for (int64_t t = 0; t < 12; ++t) {
        const Tensor last = slice(logits, 1, logits.size(1) - 1, logits.size(1)).reshape({kV});
        const int64_t id = static_cast<int64_t>(argmax(last, 0).item());
        if (id == kEosId) break;
        want.push_back(id);
        logits = model.forward(full({1, 1}, static_cast<real>(id)), state).value();
      }
    }
    const auto o = nn::DecodeOptions().with_max_len(12);
    CHECK(nn::greedy_decode(model, prompt, {}, o).tokens[0] == want);
    Generator g(1);
    CHECK(nn::sample(model, prompt, {}, nn::DecodeOptions(o).with_top_k(1), g).tokens[0] == want);
    CHECK(!want.empty());  // the loop compared characters, not two empty outputs
  }
}

TEST_CASE("CharModel: teacher forcing (logits) gives the log-probabilities the steps give") {
  manual_seed(5);
  CharModel model("lstm", kV, 8);
  NoGradGuard no_grad;
  const Tensor prompt = from_vector({4, 5, 6, 7, 8, 4}, {2, 3});
  const Tensor tgt_in = from_vector({kBosId, 6, 5, 4, kBosId, 8, 8, 7}, {2, 4});
  const Tensor forced = log_softmax(model.logits(prompt, {}, tgt_in, {}).value(), -1);  // (2, 4, V)
  REQUIRE(forced.shape() == Shape{2, 4, kV});
  const std::unique_ptr<nn::DecoderState> state = model.start(prompt, {}, nn::StartOptions());
  for (int64_t t = 0; t < 4; ++t) {
    const Tensor stepped = model.step(*state, slice(tgt_in, 1, t, t + 1).reshape({2}));  // (2, V)
    CHECK(testing::allclose(stepped, slice(forced, 1, t, t + 1).reshape({2, kV})));
  }
}

TEST_CASE("CharModel through nn::sample: each character is drawn from softmax(logits / temperature)") {
  manual_seed(7);
  CharModel model("rnn", kV, 8);
  for (Variable* w : {&model.head->weight, &model.head->bias}) w->value().copy_(w->value() * real(4));  // sharper
  const int64_t N = 4000;  // the same prompt 4000 times; one character each
  const Tensor prompt = full({N, 2}, 5);
  Tensor p, p_one;  // softmax(logits / 0.5) and softmax(logits) of the character after the prompt (V)
  {
    NoGradGuard no_grad;
    nn::RNNState state;
    const Tensor logits = model.forward(prompt_of({5, 5}), state).value();  // (1, 2, V)
    p = softmax(slice(logits, 1, 1, 2).reshape({kV}) / real(0.5), 0);
    p_one = softmax(slice(logits, 1, 1, 2).reshape({kV}), 0);
  }
  // The two differ by far more than the counts' spread (about 0.03), so the counts tell them apart.
  const int64_t best = static_cast<int64_t>(argmax(p, 0).item());
  REQUIRE(p.data()[best] - p_one.data()[best] > 0.1);
  Generator g(11);
  const nn::DecodeResult r = nn::sample(model, prompt, {}, nn::DecodeOptions().with_max_len(1).with_temperature(real(0.5)), g);
  std::vector<double> count(kV, 0);
  for (const auto& tokens : r.tokens) count[tokens.empty() ? kEosId : tokens[0]] += 1;
  for (int64_t v = 0; v < kV; ++v) {
    CAPTURE(v);
    // within 4 standard deviations of a binomial count
    const double expected = static_cast<double>(N) * p.data()[v], sd = std::sqrt(expected * (1 - p.data()[v]));
    CHECK(std::abs(count[v] - expected) <= 4 * sd + 1);
  }
}

TEST_CASE("CharModel errors say what was expected and what was found") {
  CharModel model("rnn", kV, 8);
  CHECK_THROWS_WITH_AS(nn::sample(model, prompt_of({4, 5}), {2}),
                       "CharModel: expected no prompt lengths (every prompt has P characters), got 1", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::greedy_decode(model, zeros({2, 0}), {}),
                       "CharModel: expected a prompt of shape (B, P) with P >= 1, got [2, 0]", std::invalid_argument);
}
