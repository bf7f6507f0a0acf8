// tests/examples/test_translate_batch.cpp - decoding many sentences at once gives exactly what
// decoding each alone gives.
//
// Translator::translate_ids decodes its sources `batch` at a time, shortest first: padded to the
// longest of their batch, masked, and stepped together as the rows of one matrix (B rows for
// greedy decoding, B x K for beam search). For every model kind the tool trains, a briefly
// trained model translates a few dozen sentences of mixed lengths one at a time and in batches
// of 5 and 64, greedy and with beam 3, on 1 and 2 threads: the tokens and the log-probabilities
// must be the same, bit for bit.
#include <cstring>
#include <string>
#include <vector>

#include "data/batch.h"
#include "data/tasks.h"
#include "examples/seqgrad/translator.h"
#include "nn/optim/optim.h"
#include "tests/test_util.h"

using namespace seqgrad;

namespace {

// A model of `config` trained for a few dozen steps on reversing 1..12 letters: enough to end
// its outputs with <eos> at different lengths, so that rows finish at different steps.
std::unique_ptr<cli::Translator> briefly_trained(cli::ModelConfig config) {
  manual_seed(7);
  const auto pairs = data::make_pairs(data::Task::Reverse, data::TaskOptions().with_n(240).with_lengths(1, 12).with_seed(5));
  std::vector<std::vector<std::string>> src, tgt;
  for (const data::Pair& p : pairs) {
    src.push_back(data::tokenize(p.source, data::Tokenization::Space));
    tgt.push_back(data::tokenize(p.target, data::Tokenization::Space));
  }
  auto t = std::make_unique<cli::Translator>(config, data::Vocab::build(src), data::Vocab::build(tgt));
  const data::EncodedPairs enc = t->encode_pairs(pairs);
  std::vector<int64_t> lengths;
  for (const auto& s : enc.src) lengths.push_back(static_cast<int64_t>(s.size()));
  nn::Adam opt(t->module().parameters(), nn::AdamOptions(real(0.01)));
  t->module().train();
  for (uint64_t epoch = 0; epoch < 4; ++epoch)
    for (const auto& idx : data::make_batches(lengths, 16, epoch)) {
      opt.zero_grad();
      t->loss(enc.batch(idx), 0).backward();
      opt.step();
    }
  return t;
}

// 40 sources of 1..14 tokens (some past max_len, cut), one empty, in no order of length.
std::vector<std::vector<int64_t>> mixed_sources(const cli::Translator& t) {
  const auto pairs = data::make_pairs(data::Task::Reverse, data::TaskOptions().with_n(39).with_lengths(1, 14).with_seed(9));
  std::vector<std::vector<int64_t>> out{{}};
  for (const data::Pair& p : pairs) out.push_back(t.src_vocab.encode(t.source_tokens(p.source)));
  return out;
}

// The same bits: doubles compared as bytes, so that -0 and 0 (or two NaNs) are told apart too.
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Decodes the sources one at a time, then in batches of 1, 5 and 64, greedy and beam 3, on 1
// and 2 threads, and checks that every result equals the first. Instrumented (testing::
// kSanitized), where a decode takes ten times as long, batches of 5 and 64 on 1 thread: the
// same batched code, read and written under AddressSanitizer; the thread counts are `make
// test`'s to compare.
void check_batches_agree(cli::ModelConfig config) {
  config.set("dropout", 0);
  config.max_len = 12;
  std::unique_ptr<cli::Translator> t = briefly_trained(config);
  const auto sources = mixed_sources(*t);
  for (const int64_t beam : {1, 3}) {
    CAPTURE(beam);
    std::vector<std::vector<int64_t>> alone;
    std::vector<double> alone_lp;
    {
      testing::ThreadCount one(1);
      for (const auto& s : sources) {
        std::vector<double> lp;
        alone.push_back(t->translate_ids({s}, beam, &lp, /*batch=*/1)[0]);
        alone_lp.push_back(lp[0]);
      }
    }
    size_t lengths = 0;  // the outputs are of several lengths: rows finish at different steps
    for (const auto& a : alone) lengths |= size_t(1) << std::min<size_t>(a.size(), 20);
    CHECK(__builtin_popcountll(lengths) >= 3);
    const std::vector<int> thread_counts = testing::kSanitized ? std::vector<int>{1} : std::vector<int>{1, 2};
    const std::vector<int64_t> batches = testing::kSanitized ? std::vector<int64_t>{5, 64} : std::vector<int64_t>{1, 5, 64};
    for (const int threads : thread_counts) {
      testing::ThreadCount count(threads);
      for (const int64_t batch : batches) {
        CAPTURE(threads);
        CAPTURE(batch);
        std::vector<double> lp;
        CHECK(t->translate_ids(sources, beam, &lp, batch) == alone);
        CHECK(same_bits(lp, alone_lp));
      }
    }
  }
}

cli::ModelConfig kind(const std::string& model) {
  cli::ModelConfig c;
  c.model = model;
  c.set("layers", 1).set("hidden", 24).set("dim", 16).set("heads", 2).set("ffn", 32);  // (each kind takes its own)
  return c;
}

}  // namespace

TEST_CASE("batched decoding equals one sentence at a time: plain seq2seq (rnn, gru, lstm)") {
  for (const std::string model : {"rnn", "gru", "lstm"}) {
    CAPTURE(model);
    check_batches_agree(kind(model));
  }
  cli::ModelConfig c = kind("lstm");  // two layers, both directions, the mean of the states
  c.set("layers", 2);
  c.set("bidirectional", true);
  c.set("context", "mean");
  check_batches_agree(c);
  c.set("context", "max");
  c.set("reverse_source", true);
  check_batches_agree(c);
}

TEST_CASE("batched decoding equals one sentence at a time: attention decoders, every score and window") {
  for (const std::string& score : nn::scores().names()) {
    CAPTURE(score);
    cli::ModelConfig c = kind("gru-attn");
    c.set("attention", score);
    check_batches_agree(c);
  }
  cli::ModelConfig c = kind("lstm-attn");
  c.set("decoder", "bahdanau");
  c.set("bidirectional", true);
  check_batches_agree(c);
  for (const std::string window : {"local-p", "local-m"}) {
    CAPTURE(window);
    c = kind("lstm-attn");
    c.set("window", window);
    c.set("window_size", 2);
    check_batches_agree(c);
  }
  c = kind("gru-attn");
  c.set("hard_attention", true);
  check_batches_agree(c);
}

TEST_CASE("batched decoding equals one sentence at a time: GNMT and the Transformer") {
  cli::ModelConfig c = kind("gnmt");
  c.set("layers", 3);
  check_batches_agree(c);
  c = kind("transformer");
  c.set("layers", 2);
  check_batches_agree(c);
}
