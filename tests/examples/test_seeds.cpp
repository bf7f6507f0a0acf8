// tests/examples/test_seeds.cpp - what the examples that train once per seed share
// (examples/common/seeds.h): the title over seeds, every job run once on two threads, a run's
// progress lines, and the table whose cells are one run's figure or "mean (min-max)"; its
// messages pinned.
#include <atomic>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "examples/common/seeds.h"
#include "tests/test_util.h"

using namespace seqgrad;
using examples::SeedTable;

TEST_CASE("over_seeds: nothing for one seed, the count and the list for several") {
  CHECK(examples::over_seeds({42}) == "");
  CHECK(examples::over_seeds({1, 2, 3}) == ": mean (min-max) over n = 3 seeds (1, 2, 3)");
}

TEST_CASE("two_at_a_time: every job runs exactly once") {
  std::vector<std::atomic<int>> count(7);
  examples::two_at_a_time(count.size(), [&](size_t i) { ++count[i]; });
  for (const auto& n : count) CHECK(n == 1);
  examples::two_at_a_time(0, [](size_t) { FAIL("no job to run"); });
}

TEST_CASE("print_progress: a line on the first step and every tenth of the run") {
  std::ostringstream out;
  std::streambuf* saved = std::cout.rdbuf(out.rdbuf());
  std::mutex print;
  for (int64_t step = 1; step <= 25; ++step) examples::print_progress(print, 11, step, 25, 0.25 * step);
  examples::print_progress(print, 7, 1, 3, 2.5);  // fewer than 10 steps: every step
  examples::print_progress(print, 7, 2, 3, 2.25);
  std::cout.rdbuf(saved);
  CHECK(out.str() ==
        "  seed 11   step     1/25  loss 0.2500\n"
        "  seed 11   step     2/25  loss 0.5000\n"
        "  seed 11   step     4/25  loss 1.0000\n"
        "  seed 11   step     6/25  loss 1.5000\n"
        "  seed 11   step     8/25  loss 2.0000\n"
        "  seed 11   step    10/25  loss 2.5000\n"
        "  seed 11   step    12/25  loss 3.0000\n"
        "  seed 11   step    14/25  loss 3.5000\n"
        "  seed 11   step    16/25  loss 4.0000\n"
        "  seed 11   step    18/25  loss 4.5000\n"
        "  seed 11   step    20/25  loss 5.0000\n"
        "  seed 11   step    22/25  loss 5.5000\n"
        "  seed 11   step    24/25  loss 6.0000\n"
        "  seed 7    step     1/3  loss 2.5000\n"
        "  seed 7    step     2/3  loss 2.2500\n");
}

TEST_CASE("SeedTable: one run shows its figures; several show mean (min-max); fixed columns once") {
  SeedTable one("model", {{"parameters", 0, SeedTable::Kind::Fixed}, {"loss", 3}, {"hop 2", 2}});
  one.add("gnmt-4", {56878, 0.0364, 0.5});
  one.add("lstm-attn", {17014, 0.0788, SeedTable::kNone});
  CHECK(one.to_string() ==
        "model      parameters   loss  hop 2\n"
        "gnmt-4          56878  0.036   0.50\n"
        "lstm-attn       17014  0.079      -\n");

  SeedTable three("hops", {{"parameters", 0, SeedTable::Kind::Fixed}, {"accuracy", 2}});
  for (double acc : {0.9, 0.88, 0.92}) three.add("2", {100, acc});
  three.add("1", {50, 0.5});
  CHECK(three.to_string() ==
        "hops  parameters          accuracy\n"
        "2            100  0.90 (0.88-0.92)\n"
        "1             50              0.50\n");
  CHECK(three.runs("2", "accuracy") == std::vector<double>{0.9, 0.88, 0.92});
}

TEST_CASE("SeedTable: its mistakes") {
  SeedTable t("model", {{"parameters", 0, SeedTable::Kind::Fixed}, {"loss", 3}});
  CHECK_THROWS_WITH_AS(t.add("a", {1}), "SeedTable: row 'a' expected 2 figures, got 1", std::invalid_argument);
  t.add("a", {10, 0.5});
  CHECK_THROWS_WITH_AS(t.add("a", {11, 0.5}), "SeedTable: 'parameters' of row 'a' is the same in every run; expected 10, got 11",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(t.add("a", {10, SeedTable::kNone}), "SeedTable: row 'a' has 'loss' in one run and not in another",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(t.runs("b", "loss"), "SeedTable: no row 'b'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(t.runs("a", "accuracy"), "SeedTable: no column 'accuracy'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(SeedTable("model", {{"loss", 12}}), "SeedTable: column 'loss' expects 0 to 9 decimals, got 12",
                       std::invalid_argument);
}
