// exercises/08_location_score/check.cpp - make -C exercises check EX=08
#include <doctest/doctest.h>

#include "exercise.h"

using namespace seqgrad;

TEST_CASE("08: shapes for one query per sequence and for T queries") {
  manual_seed(8);
  LocationScore score(4, 10);
  const Variable keys(randn({2, 6, 5}));
  CHECK(score.forward(Variable(randn({2, 4})), keys).shape() == Shape{2, 6});
  CHECK(score.forward(Variable(randn({2, 3, 4})), keys).shape() == Shape{2, 3, 6});
  CHECK(score.named_parameters().size() == 2);
  CHECK(score.named_parameters()[0].first == "W.weight");
}

TEST_CASE("08: the scores are W q cut to S, whatever the keys hold") {
  manual_seed(9);
  LocationScore score(3, 8);
  const Variable q(randn({2, 3}));
  const Variable a = score.forward(q, Variable(randn({2, 5, 4})));
  const Variable b = score.forward(q, Variable(randn({2, 5, 4}) * real(10)));
  const Tensor full_scores = score.W->forward(q).value();  // (2, 8)
  REQUIRE(a.shape() == Shape{2, 5});
  CHECK(max(abs(a.value() - b.value())).item() == 0);
  CHECK(max(abs(a.value() - slice(full_scores, 1, 0, 5))).item() < 1e-6);
}

TEST_CASE("08: works with nn::attend, and refuses sources longer than max_len") {
  manual_seed(10);
  LocationScore score(4, 6);
  const Variable values(randn({2, 5, 3}));
  const nn::AttentionResult r = nn::attend(score.forward(Variable(randn({2, 4})), values), values, nn::padding_mask({5, 2}, 5));
  CHECK(r.context.shape() == Shape{2, 3});
  CHECK(r.weights.value().at({1, 3}) == 0);
  CHECK_THROWS_AS(score.forward(Variable(randn({2, 4})), Variable(randn({2, 7, 3}))), std::invalid_argument);
}

TEST_CASE("08: gradcheck with respect to the query and W") {
  manual_seed(11);
  LocationScore score(3, 5);
  const Variable keys(randn({2, 4, 2}));
  const GradcheckResult rq =
      gradcheck([&](const std::vector<Variable>& v) { return score.forward(v[0], keys); }, {randn({2, 2, 3})});
  CHECK_MESSAGE(rq.ok, rq.message);
  const Variable q(randn({2, 3}));
  const GradcheckResult rp = gradcheck_parameters([&] { return score.forward(q, keys); }, score.parameters());
  CHECK_MESSAGE(rp.ok, rp.message);
}
