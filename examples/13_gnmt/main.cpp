// examples/13_gnmt - what depth and residual connections buy: a GNMT-style deep LSTM against
// one layer.
//
// New since 05: the model is deep. nn/attention/gnmt.h stacks L LSTM layers in the encoder (the bottom one
// bidirectional) and L in the decoder, where the bottom layer asks the attention and every layer
// above reads the context; from layer 3 on each layer adds its input to its output,
// x_{l+1} = LSTM_l(x_l) + x_l (Wu et al. 2016). We train, on the same data and for the same steps:
//   lstm-attn      05's Luong decoder with an LSTM, one layer (the shallow baseline)
//   gnmt-L-plain   GNMT with L layers and no residual connections (the deep baseline)
//   gnmt-L         GNMT with L layers, residual from layer 3 on
// and report exact match, token accuracy and the losses of each. Two models train at a time.
// With --seeds 1,2,3 every model trains once per seed (the initial weights; the data stay the
// same) and the table shows mean and range.
//   build/examples/13_gnmt [--models lstm-attn,gnmt-4-plain,gnmt-4,gnmt-8] [--steps N] [--seeds S,S,...] [--quick]
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>

#include "data/batch.h"
#include "data/tasks.h"
#include "examples/common/args.h"
#include "examples/common/seeds.h"
#include "nn/attention/attention_seq2seq.h"
#include "nn/decoding/decoding.h"
#include "nn/attention/gnmt.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "seqgrad.h"

using namespace seqgrad;

// ===============================================================================================
// Config

struct Config {
  std::vector<std::string> models;
  std::string task = "sort";
  int64_t steps = 1000, batch = 64, min_len = 3, max_len = 12, symbols = 10, hidden = 24, embed = 32;
  int64_t train_pairs = 20000, test_pairs = 1000;
  real lr = real(0.003);
  std::vector<int64_t> seeds{42};  // one training run per model and seed (the initial weights)
};

Config parse(int argc, char** argv) {
  const cli::Args a("13_gnmt", "13_gnmt [--models M,M,...] [--task T] [--steps N] [--hidden H] [--seeds S,S,...] [--quick]",
                    {{"models", "lstm-attn,gnmt-4-plain,gnmt-4,gnmt-8", "comma-separated: lstm-attn, gnmt-L, gnmt-L-plain (L >= 2)"},
                     {"task", "sort", "the toy task: copy, reverse or sort"},
                     {"steps", "1000", "training steps per model"},
                     {"hidden", "24", "H: every LSTM layer's width"},
                     {"seeds", "42", "seeds of the initial weights, comma-separated (the data stay the same); "
                                     "two or more: mean and range"},
                     {"quick", "false", "lstm-attn, gnmt-4-plain and gnmt-4, 800 steps, 200 test pairs: what residuals buy", true}},
                    argc, argv);
  Config c;
  // --quick leaves out gnmt-8, which costs as much as the other three together.
  c.models = a.on("quick") && !a.given("models") ? std::vector<std::string>{"lstm-attn", "gnmt-4-plain", "gnmt-4"}
                                                 : a.items("models");  // distinct: one model named twice would train twice
  c.task = a.choice("task", {"copy", "reverse", "sort"});
  c.steps = a.on("quick") && !a.given("steps") ? 800 : a.integer("steps", 1, 1000000);
  c.hidden = a.integer("hidden", 2, 1024);
  if (a.on("quick")) c.test_pairs = 200;
  c.seeds = a.integers("seeds", 0, 4294967295);
  return c;
}

// ===============================================================================================
// The models: "lstm-attn", "gnmt-L" or "gnmt-L-plain", each as its module and its decoder

struct Experiment {
  std::string name;
  int64_t seed;
  std::shared_ptr<nn::Module> module;
  nn::EncoderDecoder* model;
  std::vector<double> losses;  // training loss at every step
  double test_loss = 0, token_accuracy = 0, exact_match = 0;
};

