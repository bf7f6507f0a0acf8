// examples/08_extending/coursework/frequent_words.cpp - a new tokenizer in one file, which learns
// from the training text and has an option of its own: the K most frequent words whole, every
// other word spelled out character by character.
//
// A word vocabulary has no token for a word it never saw (it becomes <unk>); a character
// vocabulary makes every sentence long. This tokenizer keeps both halves of the bargain: the
// --frequent-words commonest words of a side are one token each, and any other word is its
// characters, the first one marked as a word's start with ▁ (as bpe marks it, data/bpe.h):
//   "tom took a cake" -> "▁tom" "▁t" "o" "o" "k" "▁a" "▁cake"   (if "took" is not among the K)
// Byte-pair encoding (data/bpe.h) is the grown-up form of the same idea: it learns the pieces
// in between too. What it learned, the K words, goes into the checkpoint, so the model
// translates with no file besides its own.
//   make seqgrad EXTRA=examples/08_extending/coursework/frequent_words.cpp
//   build/seqgrad train --task en-fr --src-tokens frequent --tgt-tokens frequent --out fw.safetensors
#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "seqgrad.h"

using namespace seqgrad;

// [docs:frequent_words]
namespace {

class FrequentWords : public data::Tokenizer {
 public:
  explicit FrequentWords(int64_t words) : size_(words) {}

  // Counts the side's words and keeps the most frequent (ties: the word that sorts first).
  bool learns() const override { return true; }
  void learn(const std::vector<std::string_view>& sentences, const std::string& side, std::ostream& out) override {
    std::map<std::string, int64_t> counts;
    for (const std::string_view sentence : sentences)
      for (const std::string& word : data::split_whitespace(std::string(sentence))) ++counts[word];
    std::vector<std::pair<int64_t, std::string>> ranked;  // (-count, word): most frequent first
    for (const auto& [word, count] : counts) ranked.push_back({-count, word});
    std::sort(ranked.begin(), ranked.end());
    if (static_cast<int64_t>(ranked.size()) > size_) ranked.resize(static_cast<size_t>(size_));
    std::vector<std::string> kept;
    for (const auto& [count, word] : ranked) kept.push_back(word);
    restore(kept);
    out << "frequent: " << kept.size() << " of the " << counts.size() << " distinct " << side << " words kept whole\n";
  }
  std::vector<std::string> learned() const override { return order_; }
  void restore(const std::vector<std::string>& learned) override {
    order_.clear();
    words_.clear();
    for (size_t i = 0; i < learned.size(); ++i) {
      const std::string& w = learned[i];
      check(!w.empty() && data::split_whitespace(w) == std::vector<std::string>{w}, "frequent: entry ", i + 1,
            " is '", w, "'; expected a word (not empty, no white space)");
      check(words_.insert(w).second, "frequent: entry ", i + 1, " ('", w, "') repeats an earlier one");
      order_.push_back(w);
    }
  }

  // Each word whole if kept, else its characters; every word's first token starts with ▁.
  std::vector<std::string> encode(const std::string& text, size_t max_tokens) const override {
    std::vector<std::string> tokens;
    for (const std::string& word : data::split_whitespace(text)) {
      if (words_.count(word)) {
        tokens.push_back(data::kWordStart + word);
      } else {
        const std::vector<std::string> chars = data::split_chars(word);
        for (size_t i = 0; i < chars.size(); ++i) tokens.push_back(i == 0 ? data::kWordStart + chars[i] : chars[i]);
      }
      if (tokens.size() >= max_tokens) break;
    }
    if (tokens.size() > max_tokens) tokens.resize(max_tokens);
    return tokens;
  }
  // Joined, each ▁ a space but the first: the way bpe's pieces are decoded.
  std::string decode(const std::vector<std::string>& tokens) const override { return data::Bpe::decode(tokens); }
  // A spelled-out word is many tokens: scores compare words.
  bool pieces_of_words() const override { return true; }

 private:
  int64_t size_;                    // --frequent-words: how many to keep
  std::vector<std::string> order_;  // the kept words, most frequent first (the checkpoint's list)
  std::set<std::string> words_;     // the same, to look up
};

}  // namespace

// The one line that makes "frequent" a tokenizer (--src-tokens frequent), with its option.
SEQGRAD_REGISTER_TOKENIZER("frequent", "the most frequent words whole, every other word by its characters",
                           [](const Settings& s) { return std::make_unique<FrequentWords>(s.integer("frequent_words")); },
                           {integer_option("frequent_words", 500, 1, 1000000,
                                           "frequent: how many of a side's commonest words are tokens of their own")})
// [docs:end]
