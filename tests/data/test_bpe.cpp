// tests/data/test_bpe.cpp - byte-pair encoding: the merges of a hand-worked example, the fast
// learner against a re-counting reference, encoding and decoding, exact round trips on
// Chinese and accented text, determinism, and the errors for invalid UTF-8 and damaged merges.
#include <algorithm>
#include <map>
#include <random>

#include "data/bpe.h"
#include "data/tokenizer.h"
#include "data/translation.h"
#include "io/utf8.h"
#include "tests/test_util.h"

using namespace seqgrad;
using data::Bpe;

namespace {

// Sennrich et al.'s example corpus: low x5, lower x2, newest x6, widest x3.
std::unordered_map<std::string, int64_t> sennrich_counts() {
  return {{"low", 5}, {"lower", 2}, {"newest", 6}, {"widest", 3}};
}

// The same text as encode-then-decode should give it back: single spaces between words.
std::string normalised(const std::string& text) { return data::join(data::split_whitespace(text), " "); }

// The algorithm as the paper prints it: count every pair of every word again before each merge.
// Slow and obviously right; the learner must give exactly its merges.
std::vector<std::string> reference_merges(const std::map<std::string, int64_t>& counts, int64_t merges, int64_t min_count) {
  std::vector<std::pair<std::vector<std::string>, int64_t>> words;
  for (const auto& [word, n] : counts) {
    std::vector<std::string> symbols = data::split_chars(word);
    symbols[0] = data::kWordStart + symbols[0];
    words.push_back({symbols, n});
  }
  std::vector<std::string> learned;
  for (int64_t m = 0; m < merges; ++m) {
    std::map<std::pair<std::string, std::string>, int64_t> pairs;  // sorted: the first of a tie wins
    for (const auto& [symbols, n] : words)
      for (size_t k = 0; k + 1 < symbols.size(); ++k) pairs[{symbols[k], symbols[k + 1]}] += n;
    auto best = pairs.end();
    for (auto it = pairs.begin(); it != pairs.end(); ++it)
      if (best == pairs.end() || it->second > best->second) best = it;
    if (best == pairs.end() || best->second < min_count) break;
    const auto [a, b] = best->first;
    learned.push_back(a + " " + b);
    for (auto& [symbols, n] : words) {
      std::vector<std::string> merged;
      for (size_t k = 0; k < symbols.size(); ++k) {
        if (k + 1 < symbols.size() && symbols[k] == a && symbols[k + 1] == b) {
          merged.push_back(a + b);
          ++k;
        } else {
          merged.push_back(symbols[k]);
        }
      }
      symbols = merged;
    }
  }
  return learned;
}

}  // namespace

TEST_CASE("bpe: the hand-worked example's merges, in order, ties to the pair that sorts first") {
  // Worked by hand in docs/06-seq2seq.md. Merge 1: "e s" and "s t" both occur 9 times (newest,
  // widest); "e" sorts first. Merge 3: "▁l o" and "o w" both 7; "o" < "▁l" (▁ is U+2581).
  const Bpe bpe = Bpe::learn(sennrich_counts(), /*merges=*/100);
  const std::vector<std::string> expected{"e s", "es t", "o w", "▁l ow", "e w", "ew est",
                                          "▁n ewest", "d est", "i dest", "▁w idest", "e r", "▁low er"};
  CHECK(bpe.merges() == expected);  // 12, not 100: then every word is one piece
  CHECK(bpe.size() == 12);
  // Fewer merges asked for: the first ones, the same.
  CHECK(Bpe::learn(sennrich_counts(), 5).merges() == std::vector<std::string>(expected.begin(), expected.begin() + 5));
  // A pair seen only twice ("e r", from "lower") is not merged with min_count 3.
  CHECK(Bpe::learn(sennrich_counts(), 100, /*min_count=*/3).size() == 10);
  CHECK(Bpe::learn(sennrich_counts(), 0).size() == 0);
}

