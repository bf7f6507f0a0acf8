// data/vocab.h - Vocab: the two-way map between tokens and integer ids.
//
// Ids 0..3 are always the special tokens <pad> (padding), <bos> (begin of sequence), <eos>
// (end of sequence) and <unk> (any token not in the vocabulary), as io/special_tokens.h fixes
// them for every vocabulary and decoder. Built from a corpus, the rest
// are ordered by frequency (then alphabetically), so the same corpus always gives the same ids.
// Read next: tokenizer.h, tasks.h, batch.h.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/special_tokens.h"

namespace seqgrad::data {

class Vocab {
 public:
  static constexpr int64_t kPad = kPadId, kBos = kBosId, kEos = kEosId, kUnk = kUnkId;

  Vocab();  // only the four special tokens
  // Every token appearing at least min_freq times in the sentences.
  static Vocab build(const std::vector<std::vector<std::string>>& sentences, int64_t min_freq = 1);
  // The same from counts already made (token -> occurrences), e.g. one sentence at a time over
  // a corpus too large to hold tokenized all at once.
  static Vocab from_counts(const std::map<std::string, int64_t>& counts, int64_t min_freq = 1);
  // From a list whose first four entries are the special tokens (as tokens() returns).
  static Vocab from_tokens(const std::vector<std::string>& tokens);

  int64_t add(const std::string& token);  // its id (new or existing)
  int64_t id(const std::string& token) const;  // kUnk when absent
  const std::string& token(int64_t id) const;  // throws std::out_of_range for a bad id
  bool contains(const std::string& token) const { return ids_.count(token) > 0; }
  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  const std::vector<std::string>& tokens() const { return tokens_; }

  // tokens -> ids, optionally wrapped in <bos> ... <eos>
  std::vector<int64_t> encode(const std::vector<std::string>& tokens, bool add_bos = false, bool add_eos = false) const;
  // ids -> tokens, stopping at the first <eos> and dropping <pad>/<bos> (when strip_special)
  std::vector<std::string> decode(const std::vector<int64_t>& ids, bool strip_special = true) const;

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int64_t> ids_;
};

}  // namespace seqgrad::data
