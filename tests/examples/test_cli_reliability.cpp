// tests/examples/test_cli_reliability.cpp - `seqgrad train` under stress: Ctrl-C and --resume
// (the loss curve continues bit for bit), outputs that cannot be written, the same losses on 1,
// 2 and 4 threads, anomaly checks that change nothing, and memory that does not grow.
#include <malloc.h>  // glibc: mallinfo2

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "examples/seqgrad/commands.h"
#include "examples/seqgrad/resume.h"
#include "examples/seqgrad/translator.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "nn/optim/schedule.h"
#include "tests/examples/cli_helpers.h"
#include "tests/test_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;

namespace {

// Peak resident memory of this process since the last reset_peak_rss(), in kB (Linux), or -1.
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }
long peak_rss_kb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

// Bytes malloc has handed out and not had back (glibc), or 0: a leak shows here exactly.
size_t heap_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  return mallinfo2().uordblks;
#else
  return 0;
#endif
}

}  // namespace

TEST_CASE("seqgrad train: Ctrl-C finishes the step and saves; --resume continues the loss curve exactly") {
  const Result reference = train(small_run("build/test_rel_ref.safetensors", "build/test_rel_ref.log"));
  REQUIRE(reference.code == 0);

  // Ctrl-C as soon as the progress bar of epoch 2 shows: mid-epoch.
  const Result stopped = train(small_run("build/test_rel.safetensors", "build/test_rel.log"), "epoch 2 ");
  INFO(stopped.out);
  INFO(stopped.err);
  REQUIRE(stopped.code == 130);
  CHECK(stopped.out.find(" of epoch 2; saved build/test_rel.resume.safetensors\n"
                         "continue with: seqgrad train --resume build/test_rel.resume.safetensors\n") != std::string::npos);
  CHECK(stopped.out.find("saved build/test_rel.safetensors") != std::string::npos);  // the best, after epoch 1
  const std::string log = read_file("build/test_rel.log");
  CHECK(log.size() < read_file("build/test_rel_ref.log").size());
  CHECK(read_file("build/test_rel_ref.log").rfind(log, 0) == 0);  // the same losses so far

  // The resumable checkpoint also translates.
  std::ostringstream out, err;
  CHECK(cli::run({"translate", "--model", "build/test_rel.resume.safetensors", "a b"}, out, err) == 0);

  // Flags that would change the numbers cannot change on resume; other files are not resumable.
  CHECK(train({"--resume", "build/test_rel.resume.safetensors", "--lr", "0.1"}).err ==
        "error: seqgrad train: --lr cannot change when resuming; --resume continues a run with its own settings (only "
        "--epochs, --minutes, --threads, --out, --loss-log and --detect-anomaly can be given again)\n");
  CHECK(train({"--resume", "build/test_rel.safetensors"}).err ==
        "error: seqgrad train: 'build/test_rel.safetensors' has no training state to resume (no seqgrad.train_state in "
        "its metadata); --resume takes the .resume.safetensors file an interrupted run saved\n");

  // Resumed, the run appends the rest of the curve: together, bit for bit the uninterrupted run.
  const Result resumed = train({"--resume", "build/test_rel.resume.safetensors", "--loss-log", "build/test_rel.log"});
  INFO(resumed.out);
  INFO(resumed.err);
  REQUIRE(resumed.code == 0);
  CHECK(resumed.out.find("resuming at epoch 2, step ") != std::string::npos);
  // Finished, the run removes its resume file: resuming it again would train the end twice.
  CHECK(resumed.out.find("removed build/test_rel.resume.safetensors (the run is finished)") != std::string::npos);
  CHECK_FALSE(std::ifstream("build/test_rel.resume.safetensors").good());
  CHECK(read_file("build/test_rel.log") == read_file("build/test_rel_ref.log"));
  CHECK(read_file("build/test_rel.safetensors") == read_file("build/test_rel_ref.safetensors"));
  for (const char* f : {"build/test_rel_ref.safetensors", "build/test_rel_ref.log", "build/test_rel_ref.training.svg",
                        "build/test_rel.safetensors", "build/test_rel.log", "build/test_rel.training.svg",
                        "build/test_rel.resume.safetensors"})
    std::remove(f);
}

