// tests/examples/test_cli_faults.cpp - faults a user can cause, each pinned: SIGTERM and SIGHUP
// during training, edited resume files and checkpoints, outputs that fail, unreadable or broken
// corpora, inputs the model does not know. Each ends in one line on stderr and exit code 2 (or
// the signal's code, with a resume file), never a crash, a hang or a lost file.
// tests/faults/run_faults.sh does the same from outside, with real devices, limits and signals.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "examples/seqgrad/resume.h"
#include "io/safetensors.h"
#include "io/json.h"
#include "nn/attention/attention.h"
#include "nn/decoding/model_kind.h"
#include "tests/examples/cli_helpers.h"
#include "tests/test_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;
namespace fs = std::filesystem;

namespace {

// A copy of checkpoint `from` at `to`, with metadata entry `key` (a JSON object) edited: its
// field `field` set to `value` (JSON text), or removed when `value` is empty.
void edit_json_entry(const std::string& from, const std::string& to, const std::string& key, const std::string& field,
                     const std::string& value) {
  io::SafetensorsFile file = io::read_safetensors(from);
  io::Json entry = io::parse_json(file.metadata.at(key));
  io::Json edited = io::Json::object();
  for (const auto& [name, v] : entry.as_object())
    if (name != field) edited.set(name, v);
  if (!value.empty()) edited.set(field, io::parse_json(value));
  file.metadata[key] = edited.dump();
  io::write_safetensors(to, file.tensors, file.metadata);
}

// A copy of checkpoint `from` at `to` with tensor `name` set to `value` everywhere, or dropped
// when `drop`.
void edit_tensor(const std::string& from, const std::string& to, const std::string& name, real value, bool drop = false) {
  io::SafetensorsFile file = io::read_safetensors(from);
  nn::NamedTensors kept;
  for (auto& [n, t] : file.tensors) {
    if (n == name && drop) continue;
    if (n == name) t = full(t.shape(), value);
    kept.emplace_back(n, t);
  }
  io::write_safetensors(to, kept, file.metadata);
}

// A small LSTM run on the copy task; 10 steps an epoch.
std::vector<std::string> lstm_run(const std::string& out, int64_t epochs = 3) {
  return {"--task", "copy", "--n", "180", "--min-len", "2", "--max-len", "5", "--arch", "lstm", "--hidden", "16",
          "--dim", "8", "--layers", "1", "--batch", "16", "--epochs", std::to_string(epochs), "--seed", "4",
          "--threads", "1", "--out", out};
}

const std::string kDir = "build/test_faults";

struct FreshDir {
  FreshDir() {
    fs::remove_all(kDir);
    fs::create_directories(kDir);
  }
  ~FreshDir() { fs::remove_all(kDir); }
  // Files that look like a writer's temporary file.
  int64_t temporaries() const {
    int64_t n = 0;
    for (const auto& e : fs::directory_iterator(kDir)) n += e.path().filename().string().find(".tmp") != std::string::npos;
    return n;
  }
};

}  // namespace

// ================================================================================================
// Signals

TEST_CASE("seqgrad train: SIGTERM and SIGHUP stop it like Ctrl-C, with a resume file and the shell's code") {
  const FreshDir dir;
  for (const auto& [signo, signal_name, code] : {std::tuple<int, const char*, int>{SIGTERM, "SIGTERM", 143},
                                                 std::tuple<int, const char*, int>{SIGHUP, "SIGHUP", 129}}) {
    const std::string name = signal_name;  // (C++17 lambdas, as in CAPTURE, cannot capture a binding)
    CAPTURE(name);
    const Result r = train(lstm_run(kDir + "/m.safetensors"), "epoch 2 ", signo);
    INFO(r.err);
    CHECK(r.code == code);
    CHECK(r.out.find(std::string("interrupted by ") + name + " after step ") != std::string::npos);
    CHECK(fs::exists(kDir + "/m.resume.safetensors"));
    CHECK(dir.temporaries() == 0);
    const Result resumed = train({"--resume", kDir + "/m.resume.safetensors"});
    INFO(resumed.err);
    CHECK(resumed.code == 0);
    CHECK_FALSE(fs::exists(kDir + "/m.resume.safetensors"));  // finished: removed
  }
}

