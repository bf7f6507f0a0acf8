// tests/examples/test_cli_bpe.cpp - `seqgrad train --src-tokens bpe --tgt-tokens bpe`: the
// merges are learned, saved in the checkpoint (and the resume file), and translate and eval
// need nothing else; translations are plain text. Also the flag's and the checkpoint's errors.
#include <cstdio>
#include <random>

#include "examples/seqgrad/translator.h"
#include "io/safetensors.h"
#include "tests/examples/cli_helpers.h"
#include "tests/test_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;

namespace {

// A word-for-word "translation" into accented and Chinese words, 1 to 3 words a sentence: few
// merges (20) leave most words in pieces, so the model reads and writes subwords.
std::string accent_corpus(int n, uint64_t seed) {
  const std::vector<std::pair<std::string, std::string>> words{
      {"billy", "比利"}, {"anna", "安娜"}, {"drinks", "喝"}, {"eats", "吃"}, {"tea", "茶"}, {"cafe", "café"},
      {"naive", "naïve"}, {"student", "élève"}, {"cake", "gâteau"}, {"apple", "苹果"}};
  std::mt19937_64 rng(seed);
  std::string tsv;
  for (int i = 0; i < n; ++i) {
    std::string src, tgt;
    for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) {
      const auto& [en, other] = words[rng() % words.size()];
      src += (src.empty() ? "" : " ") + en;
      tgt += (tgt.empty() ? "" : " ") + other;
    }
    tsv += src + "\t" + tgt + "\n";
  }
  return tsv;
}

// A copy of checkpoint `from` at `to` with metadata entry `key` set to `value` ("": dropped).
void edit_metadata(const std::string& from, const std::string& to, const std::string& key, const std::string& value) {
  io::SafetensorsFile file = io::read_safetensors(from);
  if (value.empty()) file.metadata.erase(key);
  else file.metadata[key] = value;
  io::write_safetensors(to, file.tensors, file.metadata);
}

}  // namespace

TEST_CASE("seqgrad train --src-tokens bpe --tgt-tokens bpe: trains, saves the merges, resumes, translates, evaluates") {
  const std::string tsv = "build/test_bpe_corpus.tsv", model = "build/test_bpe.safetensors";
  const std::string resume = "build/test_bpe.resume.safetensors";
  write_file(tsv, accent_corpus(1000, 1));
  const std::vector<std::string> flags{"--train", tsv, "--src-tokens", "bpe", "--tgt-tokens", "bpe", "--bpe-merges", "20",
                                       "--arch", "gru-attn", "--hidden", "48", "--dim", "16", "--batch", "16",
                                       "--epochs", "8", "--lr", "0.01", "--dropout", "0", "--seed", "2", "--out", model};
  // Stopped in epoch 2 (as by Ctrl-C), then resumed: the resume file carries the merges too.
  const Result stopped = train(flags, "epoch 2 ");
  INFO(stopped.out);
  REQUIRE(stopped.code == 130);
  CHECK(stopped.out.find("bpe: 20 merges learned for the source (10 distinct words)\n"
                         // every target word is one piece after 18: no pair is left that occurs twice
                         "bpe: 18 merges learned for the target (10 distinct words)\n"
                         "warning: the text ran out of pairs to merge after 18 of the 20 merges asked for, and 10 of "
                         "the 10 distinct target words are a single piece: a new word cannot be read as known pieces; "
                         "give fewer (--bpe-merges 2, say)\n") != std::string::npos);
  const std::unique_ptr<cli::Translator> first = cli::Translator::load(resume);
  CHECK(first->src_tokenizer->learned().size() == 20);
  const Result resumed = train({"--resume", resume});
  INFO(resumed.out);
  INFO(resumed.err);
  REQUIRE(resumed.code == 0);

  // The checkpoint alone translates: its merges are in the metadata, the same as learned.
  const std::unique_ptr<cli::Translator> t = cli::Translator::load(model);
  CHECK(t->src_tokenizer->learned() == first->src_tokenizer->learned());
  CHECK(t->tgt_tokenizer->learned() == first->tgt_tokenizer->learned());
  CHECK(t->tgt_tokenizer->learned().size() == 18);
  CHECK(t->source_tokens("student").size() > 1);  // a word in pieces
  const Result tr = run({"translate", "--model", model}, "billy drinks tea\nanna eats cake\nnaive student\n");
  INFO(tr.err);
  REQUIRE(tr.code == 0);
  CHECK(tr.out.find("▁") == std::string::npos);  // plain text: no markers left
  CHECK(tr.out == "比利 喝 茶\n安娜 吃 gâteau\nnaïve élève\n");

  write_file("build/test_bpe_eval.tsv", accent_corpus(100, 9));
  const Result ev = run({"eval", "--model", model, "--data", "build/test_bpe_eval.tsv"});
  INFO(ev.out);
  REQUIRE(ev.code == 0);
  double exact = 0;
  REQUIRE(std::sscanf(ev.out.c_str(), "exact_match=%lf", &exact) == 1);
  CHECK(exact >= 0.9);
  for (const std::string& f : {tsv, model, std::string("build/test_bpe.training.svg"), std::string("build/test_bpe_eval.tsv")})
    std::remove(f.c_str());
}