// The optimizer and the schedule are flags; each changes the numbers, and each resumes exactly:
// the optimizer's buffers and the schedule's step come back from the resume file.
TEST_CASE("seqgrad train --optimizer, --schedule, --clip: each its own numbers, each resumed bit for bit") {
  const std::string default_log = "build/test_opt_default.log";
  REQUIRE(train(small_run("build/test_opt_default.safetensors", default_log, 2)).code == 0);
  const std::vector<std::vector<std::string>> choices{{"--optimizer", "sgd", "--lr", "0.05", "--schedule", "cosine", "--clip", "0.5"},
                                                      {"--optimizer", "adamw", "--schedule", "noam"},
                                                      {"--schedule", "constant", "--clip", "0"}};
  for (const auto& flags : choices) {
    CAPTURE(flags[1]);
    auto run_with = [&](const std::string& name, const std::string& stop_at) {
      std::vector<std::string> words = small_run("build/test_opt_" + name + ".safetensors", "build/test_opt_" + name + ".log", 2);
      words.insert(words.end(), flags.begin(), flags.end());
      return train(words, stop_at);
    };
    REQUIRE(run_with("ref", "").code == 0);
    CHECK(read_file("build/test_opt_ref.log") != read_file(default_log));  // the flags took effect
    REQUIRE(run_with("cut", "epoch 2 ").code == 130);
    const Result resumed = train({"--resume", "build/test_opt_cut.resume.safetensors", "--loss-log", "build/test_opt_cut.log"});
    INFO(resumed.err);
    REQUIRE(resumed.code == 0);
    CHECK(read_file("build/test_opt_cut.log") == read_file("build/test_opt_ref.log"));
    CHECK(read_file("build/test_opt_cut.safetensors") == read_file("build/test_opt_ref.safetensors"));
    for (const char* f : {"build/test_opt_ref.safetensors", "build/test_opt_ref.log", "build/test_opt_ref.training.svg",
                          "build/test_opt_cut.safetensors", "build/test_opt_cut.log", "build/test_opt_cut.training.svg"})
      std::remove(f);
  }
  // A cosine run resumed with other --epochs would have another learning-rate curve: refused.
  std::vector<std::string> words = small_run("build/test_opt_cos.safetensors", "build/test_opt_cos.log", 2);
  words.insert(words.end(), {"--schedule", "cosine"});
  REQUIRE(train(words, "epoch 2 ").code == 130);
  CHECK(train({"--resume", "build/test_opt_cos.resume.safetensors", "--epochs", "3"}).err ==
        "error: seqgrad train: --epochs cannot change when resuming a --schedule cosine run: its learning rate is "
        "planned over the length of the run, the 2 epochs it was started with\n");
  for (const char* f : {"build/test_opt_cos.safetensors", "build/test_opt_cos.log", "build/test_opt_cos.training.svg",
                        "build/test_opt_cos.resume.safetensors"})
    std::remove(f);
  CHECK(train({"--task", "copy", "--optimizer", "no-such", "--out", "build/x.safetensors"}).err ==
        "error: seqgrad train: --optimizer expects one of " + nn::join_names(nn::optimizers().names(), ", ") +
            ", got 'no-such'\n");
  CHECK(train({"--task", "copy", "--schedule", "no-such", "--out", "build/x.safetensors"}).err ==
        "error: seqgrad train: --schedule expects one of " + nn::join_names(nn::schedules().names(), ", ") +
            ", got 'no-such'\n");
  for (const char* f : {"build/test_opt_default.safetensors", "build/test_opt_default.log", "build/test_opt_default.training.svg"})
    std::remove(f);
}

