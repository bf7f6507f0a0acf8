// tests/examples/test_cli.cpp - the seqgrad tool, run in-process: argument errors (one line,
// exit code 2), help, and a short train -> save -> translate -> eval round trip.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/tasks.h"
#include "examples/seqgrad/commands.h"
#include "examples/seqgrad/translator.h"
#include "io/safetensors.h"
#include "nn/decoding/model_kind.h"
#include "nn/transformer/transformer.h"
#include "tests/examples/cli_helpers.h"
#include "tests/test_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;

namespace {

// The single error line of a failed run.
std::string error_of(const std::vector<std::string>& words) {
  const Result r = run(words);
  CHECK(r.code == 2);
  return r.err;
}

}  // namespace

TEST_CASE("seqgrad: bad commands and flags give one line on stderr and exit code 2") {
  CHECK(error_of({"fly"}) ==
        "error: seqgrad: unknown command 'fly'; expected data, train, translate, eval, attention, sample or average (see 'seqgrad --help')\n");
  CHECK(error_of({"data", "--task", "copy", "--colour", "red"}) ==
        "error: seqgrad data: unknown flag '--colour' (see 'seqgrad data --help')\n");
  CHECK(error_of({"data", "--task", "copy", "--n", "ten"}) ==
        "error: seqgrad data: --n expects a whole number from 0 to 10000000, got 'ten'\n");
  CHECK(error_of({"data", "--task", "poetry"}) ==
        "error: seqgrad data: --task expects one of " + nn::join_names(data::tasks().names(), ", ") + ", got 'poetry'\n");
  CHECK(error_of({"data", "--task", "date", "--symbols", "5"}) ==
        "error: seqgrad data: --symbols does not apply to --task date (it takes no options)\n");
  CHECK(error_of({"data", "--task", "copy", "--symbols", "27"}) ==
        "error: seqgrad data: --symbols expects a whole number from 1 to 26, got '27'\n");
  CHECK(error_of({"train", "--train", "x.tsv", "--symbols", "5", "--out", "m"}) ==
        "error: seqgrad train: --symbols is for --task; --train reads its pairs\n");
  CHECK(error_of({"data", "--task"}) == "error: seqgrad data: --task needs a value\n");
  CHECK(error_of({"train", "--task", "copy"}) == "error: seqgrad train: --out MODEL.safetensors is required\n");
  CHECK(error_of({"train", "--task", "copy", "--train", "x.tsv", "--out", "m"}) ==
        "error: seqgrad train: give exactly one of --task NAME or --train FILE\n");
  CHECK(error_of({"train", "--task", "copy", "--arch", "gpt", "--out", "m"}) ==
        "error: seqgrad train: --arch expects one of " + nn::join_names(nn::model_names(), ", ") + ", got 'gpt'\n");
  CHECK(error_of({"train", "--task", "copy", "--lr", "fast", "--out", "m"}) ==
        "error: seqgrad train: --lr expects a number from 1e-07 to 10, got 'fast'\n");
  CHECK(error_of({"train", "--train", "/nonexistent/c.tsv", "--out", "m"}) ==
        "error: cannot open '/nonexistent/c.tsv': No such file or directory\n");
  CHECK(error_of({"translate", "--model", "/nonexistent/m.safetensors", "hi"}).rfind("error: read_metadata: ", 0) == 0);
  CHECK(error_of({"translate", "--model", "m", "--batch", "0", "hi"}) ==
        "error: seqgrad translate: --batch expects a whole number from 1 to 4096, got '0'\n");
  CHECK(error_of({"translate", "--model", "m", "--batch", "all", "hi"}) ==
        "error: seqgrad translate: --batch expects a whole number from 1 to 4096, got 'all'\n");
  CHECK(error_of({"translate", "--model", "m", "--batch"}) == "error: seqgrad translate: --batch needs a value\n");
  CHECK(error_of({"eval", "--model", "m", "--data", "d", "--batch", "4097"}) ==
        "error: seqgrad eval: --batch expects a whole number from 1 to 4096, got '4097'\n");
  const Result none = run({});
  CHECK(none.code == 2);
  CHECK(none.out.empty());  // usage after a mistake goes to stderr, as for an unknown command
  CHECK(none.err.find("usage: seqgrad COMMAND") != std::string::npos);
  const Result help = run({"--help"});
  CHECK(help.code == 0);
  CHECK(help.out.find("usage: seqgrad COMMAND") != std::string::npos);
}

TEST_CASE("seqgrad: corpus and checkpoint problems are named") {
  write_file("build/test_cli_bad.tsv", "a b\tc d\nno tab on this line\n");
  CHECK(error_of({"train", "--train", "build/test_cli_bad.tsv", "--out", "build/test_cli_m.safetensors"}) ==
        "error: build/test_cli_bad.tsv:2: expected 'source<TAB>target', found no tab\n");
  write_file("build/test_cli_empty.tsv", "\n\n");
  CHECK(error_of({"train", "--train", "build/test_cli_empty.tsv", "--out", "build/test_cli_m.safetensors"}) ==
        "error: build/test_cli_empty.tsv: no sentence pairs (expected lines of 'source<TAB>target')\n");
  io::write_safetensors("build/test_cli_other.safetensors", {{"w", zeros({2})}});
  CHECK(error_of({"translate", "--model", "build/test_cli_other.safetensors", "hi"}) ==
        "error: seqgrad: 'build/test_cli_other.safetensors' is not a seqgrad translation model (its metadata has no "
        "seqgrad.format = seqgrad-translator-1)\n");
}

TEST_CASE("seqgrad --help and COMMAND --help list every flag with its default") {
  const Result r = run({"train", "--help"});
  CHECK(r.code == 0);
  CHECK(r.out.find("--model VALUE") != std::string::npos);
  CHECK(r.out.find("(default transformer)") != std::string::npos);
  CHECK(r.out.find("--bidirectional") != std::string::npos);
  CHECK(run({"--help"}).out.find("attention   draw what a model attends to") != std::string::npos);
}