TEST_CASE("seqgrad train: a signal the process inherited as ignored stays ignored (nohup's SIGHUP)") {
  // Under nohup SIGHUP arrives ignored; closing the terminal must not stop the run. Before this
  // was kept, the run stopped at the SIGHUP with exit code 129.
  const FreshDir dir;
  struct sigaction ignore {}, before {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  REQUIRE(sigaction(SIGHUP, &ignore, &before) == 0);
  const Result r = train(lstm_run(kDir + "/m.safetensors"), "epoch 2 ", SIGHUP);
  struct sigaction after {};
  sigaction(SIGHUP, nullptr, &after);
  sigaction(SIGHUP, &before, nullptr);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("interrupted") == std::string::npos);
  CHECK(fs::exists(kDir + "/m.safetensors"));
  CHECK_FALSE(fs::exists(kDir + "/m.resume.safetensors"));
  CHECK((after.sa_handler == SIG_IGN));  // and still ignored after the run
  // SIGINT is still handled in the same run: the first asks to stop, and SIGHUP, ignored, stays so.
  REQUIRE(sigaction(SIGHUP, &ignore, &before) == 0);
  const Result stopped = train(lstm_run(kDir + "/n.safetensors"), "epoch 2 ", SIGINT);
  sigaction(SIGHUP, nullptr, &after);
  sigaction(SIGHUP, &before, nullptr);
  CHECK(stopped.code == 130);
  CHECK((after.sa_handler == SIG_IGN));
}

// ================================================================================================
// Resume files: every field checked

TEST_CASE("seqgrad train --resume: a damaged or edited resume file is refused, naming the file and the field") {
  const FreshDir dir;
  const Result stopped = train(lstm_run(kDir + "/m.safetensors"), "epoch 2 ");
  REQUIRE(stopped.code == 130);
  const std::string good = kDir + "/m.resume.safetensors", bad = kDir + "/bad.resume.safetensors";
  const int64_t step = cli::read_progress(good).step;  // where in epoch 2 (of 11 batches) it stopped
  auto refused = [&](const std::string& expected) {
    const Result r = train({"--resume", bad});
    CHECK(r.code == 2);
    CHECK(r.err == "error: seqgrad train: '" + bad + "': " + expected + "\n");
    CHECK(r.out.find("epoch 2") == std::string::npos);  // nothing trained
  };
  const std::string state = "seqgrad.train_state";
  edit_json_entry(good, bad, state, "step", "-1");  // once an unchecked index: a segfault
  refused("the training state's 'step' must be a whole number from 0 to 1099511627776, got -1");
  edit_json_entry(good, bad, state, "step", "1000");
  refused("the training state's 'step' (1000) is past the 11 batches of an epoch");
  edit_json_entry(good, bad, state, "epoch", "0");
  refused("the training state's 'epoch' must be a whole number from 1 to 100000, got 0");
  edit_json_entry(good, bad, state, "epoch", "1e18");
  refused("the training state's 'epoch' must be a whole number from 1 to 100000, got 1e+18");
  edit_json_entry(good, bad, state, "epoch", "3");  // the curves list one finished epoch, not two
  refused("the training state's 'epochs' must list 2 numbers, one per finished epoch");
  edit_json_entry(good, bad, state, "epoch_loss", "-1");
  refused("the training state's 'epoch_loss' must be a finite number >= 0, got -1");
  edit_json_entry(good, bad, state, "best_valid", "\"low\"");
  refused("the training state's 'best_valid' must be a finite number >= 0, got \"low\"");
  edit_json_entry(good, bad, state, "best_valid", "0");  // in range, but not what the curve says
  refused("the training state's 'best_valid' must be the least of its 'valid_loss' (" +
          cat(cli::read_progress(good).valid_loss[0]) + ")");
  edit_json_entry(good, bad, state, "step", "0");  // a loss sum with no step taken
  refused("the training state's 'epoch_loss' (" + cat(cli::read_progress(good).epoch_loss) +
          ") must be 0 at 'step' 0: it is the sum of the losses of the epoch's steps so far");
  edit_json_entry(good, bad, state, "warmup_steps", "0");
  refused("the training state's 'warmup_steps' must be a whole number from 1 to 10000000, got 0");
  edit_json_entry(good, bad, state, "rng", "");
  refused("the training state has no 'rng'");
  edit_json_entry(good, bad, state, "corpora", "[1]");
  refused("the training state's 'corpora' must be an object");
  edit_json_entry(good, bad, state, "corpora", "{\"train\": 5}");
  refused("the training state's 'corpora' entry 'train' must be a string");
  io::Json flags = io::Json::object();
  for (const auto& [name, value] : cli::read_progress(good).flags) flags.set(name, name == "layers" ? "2" : value);
  edit_json_entry(good, bad, state, "flags", flags.dump());
  refused("the saved flags contradict the model (layers is 2 in its saved flags and 1 in its model)");

  // The optimizer's step: once replayed through the warm-up for ever when it was 1e18.
  edit_tensor(good, bad, "optimizer.step", real(1e18));
  refused("Optimizer: state entry 'step' expected a whole number from 0 to 2^53, got 1e+18");
  edit_tensor(good, bad, "optimizer.step", real(-1));
  refused("Optimizer: state entry 'step' expected a whole number from 0 to 2^53, got -1");
  edit_tensor(good, bad, "optimizer.step", real(1000));
  refused("the optimizer has taken 1000 steps, but the run had trained only " + std::to_string(11 + step) + " batches");
  edit_tensor(good, bad, "optimizer.step", 0, /*drop=*/true);
  refused("Optimizer: the state has no 'step' entry");
  edit_tensor(good, bad, "optimizer.exp_avg.0", 0, /*drop=*/true);
  refused("Optimizer: the state has 'exp_avg_sq.0' but no 'exp_avg.0'");
  if (std::numeric_limits<real>::has_quiet_NaN) {
    edit_tensor(good, bad, "optimizer.step", std::numeric_limits<real>::quiet_NaN());
    refused("Optimizer: state entry 'step' expected a whole number from 0 to 2^53, got nan");
  }

  // Not JSON at all (NaN is not JSON): the file is named.
  io::SafetensorsFile file = io::read_safetensors(good);
  file.metadata[state] = R"({"epoch": NaN})";
  io::write_safetensors(bad, file.tensors, file.metadata);
  const Result r = train({"--resume", bad});
  CHECK(r.code == 2);
  CHECK(r.err.rfind("error: seqgrad train: '" + bad + "': the training state is not valid JSON (json: ", 0) == 0);

  // A run that has already gone past --epochs: said, not silently nothing.
  CHECK(train({"--resume", good, "--epochs", "1"}).err ==
        "error: seqgrad train: '" + good + "' stopped in epoch 2; --epochs 1 leaves nothing to train (give --epochs 2 or more)\n");
  CHECK(dir.temporaries() == 0);
}