TEST_CASE("bpe: encode applies the merges in the order learned; decode gives the text back") {
  const Bpe five = Bpe::learn(sennrich_counts(), 5);  // e s, es t, o w, ▁l ow, e w
  // "lowest" was never seen: ▁l o w e s t -> ▁l o w es t -> ▁l o w est -> ▁l ow est -> ▁low est
  CHECK(five.encode("lowest") == std::vector<std::string>{"▁low", "est"});
  CHECK(five.encode("newer lower") == std::vector<std::string>{"▁n", "ew", "e", "r", "▁low", "e", "r"});
  CHECK(Bpe::decode(five.encode("newer lower")) == "newer lower");
  // With every merge, each corpus word is one piece.
  const Bpe all = Bpe::learn(sennrich_counts(), 100);
  CHECK(all.encode("low lower newest widest") == std::vector<std::string>{"▁low", "▁lower", "▁newest", "▁widest"});
  // No merges: characters, the first of each word marked.
  CHECK(Bpe().encode("ab c") == std::vector<std::string>{"▁a", "b", "▁c"});
  CHECK(Bpe().encode("").empty());
  CHECK(Bpe().encode(" \t ").empty());
  CHECK(Bpe::decode({}).empty());
  // Any pieces decode, even ones a model put in an odd order.
  CHECK(Bpe::decode({"er", "▁low", "est"}) == "er lowest");
  // White space is normalised as split_whitespace does it; ▁ in the text counts as a space.
  CHECK(Bpe::decode(five.encode("  lowest \t newer\n")) == "lowest newer");
  CHECK(five.encode("low▁est") == five.encode("low est"));
}

TEST_CASE("bpe: encode with max_pieces gives the first pieces of the whole encoding, and stops there") {
  const Bpe five = Bpe::learn(sennrich_counts(), 5);
  const std::string text = "newer lower lowest newer";
  const std::vector<std::string> all = five.encode(text);
  for (size_t n = 0; n <= all.size() + 2; ++n) {
    CAPTURE(n);
    CHECK(five.encode(text, n) == std::vector<std::string>(all.begin(), all.begin() + std::min(n, all.size())));
  }
  // The words after the first pieces are not encoded, so 200,000 more words cost next to nothing;
  // the whole text is still checked for valid UTF-8 first.
  std::string many = "lowest";
  for (int k = 0; k < 200000; ++k) many += " newer";
  CHECK(five.encode(many, 3) == std::vector<std::string>{"▁low", "est", "▁n"});
  CHECK_THROWS_AS(five.encode("lowest \xff", 1), std::invalid_argument);
}

TEST_CASE("bpe: encode's priority queue gives exactly the pieces of rescanning the word after every merge") {
  // Every occurrence of the earliest pair is merged before any pair those merges create: with
  // the merges "ab a" (rank 0) and "a b" (rank 1), "xabab" is ▁x ab ab, not ▁x aba b (which a
  // queue that took the new rank-0 pair between the two "a b" would give).
  const Bpe odd({"ab a", "a b"});
  CHECK(odd.encode_reference("xabab") == std::vector<std::string>{"▁x", "ab", "ab"});
  CHECK(odd.encode("xabab") == std::vector<std::string>{"▁x", "ab", "ab"});
  CHECK(odd.encode("aaa") == odd.encode_reference("aaa"));
  // Random merge lists over a few letters (any order of ranks, not only a learner's) and random
  // words, long ones with many repeats included; and a learner's merges on long unspaced text.
  std::mt19937 rng(7);
  const std::vector<std::string> letters = {"a", "b", "c", "é"};
  int64_t compared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::string> symbols = letters;
    for (const std::string& l : letters) symbols.push_back(data::kWordStart + l);
    std::vector<std::string> merges;
    std::map<std::string, bool> seen;
    const int count = static_cast<int>(rng() % 30);
    for (int m = 0; m < count; ++m) {
      const std::string a = symbols[rng() % symbols.size()], b = letters[rng() % letters.size()];
      const std::string merge = a + " " + b;
      if (seen[merge]) continue;
      seen[merge] = true;
      merges.push_back(merge);
      symbols.push_back(a + b);
    }
    const Bpe bpe(merges);
    for (int w = 0; w < 5; ++w) {
      std::string word;
      const int length = 1 + static_cast<int>(rng() % (w == 4 ? 400 : 30));
      for (int k = 0; k < length; ++k) word += letters[rng() % (rng() % 2 ? 2 : letters.size())];
      CAPTURE(trial);
      CAPTURE(word);
      CHECK(bpe.encode(word) == bpe.encode_reference(word));
      ++compared;
    }
  }
  const Bpe learned = Bpe::learn(sennrich_counts(), 100);
  const std::string unspaced = "lowestnewestwidestlowerlowlowlowernewerwidest";
  CHECK(learned.encode(unspaced) == learned.encode_reference(unspaced));
  CHECK(compared == 1000);
}

