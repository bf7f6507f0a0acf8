// examples/04_seq2seq - the encoder-decoder, and where it breaks: long inputs.
//
// New since 03: two networks. An encoder GRU reads a sequence of letters and keeps only its
// final state, the context vector; a decoder GRU, started from that vector, writes the
// sequence reversed. Trained on lengths 3-30, then scored by exact match per source-length
// bucket: accuracy falls as sources grow, because one fixed-size vector must hold them all.
// The pre-attention tricks can be switched on: reading the source backwards, or twice. With
// --seeds 1,2,3 every model trains once per seed and the table shows mean and range.
//   build/examples/04_seq2seq [--trick none|reverse|double|all|T,T,...] [--task reverse|copy]
//                             [--steps N] [--seeds S,S,...] [--quick] [--out DIR]
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include "data/batch.h"
#include "data/metrics.h"
#include "data/tasks.h"
#include "examples/common/args.h"
#include "examples/common/length_accuracy.h"
#include "nn/decoding/decoding.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "nn/recurrent/seq2seq.h"
#include "seqgrad.h"
#include "viz/plot.h"
#include "viz/progress.h"

using namespace seqgrad;

// ===============================================================================================
// Config

struct Config {
  std::string task = "reverse", out_dir = "build/out";
  std::vector<std::string> tricks{"none"};  // one model per trick, side by side
  int64_t steps = 3000, batch = 64, min_len = 3, max_len = 30, symbols = 10, hidden = 128, embed = 32;
  int64_t train_pairs = 20000, test_pairs = 1200;
  real lr = real(0.002);
  std::vector<int64_t> seeds{42};  // one training run per seed (the initial weights)
};

Config parse(int argc, char** argv) {
  const cli::Args a("04_seq2seq",
                    "04_seq2seq [--trick T,T,...] [--task T] [--steps N] [--seeds S,S,...] [--quick] [--out DIR]",
                    {{"trick", "none", "how the encoder reads the source: none, reverse, double, a list, or all three"},
                     {"task", "reverse", "the toy task: copy, reverse, sort, date, en-zh or en-fr"},
                     {"steps", "3000", "training steps"},
                     {"seeds", "42", "seeds of the initial weights, comma-separated; two or more: mean and range"},
                     {"quick", "false", "200 steps, 300 test pairs", true},
                     {"out", "build/out", "folder for the SVG"}},
                    argc, argv);
  Config c;
  c.tricks = a.text("trick") == "all" ? std::vector<std::string>{"none", "reverse", "double"}
                                      : a.choice_list("trick", {"none", "reverse", "double"});
  c.task = a.choice("task", data::tasks().names());
  c.steps = a.on("quick") && !a.given("steps") ? 200 : a.integer("steps", 1, 1000000);
  if (a.on("quick")) c.test_pairs = 300;
  c.seeds = a.integers("seeds", 0, 4294967295);
  c.out_dir = a.text("out");
  return c;
}

// The source as the encoder sees it: as is, read backwards, or written twice.
std::vector<int64_t> apply_trick(std::vector<int64_t> src, const std::string& trick) {
  if (trick == "reverse") std::reverse(src.begin(), src.end());
  if (trick == "double") {
    const std::vector<int64_t> once = src;
    src.insert(src.end(), once.begin(), once.end());
  }
  return src;
}

// ===============================================================================================
// One experiment: train a model with one trick from one seed, return exact match per length bucket.