// ================================================================================================
// Checkpoints: the configuration checked before anything is built

TEST_CASE("seqgrad translate: a checkpoint's configuration is checked before the model is built") {
  const FreshDir dir;
  REQUIRE(train(lstm_run(kDir + "/m.safetensors", 1)).code == 0);
  const std::string good = kDir + "/m.safetensors", bad = kDir + "/bad.safetensors";
  auto refused = [&](const std::string& field, const std::string& value, const std::string& expected) {
    edit_json_entry(good, bad, "seqgrad.config", field, value);
    const Result r = run({"translate", "--model", bad, "a b"});
    CHECK(r.code == 2);
    CHECK(r.err == "error: seqgrad: '" + bad + "': " + expected + "\n");
  };
  // layers = 10000000 once allocated until the machine ran out of memory.
  refused("layers", "10000000", "the model configuration's 'layers' must be a whole number from 1 to 12, got 10000000");
  refused("hidden", "-1", "the model configuration's 'hidden' must be a whole number from 1 to 4096, got -1");
  refused("dim", "2.5", "the model configuration's 'dim' must be a whole number from 1 to 4096, got 2.5");
  refused("src_tokens", "\"bogus\"",
          "the model configuration's 'src_tokens' is \"bogus\", which this seqgrad does not have (it has " +
              nn::join_names(data::tokenizers().names(), ", ") + "); if it is a component of your own, build it in: "
              "make seqgrad EXTRA=its_file.cpp");
  refused("tgt_tokens", "7", "the model configuration's 'tgt_tokens' must be one of " +
                                 nn::join_names(data::tokenizers().names(), ", ") + "; got 7");
  refused("model", "\"bogus\"",
          "the model configuration's 'model' is \"bogus\", which this seqgrad does not have (it has " +
              nn::join_names(nn::model_names(), ", ") + "); if it is a component of your own, build it in: make seqgrad "
              "EXTRA=its_file.cpp");
  refused("hidden", "", "the model configuration has no 'hidden'");
  // In range, but a model of 100+ MB from a file of a few kB: refused while it is built, before
  // it is large.
  edit_json_entry(good, bad, "seqgrad.config", "hidden", "4096");
  const Result big = run({"translate", "--model", bad, "a b"});
  CHECK(big.code == 2);
  CHECK(big.err.find("describes a model far larger than the tensors in the file; building it: needs more than ") !=
        std::string::npos);
  // Within the budget but not the file's model: strict loading names what does not match.
  edit_json_entry(good, bad, "seqgrad.config", "hidden", "17");
  CHECK(run({"translate", "--model", bad, "a b"}).err.find("does not match the model") != std::string::npos);
}