TEST_CASE("bpe: the learner's merges equal the re-counting reference's on random corpora") {
  std::mt19937_64 rng(7);
  const std::vector<std::string> alphabet{"a", "b", "c", "d", "é", "ü", "中", "文", "😀"};
  for (int trial = 0; trial < 20; ++trial) {
    std::map<std::string, int64_t> counts;
    const int words = 1 + static_cast<int>(rng() % 40);
    for (int w = 0; w < words; ++w) {
      std::string word;
      const int len = 1 + static_cast<int>(rng() % 9);
      for (int k = 0; k < len; ++k) word += alphabet[rng() % (trial < 10 ? 3 : alphabet.size())];  // few letters: many ties
      counts[word] += 1 + static_cast<int64_t>(rng() % 6);
    }
    const int64_t merges = static_cast<int64_t>(rng() % 60), min_count = 1 + static_cast<int64_t>(rng() % 3);
    std::unordered_map<std::string, int64_t> table(counts.begin(), counts.end());
    CAPTURE(trial);
    CHECK(Bpe::learn(table, merges, min_count).merges() == reference_merges(counts, merges, min_count));
  }
}

TEST_CASE("bpe: deterministic whatever the order of the corpus or of the word table") {
  const std::vector<data::Pair> pairs = data::make_translation_pairs(data::TargetLanguage::French, 300, 1, 20, 3);
  std::vector<std::string> sentences;
  for (const data::Pair& p : pairs) sentences.push_back(p.target);
  const Bpe first = Bpe::learn(sentences, 200);
  std::vector<std::string> shuffled = sentences;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(11));
  CHECK(Bpe::learn(shuffled, 200).merges() == first.merges());
  CHECK(Bpe::learn(sentences, 200).merges() == first.merges());
  // Merges read back from their text (as a checkpoint stores them) encode the same.
  const Bpe copy(first.merges());
  for (const std::string& s : sentences) CHECK(copy.encode(s) == first.encode(s));
}