std::map<int64_t, double> run(const Config& c, const std::string& trick, int64_t seed, const data::Vocab& vocab,
                              const data::EncodedPairs& train, const data::EncodedPairs& test) {
  manual_seed(static_cast<uint64_t>(seed));
  nn::Seq2Seq model(nn::Seq2SeqOptions(vocab.size(), vocab.size()).with_hidden_size(c.hidden).with_embed_dim(c.embed));
  nn::Adam opt(model.parameters(), nn::AdamOptions(c.lr));

  data::EncodedPairs seen = train;  // the encoder's view of the sources
  for (auto& s : seen.src) s = apply_trick(s, trick);
  std::vector<int64_t> lengths;
  for (const auto& s : seen.src) lengths.push_back(static_cast<int64_t>(s.size()));

  viz::ProgressBar bar(c.steps, "train " + trick + (c.seeds.size() > 1 ? ", seed " + std::to_string(seed) : ""));
  int64_t step = 0;
  for (uint64_t epoch = 0; step < c.steps; ++epoch)
    for (const auto& idx : data::make_batches(lengths, c.batch, epoch)) {
      if (++step > c.steps) break;
      const data::Batch b = seen.batch(idx);
      Variable logits = model.forward(b.src, b.src_lengths, b.tgt_in);  // (B, T, V)
      Variable loss = nn::cross_entropy(logits, b.tgt_out, nn::CrossEntropyOptions().with_ignore_index(data::Vocab::kPad));
      opt.zero_grad();
      loss.backward();
      nn::clip_grad_norm(model.parameters(), 1);
      opt.step();
      int64_t tokens = 0;
      for (int64_t n : b.tgt_lengths) tokens += n;
      bar.update(step, {{"loss", loss.item()}}, tokens);
    }
  bar.finish();

  // Evaluation: greedy decoding, exact match of the whole sequence, per bucket of 5 lengths
  // (the same measure as examples 05 and 06).
  return examples::exact_match_by_length(model, test, c.min_len, nn::DecodeOptions().with_max_len(c.max_len + 2),
                                         [&](const std::vector<int64_t>& src) { return apply_trick(src, trick); });
}

int main(int argc, char** argv) {
  try {
    const Config c = parse(argc, argv);

    // ---------------------------------------------------------------------------------------------
    // Data: letter sequences of length 3-30; the target is the source reversed (or copied)
    const std::string& task = c.task;  // a registered task's name (data/tasks.h)
    const auto opts = data::TaskOptions().with_lengths(c.min_len, c.max_len).with_symbols(c.symbols);
    const std::vector<data::Pair> train_pairs = data::make_pairs(task, data::TaskOptions(opts).with_n(c.train_pairs).with_seed(1));
    const std::vector<data::Pair> test_pairs = data::make_pairs(task, data::TaskOptions(opts).with_n(c.test_pairs).with_seed(2));
    data::Vocab vocab;
    for (char ch = 'a'; ch < 'a' + c.symbols; ++ch) vocab.add(std::string(1, ch));
    const auto tok = data::Tokenization::Space;
    const data::EncodedPairs train = data::encode_pairs(train_pairs, vocab, tok, vocab, tok);
    const data::EncodedPairs test = data::encode_pairs(test_pairs, vocab, tok, vocab, tok);
    std::cout << "task " << c.task << ": " << train.size() << " training pairs, e.g. \"" << train_pairs[0].source
              << "\" -> \"" << train_pairs[0].target << "\"\n";

    // ---------------------------------------------------------------------------------------------
    // Train and evaluate each requested variant
    const std::vector<std::string>& tricks = c.tricks;
    std::vector<data::BucketResults> runs(c.seeds.size());  // one per seed
    for (size_t s = 0; s < c.seeds.size(); ++s)
      for (const std::string& trick : tricks) runs[s][trick] = run(c, trick, c.seeds[s], vocab, train, test);

    // ---------------------------------------------------------------------------------------------
    // Report: one row per length bucket, one column per variant (over several seeds: mean and
    // range); the plot draws the means
    std::cout << "\nexact match by source length (" << c.task << ", " << c.steps << " steps)"
              << examples::over_seeds(c.seeds) << "\n";
    std::cout << (runs.size() == 1 ? data::bucket_table(runs[0], tricks, 5, c.max_len)
                                   : data::bucket_table_over_runs(runs, tricks, 5, c.max_len));
    data::BucketResults results = data::bucket_mean(runs);
    viz::LinePlot plot("Seq2seq without attention: exact match vs. source length", "source length", "exact match");
    for (const auto& t : tricks) {
      const auto [x, y] = data::bucket_curve(results[t], 5);
      plot.add_series(t == "none" ? "seq2seq" : "seq2seq, source " + std::string(t == "reverse" ? "reversed" : "twice"), x, y);
    }
    std::filesystem::create_directories(c.out_dir);
    plot.save(c.out_dir + "/seq2seq_accuracy.svg");
    std::cout << "wrote " << c.out_dir << "/seq2seq_accuracy.svg\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
