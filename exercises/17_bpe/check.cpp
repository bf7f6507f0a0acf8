// exercises/17_bpe/check.cpp - make -C exercises check EX=17
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>

#include "data/bpe.h"
#include "data/tokenizer.h"
#include "exercise.h"

using seqgrad::data::Bpe;

// Every memory allocation the program makes (operator new), counted: the last two test cases
// read the count around one merge and one learn, to see how much work they do.
std::atomic<int64_t> g_allocations{0};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // GCC sees free() meet operator new
#endif
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace {
const std::string M = seqgrad::data::kWordStart;  // ▁

// The table a corpus starts from: each word's characters, the first one marked.
Table characters(const std::map<std::string, int64_t>& word_counts) {
  Table t;
  for (const auto& [word, count] : word_counts) {
    Word w{seqgrad::data::split_chars(word), count};
    w.symbols[0] = M + w.symbols[0];
    t.push_back(w);
  }
  return t;
}

// Sennrich et al.'s corpus, worked by hand in chapter 6.
const std::map<std::string, int64_t> kPaper{{"low", 5}, {"lower", 2}, {"newest", 6}, {"widest", 3}};

// counts + delta, dropping what comes to 0.
PairCounts plus(PairCounts counts, const PairCounts& delta) {
  for (const auto& [p, change] : delta) {
    counts[p] += change;
    if (counts[p] == 0) counts.erase(p);
  }
  return counts;
}
}  // namespace

TEST_CASE("17: the paper's four words: pair counts, the first merge and its delta, all twelve merges") {
  Table t = characters(kPaper);
  const PairCounts counts = count_pairs(t);
  const PairCounts expected{{{"e", "s"}, 9},  {{"s", "t"}, 9}, {{"w", "e"}, 8}, {{M + "l", "o"}, 7},
                            {{"o", "w"}, 7},  {{M + "n", "e"}, 6}, {{"e", "w"}, 6}, {{M + "w", "i"}, 3},
                            {{"i", "d"}, 3},  {{"d", "e"}, 3}, {{"e", "r"}, 2}};
  CHECK(counts == expected);
  // e s and s t both occur 9 times; "e" sorts first.
  REQUIRE(best_pair(counts, 2) == SymbolPair{"e", "s"});
  const PairCounts delta = merge(t, {"e", "s"});
  // newest x6: w e, e s, s t out; w es, es t in. widest x3: d e, e s, s t out; d es, es t in.
  CHECK(delta == PairCounts{{{"e", "s"}, -9}, {{"s", "t"}, -9}, {{"w", "e"}, -6}, {{"d", "e"}, -3},
                            {{"w", "es"}, 6}, {{"es", "t"}, 9}, {{"d", "es"}, 3}});
  CHECK(plus(counts, delta) == count_pairs(t));
  for (const Word& w : t) {
    if (w.count == 6) CHECK(w.symbols == std::vector<std::string>{M + "n", "e", "w", "es", "t"});
    if (w.count == 5) CHECK(w.symbols == std::vector<std::string>{M + "l", "o", "w"});  // untouched
  }
  const std::vector<std::string> twelve{"e s", "es t", "o w", M + "l ow", "e w", "ew est", M + "n ewest",
                                        "d est", "i dest", M + "w idest", "e r", M + "low er"};
  CHECK(learn(kPaper, 100) == twelve);
  CHECK(learn(kPaper, 5) == std::vector<std::string>(twelve.begin(), twelve.begin() + 5));
  CHECK(learn(kPaper, 100, /*min_count=*/3).size() == 10);  // e r occurs only twice
  CHECK(learn(kPaper, 0).empty());
}

TEST_CASE("17: occurrences that overlap merge left to right, and the delta stays exact") {
  Table t{{{M + "a", "a", "a", "a"}, 2}, {{M + "a", "a", "a", "a", "a"}, 1}, {{M + "b", "c"}, 4}};
  const PairCounts before = count_pairs(t);
  CHECK(before == PairCounts{{{M + "a", "a"}, 3}, {{"a", "a"}, 2 * 2 + 3}, {{M + "b", "c"}, 4}});
  const PairCounts delta = merge(t, {"a", "a"});
  CHECK(t[0].symbols == std::vector<std::string>{M + "a", "aa", "a"});
  CHECK(t[1].symbols == std::vector<std::string>{M + "a", "aa", "aa"});
  CHECK(t[2].symbols == std::vector<std::string>{M + "b", "c"});
  CHECK(delta == PairCounts{{{M + "a", "a"}, -3}, {{"a", "a"}, -7}, {{M + "a", "aa"}, 3}, {{"aa", "a"}, 2}, {{"aa", "aa"}, 1}});
  CHECK(plus(before, delta) == count_pairs(t));
  // A pair that is nowhere changes nothing.
  const Table same = t;
  CHECK(merge(t, {"c", M + "b"}).empty());
  CHECK(count_pairs(t) == count_pairs(same));
}

TEST_CASE("17: ties go to the pair that sorts first, left symbols then right, by bytes") {
  CHECK(best_pair({{{"b", "a"}, 3}, {{"a", "z"}, 3}, {{"a", "c"}, 1}}, 1) == SymbolPair{"a", "z"});
  CHECK(best_pair({{{"a", "c"}, 3}, {{"a", "b"}, 3}}, 1) == SymbolPair{"a", "b"});
  CHECK(best_pair({{{M + "a", "b"}, 2}, {{"z", "b"}, 2}}, 1) == SymbolPair{"z", "b"});   // ▁ after z
  CHECK(best_pair({{{M + "x", "y"}, 2}, {{"é", "x"}, 2}}, 1) == SymbolPair{"é", "x"});   // ▁ after é
  CHECK(best_pair({{{"中", "文"}, 2}, {{M + "x", "y"}, 2}}, 1) == SymbolPair{M + "x", "y"});  // before 中
  CHECK(best_pair({{{"a", "b"}, 1}, {{"b", "c"}, 4}}, 1) == SymbolPair{"b", "c"});      // the count first
  CHECK_FALSE(best_pair({{{"a", "b"}, 1}}, 2).has_value());
  CHECK_FALSE(best_pair({}, 1).has_value());
}

