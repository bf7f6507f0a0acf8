// data/vocab.cpp - building, encoding and decoding with a Vocab.
#include "data/vocab.h"

#include <algorithm>
#include <map>

#include "tensor/check.h"

namespace seqgrad::data {

Vocab::Vocab() {
  for (const char* special : {"<pad>", "<bos>", "<eos>", "<unk>"}) add(special);
}

Vocab Vocab::build(const std::vector<std::vector<std::string>>& sentences, int64_t min_freq) {
  std::map<std::string, int64_t> counts;
  for (const auto& sentence : sentences)
    for (const auto& token : sentence) ++counts[token];
  return from_counts(counts, min_freq);
}

Vocab Vocab::from_counts(const std::map<std::string, int64_t>& counts, int64_t min_freq) {
  check(min_freq >= 1, "Vocab: expected min_freq >= 1, got ", min_freq);
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  // Most frequent first; ties alphabetically (counts is a sorted map, stable_sort keeps that).
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  Vocab v;
  for (const auto& [token, count] : sorted)
    if (count >= min_freq) v.add(token);
  return v;
}

Vocab Vocab::from_tokens(const std::vector<std::string>& tokens) {
  Vocab v;
  check(tokens.size() >= 4 && std::equal(v.tokens_.begin(), v.tokens_.end(), tokens.begin()),
        "Vocab: expected a token list starting with <pad>, <bos>, <eos>, <unk>");
  for (size_t i = 4; i < tokens.size(); ++i) {
    check(!v.contains(tokens[i]), "Vocab: the token '", tokens[i], "' appears twice");
    v.add(tokens[i]);
  }
  return v;
}

int64_t Vocab::add(const std::string& token) {
  const auto it = ids_.find(token);
  if (it != ids_.end()) return it->second;
  tokens_.push_back(token);
  return ids_[token] = static_cast<int64_t>(tokens_.size()) - 1;
}

int64_t Vocab::id(const std::string& token) const {
  const auto it = ids_.find(token);
  return it == ids_.end() ? kUnk : it->second;
}

const std::string& Vocab::token(int64_t id) const {
  check_index(id >= 0 && id < size(), "Vocab: token id ", id, " is out of range for a vocabulary of ", size());
  return tokens_[id];
}

std::vector<int64_t> Vocab::encode(const std::vector<std::string>& tokens, bool add_bos, bool add_eos) const {
  std::vector<int64_t> ids;
  if (add_bos) ids.push_back(kBos);
  for (const auto& t : tokens) ids.push_back(id(t));
  if (add_eos) ids.push_back(kEos);
  return ids;
}

std::vector<std::string> Vocab::decode(const std::vector<int64_t>& ids, bool strip_special) const {
  std::vector<std::string> tokens;
  for (int64_t i : ids) {
    if (strip_special && i == kEos) break;
    if (strip_special && (i == kPad || i == kBos)) continue;
    tokens.push_back(token(i));
  }
  return tokens;
}

}  // namespace seqgrad::data
