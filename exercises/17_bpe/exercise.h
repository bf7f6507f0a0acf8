// exercises/17_bpe - byte-pair encoding: learning the merges, one merge at a time (chapter 6).
//
// Chapter 6 learns BPE by hand on the paper's four words, prints how data::Bpe encodes a word,
// and prints the fast learner's merge, which changes pair counts instead of counting again.
// Write the learner on a plain table of words, with that bookkeeping made explicit.
//
// A table holds each distinct word once, as its symbols and how often it occurs: "newest" x6 is
// {{"▁n", "e", "w", "e", "s", "t"}, 6} (the first character carries the word-start marker ▁,
// data::kWordStart). A pair count is the number of times (a, b) stand side by side in the
// corpus: every occurrence in a word counts the word's count ("a a a" x2 holds a a 4 times).
//   count_pairs(table)       every adjacent pair's count; pairs that never occur are absent.
//   best_pair(counts, m)     the most frequent pair; ties go to the pair that sorts first, its
//                            left symbols compared byte by byte, then its right ones (▁ sorts
//                            after every Latin letter); none when the best occurs < m times.
//   merge(table, pair)       replaces every occurrence of pair (a, b), left to right, by the one
//                            symbol ab ("a a a" with a a becomes "aa a"), and returns how the
//                            pair counts changed: count_pairs(after) - count_pairs(before),
//                            leaving out the pairs whose count did not change.
//   learn(words, n, m)       up to n merges, each "a b", as data::Bpe::learn(words, n, m) gives
//                            them; words with a count below 1 are left out.
// A merge changes only the words that hold its pair; the delta is worked out from those alone,
// without counting the whole table again (that is what makes learning fast). The check counts
// memory allocations (operator new) to see it: on a table of 12,800 different pairs, where one
// count makes at least 12,800, a merge may make a quarter of that; learn may make two counts'
// worth for its table and first count, then a quarter of a count for each merge.
// Do not call data::Bpe: the check compares against it. data::split_chars may help.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct Word {
  std::vector<std::string> symbols;
  int64_t count = 0;
};
using Table = std::vector<Word>;
using SymbolPair = std::pair<std::string, std::string>;  // (left, right)
using PairCounts = std::map<SymbolPair, int64_t>;       // counts, or changes of counts

PairCounts count_pairs(const Table& table);
std::optional<SymbolPair> best_pair(const PairCounts& counts, int64_t min_count);
PairCounts merge(Table& table, const SymbolPair& pair);
std::vector<std::string> learn(const std::map<std::string, int64_t>& word_counts, int64_t merges, int64_t min_count = 2);