TEST_CASE("seqgrad translate: a broken vocabulary or merge list names the file and the metadata key") {
  // Such errors used to read "json: expected 'null' at byte 1, got 'o'", with no file or key.
  const FreshDir dir;
  REQUIRE(train(lstm_run(kDir + "/m.safetensors", 1)).code == 0);
  const std::string good = kDir + "/m.safetensors", bad = kDir + "/bad.safetensors";
  auto error_with = [&](const std::string& key, const std::string& value) {
    io::SafetensorsFile file = io::read_safetensors(good);
    file.metadata[key] = value;
    io::write_safetensors(bad, file.tensors, file.metadata);
    const Result r = run({"translate", "--model", bad, "a b"});
    CHECK(r.code == 2);
    return r.err;
  };
  const std::string where = "error: seqgrad: '" + bad + "': seqgrad.src_vocab: ";
  CHECK(error_with("seqgrad.src_vocab", "oops").rfind(where + "json: ", 0) == 0);
  CHECK(error_with("seqgrad.src_vocab", "[1, 2]").rfind(where, 0) == 0);
  CHECK(error_with("seqgrad.src_vocab", "{\"a\": 1}").rfind(where, 0) == 0);
  CHECK(error_with("seqgrad.src_vocab", "[\"<pad>\", \"<bos>\", \"<eos>\", \"<unk>\", \"a\", \"a\"]").rfind(where, 0) == 0);
  CHECK(error_with("seqgrad.src_vocab", "[\"a\", \"b\"]").rfind(where, 0) == 0);  // no special tokens
  CHECK(error_with("seqgrad.tgt_vocab", "oops").rfind("error: seqgrad: '" + bad + "': seqgrad.tgt_vocab: json: ", 0) == 0);
  // A token no tokenizer makes: a line break in one once turned 2 input lines into 130 output
  // lines, and a tab broke --scores' columns. Token 4, the first after the special tokens, of
  // the target vocabulary (a space side) replaced:
  const io::Json tokens = io::parse_json(io::read_safetensors(good).metadata.at("seqgrad.tgt_vocab"));
  auto with_token_4 = [&](const std::string& token) {
    io::Json edited = io::Json::array();
    for (size_t i = 0; i < tokens.as_array().size(); ++i) edited.push_back(i == 4 ? io::Json(token) : tokens.as_array()[i]);
    return error_with("seqgrad.tgt_vocab", edited.dump());
  };
  const std::string tgt = "error: seqgrad: '" + bad + "': seqgrad.tgt_vocab: token 4 is ";
  const std::string rule = "; a token of a space side is not empty and holds no control character and no space\n";
  CHECK(with_token_4("A\nB") == tgt + "\"A\\nB\"" + rule);
  CHECK(with_token_4("a\tb") == tgt + "\"a\\tb\"" + rule);
  CHECK(with_token_4("a b") == tgt + "\"a b\"" + rule);
  CHECK(with_token_4("") == tgt + "\"\"" + rule);
}

// ================================================================================================
// Outputs and inputs

// A stream buffer whose every write fails, as on a full disk.
class FullBuffer : public std::streambuf {
 protected:
  int_type overflow(int_type) override { return traits_type::eof(); }
  std::streamsize xsputn(const char*, std::streamsize) override { return 0; }
};

TEST_CASE("seqgrad: a standard output that cannot be written is an error, not exit 0") {
  for (const std::vector<std::string>& words : std::vector<std::vector<std::string>>{
           {"data", "--task", "copy", "--n", "5"}, {"data", "--help"}, {"--help"}}) {
    FullBuffer full;
    std::ostream out(&full);
    std::ostringstream err;
    CAPTURE(words[0]);
    CHECK(cli::run(words, out, err) == 2);
    CHECK(err.str().find("cannot write standard output") != std::string::npos);
  }
}

