// examples/06_transformer - attention is all you need: the same task with no recurrence at all.
//
// New since 05: nothing reads the sequence step by step. The encoder's positions attend to each
// other (self-attention), sinusoidal positional encodings tell them where they are, and the
// decoder attends causally to its own past and to the encoder with several heads at once
// (nn/transformer/transformer.h). Training runs every target position in parallel; decoding still goes
// token by token, with a key/value cache (nn/decoding/decoding.h). Same task, lengths and buckets as 04
// and 05: reverse letter sequences of length 3-30, exact match per bucket of 5 source lengths.
// With --seeds 1,2,3 the model trains once per seed and the table shows mean and range.
//   build/examples/06_transformer [--steps N] [--beam K] [--seeds S,S,...] [--post-norm] [--quick] [--out DIR]
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "data/batch.h"
#include "data/metrics.h"
#include "data/tasks.h"
#include "examples/common/args.h"
#include "examples/common/length_accuracy.h"
#include "nn/decoding/decoding.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "nn/optim/schedule.h"
#include "nn/transformer/transformer.h"
#include "seqgrad.h"
#include "viz/heatmap.h"
#include "viz/plot.h"
#include "viz/progress.h"

using namespace seqgrad;

// ===============================================================================================
// Config

struct Config {
  std::string out_dir = "build/out";
  int64_t steps = 2000, batch = 32, min_len = 3, max_len = 30, symbols = 10;
  int64_t train_pairs = 20000, test_pairs = 1200;
  // The model: C = 64, 4 heads of 16, 2 encoder and 2 decoder layers, FFN width 128, pre-norm.
  int64_t d_model = 64, heads = 4, layers = 2, ff = 128, warmup = 300, beam = 4;
  real dropout = 0, label_smoothing = real(0.1), lr_factor = 1;
  bool norm_first = true;
  std::vector<int64_t> seeds{42};  // one training run per seed (the initial weights)
};

Config parse(int argc, char** argv) {
  const cli::Args a("06_transformer",
                    "06_transformer [--steps N] [--beam K] [--seeds S,S,...] [--post-norm] [--quick] [--out DIR]",
                    {{"steps", "2000", "training steps"},
                     {"beam", "4", "beam width for the test set (1 = greedy)"},
                     {"seeds", "42", "seeds of the initial weights, comma-separated; two or more: mean and range"},
                     {"post-norm", "false", "LayerNorm after each residual, as the original paper", true},
                     {"quick", "false", "300 steps, 300 test pairs", true},
                     {"out", "build/out", "folder for the SVGs"}},
                    argc, argv);
  Config c;
  c.steps = a.on("quick") && !a.given("steps") ? 300 : a.integer("steps", 1, 1000000);
  if (a.on("quick")) c.test_pairs = 300;
  c.beam = a.integer("beam", 1, 64);
  c.seeds = a.integers("seeds", 0, 4294967295);
  c.norm_first = !a.on("post-norm");
  c.out_dir = a.text("out");
  return c;
}

// ===============================================================================================
// Training: teacher forcing on whole batches, Adam(0.9, 0.98, 1e-9), warm-up then 1/sqrt(step)

void train(nn::Transformer& model, const Config& c, const data::EncodedPairs& data, const std::string& label) {
  nn::Adam opt(model.parameters(), nn::AdamOptions(1).with_betas(real(0.9), real(0.98)).with_eps(real(1e-9)));
  nn::NoamLR schedule(opt, c.d_model, c.warmup, c.lr_factor);
  const auto loss_options = nn::CrossEntropyOptions().with_ignore_index(data::Vocab::kPad).with_label_smoothing(c.label_smoothing);
  std::vector<int64_t> lengths;
  for (const auto& s : data.src) lengths.push_back(static_cast<int64_t>(s.size()));
  model.train();
  viz::ProgressBar bar(c.steps, label);
  int64_t step = 0;
  for (uint64_t epoch = 0; step < c.steps; ++epoch)
    for (const auto& idx : data::make_batches(lengths, c.batch, epoch)) {
      if (++step > c.steps) break;
      const data::Batch b = data.batch(idx);
      Variable logits = model.forward(b.src, b.src_lengths, b.tgt_in);  // (B, T, V), all T at once
      Variable loss = nn::cross_entropy(logits, b.tgt_out, loss_options);
      opt.zero_grad();
      loss.backward();
      opt.step();
      schedule.step();
      int64_t tokens = 0;
      for (int64_t n : b.tgt_lengths) tokens += n;
      bar.update(step, {{"loss", loss.item()}, {"lr", opt.lr()}}, tokens);
    }
  bar.finish();
  model.eval();
}

