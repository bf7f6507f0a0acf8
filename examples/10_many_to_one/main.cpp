// examples/10_many_to_one - many-to-one: an LSTM reads a whole review and gives one label.
//
// New since 03: the output is one vector per sequence, not one per step, so the T states of
// the LSTM must be pooled into one. We compare three ways on the same data and model size:
//   last       h_T, the state at each review's own last word (padding-aware)
//   mean       (1/T) sum_t h_t
//   attention  sum_t a_t h_t with a_t = softmax_t(v^T tanh(W h_t + b)): a learned query scores
//              every state (chapter 7's additive score with a fixed, learned question)
// The reviews come from a small grammar: filler words around one opinion ("not good", "awful"),
// which decides the label. The opinion sits anywhere in 10-60 words. We print test accuracy
// while training (the curves go to many_to_one_curves.svg), then by the opinion's distance
// from the end: last-state pooling has to carry it that far, through every later step.
//   build/examples/10_many_to_one [--steps N] [--quick] [--out DIR]
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>

#include "data/batch.h"
#include "data/vocab.h"
#include "examples/common/args.h"
#include "nn/attention/attention.h"
#include "nn/core/embedding.h"
#include "nn/core/linear.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "nn/recurrent/lstm.h"
#include "seqgrad.h"
#include "viz/heatmap.h"
#include "viz/plot.h"
#include "viz/progress.h"

using namespace seqgrad;

// ===============================================================================================
// Data: reviews with one opinion, labelled 1 (positive) or 0 (negative)

struct Review {
  std::vector<std::string> words;
  int64_t label = 0, opinion_at = 0;  // the opinion word's position
};

std::vector<Review> make_reviews(int64_t n, uint64_t seed) {
  const std::vector<std::string> filler = {"the",  "movie", "plot",  "actor", "was",   "and",    "then",  "it",
                                           "story", "music", "ending", "scene", "quite", "really", "a",     "film",
                                           "cast",  "felt",  "very",   "long",  "with",  "some",   "moments", "overall"};
  const std::vector<std::string> positive = {"good", "great", "superb", "fine"}, negative = {"bad", "awful", "dull", "poor"};
  Generator g(seed);
  std::vector<Review> reviews;
  for (int64_t i = 0; i < n; ++i) {
    Review r;
    const int64_t length = 10 + static_cast<int64_t>(g.randint(51));  // 10..60 words
    const bool good = g.randint(2) == 1, negated = g.randint(2) == 1;
    const int64_t at = 1 + static_cast<int64_t>(g.randint(static_cast<uint64_t>(length - 1)));  // room for "not" before it
    for (int64_t t = 0; t < length; ++t) r.words.push_back(filler[g.randint(filler.size())]);
    r.words[at] = good ? positive[g.randint(4)] : negative[g.randint(4)];
    if (negated) r.words[at - 1] = "not";
    r.label = good != negated;  // "not bad" is positive
    r.opinion_at = at;
    reviews.push_back(r);
  }
  return reviews;
}

// ===============================================================================================
// Model: embedding -> LSTM -> pooling -> linear

enum class Pooling { Last, Mean, Attention };
const char* pooling_name(Pooling p) { return p == Pooling::Last ? "last" : p == Pooling::Mean ? "mean" : "attention"; }

struct Classifier : nn::Module {
  Classifier(Pooling pooling, int64_t vocab, int64_t embed_dim, int64_t hidden) : pooling(pooling) {
    embed = register_module("embed", std::make_shared<nn::Embedding>(vocab, embed_dim, /*padding_idx=*/0));
    lstm = register_module("lstm", std::make_shared<nn::LSTM>(nn::RNNOptions(embed_dim, hidden)));
    if (pooling == Pooling::Attention) {
      attn = register_module("attn", std::make_shared<nn::Linear>(hidden, hidden));               // W, b
      query = register_module("query", std::make_shared<nn::Linear>(hidden, 1, /*bias=*/false));  // v
    }
    out = register_module("out", std::make_shared<nn::Linear>(hidden, 2));
  }
  std::string name() const override { return cat("Classifier(", pooling_name(pooling), ")"); }

