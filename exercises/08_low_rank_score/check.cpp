// exercises/08_low_rank_score/check.cpp - make -C exercises check EX=08
#include <doctest/doctest.h>

#include "exercise.h"

using namespace seqgrad;

TEST_CASE("08: shapes for one query per sequence and for T queries; the parameters' names") {
  manual_seed(8);
  LowRankScore score(4, 5, 2);
  const Variable keys(randn({2, 6, 5}));
  CHECK(score.forward(Variable(randn({2, 4})), keys).shape() == Shape{2, 6});
  CHECK(score.forward(Variable(randn({2, 3, 4})), keys).shape() == Shape{2, 3, 6});
  const auto named = score.named_parameters();
  REQUIRE(named.size() == 2);
  CHECK(named[0].first == "U.weight");
  CHECK(named[0].second.shape() == Shape{2, 4});
  CHECK(named[1].first == "V.weight");
  CHECK(named[1].second.shape() == Shape{2, 5});
}

TEST_CASE("08: the same scores as the general score with W_a = U^T V") {
  manual_seed(9);
  LowRankScore score(3, 4, 2);
  auto general = nn::make_score("general", 3, 4);
  auto& W = dynamic_cast<nn::Linear&>(*general->named_children()[0].second).weight;  // (H_q, H_k): q^T W k
  W.value() = matmul(score.U->weight.value(), score.V->weight.value(), /*trans_a=*/true, false);
  const Variable q(randn({2, 3, 3})), k(randn({2, 5, 4}));
  CHECK(max(abs(score.forward(q, k).value() - general->forward(q, k).value())).item() < 1e-5);
  const Variable q1(randn({2, 3}));
  CHECK(max(abs(score.forward(q1, k).value() - general->forward(q1, k).value())).item() < 1e-5);
}

TEST_CASE("08: works with nn::attend and a padding mask; wrong widths are refused") {
  manual_seed(10);
  LowRankScore score(4, 3, 2);
  const Variable values(randn({2, 5, 3}));
  const nn::AttentionResult r = nn::attend(score.forward(Variable(randn({2, 4})), values), values, nn::padding_mask({5, 2}, 5));
  CHECK(r.context.shape() == Shape{2, 3});
  CHECK(r.weights.value().at({1, 3}) == 0);
  CHECK_THROWS_AS(score.forward(Variable(randn({2, 5})), values), std::invalid_argument);
  CHECK_THROWS_AS(score.forward(Variable(randn({2, 4})), Variable(randn({2, 5, 4}))), std::invalid_argument);
  CHECK_THROWS_AS(score.forward(Variable(randn({3, 4})), values), std::invalid_argument);
}

TEST_CASE("08: gradcheck with respect to the query, the keys, U and V") {
  manual_seed(11);
  LowRankScore score(3, 2, 2);
  const GradcheckResult rx = gradcheck([&](const std::vector<Variable>& v) { return score.forward(v[0], v[1]); },
                                       {randn({2, 2, 3}), randn({2, 4, 2})});
  CHECK_MESSAGE(rx.ok, rx.message);
  const Variable q(randn({2, 3})), k(randn({2, 4, 2}));
  const GradcheckResult rp = gradcheck_parameters([&] { return score.forward(q, k); }, score.parameters());
  CHECK_MESSAGE(rp.ok, rp.message);
}

TEST_CASE("08: registered as \"lowrank\", it runs inside an attention decoder, its rank an option") {
  manual_seed(12);
  REQUIRE(nn::scores().contains("lowrank"));
  nn::AttentionSeq2Seq model(nn::AttentionSeq2SeqOptions(10, 10).with_cell("lstm").with_hidden_size(8).with_embed_dim(4)
                                 .with_score("lowrank", nn::Settings().set("rank", 3)));
  CHECK(model.score->name() == "LowRankScore");
  bool found = false;
  for (const auto& [name, p] : model.named_parameters())
    if (name == "score.U.weight") found = p.shape() == Shape{3, 8};
  CHECK(found);
  const Tensor src = from_vector({3, 4, 5, 6, 7, 8}, {2, 3}), tgt = from_vector({1, 4, 5, 1, 6, 7}, {2, 3});
  const Variable logits = model.logits(src, {3, 2}, tgt, {});
  CHECK(logits.shape() == Shape{2, 3, 10});
  CHECK(std::isfinite(sum(logits).item()));
  // The default rank, 16, when none is given.
  CHECK(dynamic_cast<LowRankScore&>(*nn::make_score("lowrank", 8, 8)).rank == 16);
}
