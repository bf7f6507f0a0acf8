// data/bpe.h - byte-pair encoding (Sennrich et al., 2016): subword units learned from a corpus.
//
// Words are split at whitespace, then into Unicode characters (code points, never bytes), the
// first one carrying the word-start marker ▁ (U+2581, as in sentencepiece): "lower" is
// ▁l o w e r. Learning repeatedly merges the most frequent adjacent pair of symbols into one
// new symbol; encoding applies the learned merges, in the order they were learned, to each word
// of new text; decoding joins the pieces and turns each ▁ back into a space. Frequent words end
// up as one piece, rare ones as a few, and no word is ever out of vocabulary unless it has a
// character the corpus never had. What this is not: sentencepiece's unigram model, or BPE over
// bytes (GPT-2's), and it does not normalise text (no lower-casing, no Unicode NFKC).
// Read next: vocab.h (pieces -> ids); chapter 6 works an example through by hand.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace seqgrad::data {

// The word-start marker, U+2581 LOWER ONE EIGHTH BLOCK, in UTF-8. In input text it counts as a
// space, so that every ▁ in a piece is a marker (sentencepiece reads it the same way).
inline constexpr const char* kWordStart = "\xE2\x96\x81";

// How many merges `seqgrad train --bpe-merges` learns by default, per side: a vocabulary of
// roughly 8,000 pieces plus the alphabet. Small corpora (10k pairs) do best with a few thousand
// pieces, very large ones (millions of pairs) use 30k or more; 8,000 suits 10k to 1M pairs,
// and learning stops earlier on its own when no pair is left that occurs twice.
constexpr int64_t kDefaultBpeMerges = 8000;

class Bpe {
 public:
  Bpe();  // no merges: every word is its characters
  // Merges in the order they were learned, each "left right" (one line of subword-nmt's codes
  // file, e.g. "e s"). Checks every line: a damaged list is an error naming the merge.
  explicit Bpe(const std::vector<std::string>& merges);

  // ---- learning ----------------------------------------------------------------------------
  // Adds the words of one sentence to a word -> occurrences table. `line` (from 1; 0: unknown)
  // only names the sentence in the error for invalid UTF-8.
  static void count_words(const std::string& text, std::unordered_map<std::string, int64_t>& counts,
                          int64_t line = 0);
  // Learns up to `merges` merges from the table, stopping early when the most frequent pair
  // occurs fewer than `min_count` times (merging it would only spell out one rare word).
  // Ties between equally frequent pairs go to the pair that sorts first, comparing the left
  // symbols' bytes and then the right ones' (UTF-8 byte order is code point order, so ▁ comes
  // after every letter of the Latin alphabet). The result depends on the table only.
  static Bpe learn(const std::unordered_map<std::string, int64_t>& word_counts, int64_t merges, int64_t min_count = 2);
  // The same from sentences; an error names the line (its index + 1).
  static Bpe learn(const std::vector<std::string>& sentences, int64_t merges, int64_t min_count = 2);

  // ---- using -------------------------------------------------------------------------------
  // "the lowest" -> {"▁the", "▁low", "est"}: each word's characters, merged in the order the
  // merges were learned. Text with invalid UTF-8 is an error naming the byte.
  // The merges are found with a priority queue (merge_with_queue): O(n log n) in a word's length.
  // With max_pieces, the first max_pieces pieces only (the words after them are not encoded).
  std::vector<std::string> encode(const std::string& text, size_t max_pieces = SIZE_MAX) const;
  // The same pieces found the plain way, rescanning the word after every merge that applies:
  // O(n) a scan, and at most min(n, merges) scans, so O(n^2) at worst; the readable definition
  // that encode must agree with (for tests and benchmarks; no cache).
  std::vector<std::string> encode_reference(const std::string& text) const;
  // Pieces -> text: joined, each ▁ a space except before the first word. For text whose words are
  // separated by single spaces (as split_whitespace + join(" ") leave it), decode(encode(text))
  // is exactly the text.
  static std::string decode(const std::vector<std::string>& pieces);

  const std::vector<std::string>& merges() const { return merges_; }
  int64_t size() const { return static_cast<int64_t>(merges_.size()); }

 private:
  // Appends the pieces of one word (no white space in it) to `pieces`, merged by scanning or
  // with the queue (only the latter's results are cached).
  void encode_word(const std::string& word, std::vector<std::string>& pieces, bool by_scanning) const;
  struct Rule;
  std::vector<int32_t> character_ids(const std::vector<std::string>& chars) const;
  const Rule* rule_for(int32_t a, int32_t b) const;
  // Applies the merges to a word's symbol ids, in place: the two ways, with the same result.
  void merge_by_scanning(std::vector<int32_t>& ids) const;
  void merge_with_queue(std::vector<int32_t>& ids) const;

  std::vector<std::string> merges_;  // "left right", in rank order
  // The same as numbers: every symbol the merges name, and for each merged pair of symbol ids
  // (the key: left << 32 | right) its rank and the id of the symbol it makes.
  struct Rule {
    int32_t rank, merged;
  };
  std::vector<std::string> symbols_;
  std::unordered_map<std::string, int32_t> symbol_ids_;
  std::unordered_map<uint64_t, Rule> rules_;
  // Encoding a word always gives the same pieces, and a corpus repeats its words, so each
  // word's pieces are kept (shared by copies, which have the same merges; safe across threads).
  struct Cache;
  std::shared_ptr<Cache> cache_;
};

}  // namespace seqgrad::data
