// tests/data/test_data.cpp - vocabularies, UTF-8 tokenisers, toy tasks, padded batches.
#include <algorithm>
#include <set>

#include "data/batch.h"
#include "data/tasks.h"
#include "data/tokenizer.h"
#include "data/vocab.h"
#include "tests/test_util.h"

using namespace seqgrad;
using namespace seqgrad::data;

TEST_CASE("Vocab: specials first, then by frequency, unknowns map to <unk>") {
  const Vocab v = Vocab::build({{"b", "a", "b"}, {"c", "b", "a"}, {"rare"}}, /*min_freq=*/2);
  CHECK(v.tokens() == std::vector<std::string>{"<pad>", "<bos>", "<eos>", "<unk>", "b", "a"});
  CHECK(v.id("b") == 4);
  CHECK(v.id("rare") == Vocab::kUnk);
  CHECK(v.encode({"a", "zzz"}, true, true) == std::vector<int64_t>{Vocab::kBos, 5, Vocab::kUnk, Vocab::kEos});
  CHECK(v.decode({Vocab::kBos, 4, 5, Vocab::kEos, 4}) == std::vector<std::string>{"b", "a"});
  CHECK(Vocab::from_tokens(v.tokens()).tokens() == v.tokens());
  // From counts made elsewhere (one sentence at a time): the same vocabulary.
  CHECK(Vocab::from_counts({{"a", 2}, {"b", 3}, {"c", 1}, {"rare", 1}}, 2).tokens() == v.tokens());
  CHECK_THROWS_WITH_AS(Vocab::from_counts({{"a", 2}}, 0), "Vocab: expected min_freq >= 1, got 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(v.token(6), "Vocab: token id 6 is out of range for a vocabulary of 6", std::out_of_range);
  CHECK_THROWS_WITH_AS(Vocab::from_tokens({"a", "b"}), "Vocab: expected a token list starting with <pad>, <bos>, <eos>, <unk>",
                       std::invalid_argument);
}

TEST_CASE("tokenisers: whitespace, and UTF-8 characters (Chinese splits into characters)") {
  CHECK(split_whitespace("  billy eats\ta banana \n") == std::vector<std::string>{"billy", "eats", "a", "banana"});
  CHECK(split_chars("比利 吃") == std::vector<std::string>{"比", "利", " ", "吃"});
  CHECK(split_chars("naïve") == std::vector<std::string>{"n", "a", "ï", "v", "e"});
  CHECK(split_chars("😀!") == std::vector<std::string>{"😀", "!"});
  CHECK(join(split_chars("比利 吃"), "") == "比利 吃");
  CHECK_THROWS_WITH_AS(split_chars(std::string("ab\xe6\xaf", 4)), "split_chars: invalid UTF-8 at byte 2", std::invalid_argument);
  CHECK_THROWS_WITH_AS(split_chars(std::string("a\x80")), "split_chars: invalid UTF-8 at byte 1", std::invalid_argument);
}

TEST_CASE("toy tasks: deterministic, correct targets, lengths in range") {
  const TaskOptions o = TaskOptions().with_n(200).with_lengths(3, 7).with_symbols(5).with_seed(11);
  const std::vector<Pair> rev = make_pairs(Task::Reverse, o);
  CHECK(rev.size() == 200);
  for (const Pair& p : rev) {
    std::vector<std::string> s = split_whitespace(p.source), t = split_whitespace(p.target);
    CHECK(s.size() >= 3);
    CHECK(s.size() <= 7);
    std::reverse(s.begin(), s.end());
    CHECK(s == t);
  }
  CHECK(make_pairs(Task::Reverse, o)[17].source == rev[17].source);
  const Pair sorted = make_pairs(Task::Sort, o)[0];
  std::vector<std::string> t = split_whitespace(sorted.target);
  CHECK(std::is_sorted(t.begin(), t.end()));
  CHECK(make_pairs(Task::Copy, o)[3].source == make_pairs(Task::Copy, o)[3].target);
  const std::string unknown = "expected a task named " + join_names(tasks().names()) + ", got 'translate'";
  CHECK_THROWS_WITH_AS(make_pairs("translate", o), unknown.c_str(), std::invalid_argument);
  // A task's own options are checked: copy takes symbols (1 to 26), the date task none.
  CHECK_THROWS_WITH_AS(make_pairs(Task::Copy, TaskOptions().with_symbols(27)),
                       "make_pairs: the task copy's symbols must be a whole number from 1 to 26, got 27", std::invalid_argument);
  CHECK_THROWS_WITH_AS(make_pairs(Task::Date, TaskOptions().with_symbols(5)), "make_pairs: the task date takes no option 'symbols'",
                       std::invalid_argument);
  // The alphabet: 5 symbols are the letters a to e.
  for (const Pair& p : rev)
    for (const std::string& token : split_whitespace(p.source)) CHECK((token >= "a" && token <= "e"));
  // The library's own tasks, each with its tokens and default lengths.
  for (const char* name : {"copy", "reverse", "sort", "date", "en-zh", "en-fr"}) CHECK(tasks().contains(name));
  CHECK(tasks().get("date").tokens == "char");
  CHECK(tasks().get("reverse").tokens == "space");
}

TEST_CASE("date task: every format of one date, all normalised to ISO") {
  CHECK(format_date(2026, 11, 22, 0) == "22 Nov 2026");
  CHECK(format_date(2026, 11, 22, 1) == "Nov 22, 2026");
  CHECK(format_date(2026, 11, 22, 2) == "November 22, 2026");
  CHECK(format_date(2026, 11, 22, 3) == "22 November 2026");
  CHECK(format_date(2026, 11, 22, 4) == "2026/11/22");
  CHECK(format_date(2026, 11, 22, 5) == "11/22/2026");
  CHECK(format_date(2026, 11, 22, 6) == "22.11.2026");
  CHECK(format_date(2026, 11, 22, 7) == "Sunday, November 22, 2026");
  CHECK(format_date(2000, 2, 29, 7) == "Tuesday, February 29, 2000");
  const std::vector<Pair> dates = make_pairs(Task::Date, TaskOptions().with_n(100).with_lengths(1, 40).with_seed(3));
  std::set<std::string> shapes;
  for (const Pair& p : dates) {
    CHECK(p.target.size() == 10);
    CHECK(p.target[4] == '-');
    shapes.insert(p.source.substr(0, 2));
  }
  CHECK(shapes.size() > 10);
  for (const Pair& p : make_pairs(Task::Date, TaskOptions().with_n(20).with_lengths(10, 11))) CHECK(p.source.size() <= 11);
  CHECK_THROWS_WITH_AS(make_pairs(Task::Date, TaskOptions().with_lengths(1, 5)),
                       "make_pairs: no date format fits source lengths 1..5 (dates are 10 to 29 characters long)",
                       std::invalid_argument);
}

TEST_CASE("batches: padding, the teacher-forcing shift, lengths") {
  const Batch b = make_batch({{5, 6, 7}, {8}}, {{9, 10}, {11, 12, 13}});
  CHECK(b.src.to_vector() == std::vector<real>{5, 6, 7, 8, 0, 0});
  CHECK(b.src_lengths == std::vector<int64_t>{3, 1});
  // tgt_in = <bos> y, tgt_out = y <eos>
  CHECK(b.tgt_in.to_vector() == std::vector<real>{1, 9, 10, 0, 1, 11, 12, 13});
  CHECK(b.tgt_out.to_vector() == std::vector<real>{9, 10, 2, 0, 11, 12, 13, 2});
  CHECK(b.tgt_lengths == std::vector<int64_t>{3, 4});
  CHECK_THROWS_WITH_AS(make_batch({{}}, {{1}}), "make_batch: source 0 is empty", std::invalid_argument);
  // The target side alone, for a source that is an image.
  const TeacherForcing t = teacher_forcing({{9, 10}, {11, 12, 13}});
  CHECK(t.tgt_in.to_vector() == b.tgt_in.to_vector());
  CHECK(t.tgt_out.to_vector() == b.tgt_out.to_vector());
  CHECK(t.tgt_lengths == b.tgt_lengths);
  CHECK_THROWS_WITH_AS(teacher_forcing({}), "teacher_forcing: expected at least one target, got none", std::invalid_argument);
}

TEST_CASE("make_batches: every example exactly once; bucketing cuts padding") {
  std::vector<int64_t> lengths;
  Generator g(1);
  for (int i = 0; i < 1000; ++i) lengths.push_back(1 + static_cast<int64_t>(g.randint(30)));
  auto padding = [&](const std::vector<std::vector<size_t>>& batches) {
    int64_t pad = 0;
    for (const auto& batch : batches) {
      int64_t longest = 0;
      for (size_t i : batch) longest = std::max(longest, lengths[i]);
      for (size_t i : batch) pad += longest - lengths[i];
    }
    return pad;
  };
  const auto bucketed = make_batches(lengths, 32, 7, true), plain = make_batches(lengths, 32, 7, false);
  std::vector<size_t> seen;
  for (const auto& batch : bucketed) seen.insert(seen.end(), batch.begin(), batch.end());
  std::sort(seen.begin(), seen.end());
  CHECK(seen.size() == 1000);
  CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
  CHECK(padding(bucketed) * 5 < padding(plain));
}

TEST_CASE("make_token_batches: every pair once, no batch over the limit, the same count for every seed") {
  std::vector<int64_t> src, tgt;
  Generator g(2);
  for (int i = 0; i < 2000; ++i) {  // as in translation, a target about as long as its source
    src.push_back(1 + static_cast<int64_t>(g.randint(40)));
    tgt.push_back(std::max<int64_t>(0, src.back() - 2 + static_cast<int64_t>(g.randint(4))));
  }
  const auto batches = make_token_batches(src, tgt, 600, 0, 5);
  std::vector<size_t> seen;
  for (const auto& batch : batches) {
    int64_t largest = 0;
    for (size_t i : batch) largest = std::max({largest, src[i], tgt[i] + 1});
    CHECK(static_cast<int64_t>(batch.size()) * largest <= 600);
    seen.insert(seen.end(), batch.begin(), batch.end());
  }
  std::sort(seen.begin(), seen.end());
  CHECK(seen.size() == 2000);
  CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
  // Short pairs travel in big batches: the batch sizes differ (600 / 2 = 300 down to 600 / 42 = 14).
  const auto [fewest, most] = std::minmax_element(batches.begin(), batches.end(),
                                                  [](const auto& a, const auto& b) { return a.size() < b.size(); });
  CHECK(fewest->size() <= 20);
  CHECK(most->size() >= 100);
  // Another seed mixes other pairs together but cuts as many batches; the same seed, the same.
  const auto other = make_token_batches(src, tgt, 600, 0, 6);
  CHECK(other.size() == batches.size());
  CHECK(other != batches);
  CHECK(make_token_batches(src, tgt, 600, 0, 5) == batches);
  // A pair cap: at most 16 pairs, whatever the tokens allow.
  for (const auto& batch : make_token_batches(src, tgt, 600, 16, 5)) CHECK(batch.size() <= 16);
  // Sorted by size, a batching wastes little: under 5% here, against about 40% for a random mix.
  CHECK(padding_share(batches, src, tgt) < 0.05);
  CHECK(padding_share(make_batches(src, 32, 5, /*bucket=*/false), src, tgt) > 0.3);
  CHECK_THROWS_WITH_AS(make_token_batches(src, tgt, 30, 0, 5),
                       doctest::Contains("positions, more than the 30 tokens a batch may hold; raise the limit to at "
                                         "least the longest pair"),
                       std::invalid_argument);
}

TEST_CASE("padding_share: counts source and target + 1 positions, by hand") {
  // One batch: sources 2 and 4, targets 1 and 3 -> source 2x4 = 8 positions, 6 real; target
  // 2x(3+1) = 8 positions, 2 + 4 = 6 real. 4 of 16 are padding.
  CHECK(padding_share({{0, 1}}, {2, 4}, {1, 3}) == doctest::Approx(0.25));
  CHECK(padding_share({{0}, {1}}, {2, 4}, {1, 3}) == 0);
}
