// examples/12_recommenders - attention in recommendation: which feature pairs matter, and which
// past clicks matter for this candidate.
//
// New since 11: no sequence to produce, one number to predict, and attention as a way to pick
// relevant items out of a set. Two models, each against the baseline without attention:
//   1. The attentional factorization machine (nn/recommenders/afm.h) on a task where only 3 of the 10 pairs
//      of 5 fields carry signal (data/recommend.h), against a plain factorization machine that
//      weights every pair the same. We print test error and the mean attention weight per pair.
//   2. Attention pooling of a user's history against a candidate item, the idea of the Deep
//      Interest Network, with chapter 7's "general" score c^T W b_s, against averaging the
//      history, and DIN's own activation unit (nn/recommenders/din.h: raw weights from an MLP on
//      [b_s; c; b_s - c; b_s * c], no softmax; coursework 09 builds a softmax-normalised variant).
// With --seeds 1,2,3 every model trains once per seed (the initial weights; the data stay the
// same) and the tables show mean and range.
//   build/examples/12_recommenders [--seeds S,S,...] [--quick] [--out DIR]
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "data/metrics.h"
#include "data/recommend.h"
#include "examples/common/args.h"
#include "examples/common/seeds.h"
#include "nn/recommenders/afm.h"
#include "nn/attention/attention.h"
#include "nn/recommenders/din.h"
#include "nn/core/embedding.h"
#include "nn/core/linear.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "seqgrad.h"
#include "viz/heatmap.h"

using namespace seqgrad;

// ===============================================================================================
// Config

struct Config {
  int64_t afm_steps = 3000, din_steps = 2000, batch = 100;
  int64_t dim = 8, attention = 8;                         // AFM: K, A
  data::ClickTaskOptions clicks;                          // DIN: 80 items in 20 categories
  int64_t item_dim = 8, din_train = 20000, din_test = 2000;
  std::string out_dir = "build/out";
  std::vector<int64_t> seeds{42};  // one training run per model and seed (the initial weights)
};

// The five fields of part 1 and the pairs that carry signal (data::FieldTaskOptions' default).
const std::vector<std::string> kFields{"user group", "category", "price band", "hour", "device"};

// Trains with Adam on minibatches drawn in order; `loss` maps a start index to the batch loss.
void train(const std::vector<Variable>& params, int64_t steps, real lr, const std::function<Variable(int64_t)>& loss) {
  nn::Adam opt(params, nn::AdamOptions(lr));
  for (int64_t step = 0; step < steps; ++step) {
    Variable l = loss(step);
    opt.zero_grad();
    l.backward();
    opt.step();
  }
}

// ===============================================================================================
// Part 1: factorization machines, with and without attention over the pairs

// y = sum_i w_{x_i} + p^T (pairwise interactions of the field embeddings v_{x_i})
struct PairModel : nn::Module {
  PairModel(int64_t features, int64_t K, int64_t A, bool attention) {
    embed = register_module("embed", std::make_shared<nn::Embedding>(features, K));
    linear = register_module("linear", std::make_shared<nn::Embedding>(features, 1));
    if (attention) afm = register_module("afm", std::make_shared<nn::AttentionalFactorizationMachine>(K, A));
    else projection = register_module("projection", std::make_shared<nn::Linear>(K, 1, /*bias=*/false));
  }
  std::string name() const override { return afm ? "AFM" : "FM"; }

  nn::AFMResult predict(const Tensor& ids) {  // ids (B, F) -> y (B), AFM's weights (B, P)
    const int64_t B = ids.size(0);
    const Variable v = embed->forward(ids);                                   // (B, F, K)
    const Variable first_order = reshape(sum(linear->forward(ids), 1), {B});  // sum_i w_i
    if (afm) {
      const nn::AFMResult r = afm->forward_with_weights(v);
      return {first_order + r.output, r.weights};
    }
    // FM: every pair with the same weight. sum_{i<j} v_i * v_j = ((sum_i v_i)^2 - sum_i v_i^2) / 2,
    // which costs O(F K) instead of O(F^2 K); AFM cannot use the trick, its pairs differ in weight.
    const Variable s = sum(v, 1);                                              // (B, K)
    const Variable pairs = (s * s - sum(v * v, 1)) * real(0.5);                // (B, K)
    return {first_order + reshape(projection->forward(pairs), {B}), Variable()};
  }
  std::shared_ptr<nn::Embedding> embed, linear;
  std::shared_ptr<nn::AttentionalFactorizationMachine> afm;
  std::shared_ptr<nn::Linear> projection;
};