TEST_CASE("seqgrad data writes deterministic TSV") {
  const Result r = run({"data", "--task", "reverse", "--n", "3", "--seed", "4"});
  CHECK(r.code == 0);
  CHECK(r.out == run({"data", "--task", "reverse", "--n", "3", "--seed", "4"}).out);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 3);
  CHECK(std::count(r.out.begin(), r.out.end(), '\t') == 3);
}

TEST_CASE("seqgrad end to end: train -> save -> translate -> eval -> attention") {
  const std::string model = "build/test_cli_copy.safetensors";
  Result train = run({"train", "--task", "copy", "--n", "2000", "--min-len", "2", "--max-len", "4", "--arch", "gru-attn",
                      "--hidden", "48", "--dim", "16", "--epochs", "7", "--lr", "0.01", "--dropout", "0", "--seed", "1",
                      "--out", model});
  INFO(train.err);
  REQUIRE(train.code == 0);
  CHECK(train.out.find("saved " + model) != std::string::npos);
  CHECK(train.out.find("epoch 7: train_loss=") != std::string::npos);

  const Result tr = run({"translate", "--model", model}, "a b c\nd a\n");  // lines from stdin
  CHECK(tr.code == 0);
  CHECK(tr.out == "a b c\nd a\n");
  // How fast, on stderr alone: "translated 2 sentences in 0.00 s (1234.5 sentences/s)".
  double seconds = -1, rate = -1;
  CHECK(std::sscanf(tr.err.c_str(), "translated 2 sentences in %lf s (%lf sentences/s)", &seconds, &rate) == 2);
  CHECK(seconds >= 0);
  CHECK(tr.err.back() == '\n');
  // A byte-order mark an editor put before the first line is not part of its first word.
  const Result marked = run({"translate", "--model", model}, "\xEF\xBB\xBF" "a b c\nd a\n");
  CHECK(marked.code == 0);
  CHECK(marked.out == "a b c\nd a\n");
  CHECK(marked.err.find("warning") == std::string::npos);
  // Lines read as the corpus reader reads them: a Windows line end is no part of the last word
  // (it was an unknown word, with a warning on every line), and bytes that are not UTF-8 are
  // refused naming the line (the whole run once failed with "split_chars: invalid UTF-8 at byte 3").
  const Result crlf = run({"translate", "--model", model}, "a b c\r\nd a\r\n");
  CHECK(crlf.code == 0);
  CHECK(crlf.out == "a b c\nd a\n");
  CHECK(crlf.err.find("warning") == std::string::npos);
  const Result binary = run({"translate", "--model", model}, "a b\nc \xff d\n");
  CHECK(binary.code == 2);
  CHECK(binary.err == "error: seqgrad translate: line 2: expected UTF-8 text, found byte 0xff at column 3\n");
  // An empty line stays an empty line, with --scores too (it used to "translate" into a made-up sentence).
  const Result blank = run({"translate", "--model", model, "--scores"}, "a b c\n\n   \nd a\n");
  CHECK(blank.code == 0);
  std::vector<std::string> blank_lines;
  std::string line_text;
  for (std::istringstream in(blank.out); std::getline(in, line_text);) blank_lines.push_back(line_text);
  REQUIRE(blank_lines.size() == 4);
  CHECK(blank_lines[1].empty());
  CHECK(blank_lines[2].empty());
  CHECK(blank_lines[3].substr(blank_lines[3].find('\t') + 1) == "d a");
  CHECK(blank.err.rfind("translated 2 sentences in ", 0) == 0);
  const Result control = run({"translate", "--model", model}, "a b\nc \x01 d\n");  // as the corpus reader refuses it
  CHECK(control.code == 2);
  CHECK(control.err == "error: seqgrad translate: line 2: expected text, found control character 0x01 at column 3\n");
  // --batch N decodes N lines at once, shortest first; stdout keeps the input order, and the
  // translations and their scores are the same for any N.
  std::string lines;
  for (const char* line : {"a b c d", "c", "d a", "b b a c", "a", "c d", "", "d c b"}) lines += std::string(line) + "\n";
  const Result one = run({"translate", "--model", model, "--beam", "2", "--scores", "--batch", "1"}, lines);
  CHECK(one.code == 0);
  CHECK(one.err.rfind("translated 7 sentences in ", 0) == 0);  // (the empty line is not decoded: it stays empty)
  for (const char* batch : {"3", "64"}) {
    CAPTURE(batch);
    CHECK(run({"translate", "--model", model, "--beam", "2", "--scores", "--batch", batch}, lines).out == one.out);
  }
  CHECK(run({"translate", "--model", model, "c c a"}).out == "c c a\n");

  write_file("build/test_cli_eval.tsv", run({"data", "--task", "copy", "--n", "100", "--min-len", "2", "--max-len", "4",
                                             "--seed", "99"}).out);
  const Result ev = run({"eval", "--model", model, "--data", "build/test_cli_eval.tsv"});
  CHECK(ev.code == 0);
  CHECK(run({"eval", "--model", model, "--data", "build/test_cli_eval.tsv", "--batch", "7"}).out == ev.out);
  INFO(ev.out);
  CHECK(ev.out.rfind("exact_match=", 0) == 0);
  CHECK(ev.out.find(" edits_per_token=") != std::string::npos);  // not "token_error_rate": it can exceed 1
  CHECK(ev.out.find(" n=100\n") != std::string::npos);
  double exact = 0;
  std::sscanf(ev.out.c_str(), "exact_match=%lf", &exact);
  CHECK(exact >= 0.9);

  const Result at = run({"attention", "--model", model, "--svg", "build/test_cli_attention.svg", "b", "a", "d"});
  CHECK(at.code == 0);
  CHECK(at.out.find("wrote build/test_cli_attention.svg") != std::string::npos);
  CHECK(run({"translate", "--model", model, "--beam", "3", "c c a"}).out == "c c a\n");  // beam search, any model
  // --scores: log P(translation + <eos> | source) and a tab before each translation; a model
  // that copies well is nearly sure of its copy, and never of a probability above 1.
  const Result scored = run({"translate", "--model", model, "--scores", "c c a", "b a d"});
  REQUIRE(scored.code == 0);
  double first = 1, second = 1;
  char text1[32] = {0}, text2[32] = {0};
  REQUIRE(std::sscanf(scored.out.c_str(), "%lf\t%31[^\n]\n%lf\t%31[^\n]", &first, text1, &second, text2) == 4);
  CHECK(std::string(text1) == "c c a");
  CHECK(std::string(text2) == "b a d");
  CHECK((first <= 0 && first > -1));
  CHECK((second <= 0 && second > -1));
  CHECK(run({"translate", "--model", model, "--scores=yes", "c"}).err ==
        "error: seqgrad translate: --scores is a switch and takes no value\n");
  for (const char* f : {"build/test_cli_copy.safetensors", "build/test_cli_copy.training.svg", "build/test_cli_eval.tsv",
                        "build/test_cli_attention.svg", "build/test_cli_bad.tsv", "build/test_cli_empty.tsv",
                        "build/test_cli_other.safetensors"})
    std::remove(f);
}