Experiment make_experiment(const std::string& name, int64_t seed, const Config& c, int64_t V) {
  manual_seed(static_cast<uint64_t>(seed));
  Experiment e{name, seed, nullptr, nullptr, {}};
  if (name == "lstm-attn") {
    auto m = std::make_shared<nn::AttentionSeq2Seq>(
        nn::AttentionSeq2SeqOptions(V, V).with_cell("lstm").with_hidden_size(c.hidden).with_embed_dim(c.embed));
    e.module = m;
    e.model = m.get();
    return e;
  }
  // "gnmt-4" or "gnmt-4-plain": L = 4, with or without the residual connections
  const bool plain = name.size() > 6 && name.compare(name.size() - 6, 6, "-plain") == 0;
  const std::string digits = name.rfind("gnmt-", 0) == 0 ? name.substr(5, name.size() - 5 - (plain ? 6 : 0)) : "";
  const bool number = !digits.empty() && digits.size() <= 2 && digits.find_first_not_of("0123456789") == std::string::npos;
  const int64_t layers = number ? std::stoi(digits) : 0;
  check(layers >= 2, "13_gnmt: --models expects lstm-attn, gnmt-L or gnmt-L-plain with L >= 2, got '", name, "'");
  auto m = std::make_shared<nn::GNMT>(nn::GNMTOptions(V, V).with_num_layers(layers).with_hidden_size(c.hidden)
                                          .with_embed_dim(c.embed).with_residual(!plain));
  e.module = m;
  e.model = m.get();
  return e;
}

// ===============================================================================================
// Training and evaluation

Variable batch_loss(Experiment& e, const data::Batch& b) {
  const Variable logits = e.model->logits(b.src, b.src_lengths, b.tgt_in, b.tgt_lengths);  // (B, T, V)
  return nn::cross_entropy(logits, b.tgt_out, nn::CrossEntropyOptions().with_ignore_index(data::Vocab::kPad));
}

void train(Experiment& e, const Config& c, const data::EncodedPairs& data, std::mutex& print) {
  nn::Adam opt(e.module->parameters(), nn::AdamOptions(c.lr));
  std::vector<int64_t> lengths;
  for (const auto& s : data.src) lengths.push_back(static_cast<int64_t>(s.size()));
  int64_t step = 0;
  for (uint64_t epoch = 0; step < c.steps; ++epoch)
    for (const auto& idx : data::make_batches(lengths, c.batch, epoch)) {
      if (++step > c.steps) break;
      Variable loss = batch_loss(e, data.batch(idx));
      opt.zero_grad();
      loss.backward();
      nn::clip_grad_norm(e.module->parameters(), 1);
      opt.step();
      e.losses.push_back(loss.item());
      if (step % (c.steps / 5 > 0 ? c.steps / 5 : 1) == 0) {
        std::lock_guard<std::mutex> lock(print);
        const std::string label = e.name + (c.seeds.size() > 1 ? ", seed " + std::to_string(e.seed) : "");
        std::cout << "  " << std::left << std::setw(13) << label << " step " << std::setw(5) << step << " loss "
                  << std::fixed << std::setprecision(4) << loss.item() << "\n" << std::flush;
      }
    }
  e.module->eval();
}

// Teacher-forced loss and next-token accuracy, and greedy exact match, over the test pairs.
void evaluate(Experiment& e, const Config& c, const data::EncodedPairs& test) {
  NoGradGuard no_grad;
  double loss = 0, right = 0, tokens = 0, exact = 0;
  int64_t batches = 0;
  for (size_t start = 0; start < test.size(); start += 100) {
    std::vector<size_t> idx;
    for (size_t i = start; i < std::min(test.size(), start + 100); ++i) idx.push_back(i);
    const data::Batch b = test.batch(idx);
    const Variable logits = e.model->logits(b.src, b.src_lengths, b.tgt_in, b.tgt_lengths);  // (B, T, V)
    loss += nn::cross_entropy(logits, b.tgt_out, nn::CrossEntropyOptions().with_ignore_index(data::Vocab::kPad)).item();
    ++batches;
    const Tensor guess = argmax(logits.value(), -1);  // (B, T)
    for (int64_t i = 0; i < b.tgt_out.numel(); ++i) {
      if (b.tgt_out.data()[i] == data::Vocab::kPad) continue;
      right += guess.data()[i] == b.tgt_out.data()[i];
      ++tokens;
    }
    const nn::DecodeResult d = nn::greedy_decode(*e.model, b.src, b.src_lengths, nn::DecodeOptions().with_max_len(c.max_len + 2));
    for (size_t k = 0; k < idx.size(); ++k) exact += d.tokens[k] == test.tgt[idx[k]];
  }
  e.test_loss = loss / static_cast<double>(batches);
  e.token_accuracy = right / tokens;
  e.exact_match = exact / static_cast<double>(test.size());
}

