// data/tasks.h - deterministic toy sequence tasks: copy, reverse, sort, and date normalisation.
//
// Each generator returns (source, target) text pairs from a seed, so an experiment is
// reproducible and needs no download. copy/reverse/sort use single-letter tokens separated by
// spaces ("c a b" -> "a b c" for sort); the date task is character-level: "22 Nov 2026",
// "November 22, 2026", "2026/11/22" and other formats all map to "2026-11-22". Reverse is the
// task that shows the fixed-context bottleneck of plain seq2seq on long inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/tokenizer.h"

namespace seqgrad::data {

struct Pair {
  std::string source, target;
};

enum class Task { Copy, Reverse, Sort, Date, EnZh, EnFr };  // en-zh, en-fr: data/translation.h

// "copy" | "reverse" | "sort" | "date" | "en-zh" | "en-fr"; anything else throws naming the choices.
Task parse_task(const std::string& name);
std::string task_name(Task task);
// How a task's text is split: characters for dates, words for the others.
Tokenization task_tokenization(Task task);

struct TaskOptions {
  int64_t n = 1000;       // pairs
  int64_t min_len = 3;    // source length in tokens (characters for dates), inclusive
  int64_t max_len = 10;
  int64_t symbols = 10;   // alphabet size for copy/reverse/sort: the letters a, b, c, ...
  uint64_t seed = 0;

  TaskOptions& with_n(int64_t v) { n = v; return *this; }
  TaskOptions& with_lengths(int64_t lo, int64_t hi) { min_len = lo; max_len = hi; return *this; }
  TaskOptions& with_symbols(int64_t v) { symbols = v; return *this; }
  TaskOptions& with_seed(uint64_t v) { seed = v; return *this; }
};

std::vector<Pair> make_pairs(Task task, const TaskOptions& options);
// The same pairs, one at a time, in the same order, to `each`: for more pairs than fit in
// memory (`seqgrad data --n 10000000 | head` prints at once, in constant memory).
void for_each_pair(Task task, const TaskOptions& options, const std::function<void(const Pair&)>& each);

// One date in several human formats, all normalised to ISO 8601 (exposed for tests).
std::string format_date(int year, int month, int day, int format);
int date_format_count();

}  // namespace seqgrad::data
