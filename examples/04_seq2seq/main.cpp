// examples/04_seq2seq - the encoder-decoder, and where it breaks: long inputs.
//
// New since 03: two networks. An encoder GRU reads a sequence of letters and keeps only its
// final state, the context vector; a decoder GRU, started from that vector, writes the
// sequence reversed. Trained on lengths 3-30, then scored by exact match per source-length
// bucket: accuracy falls as sources grow, because one fixed-size vector must hold them all.
// The pre-attention tricks can be switched on: reading the source backwards, or twice.
//   build/examples/04_seq2seq [--trick none|reverse|double|all] [--task reverse|copy]
//                             [--steps N] [--quick] [--out DIR]
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include "data/batch.h"
#include "data/metrics.h"
#include "data/tasks.h"
#include "examples/common/args.h"
#include "examples/common/length_accuracy.h"
#include "nn/decoding.h"
#include "nn/loss.h"
#include "nn/optim.h"
#include "nn/seq2seq.h"
#include "seqgrad.h"
#include "viz/plot.h"
#include "viz/progress.h"

using namespace seqgrad;

// ===============================================================================================
// Config

struct Config {
  std::string task = "reverse", trick = "none", out_dir = "build/out";
  int64_t steps = 3000, batch = 64, min_len = 3, max_len = 30, symbols = 10, hidden = 128, embed = 32;
  int64_t train_pairs = 20000, test_pairs = 1200;
  real lr = real(0.002);
};

Config parse(int argc, char** argv) {
  const cli::Args a("04_seq2seq", "04_seq2seq [--trick none|reverse|double|all] [--task T] [--steps N] [--quick] [--out DIR]",
                    {{"trick", "none", "how the encoder reads the source: none, reverse, double, or all three"},
                     {"task", "reverse", "the toy task: copy, reverse, sort, date, en-zh or en-fr"},
                     {"steps", "3000", "training steps"},
                     {"quick", "false", "200 steps, 300 test pairs", true},
                     {"out", "build/out", "folder for the SVG"}},
                    argc, argv);
  Config c;
  c.trick = a.choice("trick", {"none", "reverse", "double", "all"});
  c.task = a.choice("task", {"copy", "reverse", "sort", "date", "en-zh", "en-fr"});
  c.steps = a.on("quick") && !a.given("steps") ? 200 : a.integer("steps", 1, 1000000);
  if (a.on("quick")) c.test_pairs = 300;
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
// One experiment: train a model with one trick, return exact match per length bucket.

std::map<int64_t, double> run(const Config& c, const std::string& trick, const data::Vocab& vocab,
                              const data::EncodedPairs& train, const data::EncodedPairs& test) {
  manual_seed(42);
  nn::Seq2Seq model(nn::Seq2SeqOptions(vocab.size(), vocab.size()).with_hidden_size(c.hidden).with_embed_dim(c.embed));
  nn::Adam opt(model.parameters(), nn::AdamOptions(c.lr));

  data::EncodedPairs seen = train;  // the encoder's view of the sources
  for (auto& s : seen.src) s = apply_trick(s, trick);
  std::vector<int64_t> lengths;
  for (const auto& s : seen.src) lengths.push_back(static_cast<int64_t>(s.size()));

  viz::ProgressBar bar(c.steps, "train " + trick);
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
    const data::Task task = data::parse_task(c.task);
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
    std::vector<std::string> tricks = c.trick == "all" ? std::vector<std::string>{"none", "reverse", "double"}
                                                       : std::vector<std::string>{c.trick};
    data::BucketResults results;
    for (const std::string& trick : tricks) results[trick] = run(c, trick, vocab, train, test);

    // ---------------------------------------------------------------------------------------------
    // Report: one row per length bucket, one column per variant
    std::cout << "\nexact match by source length (" << c.task << ", " << c.steps << " steps)\n";
    std::cout << data::bucket_table(results, tricks, 5, c.max_len);
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
