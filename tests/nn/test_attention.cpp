// tests/nn/test_attention.cpp - attention weights: sum to 1, zero where masked, no NaN when a
// whole row is masked (forward and backward); score functions' shapes and formulas; the
// weighted sum.
#include <algorithm>
#include <cmath>
#include <limits>

#include "nn/attention/attention.h"
#include "nn/transformer/transformer.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

TEST_CASE("weights sum to 1 and masked positions get exactly 0") {
  manual_seed(1);
  const Tensor mask = nn::padding_mask({4, 2, 3}, 4);
  CHECK(mask.to_vector() == std::vector<real>{0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1});
  // Every registered score (a new one is tested here as soon as it registers).
  for (const std::string& kind : nn::scores().names()) {
    CAPTURE(kind);
    auto score = nn::make_score(kind, 6, 6, 8, /*max_positions=*/5);
    const Variable q(randn({3, 6})), k(randn({3, 4, 6}));
    const Variable scores = score->forward(q, k);
    CHECK(scores.shape() == Shape{3, 4});
    CHECK(score->forward(Variable(randn({3, 5, 6})), k).shape() == Shape{3, 5, 4});
    const nn::AttentionResult r = nn::attend(scores, k, mask);
    CHECK(allclose(sum(r.weights.value(), -1), ones({3}), 1e-5));
    CHECK(r.weights.value().at({1, 2}) == 0);
    CHECK(r.weights.value().at({1, 3}) == 0);
    CHECK(r.weights.value().at({2, 3}) == 0);
    CHECK(r.context.shape() == Shape{3, 6});
  }
}

TEST_CASE("location score: W q, one row per source position, the keys only say how many") {
  manual_seed(2);
  auto score = nn::make_score("location", 3, 5, 0, /*max_positions=*/4);
  CHECK(score->to_string().rfind("LocationScore(3, max_positions=4,\n  (W): Linear(in_features=3, out_features=4, bias=false)", 0) == 0);
  const Tensor q = randn({2, 3});
  const Tensor W = dynamic_cast<nn::Linear&>(*score->named_children()[0].second).weight.value();  // (4, 3)
  const Tensor scores = score->forward(Variable(q), Variable(randn({2, 3, 5}))).value();  // S = 3 of the 4 rows
  CHECK(scores.shape() == Shape{2, 3});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t s = 0; s < 3; ++s) {
      double expected = 0;
      for (int64_t i = 0; i < 3; ++i) expected += W.at({s, i}) * q.at({b, i});
      CHECK(scores.at({b, s}) == doctest::Approx(expected).epsilon(1e-5));
    }
  // Different keys, same scores: where to look comes from the query alone.
  CHECK(score->forward(Variable(q), Variable(randn({2, 3, 5}))).value().to_vector() == scores.to_vector());
  CHECK_THROWS_WITH_AS(score->forward(Variable(q), Variable(randn({2, 5, 5}))),
                       "LocationScore: the source has 5 positions, more than the 4 it was built for", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::make_score("location", 3, 5),
                       "LocationScore: expected max_positions > 0 (the longest source it scores), got 0",
                       std::invalid_argument);
  CHECK(nn::scores().contains("location"));
}

TEST_CASE("a fully masked row gives zero weights and zero gradients, never NaN") {
  Variable scores(randn({2, 3}), true);
  const Tensor mask = from_vector({1, 1, 1, 0, 1, 0}, {2, 3});
  Variable values(randn({2, 3, 4}), true);
  const nn::AttentionResult r = nn::attend(scores, values, mask);
  CHECK(r.weights.value().to_vector()[0] == 0);
  CHECK(max(abs(slice(r.context.value(), 0, 0, 1))).item() == 0);
  (sum(r.context * r.context) + sum(r.weights * r.weights)).backward();
  for (real g : scores.grad().to_vector()) CHECK(std::isfinite(g));
  for (real g : values.grad().to_vector()) CHECK(std::isfinite(g));
  CHECK(max(abs(slice(scores.grad(), 0, 0, 1))).item() == 0);
}