// Every model kind decodes through one interface (nn/decoding/encoder_decoder.h): --beam works for all
// of them, and on a toy task beam search scores at least as well as greedy decoding.
TEST_CASE("seqgrad eval --beam 4: every built-in score and the recurrent and Transformer kinds, at least as good as greedy") {
  write_file("build/test_cli_beam.tsv", run({"data", "--task", "reverse", "--n", "100", "--min-len", "2", "--max-len", "5",
                                             "--seed", "77"}).out);
  const std::vector<std::vector<std::string>> kinds{{"--arch", "rnn"},
                                                    {"--arch", "lstm", "--layers", "2"},
                                                    {"--arch", "gru", "--layers", "2"},
                                                    {"--arch", "gru", "--bidirectional"},
                                                    {"--arch", "lstm-attn", "--attention", "dot"},
                                                    {"--arch", "lstm-attn", "--attention", "general"},
                                                    {"--arch", "lstm-attn", "--attention", "concat"},
                                                    {"--arch", "gru-attn", "--attention", "additive"},
                                                    {"--arch", "lstm-attn", "--attention", "scaled-dot"},
                                                    {"--arch", "gru-attn", "--attention", "cosine"},
                                                    {"--arch", "lstm-attn", "--attention", "mlp"},
                                                    {"--arch", "gru-attn", "--attention", "location"},
                                                    {"--arch", "gru-attn", "--decoder", "bahdanau", "--attention", "additive"},
                                                    {"--arch", "lstm-attn", "--attention-window", "local-p", "--window", "2"},
                                                    {"--arch", "transformer", "--heads", "2", "--ffn", "64"}};
  double total_greedy = 0, total_beam = 0;
  for (const auto& kind : kinds) {
    std::vector<std::string> words{"train", "--task", "reverse", "--n", "1500", "--min-len", "2", "--max-len", "5",
                                   "--dim", "32", "--epochs", "4", "--lr", "0.01", "--dropout", "0",
                                   "--seed", "2", "--threads", "1", "--out", "build/test_cli_beam.safetensors"};
    words.insert(words.end(), kind.begin(), kind.end());
    if (kind[1] != "transformer") words.insert(words.end(), {"--hidden", "48"});  // (a Transformer has no --hidden)
    const Result trained = run(words);
    CAPTURE(kind[1]);
    INFO(trained.err);
    REQUIRE(trained.code == 0);
    auto exact_match = [&](const char* beam) {
      const Result ev = run({"eval", "--model", "build/test_cli_beam.safetensors", "--data", "build/test_cli_beam.tsv",
                             "--beam", beam});
      INFO(ev.err);
      CHECK(ev.code == 0);
      double exact = -1;
      std::sscanf(ev.out.c_str(), "exact_match=%lf", &exact);
      return exact;
    };
    const double greedy = exact_match("1"), beam = exact_match("4");
    std::string label;
    for (const std::string& w : kind) label += w + " ";
    MESSAGE(label, ": exact match greedy ", greedy, ", beam 4 ", beam);
    CHECK(greedy >= 0);
    // Beam search maximises the model's probability, not exact match: on one model it may lose
    // a sentence or two to greedy decoding, never more; over all of them it must win or tie.
    CHECK(beam >= greedy - 0.03);
    total_greedy += greedy;
    total_beam += beam;
  }
  MESSAGE("exact match summed over the ", kinds.size(), " models: greedy ", total_greedy, ", beam 4 ", total_beam);
  CHECK(total_beam >= total_greedy);
  for (const char* f : {"build/test_cli_beam.safetensors", "build/test_cli_beam.training.svg", "build/test_cli_beam.tsv"})
    std::remove(f);
}

