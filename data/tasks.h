// data/tasks.h - deterministic toy sequence tasks: copy, reverse, sort, and date normalisation,
// found by name in a registry (io/registry.h) that a task of one's own joins from its own file.
//
// Each generator returns (source, target) text pairs from a seed, so an experiment is
// reproducible and needs no download. copy/reverse/sort use single-letter tokens separated by
// spaces ("c a b" -> "a b c" for sort); the date task is character-level: "22 Nov 2026",
// "November 22, 2026", "2026/11/22" and other formats all map to "2026-11-22". Reverse is the
// task that shows the fixed-context bottleneck of plain seq2seq on long inputs. The toy
// translation tasks en-zh and en-fr register from data/translation.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/tokenizer.h"
#include "io/registry.h"

namespace seqgrad::data {

struct Pair {
  std::string source, target;
};

// The library's own tasks' names, for programs that ask for one: make_pairs(Task::Reverse, ...).
struct Task {
  static constexpr const char* Copy = "copy";
  static constexpr const char* Reverse = "reverse";
  static constexpr const char* Sort = "sort";
  static constexpr const char* Date = "date";
  static constexpr const char* EnZh = "en-zh";  // data/translation.h
  static constexpr const char* EnFr = "en-fr";
};

struct TaskOptions {
  int64_t n = 1000;       // pairs
  int64_t min_len = 3;    // source length in tokens (characters for dates), inclusive
  int64_t max_len = 10;
  uint64_t seed = 0;
  Settings settings;      // the values of the task's own options (copy's "symbols"); the rest default

  TaskOptions& with_n(int64_t v) { n = v; return *this; }
  TaskOptions& with_lengths(int64_t lo, int64_t hi) { min_len = lo; max_len = hi; return *this; }
  TaskOptions& with_seed(uint64_t v) { seed = v; return *this; }
  // copy, reverse, sort: the alphabet's size (the letters a, b, c, ...; 10 unless given).
  TaskOptions& with_symbols(int64_t v) { settings.set("symbols", v); return *this; }
};

// ================================================================================================
// The registry of tasks: "copy", "reverse", "sort", "date", "en-zh", "en-fr", and whatever else
// registers. A task says how its text splits into tokens, the source lengths it makes when none
// are asked for, and declares options of its own (the tool's flags: --symbols); its generator
// sends options.n pairs to `each`, in order, from options.seed, with options.settings complete.
//   SEQGRAD_REGISTER_TASK("repeat", "each token twice", "space", 3, 10, generate_repeat, {symbols_option()});

struct TaskEntry {
  std::string name, help;
  std::string tokens = "space";  // the tokenizer the tool cuts its text with by default (data/tokenizer.h): "char" for dates
  int64_t min_len = 3, max_len = 10;  // the source lengths when none are asked for
  std::function<void(const TaskOptions& options, const std::function<void(const Pair&)>& each)> generate;
  std::vector<Option> options = {};
};
Registry<TaskEntry>& tasks();
#define SEQGRAD_REGISTER_TASK(...) SEQGRAD_REGISTER(::seqgrad::data::tasks(), ::seqgrad::data::TaskEntry{__VA_ARGS__})

// copy, reverse and sort's option: the alphabet's size.
Option symbols_option();

// n pairs of the task named `task` (a name the registry does not have is an error listing them).
std::vector<Pair> make_pairs(const std::string& task, const TaskOptions& options);
// The same pairs, one at a time, in the same order, to `each`: for more pairs than fit in
// memory (`seqgrad data --n 10000000 | head` prints at once, in constant memory).
void for_each_pair(const std::string& task, const TaskOptions& options, const std::function<void(const Pair&)>& each);

// One date in several human formats, all normalised to ISO 8601 (exposed for tests).
std::string format_date(int year, int month, int day, int format);
int date_format_count();

}  // namespace seqgrad::data
