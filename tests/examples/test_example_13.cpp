// tests/examples/test_example_13.cpp - example 13 (GNMT) run in-process at a small size: its
// own functions build, train and evaluate a residual GNMT on reverse, and it learns; what
// --quick and --seeds set, and the example's error messages, are pinned. The example's file is
// compiled here inside a namespace of its own (its main renamed), so the test reads exactly the
// code the example runs.
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
#include "tests/test_util.h"

// (Every header the example includes is already included above, so its #includes add nothing
// inside the namespace.)
namespace example_13 {
#define main example_13_main
#include "examples/13_gnmt/main.cpp"
#undef main
}  // namespace example_13

using namespace seqgrad;

TEST_CASE("example 13: a 3-layer residual GNMT learns to reverse, through the example's own code") {
  example_13::Config c;
  c.task = "reverse";
  c.steps = 200;
  c.hidden = 32;
  c.embed = 16;
  c.max_len = 6;
  c.symbols = 6;
  c.lr = real(0.01);
  c.batch = 32;
  const auto opts = data::TaskOptions().with_lengths(c.min_len, c.max_len).with_symbols(c.symbols);
  data::Vocab vocab;
  for (char ch = 'a'; ch < 'a' + c.symbols; ++ch) vocab.add(std::string(1, ch));
  const auto tok = data::Tokenization::Space;
  const data::EncodedPairs train = data::encode_pairs(
      data::make_pairs(data::Task::Reverse, data::TaskOptions(opts).with_n(2000).with_seed(1)), vocab, tok, vocab, tok);
  const data::EncodedPairs test = data::encode_pairs(
      data::make_pairs(data::Task::Reverse, data::TaskOptions(opts).with_n(200).with_seed(2)), vocab, tok, vocab, tok);
  example_13::Experiment e = example_13::make_experiment("gnmt-3", /*seed=*/42, c, vocab.size());
  std::mutex print;
  std::ostringstream log;
  std::streambuf* saved = std::cout.rdbuf(log.rdbuf());  // the example's progress lines
  example_13::train(e, c, train, print);
  std::cout.rdbuf(saved);
  example_13::evaluate(e, c, test);
  INFO(log.str());
  INFO("exact match " << e.exact_match << ", token accuracy " << e.token_accuracy << ", test loss " << e.test_loss);
  CHECK(e.losses.size() == 200);
  CHECK(example_13::mean_loss(e.losses, 181, 200) < example_13::mean_loss(e.losses, 1, 20) / 4);
  CHECK(e.token_accuracy > 0.8);
  CHECK(e.exact_match > 0.5);
}

TEST_CASE("example 13: a model name it does not know") {
  const example_13::Config c;
  for (const char* bad : {"gnmt-1", "gnmt-x", "gnmt-4-deep", "transformer"})
    CHECK_THROWS_WITH_AS(example_13::make_experiment(bad, /*seed=*/42, c, 14),
                         ("13_gnmt: --models expects lstm-attn, gnmt-L or gnmt-L-plain with L >= 2, got '" +
                          std::string(bad) + "'").c_str(),
                         std::invalid_argument);
  CHECK(example_13::make_experiment("gnmt-2-plain", /*seed=*/42, c, 14).module->to_string().find("residual=false") != std::string::npos);
}

// The example's own command line: argv as its main receives it.
example_13::Config parse_13(std::vector<std::string> words) {
  words.insert(words.begin(), "build/examples/13_gnmt");
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  return example_13::parse(static_cast<int>(argv.size()), argv.data());
}

TEST_CASE("example 13: --quick trains the three models of the residual claim; --seeds one run per seed") {
  const example_13::Config quick = parse_13({"--quick"});
  CHECK(quick.models == std::vector<std::string>{"lstm-attn", "gnmt-4-plain", "gnmt-4"});
  CHECK(quick.steps == 800);
  CHECK(quick.test_pairs == 200);
  CHECK(quick.seeds == std::vector<int64_t>{42});
  CHECK(parse_13({"--quick", "--models", "gnmt-8"}).models == std::vector<std::string>{"gnmt-8"});
  CHECK(parse_13({}).models == std::vector<std::string>{"lstm-attn", "gnmt-4-plain", "gnmt-4", "gnmt-8"});
  CHECK(parse_13({"--seeds", "1,2,3"}).seeds == std::vector<int64_t>{1, 2, 3});
  CHECK_THROWS_WITH_AS(parse_13({"--seeds", "1,x"}),
                       "13_gnmt: --seeds expects comma-separated whole numbers from 0 to 4294967295, got '1,x'",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_13({"--seeds", "2,2"}), "13_gnmt: --seeds lists 2 twice, in '2,2'", std::invalid_argument);
}