int main(int argc, char** argv) {
  try {
    const Config c = parse(argc, argv);
    // ---------------------------------------------------------------------------------------------
    // Data: exactly as in examples 04 and 05
    const auto opts = data::TaskOptions().with_lengths(c.min_len, c.max_len).with_symbols(c.symbols);
    const auto train_pairs = data::make_pairs(data::Task::Reverse, data::TaskOptions(opts).with_n(c.train_pairs).with_seed(1));
    const auto test_pairs = data::make_pairs(data::Task::Reverse, data::TaskOptions(opts).with_n(c.test_pairs).with_seed(2));
    data::Vocab vocab;
    for (char ch = 'a'; ch < 'a' + c.symbols; ++ch) vocab.add(std::string(1, ch));
    const auto tok = data::Tokenization::Space;
    const data::EncodedPairs train_data = data::encode_pairs(train_pairs, vocab, tok, vocab, tok);
    const data::EncodedPairs test_data = data::encode_pairs(test_pairs, vocab, tok, vocab, tok);

    // ---------------------------------------------------------------------------------------------
    // Model: one vocabulary, so source and target share one embedding table
    const auto options = nn::TransformerOptions(vocab.size(), vocab.size())
                             .with_d_model(c.d_model)
                             .with_nhead(c.heads)
                             .with_num_layers(c.layers)
                             .with_dim_feedforward(c.ff)
                             .with_dropout(c.dropout)
                             .with_norm_first(c.norm_first)
                             .with_share_embeddings(true)
                             .with_max_len(c.max_len + 8);

    // ---------------------------------------------------------------------------------------------
    // Training and evaluation, once per seed: greedy, then beam search. The first seed's model
    // is kept for the pictures below.
    const std::string greedy = "transformer", beam = "beam " + std::to_string(c.beam);
    std::vector<std::string> columns{greedy};
    if (c.beam > 1) columns.push_back(beam);
    std::vector<data::BucketResults> runs;  // one per seed
    std::shared_ptr<nn::Transformer> first;
    for (int64_t seed : c.seeds) {
      manual_seed(static_cast<uint64_t>(seed));
      auto model = std::make_shared<nn::Transformer>(options);
      if (!first)
        std::cout << "Transformer: d_model " << c.d_model << ", " << c.heads << " heads, " << c.layers << "+" << c.layers
                  << " layers, " << model->num_parameters() << " parameters\n";
      train(*model, c, train_data, c.seeds.size() > 1 ? "train transformer, seed " + std::to_string(seed) : "train transformer");
      // Exact match per bucket of 5 source lengths, measured as in examples 04 and 05.
      const auto decode = nn::DecodeOptions().with_max_len(c.max_len + 2);
      data::BucketResults results;
      results[greedy] = examples::exact_match_by_length(*model, test_data, c.min_len, decode);
      if (c.beam > 1)
        results[beam] = examples::exact_match_by_length(*model, test_data, c.min_len, nn::DecodeOptions(decode).with_beam_size(c.beam));
      runs.push_back(results);
      if (!first) first = model;
    }
    nn::Transformer& model = *first;

    // ---------------------------------------------------------------------------------------------
    // Report: the table (over several seeds: mean and range) and the plot of the means, in the
    // format of 04 and 05
    std::cout << "\nexact match by source length (reverse, " << c.steps << " steps, d_model " << c.d_model << ")"
              << examples::over_seeds(c.seeds) << "\n";
    std::cout << (runs.size() == 1 ? data::bucket_table(runs[0], columns, 5, c.max_len, 12)
                                   : data::bucket_table_over_runs(runs, columns, 5, c.max_len));
    data::BucketResults results = data::bucket_mean(runs);
    std::filesystem::create_directories(c.out_dir);
    viz::LinePlot plot("Transformer: exact match vs. source length", "source length", "exact match");
    for (const auto& m : columns) {
      const auto [x, y] = data::bucket_curve(results[m], 5);
      plot.add_series(m == greedy ? "transformer (greedy)" : "transformer (" + m + ")", x, y);
    }
    plot.save(c.out_dir + "/transformer_accuracy.svg");
    std::cout << "wrote " << c.out_dir << "/transformer_accuracy.svg\n";

    // ---------------------------------------------------------------------------------------------
    // Every head of the encoder-decoder attention, for one long example
    size_t pick = 0;
    for (size_t i = 0; i < test_data.size(); ++i)
      if (test_data.src[i].size() >= 20) { pick = i; break; }
    const std::vector<int64_t> src = test_data.src[pick];
    const nn::DecodeResult d = nn::greedy_decode(model, data::pad_sequences({src}), {static_cast<int64_t>(src.size())},
                                                 nn::DecodeOptions().with_max_len(c.max_len + 2).with_need_weights(true));
    std::vector<std::string> rows = vocab.decode(d.tokens[0]), cols = vocab.decode(src);
    const std::vector<Tensor>& layers = d.cross_attention[0];  // per layer (NH, T_out, S)
    if (layers[0].size(1) > static_cast<int64_t>(rows.size())) rows.push_back("<eos>");
    viz::HeatmapGrid grid(/*columns=*/c.heads);
    for (size_t l = 0; l < layers.size(); ++l)
      for (int64_t h = 0; h < c.heads; ++h) {
        const Tensor w = slice(layers[l], 0, h, h + 1).reshape({layers[l].size(1), layers[l].size(2)});  // (T_out, S)
        grid.add(viz::Heatmap(rows, cols, w).set_title(cat("layer ", l, ", head ", h)).set_value_range(0, 1));
      }
    grid.set_title("Encoder-decoder attention of \"" + test_pairs[pick].source + "\", every layer and head");
    grid.save(c.out_dir + "/transformer_heads.svg");
    std::string output;
    for (const std::string& t : rows) output += (output.empty() ? "" : " ") + t;
    std::cout << "\n\"" << test_pairs[pick].source << "\" -> \"" << output << "\"\n";
    const Tensor last = slice(layers.back(), 0, 0, 1).reshape({layers.back().size(1), layers.back().size(2)});
    std::cout << "last layer, head 0:\n" << viz::Heatmap(rows, cols, last).set_value_range(0, 1).to_text();
    std::cout << "wrote " << c.out_dir << "/transformer_heads.svg\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
