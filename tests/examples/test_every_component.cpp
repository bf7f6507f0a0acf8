// tests/examples/test_every_component.cpp - the checks every registered component gets, whoever
// wrote it: each model kind, attention score, positional encoding, optimizer, schedule, task and
// tokenizer that is linked in (a student's too: make test EXTRA="my_score.cpp") is listed by `seqgrad train
// --help` with its options, trains for an epoch through the tool, saves a checkpoint that loads
// and saves again byte for byte, and has its options refused where they do not apply. No list of
// names is written here: the registries are asked. (Every kind's loss, with every score and
// encoding, is gradchecked in tests/nn/test_grad_every_model.cpp.)
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "examples/seqgrad/commands.h"
#include "examples/seqgrad/translator.h"
#include "data/tasks.h"
#include "data/tokenizer.h"
#include "nn/attention/attention.h"
#include "nn/decoding/model_kind.h"
#include "nn/optim/schedule.h"
#include "nn/transformer/positional.h"
#include "tests/examples/cli_helpers.h"
#include "tests/test_util.h"

using namespace seqgrad;
using namespace seqgrad::testing;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Flags for a small model of kind `model`: each whole-number option it takes at most 8 (within
// its range), unless the kind's rules refuse that, then none (its defaults).
std::vector<std::string> small_model_flags(const std::string& model, const std::vector<std::string>& more) {
  const nn::ModelKind& kind = nn::model_kind(model);
  std::vector<std::string> words;
  try {
    std::vector<nn::Option> taken;
    nn::Settings given;
    nn::resolve_options(kind, [&](const nn::Option& o) -> io::Json {
      if (o.type != nn::Option::Type::Integer) return io::Json();
      const int64_t v = std::max<int64_t>(static_cast<int64_t>(o.lo), std::min<int64_t>(o.default_json().as_int64(), 8));
      given.set(o.key, v);
      return io::Json(v);
    }, [](const nn::Option& o) { return o.key; }, &taken);
    for (const nn::Option& o : taken)
      if (given.has(o.key)) words.insert(words.end(), {"--" + o.flag_name(), std::to_string(given.integer(o.key))});
  } catch (const std::exception&) {
    words.clear();
  }
  words.insert(words.end(), more.begin(), more.end());
  return words;
}

// One epoch of a copy task through the tool, the checkpoint loaded and saved again (the same
// bytes), and a sentence translated (or, for a language model, continued).
void trains_saves_and_loads(const std::string& model, const std::vector<std::string>& more) {
  const std::string out = "build/test_every_component.safetensors", again = "build/test_every_component2.safetensors";
  std::vector<std::string> words{"--task", "copy", "--n", "96", "--min-len", "2", "--max-len", "4", "--epochs", "1",
                                 "--batch", "16", "--threads", "1", "--arch", model, "--out", out};
  for (const std::string& w : small_model_flags(model, more)) words.push_back(w);
  const Result r = train(words);
  INFO(r.out);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("epoch 1: train_loss=") != std::string::npos);
  const auto t = cli::Translator::load(out);
  t->save(again);
  CHECK(read_bytes(out) == read_bytes(again));
  const Result used = t->model().reads_source() ? run({"translate", "--model", out, "a b"})
                                                : run({"sample", "--model", out, "--prompt", "a"});
  CHECK_MESSAGE(used.code == 0, used.err);
  for (const std::string& f : {out, again, std::string("build/test_every_component.training.svg")}) std::remove(f.c_str());
}

// Each option of each component of a registry, given with a component of the same registry that
// does not take it, is refused: "--min-lr does not apply to --schedule warmup (it takes ...)".
template <class Registry>
void options_refused_elsewhere(const Registry& registry, const std::string& flag, const std::vector<std::string>& base) {
  for (const std::string& name : registry.names())
    for (const nn::Option& o : registry.get(name).options)
      for (const std::string& other : registry.names()) {
        const auto& theirs = registry.get(other).options;
        if (std::any_of(theirs.begin(), theirs.end(), [&](const nn::Option& x) { return x.flag_name() == o.flag_name(); }))
          continue;
        CAPTURE(other);
        std::vector<std::string> words = base;
        words.insert(words.end(), {"--" + flag, other, "--" + o.flag_name(), o.flag_turns_off ? "" : o.default_value});
        if (o.type == nn::Option::Type::Switch) words.pop_back();
        const Result r = train(words);
        CHECK(r.code == 2);
        CHECK(r.err.find("--" + o.flag_name() + " does not apply to") != std::string::npos);
        break;  // one is enough
      }
}

}  // namespace

TEST_CASE("every component: --help lists it and each of its options") {
  const std::string help = run({"train", "--help"}).out;
  std::vector<std::string> names = nn::model_names();
  std::vector<nn::Option> options;
  for (const std::string& model : nn::model_names())
    for (const nn::Option& o : nn::model_kind(model).options(nullptr)) options.push_back(o);
  auto add = [&](const auto& registry) {
    for (const std::string& name : registry.names()) {
      names.push_back(name);
      for (const nn::Option& o : registry.get(name).options) options.push_back(o);
    }
  };
  add(nn::scores());
  add(nn::positional_encodings());
  add(nn::cells());
  add(nn::optimizers());
  add(nn::schedules());
  add(data::tasks());
  add(data::tokenizers());
  for (const std::string& name : names) {
    CAPTURE(name);
    CHECK(help.find(name) != std::string::npos);
  }
  for (const nn::Option& o : options) {
    CAPTURE(o.key);
    CHECK(help.find("--" + o.flag_name() + " ") != std::string::npos);
  }
}

