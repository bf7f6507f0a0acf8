// tests/nn/test_afm.cpp - the attentional factorization machine: pair order, shapes, the
// formula computed by hand, errors, and that it learns which feature pairs matter.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "data/recommend.h"
#include "nn/recommenders/afm.h"
#include "nn/core/embedding.h"
#include "tests/test_util.h"

using namespace seqgrad;

TEST_CASE("field_pairs lists i < j row by row") {
  using P = std::vector<std::pair<int64_t, int64_t>>;
  CHECK(nn::field_pairs(2) == P{{0, 1}});
  CHECK(nn::field_pairs(4) == P{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}});
  CHECK(nn::field_pairs(7).size() == 21);  // F (F - 1) / 2
}

TEST_CASE("AFM: names, shapes, weights that sum to 1, and the formula computed by hand") {
  manual_seed(4);
  const int64_t B = 2, F = 3, K = 2, A = 3;
  nn::AttentionalFactorizationMachine afm(K, A);
  std::vector<std::string> names;
  for (const auto& [name, v] : afm.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"attention.weight", "attention.bias", "score.weight", "projection.weight"});
  const Tensor v = randn({B, F, K});
  const nn::AFMResult r = afm.forward_with_weights(Variable(v));
  REQUIRE(r.output.shape() == Shape{B});
  REQUIRE(r.weights.shape() == Shape{B, 3});
  const Tensor W = afm.attention->weight.value(), b = afm.attention->bias.value();
  const Tensor h = afm.score->weight.value(), p = afm.projection->weight.value();
  for (int64_t n = 0; n < B; ++n) {
    // p_ij = v_i * v_j;  e_ij = h . relu(W p_ij + b);  a = softmax(e);  y = p . sum a_ij p_ij
    std::vector<std::vector<double>> prod;
    std::vector<double> e;
    for (const auto& [i, j] : nn::field_pairs(F)) {
      std::vector<double> pij(K);
      for (int64_t k = 0; k < K; ++k) pij[k] = static_cast<double>(v.at({n, i, k})) * v.at({n, j, k});
      double score = 0;
      for (int64_t a = 0; a < A; ++a) {
        double z = b.at({a});
        for (int64_t k = 0; k < K; ++k) z += W.at({a, k}) * pij[k];
        score += h.at({0, a}) * std::max(z, 0.0);
      }
      prod.push_back(pij);
      e.push_back(score);
    }
    const double top = *std::max_element(e.begin(), e.end());
    double total = 0;
    for (double s : e) total += std::exp(s - top);
    double y = 0;
    for (size_t q = 0; q < e.size(); ++q) {
      const double a = std::exp(e[q] - top) / total;
      CHECK(r.weights.value().at({n, static_cast<int64_t>(q)}) == doctest::Approx(a).epsilon(1e-5));
      for (int64_t k = 0; k < K; ++k) y += a * p.at({0, k}) * prod[q][k];
    }
    CHECK(r.output.value().at({n}) == doctest::Approx(y).epsilon(1e-5));
  }
  CHECK(afm.forward(Variable(v)).shape() == Shape{B});
}

TEST_CASE("AFM errors say what was expected and what was found") {
  nn::AttentionalFactorizationMachine afm(4, 8);
  CHECK_THROWS_WITH_AS(afm.forward(Variable(zeros({2, 3, 5}))),
                       "AttentionalFactorizationMachine: expected fields of shape (B, F, 4) with F >= 2, got [2, 3, 5]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(afm.forward(Variable(zeros({2, 1, 4}))),
                       "AttentionalFactorizationMachine: expected fields of shape (B, F, 4) with F >= 2, got [2, 1, 4]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::AttentionalFactorizationMachine(0, 8),
                       "AttentionalFactorizationMachine: expected a positive embed_dim and attention_size, got 0 and 8",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::field_pairs(1), "field_pairs: expected at least 2 fields, got 1", std::invalid_argument);
}

TEST_CASE("it learns: AFM fits a target made of 3 of 10 feature pairs, and attends to those 3") {
  // 5 fields of 8 values; only the pairs (0,1), (1,2) and (3,4) carry signal (data/recommend.h).
  const auto task = data::FieldTaskOptions();
  const data::FieldData train = data::make_field_interactions(data::FieldTaskOptions(task).with_n(4000).with_seed(1));
  const data::FieldData test = data::make_field_interactions(data::FieldTaskOptions(task).with_n(1000).with_seed(2));
  manual_seed(3);
  const int64_t K = 8, B = 100;
  nn::Embedding embed(train.num_features, K), linear(train.num_features, 1);  // v_i and w_i
  nn::AttentionalFactorizationMachine afm(K, /*attention_size=*/8);
  std::vector<Variable> params = embed.parameters();
  for (nn::Module* m : {static_cast<nn::Module*>(&afm), static_cast<nn::Module*>(&linear)})
    for (const Variable& p : m->parameters()) params.push_back(p);
  nn::Adam opt(params, nn::AdamOptions(real(0.01)));
  // y = sum_i w_i + AFM(v_1 .. v_F)   (the bias is left out: the target has mean 0)
  const auto predict = [&](const Tensor& ids) {
    const nn::AFMResult r = afm.forward_with_weights(embed.forward(ids));
    return nn::AFMResult{r.output + reshape(sum(linear.forward(ids), 1), {ids.size(0)}), r.weights};
  };
  for (int64_t step = 0; step < 1500; ++step) {
    const int64_t start = (step * B) % 4000;
    Variable loss = nn::mse_loss(predict(slice(train.ids, 0, start, start + B)).output,
                                 Variable(slice(train.target, 0, start, start + B)));
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  NoGradGuard no_grad;
  const nn::AFMResult r = predict(test.ids);
  const double mse = nn::mse_loss(r.output, Variable(test.target)).item();
  const double variance = mean(test.target * test.target).item() - std::pow(mean(test.target).item(), 2);
  // [docs:afm_learns]
  CHECK(mse < 0.2 * variance);
  // The mean attention weight of each pair over the test set: the 3 pairs with signal come first.
  const Tensor a = mean(r.weights.value(), 0);  // (10), pairs in field_pairs(5) order
  std::vector<int64_t> order(10);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&a](int64_t x, int64_t y) { return a.data()[x] > a.data()[y]; });
  const auto pairs = nn::field_pairs(5);
  std::vector<std::pair<int64_t, int64_t>> top{pairs[order[0]], pairs[order[1]], pairs[order[2]]};
  std::sort(top.begin(), top.end());
  CHECK(top == task.pairs);
  // [docs:end]
}
