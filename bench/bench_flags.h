// bench/bench_flags.h - the command lines of bench_train, bench_cores and bench_bpe, parsed
// apart from running them, so that tests/bench/test_bench_flags.cpp can pin every message a
// mistyped flag gets.
//   bench_train --workload lstm_attn|transformer|transformer_varlen  --threads T or T1,T2,...  --steps N  --warmup W  --decode
//   bench_cores [--threads T]
//   bench_bpe CORPUS.tsv [MERGES]   or   bench_bpe --zipf N [MERGES]
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace seqgrad::bench {

struct TrainBenchFlags {
  std::string workload;
  std::vector<int64_t> threads{1};  // one count, or several to interleave step by step
  int64_t steps = 30, warmup = 5;
  bool decode = false;
};

namespace detail {

[[noreturn]] inline void fail(const std::string& what) { throw std::invalid_argument(what); }

// A whole number >= least.
inline int64_t parse_count(const std::string& flag, const std::string& text, int64_t least) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < least)
    fail(flag + " expects a whole number >= " + std::to_string(least) + ", got '" + text + "'");
  return v;
}

// "2" or "1,2": thread counts from 1 to 256, none twice.
inline std::vector<int64_t> parse_counts(const std::string& flag, const std::string& text) {
  std::vector<int64_t> counts;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 256)
      fail(flag + " expects a thread count from 1 to 256, or a comma-separated list of them, got '" + text + "'");
    if (std::find(counts.begin(), counts.end(), v) != counts.end())
      fail(flag + " lists thread count " + std::to_string(v) + " twice, in '" + text + "'");
    counts.push_back(v);
    if (comma == std::string::npos) return counts;
    start = comma + 1;
  }
}

}  // namespace detail

// Throws std::invalid_argument naming the flag, what it expects and what it got.
inline TrainBenchFlags parse_train_bench_flags(const std::vector<std::string>& args) {
  TrainBenchFlags f;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--decode") {
      f.decode = true;
      continue;
    }
    if (i + 1 >= args.size()) detail::fail("flag '" + flag + "' is unknown or has no value");
    const std::string& value = args[++i];
    if (flag == "--workload")
      f.workload = value;
    else if (flag == "--threads")
      f.threads = detail::parse_counts(flag, value);
    else if (flag == "--steps")
      f.steps = detail::parse_count(flag, value, 1);
    else if (flag == "--warmup")
      f.warmup = detail::parse_count(flag, value, 0);
    else
      detail::fail("unknown flag '" + flag + "'");
  }
  if (f.workload != "lstm_attn" && f.workload != "transformer" && f.workload != "transformer_varlen")
    detail::fail("--workload expects lstm_attn, transformer or transformer_varlen, got '" + f.workload + "'");
  if (f.decode && f.workload != "transformer") detail::fail("--decode needs --workload transformer");
  if (f.decode && f.threads.size() > 1)
    detail::fail("--decode takes one thread count, got a list of " + std::to_string(f.threads.size()));
  return f;
}

// bench_cores [--threads T]: the number of threads to run the probe on together (default 2).
inline int64_t parse_cores_flags(const std::vector<std::string>& args) {
  int64_t threads = 2;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "--threads") detail::fail("unknown flag '" + args[i] + "'");
    if (i + 1 >= args.size()) detail::fail("flag '--threads' has no value");
    const std::string& value = args[++i];
    threads = detail::parse_count("--threads", value, 1);
    if (threads > 256) detail::fail("--threads expects at most 256 threads, got '" + value + "'");
  }
  return threads;
}

// bench_bpe: a TSV corpus, or --zipf N made-up sentences; then the merges to learn.
struct BpeBenchFlags {
  std::string corpus;      // "" with --zipf or --long-word
  int64_t zipf = 0;        // sentences to make up
  bool long_word = false;  // time single unspaced words of 10 KB to 1 MB instead
  int64_t merges = 0;
};

inline BpeBenchFlags parse_bpe_bench_flags(const std::vector<std::string>& args, int64_t default_merges) {
  BpeBenchFlags f;
  f.merges = default_merges;
  const bool zipf = !args.empty() && args[0] == "--zipf";
  f.long_word = !args.empty() && args[0] == "--long-word";
  const size_t need = zipf ? 2 : 1;  // words before MERGES
  if (args.size() < need || args.size() > need + 1)
    detail::fail("expected CORPUS.tsv [MERGES], --zipf N [MERGES] or --long-word [MERGES], got " +
                 std::to_string(args.size()) + (args.size() == 1 ? " argument" : " arguments"));
  if (zipf) {
    f.zipf = detail::parse_count("--zipf", args[1], 1);
  } else if (!f.long_word) {
    if (args[0].rfind("--", 0) == 0) detail::fail("unknown flag '" + args[0] + "'");
    f.corpus = args[0];
  }
  if (args.size() == need + 1) f.merges = detail::parse_count("MERGES", args[need], 0);
  return f;
}

}  // namespace seqgrad::bench