TEST_CASE("seqgrad train --hard-attention: REINFORCE trains it, and a resumed run samples the same positions") {
  auto hard_run = [](const std::string& name, bool hard) {
    std::vector<std::string> words{"--task", "copy", "--n", "400", "--min-len", "2", "--max-len", "5", "--arch",
                                   "gru-attn", "--hidden", "32", "--dim", "16", "--layers", "1", "--batch", "16",
                                   "--epochs", "3", "--lr", "0.01", "--seed", "3", "--threads", "1", "--out",
                                   "build/test_hard_" + name + ".safetensors", "--loss-log",
                                   "build/test_hard_" + name + ".log"};
    if (hard) words.push_back("--hard-attention");
    return words;
  };
  const Result ref = train(hard_run("ref", true));
  INFO(ref.err);
  REQUIRE(ref.code == 0);
  REQUIRE(train(hard_run("soft", false)).code == 0);
  CHECK(read_file("build/test_hard_ref.log") != read_file("build/test_hard_soft.log"));  // the flag took effect
  CHECK(cli::Translator::load("build/test_hard_ref.safetensors")->config.options.on("hard_attention"));
  // It learns: the last epoch's training loss is well below the first's (2.48 -> 1.27 when written).
  const std::string& o = ref.out;
  const auto loss_of = [&](const std::string& epoch) {
    const size_t at = o.find(epoch + ": train_loss=");
    REQUIRE(at != std::string::npos);
    return std::stod(o.substr(at + epoch.size() + 13));
  };
  CHECK(loss_of("epoch 3") < 0.8 * loss_of("epoch 1"));
  // Stopped in epoch 2 and resumed: the sampler and the REINFORCE baseline come back too.
  REQUIRE(train(hard_run("cut", true), "epoch 2 ").code == 130);
  const Result resumed = train({"--resume", "build/test_hard_cut.resume.safetensors", "--loss-log", "build/test_hard_cut.log"});
  INFO(resumed.err);
  REQUIRE(resumed.code == 0);
  CHECK(read_file("build/test_hard_cut.log") == read_file("build/test_hard_ref.log"));
  CHECK(read_file("build/test_hard_cut.safetensors") == read_file("build/test_hard_ref.safetensors"));
  // A resume file whose model state is missing or damaged is refused, naming the field it lacks
  // (once: "'hard_attention'", a field such a file never had).
  REQUIRE(train(hard_run("cut", true), "epoch 2 ").code == 130);
  const std::string cut = "build/test_hard_cut.resume.safetensors", bad = "build/test_hard_bad.resume.safetensors";
  for (const auto& [value, expected] :
       {std::pair<std::string, std::string>{"", "the training state has no 'model_state', where this 'gru-attn' model "
                                                "keeps what its training needs besides its weights (hard attention: the "
                                                "sampler and the REINFORCE baseline)"},
        {"{\"baseline\": 1}", "the training state's 'model_state' must hold hard attention's sampler state and a "
                                "baseline >= 0 (or -1)"}}) {
    io::SafetensorsFile file = io::read_safetensors(cut);
    io::Json state = io::parse_json(file.metadata.at(cli::kTrainStateKey)), edited = io::Json::object();
    for (const auto& [name, v] : state.as_object())
      if (name != "model_state") edited.set(name, v);
    if (!value.empty()) edited.set("model_state", io::parse_json(value));
    file.metadata[cli::kTrainStateKey] = edited.dump();
    io::write_safetensors(bad, file.tensors, file.metadata);
    CHECK(train({"--resume", bad}).err == "error: seqgrad train: '" + bad + "': " + expected + "\n");
  }
  std::remove(bad.c_str());
  std::remove(cut.c_str());
  CHECK(train({"--task", "copy", "--arch", "gru", "--hard-attention", "--out", "build/x.safetensors"}).err ==
        "error: seqgrad train: --hard-attention does not apply to --arch gru as configured (it takes --layers, --hidden, "
        "--dim, --dropout, --bidirectional, --context, --reverse-source)\n");
  for (const char* name : {"ref", "soft", "cut"})
    for (const char* ext : {".safetensors", ".log", ".training.svg"}) std::remove(cat("build/test_hard_", name, ext).c_str());
}