  // ids (B, T), lengths (B) -> logits (B, 2); weights (B, T) for attention pooling
  // [docs:pooling]
  Variable forward(const Tensor& ids, const std::vector<int64_t>& lengths, Variable* weights = nullptr) {
    const int64_t B = ids.size(0), T = ids.size(1);
    const nn::RNNResult r = lstm->forward(embed->forward(ids), nn::RNNState{}, lengths);  // output (B, T, H)
    Variable pooled;                                                                      // (B, H)
    if (pooling == Pooling::Last) {
      pooled = reshape(r.state.h, {B, -1});  // (1, B, H): the state at each review's own last word
    } else if (pooling == Pooling::Mean) {
      Tensor count = Tensor::empty({B, 1});
      for (int64_t b = 0; b < B; ++b) count.data()[b] = static_cast<real>(lengths[b]);
      pooled = sum(r.output, 1) / Variable(count);  // padded steps output zeros
    } else {
      Variable scores = squeeze(query->forward(tanh(attn->forward(r.output))), 2);  // v^T tanh(W h_t + b): (B, T)
      nn::AttentionResult a = nn::attend(scores, r.output, nn::padding_mask(lengths, T));
      pooled = a.context;  // sum_t a_t h_t
      if (weights) *weights = a.weights;
    }
    return out->forward(pooled);
  }
  // [docs:end]

  Pooling pooling;
  std::shared_ptr<nn::Embedding> embed;
  std::shared_ptr<nn::LSTM> lstm;
  std::shared_ptr<nn::Linear> attn, query, out;
};

// ===============================================================================================
// Batches of reviews as padded ids

struct Batch {
  Tensor ids, labels;
  std::vector<int64_t> lengths;
};

Batch make_batch(const std::vector<Review>& reviews, size_t first, size_t count, const data::Vocab& vocab) {
  Batch b;
  std::vector<std::vector<int64_t>> ids;
  std::vector<real> labels;
  for (size_t i = first; i < first + count; ++i) {
    const Review& r = reviews[i % reviews.size()];
    ids.push_back(vocab.encode(r.words));
    b.lengths.push_back(static_cast<int64_t>(r.words.size()));
    labels.push_back(static_cast<real>(r.label));
  }
  b.ids = data::pad_sequences(ids);
  b.labels = from_vector(labels, {static_cast<int64_t>(count)});
  return b;
}

