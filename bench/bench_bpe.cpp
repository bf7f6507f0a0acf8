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
//   build/bench_bpe --long-word [MERGES]
// --long-word learns the merges from 100,000 made-up sentences (and again with one unspaced word
// of 100 KB, then 1 MB, in the table), then encodes single unspaced words of 10 KB, 100 KB and
// 1 MB (made-up words run together), as a careless input might hold: with the priority queue
// that encode uses, and with the rescanning reference (up to 100 KB; it is quadratic). The
// time per KB should stay about the same from 10 KB to 1 MB.
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

// Unspaced words of 10 KB, 100 KB and 1 MB, encoded by encode (the queue) and, up to 100 KB,
// by encode_reference (the scan); each time once, in processor time.
void bench_long_words(int64_t merges) {
  const std::vector<std::string> sentences = zipf_sentences(100000);
  std::clock_t t0 = std::clock();
  const data::Bpe bpe = data::Bpe::learn(sentences, merges);
  std::printf("learned %lld merges from 100000 made-up sentences in %.2f s\n", static_cast<long long>(bpe.size()),
              seconds_since(t0));
  Generator g(2);
  // Learning with one long unspaced word in the table as well.
  std::unordered_map<std::string, int64_t> counts;
  for (const std::string& s : sentences) data::Bpe::count_words(s, counts);
  for (const int64_t kb : {100, 1000}) {
    std::string word;
    while (static_cast<int64_t>(word.size()) < kb * 1000) word += made_up_word(g.randint(500000));
    std::unordered_map<std::string, int64_t> with_word = counts;
    with_word[word] += 1;
    t0 = std::clock();
    const data::Bpe learned = data::Bpe::learn(with_word, merges);
    std::printf("learned %lld merges with one unspaced word of %lld KB in the table in %.2f s\n",
                static_cast<long long>(learned.size()), static_cast<long long>(kb), seconds_since(t0));
  }
  for (const int64_t kb : {10, 100, 1000}) {
    std::string word;
    while (static_cast<int64_t>(word.size()) < kb * 1000) word += made_up_word(g.randint(500000));
    t0 = std::clock();
    const size_t pieces = bpe.encode(word).size();
    const double queue_s = seconds_since(t0);
    std::printf("word of %5lld KB  %8zu pieces  queue %.3f s (%.2f ms per KB)", static_cast<long long>(kb), pieces,
                queue_s, 1000 * queue_s / static_cast<double>(kb));
    if (kb <= 100) {
      t0 = std::clock();
      const bool same = bpe.encode_reference(word) == bpe.encode(word);
      std::printf("  scan %.3f s%s", seconds_since(t0), same ? "" : "  DIFFERENT PIECES");
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const bench::BpeBenchFlags flags = bench::parse_bpe_bench_flags({argv + 1, argv + argc}, data::kDefaultBpeMerges);
    if (flags.long_word) {
      bench_long_words(flags.merges);
      return 0;
    }
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