TEST_CASE("seqgrad train --bpe-merges: a bad number, or no bpe side, is an error") {
  auto error = [](std::vector<std::string> words) {
    words.insert(words.begin(), {"train", "--task", "en-fr", "--out", "build/test_bpe_x.safetensors"});
    const Result r = run(words);
    CHECK(r.code == 2);
    return r.err;
  };
  CHECK(error({"--src-tokens", "bpe", "--bpe-merges", "0"}) ==
        "error: seqgrad train: --bpe-merges expects a whole number from 1 to 1000000, got '0'\n");
  CHECK(error({"--tgt-tokens", "bpe", "--bpe-merges", "many"}) ==
        "error: seqgrad train: --bpe-merges expects a whole number from 1 to 1000000, got 'many'\n");
  CHECK(error({"--bpe-merges", "100"}) ==
        "error: seqgrad train: --bpe-merges is for bpe sides; give --src-tokens bpe or --tgt-tokens bpe too\n");
  CHECK(error({"--src-tokens", "wordpiece"}) == "error: seqgrad train: --src-tokens expects one of " +
                                                    nn::join_names(data::tokenizers().names(), ", ") +
                                                    ", got 'wordpiece'\n");
  CHECK(run({"train", "--help"}).out.find("--bpe-merges VALUE") != std::string::npos);
}

TEST_CASE("seqgrad translate: a bpe checkpoint's merges are checked when it is loaded") {
  const std::string good = "build/test_bpe_small.safetensors", bad = "build/test_bpe_bad.safetensors";
  REQUIRE(train({"--task", "copy", "--n", "40", "--max-len", "4", "--src-tokens", "bpe", "--arch", "rnn", "--hidden",
                 "8", "--dim", "8", "--layers", "1", "--epochs", "1", "--out", good})
              .code == 0);
  CHECK(run({"translate", "--model", good, "a b"}).code == 0);
  auto refused = [&](const std::string& value, const std::string& expected) {
    edit_metadata(good, bad, "seqgrad.src_bpe", value);
    const Result r = run({"translate", "--model", bad, "a b"});
    CHECK(r.code == 2);
    CHECK(r.err == "error: " + expected + "\n");
  };
  refused("", "seqgrad: '" + bad + "' has no seqgrad.src_bpe in its metadata");
  refused("[\"a b\", \"ab\"]", "seqgrad: '" + bad + "': seqgrad.src_bpe: bpe: merge 2 is 'ab'; expected two symbols "
                               "separated by one space, as 'e s'");
  refused("[\"a b\", \"a b\"]", "seqgrad: '" + bad + "': seqgrad.src_bpe: bpe: merge 2 ('a b') repeats merge 1");
  refused("{\"a\": 1}", "seqgrad: '" + bad + "': seqgrad.src_bpe: json: expected an array, got object");
  refused("[\"a b\", 7]", "seqgrad: '" + bad + "': seqgrad.src_bpe: json: expected a string, got number");
  for (const char* f : {"build/test_bpe_small.safetensors", "build/test_bpe_small.training.svg", "build/test_bpe_bad.safetensors"})
    std::remove(f);
}