TEST_CASE("score formulas: dot, scaled dot, cosine against hand computation") {
  const Variable q(from_vector({1, 2}, {1, 2})), k(from_vector({3, 4, -1, 0}, {1, 2, 2}));
  CHECK(nn::make_score("dot", 2, 2)->forward(q, k).value().to_vector() == std::vector<real>{11, -1});
  CHECK(allclose(nn::make_score("scaled-dot", 2, 2)->forward(q, k).value(),
                 from_vector({11 / std::sqrt(real(2)), -1 / std::sqrt(real(2))}, {1, 2})));
  CHECK(allclose(nn::make_score("cosine", 2, 2)->forward(q, k).value(),
                 from_vector({11 / (std::sqrt(real(5)) * 5), -1 / std::sqrt(real(5))}, {1, 2}), 1e-5));
}

TEST_CASE("soft_context: the weighted sum of the values, for one query or T of them") {
  const Variable values(from_vector({1, 2, 10, 20, 100, 200}, {1, 3, 2}));  // three values of width 2
  const Variable a(from_vector({0.5, 0.25, 0.25}, {1, 3}));
  CHECK(nn::soft_context(a, values).value().to_vector() == std::vector<real>{0.5 + 2.5 + 25, 1 + 5 + 50});  // (1, 2)
  const Variable a2(from_vector({0.5, 0.25, 0.25, 0, 1, 0}, {1, 2, 3}));                              // T = 2
  const Tensor c = nn::soft_context(a2, values).value();
  CHECK(c.shape() == Shape{1, 2, 2});
  CHECK(c.to_vector() == std::vector<real>{28, 56, 10, 20});
  CHECK_THROWS_WITH_AS(nn::soft_context(a, Variable(zeros({1, 4, 2}))),
                       "soft_context: expected weights (B, S) or (B, T, S) and values (B, S, H), got [1, 3] and [1, 4, 2]",
                       std::invalid_argument);
}

TEST_CASE("scaled dot-product attention with a causal mask: position t sees only 0..t") {
  manual_seed(2);
  const Variable q(randn({2, 3, 5, 4})), k(randn({2, 3, 5, 4})), v(randn({2, 3, 5, 4}));
  const nn::AttentionResult r = nn::scaled_dot_product_attention(q, k, v, nn::causal_mask(5));
  CHECK(r.context.shape() == Shape{2, 3, 5, 4});
  CHECK(r.weights.shape() == Shape{2, 3, 5, 5});
  const Tensor w = r.weights.value();
  CHECK(w.at({1, 2, 0, 0}) == doctest::Approx(1));
  for (int64_t t = 0; t < 5; ++t)
    for (int64_t s = t + 1; s < 5; ++s) CHECK(w.at({0, 1, t, s}) == 0);
}

// The computation with query_block against one block: values, weights and the gradients of q,
// k and v. Returns whether it did take the queries in blocks.
namespace {
bool blocks_match_one_block(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                            int64_t query_block) {
  Variable q0(q, true), k0(k, true), v0(v, true), q1(q, true), k1(k, true), v1(v, true);
  const nn::AttentionResult one = nn::scaled_dot_product_attention(q0, k0, v0, mask, 0, true, /*query_block=*/0);
  const nn::AttentionResult blocks = nn::scaled_dot_product_attention(q1, k1, v1, mask, 0, true, query_block);
  CHECK(one.context.op() != "concat");
  REQUIRE(blocks.context.shape() == one.context.shape());
  CHECK(allclose(blocks.context.value(), one.context.value(), 1e-6, 1e-6));
  CHECK(allclose(blocks.weights.value(), one.weights.value(), 1e-6, 1e-6));
  const Tensor g = randn(one.context.shape());
  sum(one.context * Variable(g)).backward();
  sum(blocks.context * Variable(g)).backward();
  CHECK(allclose(q1.grad(), q0.grad(), 1e-5, 1e-5));
  CHECK(allclose(k1.grad(), k0.grad(), 1e-5, 1e-5));
  CHECK(allclose(v1.grad(), v0.grad(), 1e-5, 1e-5));
  return blocks.context.op() == "concat";
}
}  // namespace

