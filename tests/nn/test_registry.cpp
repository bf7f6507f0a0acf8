// tests/nn/test_registry.cpp - components found by name: the registries, options and settings,
// model kinds, and replacing a registered child.
#include <sstream>

#include "examples/seqgrad/commands.h"
#include "tests/test_util.h"

using namespace seqgrad;

namespace {

struct Thing {
  std::string name, help;
  int value = 0;
};

}  // namespace

TEST_CASE("registry: names in alphabetical order, one entry a name, unknown names listed in the error") {
  nn::Registry<Thing> things("example thing");
  CHECK(things.add({"zeta", "the last", 3}));
  CHECK(things.add({"alpha", "the first", 1}));
  CHECK(things.names() == std::vector<std::string>{"alpha", "zeta"});
  CHECK(things.get("zeta").value == 3);
  CHECK(things.contains("alpha"));
  CHECK(things.find("beta") == nullptr);
  CHECK_THROWS_WITH_AS(things.add({"alpha", "again", 2}),
                       "Registry: an example thing named 'alpha' is registered twice, in (a file not named) and in "
                       "(a file not named); rename one of them",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(things.get("beta"), "expected an example thing named alpha or zeta, got 'beta'",
                       std::invalid_argument);
  CHECK(nn::join_names({"a", "b", "c"}) == "a, b or c");
  CHECK(nn::join_names({"a"}) == "a");
}

TEST_CASE("registry: a name registered twice before main() is noted with both files, and the tool exits 2 naming them") {
  // What a registering line (SEQGRAD_REGISTER) does: add_at_startup, which must not throw, since
  // nothing could catch it before main().
  nn::Registry<Thing> things("example thing");
  const size_t before = nn::registration_problems().size();
  CHECK(things.add_at_startup({"lion", "one", 1}, "coursework/lion.cpp"));
  CHECK(things.add_at_startup({"lion", "two", 2}, "coursework/lion2.cpp"));
  REQUIRE(nn::registration_problems().size() == before + 1);
  const std::string problem = nn::registration_problems().back();
  CHECK(problem == "Registry: an example thing named 'lion' is registered twice, in coursework/lion.cpp and in "
                   "coursework/lion2.cpp; rename one of them");
  CHECK(things.get("lion").value == 1);  // the first stays
  // The tool refuses to run with it: one line on stderr, exit code 2.
  std::ostringstream out, err;
  CHECK(cli::run({"train", "--help"}, out, err) == 2);
  CHECK(err.str() == "error: " + problem + "\n");
  CHECK(out.str().empty());
  nn::registration_problems().pop_back();
  CHECK(cli::run({"train", "--help"}, out, err) == 0);
}

TEST_CASE("registry: the library's own components are all registered") {
  // The library's own, each of them (a student's linked in with make test EXTRA=... come besides).
  auto has_all = [](const std::vector<std::string>& names, const std::vector<std::string>& own) {
    for (const std::string& name : own) {
      CAPTURE(name);
      CHECK(std::find(names.begin(), names.end(), name) != names.end());
    }
  };
  has_all(nn::scores().names(), {"additive", "concat", "cosine", "dot", "general", "location", "mlp", "scaled-dot"});
  has_all(nn::cells().names(), {"gru", "lstm", "rnn"});
  has_all(nn::positional_encodings().names(), {"learned", "sinusoidal"});
  has_all(nn::optimizers().names(), {"adam", "adamw", "sgd"});
  has_all(nn::schedules().names(), {"constant", "cosine", "noam", "warmup"});
  has_all(nn::model_names(), {"gnmt", "gru", "gru-attn", "lm", "lstm", "lstm-attn", "rnn", "rnn-attn", "transformer"});
  // (The lists in the messages are the registries': a student's component linked in is in them.)
  const std::string models = "expected a model named " + nn::join_names(nn::model_names()) + ", got 'gpt'";
  CHECK_THROWS_WITH_AS(nn::model_kind("gpt"), models.c_str(), std::invalid_argument);
  const std::string encodings =
      "expected a positional encoding named " + nn::join_names(nn::positional_encodings().names()) + ", got 'no-such'";
  CHECK_THROWS_WITH_AS(nn::make_positional_encoding("no-such", 8, 16), encodings.c_str(), std::invalid_argument);
  const std::string optimizers = "expected an optimizer named " + nn::join_names(nn::optimizers().names()) + ", got 'no-such'";
  CHECK_THROWS_WITH_AS(nn::make_optimizer("no-such", {}, real(0.1)), optimizers.c_str(),
                       std::invalid_argument);
}

TEST_CASE("registry: an optimizer's options (weight decay, momentum) take their defaults or the values given, checked") {
  // adam with weight_decay 0.1: the same steps as Adam built by hand with it.
  Variable a(from_vector({1, -2}, {2}), true), b(from_vector({1, -2}, {2}), true);
  auto by_name = nn::make_optimizer("adam", {a}, real(0.1), nn::Settings().set("weight_decay", 0.1));
  nn::Adam by_hand({b}, nn::AdamOptions(real(0.1)).with_betas(real(0.9), real(0.98)).with_eps(real(1e-9))
                            .with_weight_decay(real(0.1)));
  // sgd with momentum 0 and no decay is p - lr g, exactly.
  Variable w(from_vector({1, -2}, {2}), true);
  auto plain = nn::make_optimizer("sgd", {w}, real(0.5), nn::Settings().set("momentum", 0.0));
  // adamw's default decay is 0.01: its first step is Adam's, then p -= lr 0.01 p.
  Variable c(from_vector({1, -2}, {2}), true), d(from_vector({1, -2}, {2}), true);
  auto adamw = nn::make_optimizer("adamw", {c}, real(0.1));
  nn::AdamW adamw_by_hand({d}, nn::AdamOptions(real(0.1)).with_betas(real(0.9), real(0.98)).with_eps(real(1e-9))
                                   .with_weight_decay(real(0.01)));
  for (int k = 0; k < 3; ++k) {
    for (Variable* v : {&a, &b, &w, &c, &d}) v->set_grad(from_vector({real(0.5) * static_cast<real>(k + 1), real(-1)}, {2}));
    by_name->step();
    by_hand.step();
    adamw->step();
    adamw_by_hand.step();
    const std::vector<real> before = w.value().to_vector();
    plain->step();
    CHECK(w.value().to_vector()[0] == before[0] - real(0.5) * (real(0.5) * static_cast<real>(k + 1)));
  }
  CHECK(a.value().to_vector() == b.value().to_vector());
  CHECK(c.value().to_vector() == d.value().to_vector());
  CHECK_THROWS_WITH_AS(nn::make_optimizer("adam", {a}, real(0.1), nn::Settings().set("momentum", 0.5)),
                       "make_optimizer: the optimizer adam takes no option 'momentum'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::make_optimizer("sgd", {a}, real(0.1), nn::Settings().set("weight_decay", -1.0)),
                       "make_optimizer: the optimizer sgd's weight_decay must be a number from 0 to 10, got -1.0", std::invalid_argument);
}

TEST_CASE("registry: a schedule's options reach it, defaulted and checked") {
  Variable w(from_vector({1}, {1}), true);
  auto sgd = nn::make_optimizer("sgd", {w}, real(0.1));
  nn::ScheduleContext run;
  run.warmup_steps = 4;
  run.total_steps = 10;
  // cosine ends at min_lr: 0 unless given.
  CHECK(nn::make_schedule("cosine", *sgd, run)->lr_at(10) == 0);
  run.options.set("min_lr", 0.01);
  CHECK(nn::make_schedule("cosine", *sgd, run)->lr_at(10) == real(0.01));
  // noam's rate is its factor times the paper's.
  nn::ScheduleContext noam;
  noam.warmup_steps = 4;
  noam.d_model = 16;
  const real paper = nn::make_schedule("noam", *sgd, noam)->lr_at(2);
  CHECK(paper == real(0.25 * 3 * std::pow(4.0, -1.5)));
  noam.options.set("noam_factor", 2.0);
  CHECK(nn::make_schedule("noam", *sgd, noam)->lr_at(2) == 2 * paper);
  CHECK_THROWS_WITH_AS(nn::make_schedule("warmup", *sgd, run), "make_schedule: the schedule warmup takes no option 'min_lr'",
                       std::invalid_argument);
  run.options.set("min_lr", -1.0);
  CHECK_THROWS_WITH_AS(nn::make_schedule("cosine", *sgd, run),
                       "make_schedule: the schedule cosine's min_lr must be a number from 0 to 10, got -1.0",
                       std::invalid_argument);
}

TEST_CASE("registry: an optimizer and a schedule by name are the ones the tool always used") {
  // "adam": Adam with the Transformer paper's betas (0.9, 0.98) and eps 1e-9, step for step.
  Variable a(from_vector({1, -2}, {2}), true), b(from_vector({1, -2}, {2}), true);
  auto by_name = nn::make_optimizer("adam", {a}, real(0.1));
  nn::Adam by_hand({b}, nn::AdamOptions(real(0.1)).with_betas(real(0.9), real(0.98)).with_eps(real(1e-9)));
  for (int k = 0; k < 3; ++k) {
    a.set_grad(from_vector({real(0.5) * static_cast<real>(k + 1), real(-1)}, {2}));
    b.set_grad(a.grad().clone());
    by_name->step();
    by_hand.step();
  }
  CHECK(a.value().to_vector() == b.value().to_vector());
  Variable w(from_vector({1, -2}, {2}), true);
  CHECK(dynamic_cast<nn::AdamW*>(nn::make_optimizer("adamw", {w}, real(0.1)).get()) != nullptr);
  auto sgd = nn::make_optimizer("sgd", {w}, real(0.1));
  nn::ScheduleContext run;
  run.warmup_steps = 4;
  run.total_steps = 10;
  CHECK(nn::make_schedule("constant", *sgd, run) == nullptr);
  CHECK(dynamic_cast<nn::LinearWarmupLR*>(nn::make_schedule("warmup", *sgd, run).get()) != nullptr);
  CHECK(dynamic_cast<nn::NoamLR*>(nn::make_schedule("noam", *sgd, run).get()) != nullptr);
  CHECK(dynamic_cast<nn::CosineAnnealingLR*>(nn::make_schedule("cosine", *sgd, run).get()) != nullptr);
}

TEST_CASE("options: each checks its values and gives its default; settings name a missing or mistyped value") {
  const nn::Option layers = nn::integer_option("layers", 2, 1, 12, "layers");
  std::string why;
  CHECK(layers.accepts(io::Json(3), why));
  CHECK_FALSE(layers.accepts(io::Json(13), why));
  CHECK(why == "a whole number from 1 to 12");
  CHECK_FALSE(layers.accepts(io::Json(2.5), why));
  CHECK(layers.default_json() == io::Json(2));
  nn::Option window = nn::integer_option("window_size", 3, 1, 9, "D");
  CHECK(window.flag_name() == "window-size");
  window.flag = "window";
  CHECK(window.flag_name() == "window");
  const nn::Option mode = nn::choice_option("mode", "a", [] { return std::vector<std::string>{"a", "b"}; }, "mode");
  CHECK_FALSE(mode.accepts(io::Json("c"), why));
  CHECK(why == "one of a, b");
  CHECK(nn::switch_option("on", true, "").default_json() == io::Json(true));
  CHECK(nn::number_option("p", 0.5, 0, 1, "").accepts(io::Json(1), why));

  nn::Settings s;
  s.set("layers", 3).set("name", "x");
  CHECK(s.integer("layers") == 3);
  CHECK(s.text("name") == "x");
  CHECK_THROWS_WITH_AS(s.integer("hidden"), "Settings: no value for the option 'hidden'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(s.on("layers"), "Settings: the option 'layers' must be true or false, got 3", std::invalid_argument);
}

TEST_CASE("model kinds: the options each takes, resolved with defaults; a bad value and a broken rule named") {
  auto from = [](std::map<std::string, io::Json> given) {
    return [given](const nn::Option& o) {
      const auto it = given.find(o.key);
      return it == given.end() ? io::Json() : it->second;
    };
  };
  auto flag = [](const nn::Option& o) { return "--" + o.flag_name(); };
  std::vector<nn::Option> taken;
  // A global window takes no D; a local one does; a score with options brings them.
  nn::Settings s = nn::resolve_options(nn::model_kind("lstm-attn"), from({}), flag, &taken);
  CHECK(s.text("window") == "global");
  CHECK_FALSE(s.has("window_size"));
  CHECK_FALSE(s.has("attention_size"));
  s = nn::resolve_options(nn::model_kind("lstm-attn"),
                          from({{"window", io::Json("local-m")}, {"attention", io::Json("additive")}}), flag, &taken);
  CHECK(s.integer("window_size") == 3);
  CHECK(s.integer("attention_size") == 0);
  CHECK(nn::model_kind("gru-attn").name == "{cell}-attn");
  // The Transformer takes no --hidden; gnmt needs 2 layers; dim must split into the heads.
  s = nn::resolve_options(nn::model_kind("transformer"), from({}), flag, &taken);
  CHECK_FALSE(s.has("hidden"));
  CHECK(s.text("positional") == "sinusoidal");
  CHECK_THROWS_WITH_AS(nn::resolve_options(nn::model_kind("transformer"), from({{"dim", io::Json(6)}}), flag),
                       "--dim (6) must be a multiple of --heads (4)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::resolve_options(nn::model_kind("gnmt"), from({{"layers", io::Json(1)}}), flag),
                       "--arch gnmt needs --layers 2 or more (a bidirectional bottom layer and at least one above it), "
                       "got 1", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::resolve_options(nn::model_kind("lstm"), from({{"context", io::Json("first")}}), flag),
                       "--context must be one of last, mean, max, got \"first\"", std::runtime_error);
  // Built from the options: the cell comes from the name.
  nn::ModelContext context;
  context.name = "rnn-attn";
  context.src_vocab = context.tgt_vocab = 9;
  CHECK(context.cell() == "rnn");
  const auto model = nn::model_kind("rnn-attn").build(nn::resolve_options(nn::model_kind("rnn-attn"), from({}), flag),
                                                      context);
  CHECK(model->module().name() == "AttentionSeq2Seq");
}

TEST_CASE("replace_module puts a new child in place; a member assigned without it is refused, never ignored") {
  manual_seed(3);
  nn::AttentionSeq2Seq model(nn::AttentionSeq2SeqOptions(8, 8).with_hidden_size(6).with_embed_dim(4));
  const Tensor src = from_vector({3, 4, 5, 6}, {2, 2}), tgt = from_vector({1, 4, 1, 5}, {2, 2});
  const size_t before = model.named_parameters().size();
  // Assigned alone: the old score is still the registered one, so training would train and
  // save it while the new one ran. Refused, with the way to do it.
  model.score = nn::make_score("dot", 6, 6);
  CHECK_THROWS_WITH_AS(model.logits(src, {2, 2}, tgt, {}),
                       "AttentionSeq2Seq: its member 'score' is not the child registered as 'score' (was it assigned? "
                       "replace a child with model.score = model.replace_module(\"score\", ...))",
                       std::invalid_argument);
  // Replaced: the general score's W is gone from the parameters, and the model runs.
  model.score = model.replace_module("score", nn::make_score("dot", 6, 6));
  CHECK(model.named_parameters().size() == before - 1);
  CHECK(model.logits(src, {2, 2}, tgt, {}).shape() == Shape{2, 2, 8});
  model.eval();
  model.score = model.replace_module("score", nn::make_score("general", 6, 6));
  CHECK_FALSE(model.score->is_training());  // the new child takes its parent's mode
  CHECK(model.named_parameters().size() == before);
  CHECK_THROWS_WITH_AS(model.replace_module("scores", nn::make_score("dot", 6, 6)),
                       "AttentionSeq2Seq: there is no child named 'scores' to replace", std::invalid_argument);
}