TEST_CASE("17: on random corpora, data::Bpe's merges, and each word spelled as Bpe encodes it") {
  std::mt19937_64 rng(17);
  const std::vector<std::string> alphabet{"a", "b", "c", "d", "é", "ü", "中", "文", "😀"};
  for (int trial = 0; trial < 30; ++trial) {
    std::map<std::string, int64_t> counts;
    const int words = 1 + static_cast<int>(rng() % 40);
    for (int w = 0; w < words; ++w) {
      std::string word;
      const int len = 1 + static_cast<int>(rng() % 9);
      for (int k = 0; k < len; ++k) word += alphabet[rng() % (trial < 15 ? 3 : alphabet.size())];  // few letters: many ties
      counts[word] += 1 + static_cast<int64_t>(rng() % 6);
    }
    const int64_t merges = static_cast<int64_t>(rng() % 60), min_count = 1 + static_cast<int64_t>(rng() % 3);
    CAPTURE(trial);
    const std::unordered_map<std::string, int64_t> table(counts.begin(), counts.end());
    const std::vector<std::string> library = Bpe::learn(table, merges, min_count).merges();
    CHECK(learn(counts, merges, min_count) == library);
    // Step by step: the counts kept by the deltas stay a fresh count, and after k merges each
    // word is spelled as Bpe with those k merges encodes it.
    Table t = characters(counts);
    PairCounts kept = count_pairs(t);
    std::vector<std::string> learned;
    for (size_t k = 0; k < library.size(); ++k) {
      const std::optional<SymbolPair> best = best_pair(kept, min_count);
      REQUIRE(best.has_value());
      learned.push_back(best->first + " " + best->second);
      REQUIRE(learned.back() == library[k]);
      kept = plus(kept, merge(t, *best));
      REQUIRE(kept == count_pairs(t));
    }
    if (static_cast<int64_t>(learned.size()) < merges) CHECK_FALSE(best_pair(kept, min_count).has_value());  // stopped: none left
    const Bpe replay(learned);
    size_t i = 0;
    for (const auto& [word, n] : counts) CHECK(t[i++].symbols == replay.encode(word));
  }
}

TEST_CASE("17: words with no occurrences are left out") {
  CHECK(learn({{"abab", 0}, {"cd", 3}}, 10, 1) == std::vector<std::string>{M + "c d"});
  CHECK(learn({{"abab", -2}}, 10, 1).empty());
  CHECK(learn({}, 10, 1).empty());
}

TEST_CASE("17: a merge does not count the table again: its work follows the words that hold the pair") {
  // 200 words of 65 symbols, every symbol different: 12,800 pairs, each a map entry of its own,
  // so counting the table makes at least 12,800 allocations. A merge may look at every word,
  // even copy each (a few allocations a word); the check allows it a quarter of a count.
  const int64_t words = 200, length = 65, pairs = words * (length - 1);
  Table t;
  for (int64_t i = 0; i < words; ++i) {
    Word w{{}, 1 + i % 3};
    for (int64_t k = 0; k < length; ++k) w.symbols.push_back("w" + std::to_string(i) + "." + std::to_string(k));
    t.push_back(std::move(w));
  }
  int64_t start = g_allocations;
  CHECK(static_cast<int64_t>(count_pairs(t).size()) == pairs);
  CHECK(g_allocations - start >= pairs);  // what a count costs
  // The pair w100.10 w100.11 is in word 100 alone, which occurs 1 + 100 % 3 = 2 times.
  start = g_allocations;
  const PairCounts delta = merge(t, {"w100.10", "w100.11"});
  const int64_t allocations = g_allocations - start;
  CHECK(delta == PairCounts{{{"w100.9", "w100.10"}, -2}, {{"w100.10", "w100.11"}, -2}, {{"w100.11", "w100.12"}, -2},
                            {{"w100.9", "w100.10w100.11"}, 2}, {{"w100.10w100.11", "w100.12"}, 2}});
  CAPTURE(allocations);
  CHECK(allocations <= pairs / 4);
}

TEST_CASE("17: learn counts the pairs once, then keeps the counts with merge's deltas") {
  // The same shape of corpus: 200 words of 65 characters, every character different (CJK
  // ideographs from U+4E00), 12,800 pairs. learn may count them once and build its table (say
  // two counts' worth); each of its 40 merges must then cost under a quarter of a count.
  const int64_t words = 200, length = 65, pairs = words * (length - 1);
  const auto utf8 = [](int64_t code_point) {  // a code point of three bytes (U+0800 to U+FFFF)
    return std::string{static_cast<char>(0xE0 | (code_point >> 12)), static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)),
                       static_cast<char>(0x80 | (code_point & 0x3F))};
  };
  std::map<std::string, int64_t> corpus;
  for (int64_t i = 0; i < words; ++i) {
    std::string word;
    for (int64_t k = 0; k < length; ++k) word += utf8(0x4E00 + i * length + k);
    corpus[word] = 2;
  }
  const int64_t start = g_allocations;
  CHECK(learn(corpus, 40).size() == 40);
  const int64_t allocations = g_allocations - start;
  CAPTURE(allocations);
  CHECK(allocations <= 2 * pairs + 40 * pairs / 4);
}