TEST_CASE("causal attention in query blocks equals one block, and skips the keys no query of a block can see") {
  manual_seed(4);
  const Tensor q = randn({2, 3, 20, 8}), k = randn({2, 3, 20, 8}), v = randn({2, 3, 20, 8});
  // Causal: 5 blocks of 4 queries; block b sees keys 0 .. 4b + 3.
  CHECK(blocks_match_one_block(q, k, v, nn::causal_mask(20), 4));
  // Causal and padding together, (B, 1, T, S): the second sequence has 7 positions, so its
  // later queries see keys 0..6 only; the first's see all 20.
  const Tensor both = maximum(nn::padding_mask({20, 7}, 20).reshape({2, 1, 1, 20}), nn::causal_mask(20));
  CHECK(blocks_match_one_block(q, k, v, both, 4));
  // Decoding a chunk of 12 after 8 cached positions: (12, 20), query t sees 0 .. 8 + t.
  CHECK(blocks_match_one_block(randn({2, 3, 12, 8}), k, v, nn::causal_mask_after(12, 8), 3));
  // Keys hidden from every query are never read: with positions 14.. padded in both sequences,
  // NaN in their values reaches the one-block result (0 * NaN) but not the blocked one.
  Tensor nan_v = v.clone();
  for (int64_t i = 0; i < nan_v.numel(); ++i)
    if (i / 8 % 20 >= 14) nan_v.data()[i] = std::numeric_limits<real>::quiet_NaN();
  const Tensor padded = nn::padding_mask({14, 14}, 20).reshape({2, 1, 1, 20});
  const Variable vq(q), vk(k), vv(nan_v);
  CHECK(std::isnan(nn::scaled_dot_product_attention(vq, vk, vv, padded, 0, true, 0).context.value().data()[0]));
  const nn::AttentionResult r = nn::scaled_dot_product_attention(vq, vk, vv, padded, 0, true, 4);
  const std::vector<real> c = r.context.value().to_vector();
  CHECK(std::all_of(c.begin(), c.end(), [](real x) { return std::isfinite(x); }));
  CHECK(r.weights.value().at({1, 2, 19, 14}) == 0);  // the skipped keys' weights are 0
  // Fewer than 4 blocks' worth of queries, or no mask: one block.
  CHECK(nn::scaled_dot_product_attention(vq, vk, Variable(v), nn::causal_mask(20), 0, true, 6).context.op() != "concat");
  CHECK(nn::scaled_dot_product_attention(vq, vk, Variable(v), Tensor(), 0, true, 4).context.op() != "concat");
  // With dropout each block draws its own numbers: a seed repeats them, and p = 1 drops every weight.
  auto dropped = [&](real p) {
    manual_seed(5);
    return nn::scaled_dot_product_attention(vq, vk, Variable(v), nn::causal_mask(20), p, true, 4).context.value();
  };
  CHECK(dropped(0.5).to_vector() == dropped(0.5).to_vector());
  CHECK(!allclose(dropped(0.5), dropped(0)));
  CHECK(dropped(1).to_vector() == std::vector<real>(static_cast<size_t>(dropped(1).numel()), 0));  // all dropped
  // A mask that does not fit is named against the whole scores, not a block's.
  const Tensor causal3 = maximum(zeros({3, 1, 20, 20}), nn::causal_mask(20));  // 3 entries: q has 2
  CHECK_THROWS_WITH_AS(nn::scaled_dot_product_attention(vq, vk, Variable(v), causal3, 0, true, 4),
                       "scaled_dot_product_attention: the mask against the scores: shapes [3, 1, 20, 20] and "
                       "[2, 3, 20, 20] cannot be broadcast together; expected equal sizes or 1 in each axis (from "
                       "the right), got 3 and 2 in axis 0",
                       std::invalid_argument);
  // No keys at all, or a mask of one value: one block.
  CHECK(nn::scaled_dot_product_attention(vq, Variable(zeros({2, 3, 0, 8})), Variable(zeros({2, 3, 0, 8})),
                                         zeros({2, 1, 1, 0}), 0, true, 4).context.shape() == Shape{2, 3, 20, 8});
  CHECK(nn::scaled_dot_product_attention(vq, vk, Variable(v), scalar(0), 0, true, 4).context.op() != "concat");
  // need_weights = false: no weights.
  CHECK(!nn::scaled_dot_product_attention(vq, vk, Variable(v), nn::causal_mask(20), 0, false, 4).weights.defined());
  CHECK(!nn::scaled_dot_product_attention(vq, vk, Variable(v), nn::causal_mask(20), 0, false, 0).weights.defined());
}