// The indices of a's entries, largest first.
std::vector<size_t> largest_first(const Tensor& a) {
  std::vector<size_t> order(static_cast<size_t>(a.numel()));
  for (size_t q = 0; q < order.size(); ++q) order[q] = q;
  std::sort(order.begin(), order.end(), [&a](size_t x, size_t y) { return a.data()[x] > a.data()[y]; });
  return order;
}

void factorization_machines(const Config& c) {
  const auto task = data::FieldTaskOptions();
  const data::FieldData train_set = data::make_field_interactions(data::FieldTaskOptions(task).with_n(4000).with_seed(1));
  const data::FieldData test = data::make_field_interactions(data::FieldTaskOptions(task).with_n(1000).with_seed(2));
  const double variance = mean(test.target * test.target).item() - std::pow(mean(test.target).item(), 2);
  std::cout << "== 1. which feature pairs matter: 5 fields of 8 values, 4000 training examples\n"
            << "target = interactions of (user group, category), (category, price band), (hour, device) + noise\n"
            << "test target variance " << std::fixed << std::setprecision(3) << variance << "\n";
  const auto pairs = nn::field_pairs(5);
  auto signal = [&](size_t q) { return std::find(task.pairs.begin(), task.pairs.end(), pairs[q]) != task.pairs.end(); };
  // Per model: the test error; for AFM also how many of its 3 largest mean weights are on the
  // pairs with signal, and the share of its weight those pairs get (uniform: 0.3).
  examples::SeedTable table("model", {{"test MSE", 3}, {"signal pairs in top 3", 1}, {"weight on signal pairs", 3}});
  std::vector<Tensor> weights;  // AFM's mean attention per pair (P), one per seed
  for (int64_t seed : c.seeds)
    for (bool attention : {false, true}) {
      manual_seed(static_cast<uint64_t>(seed));
      PairModel model(train_set.num_features, c.dim, c.attention, attention);
      train(model.parameters(), c.afm_steps, real(0.01), [&](int64_t step) {
        const int64_t start = (step * c.batch) % train_set.ids.size(0);
        return nn::mse_loss(model.predict(slice(train_set.ids, 0, start, start + c.batch)).output,
                            Variable(slice(train_set.target, 0, start, start + c.batch)));
      });
      NoGradGuard no_grad;
      const nn::AFMResult r = model.predict(test.ids);
      std::vector<double> figures{nn::mse_loss(r.output, Variable(test.target)).item(), examples::SeedTable::kNone,
                                  examples::SeedTable::kNone};
      if (attention) {
        const Tensor a = mean(r.weights.value(), 0);  // (P)
        const std::vector<size_t> order = largest_first(a);
        figures[1] = figures[2] = 0;
        for (size_t q = 0; q < pairs.size(); ++q) {
          if (!signal(q)) continue;
          figures[1] += std::find(order.begin(), order.begin() + 3, q) != order.begin() + 3;
          figures[2] += a.data()[q];
        }
        weights.push_back(a);
      }
      table.add(model.name(), figures);
    }
  std::cout << "\nFM against AFM" << examples::over_seeds(c.seeds) << "\n" << table.to_string();

  // Mean attention per pair over the test set, largest first (by the mean over the seeds); *
  // marks the pairs with signal.
  const Tensor a = mean(stack(weights, 0), 0);  // (P)
  examples::SeedTable per_pair("  pair", {{"mean weight", 3}});
  Tensor grid = zeros({5, 5});
  for (size_t q : largest_first(a)) {
    const auto [i, j] = pairs[q];
    for (const Tensor& w : weights) per_pair.add((signal(q) ? "* " : "  ") + kFields[i] + " x " + kFields[j], {w.data()[q]});
    grid.at({i, j}) = grid.at({j, i}) = a.data()[q];
  }
  std::cout << "\nAFM's mean attention weight per pair over the test set (uniform would be " << 1.0 / static_cast<double>(pairs.size())
            << ")" << examples::over_seeds(c.seeds) << "\n" << per_pair.to_string();
  viz::Heatmap(kFields, kFields, grid).set_title("AFM: mean attention weight of each pair of fields").set_show_values(true)
      .save(c.out_dir + "/afm_pairs.svg");
  std::cout << "wrote " << c.out_dir << "/afm_pairs.svg\n";
}