TEST_CASE("seqgrad train --batch-tokens: batches by size, the padding share printed, resumed bit for bit") {
  auto token_run = [](const std::string& name) {
    std::vector<std::string> words = small_run("build/test_tok_" + name + ".safetensors", "build/test_tok_" + name + ".log", 2);
    words.insert(words.end(), {"--batch-tokens", "60", "--threads", "1"});
    return words;
  };
  const Result ref = train(token_run("ref"));
  INFO(ref.err);
  REQUIRE(ref.code == 0);
  // 360 training pairs of 2 to 5 letters (sizes 3 to 6): at most 60 / 6 = 10 pairs of the
  // longest per batch, 20 of the shortest, so between 18 and 36 batches.
  const size_t at = ref.out.find("batches: ");
  REQUIRE(at != std::string::npos);
  const int batches = std::stoi(ref.out.substr(at + 9));
  CHECK(batches >= 18);
  CHECK(batches <= 36);
  CHECK(ref.out.find("% of their positions padding\n") != std::string::npos);
  REQUIRE(train(token_run("cut"), "epoch 2 ").code == 130);
  const Result resumed = train({"--resume", "build/test_tok_cut.resume.safetensors", "--loss-log", "build/test_tok_cut.log"});
  INFO(resumed.err);
  REQUIRE(resumed.code == 0);
  CHECK(read_file("build/test_tok_cut.log") == read_file("build/test_tok_ref.log"));
  CHECK(read_file("build/test_tok_cut.safetensors") == read_file("build/test_tok_ref.safetensors"));
  std::vector<std::string> tiny = small_run("build/x.safetensors", "build/x.log", 1);
  tiny.insert(tiny.end(), {"--batch-tokens", "5"});
  CHECK(train(tiny).err == "error: seqgrad train: --batch-tokens 5 is smaller than the longest training pair, which "
                           "takes 6 positions (its longer side, source or target + 1); give at least 6\n");
  for (const char* name : {"ref", "cut"})
    for (const char* ext : {".safetensors", ".log", ".training.svg"}) std::remove(cat("build/test_tok_", name, ext).c_str());
  std::remove("build/x.log");
}

TEST_CASE("seqgrad train --minutes: a run out of time leaves a resume file, and --resume goes on bit for bit") {
  // A run stopped by its time budget used to leave no resume file: it could not be continued.
  auto run_of = [](const std::string& name) {
    std::vector<std::string> words = small_run("build/test_min_" + name + ".safetensors", "build/test_min_" + name + ".log", 12);
    words.insert(words.end(), {"--threads", "1"});
    return words;
  };
  const Result ref = train(run_of("ref"));
  REQUIRE(ref.code == 0);
  std::vector<std::string> short_run = run_of("cut");
  short_run.insert(short_run.end(), {"--minutes", "0.001"});  // 60 ms: some steps of the first epoch
  const Result cut = train(short_run);
  INFO(cut.err);
  REQUIRE(cut.code == 0);
  const std::string resume = "build/test_min_cut.resume.safetensors";
  CHECK(cut.out.find("out of time; saved " + resume + "\ncontinue with: seqgrad train --resume " + resume +
                     " [--minutes M]\n") != std::string::npos);
  const Result resumed = train({"--resume", resume, "--minutes", "1000", "--loss-log", "build/test_min_cut.log"});
  INFO(resumed.err);
  REQUIRE(resumed.code == 0);
  CHECK(read_file("build/test_min_cut.log") == read_file("build/test_min_ref.log"));
  CHECK(!std::ifstream(resume).good());  // finished: removed
  for (const char* name : {"ref", "cut"})
    for (const char* ext : {".safetensors", ".log", ".training.svg"}) std::remove(cat("build/test_min_", name, ext).c_str());
}