// The mean training loss over steps [from, to) (1-based from, as printed).
double mean_loss(const std::vector<double>& losses, size_t from, size_t to) {
  double total = 0;
  for (size_t i = from - 1; i < to && i < losses.size(); ++i) total += losses[i];
  return total / static_cast<double>(std::min(to, losses.size()) - (from - 1));
}

int main(int argc, char** argv) {
  try {
    const Config c = parse(argc, argv);
    // ---------------------------------------------------------------------------------------------
    // Data: a toy task on 10 letters, sources of 3-12 tokens; train and test from different seeds
    const auto opts = data::TaskOptions().with_lengths(c.min_len, c.max_len).with_symbols(c.symbols);
    const std::string& task = c.task;  // a registered task's name (data/tasks.h)
    const auto train_pairs = data::make_pairs(task, data::TaskOptions(opts).with_n(c.train_pairs).with_seed(1));
    const auto test_pairs = data::make_pairs(task, data::TaskOptions(opts).with_n(c.test_pairs).with_seed(2));
    data::Vocab vocab;
    for (char ch = 'a'; ch < 'a' + c.symbols; ++ch) vocab.add(std::string(1, ch));
    const auto tok = data::Tokenization::Space;
    const data::EncodedPairs train_data = data::encode_pairs(train_pairs, vocab, tok, vocab, tok);
    const data::EncodedPairs test_data = data::encode_pairs(test_pairs, vocab, tok, vocab, tok);
    std::cout << c.task << ": \"" << train_pairs[0].source << "\" -> \"" << train_pairs[0].target << "\"; "
              << train_data.size() << " training pairs, " << test_data.size() << " test pairs\n";

    // ---------------------------------------------------------------------------------------------
    // Model: built one after another (each from its seed), then trained two at a time; over
    // several seeds every (seed, model) pair is one more job
    std::vector<Experiment> experiments;
    for (int64_t seed : c.seeds)
      for (const std::string& name : c.models) experiments.push_back(make_experiment(name, seed, c, vocab.size()));
    for (size_t m = 0; m < c.models.size(); ++m)
      std::cout << "  " << std::left << std::setw(13) << c.models[m] << experiments[m].module->num_parameters()
                << " parameters\n";
    std::mutex print;
    examples::two_at_a_time(experiments.size(), [&](size_t i) {
      train(experiments[i], c, train_data, print);
      evaluate(experiments[i], c, test_data);
    });

    // ---------------------------------------------------------------------------------------------
    // Evaluation: the table (over several seeds: mean and range)
    const size_t S = static_cast<size_t>(c.steps), tenth = std::max<size_t>(1, S / 10);
    std::cout << "\n" << c.task << ", " << c.steps << " steps, hidden " << c.hidden << "; train loss: mean over the "
              << "first and the last tenth of the steps; test: teacher-forced loss and token accuracy, greedy exact match"
              << examples::over_seeds(c.seeds) << "\n";
    examples::SeedTable table("model", {{"parameters", 0, examples::SeedTable::Kind::Fixed}, {"train first", 3},
                                        {"train last", 3}, {"test loss", 3}, {"token acc", 3}, {"exact match", 3}});
    for (const Experiment& e : experiments)
      table.add(e.name, {static_cast<double>(e.module->num_parameters()), mean_loss(e.losses, 1, tenth),
                         mean_loss(e.losses, S - tenth + 1, S), e.test_loss, e.token_accuracy, e.exact_match});
    std::cout << table.to_string();
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