TEST_CASE("every component: each model kind trains through the tool, saves and loads") {
  for (const std::string& model : nn::model_names()) {
    CAPTURE(model);
    trains_saves_and_loads(model, {});
  }
}

namespace {

// Each component of `registry`, chosen by --flag, in a model of kind `model`: trains_saves_and_loads.
template <class Registry>
void each_trains(const Registry& registry, const std::string& flag, const std::string& model) {
  for (const std::string& name : registry.names()) {
    CAPTURE(name);
    trains_saves_and_loads(model, {"--" + flag, name});
  }
}

}  // namespace

TEST_CASE("every component: each attention score, positional encoding, optimizer and schedule trains") {
  each_trains(nn::scores(), "attention", "lstm-attn");
  each_trains(nn::positional_encodings(), "positional", "transformer");
  each_trains(nn::optimizers(), "optimizer", "transformer");
  each_trains(nn::schedules(), "schedule", "transformer");
}

TEST_CASE("every component: each tokenizer cuts both sides of a run, and the checkpoint keeps what it learned") {
  for (const std::string& name : data::tokenizers().names()) {
    CAPTURE(name);
    trains_saves_and_loads("gru-attn", {"--src-tokens", name, "--tgt-tokens", name});
  }
  // Through the library: what a side learned from text comes back, after restore(), as the same
  // tokens; decoding gives the words back.
  const std::vector<std::string> text{"the cat sat on the mat", "the dog sat", "a cat and a dog"};
  std::vector<std::string_view> side(text.begin(), text.end());
  for (const std::string& name : data::tokenizers().names()) {
    CAPTURE(name);
    const std::unique_ptr<data::Tokenizer> cut = data::make_tokenizer(name), again = data::make_tokenizer(name);
    std::ostringstream said;
    if (cut->learns()) cut->learn(side, "source", said);
    again->restore(cut->learned());
    for (const std::string& sentence : text) {
      CHECK(again->encode(sentence) == cut->encode(sentence));
      CHECK(cut->decode(cut->encode(sentence)) == sentence);
      CHECK(cut->encode(sentence, 2).size() == std::min<size_t>(2, cut->encode(sentence).size()));
    }
  }
}

TEST_CASE("every component: each task generates pairs through seqgrad data, the same for the same seed") {
  for (const std::string& task : data::tasks().names()) {
    CAPTURE(task);
    const Result r = run({"data", "--task", task, "--n", "5", "--seed", "4"});
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 5);
    CHECK(std::count(r.out.begin(), r.out.end(), '\t') == 5);
    CHECK(run({"data", "--task", task, "--n", "5", "--seed", "4"}).out == r.out);
  }
}

TEST_CASE("every component: an option is refused with a component that does not take it") {
  const std::vector<std::string> base{"--task", "copy", "--out", "build/x.safetensors"};
  options_refused_elsewhere(nn::optimizers(), "optimizer", base);
  options_refused_elsewhere(nn::schedules(), "schedule", base);
  options_refused_elsewhere(data::tasks(), "task", {"--out", "build/x.safetensors"});
  // A tokenizer's option with neither side cut by it: "--bpe-merges is for bpe sides; ...".
  for (const std::string& name : data::tokenizers().names())
    for (const nn::Option& o : data::tokenizers().get(name).options) {
      std::vector<std::string> words = base;
      words.insert(words.end(), {"--" + o.flag_name(), o.default_value});
      if (o.type == nn::Option::Type::Switch) words.pop_back();
      const Result r = train(words);
      CHECK(r.code == 2);
      CHECK(r.err.find("--" + o.flag_name() + " is for ") != std::string::npos);
    }
  std::vector<std::string> attn = base;
  attn.insert(attn.end(), {"--arch", "lstm-attn"});
  options_refused_elsewhere(nn::scores(), "attention", attn);
  std::vector<std::string> transformer = base;
  transformer.insert(transformer.end(), {"--arch", "transformer"});
  options_refused_elsewhere(nn::positional_encodings(), "positional", transformer);
  // A cell is chosen by the model kind's name ("{cell}-attn"): its option with another cell's kind.
  for (const std::string& cell : nn::cells().names())
    for (const nn::Option& o : nn::cells().get(cell).options)
      for (const std::string& other : nn::cells().names()) {
        if (!nn::cells().get(other).options.empty()) continue;
        CAPTURE(other);
        std::vector<std::string> words = base;
        words.insert(words.end(), {"--arch", other + "-attn", "--" + o.flag_name()});
        if (o.type != nn::Option::Type::Switch) words.push_back(o.default_value);
        const Result r = train(words);
        CHECK(r.code == 2);
        CHECK(r.err.find("--" + o.flag_name() + " does not apply to") != std::string::npos);
        break;
      }
}