TEST_CASE("bpe: Chinese and accented text round-trip exactly, and no piece splits a character") {
  std::vector<std::string> corpus;
  for (const data::Pair& p : data::make_translation_pairs(data::TargetLanguage::Chinese, 200, 1, 20, 5)) {
    corpus.push_back(p.target);                                // 比利 昨天 吃 了 两 个 红 苹果
    corpus.push_back(data::join(data::split_whitespace(p.target), ""));  // the same without spaces
  }
  for (const data::Pair& p : data::make_translation_pairs(data::TargetLanguage::French, 200, 1, 20, 5))
    corpus.push_back(p.target);  // il a mangé deux gâteaux
  corpus.push_back("élève naïve crème brûlée Ångström façade");
  const Bpe bpe = Bpe::learn(corpus, 500);
  CHECK(bpe.size() > 50);
  const std::vector<std::string> texts{"比利昨天吃了两个红苹果", "我们 明天 会 喝 两 杯 茶", "il a mangé deux gâteaux hier",
                                       "élève naïve crème brûlée Ångström façade", "Ωμέγα ж 😀 ǅ e\xCC\x81t\xC3\xA9",
                                       "未见过的字 没有 问题"};
  for (const std::string& text : texts) {
    CAPTURE(text);
    const std::vector<std::string> pieces = bpe.encode(text);
    CHECK(Bpe::decode(pieces) == text);
    for (const std::string& piece : pieces) CHECK(io::is_valid_utf8(piece));
  }
  // Learned pieces are whole characters too, and a frequent Chinese word is one piece.
  for (const std::string& m : bpe.merges()) CHECK(io::is_valid_utf8(m));
  CHECK(bpe.encode("苹果") == std::vector<std::string>{"▁苹果"});
}

TEST_CASE("bpe: random text round-trips after white space is normalised") {
  std::mt19937_64 rng(3);
  const std::vector<std::string> alphabet{"a", "b", "c", " ", " ", "\t", "é", "中", "😀"};
  auto random_text = [&] {
    std::string text;
    for (int k = static_cast<int>(rng() % 30); k > 0; --k) text += alphabet[rng() % alphabet.size()];
    return text;
  };
  std::vector<std::string> corpus;
  for (int i = 0; i < 200; ++i) corpus.push_back(random_text());
  const Bpe bpe = Bpe::learn(corpus, 100);
  for (int i = 0; i < 200; ++i) {
    const std::string text = random_text();
    CAPTURE(text);
    CHECK(Bpe::decode(bpe.encode(text)) == normalised(text));
  }
}

TEST_CASE("bpe errors: invalid UTF-8 names the line and byte; damaged merges name the merge") {
  CHECK_THROWS_WITH_AS(Bpe().encode("ab \xC3\x28"), "bpe: expected UTF-8 text, found byte 0xc3 at offset 3",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Bpe::learn(std::vector<std::string>{"fine", "a\xFF"}, 10),
                       "bpe: line 2: expected UTF-8 text, found byte 0xff at offset 1", std::invalid_argument);
  std::unordered_map<std::string, int64_t> counts;
  CHECK_THROWS_WITH_AS(Bpe::count_words("\xE4\xB8", counts, 7), "bpe: line 7: expected UTF-8 text, found byte 0xe4 at offset 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Bpe::learn(std::unordered_map<std::string, int64_t>{{"\xC0\xAF", 2}}, 10),
                       "bpe: expected UTF-8 text, found byte 0xc0 at offset 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(Bpe::learn(sennrich_counts(), -1), "bpe: expected a number of merges >= 0, got -1", std::invalid_argument);
  CHECK_THROWS_WITH_AS(Bpe::learn(sennrich_counts(), 5, 0), "bpe: expected min_count >= 1, got 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(Bpe({"e s", "est"}), "bpe: merge 2 is 'est'; expected two symbols separated by one space, as 'e s'",
                       std::invalid_argument);
  for (const std::string bad : {" s", "e ", "e  s", "e s t", "e\ts x", ""})
    CHECK_THROWS_WITH_AS(Bpe({bad}), ("bpe: merge 1 is '" + bad + "'; expected two symbols separated by one space, as 'e s'").c_str(),
                         std::invalid_argument);
  CHECK_THROWS_WITH_AS(Bpe({"e \xFF"}), "bpe: merge 1: expected UTF-8 text, found byte 0xff at offset 2", std::invalid_argument);
  CHECK_THROWS_WITH_AS(Bpe({"e ▁s"}), "bpe: merge 1 is 'e ▁s'; expected the word-start marker ▁ only at the start of the left symbol",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Bpe({"e s", "o w", "e s"}), "bpe: merge 3 ('e s') repeats merge 1", std::invalid_argument);
}
