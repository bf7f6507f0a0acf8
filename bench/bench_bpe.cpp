// bench/bench_bpe.cpp - how long byte-pair encoding takes to learn and to apply on a corpus.
//
// For each side of a TSV corpus: counting its words, learning the merges (data/bpe.h), and
// encoding every sentence (a cold cache: each distinct word is worked out once). One thread,
// one run each, in processor time (std::clock), which a busy machine disturbs less than wall
// time. The toy grammar has a few dozen distinct words; `--zipf N` makes up N sentences whose
// words follow Zipf's law over 500,000 made-up ones, as natural text does.
//   build/seqgrad data --task en-fr --n 100000 > /tmp/enfr.tsv
//   make build/bench_bpe && build/bench_bpe /tmp/enfr.tsv [MERGES, default 8000]
//   build/bench_bpe --zipf 1000000 [MERGES]
#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/bench_flags.h"
#include "data/bpe.h"
#include "data/corpus.h"
#include "tensor/random.h"

using namespace seqgrad;

namespace {

double seconds_since(std::clock_t t0) { return static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC; }

void bench_side(const char* name, const std::vector<std::string>& sentences, int64_t merges) {
  std::clock_t t0 = std::clock();
  std::unordered_map<std::string, int64_t> counts;
  int64_t words = 0;
  for (const std::string& s : sentences) data::Bpe::count_words(s, counts);
  for (const auto& [word, n] : counts) words += n;
  const double count_s = seconds_since(t0);
  t0 = std::clock();
  const data::Bpe bpe = data::Bpe::learn(counts, merges);
  const double learn_s = seconds_since(t0);
  t0 = std::clock();
  int64_t pieces = 0;
  for (const std::string& s : sentences) pieces += static_cast<int64_t>(bpe.encode(s).size());
  const double encode_s = seconds_since(t0);
  std::printf("%-6s %9zu sentences %10lld words %8zu distinct  %6lld merges  %.2f pieces/word   "
              "count %.2f s  learn %.2f s  encode %.2f s\n",
              name, sentences.size(), static_cast<long long>(words), counts.size(), static_cast<long long>(bpe.size()),
              words ? static_cast<double>(pieces) / static_cast<double>(words) : 0.0, count_s, learn_s, encode_s);
}

// Word number r (0 = the most frequent) as syllables: "ka", "ka to", ... without spaces.
std::string made_up_word(uint64_t r) {
  static const char* const kConsonants[] = {"k", "t", "p", "s", "m", "n", "r", "l", "b", "d", "g", "v"};
  static const char* const kVowels[] = {"a", "e", "i", "o", "u", "é", "ü"};
  std::string word;
  do {
    word += kConsonants[r % 12];
    r /= 12;
    word += kVowels[r % 7];
    r /= 7;
  } while (r > 0);
  return word;
}

// n sentences of 5 to 15 words; word r has probability proportional to 1 / (r + 1).
std::vector<std::string> zipf_sentences(int64_t n) {
  constexpr double kWords = 500000;
  Generator g(1);
  std::vector<std::string> sentences;
  for (int64_t i = 0; i < n; ++i) {
    std::string s;
    for (int64_t w = 5 + static_cast<int64_t>(g.randint(11)); w > 0; --w) {
      // Inverse transform: P(rank < x) ~ log(1 + x) / log(1 + kWords).
      const double u = static_cast<double>(g.randint(1u << 30)) / static_cast<double>(1u << 30);
      s += (s.empty() ? "" : " ") + made_up_word(static_cast<uint64_t>(std::exp(u * std::log1p(kWords))) - 1);
    }
    sentences.push_back(s);
  }
  return sentences;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const bench::BpeBenchFlags flags = bench::parse_bpe_bench_flags({argv + 1, argv + argc}, data::kDefaultBpeMerges);
    if (flags.zipf > 0) {
      const std::clock_t t0 = std::clock();
      const std::vector<std::string> sentences = zipf_sentences(flags.zipf);
      std::printf("made %lld sentences in %.2f s\n", static_cast<long long>(flags.zipf), seconds_since(t0));
      bench_side("zipf", sentences, flags.merges);
      return 0;
    }
    const std::clock_t t0 = std::clock();
    const std::vector<data::Pair> pairs = data::read_tsv_file(flags.corpus);
    std::printf("read %zu pairs in %.2f s\n", pairs.size(), seconds_since(t0));
    std::vector<std::string> src, tgt;
    for (const data::Pair& p : pairs) {
      src.push_back(p.source);
      tgt.push_back(p.target);
    }
    bench_side("source", src, flags.merges);
    bench_side("target", tgt, flags.merges);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_bpe: %s\n", e.what());
    return 2;
  }
  return 0;
}