TEST_CASE("seqgrad train --accumulate, --warmup, --valid-every, --best-by, --patience, --keep-last: each resumed bit for bit") {
  // The trainer a fairseq user expects: each changes what the run does, and Ctrl-C and --resume
  // still continue it exactly (the patience count and the best score travel in the resume file).
  auto run_of = [](const std::string& name) {
    std::vector<std::string> words = small_run("build/test_fs_" + name + ".safetensors", "build/test_fs_" + name + ".log", 4);
    words.insert(words.end(), {"--threads", "1", "--accumulate", "2", "--warmup", "7", "--valid-every", "5", "--best-by",
                               "bleu", "--patience", "50", "--keep-last", "2"});
    return words;
  };
  const Result ref = train(run_of("ref"));
  INFO(ref.err);
  REQUIRE(ref.code == 0);
  // 23 batches an epoch in steps of 2: 12 optimizer steps, the last of one batch; a log line per step.
  std::istringstream log(read_file("build/test_fs_ref.log"));
  int lines = 0;
  for (std::string line; std::getline(log, line);) ++lines;
  CHECK(lines == 4 * 12);
  CHECK(ref.out.find("step 5: valid_loss=") != std::string::npos);
  CHECK(ref.out.find("step 10: valid_loss=") != std::string::npos);
  CHECK(ref.out.find("removed build/test_fs_ref.epoch2.safetensors\n") != std::string::npos);
  CHECK(!std::ifstream("build/test_fs_ref.epoch2.safetensors").good());
  CHECK(std::ifstream("build/test_fs_ref.epoch3.safetensors").good());
  CHECK(std::ifstream("build/test_fs_ref.epoch4.safetensors").good());
  CHECK(train({"--resume", "build/none.resume.safetensors"}).code == 2);  // (nothing to resume: no crash)

  const Result stopped = train(run_of("cut"), "epoch 3 ");
  REQUIRE(stopped.code == 130);
  CHECK(cli::read_progress("build/test_fs_cut.resume.safetensors").warmup_steps == 7);
  const Result resumed = train({"--resume", "build/test_fs_cut.resume.safetensors", "--loss-log", "build/test_fs_cut.log"});
  INFO(resumed.err);
  REQUIRE(resumed.code == 0);
  CHECK(read_file("build/test_fs_cut.log") == read_file("build/test_fs_ref.log"));
  CHECK(read_file("build/test_fs_cut.safetensors") == read_file("build/test_fs_ref.safetensors"));
  // The last two epochs' models average into one that loads.
  CHECK(run({"average", "--out", "build/test_fs_avg.safetensors", "build/test_fs_ref.epoch3.safetensors",
             "build/test_fs_ref.epoch4.safetensors"}).code == 0);

  // --patience 1 with --best-by exact on a run that cannot reach exact matches yet: it stops
  // after the second validation that does not beat the first.
  std::vector<std::string> impatient = small_run("build/test_fs_p.safetensors", "build/test_fs_p.log", 20);
  impatient.insert(impatient.end(), {"--threads", "1", "--lr", "1e-6", "--best-by", "exact", "--patience", "1"});
  const Result early = train(impatient);
  REQUIRE(early.code == 0);
  CHECK(early.out.find("stopping early: the best exact (0) has not been beaten in 1 validations (--patience 1)\n") !=
        std::string::npos);
  CHECK(early.out.find("epoch 3:") == std::string::npos);
  CHECK(train({"--task", "copy", "--out", "build/x.safetensors", "--best-by", "accuracy"}).err ==
        "error: seqgrad train: --best-by expects one of loss, bleu, exact, got 'accuracy'\n");
  for (const char* name : {"ref", "cut", "p", "avg"})
    for (const char* ext : {".safetensors", ".log", ".training.svg", ".epoch1.safetensors", ".epoch2.safetensors",
                            ".epoch3.safetensors", ".epoch4.safetensors"})
      std::remove(cat("build/test_fs_", name, ext).c_str());
}

