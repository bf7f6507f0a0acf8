// bench/bench_flags.h - the command lines of bench_train, bench_cores and bench_bpe, parsed
// apart from running them, so that tests/bench/test_bench_flags.cpp can pin every message a
// mistyped flag gets.
//   bench_train --workload lstm_attn|transformer|transformer_varlen  --threads T or T1,T2,...
//               [--replicas R or R1,R2,...]  [--precision fp32|bf16]  --steps N  --warmup W  --decode
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
  std::vector<int64_t> threads{1};   // one count, or several to interleave step by step
  std::vector<int64_t> replicas{1};  // data-parallel shards: one for every thread count, or one each
  std::string precision = "fp32";    // or bf16
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

// "2" or "1,2": counts from 1 to 256 (of threads, or of what `noun` names).
inline std::vector<int64_t> parse_counts(const std::string& flag, const std::string& text,
                                         const std::string& noun = "thread") {
  std::vector<int64_t> counts;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 256)
      fail(flag + " expects a " + noun + " count from 1 to 256, or a comma-separated list of them, got '" + text + "'");
    counts.push_back(v);
    if (comma == std::string::npos) return counts;
    start = comma + 1;
  }
}

}  // namespace detail

// Throws std::invalid_argument naming the flag, what it expects and what it got.
inline TrainBenchFlags parse_train_bench_flags(const std::vector<std::string>& args) {
  TrainBenchFlags f;
  std::string threads_text;  // as given, for the message about a repeated count
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
    else if (flag == "--threads") {
      f.threads = detail::parse_counts(flag, value);
      threads_text = value;
    } else if (flag == "--replicas")
      f.replicas = detail::parse_counts(flag, value, "replica");
    else if (flag == "--precision")
      f.precision = value;
    else if (flag == "--steps")
      f.steps = detail::parse_count(flag, value, 1);
    else if (flag == "--warmup")
      f.warmup = detail::parse_count(flag, value, 0);
    else
      detail::fail("unknown flag '" + flag + "'");
  }
  if (f.workload != "lstm_attn" && f.workload != "transformer" && f.workload != "transformer_varlen")
    detail::fail("--workload expects lstm_attn, transformer or transformer_varlen, got '" + f.workload + "'");
  if (f.precision != "fp32" && f.precision != "bf16")
    detail::fail("--precision expects fp32 or bf16, got '" + f.precision + "'");
  // Each configuration a step runs in: (threads[i], replicas[i]), or every count with one R.
  const bool one_r = f.replicas.size() == 1;
  if (one_r) f.replicas.assign(f.threads.size(), f.replicas[0]);
  if (f.replicas.size() != f.threads.size())
    detail::fail("--replicas lists " + std::to_string(f.replicas.size()) + " counts for " +
                 std::to_string(f.threads.size()) + " thread counts; expected one, or one per thread count");
  for (size_t i = 0; i < f.threads.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (f.threads[i] == f.threads[j] && f.replicas[i] == f.replicas[j])
        detail::fail(one_r ? "--threads lists thread count " + std::to_string(f.threads[i]) + " twice, in '" +
                                 threads_text + "'"
                         : "--threads and --replicas list " + std::to_string(f.threads[i]) + " threads with " +
                               std::to_string(f.replicas[i]) + " replicas twice");
  if (f.decode && f.workload != "transformer") detail::fail("--decode needs --workload transformer");
  if (f.decode && f.replicas[0] != 1) detail::fail("--decode times decoding, which has no replicas; drop --replicas");
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