TEST_CASE("seqgrad train: a --loss-log that cannot be written stops at the first step, with a resume file") {
  if (!fs::exists("/dev/full")) {
    MESSAGE("skipped: this system has no /dev/full");
    return;
  }
  const FreshDir dir;
  std::vector<std::string> words = lstm_run(kDir + "/m.safetensors");
  words.insert(words.end(), {"--loss-log", "/dev/full"});
  const Result r = train(words);
  CHECK(r.code == 2);
  // Training stops, but the step it took is not lost: a resume file is saved first.
  const std::string resume = kDir + "/m.resume.safetensors";
  CHECK(r.err == "error: seqgrad train: cannot write --loss-log '/dev/full': No space left on device; saved " + resume +
                     " (continue with: seqgrad train --resume " + resume + " --loss-log ANOTHER_FILE)\n");
  CHECK(cli::read_progress(resume).step == 1);
  CHECK(fs::is_character_file("/dev/full"));
  const Result resumed = train({"--resume", resume, "--loss-log", kDir + "/log.txt"});
  CHECK(resumed.code == 0);
  CHECK(read_file(kDir + "/log.txt").rfind("1 2 ", 0) == 0);  // the second step comes next
}

TEST_CASE("seqgrad train: flags that make no model together are refused before any data is read") {
  // --attention dot compares queries of --hidden with keys of 2 x --hidden once the encoder is
  // bidirectional: it used to fail inside a constructor after the corpus had been read.
  const Result r = train({"--task", "copy", "--arch", "lstm-attn", "--bidirectional", "--attention", "dot", "--out",
                          kDir + "/m.safetensors"});
  CHECK(r.code == 2);
  // The score says what sizes it takes (by being built on them, as the model builds it), and the
  // message says it in terms of the flags, with the scores that fit.
  const std::vector<std::string> fit = scores_that_fit(128, 256);  // (a student's too)
  CHECK(r.err == "error: seqgrad train: --attention dot cannot score queries of --hidden (128) against keys of 256 "
                 "(2 x --hidden, with --bidirectional): DotScore: expected query and key sizes to be equal, got 128 and "
                 "256; give --attention " + nn::join_names(fit) + ", or drop --bidirectional\n");
  CHECK(r.out.empty());  // not a pair read, not a step trained
}

TEST_CASE("seqgrad train: --lr with a schedule that ignores it is refused, not silently dropped") {
  // The Noam schedule sets the rate by d_model^-0.5 min(step^-0.5, step warmup^-1.5): a --lr given
  // with it was recorded and ignored. Found by asking each schedule, not by its name.
  const FreshDir dir;
  const Result r = train({"--task", "copy", "--schedule", "noam", "--lr", "0.002", "--out", kDir + "/m.safetensors"});
  CHECK(r.code == 2);
  CHECK(r.err == "error: seqgrad train: --lr does not apply to --schedule noam, which sets the rate by its own formula; "
                 "give another --schedule (warmup, cosine) for a peak rate of your choosing\n");
  for (const char* schedule : {"warmup", "cosine", "constant"}) {
    CAPTURE(std::string(schedule));
    CHECK(train({"--task", "copy", "--n", "50", "--epochs", "1", "--arch", "lstm", "--hidden", "8", "--dim", "8",
                 "--schedule", schedule, "--lr", "0.002", "--threads", "1", "--out", kDir + "/m.safetensors"})
              .code == 0);
  }
}

TEST_CASE("seqgrad train: a broken corpus is refused before the first step, naming FILE:LINE") {
  const FreshDir dir;
  const std::string tsv = kDir + "/c.tsv";
  auto refused = [&](const std::string& text, const std::string& expected) {
    write_file(tsv, text);
    const Result r = train({"--train", tsv, "--arch", "lstm", "--hidden", "8", "--dim", "8", "--out", kDir + "/m.safetensors"});
    CHECK(r.code == 2);
    CHECK(r.err == "error: " + tsv + expected + "\n");
    CHECK(r.out.empty());  // not one step trained
  };
  // Invalid UTF-8 once trained a whole epoch and then failed to save, naming neither file nor line.
  refused("a b\tc d\ne f\tg h\nbad \xff byte\tx y\n", ":3: expected UTF-8 text, found byte 0xff at column 5");
  refused("a b\tc d\n\tg h\n", ":2: expected 'source<TAB>target', found an empty source");
  refused("a b\tc d\ne f\t  \n", ":2: expected 'source<TAB>target', found an empty target");
  const Result folder = train({"--train", kDir, "--arch", "lstm", "--out", kDir + "/m.safetensors"});
  CHECK(folder.err == "error: cannot read '" + kDir + "': it is a directory\n");
}

