// exercises/solutions/17_bpe/exercise.cpp - reference solution of exercise 17.
#include "exercise.h"

#include "data/bpe.h"
#include "data/tokenizer.h"

namespace {

// Adds sign * count for every adjacent pair of `w` to `counts`.
void add_pairs(const Word& w, int64_t sign, PairCounts& counts) {
  for (size_t k = 0; k + 1 < w.symbols.size(); ++k) counts[{w.symbols[k], w.symbols[k + 1]}] += sign * w.count;
}

}  // namespace

PairCounts count_pairs(const Table& table) {
  PairCounts counts;
  for (const Word& w : table) add_pairs(w, +1, counts);
  return counts;
}

std::optional<SymbolPair> best_pair(const PairCounts& counts, int64_t min_count) {
  // The map walks its keys in sort order (left symbol, then right, by bytes), so keeping the
  // first of the largest counts breaks ties as documented.
  auto best = counts.end();
  for (auto it = counts.begin(); it != counts.end(); ++it)
    if (best == counts.end() || it->second > best->second) best = it;
  if (best == counts.end() || best->second < min_count) return std::nullopt;
  return best->first;
}

PairCounts merge(Table& table, const SymbolPair& pair) {
  const auto& [a, b] = pair;
  PairCounts delta;
  for (Word& w : table) {
    bool holds = false;  // most words do not hold the pair: look before copying anything
    for (size_t k = 0; k + 1 < w.symbols.size() && !holds; ++k) holds = w.symbols[k] == a && w.symbols[k + 1] == b;
    if (!holds) continue;
    std::vector<std::string> merged;
    for (size_t k = 0; k < w.symbols.size(); ++k) {
      if (k + 1 < w.symbols.size() && w.symbols[k] == a && w.symbols[k + 1] == b) {
        merged.push_back(a + b);
        ++k;  // the pair's right symbol is used up: "a a a" -> "aa a"
      } else {
        merged.push_back(w.symbols[k]);
      }
    }
    // Only this word's pairs change: take its old ones out, put its new ones in. Neighbours
    // shared by two occurrences ("a a a a") are counted once each way, so nothing is lost.
    add_pairs(w, -1, delta);
    w.symbols = std::move(merged);
    add_pairs(w, +1, delta);
  }
  for (auto it = delta.begin(); it != delta.end();) it = it->second == 0 ? delta.erase(it) : std::next(it);
  return delta;
}

std::vector<std::string> learn(const std::map<std::string, int64_t>& word_counts, int64_t merges, int64_t min_count) {
  Table table;
  for (const auto& [word, count] : word_counts) {
    if (count < 1) continue;
    Word w{seqgrad::data::split_chars(word), count};
    if (w.symbols.empty()) continue;
    w.symbols[0] = seqgrad::data::kWordStart + w.symbols[0];
    table.push_back(std::move(w));
  }
  PairCounts counts = count_pairs(table);
  std::vector<std::string> learned;
  for (int64_t m = 0; m < merges; ++m) {
    const std::optional<SymbolPair> best = best_pair(counts, min_count);
    if (!best) break;
    learned.push_back(best->first + " " + best->second);
    for (const auto& [p, change] : merge(table, *best)) {
      int64_t& c = counts[p];
      c += change;
      if (c == 0) counts.erase(p);
    }
  }
  return learned;
}