// The attention models' decoder and window come from flags, are saved in the checkpoint's
// configuration, and a checkpoint from before these flags reads as Luong, global, D = 3.
TEST_CASE("seqgrad train --decoder, --attention-window, --window, --context: saved, loaded, checked") {
  const Result trained = run({"train", "--task", "copy", "--n", "200", "--min-len", "2", "--max-len", "4", "--arch",
                              "gru-attn", "--decoder", "bahdanau", "--attention-window", "local-m", "--window", "2",
                              "--hidden", "16", "--dim", "8", "--epochs", "1", "--threads", "1", "--out",
                              "build/test_cli_window.safetensors"});
  INFO(trained.err);
  REQUIRE(trained.code == 0);
  const std::unique_ptr<cli::Translator> t = cli::Translator::load("build/test_cli_window.safetensors");
  CHECK(t->config.options.text("decoder") == "bahdanau");
  CHECK(t->config.options.text("window") == "local-m");
  CHECK(t->config.options.integer("window_size") == 2);
  CHECK(t->module().to_string().find("AttentionSeq2Seq(bahdanau, score=general, local-m D=2") == 0);
  CHECK(run({"translate", "--model", "build/test_cli_window.safetensors", "a b"}).code == 0);

  io::Json old = t->config.to_json();  // as a checkpoint written before these flags: none of the three
  io::Json without = io::Json::object();
  for (const auto& [key, value] : old.as_object())
    if (key != "decoder" && key != "window" && key != "window_size" && key != "context") without.set(key, value);
  const cli::ModelConfig read = cli::ModelConfig::from_json(without);
  CHECK(read.options.text("decoder") == "luong");
  CHECK(read.options.text("window") == "global");
  CHECK(!read.options.has("window_size"));  // a global window has no D
  CHECK(!read.options.has("context"));      // an attention model has no context vector
  old.set("window", "local");
  CHECK_THROWS_WITH_AS(cli::ModelConfig::from_json(old),
                       "the model configuration's 'window' must be one of global, local-p, local-m, got \"local\"",
                       std::runtime_error);
  CHECK(error_of({"train", "--task", "copy", "--arch", "gru-attn", "--decoder", "transformer", "--out", "x.safetensors"}) ==
        "error: seqgrad train: --decoder expects one of luong, bahdanau, got 'transformer'\n");
  CHECK(error_of({"train", "--task", "copy", "--arch", "gru-attn", "--attention-window", "local-p", "--window", "0",
                  "--out", "x.safetensors"}) == "error: seqgrad train: --window expects a whole number from 1 to 4096, got '0'\n");
  // Validation sentences longer than --max-decode are cut as training ones are: the location
  // score has weights for --max-decode positions and no more.
  write_file("build/test_cli_long.tsv", "a b c d e f g h\th g f e d c b a\nb a\ta b\n");
  const Result located = run({"train", "--task", "reverse", "--n", "200", "--min-len", "2", "--max-len", "4", "--arch",
                              "gru-attn", "--attention", "location", "--max-decode", "6", "--valid",
                              "build/test_cli_long.tsv", "--hidden", "16", "--dim", "8", "--epochs", "1", "--threads",
                              "1", "--out", "build/test_cli_window.safetensors"});
  INFO(located.err);
  CHECK(located.code == 0);
  std::remove("build/test_cli_long.tsv");
  // --context for the plain seq2seq: the mean of the encoder's states instead of its last one.
  REQUIRE(run({"train", "--task", "copy", "--n", "200", "--min-len", "2", "--max-len", "4", "--arch", "gru", "--context",
               "mean", "--hidden", "16", "--dim", "8", "--epochs", "1", "--threads", "1", "--out",
               "build/test_cli_window.safetensors"}).code == 0);
  CHECK(cli::Translator::load("build/test_cli_window.safetensors")->config.options.text("context") == "mean");
  CHECK(error_of({"train", "--task", "copy", "--arch", "gru", "--context", "first", "--out", "x.safetensors"}) ==
        "error: seqgrad train: --context expects one of last, mean, max, got 'first'\n");
  for (const char* f : {"build/test_cli_window.safetensors", "build/test_cli_window.training.svg"}) std::remove(f);
}

TEST_CASE("seqgrad train --reverse-source: the encoder reads backwards in training and in translation") {
  const Result trained = run({"train", "--task", "copy", "--n", "1000", "--min-len", "2", "--max-len", "4", "--arch",
                              "gru", "--reverse-source", "--hidden", "48", "--dim", "16", "--layers", "1", "--epochs",
                              "12", "--lr", "0.01", "--batch", "16", "--threads", "1", "--out",
                              "build/test_cli_reversed.safetensors"});
  INFO(trained.err);
  REQUIRE(trained.code == 0);
  const std::unique_ptr<cli::Translator> t = cli::Translator::load("build/test_cli_reversed.safetensors");
  CHECK(t->config.options.on("reverse_source"));
  // Copying, learned from reversed sources: translation must reverse them too. Read forwards,
  // the same weights would mostly write the source backwards.
  const std::vector<data::Pair> held_out =
      data::make_pairs(data::Task::Copy, data::TaskOptions().with_n(200).with_lengths(2, 4).with_seed(7));
  const double reversed = cli::score(*t, held_out, 1).exact;
  static_cast<nn::Seq2Seq&>(t->model()).options.reverse_source = false;  // the same weights, reading forwards
  const double forwards = cli::score(*t, held_out, 1).exact;
  CHECK(reversed >= 0.6);
  CHECK(forwards < reversed - 0.3);
  CHECK(error_of({"train", "--task", "copy", "--arch", "lstm-attn", "--reverse-source", "--out", "x.safetensors"}) ==
        "error: seqgrad train: --reverse-source does not apply to --arch lstm-attn as configured (it takes --layers, "
        "--hidden, --dim, --dropout, --bidirectional, --attention, --decoder, --attention-window, --hard-attention)\n");
  for (const char* f : {"build/test_cli_reversed.safetensors", "build/test_cli_reversed.training.svg"}) std::remove(f);
}