TEST_CASE("seqgrad train --replicas, --precision: R shards give the same weights on 1 and 2 threads, and resume bit for bit") {
  // Data parallelism (nn/optim/data_parallel.h): the bits depend on R, never on --threads; R = 1
  // is the plain step. The small Transformer has dropout (0.1 by default): each shard draws from
  // its own stream.
  auto run_of = [](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> words = small_run("build/test_dp_" + name + ".safetensors", "build/test_dp_" + name + ".log", 2);
    words.insert(words.end(), extra.begin(), extra.end());
    return words;
  };
  auto bytes = [](const std::string& name) { return read_file("build/test_dp_" + name + ".safetensors"); };
  for (const auto& [name, extra] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"plain", {"--threads", "1"}},
           {"r1", {"--threads", "2", "--replicas", "1"}},
           {"r2t1", {"--threads", "1", "--replicas", "2"}},
           {"r2t2", {"--threads", "2", "--replicas", "2"}},
           {"r3t2", {"--threads", "2", "--replicas", "3"}},
           {"bf16", {"--threads", "2", "--replicas", "2", "--precision", "bf16"}}}) {
    const Result r = train(run_of(name, extra));
    const std::string run_name = name;  // (INFO's lambda cannot capture a structured binding in C++17)
    INFO(run_name, ": ", r.err);
    REQUIRE(r.code == 0);
  }
  CHECK(bytes("r1") == bytes("plain"));
  CHECK(bytes("r2t2") == bytes("r2t1"));
  CHECK(read_file("build/test_dp_r2t2.log") == read_file("build/test_dp_r2t1.log"));
  CHECK(bytes("r2t1") != bytes("plain"));  // other shards, other sums (and other dropout masks)
  CHECK(bytes("r3t2") != bytes("r2t2"));
  CHECK(bytes("bf16") != bytes("r2t2"));
  // Each learns as the plain step does: the last 5 steps' mean loss well below the first's, and
  // within 3% of the plain run's.
  auto last_losses = [](const std::string& name) {
    std::istringstream log(read_file("build/test_dp_" + name + ".log"));
    std::vector<double> losses;
    for (std::string epoch, step, loss; log >> epoch >> step >> loss;) losses.push_back(std::stod(loss));
    REQUIRE(losses.size() == 2 * 23);
    double last = 0;
    for (size_t i = losses.size() - 5; i < losses.size(); ++i) last += losses[i] / 5;
    CHECK(last < 0.85 * losses.front());
    return last;
  };
  const double plain = last_losses("plain");
  for (const char* name : {"r2t2", "r3t2", "bf16"}) {
    CAPTURE(name);
    CHECK(std::abs(last_losses(name) - plain) < 0.03 * plain);
  }
  // Stopped in epoch 2 and resumed: the same run, bit for bit (the flags travel in the resume file).
  REQUIRE(train(run_of("cut", {"--threads", "2", "--replicas", "2", "--precision", "bf16"}), "epoch 2 ").code == 130);
  const Result resumed = train({"--resume", "build/test_dp_cut.resume.safetensors", "--loss-log", "build/test_dp_cut.log",
                                "--threads", "1"});
  INFO(resumed.err);
  REQUIRE(resumed.code == 0);
  CHECK(read_file("build/test_dp_cut.log") == read_file("build/test_dp_bf16.log"));
  CHECK(bytes("cut") == bytes("bf16"));
  // A bf16 model translates and scores at either precision.
  for (const char* precision : {"fp32", "bf16"}) {
    const Result t = run({"translate", "--model", "build/test_dp_bf16.safetensors", "--precision", precision, "a b c"});
    CHECK(t.code == 0);
    CHECK(!t.out.empty());
  }
  // Mistakes are named.
  CHECK(train({"--task", "copy", "--out", "build/x.safetensors", "--replicas", "0"}).err ==
        "error: seqgrad train: --replicas expects a whole number from 1 to 256, got '0'\n");
  CHECK(train({"--task", "copy", "--out", "build/x.safetensors", "--precision", "fp16"}).err ==
        "error: seqgrad train: --precision expects one of fp32, bf16, got 'fp16'\n");
  CHECK(run({"translate", "--model", "build/test_dp_bf16.safetensors", "--precision", "half", "a"}).err ==
        "error: seqgrad translate: --precision expects one of fp32, bf16, got 'half'\n");
  CHECK(train({"--task", "copy", "--arch", "gru-attn", "--hard-attention", "--replicas", "2", "--out",
               "build/x.safetensors"}).err ==
        "error: seqgrad train: --replicas 2 cannot train --arch gru-attn as configured: its training carries state "
        "from one batch to the next (hard attention's REINFORCE baseline is a running mean that each batch updates in "
        "turn), which shards running at once cannot share; give --replicas 1\n");
  for (const char* name : {"plain", "r1", "r2t1", "r2t2", "r3t2", "bf16", "cut"})
    for (const char* ext : {".safetensors", ".log", ".training.svg", ".resume.safetensors"})
      std::remove(cat("build/test_dp_", name, ext).c_str());
}