TEST_CASE("seqgrad translate: unknown words are named on stderr; a failing input is an error") {
  const FreshDir dir;
  REQUIRE(train(lstm_run(kDir + "/m.safetensors", 1)).code == 0);
  const Result r = run({"translate", "--model", kDir + "/m.safetensors", "qqq a zzz qqq"});
  CHECK(r.code == 0);
  // (then the line "translated 1 sentences in ...")
  CHECK(r.err.rfind("warning: sentence 1: 'qqq', 'zzz' not in the model's source vocabulary (translated as <unk>)\n"
                    "translated 1 sentences in ", 0) == 0);
  const Result lines = run({"translate", "--model", kDir + "/m.safetensors"}, "a b\nqqq\n");
  CHECK(lines.err.rfind("warning: line 2: 'qqq' not in the model's source vocabulary (translated as <unk>)\n"
                        "translated 2 sentences in ", 0) == 0);

  std::istringstream broken("a b\n");
  broken.setstate(std::ios::badbit);
  std::ostringstream out, err;
  CHECK(cli::run({"translate", "--model", kDir + "/m.safetensors"}, out, err, broken) == 2);
  CHECK(err.str().rfind("error: seqgrad translate: cannot read standard input: ", 0) == 0);
}

TEST_CASE("seqgrad train: a 252-byte --out name is saved, and so is its resume file") {
  const FreshDir dir;
  const std::string out = kDir + "/" + std::string(240, 'm') + ".safetensors";
  const Result r = train(lstm_run(out), "epoch 2 ");
  INFO(r.err);
  REQUIRE(r.code == 130);
  const std::string resume = cli::resume_path_for(out);
  CHECK(fs::path(resume).filename().string().size() == 255);
  CHECK(fs::exists(out));
  CHECK(fs::exists(resume));
  CHECK(train({"--resume", resume}).code == 0);
  CHECK(dir.temporaries() == 0);
}

TEST_CASE("seqgrad train --resume: a --train corpus that changed since the run was saved is refused") {
  // A corpus replaced by one of all-new words used to resume on 100% <unk> and overwrite the
  // checkpoint. The resume file records each corpus file's size and FNV-1a hash.
  const FreshDir dir;
  const std::string corpus = kDir + "/c.tsv", resume = kDir + "/m.resume.safetensors";
  const Result made = run({"data", "--task", "copy", "--n", "180", "--seed", "4"});
  REQUIRE(made.code == 0);
  write_file(corpus, made.out);
  const std::vector<std::string> words = {"--train", corpus, "--arch", "lstm", "--hidden", "16", "--dim", "8",
                                          "--layers", "1", "--batch", "16", "--epochs", "3", "--seed", "4",
                                          "--threads", "1", "--out", kDir + "/m.safetensors"};
  REQUIRE(train(words, "epoch 2 ").code == 130);
  const std::string checkpoint = read_file(kDir + "/m.safetensors");
  write_file(corpus, "xx yy\tyy xx\nzz ww\tww zz\n");
  const Result changed = train({"--resume", resume});
  CHECK(changed.code == 2);
  CHECK(changed.err.find("error: seqgrad train: --resume: the --train file '" + corpus + "' has changed since '" +
                         resume + "' was saved (then ") == 0);
  CHECK(read_file(kDir + "/m.safetensors") == checkpoint);
  write_file(corpus, made.out);  // the same bytes again: it resumes
  CHECK(train({"--resume", resume}).code == 0);
}

TEST_CASE("seqgrad train: a resumed run stopped by --minutes keeps its resume file") {
  const FreshDir dir;
  const std::string resume = kDir + "/m.resume.safetensors";
  std::vector<std::string> words = lstm_run(kDir + "/m.safetensors", 50);
  REQUIRE(train(words, "epoch 2 ").code == 130);
  const Result budget = train({"--resume", resume, "--minutes", "0.001"});  // 60 ms of 48 epochs
  CHECK(budget.code == 0);
  CHECK(budget.out.find("(time budget reached)") != std::string::npos);
  CHECK(fs::exists(resume));  // the run is not finished: it can go on from the same file
  CHECK(budget.out.find("removed") == std::string::npos);
}
