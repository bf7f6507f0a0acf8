// examples/05_attention - attention fixes the long-input failure of plain seq2seq.
//
// New since 04: at every decoder step the model scores all encoder states, softmaxes the
// scores into alignment weights and reads their weighted sum (nn/attention/attention_seq2seq.h). Same
// task, lengths and buckets as 04: reverse letter sequences of length 3-30. We train the plain
// encoder-decoder and Luong-style attention with several score functions (and, on request,
// Bahdanau's decoder, local-p, local-m and hard attention), print exact match per length bucket for
// each, draw the table as one SVG, and show the alignment of one long example as a heatmap.
// Two models train at a time, one per core. With --seeds 1,2,3 every model trains once per
// seed and the table shows mean and range.
//   build/examples/05_attention [--models none,dot,general,concat,hard] [--steps N] [--seeds S,S,...]
//                               [--quick] [--out DIR]
//   models: none, dot, general, concat, additive, scaled-dot, cosine, mlp, location, bahdanau, local,
//           local-m, hard
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

#include "data/batch.h"
#include "data/metrics.h"
#include "data/tasks.h"
#include "examples/common/args.h"
#include "examples/common/length_accuracy.h"
#include "nn/attention/attention_seq2seq.h"
#include "nn/decoding/decoding.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "nn/recurrent/seq2seq.h"
#include "seqgrad.h"
#include "viz/heatmap.h"
#include "viz/plot.h"
#include "viz/progress.h"

using namespace seqgrad;

// ===============================================================================================
// Config

struct Config {
  std::vector<std::string> models{"none", "dot", "general", "concat", "hard"};
  std::string out_dir = "build/out";
  int64_t steps = 1500, batch = 64, min_len = 3, max_len = 30, symbols = 10, hidden = 64, embed = 32;
  int64_t train_pairs = 20000, test_pairs = 1200;
  real lr = real(0.003);
  std::vector<int64_t> seeds{42};  // one training run per seed (the initial weights)
};

Config parse(int argc, char** argv) {
  const cli::Args a("05_attention", "05_attention [--models M,M,...] [--steps N] [--seeds S,S,...] [--quick] [--out DIR]",
                    {{"models", "none,dot,general,concat,hard", "comma-separated: none, dot, general, concat, additive, "
                                                               "scaled-dot, cosine, mlp, location, bahdanau, local, local-m, hard"},
                     {"steps", "1500", "training steps per model"},
                     {"seeds", "42", "seeds of the initial weights, comma-separated; two or more: mean and range"},
                     {"quick", "false", "150 steps, 200 test pairs", true},
                     {"out", "build/out", "folder for the SVGs"}},
                    argc, argv);
  Config c;
  c.models = a.items("models");  // distinct: one model named twice would train twice
  c.steps = a.on("quick") && !a.given("steps") ? 150 : a.integer("steps", 1, 1000000);
  if (a.on("quick")) c.test_pairs = 200;
  c.seeds = a.integers("seeds", 0, 4294967295);
  c.out_dir = a.text("out");
  return c;
}

// ===============================================================================================
// The models, behind one interface: a training loss for a batch, and greedy decoding.

struct Experiment {
  std::string name;
  int64_t seed;
  std::shared_ptr<nn::Module> module;
  std::function<Variable(const data::Batch&)> loss;
  nn::EncoderDecoder* model;  // the same model, as decoding.h sees it
};

Experiment make_experiment(const std::string& name, int64_t seed, const Config& c, int64_t V) {
  manual_seed(static_cast<uint64_t>(seed));
  const auto ignore_pad = nn::CrossEntropyOptions().with_ignore_index(data::Vocab::kPad);
  Experiment e{name, seed, nullptr, nullptr, nullptr};
  if (name == "none") {  // the encoder-decoder of example 04
    auto m = std::make_shared<nn::Seq2Seq>(nn::Seq2SeqOptions(V, V).with_hidden_size(c.hidden).with_embed_dim(c.embed));
    e.module = m;
    e.loss = [m, ignore_pad](const data::Batch& b) {
      return nn::cross_entropy(m->forward(b.src, b.src_lengths, b.tgt_in), b.tgt_out, ignore_pad);
    };
    e.model = m.get();
    return e;
  }
  auto o = nn::AttentionSeq2SeqOptions(V, V).with_hidden_size(c.hidden).with_embed_dim(c.embed);
  if (name == "bahdanau") {
    o.with_style(nn::AttentionStyle::Bahdanau).with_score("additive").with_bidirectional(true);
  } else if (name == "local" || name == "local-m") {
    o.with_score("general").with_local(true, 3, /*monotonic=*/name == "local-m");
  } else if (name == "hard") {
    o.with_score("general").with_hard(true);
  } else {
    o.with_score(name).with_max_source_len(c.max_len);  // (only the location score needs it)
  }
  auto m = std::make_shared<nn::AttentionSeq2Seq>(o);
  e.module = m;
  auto baseline = std::make_shared<real>(-1);
  e.loss = [m, ignore_pad, baseline](const data::Batch& b) {
    // Hard attention: the sampled positions get their gradient from REINFORCE, each step
    // rewarded by how well it predicted its own target token.
    return nn::attention_training_loss(*m, b.src, b.src_lengths, b.tgt_in, b.tgt_out, ignore_pad, *baseline);
  };
  e.model = m.get();
  return e;
}

// ===============================================================================================
// Training and evaluation