// ===============================================================================================
// Part 2: a user's history pooled against the candidate (DIN-style) or averaged

// The clicks (data/recommend.h): each user likes 1-5 of 20 categories and clicked 5-20 items of
// liked ones; the candidate is from a liked category or not, half the time each, as the label
// says. The average of 5-20 item vectors of width 8 blurs up to five categories together;
// attention can look for the candidate's category among the clicks.
using Clicks = data::ClickData;

// How a history becomes one vector: the mean; attention with chapter 7's general score c^T W b_s
// and a softmax; or DIN's activation unit (nn/recommenders/din.h), raw weights from an MLP on each pair.
enum class Pooling { Mean, Attention, Activation };

struct InterestModel : nn::Module {
  InterestModel(const Config& c, Pooling pooling) : pooling_(pooling) {
    const int64_t items = c.clicks.categories * c.clicks.per_category, H = c.item_dim;
    embed = register_module("embed", std::make_shared<nn::Embedding>(items + 1, H, /*padding_idx=*/items));
    if (pooling == Pooling::Attention) score = register_module("score", nn::make_score("general", H, H));
    if (pooling == Pooling::Activation)
      unit = register_module("unit", std::make_shared<nn::DINActivationUnit>(nn::DINOptions(H).with_hidden(36, 18)));
    hidden = register_module("hidden", std::make_shared<nn::Linear>(2 * H, 32));
    out = register_module("out", std::make_shared<nn::Linear>(32, 2));  // logits: no click, click
  }
  std::string name() const override {
    return pooling_ == Pooling::Mean ? "mean pooling" : pooling_ == Pooling::Attention ? "attention pooling" : "DIN unit";
  }

  nn::AttentionResult pool(const Tensor& history, const std::vector<int64_t>& lengths, const Variable& candidate) {
    const Variable b = embed->forward(history);                       // (B, S, H)
    const Tensor mask = nn::padding_mask(lengths, history.size(1));   // (B, S), 1 at padding
    if (pooling_ == Pooling::Attention) return nn::attend(score->forward(candidate, b), b, mask);  // a (B, S), u = sum_s a_s b_s
    if (pooling_ == Pooling::Activation) {
      const nn::DINResult r = unit->forward(b, candidate, lengths);  // raw weights w (B, S), u = sum_s w_s b_s
      return {r.pooled, r.weights};
    }
    // The baseline: every real behaviour weighs 1 / length, whatever the candidate.
    const Variable weights((real(1) - mask) / sum(real(1) - mask, 1, /*keepdim=*/true));
    return {nn::soft_context(weights, b), weights};  // u = sum_s b_s / length
  }
  nn::AttentionResult forward(const Clicks& d, int64_t start, int64_t n, Variable* logits) {
    const Tensor history = slice(d.history, 0, start, start + n);
    const std::vector<int64_t> lengths(d.lengths.begin() + start, d.lengths.begin() + start + n);
    const Variable candidate = embed->forward(slice(d.candidate, 0, start, start + n));  // (B, H)
    nn::AttentionResult u = pool(history, lengths, candidate);
    *logits = out->forward(relu(hidden->forward(concat({u.context, candidate}, 1))));   // (B, 2)
    return u;
  }
  std::shared_ptr<nn::Embedding> embed;
  std::shared_ptr<nn::AttentionScore> score;
  std::shared_ptr<nn::DINActivationUnit> unit;
  std::shared_ptr<nn::Linear> hidden, out;
  Pooling pooling_;
};

