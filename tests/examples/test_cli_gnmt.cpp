// tests/examples/test_cli_gnmt.cpp - `seqgrad train --arch gnmt` in-process: a tiny model
// trained, saved with --layers and --no-residual in its configuration, then evaluated (greedy
// and beam), translated, drawn, and interrupted and resumed; the messages for a bad --layers
// and a bad checkpoint configuration.
#include <cstdio>
#include <fstream>

#include "examples/seqgrad/translator.h"
#include "tests/examples/cli_helpers.h"
#include "tests/test_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;

namespace {

std::vector<std::string> tiny_gnmt(const std::string& out, bool residual) {
  std::vector<std::string> words{"--task", "copy", "--n", "300", "--min-len", "2", "--max-len", "4", "--arch", "gnmt",
                                 "--layers", "3", "--hidden", "16", "--dim", "8", "--batch", "16", "--epochs", "2",
                                 "--threads", "1", "--seed", "5", "--out", out};
  if (!residual) words.push_back("--no-residual");
  return words;
}

}  // namespace

TEST_CASE("seqgrad train --arch gnmt: saved, loaded, evaluated, translated, resumed") {
  const std::string model = "build/test_cli_gnmt.safetensors";
  const Result trained = train(tiny_gnmt(model, /*residual=*/false));
  INFO(trained.err);
  REQUIRE(trained.code == 0);
  CHECK(trained.out.find("gnmt with ") != std::string::npos);
  const std::unique_ptr<cli::Translator> t = cli::Translator::load(model);
  CHECK(t->config.model == "gnmt");
  CHECK(t->config.options.integer("layers") == 3);
  CHECK_FALSE(t->config.options.on("residual"));
  CHECK(t->module().to_string().find("GNMT(layers=3, hidden=16, score=general, residual=false,") == 0);

  write_file("build/test_cli_gnmt.tsv", run({"data", "--task", "copy", "--n", "20", "--min-len", "2", "--max-len", "4",
                                             "--seed", "99"}).out);
  for (const char* beam : {"1", "3"}) {
    const Result ev = run({"eval", "--model", model, "--data", "build/test_cli_gnmt.tsv", "--beam", beam});
    INFO(ev.err);
    CHECK(ev.code == 0);
    CHECK(ev.out.rfind("exact_match=", 0) == 0);
  }
  const Result tr = run({"translate", "--model", model, "--beam", "2", "a b c"});
  CHECK(tr.code == 0);
  CHECK(!tr.out.empty());
  const Result at = run({"attention", "--model", model, "--svg", "build/test_cli_gnmt.svg", "b", "a", "d"});
  CHECK(at.code == 0);

  // Interrupted in epoch 2 and resumed: --no-residual and --layers come back from the file.
  const Result stopped = train(tiny_gnmt("build/test_cli_gnmt_cut.safetensors", /*residual=*/false), "epoch 2 ");
  REQUIRE(stopped.code == 130);
  const Result resumed = train({"--resume", "build/test_cli_gnmt_cut.resume.safetensors"});
  INFO(resumed.err);
  REQUIRE(resumed.code == 0);
  CHECK(resumed.out.find("resuming at epoch 2") != std::string::npos);
  CHECK_FALSE(cli::Translator::load("build/test_cli_gnmt_cut.safetensors")->config.options.on("residual"));

  // A checkpoint from before gnmt has no 'residual': it reads as true.
  const io::Json saved = t->config.to_json();  // (kept: the loop refers into it)
  io::Json without = io::Json::object();
  for (const auto& [key, value] : saved.as_object())
    if (key != "residual") without.set(key, value);
  CHECK(cli::ModelConfig::from_json(without).options.on("residual"));
  for (const char* f : {"build/test_cli_gnmt.safetensors", "build/test_cli_gnmt.training.svg", "build/test_cli_gnmt.tsv",
                        "build/test_cli_gnmt.svg", "build/test_cli_gnmt_cut.safetensors",
                        "build/test_cli_gnmt_cut.training.svg"})
    std::remove(f);
}

TEST_CASE("seqgrad train --arch gnmt: the messages for too few layers and a bad configuration") {
  CHECK(run({"train", "--task", "copy", "--arch", "gnmt", "--layers", "1", "--out", "build/x.safetensors"}).err ==
        "error: seqgrad train: --arch gnmt needs --layers 2 or more (a bidirectional bottom layer and at least one "
        "above it), got 1\n");
  cli::ModelConfig c;
  c.model = "gnmt";
  io::Json j = c.resolved().to_json();
  j.set("layers", 1);
  CHECK_THROWS_WITH_AS(cli::ModelConfig::from_json(j),
                       "the model configuration: --arch gnmt needs --layers 2 or more (a bidirectional bottom layer "
                       "and at least one above it), got 1", std::runtime_error);
  j.set("layers", 2);
  j.set("residual", "yes");
  CHECK_THROWS_WITH_AS(cli::ModelConfig::from_json(j), "the model configuration's 'residual' must be true or false, got \"yes\"",
                       std::runtime_error);
  // A model without attention has no alignment to draw.
  const Result rnn = train({"--task", "copy", "--n", "50", "--arch", "gru", "--hidden", "8", "--dim", "4", "--layers",
                            "1", "--epochs", "1", "--threads", "1", "--out", "build/test_cli_gnmt_gru.safetensors"});
  REQUIRE(rnn.code == 0);
  CHECK(run({"attention", "--model", "build/test_cli_gnmt_gru.safetensors", "--svg", "build/test_cli_gnmt_gru.svg", "a", "b"}).err ==
        "error: seqgrad attention: model 'gru' has no attention (try gru-attn, lstm-attn, gnmt or transformer)\n");
  for (const char* f : {"build/test_cli_gnmt_gru.safetensors", "build/test_cli_gnmt_gru.training.svg"}) std::remove(f);
}