TEST_CASE("seqgrad train --init-from: the run starts from the checkpoint's model, with its vocabularies") {
  const std::string base = "build/test_init_base.safetensors", tuned = "build/test_init_tuned.safetensors";
  REQUIRE(train(small_run(base, "build/test_init.log", 1)).code == 0);
  // A learning rate so small that the weights barely move: they must still be the base's.
  const Result r = train({"--init-from", base, "--task", "reverse", "--n", "200", "--min-len", "2", "--max-len", "5",
                          "--epochs", "1", "--lr", "1e-7", "--schedule", "constant", "--threads", "1", "--out", tuned});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("transformer with ") != std::string::npos);
  CHECK(r.out.find(" parameters, from '" + base + "'\n") != std::string::npos);
  CHECK(r.out.find("note: 0.0% of the training tokens are not in the model's vocabularies (read as <unk>)\n") !=
        std::string::npos);
  const auto a = cli::Translator::load(base), b = cli::Translator::load(tuned);
  CHECK(a->metadata() == b->metadata());
  const auto pa = a->module().named_parameters(), pb = b->module().named_parameters();
  REQUIRE(pa.size() == pb.size());
  double largest = 0;
  for (size_t i = 0; i < pa.size(); ++i)
    for (int64_t j = 0; j < pa[i].second.value().numel(); ++j)
      largest = std::max(largest, static_cast<double>(std::abs(pa[i].second.value().data()[j] - pb[i].second.value().data()[j])));
  CHECK(largest < 1e-4);  // (Adam moves a weight by about lr per step; a fresh model would differ by ~0.1)
  // The model is the checkpoint's: a flag that would shape another is refused, naming it.
  CHECK(train({"--init-from", base, "--task", "copy", "--dim", "16", "--out", tuned}).err ==
        "error: seqgrad train: --dim cannot be given with --init-from, which takes the model (its kind, options, "
        "vocabularies and weights) from '" + base + "'\n");
  // It may write the checkpoint it started from (read whole first, written atomically).
  CHECK(train({"--init-from", base, "--task", "copy", "--n", "200", "--epochs", "1", "--threads", "1", "--out", base}).code == 0);
  for (const std::string& f : {base, tuned, std::string("build/test_init.log"), std::string("build/test_init_base.training.svg"),
                               std::string("build/test_init_tuned.training.svg")})
    std::remove(f.c_str());
}

TEST_CASE("seqgrad train: an --out that cannot be written fails before training") {
  CHECK(train(small_run("/dev/full", "build/test_rel_x.log")).err ==
        "error: seqgrad train: --out: cannot write '/dev/full': expected a regular file or a new name, got a character "
        "device\n");
  CHECK(train(small_run("build/no/such/dir/m.safetensors", "build/test_rel_x.log")).err ==
        "error: seqgrad train: --out: cannot create a temporary file next to 'build/no/such/dir/m.safetensors': No such "
        "file or directory\n");
  CHECK(train(small_run("", "build/test_rel_x.log")).err ==
        "error: seqgrad train: --out: cannot write '': expected a file name, got an empty path\n");
  std::remove("build/test_rel_x.log");
}

