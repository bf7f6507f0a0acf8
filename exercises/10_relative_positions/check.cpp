// exercises/10_relative_positions/check.cpp - make -C exercises check EX=10
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "exercise.h"
#include "exercises/check_util.h"

using namespace seqgrad;
using exercises::max_diff;

TEST_CASE("10: by hand: K = 1 puts distances <= -1, 0 and >= 1 in three buckets, per head") {
  // Head 0 has w = (0, 2, -1), head 1 the negatives.
  const Variable w(from_vector({0, 2, -1, 0, -2, 1}, {2, 3}));
  const Tensor b = relative_bias(w, 1, 0, 3, 0, 4).value();  // (2, 3, 4)
  REQUIRE(b.shape() == Shape{2, 3, 4});
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t s = 0; s < 4; ++s) {
        CAPTURE(h);
        CAPTURE(t);
        CAPTURE(s);
        CHECK(b.at({h, t, s}) == w.value().at({h, std::clamp<int64_t>(s - t, -1, 1) + 1}));
      }
}

TEST_CASE("10: positions are absolute: step 4 alone is row 4 of the whole table") {
  manual_seed(10);
  const Variable w(randn({2, 7}));
  const Tensor whole = relative_bias(w, 3, 0, 5, 0, 5).value();
  CHECK(max_diff(relative_bias(w, 3, 4, 1, 0, 5).value(), slice(whole, 1, 4, 5)) == 0);
  CHECK(max_diff(relative_bias(w, 3, 2, 2, 0, 5).value(), slice(whole, 1, 2, 4)) == 0);
}

TEST_CASE("10: gradcheck with respect to w, and w really gets a gradient") {
  manual_seed(12);
  const GradcheckResult r = gradcheck(
      [](const std::vector<Variable>& x) { return relative_bias(x[0], 2, 1, 3, 0, 4); }, {randn({2, 5})});
  CHECK_MESSAGE(r.ok, r.message);
  const Variable w(randn({2, 5}), true);
  sum(relative_bias(w, 2, 0, 3, 0, 4) * Variable(randn({2, 3, 4}))).backward();
  REQUIRE(w.grad().defined());
  CHECK(max(abs(w.grad())).item() > 0);
}

TEST_CASE("10: through the hook: attention's weights are plain attention's times exp(bias), masks still zero") {
  manual_seed(11);
  auto mha = std::make_shared<nn::MultiHeadAttention>(8, 2);
  const Variable x(randn({1, 4, 8}));
  const Tensor causal = nn::causal_mask(4);
  const Tensor plain = mha->forward(x, x, x, Tensor(), causal, true).weights.value();  // (1, 2, 4, 4)
  auto rel = std::make_shared<RelativePositions>(nn::PositionalOptions(8, 16, 2));
  rel->w.value().copy_(randn({2, 2 * RelativePositions::K + 1}));
  mha->attach(rel, /*causal=*/true);
  const Tensor w = mha->forward(x, x, x, Tensor(), causal, true).weights.value();
  REQUIRE(w.shape() == plain.shape());
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t t = 0; t < 4; ++t) {
      double total = 0;
      auto e = [&](int64_t s) {
        return plain.at({0, h, t, s}) * std::exp(rel->w.value().at({h, std::clamp<int64_t>(s - t, -4, 4) + 4}));
      };
      for (int64_t s = 0; s <= t; ++s) total += e(s);
      for (int64_t s = 0; s < 4; ++s) {
        CAPTURE(h);
        CAPTURE(t);
        CAPTURE(s);
        if (s > t) CHECK(w.at({0, h, t, s}) == 0);
        else CHECK(w.at({0, h, t, s}) == doctest::Approx(e(s) / total).epsilon(1e-4));
      }
    }
}

TEST_CASE("10: a Transformer with --positional relative: cached decoding equals uncached, and w learns") {
  manual_seed(13);
  nn::Transformer model(nn::TransformerOptions(10, 10).with_d_model(8).with_nhead(2).with_num_layers(1)
                            .with_dim_feedforward(16).with_dropout(0).with_positional("relative").with_max_len(16));
  auto rel = std::dynamic_pointer_cast<RelativePositions>(model.pos_encoding);
  REQUIRE(rel);
  rel->w.value().copy_(randn(rel->w.shape()));
  model.eval();
  const Tensor src = from_vector({4, 5, 6, 7, 8, 9, 4, 5}, {2, 4}), tgt = from_vector({1, 6, 7, 8, 1, 9, 5, 4}, {2, 4});
  const nn::TransformerMemory memory = model.encode(src, {});
  const Tensor full = model.decode(tgt, memory).logits.value();
  nn::DecoderCache cache;
  std::vector<Tensor> steps;
  for (int64_t t = 0; t < 4; ++t) steps.push_back(model.decode_step(slice(tgt, 1, t, t + 1), memory, cache).logits.value());
  CHECK(max_diff(concat(steps, 1), full) < 1e-4);
  // The bias is learned: w gets a gradient from the loss.
  model.train();
  model.zero_grad();
  nn::cross_entropy(model.forward(src, {}, tgt), from_vector({6, 7, 8, 2, 9, 5, 4, 2}, {2, 4})).backward();
  REQUIRE(rel->w.grad().defined());
  CHECK(max(abs(rel->w.grad())).item() > 0);
}
