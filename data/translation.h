// data/translation.h - a toy English -> Chinese / French translation grammar.
//
// Sentences are "subject verb object [time]" with tense, numbers, plurals and adjectives, and
// the three languages put things in different places, so a model must learn to align, not just
// to copy word by word:
//   billy ate two red apples yesterday  ->  比利 昨天 吃 了 两 个 红 苹果
//                                       ->  billy a mangé deux pommes rouges hier
// Chinese puts the time before the verb, marks the past with 了 and the future with 会, has no
// plural and counts with measure words (个, 只, 本, 杯, 辆, 封); French conjugates by person and
// tense, agrees adjectives in gender and number, and puts colours after the noun but "petit"
// and "grand" before it. Everything is deterministic from a seed. Tokens are space-separated.
#pragma once

#include <cstdint>
#include <vector>

#include "data/tasks.h"

namespace seqgrad::data {

enum class TargetLanguage { Chinese, French };

// n pairs whose English side has min_len..max_len words.
std::vector<Pair> make_translation_pairs(TargetLanguage language, int64_t n, int64_t min_len, int64_t max_len,
                                         uint64_t seed);
// The same pairs, one at a time, in the same order, to `each`.
void for_each_translation_pair(TargetLanguage language, int64_t n, int64_t min_len, int64_t max_len, uint64_t seed,
                               const std::function<void(const Pair&)>& each);

}  // namespace seqgrad::data
