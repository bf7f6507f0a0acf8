// tests/bench/test_bench_flags.cpp - bench_train's, bench_cores's and bench_bpe's command lines:
// what each flag accepts, and the message each mistake gets (bench/bench_flags.h).
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_flags.h"

using seqgrad::bench::parse_cores_flags;
using seqgrad::bench::parse_train_bench_flags;
using seqgrad::bench::TrainBenchFlags;

namespace {

// What parse(args) throws, or "(accepted)" if it throws nothing.
template <class Parse>
std::string message_of(Parse parse, const std::vector<std::string>& args) {
  try {
    parse(args);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("bench_train flags: defaults, one thread count, and a list to interleave") {
  const TrainBenchFlags d = parse_train_bench_flags({"--workload", "lstm_attn"});
  CHECK(d.threads == std::vector<int64_t>{1});
  CHECK(d.steps == 30);
  CHECK(d.warmup == 5);
  CHECK_FALSE(d.decode);
  const TrainBenchFlags f =
      parse_train_bench_flags({"--workload", "transformer", "--threads", "1,2", "--steps", "7", "--warmup", "0"});
  CHECK(f.workload == "transformer");
  CHECK(f.threads == std::vector<int64_t>{1, 2});
  CHECK(f.steps == 7);
  CHECK(f.warmup == 0);
  CHECK(parse_train_bench_flags({"--workload", "transformer", "--decode", "--threads", "2"}).decode);
  CHECK(parse_train_bench_flags({"--workload", "transformer_varlen"}).workload == "transformer_varlen");
  // --replicas: one R for every thread count, or one per count; --precision.
  CHECK(d.replicas == std::vector<int64_t>{1});
  CHECK(d.precision == "fp32");
  const TrainBenchFlags r = parse_train_bench_flags({"--workload", "lstm_attn", "--threads", "1,2", "--replicas", "2"});
  CHECK(r.replicas == std::vector<int64_t>{2, 2});
  const TrainBenchFlags p = parse_train_bench_flags(
      {"--workload", "lstm_attn", "--threads", "1,2,2", "--replicas", "1,1,2", "--precision", "bf16"});
  CHECK(p.threads == std::vector<int64_t>{1, 2, 2});
  CHECK(p.replicas == std::vector<int64_t>{1, 1, 2});
  CHECK(p.precision == "bf16");
}

TEST_CASE("bench_train flags: each mistake is named with what was expected and what was given") {
  auto message = [](const std::vector<std::string>& args) { return message_of(parse_train_bench_flags, args); };
  CHECK(message({}) == "--workload expects lstm_attn, transformer or transformer_varlen, got ''");
  CHECK(message({"--workload", "rnn"}) == "--workload expects lstm_attn, transformer or transformer_varlen, got 'rnn'");
  CHECK(message({"--workload"}) == "flag '--workload' is unknown or has no value");
  CHECK(message({"--workload", "lstm_attn", "--batch", "3"}) == "unknown flag '--batch'");
  CHECK(message({"--workload", "lstm_attn", "--steps", "0"}) == "--steps expects a whole number >= 1, got '0'");
  CHECK(message({"--workload", "lstm_attn", "--warmup", "-1"}) == "--warmup expects a whole number >= 0, got '-1'");
  CHECK(message({"--workload", "lstm_attn", "--steps", "5x"}) == "--steps expects a whole number >= 1, got '5x'");
  const std::string bad_threads = "--threads expects a thread count from 1 to 256, or a comma-separated list of them";
  CHECK(message({"--workload", "lstm_attn", "--threads", "0"}) == bad_threads + ", got '0'");
  CHECK(message({"--workload", "lstm_attn", "--threads", "300"}) == bad_threads + ", got '300'");
  CHECK(message({"--workload", "lstm_attn", "--threads", "1,"}) == bad_threads + ", got '1,'");
  CHECK(message({"--workload", "lstm_attn", "--threads", "1,x"}) == bad_threads + ", got '1,x'");
  CHECK(message({"--workload", "lstm_attn", "--threads", "2,1,2"}) == "--threads lists thread count 2 twice, in '2,1,2'");
  CHECK(message({"--workload", "lstm_attn", "--threads", "2,2", "--replicas", "2,2"}) ==
        "--threads and --replicas list 2 threads with 2 replicas twice");
  CHECK(message({"--workload", "lstm_attn", "--threads", "1,2", "--replicas", "1,2,3"}) ==
        "--replicas lists 3 counts for 2 thread counts; expected one, or one per thread count");
  CHECK(message({"--workload", "lstm_attn", "--replicas", "0"}) ==
        "--replicas expects a replica count from 1 to 256, or a comma-separated list of them, got '0'");
  CHECK(message({"--workload", "lstm_attn", "--precision", "fp16"}) == "--precision expects fp32 or bf16, got 'fp16'");
  CHECK(message({"--workload", "transformer", "--decode", "--replicas", "2"}) ==
        "--decode times decoding, which has no replicas; drop --replicas");
  CHECK(message({"--workload", "lstm_attn", "--decode"}) == "--decode needs --workload transformer");
  CHECK(message({"--workload", "transformer", "--decode", "--threads", "1,2"}) ==
        "--decode takes one thread count, got a list of 2");
}

TEST_CASE("bench_cores flags: a thread count, 2 by default, and each mistake named") {
  CHECK(parse_cores_flags({}) == 2);
  CHECK(parse_cores_flags({"--threads", "4"}) == 4);
  auto message = [](const std::vector<std::string>& args) { return message_of(parse_cores_flags, args); };
  CHECK(message({"--steps", "3"}) == "unknown flag '--steps'");
  CHECK(message({"--threads"}) == "flag '--threads' has no value");
  CHECK(message({"--threads", "0"}) == "--threads expects a whole number >= 1, got '0'");
  CHECK(message({"--threads", "two"}) == "--threads expects a whole number >= 1, got 'two'");
  CHECK(message({"--threads", "300"}) == "--threads expects at most 256 threads, got '300'");
}

TEST_CASE("bench_bpe flags: a corpus, --zipf N or --long-word, then the merges; each mistake named") {
  using seqgrad::bench::parse_bpe_bench_flags;
  const auto corpus = parse_bpe_bench_flags({"c.tsv"}, 8000);
  CHECK(corpus.corpus == "c.tsv");
  CHECK(corpus.zipf == 0);
  CHECK(corpus.merges == 8000);
  const auto zipf = parse_bpe_bench_flags({"--zipf", "1000", "50"}, 8000);
  CHECK(zipf.corpus.empty());
  CHECK(zipf.zipf == 1000);
  CHECK(zipf.merges == 50);
  const auto long_word = parse_bpe_bench_flags({"--long-word", "300"}, 8000);
  CHECK(long_word.long_word);
  CHECK(long_word.corpus.empty());
  CHECK(long_word.merges == 300);
  CHECK(!corpus.long_word);
  auto message = [](const std::vector<std::string>& args) {
    return message_of([](const std::vector<std::string>& a) { return parse_bpe_bench_flags(a, 8000); }, args);
  };
  const std::string expected = "expected CORPUS.tsv [MERGES], --zipf N [MERGES] or --long-word [MERGES], got ";
  CHECK(message({}) == expected + "0 arguments");
  CHECK(message({"c.tsv", "10", "20"}) == expected + "3 arguments");
  CHECK(message({"--zipf"}) == expected + "1 argument");
  CHECK(message({"--long-word", "10", "20"}) == expected + "3 arguments");
  CHECK(message({"--zipf", "0"}) == "--zipf expects a whole number >= 1, got '0'");
  CHECK(message({"c.tsv", "-5"}) == "MERGES expects a whole number >= 0, got '-5'");
  CHECK(message({"--help"}) == "unknown flag '--help'");
}