int main(int argc, char** argv) {
  try {
    // ---------------------------------------------------------------------------------------------
    // Config
    const cli::Args a("10_many_to_one", "10_many_to_one [--steps N] [--quick] [--out DIR]",
                      {{"steps", "800", "training steps per pooling (accuracy is measured every 50)"},
                       {"quick", "false", "100 steps", true},
                       {"out", "build/out", "folder for the SVGs"}},
                      argc, argv);
    const int64_t steps = a.on("quick") && !a.given("steps") ? 100 : a.integer("steps", 50, 1000000);
    const std::string out_dir = a.text("out");
    const int64_t batch = 32, embed_dim = 16, hidden = 32;
    std::filesystem::create_directories(out_dir);

    // ---------------------------------------------------------------------------------------------
    // Data
    const std::vector<Review> train = make_reviews(20000, /*seed=*/1), test = make_reviews(2000, /*seed=*/2);
    std::vector<std::vector<std::string>> texts;
    for (const Review& r : train) texts.push_back(r.words);
    const data::Vocab vocab = data::Vocab::build(texts);
    std::cout << train.size() << " training reviews, " << test.size() << " test reviews, " << vocab.size()
              << " words. Two of them:\n";
    for (int i = 0; i < 2; ++i) std::cout << "  " << data::join(test[i].words, " ") << "  -> " << (test[i].label ? "positive" : "negative") << "\n";
    const Batch test_batch = make_batch(test, 0, test.size(), vocab);

    // ---------------------------------------------------------------------------------------------
    // Train one classifier per pooling, then score it by the opinion's distance from the end
    std::map<std::string, std::map<int64_t, std::pair<int64_t, int64_t>>> hits;  // pooling -> bucket -> (right, all)
    std::map<std::string, std::vector<double>> curve;                           // pooling -> accuracy every 50 steps
    const std::vector<Pooling> poolings{Pooling::Last, Pooling::Mean, Pooling::Attention};
    const Batch probe = make_batch(test, 0, 500, vocab);  // what the curves are measured on
    for (Pooling pooling : poolings) {
      manual_seed(42);
      Classifier model(pooling, vocab.size(), embed_dim, hidden);
      nn::Adam opt(model.parameters(), nn::AdamOptions(real(0.003)));
      viz::ProgressBar bar(steps, cat("train ", pooling_name(pooling)), std::cout,
                           viz::ProgressOptions().with_mode(viz::ProgressMode::Log));
      for (int64_t step = 1; step <= steps; ++step) {
        const Batch b = make_batch(train, static_cast<size_t>((step - 1) * batch), batch, vocab);
        Variable loss = nn::cross_entropy(model.forward(b.ids, b.lengths), b.labels);
        opt.zero_grad();
        loss.backward();
        nn::clip_grad_norm(model.parameters(), 1);
        opt.step();
        bar.update(step, {{"loss", loss.item()}});
        if (step % 50 == 0) {
          NoGradGuard no_grad;
          const Tensor guess = argmax(model.forward(probe.ids, probe.lengths).value(), -1);
          curve[pooling_name(pooling)].push_back(mean(eq(guess, probe.labels)).item());
        }
      }
      bar.finish();

      NoGradGuard no_grad;
      Variable weights;
      const Tensor predicted = argmax(model.forward(test_batch.ids, test_batch.lengths, &weights).value(), -1);
      for (size_t i = 0; i < test.size(); ++i) {
        const int64_t from_end = static_cast<int64_t>(test[i].words.size()) - 1 - test[i].opinion_at;
        auto& h = hits[pooling_name(pooling)][from_end / 10 * 10];
        h.first += predicted.data()[i] == test_batch.labels.data()[i];
        h.second += 1;
      }
      if (pooling != Pooling::Attention) continue;
      // Where attention pooling looked, for the first short test review
      size_t shown = 0;
      while (test[shown].words.size() > 16) ++shown;
      const int64_t T = static_cast<int64_t>(test[shown].words.size()), i = static_cast<int64_t>(shown);
      viz::Heatmap map({"weight"}, test[shown].words, slice(slice(weights.value(), 0, i, i + 1), 1, 0, T));
      map.set_title("attention pooling over one review").set_value_range(0, 1);
      map.save(out_dir + "/many_to_one_attention.svg");
      std::cout << map.to_text();
      for (int64_t t = 0; t < T; ++t)
        std::cout << (t ? "  " : "") << test[shown].words[t] << " " << std::fixed << std::setprecision(2) << map.value(0, t);
      std::cout << "\nwrote " << out_dir << "/many_to_one_attention.svg\n";
    }

    // ---------------------------------------------------------------------------------------------
    // Report: the learning curves, then accuracy by distance
    std::cout << "\ntest accuracy while training (500 test reviews)\n  step";
    for (Pooling p : poolings) std::cout << std::setw(11) << pooling_name(p);
    std::cout << "\n";
    viz::LinePlot plot("Many-to-one: test accuracy while training", "step", "accuracy");
    for (size_t k = 0; k < curve["last"].size(); ++k) {
      if ((k + 1) % 2 != 0) continue;  // every 100 steps in the terminal, every 50 in the plot
      std::cout << std::setw(6) << (k + 1) * 50;
      for (Pooling p : poolings) std::cout << std::setw(11) << std::fixed << std::setprecision(3) << curve[pooling_name(p)][k];
      std::cout << "\n";
    }
    for (Pooling p : poolings) {
      std::vector<double> x;
      for (size_t k = 0; k < curve[pooling_name(p)].size(); ++k) x.push_back(static_cast<double>((k + 1) * 50));
      plot.add_series(pooling_name(p), x, curve[pooling_name(p)]);
    }
    plot.save(out_dir + "/many_to_one_curves.svg");
    std::cout << "wrote " << out_dir << "/many_to_one_curves.svg\n";
    std::cout << "\ntest accuracy by the opinion's distance from the end of the review (" << steps << " steps)\n"
              << "words from end";
    for (Pooling p : poolings) std::cout << std::setw(11) << pooling_name(p);
    std::cout << "\n";
    for (const auto& [bucket, unused] : hits["last"]) {
      std::cout << std::setw(8) << bucket << "-" << std::setw(2) << bucket + 9 << "   ";
      for (Pooling p : poolings) {
        const auto [right, all] = hits[pooling_name(p)][bucket];
        std::cout << std::setw(11) << std::fixed << std::setprecision(3) << static_cast<double>(right) / static_cast<double>(all);
      }
      std::cout << "\n";
    }
    std::cout << "         all   ";
    for (Pooling p : poolings) {
      int64_t right = 0, all = 0;
      for (const auto& [bucket, h] : hits[pooling_name(p)]) right += h.first, all += h.second;
      std::cout << std::setw(11) << std::fixed << std::setprecision(3) << static_cast<double>(right) / static_cast<double>(all);
    }
    std::cout << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
