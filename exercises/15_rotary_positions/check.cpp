// exercises/15_rotary_positions/check.cpp - make -C exercises check EX=15
#include <doctest/doctest.h>

#include <cmath>

#include "exercise.h"
#include "exercises/check_util.h"
#include "nn/transformer/positional.h"

using namespace seqgrad;
using exercises::max_diff;

TEST_CASE("15: by hand: C = 2 turns (1, 0) by one radian per position") {
  // w_0 = 1: row t of the output is (cos t, sin t); with offset 3 it starts at angle 3.
  const Variable x(from_vector({1, 0, 1, 0, 1, 0}, {3, 2}), /*requires_grad=*/true);
  const Variable y = rotary(x);
  CHECK(y.op() == "rotary");
  CHECK(max_diff(y.value(), from_vector({1, 0, std::cos(1.0f), std::sin(1.0f), std::cos(2.0f), std::sin(2.0f)}, {3, 2})) <
        1e-5);
  const Tensor z = rotary(x, /*offset=*/3).value();
  CHECK(max_diff(z, from_vector({std::cos(3.0f), std::sin(3.0f), std::cos(4.0f), std::sin(4.0f), std::cos(5.0f),
                                 std::sin(5.0f)}, {3, 2})) < 1e-5);
}

TEST_CASE("15: the angles are the sinusoidal table's: the pair (0, 1) becomes (-PE_2i, PE_2i+1)") {
  const int64_t T = 20, C = 8;
  Tensor x = zeros({T, C});
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < C / 2; ++i) x.at({t, 2 * i + 1}) = 1;  // (0, 1) -> (-sin, cos)
  const Tensor y = rotary(Variable(x)).value();
  const Tensor pe = nn::sinusoidal_table(T, C);  // (sin, cos) pairs
  REQUIRE(y.shape() == pe.shape());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < C; ++j) {
      CAPTURE(t);
      CAPTURE(j);
      CHECK(y.at({t, j}) == doctest::Approx(j % 2 == 0 ? -pe.at({t, j}) : pe.at({t, j})).epsilon(1e-5));
    }
}

TEST_CASE("15: q_m . k_n depends only on m - n, and lengths are kept") {
  manual_seed(15);
  const Tensor q = randn({2, 2, 5, 6}), k = randn({2, 2, 7, 6});  // (B, NH, T, HS)
  const Tensor scores = matmul(rotary(Variable(q)).value(), rotary(Variable(k)).value(), false, true);
  // Every position moved on by 11: the same scores.
  const Tensor moved = matmul(rotary(Variable(q), 11).value(), rotary(Variable(k), 11).value(), false, true);
  CHECK(max_diff(scores, moved) < 1e-3);
  // ... but not if only the queries move.
  CHECK(max_diff(scores, matmul(rotary(Variable(q), 11).value(), rotary(Variable(k)).value(), false, true)) > 1e-2);
  // A rotation keeps every pair's length, so every row's.
  const Tensor r = rotary(Variable(q), 4).value();
  CHECK(max_diff(sum(r * r, -1), sum(q * q, -1)) < 1e-4);
}

TEST_CASE("15: gradcheck; an odd C is refused") {
  manual_seed(16);
  const GradcheckResult r = gradcheck([](const std::vector<Variable>& v) { return rotary(v[0], 2); },
                                      {randn({2, 3, 4, 6})});
  CHECK_MESSAGE(r.ok, r.message);
  CHECK_THROWS_AS(rotary(Variable(zeros({3, 5}))), std::invalid_argument);
}

TEST_CASE("15: through the hook: a Transformer with --positional rope decodes the same cached and uncached, "
          "and its self-attention sees distances only") {
  manual_seed(17);
  nn::Transformer model(nn::TransformerOptions(10, 10).with_d_model(8).with_nhead(2).with_num_layers(1)
                            .with_dim_feedforward(16).with_dropout(0).with_positional("rope").with_max_len(32));
  model.eval();
  const Tensor src = from_vector({4, 5, 6, 7, 8, 9, 4, 5}, {2, 4}), tgt = from_vector({1, 6, 7, 8, 1, 9, 5, 4}, {2, 4});
  const nn::TransformerMemory memory = model.encode(src, {});
  const Tensor full = model.decode(tgt, memory).logits.value();
  nn::DecoderCache cache;
  std::vector<Tensor> steps;
  for (int64_t t = 0; t < 4; ++t) steps.push_back(model.decode_step(slice(tgt, 1, t, t + 1), memory, cache).logits.value());
  CHECK(max_diff(concat(steps, 1), full) < 1e-4);
  // Self-attention over the same three tokens at positions 0..2 or 9..11: the same weights.
  nn::MultiHeadAttention& mha = *(*model.encoder->layers)[0]->self_attn;
  manual_seed(18);
  const Variable x(randn({1, 3, 8}));
  const Tensor at0 = mha.forward(x, x, x, Tensor(), Tensor(), true).weights.value();
  nn::KVCache moved;
  const Variable pad(zeros({1, 9, 8}));
  mha.forward(pad, pad, pad, moved, nn::CacheMode::Append);  // positions 0..8 taken
  const Tensor w = mha.forward(x, x, x, moved, nn::CacheMode::Append, Tensor(), Tensor(), true).weights.value();
  const Tensor at9 = slice(w, 3, 9, 12);  // the weights over keys 9..11 (the three tokens), renormalised
  const Tensor renorm = at9 / sum(at9, -1, true);
  CHECK(max_diff(renorm, at0) < 1e-4);
  // The same layer without the hook gives other weights: the rotation is really applied.
  mha.attach(nullptr, false);
  CHECK(max_diff(mha.forward(x, x, x, Tensor(), Tensor(), true).weights.value(), at0) > 1e-3);
}
