// tests/examples/test_args.cpp - the flag parser the examples and the seqgrad tool share
// (examples/common/args.h): an example's command line parsed from argv, and the message each
// mistake gets, starting with the program's name.
#include <string>
#include <vector>

#include "examples/common/args.h"
#include "tests/test_util.h"

using namespace seqgrad;

namespace {

// argv as a program's main receives it: the program's name, then the words.
cli::Args example_args(std::vector<std::string> words) {
  words.insert(words.begin(), "build/examples/06_transformer");
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  return cli::Args("06_transformer", "06_transformer [--steps N] [--seeds S,S,...] [--quick] [--out DIR]",
                   {{"steps", "3000", "training steps"},
                    {"seeds", "42", "seeds, comma-separated"},
                    {"quick", "false", "fewer steps", true},
                    {"out", "build/out", "folder for the SVGs"}},
                   static_cast<int>(argv.size()), argv.data());
}

}  // namespace

TEST_CASE("an example's flags: defaults, values, switches") {
  const cli::Args none = example_args({});
  CHECK(none.integer("steps", 1, 1000000) == 3000);
  CHECK_FALSE(none.on("quick"));
  CHECK_FALSE(none.given("steps"));
  CHECK(none.text("out") == "build/out");
  const cli::Args some = example_args({"--steps", "20", "--quick", "--out=/tmp/x"});
  CHECK(some.integer("steps", 1, 1000000) == 20);
  CHECK(some.given("steps"));
  CHECK(some.on("quick"));
  CHECK(some.text("out") == "/tmp/x");
  CHECK(some.program() == "06_transformer");
  CHECK(some.help().find("  --steps VALUE         training steps (default 3000)\n") != std::string::npos);
}

TEST_CASE("an example's flag mistakes name the program and the flag") {
  // A typing mistake or the start of one flag is named: "--epoch" for "--epochs".
  cli::Args typo("seqgrad train", "", {{"epochs", "1", ""}, {"epsilon", "1", ""}, {"lr", "1", ""}, {"label-smoothing", "0", ""}});
  CHECK_THROWS_WITH_AS(typo.parse({"--epoch", "3"}),
                       "seqgrad train: unknown flag '--epoch'; did you mean '--epochs'? (see 'seqgrad train --help')",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(typo.parse({"--label", "0.1"}),  // the start of one flag
                       "seqgrad train: unknown flag '--label'; did you mean '--label-smoothing'? (see 'seqgrad train --help')",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(typo.parse({"--ep", "3"}),  // two flags start so, none near: no guess
                       "seqgrad train: unknown flag '--ep' (see 'seqgrad train --help')", std::invalid_argument);
  CHECK_THROWS_WITH_AS(typo.parse({"--colour", "3"}), "seqgrad train: unknown flag '--colour' (see 'seqgrad train --help')",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(example_args({"--bogus"}), "06_transformer: unknown flag '--bogus' (see '06_transformer --help')",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(example_args({"-x"}), "06_transformer: unknown flag '-x' (see '06_transformer --help')",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(example_args({"--steps"}), "06_transformer: --steps needs a value", std::invalid_argument);
  CHECK_THROWS_WITH_AS(example_args({"--steps", "5", "bogus"}), "06_transformer: unexpected argument 'bogus' (see '06_transformer --help')",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(example_args({"--quick=yes"}), "06_transformer: --quick is a switch and takes no value",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(example_args({"--steps", "1", "--steps", "2"}), "06_transformer: --steps is given twice",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(example_args({"--steps", "ten"}).integer("steps", 1, 1000000),
                       "06_transformer: --steps expects a whole number from 1 to 1000000, got 'ten'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(example_args({}).choice("out", {"a", "b"}), "06_transformer: --out expects one of a, b, got 'build/out'",
                       std::invalid_argument);
}

TEST_CASE("an example's list of choices: --trick none,reverse") {
  const std::vector<std::string> tricks{"none", "reverse", "double"};
  CHECK(example_args({"--out", "reverse,none"}).choice_list("out", tricks) == std::vector<std::string>{"reverse", "none"});
  CHECK(example_args({"--out", "double"}).choice_list("out", tricks) == std::vector<std::string>{"double"});
  for (const char* bad : {"", "none,", "none,,reverse", "twice"})
    CHECK_THROWS_WITH_AS(example_args({"--out", bad}).choice_list("out", tricks),
                         ("06_transformer: --out expects a comma-separated list of none, reverse, double, got '" +
                          std::string(bad) + "'").c_str(),
                         std::invalid_argument);
  CHECK_THROWS_WITH_AS(example_args({"--out", "none,reverse,none"}).choice_list("out", tricks),
                       "06_transformer: --out lists none twice, in 'none,reverse,none'", std::invalid_argument);
}

TEST_CASE("an example's list of names it checks itself: --models gnmt-4,lstm-attn") {
  CHECK(example_args({"--out", "gnmt-4,lstm-attn"}).items("out") == std::vector<std::string>{"gnmt-4", "lstm-attn"});
  CHECK(example_args({"--out", "dot"}).items("out") == std::vector<std::string>{"dot"});
  for (const char* bad : {"", "dot,", ",dot", "dot,,general"})
    CHECK_THROWS_WITH_AS(example_args({"--out", bad}).items("out"),
                         ("06_transformer: --out expects a comma-separated list of names, got '" + std::string(bad) + "'").c_str(),
                         std::invalid_argument);
  // One model named twice used to train twice.
  CHECK_THROWS_WITH_AS(example_args({"--out", "dot,general,dot"}).items("out"),
                       "06_transformer: --out lists dot twice, in 'dot,general,dot'", std::invalid_argument);
}

TEST_CASE("an example's --seeds: a comma-separated list of distinct whole numbers") {
  CHECK(example_args({}).integers("seeds", 0, 4294967295) == std::vector<int64_t>{42});
  CHECK(example_args({"--seeds", "1,2,3"}).integers("seeds", 0, 4294967295) == std::vector<int64_t>{1, 2, 3});
  CHECK(example_args({"--seeds=7,0"}).integers("seeds", 0, 4294967295) == std::vector<int64_t>{7, 0});
  for (const char* bad : {"", "1,,2", "1,", ",1", "one", "1.5", "-1", "4294967296"})
    CHECK_THROWS_WITH_AS(example_args({"--seeds", bad}).integers("seeds", 0, 4294967295),
                         ("06_transformer: --seeds expects comma-separated whole numbers from 0 to 4294967295, got '" +
                          std::string(bad) + "'").c_str(),
                         std::invalid_argument);
  // The same seed twice would count one run twice and narrow the range.
  CHECK_THROWS_WITH_AS(example_args({"--seeds", "1,2,1"}).integers("seeds", 0, 4294967295),
                       "06_transformer: --seeds lists 1 twice, in '1,2,1'", std::invalid_argument);
  // A list written with spaces leaves words over.
  CHECK_THROWS_WITH_AS(example_args({"--seeds", "1", "2"}), "06_transformer: unexpected argument '2' (see '06_transformer --help')",
                       std::invalid_argument);
}