// Trains one model. Progress goes to a private buffer that is copied to std::cout a whole line
// at a time, so two models training side by side do not garble each other's lines.
void train(Experiment& e, const Config& c, const data::EncodedPairs& data, std::mutex& print) {
  nn::Adam opt(e.module->parameters(), nn::AdamOptions(c.lr));
  std::vector<int64_t> lengths;
  for (const auto& s : data.src) lengths.push_back(static_cast<int64_t>(s.size()));
  std::ostringstream log;
  auto flush = [&] {
    std::lock_guard<std::mutex> lock(print);
    std::cout << log.str() << std::flush;
    log.str("");
  };
  {
    const std::string label = "train " + e.name + (c.seeds.size() > 1 ? ", seed " + std::to_string(e.seed) : "");
    viz::ProgressBar bar(c.steps, label, log,
                         viz::ProgressOptions().with_mode(viz::ProgressMode::Log));  // whole lines, every 10%
    int64_t step = 0;
    for (uint64_t epoch = 0; step < c.steps; ++epoch)
      for (const auto& idx : data::make_batches(lengths, c.batch, epoch)) {
        if (++step > c.steps) break;
        Variable loss = e.loss(data.batch(idx));
        opt.zero_grad();
        loss.backward();
        nn::clip_grad_norm(e.module->parameters(), 1);
        opt.step();
        bar.update(step, {{"loss", loss.item()}});
        if (!log.str().empty()) flush();
      }
  }
  flush();
  e.module->eval();
}

int main(int argc, char** argv) {
  try {
    const Config c = parse(argc, argv);
    // ---------------------------------------------------------------------------------------------
    // Data: exactly as in example 04
    const auto opts = data::TaskOptions().with_lengths(c.min_len, c.max_len).with_symbols(c.symbols);
    const auto train_pairs = data::make_pairs(data::Task::Reverse, data::TaskOptions(opts).with_n(c.train_pairs).with_seed(1));
    const auto test_pairs = data::make_pairs(data::Task::Reverse, data::TaskOptions(opts).with_n(c.test_pairs).with_seed(2));
    data::Vocab vocab;
    for (char ch = 'a'; ch < 'a' + c.symbols; ++ch) vocab.add(std::string(1, ch));
    const auto tok = data::Tokenization::Space;
    const data::EncodedPairs train_data = data::encode_pairs(train_pairs, vocab, tok, vocab, tok);
    const data::EncodedPairs test_data = data::encode_pairs(test_pairs, vocab, tok, vocab, tok);

    // ---------------------------------------------------------------------------------------------
    // Train and evaluate every model
    // Models are built one after another (their initial weights come from the shared seeded
    // generator), then trained two at a time, one per core: each model's small matrices keep a
    // core busy on their own, and no two threads touch the same model.
    // Over several seeds every (seed, model) pair is one more job for the same two workers.
    std::vector<Experiment> experiments;
    for (int64_t seed : c.seeds)
      for (const std::string& name : c.models) experiments.push_back(make_experiment(name, seed, c, vocab.size()));
    std::vector<data::BucketResults> runs(c.seeds.size());  // one per seed
    std::mutex print, store;
    examples::two_at_a_time(experiments.size(), [&](size_t i) {
      train(experiments[i], c, train_data, print);
      std::map<int64_t, double> accuracy = examples::exact_match_by_length(
          *experiments[i].model, test_data, c.min_len, nn::DecodeOptions().with_max_len(c.max_len + 2));
      std::lock_guard<std::mutex> lock(store);
      runs[i / c.models.size()][experiments[i].name] = accuracy;
    });

    // ---------------------------------------------------------------------------------------------
    // Report: the table (over several seeds: mean and range), the plot of the means
    std::cout << "\nexact match by source length (reverse, " << c.steps << " steps, hidden " << c.hidden << ")"
              << examples::over_seeds(c.seeds) << "\n";
    std::cout << (runs.size() == 1 ? data::bucket_table(runs[0], c.models, 5, c.max_len)
                                   : data::bucket_table_over_runs(runs, c.models, 5, c.max_len));
    data::BucketResults results = data::bucket_mean(runs);
    std::filesystem::create_directories(c.out_dir);
    viz::LinePlot plot("Exact match vs. source length: with and without attention", "source length", "exact match");
    for (const auto& m : c.models) {
      const auto [x, y] = data::bucket_curve(results[m], 5);
      plot.add_series(m == "none" ? "no attention" : m, x, y);
    }
    plot.save(c.out_dir + "/attention_accuracy.svg");
    std::cout << "wrote " << c.out_dir << "/attention_accuracy.svg\n";

    // ---------------------------------------------------------------------------------------------
    // The alignment of one long example, from the first attention model (of the first seed)
    for (Experiment& e : experiments) {
      if (e.name == "none") continue;
      const std::vector<int64_t> src = test_data.src[0];
      const nn::DecodeResult d = nn::greedy_decode(*e.model, data::pad_sequences({src}), {static_cast<int64_t>(src.size())},
                                                   nn::DecodeOptions().with_max_len(c.max_len + 2).with_need_weights(true));
      const Tensor& a = d.cross_attention[0][0];  // one layer, one head: (1, T_out, S)
      const Tensor weights = a.reshape({a.size(1), a.size(2)});
      std::vector<std::string> rows = vocab.decode(d.tokens[0]), cols = vocab.decode(src);
      if (weights.size(0) > static_cast<int64_t>(rows.size())) rows.push_back("<eos>");
      viz::Heatmap map(rows, cols, weights);  // (T_out, S)
      map.set_title("Alignment (" + e.name + "): source along the top, output down the side");
      map.save(c.out_dir + "/attention_heatmap.svg");
      std::cout << "\nalignment of \"" << test_pairs[0].source << "\" (" << e.name << "):\n" << map.to_text() << "wrote "
                << c.out_dir << "/attention_heatmap.svg\n";
      break;
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