// Each model takes the flags that apply to it; any other model flag is refused with one line
// naming the flag and the model, and exit code 2 (once, such flags trained exactly as without
// them and were recorded in the checkpoint as if used).
TEST_CASE("seqgrad train: a model flag that does not apply to the model is refused, naming both") {
  struct Case {
    std::vector<std::string> flag;
    std::vector<std::string> models;
  };
  const std::vector<Case> cases{
      {{"--context", "mean"}, {"lstm-attn", "gnmt", "transformer"}},
      {{"--decoder", "bahdanau"}, {"lstm", "gnmt", "transformer"}},
      {{"--attention-window", "local-p"}, {"gru", "gnmt", "transformer"}},
      {{"--window", "2"}, {"lstm-attn"}},  // a global window has no D
      {{"--attention", "dot"}, {"lstm", "transformer"}},
      {{"--no-residual"}, {"lstm-attn", "transformer"}},
      {{"--bidirectional"}, {"transformer", "gnmt"}},
      {{"--heads", "2"}, {"lstm", "gru-attn", "gnmt"}},
      {{"--ffn", "64"}, {"lstm", "gru-attn", "gnmt"}},
      {{"--hidden", "32"}, {"transformer"}},
      {{"--reverse-source"}, {"gru-attn", "transformer"}},
      {{"--hard-attention"}, {"gru", "gnmt"}},
      {{"--attention-size", "8"}, {"lstm-attn"}},  // the general score has no hidden width
      {{"--positional", "learned"}, {"lstm"}},
      {{"--pre-norm"}, {"lstm", "gnmt"}},
      {{"--tie-embeddings"}, {"gru-attn"}},
  };
  for (const Case& c : cases)
    for (const std::string& model : c.models) {
      CAPTURE(c.flag[0]);
      CAPTURE(model);
      std::vector<std::string> words{"train", "--task", "copy", "--arch", model, "--out", "build/x.safetensors"};
      words.insert(words.end(), c.flag.begin(), c.flag.end());
      const Result r = run(words);
      CHECK(r.code == 2);
      CHECK(r.err.rfind("error: seqgrad train: " + c.flag[0] + " does not apply to --arch " + model + " as configured (it takes --", 0) == 0);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
  // The same flags where they apply are taken (here, only checked: --epochs 0 stops the run).
  CHECK(error_of({"train", "--task", "copy", "--arch", "lstm-attn", "--attention-window", "local-p", "--window", "2",
                  "--attention", "additive", "--attention-size", "8", "--epochs", "0", "--out", "build/x.safetensors"}) ==
        "error: seqgrad train: --epochs expects a whole number from 1 to 100000, got '0'\n");
  // A flag missing its value names that flag, not the next word.
  CHECK(error_of({"train", "--task", "reverse", "--decoder", "--out", "m.safetensors"}) ==
        "error: seqgrad train: --decoder needs a value\n");
  CHECK(error_of({"train", "--task", "reverse", "--out"}) == "error: seqgrad train: --out needs a value\n");
}

// --pre-norm and --tie-embeddings shape the Transformer and are kept in its checkpoint; the
// optimizer's --weight-decay and --momentum shape the run, and only the optimizers that take them
// accept them.
TEST_CASE("seqgrad train: --pre-norm, --tie-embeddings, --weight-decay and --momentum") {
  const std::vector<std::string> common{"train", "--task", "reverse", "--n", "600", "--arch", "transformer", "--dim",
                                        "16", "--heads", "2", "--ffn", "32", "--layers", "1", "--epochs", "1",
                                        "--threads", "1"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> words = common;
    words.insert(words.end(), more.begin(), more.end());
    return words;
  };
  const Result plain = run(with({"--out", "build/test_cli_plain.safetensors"}));
  const Result shaped = run(with({"--pre-norm", "--tie-embeddings", "--optimizer", "adamw", "--weight-decay", "0.1",
                                  "--out", "build/test_cli_tied.safetensors"}));
  INFO(plain.err, shaped.err);
  REQUIRE(plain.code == 0);
  REQUIRE(shaped.code == 0);
  const std::unique_ptr<cli::Translator> a = cli::Translator::load("build/test_cli_plain.safetensors");
  const std::unique_ptr<cli::Translator> b = cli::Translator::load("build/test_cli_tied.safetensors");
  CHECK_FALSE(a->config.options.on("pre_norm"));
  CHECK(b->config.options.on("pre_norm"));
  CHECK(b->config.options.on("tie_embeddings"));
  const auto& tb = static_cast<nn::Transformer&>(b->model());
  CHECK(tb.options.norm_first);
  CHECK(b->model().module().num_parameters() == a->model().module().num_parameters() - b->tgt_vocab.size() * 16);
  CHECK(run({"translate", "--model", "build/test_cli_tied.safetensors"}, "3 1 2\n").code == 0);
  CHECK(error_of({"sample", "--model", "build/test_cli_tied.safetensors"}) ==
        "error: seqgrad sample: 'build/test_cli_tied.safetensors' is a translation model (transformer); translate with "
        "it (seqgrad translate --sample draws translations)\n");
  CHECK(error_of(with({"--optimizer", "adam", "--momentum", "0.5", "--out", "build/x.safetensors"})) ==
        "error: seqgrad train: --momentum does not apply to --optimizer adam (it takes --weight-decay)\n");
  CHECK(error_of(with({"--optimizer", "sgd", "--weight-decay", "-1", "--out", "build/x.safetensors"})) ==
        "error: seqgrad train: --weight-decay expects a number from 0 to 10, got '-1'\n");
  // A schedule's options the same way: --min-lr is cosine's, --noam-factor noam's.
  CHECK(error_of(with({"--schedule", "warmup", "--min-lr", "0.01", "--out", "build/x.safetensors"})) ==
        "error: seqgrad train: --min-lr does not apply to --schedule warmup (it takes no options)\n");
  CHECK(error_of(with({"--schedule", "cosine", "--noam-factor", "2", "--out", "build/x.safetensors"})) ==
        "error: seqgrad train: --noam-factor does not apply to --schedule cosine (it takes --min-lr)\n");
  const std::string help = run({"train", "--help"}).out;
  CHECK(help.find("--min-lr") != std::string::npos);
  CHECK(help.find("--noam-factor") != std::string::npos);
  for (const char* f : {"build/test_cli_plain.safetensors", "build/test_cli_plain.training.svg",
                        "build/test_cli_tied.safetensors", "build/test_cli_tied.training.svg"})
    std::remove(f);
}

// seqgrad train's --model was the architecture, and is a checkpoint everywhere else: --arch now,
// with the old name still taken (and said) until the next release.
TEST_CASE("seqgrad train --model, the old name of --arch: still taken, with a note; not with --arch") {
  const Result r = run({"train", "--task", "copy", "--n", "200", "--model", "gru", "--hidden", "8", "--dim", "4",
                        "--layers", "1", "--epochs", "1", "--threads", "1", "--out", "build/test_cli_old_model.safetensors"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.rfind("note: seqgrad train's --model is now --arch (the architecture); --model names a checkpoint in "
                    "translate, eval and attention, and in train it is taken until the next release\n", 0) == 0);
  CHECK(cli::Translator::load("build/test_cli_old_model.safetensors")->config.model == "gru");
  CHECK(error_of({"train", "--task", "copy", "--model", "gru", "--arch", "lstm", "--out", "m.safetensors"}) ==
        "error: seqgrad train: give --arch alone (--model is its old name)\n");
  CHECK(error_of({"train", "--task", "copy", "--model", "gru", "--pre-norm", "--out", "m.safetensors"}).find(
            "--pre-norm does not apply to --arch gru") != std::string::npos);
  for (const char* f : {"build/test_cli_old_model.safetensors", "build/test_cli_old_model.training.svg"}) std::remove(f);
}

// --arch lm: a decoder-only language model of the target side, scored by its loss and perplexity
// (it translates nothing), sampled from with seqgrad sample; translate, eval and attention refuse it.
TEST_CASE("seqgrad train --arch lm and seqgrad sample") {
  const std::string model = "build/test_cli_lm.safetensors";
  const Result trained = run({"train", "--task", "en-zh", "--n", "2000", "--arch", "lm", "--dim", "32", "--heads", "2",
                              "--ffn", "64", "--layers", "1", "--epochs", "4", "--lr", "0.005", "--threads", "1",
                              "--valid-every", "20", "--out", model});
  INFO(trained.err, trained.out);
  REQUIRE(trained.code == 0);
  CHECK(trained.out.find("lm with ") != std::string::npos);
  CHECK(trained.out.find("epoch 4: train_loss=") != std::string::npos);
  CHECK(trained.out.find(" valid_ppl=") != std::string::npos);
  CHECK(trained.out.find("exact_match") == std::string::npos);  // nothing is translated
  double ppl = 0;
  std::sscanf(trained.out.substr(trained.out.find("epoch 4:")).c_str(), "epoch 4: train_loss=%*f valid_loss=%*f valid_ppl=%lf", &ppl);
  CHECK(ppl > 1);
  CHECK(ppl < 8);  // of ~50 characters' worth of words: it has learned the grammar's patterns

  const Result drawn = run({"sample", "--model", model, "--n", "4", "--seed", "3", "--scores"});
  INFO(drawn.out);
  CHECK(drawn.code == 0);
  CHECK(std::count(drawn.out.begin(), drawn.out.end(), '\n') == 4);
  CHECK(std::count(drawn.out.begin(), drawn.out.end(), '\t') == 4);
  // Sample i draws from its own stream: the first two are the same with --n 2; another seed differs.
  const std::string two = run({"sample", "--model", model, "--n", "2", "--seed", "3", "--scores"}).out;
  CHECK(drawn.out.rfind(two, 0) == 0);
  CHECK(run({"sample", "--model", model, "--n", "4", "--seed", "4", "--scores"}).out != drawn.out);
  // A prompt is continued: every sample starts with it.
  const Result continued = run({"sample", "--model", model, "--n", "3", "--prompt", "莉莉 明天"});
  CHECK(continued.code == 0);
  std::istringstream lines(continued.out);
  for (std::string line; std::getline(lines, line);) CHECK(line.rfind("莉莉 明天", 0) == 0);
  CHECK(run({"sample", "--model", model, "--prompt", "zebra"}).err ==
        "note: 1 of the prompt's 1 tokens are not in the model's vocabulary (read as <unk>)\n");

  // What does not apply to a language model is refused, saying what to do instead.
  CHECK(error_of({"translate", "--model", model, "a b"}) ==
        "error: seqgrad translate: '" + model + "' is a language model (lm), which reads no source to translate; draw "
        "text from it with seqgrad sample --model " + model + "\n");
  // eval scores a language model by its loss on the file's targets, and its perplexity.
  write_file("build/test_cli_lm.tsv", run({"data", "--task", "en-zh", "--n", "50", "--seed", "9"}).out);
  const Result scored = run({"eval", "--model", model, "--data", "build/test_cli_lm.tsv"});
  CHECK(scored.code == 0);
  double loss = 0, eval_ppl = 0;
  CHECK(std::sscanf(scored.out.c_str(), "loss=%lf ppl=%lf n=50", &loss, &eval_ppl) == 2);
  CHECK(eval_ppl == doctest::Approx(std::exp(loss)).epsilon(0.01));
  CHECK(eval_ppl < 10);
  CHECK(error_of({"eval", "--model", model, "--data", "build/test_cli_lm.tsv", "--beam", "2"}) ==
        "error: seqgrad eval: --beam is for translation models; '" + model + "' is a language model (lm), scored by its "
        "loss on the file's targets\n");
  std::remove("build/test_cli_lm.tsv");
  CHECK(error_of({"attention", "--model", model, "--svg", "build/x.svg", "a"}).find("is a language model") !=
        std::string::npos);
  CHECK(error_of({"train", "--task", "copy", "--arch", "lm", "--best-by", "bleu", "--out", "build/x.safetensors"}) ==
        "error: seqgrad train: --best-by bleu scores translations, and --arch lm translates nothing (a language model "
        "reads no source); give --best-by loss\n");
  CHECK(error_of({"train", "--task", "copy", "--arch", "lm", "--bidirectional", "--out", "build/x.safetensors"}).find(
            "--bidirectional does not apply to --arch lm") != std::string::npos);
  CHECK(error_of({"sample", "--model", model, "--max-len", "0"}) ==
        "error: seqgrad sample: --max-len expects a whole number from 1 to 64, got '0'\n");
  std::string long_prompt;
  for (int i = 0; i < 65; ++i) long_prompt += "莉莉 ";
  CHECK(error_of({"sample", "--model", model, "--prompt", long_prompt}) ==
        "error: seqgrad sample: the prompt has 65 tokens; the model reads at most 64\n");
  CHECK(error_of({"sample", "--model", model, "--prompt", "a\x01b"}).rfind("error: seqgrad sample: --prompt: ", 0) == 0);
  CHECK(error_of({"sample", "--model", model, "hello"}) ==
        "error: seqgrad sample: unexpected argument 'hello' (the text to continue goes in --prompt)\n");
  for (const char* f : {model.c_str(), "build/test_cli_lm.training.svg"}) std::remove(f);
}

// --max-len on a corpus drops the long training pairs (not cut: a cut target teaches the model to
// stop mid-sentence) and says how many; validation keeps them all.
TEST_CASE("seqgrad train --train --max-len: long training pairs are dropped and counted") {
  const std::string path = "build/test_cli_maxlen.tsv";
  {
    std::ofstream f(path);
    for (int i = 0; i < 7; ++i) f << "a b\tb a\n";
    f << "a b c d\tx\n" << "a\tb a b a\n" << "b a\ta b\n";  // 2 long pairs; the last is held out
  }
  const Result r = run({"train", "--train", path, "--max-len", "3", "--arch", "gru", "--hidden", "8", "--dim", "4",
                        "--layers", "1", "--epochs", "1", "--threads", "1", "--out", "build/test_cli_maxlen.safetensors"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("note: --max-len 3 dropped 2 of 9 training pairs, those with a side longer than 3 tokens\n") !=
        std::string::npos);
  CHECK(r.out.find("7 training pairs, 1 validation pairs") != std::string::npos);
  CHECK(error_of({"train", "--train", path, "--max-len", "1", "--out", "build/test_cli_maxlen.safetensors"}) ==
        "error: seqgrad train: --max-len 1 drops every training pair; give a larger --max-len\n");
  for (const char* f : {path.c_str(), "build/test_cli_maxlen.safetensors", "build/test_cli_maxlen.training.svg"})
    std::remove(f);
}

TEST_CASE("seqgrad average: the element-wise mean of checkpoints of one model, which loads and translates") {
  const std::string dir = "build/test_average";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // One run's checkpoints after 1 and 2 epochs: the same model and vocabularies, other weights.
  std::vector<std::string> paths;
  for (const char* epochs : {"1", "2"}) {
    const std::string path = dir + "/e" + epochs + ".safetensors";
    const Result r = run({"train", "--task", "copy", "--n", "200", "--epochs", epochs, "--arch", "lstm-attn", "--layers", "1",
                          "--hidden", "8", "--dim", "8", "--threads", "1", "--seed", "3", "--out", path});
    REQUIRE(r.code == 0);
    paths.push_back(path);
  }
  const std::string mean_path = dir + "/mean.safetensors";
  const Result r = run({"average", "--out", mean_path, paths[0], paths[1]});
  CHECK(r.code == 0);
  CHECK(r.out == "averaged 2 checkpoints into " + mean_path + "\n");
  const auto a = cli::Translator::load(paths[0]), b = cli::Translator::load(paths[1]), mean = cli::Translator::load(mean_path);
  CHECK(mean->metadata() == a->metadata());
  const auto pa = a->module().named_parameters(), pb = b->module().named_parameters(), pm = mean->module().named_parameters();
  REQUIRE(pm.size() == pa.size());
  bool any_differs = false;
  for (size_t i = 0; i < pm.size(); ++i) {
    CAPTURE(pm[i].first);
    const Tensor &x = pa[i].second.value(), &y = pb[i].second.value(), &m = pm[i].second.value();
    for (int64_t j = 0; j < m.numel(); ++j) {
      const double expected = (static_cast<double>(x.data()[j]) + y.data()[j]) / 2;
      any_differs = any_differs || x.data()[j] != y.data()[j];
      REQUIRE(std::abs(m.data()[j] - expected) <= 1e-6 * (1 + std::abs(expected)));
    }
  }
  CHECK(any_differs);  // (else the mean proves nothing)
  CHECK(run({"translate", "--model", mean_path, "a b c"}).code == 0);

  // Refusals, each one line: no --out, no inputs, the output one of the inputs, another model.
  const Result no_out = run({"average", paths[0]});
  CHECK(no_out.err == "error: seqgrad average: --out AVG.safetensors is required\n");
  const Result none = run({"average", "--out", mean_path});
  CHECK(none.err == "error: seqgrad average: expected the checkpoints to average after the flags, got none\n");
  const Result overlap = run({"average", "--out", paths[0], paths[0], paths[1]});
  CHECK(overlap.err == "error: seqgrad average: --out '" + paths[0] + "' is the same file as the input '" + paths[0] +
                           "'; expected an output that is not an input\n");
  const std::string other = dir + "/other.safetensors";
  REQUIRE(run({"train", "--task", "copy", "--n", "200", "--epochs", "1", "--arch", "lstm-attn", "--layers", "1", "--hidden",
               "12", "--dim", "8", "--threads", "1", "--seed", "3", "--out", other})
              .code == 0);
  const Result mixed = run({"average", "--out", dir + "/x.safetensors", paths[0], other});
  CHECK(mixed.code == 2);
  CHECK(mixed.err == "error: seqgrad average: '" + other + "' is not a checkpoint of the same model as '" + paths[0] +
                         "': its seqgrad.config differs; expected checkpoints of one model (one run)\n");
  CHECK(!std::filesystem::exists(dir + "/x.safetensors"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("seqgrad train and translate say when a sentence is longer than --max-decode, and how many were cut") {
  // Pairs longer than the model handles used to be cut without a word, in training and in translate.
  const std::string model = "build/test_cli_cut.safetensors";
  const Result r = run({"train", "--task", "copy", "--n", "300", "--min-len", "6", "--max-len", "10", "--max-decode", "8",
                        "--epochs", "1", "--arch", "lstm", "--layers", "1", "--hidden", "8", "--dim", "8", "--threads", "1",
                        "--out", model});
  REQUIRE(r.code == 0);
  int64_t train_cut = -1, train_n = -1, valid_cut = -1, valid_n = -1;
  const size_t at = r.out.find("note: ");
  REQUIRE(at != std::string::npos);
  REQUIRE(std::sscanf(r.out.c_str() + at, "note: %" SCNd64 " of %" SCNd64 " training and %" SCNd64 " of %" SCNd64,
                      &train_cut, &train_n, &valid_cut, &valid_n) == 4);
  CHECK(train_n == 270);
  CHECK(valid_n == 30);
  CHECK(train_cut > 0);  // lengths 6 to 10 drawn evenly: about 2 in 5 are over 8
  CHECK(train_cut < train_n);
  CHECK(r.out.find(" have a side longer than --max-decode 8 tokens; its first 8 are kept (a larger --max-decode keeps "
                   "more)\n") != std::string::npos);
  const Result tr = run({"translate", "--model", model, "a b c", "a b c d e f g h i"});
  CHECK(tr.code == 0);
  CHECK(tr.err.rfind("warning: sentence 2: longer than the model's 8 tokens (its --max-decode); only the first 8 are "
                     "translated\ntranslated 2 sentences in ", 0) == 0);
  // Each epoch's exact match is over the first 500 validation pairs: said when there are more.
  const Result many = run({"train", "--task", "copy", "--n", "5100", "--epochs", "1", "--arch", "lstm", "--layers", "1",
                           "--hidden", "8", "--dim", "8", "--threads", "1", "--out", model});
  REQUIRE(many.code == 0);
  CHECK(many.out.find("note: each epoch's exact_match and edits_per_token are over the first 500 of the 510 validation "
                      "pairs (valid_loss over all; seqgrad eval scores them all)\n") != std::string::npos);
  std::remove(model.c_str());
  std::remove("build/test_cli_cut.training.svg");
}

TEST_CASE("seqgrad translate --nbest, --sample, --length-penalty, --threads: each as a fairseq user expects") {
  const std::string model = "build/test_cli_decoding.safetensors";
  REQUIRE(run({"train", "--task", "en-zh", "--n", "1500", "--epochs", "2", "--arch", "transformer", "--layers", "1", "--dim",
               "32", "--heads", "2", "--ffn", "64", "--threads", "1", "--seed", "2", "--out", model})
              .code == 0);
  const std::string input = "billy eats a banana\n\nanna reads\n";
  auto lines_of = [](const std::string& text) {
    std::vector<std::string> lines;
    std::string line;
    for (std::istringstream in(text); std::getline(in, line);) lines.push_back(line);
    return lines;
  };
  // --nbest 3: three lines per input line (an empty one: three empty lines), each "log P<TAB>text",
  // the first of them beam search's answer.
  const Result best = run({"translate", "--model", model, "--beam", "4", "--scores"}, input);
  const Result three = run({"translate", "--model", model, "--beam", "4", "--nbest", "3"}, input);
  REQUIRE(three.code == 0);
  const std::vector<std::string> b = lines_of(best.out), n = lines_of(three.out);
  REQUIRE(b.size() == 3);
  REQUIRE(n.size() == 9);
  CHECK(n[0] == b[0]);
  CHECK(n[6] == b[2]);
  for (const int i : {3, 4, 5}) CHECK(n[static_cast<size_t>(i)].empty());
  for (const int i : {0, 1, 2, 6, 7, 8}) CHECK(n[static_cast<size_t>(i)].find('\t') != std::string::npos);
  CHECK(n[1] != n[0]);
  // --sample: reproducible from --seed, the same for any --batch, and --top-k 1 is greedy decoding.
  const Result s1 = run({"translate", "--model", model, "--sample", "--seed", "5", "--batch", "1"}, input);
  CHECK(s1.code == 0);
  CHECK(run({"translate", "--model", model, "--sample", "--seed", "5", "--batch", "64"}, input).out == s1.out);
  CHECK(run({"translate", "--model", model, "--sample", "--seed", "5", "--top-k", "1"}, input).out ==
        run({"translate", "--model", model}, input).out);
  // The same translations on any number of threads, and --length-penalty reaches beam search.
  CHECK(run({"translate", "--model", model, "--beam", "4", "--threads", "1"}, input).out ==
        run({"translate", "--model", model, "--beam", "4", "--threads", "2"}, input).out);
  CHECK(run({"translate", "--model", model, "--beam", "4", "--length-penalty", "0"}, input).code == 0);
  CHECK(run({"eval", "--model", model, "--data", "build/test_cli_decoding.tsv"}).code == 2);  // (no such file)
  // Refusals, each one line.
  CHECK(run({"translate", "--model", model, "--nbest", "3", "a"}).err ==
        "error: seqgrad translate: --nbest 3 needs a beam at least as wide; expected --beam 3 or more, got 1\n");
  CHECK(run({"translate", "--model", model, "--seed", "3", "a"}).err ==
        "error: seqgrad translate: --seed is for --sample; give --sample too\n");
  CHECK(run({"translate", "--model", model, "--sample", "--beam", "2", "a"}).err ==
        "error: seqgrad translate: --sample draws one translation token by token; expected no --beam, got --beam 2\n");
  std::remove(model.c_str());
  std::remove("build/test_cli_decoding.training.svg");
}

TEST_CASE("seqgrad data --from-catalogs: a system's message translations as a corpus, one tab per line") {
  // A locale folder as the system lays it out, holding the test catalog (tests/fixtures/gettext).
  const std::string dir = "build/test_catalogs";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/zz/LC_MESSAGES");
  std::filesystem::copy_file("tests/fixtures/gettext/demo.mo", dir + "/zz/LC_MESSAGES/demo.mo");
  const Result r = run({"data", "--from-catalogs", dir, "--lang", "zz"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::istringstream lines(r.out);
  int64_t n = 0;
  bool saw_file = false, saw_specifier = false;
  for (std::string line; std::getline(lines, line); ++n) {
    CHECK(std::count(line.begin(), line.end(), '\t') == 1);
    saw_file = saw_file || line == "File\t文件";  // "_File" / "文件(_F)": the accelerators gone
    saw_specifier = saw_specifier || line == "Deleted %d files\t已删除 %d 个文件";
  }
  CHECK(n == 12);
  CHECK(saw_file);
  CHECK(saw_specifier);
  CHECK(r.err.find("1 catalogs (0 skipped: not UTF-8), 18 messages: 12 pairs kept;") != std::string::npos);
  // The parts split whole programs: this one program is all in one of them.
  int64_t in_parts = 0;
  for (const char* part : {"train", "valid", "test"}) {
    const Result p = run({"data", "--from-catalogs", dir, "--lang", "zz", "--part", part});
    CHECK(p.code == 0);
    in_parts += std::count(p.out.begin(), p.out.end(), '\n');
  }
  CHECK(in_parts == 12);
  CHECK(run({"data", "--from-catalogs", dir}).err ==
        "error: seqgrad data: --from-catalogs needs --lang (the target language: zh_CN, fr, de, ...)\n");
  CHECK(run({"data", "--from-catalogs", dir, "--lang", "zz", "--n", "5"}).err ==
        "error: seqgrad data: --n is for --task; --from-catalogs reads its pairs\n");
  CHECK(run({"data", "--task", "copy", "--lang", "zz"}).err == "error: seqgrad data: --lang is for --from-catalogs\n");
  CHECK(run({"data", "--from-catalogs", dir, "--lang", "yy"}).err ==
        "error: catalog_files: expected a folder of catalogs at '" + dir + "/yy/LC_MESSAGES', found none\n");
  std::filesystem::remove_all(dir);
}