TEST_CASE("seqgrad train: losses are bit-identical on 1, 2 and 4 threads, across runs, with --detect-anomaly") {
  // Big enough that matmuls and elementwise ops split across threads (tensor/gemm.cpp and
  // kElementwiseGrain); dropout on, so the generator is in play too.
  // Under a sanitizer, 5-20x slower, a Transformer on 1 and 4 threads is enough to find races.
  const int threads_before = get_num_threads();
  const std::vector<std::string> models =
      kSanitized ? std::vector<std::string>{"transformer"} : std::vector<std::string>{"transformer", "lstm-attn"};
  for (const std::string& model : models) {
    auto losses = [&](const std::string& threads, bool anomaly = false) {
      std::vector<std::string> words{"--task", "reverse", "--n", "200", "--min-len", "6", "--max-len", "9",
                                     "--max-decode", "12", "--model", model, "--dim", "32",
                                     "--batch", "64",
                                     "--epochs", "1", "--seed", "5", "--threads", threads,
                                     "--out", "build/test_rel_det.safetensors", "--loss-log", "build/test_rel_det.log"};
      if (anomaly) words.push_back("--detect-anomaly");
      if (model != "transformer") words.insert(words.end(), {"--hidden", "64"});  // (a Transformer has no --hidden)
      const Result r = train(words);
      INFO(r.err);
      CHECK(r.code == 0);
      return read_file("build/test_rel_det.log");
    };
    const std::string one = losses("1");
    CAPTURE(model);
    CHECK(std::count(one.begin(), one.end(), '\n') == 3);
    CHECK(losses("4") == one);
    if (kSanitized) continue;
    CHECK(losses("2") == one);
    CHECK(losses("2", /*anomaly=*/true) == one);  // a second run on 2 threads, checked for NaN/Inf
  }
  set_num_threads(threads_before);
  for (const char* f : {"build/test_rel_det.safetensors", "build/test_rel_det.log", "build/test_rel_det.training.svg"})
    std::remove(f);
}

TEST_CASE("soak: training 10x the steps grows peak memory by at most 5%, and leaks nothing") {
  if (kSanitized) {
    MESSAGE("skipped under a sanitizer: its own bookkeeping grows with every allocation");
    return;
  }
  reset_peak_rss();
  if (peak_rss_kb() <= 0) {
    MESSAGE("skipped: no /proc/self/status VmHWM on this system");
    return;
  }
  // SEQGRAD_SOAK_EPOCHS=N (make soak) makes it N and 10 N epochs: the long version.
  const char* env = std::getenv("SEQGRAD_SOAK_EPOCHS");
  const int64_t epochs = env ? std::max<int64_t>(1, std::atol(env)) : 1;
  auto peak_after = [&](int64_t n) {
    reset_peak_rss();
    const Result r = train(small_run("build/test_rel_soak.safetensors", "build/test_rel_soak.log", n));
    CHECK(r.code == 0);
    return peak_rss_kb();
  };
  const long short_run = peak_after(epochs);
  const size_t heap_short = heap_in_use();
  const long long_run = peak_after(10 * epochs);
  const size_t heap_long = heap_in_use();
  MESSAGE(cat("peak RSS: ", short_run, " kB after ", 23 * epochs, " steps, ", long_run, " kB after ", 230 * epochs,
              "; heap in use after each: ", heap_short, " and ", heap_long, " bytes"));
  CHECK(long_run <= short_run * 1.05 + 512);  // 5%, and half a megabyte for malloc's own rounding
  CHECK(heap_long <= heap_short + 64 * 1024);  // (0 where malloc cannot say)
  for (const char* f : {"build/test_rel_soak.safetensors", "build/test_rel_soak.log", "build/test_rel_soak.training.svg"})
    std::remove(f);
}