void interest_pooling(const Config& c) {
  const Clicks train_set = data::make_click_histories(data::ClickTaskOptions(c.clicks).with_n(c.din_train).with_seed(1));
  const Clicks test = data::make_click_histories(data::ClickTaskOptions(c.clicks).with_n(c.din_test).with_seed(2));
  const int64_t per_category = c.clicks.per_category;
  std::cout << "\n== 2. which past clicks matter: " << train_set.num_items << " items in " << c.clicks.categories
            << " categories, each user likes 1-" << c.clicks.max_liked << " of them, histories of " << c.clicks.min_clicks
            << "-" << c.clicks.max_clicks << " clicks, " << c.din_train << " training users\n";
  examples::SeedTable table("pooling", {{"test accuracy", 3}, {"AUC", 3}});
  for (int64_t seed : c.seeds)
    for (Pooling pooling : {Pooling::Mean, Pooling::Attention, Pooling::Activation}) {
      manual_seed(static_cast<uint64_t>(seed));
      InterestModel model(c, pooling);
      train(model.parameters(), c.din_steps, real(0.003), [&](int64_t step) {
        const int64_t start = (step * c.batch) % c.din_train;
        Variable logits;
        model.forward(train_set, start, c.batch, &logits);
        return nn::cross_entropy(logits, slice(train_set.label, 0, start, start + c.batch));
      });
      NoGradGuard no_grad;
      Variable logits;
      model.forward(test, 0, c.din_test, &logits);
      const double accuracy = mean(eq(argmax(logits.value(), -1), test.label)).item();
      std::vector<double> scores;  // the click logit's lead: how the model ranks the test pairs
      std::vector<int> labels;
      for (int64_t k = 0; k < c.din_test; ++k) {
        scores.push_back(logits.value().at({k, 1}) - logits.value().at({k, 0}));
        labels.push_back(static_cast<int>(test.label.data()[k]));
      }
      table.add(model.name(), {accuracy, data::auc(scores, labels)});
      if (pooling != Pooling::Attention || seed != c.seeds[0]) continue;

      // One user's history against two candidates: one from a liked category, one from a category
      // with no click in the history.
      int64_t user = 0;
      while (user + 1 < c.din_test && (test.label.data()[user] != 1 || test.lengths[user] < 10)) ++user;
      std::vector<bool> clicked(c.clicks.categories, false);
      for (int64_t s = 0; s < test.lengths[user]; ++s) clicked[static_cast<int64_t>(test.history.at({user, s})) / per_category] = true;
      Clicks pair = test;
      pair.history = concat({slice(test.history, 0, user, user + 1), slice(test.history, 0, user, user + 1)}, 0);
      pair.lengths = {test.lengths[user], test.lengths[user]};
      const int64_t liked = static_cast<int64_t>(test.candidate.data()[user]) / per_category;
      const int64_t other = std::find(clicked.begin(), clicked.end(), false) - clicked.begin();
      pair.candidate = from_vector({test.candidate.data()[user], static_cast<real>(other * per_category)}, {2});
      const nn::AttentionResult r = model.forward(pair, 0, 2, &logits);
      std::vector<std::string> cols;
      for (int64_t s = 0; s < test.lengths[user]; ++s)
        cols.push_back(cat("c", static_cast<int64_t>(test.history.at({user, s})) / per_category));
      const std::vector<std::string> rows{cat("candidate c", liked), cat("candidate c", other)};
      const viz::Heatmap map(rows, cols, slice(r.weights.value(), 1, 0, test.lengths[user]));
      std::cout << "user " << user << "'s history (category of each click) and the attention weights against a liked and"
                << " another candidate:\n" << map.to_text();
      viz::Heatmap(map)
          .set_title(cat("DIN: one test user's ", test.lengths[user], " clicks (their categories) weighed against two candidates"))
          .save(c.out_dir + "/din_weights.svg");
      std::cout << "wrote " << c.out_dir << "/din_weights.svg\n";
    }
  std::cout << "\nthe history pooled three ways" << examples::over_seeds(c.seeds) << "\n" << table.to_string();
}

int main(int argc, char** argv) {
  try {
    const cli::Args a("12_recommenders", "12_recommenders [--seeds S,S,...] [--quick] [--out DIR]",
                      {{"seeds", "42", "seeds of the initial weights, comma-separated (the data stay the same); two or more: "
                                       "mean and range"},
                       {"quick", "false", "2000 AFM steps, 1500 DIN steps", true},
                       {"out", "build/out", "folder for the SVGs"}},
                      argc, argv);
    Config c;
    if (a.on("quick")) c.afm_steps = 2000, c.din_steps = 1500;
    c.seeds = a.integers("seeds", 0, 4294967295);
    c.out_dir = a.text("out");
    std::filesystem::create_directories(c.out_dir);
    factorization_machines(c);
    interest_pooling(c);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
