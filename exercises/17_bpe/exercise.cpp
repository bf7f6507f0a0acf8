// exercises/17_bpe/exercise.cpp - your solution goes here.
#include "exercise.h"

#include "data/bpe.h"
#include "data/tokenizer.h"

PairCounts count_pairs(const Table& table) {
  // TODO(exercise 17): every adjacent pair of every word, counted as often as the word occurs.
  (void)table;
  return {};
}

std::optional<SymbolPair> best_pair(const PairCounts& counts, int64_t min_count) {
  // TODO(exercise 17): the most frequent pair, ties to the first in sort order (a std::map
  // already walks its keys in that order); none below min_count.
  (void)counts;
  (void)min_count;
  return std::nullopt;
}

PairCounts merge(Table& table, const SymbolPair& pair) {
  // TODO(exercise 17): rewrite each word that holds the pair, left to right, and collect how its
  // pairs changed; drop the changes that came to 0.
  (void)table;
  (void)pair;
  return {};
}

std::vector<std::string> learn(const std::map<std::string, int64_t>& word_counts, int64_t merges, int64_t min_count) {
  // TODO(exercise 17): the table of characters (the first one marked with data::kWordStart),
  // its pair counts, then best_pair and merge until n merges or none is left, keeping the
  // counts up to date with merge's deltas.
  (void)word_counts;
  (void)merges;
  (void)min_count;
  return {};
}
