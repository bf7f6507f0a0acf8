// tests/data/test_translation_metrics.cpp - the translation grammar's word-order rules, and the
// metrics against hand-computed values, including BLEU's brevity penalty and edge cases.
#include <cmath>

#include "data/metrics.h"
#include "data/tasks.h"
#include "data/tokenizer.h"
#include "tests/test_util.h"

using namespace seqgrad;
using namespace seqgrad::data;

namespace {
// The first generated pair whose English side satisfies `want`.
Pair find(const std::string& task, const std::function<bool(const std::string&)>& want) {
  for (const Pair& p : make_pairs(task, TaskOptions().with_n(3000).with_lengths(1, 20).with_seed(5)))
    if (want(p.source)) return p;
  FAIL("no such sentence");
  return {};
}
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("translation grammar: deterministic, and the reordering rules hold") {
  const auto a = make_pairs(Task::EnZh, TaskOptions().with_n(50).with_seed(1));
  CHECK(make_pairs(Task::EnZh, TaskOptions().with_n(50).with_seed(1))[49].target == a[49].target);
  CHECK(make_pairs(Task::EnFr, TaskOptions().with_n(50).with_seed(1))[49].source == a[49].source);  // same English

  // Chinese: the time word comes right after the subject, before the verb; the past adds 了.
  const Pair zh = find(Task::EnZh, [](const std::string& s) { return has(s, " ate ") && has(s, "yesterday"); });
  const Tokens z = split_whitespace(zh.target);
  CHECK(z[1] == "昨天");
  CHECK(z[2] == "吃");
  CHECK(z[3] == "了");
  // Chinese counts with a measure word and has no plural.
  const Pair count = find(Task::EnZh, [](const std::string& s) { return has(s, "three books"); });
  CHECK(has(count.target, "三 本 书"));
  // French: colours after the noun, agreeing in gender and number; petit/grand before it.
  const Pair red = find(Task::EnFr, [](const std::string& s) { return has(s, "two red apples"); });
  CHECK(has(red.target, "deux pommes rouges"));
  const Pair small = find(Task::EnFr, [](const std::string& s) { return has(s, "a small cat"); });
  CHECK(has(small.target, "un petit chat"));
  const Pair big = find(Task::EnFr, [](const std::string& s) { return has(s, "a big car"); });
  CHECK(has(big.target, "une grande voiture"));
  // French past: passé composé, with j'ai for "i".
  const Pair past = find(Task::EnFr, [](const std::string& s) { return s.rfind("i ate ", 0) == 0; });
  CHECK(past.target.rfind("j'ai mangé ", 0) == 0);
  // Example from the task description.
  const Pair billy = find(Task::EnZh, [](const std::string& s) { return s == "billy eats a banana"; });
  CHECK(billy.target == "比利 吃 香蕉");
}

TEST_CASE("edit distance, exact match, edits per token") {
  CHECK(edit_distance({"a", "b", "c"}, {"a", "c"}) == 1);
  CHECK(edit_distance({}, {"x", "y"}) == 2);
  CHECK(edit_distance({"k", "i", "t", "t", "e", "n"}, {"s", "i", "t", "t", "i", "n", "g"}) == 3);
  CHECK(exact_match({{"a"}, {"b"}}, {{"a"}, {"c"}}) == 0.5);
  // 1 edit over 3 reference tokens + 2 edits over 2 = 3 / 5
  CHECK(edits_per_token({{"a", "b"}, {}}, {{"a", "b", "c"}, {"x", "y"}}) == doctest::Approx(0.6));
  // Not a rate: an output that never stops costs an edit per extra token (chapter 6's 14/5).
  CHECK(edits_per_token({Tokens(15, "nous")}, {{"nous", "lirons", "un", "petit", "livre"}}) == doctest::Approx(2.8));
  CHECK_THROWS_WITH_AS(exact_match({{"a"}}, {}), "exact_match: expected as many hypotheses as references, got 1 and 0",
                       std::invalid_argument);
}

TEST_CASE("BLEU: perfect, hand-computed precisions, brevity penalty, edge cases") {
  const Tokens ref = {"the", "cat", "sat", "on", "the", "mat"};
  CHECK(bleu({ref}, {ref}) == doctest::Approx(100));
  // hypothesis "the cat sat on a mat": 1-grams 5/6, 2-grams 3/5, 3-grams 2/4, 4-grams 1/3
  const double expected = 100 * std::exp((std::log(5.0 / 6) + std::log(3.0 / 5) + std::log(2.0 / 4) + std::log(1.0 / 3)) / 4);
  CHECK(bleu({{"the", "cat", "sat", "on", "a", "mat"}}, {ref}) == doctest::Approx(expected));
  // A correct but short hypothesis: all precisions 1, brevity penalty exp(1 - 6/4).
  CHECK(bleu({{"the", "cat", "sat", "on"}}, {ref}) == doctest::Approx(100 * std::exp(1 - 6.0 / 4)));
  // Clipping: "the the the the" matches "the" at most twice.
  CHECK(bleu({{"the", "the", "the", "the"}}, {ref}, 1) == doctest::Approx(50.0 * std::exp(1 - 6.0 / 4)));
  CHECK(bleu({{"x", "y"}}, {ref}) == 0);          // no 4-gram at all
  CHECK(bleu({{}}, {ref}) == 0);                  // empty hypothesis
  CHECK(bleu({}, {}) == 0);
}

TEST_CASE("exact match by source length: buckets, the table and the curve") {
  LengthBuckets b(3);  // buckets of 5: 3-7, 8-12, ...
  b.add(3, true);
  b.add(7, false);
  b.add(8, true);
  b.add(12, true);
  b.add(13, false);
  const std::map<int64_t, double> acc = b.accuracy();
  REQUIRE(acc.size() == 3);
  CHECK(acc.at(3) == 0.5);
  CHECK(acc.at(8) == 1.0);
  CHECK(acc.at(13) == 0.0);

  const BucketResults results{{"plain", acc}, {"other", {{3, 1.0}, {8, 0.25}}}};
  CHECK(bucket_table(results, {"plain", "other"}, 5, 14) ==
        "length      plain     other\n"
        " 3- 7       0.500     1.000\n"
        " 8-12       1.000     0.250\n"
        "13-14       0.000     0.000\n");  // a bucket a column lacks counts as 0

  const auto [x, y] = bucket_curve(acc, 5);
  CHECK(x == std::vector<double>{5, 10, 15});  // the middle of each bucket
  CHECK(y == std::vector<double>{0.5, 1.0, 0.0});

  CHECK_THROWS_WITH(b.add(2, true), "LengthBuckets: expected a source length of at least 3, got 2");
  CHECK_THROWS_WITH(LengthBuckets(3, 0), "LengthBuckets: expected a positive bucket width, got 0");
  CHECK_THROWS_WITH(bucket_table(results, {}, 5, 14), "bucket_table: expected at least one column");
  CHECK_THROWS_WITH(bucket_table(results, {"plain", "missing"}, 5, 14),
                    "bucket_table: expected results for column 'missing'");
}

TEST_CASE("bucket_table_over_runs: mean and range per cell over seeds; bucket_mean for the plot") {
  const BucketResults seed1{{"plain", {{3, 1.0}, {8, 0.5}}}, {"other", {{3, 0.9}, {8, 0.0}}}};
  const BucketResults seed2{{"plain", {{3, 0.8}, {8, 0.25}}}, {"other", {{3, 1.0}}}};  // no 8-12 bucket: 0
  const BucketResults seed3{{"plain", {{3, 0.9}, {8, 0.75}}}, {"other", {{3, 0.5}, {8, 0.3}}}};
  CHECK(bucket_table_over_runs({seed1, seed2, seed3}, {"plain", "other"}, 5, 10) ==
        "length              plain             other\n"
        " 3- 7    0.90 (0.80-1.00)  0.80 (0.50-1.00)\n"
        " 8-10    0.50 (0.25-0.75)  0.10 (0.00-0.30)\n");
  const BucketResults mean = bucket_mean({seed1, seed2, seed3});
  CHECK(mean.at("plain").at(3) == doctest::Approx(0.9));
  CHECK(mean.at("plain").at(8) == doctest::Approx(0.5));
  CHECK(mean.at("other").at(8) == doctest::Approx(0.1));
  // One run: its own figures, with no range.
  CHECK(bucket_table_over_runs({seed1}, {"plain"}, 5, 10) ==
        "length              plain\n"
        " 3- 7                1.00\n"
        " 8-10                0.50\n");

  CHECK_THROWS_WITH(bucket_table_over_runs({}, {"plain"}, 5, 10), "bucket_table_over_runs: expected at least one run");
  CHECK_THROWS_WITH(bucket_table_over_runs({seed1}, {}, 5, 10), "bucket_table_over_runs: expected at least one column");
  CHECK_THROWS_WITH(bucket_table_over_runs({seed1, {{"plain", {{3, 1.0}}}}}, {"plain", "other"}, 5, 10),
                    "bucket_table_over_runs: expected results for column 'other' in run 2 of 2");
  CHECK_THROWS_WITH(bucket_mean({}), "bucket_mean: expected at least one run");
}

TEST_CASE("mean_range: one figure over seeds as mean (min-max); one run alone") {
  CHECK(mean_range({0.88, 0.90, 0.92}) == "0.90 (0.88-0.92)");
  CHECK(mean_range({98.4, 97.0, 99.1}, 1) == "98.2 (97.0-99.1)");
  CHECK(mean_range({0.213, 0.045}, 3) == "0.129 (0.045-0.213)");
  CHECK(mean_range({0.5}) == "0.50");
  CHECK_THROWS_WITH(mean_range({}), "mean_range: expected at least one run");
  CHECK_THROWS_WITH(mean_range({1.0}, 12), "mean_range: expected 0 to 9 decimals, got 12");
}

TEST_CASE("auc: the share of (positive, negative) pairs ranked right, ties counting half") {
  CHECK(data::auc({0.9, 0.8, 0.3, 0.1}, {1, 1, 0, 0}) == 1.0);  // every positive above every negative
  CHECK(data::auc({0.1, 0.3, 0.8, 0.9}, {1, 1, 0, 0}) == 0.0);
  // Positives at 0.8 and 0.4, negatives at 0.6 and 0.2: of the 4 pairs, 3 in the right order.
  CHECK(data::auc({0.8, 0.6, 0.4, 0.2}, {1, 0, 1, 0}) == doctest::Approx(0.75));
  CHECK(data::auc({0.5, 0.5, 0.5}, {1, 0, 0}) == doctest::Approx(0.5));  // all tied: chance
  // One tie between a positive and a negative counts half: pairs (p0.7 > n0.2), (p0.5 = n0.5).
  CHECK(data::auc({0.7, 0.5, 0.5, 0.2}, {1, 1, 0, 0}) == doctest::Approx((1 + 1 + 0.5 + 1) / 4.0));
  CHECK_THROWS_WITH_AS(data::auc({0.1, 0.2}, {1, 1}), "auc: expected both positive and negative examples, got 2 positive and 0 negative",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(data::auc({0.1}, {1, 0}), "auc: expected as many labels as scores, got 2 and 1", std::invalid_argument);
  CHECK_THROWS_WITH_AS(data::auc({0.1, 0.2}, {1, 2}), "auc: expected labels 0 or 1, got 2", std::invalid_argument);
  CHECK_THROWS_WITH_AS(data::auc({0.1, std::nan("")}, {1, 0}), "auc: expected finite scores, got nan at 1",
                       std::invalid_argument);
}