TEST_CASE("query blocks equal one block for random shapes and masks (causal, after a cache, padding, any 0/1)") {
  Generator g(11);
  int blocked = 0;  // trials that did take the queries in blocks
  auto pick = [&g](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(g.randint(static_cast<uint64_t>(hi - lo + 1))); };
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const int64_t B = pick(1, 2), H = pick(1, 2), T = pick(1, 32), past = pick(0, 6), S = T + past, HS = pick(1, 5);
    Tensor mask;
    switch (trial % 4) {
      case 0: mask = nn::causal_mask_after(T, past); break;  // (T, S)
      case 1: {                                              // causal and padding, (B, 1, T, S)
        std::vector<int64_t> lengths;
        for (int64_t b = 0; b < B; ++b) lengths.push_back(pick(0, S));
        mask = maximum(nn::padding_mask(lengths, S).reshape({B, 1, 1, S}), nn::causal_mask_after(T, past));
        break;
      }
      case 2: {  // padding alone, the same length for every sequence, (B, 1, 1, S)
        const int64_t length = pick(1, S);
        mask = nn::padding_mask(std::vector<int64_t>(static_cast<size_t>(B), length), S).reshape({B, 1, 1, S});
        break;
      }
      default:  // any 0/1 mask, (B, H, T, S)
        mask = gt(rand({B, H, T, S}), scalar(0.6f));
    }
    manual_seed(static_cast<uint64_t>(trial));
    const Tensor q = randn({B, H, T, HS}), k = randn({B, H, S, HS}), v = randn({B, H, S, HS});
    blocked += blocks_match_one_block(q, k, v, mask, pick(1, 5));
  }
  MESSAGE(blocked, " of 40 trials took the queries in blocks");
  CHECK(blocked >= 15);
}

TEST_CASE("attention errors") {
  CHECK_THROWS_WITH_AS(nn::scaled_dot_product_attention(Variable(zeros({1, 2, 4})), Variable(zeros({1, 2, 4})),
                                                       Variable(zeros({1, 2, 4})), Tensor(), 1.5),
                       "scaled_dot_product_attention: expected dropout_p in [0, 1], got 1.5", std::invalid_argument);
  auto dot = nn::make_score("dot", 4, 4);
  CHECK_THROWS_WITH_AS(dot->forward(Variable(zeros({2, 4})), Variable(zeros({2, 3, 5}))),
                       "DotScore: expected keys of shape (B, S, 4), got [2, 3, 5]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(dot->forward(Variable(zeros({3, 4})), Variable(zeros({2, 3, 4}))),
                       "DotScore: expected a query of shape (2, 4) or (2, T, 4), got [3, 4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::make_score("dot", 4, 5), "DotScore: expected query and key sizes to be equal, got 4 and 5",
                       std::invalid_argument);
  const std::string unknown = "expected an attention score named " + nn::join_names(nn::scores().names()) + ", got 'bilinear'";
  CHECK_THROWS_WITH_AS(nn::make_score("bilinear", 4, 4), unknown.c_str(),
                       std::invalid_argument);
}
