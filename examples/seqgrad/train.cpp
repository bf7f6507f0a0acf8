// examples/seqgrad/train.cpp - `seqgrad train`, stage by stage; see train.h.
#include "examples/seqgrad/train.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <unistd.h>

#include "autograd/anomaly.h"
#include "data/corpus.h"
#include "examples/seqgrad/resume.h"
#include "examples/seqgrad/translator.h"
#include "io/json.h"
#include "io/atomic_file.h"
#include "nn/optim/data_parallel.h"
#include "nn/optim/optim.h"
#include "nn/optim/schedule.h"
#include "tensor/check.h"
#include "tensor/random.h"
#include "tensor/thread_pool.h"
#include "viz/plot.h"
#include "viz/progress.h"

namespace seqgrad::cli {

MatmulPrecision precision_flag(const Args& a) {
  return a.choice("precision", {"fp32", "bf16"}) == "bf16" ? MatmulPrecision::BFloat16 : MatmulPrecision::Float32;
}

namespace {

// ================================================================================================
// Configuration: from the flags (with --resume, the saved ones) to the run's settings

// "a: what a is; b: what b is": a registry's names with their help, for a flag's help.
template <class Registry>
std::string registry_help(const Registry& registry) {
  std::string out;
  for (const std::string& name : registry.names()) out += (out.empty() ? "" : "; ") + name + ": " + registry.get(name).help;
  return out;
}

// Every option any registered model kind can take (nn/decoding/model_kind.h), once each, in the order
// the kinds list them: the tool's model flags. A new kind, score or cell brings its own.
std::vector<nn::Option> model_flags() {
  std::vector<nn::Option> all;
  std::set<std::string> seen;
  for (const std::string& kind : nn::model_kinds().names())
    for (const nn::Option& o : nn::model_kinds().get(kind).options(nullptr))
      if (seen.insert(o.flag_name()).second) all.push_back(o);
  return all;
}

// Every option the components of a registry take (an optimizer's --weight-decay, --momentum; a
// schedule's --min-lr), once each: the tool's flags for them. A flag whose components default it
// differently (adam's decay 0, adamw's 0.01) shows no default of its own: its help says each.
template <class Registry>
std::vector<FlagSpec> component_flags(const Registry& registry) {
  std::vector<FlagSpec> all;
  for (const std::string& name : registry.names())
    for (const nn::Option& o : registry.get(name).options) {
      const auto same = std::find_if(all.begin(), all.end(), [&](const FlagSpec& f) { return f.name == o.flag_name(); });
      if (same == all.end()) all.push_back({o.flag_name(), o.default_value, o.help, o.type == nn::Option::Type::Switch});
      else if (same->default_value != o.default_value) same->default_value = "";
    }
  return all;
}

// The value a model option has on the command line (null: not given, so the default), checked
// as Args checks every flag.
io::Json flag_value(const Args& a, const nn::Option& o) {
  const std::string flag = o.flag_name();
  if (!a.given(flag)) return io::Json();
  switch (o.type) {
    case nn::Option::Type::Integer: return a.integer(flag, static_cast<int64_t>(o.lo), static_cast<int64_t>(o.hi));
    case nn::Option::Type::Number: return a.number(flag, o.lo, o.hi);
    case nn::Option::Type::Switch: return a.on(flag) != o.flag_turns_off;
    case nn::Option::Type::Choice: return a.choice(flag, o.choices());
  }
  return io::Json();
}

// A flag given for an option the chosen component does not take is an error, not a flag silently
// recorded and ignored. `flags`: every flag of the component's kind; `taken`: the options of the
// one chosen, named in the message as `chosen` ("--optimizer adam").
void refuse_options_not_taken(const Args& a, const std::vector<std::string>& flags, const std::vector<nn::Option>& taken,
                              const std::string& chosen) {
  std::set<std::string> takes;
  std::string take_list;
  for (const nn::Option& o : taken)
    if (takes.insert(o.flag_name()).second) take_list += (take_list.empty() ? "--" : ", --") + o.flag_name();
  for (const std::string& flag : flags)
    check(!a.given(flag) || takes.count(flag) > 0, a.program(), ": --", flag, " does not apply to ", chosen, " (it takes ",
          take_list.empty() ? std::string("no options") : take_list, ")");
}

// The values given on the command line for `options` (those not given take their defaults when
// the component is built).
nn::Settings given_settings(const Args& a, const std::vector<nn::Option>& options) {
  nn::Settings given;
  for (const nn::Option& o : options) {
    const io::Json v = flag_value(a, o);
    if (!v.is_null()) given.set(o.key, v);
  }
  return given;
}

// The values given for the options of the component `name` of `registry`; chosen by
// `--flag name`, so a flag of another one is refused.
template <class Registry>
nn::Settings component_settings(const Args& a, const Registry& registry, const char* flag, const std::string& name) {
  const nn::Settings given = given_settings(a, registry.get(name).options);
  std::vector<std::string> flags;
  for (const FlagSpec& f : component_flags(registry)) flags.push_back(f.name);
  refuse_options_not_taken(a, flags, registry.get(name).options, cat("--", flag, " ", name));
  return given;
}

}  // namespace

// ================================================================================================
// Toy tasks (data/tasks.h), for train and data: found by name, each with its own options

std::vector<FlagSpec> task_flags(const std::string& help) {
  std::vector<FlagSpec> flags{{"task", "", help + ": " + registry_help(data::tasks())}};
  for (const FlagSpec& f : component_flags(data::tasks())) flags.push_back(f);
  return flags;
}

void check_task_options_unused(const Args& a, const std::string& why) {
  for (const FlagSpec& f : component_flags(data::tasks()))
    check(!a.given(f.name), a.program(), ": --", f.name, " is for --task; ", why);
}

void for_each_task_pair(const Args& a, int64_t n, uint64_t seed, const std::function<void(const data::Pair&)>& each) {
  const std::string task = a.choice("task", data::tasks().names());
  const data::TaskEntry& entry = data::tasks().get(task);
  int64_t lo = entry.min_len, hi = entry.max_len;  // the task's own range, unless asked for another
  if (a.given("min-len")) lo = a.integer("min-len", 1, 1000);
  if (a.given("max-len")) hi = a.integer("max-len", 1, 1000);
  check(lo <= hi, a.program(), ": --min-len (", lo, ") is larger than --max-len (", hi, ")");
  data::TaskOptions options = data::TaskOptions().with_n(n).with_lengths(lo, hi).with_seed(seed);
  options.settings = component_settings(a, data::tasks(), "task", task);
  data::for_each_pair(task, options, each);
}

std::vector<data::Pair> task_pairs(const Args& a, int64_t n, uint64_t seed) {
  std::vector<data::Pair> pairs;
  for_each_task_pair(a, n, seed, [&](const data::Pair& p) { pairs.push_back(p); });
  return pairs;
}

namespace {

// The tool's own flags; train_flags() adds the model options after --arch, the optimizer's after --optimizer.
std::vector<FlagSpec> train_tool_flags() {
  return std::vector<FlagSpec>(
         {{"train", "", "train on a TSV file of source<TAB>target lines"},
          {"valid", "", "validate on this TSV file (default: 10% held out from the training data)"},
          {"n", "5000", "pairs to generate for --task"},
          {"min-len", "", "shortest generated source (task default)"},
          {"max-len", "", "--task: the longest generated source (task default); --train: drop the training pairs with a "
                          "side longer than N tokens, and say how many (validation pairs are all kept)"},
          {"arch", "transformer", "the architecture (model kind): " + nn::join_names(nn::model_names(), ", ") +
                                  " (each takes the options below that apply to it)"},
          {"model", "", "the old name of --arch, taken by seqgrad train until the next release (in translate, eval "
                        "and attention, --model is the checkpoint)"},
          {"epochs", "10", "passes over the training data"},
          {"minutes", "", "stop after this many minutes instead (the best checkpoint is still saved)"},
          {"batch", "64", "sentence pairs per step"},
          {"batch-tokens", "", "batch by tokens instead (fairseq's --max-tokens): pairs of similar length, up to N "
                               "positions per batch counting the longer side, source or target + 1; --batch then "
                               "caps the pairs only if given"},
          {"lr", "0.001", "learning rate (the peak, after the warm-up)"},
          {"optimizer", "adam", registry_help(nn::optimizers())},
          {"schedule", "warmup", "learning rate over the run (the warm-up: the first 100 steps, or 10% of a short run; "
                                 "noam's d_model is the model's width): " + registry_help(nn::schedules())},
          {"clip", "1", "scale the gradients down to this global norm when they exceed it (0: never)"},
          {"warmup", "", "learning-rate warm-up steps (default: 100, or 10% of a short run)"},
          {"accumulate", "1", "sum the gradients of N batches before each step (fairseq's --update-freq): the step of "
                              "a batch N times larger, in the memory of one"},
          {"valid-every", "0", "also validate every N optimizer steps, not only after each epoch (0: after each epoch only)"},
          {"best-by", "loss", "which validation number chooses the checkpoint saved to --out: loss (the least), bleu or "
                              "exact (the greatest)"},
          {"patience", "0", "stop once K validations in a row have not beaten the best (0: never stop early)"},
          {"keep-last", "0", "also save each epoch's model as MODEL.epochN.safetensors, keeping the last K (for "
                             "seqgrad average)"},
          {"label-smoothing", "0", "label smoothing epsilon"},
          {"seed", "0", "random seed"},
          {"threads", "0", "worker threads (0 = SEQGRAD_THREADS or all cores)"},
          {"replicas", "1", "data parallelism: cut each batch into R fixed shards, each run forward and backward on "
                            "its own thread, their gradients summed in a fixed order (the numbers depend on R, never "
                            "on --threads; give --threads R or more)"},
          {"precision", "fp32", "fp32, or bf16: matrix products take bfloat16 inputs and sum in float32 (mixed "
                                "precision; weights, optimizer state, the loss and checkpoints stay float32)"},
          {"src-tokens", "", "how the source splits into tokens (default: the task's, char for date; space for --train): " +
                                 registry_help(data::tokenizers())},
          {"tgt-tokens", "", "how the target splits into tokens (default: as the source's default)"},
          {"min-freq", "1", "drop tokens seen fewer times from the vocabularies"},
          {"max-decode", "64", "longest output (and input) the model handles, in tokens"},
          {"out", "", "where to write the checkpoint (.safetensors)"},
          {"loss-log", "", "write 'epoch step loss' for every step to this file (appended to when resuming)"},
          {"resume", "", "continue the run saved by Ctrl-C or --minutes in MODEL.resume.safetensors, exactly"},
          {"init-from", "", "start from this checkpoint's model (its kind, options, vocabularies and weights) with a "
                            "fresh optimizer and schedule: fine-tune it on new data, or train a finished run on"},
          {"detect-anomaly", "false", "check every op's value and gradient for NaN/Inf and name the first bad op", true}});
}

Args train_flags() {
  std::vector<FlagSpec> flags = task_flags("train on a toy task");
  for (const FlagSpec& f : train_tool_flags()) flags.push_back(f);
  // Each component's options after the flag that chooses it: --dim after --arch, --weight-decay
  // after --optimizer.
  auto insert_after = [&](const char* name, const std::vector<FlagSpec>& options) {
    const auto at = std::find_if(flags.begin(), flags.end(), [&](const FlagSpec& f) { return f.name == name; });
    flags.insert(at + 1, options.begin(), options.end());
  };
  std::vector<FlagSpec> model_options;
  for (const nn::Option& o : model_flags())
    model_options.push_back({o.flag_name(), o.flag_turns_off ? "false" : o.default_value, o.help,
                             o.type == nn::Option::Type::Switch});
  insert_after("arch", model_options);
  insert_after("optimizer", component_flags(nn::optimizers()));
  insert_after("schedule", component_flags(nn::schedules()));
  insert_after("tgt-tokens", component_flags(data::tokenizers()));
  return Args("seqgrad train",
              "seqgrad train (--task NAME | --train FILE) [--valid FILE] --arch KIND [options] --out MODEL.safetensors\n"
              "       seqgrad train --resume MODEL.resume.safetensors [--epochs N --minutes M --threads T --out FILE]",
              std::move(flags));
}

struct Settings {
  Args args = train_flags();  // the effective flags: with --resume, the saved ones and those given again
  ModelConfig config;
  int64_t epochs = 0, batch = 0, threads = 0, min_freq = 0;
  nn::Settings src_token_settings, tgt_token_settings;  // each side's tokenizer's options given (--bpe-merges)
  int64_t batch_tokens = 0, batch_cap = 0;  // --batch-tokens (0: batches of --batch pairs), and its pair cap
  double minutes = 0;  // 0: no time budget
  real lr = 0, smoothing = 0, clip = 0;
  std::string optimizer, schedule;
  nn::Settings optimizer_settings;  // the optimizer's options given (--weight-decay ...); the rest default
  int64_t warmup = 0;                                // --warmup (0: the default rule)
  int64_t accumulate = 1, valid_every = 0, patience = 0, keep_last = 0;
  int64_t replicas = 1;                               // --replicas: shards of each batch
  MatmulPrecision precision = MatmulPrecision::Float32;  // --precision
  std::string best_by = "loss";
  uint64_t seed = 0;
  std::string out_path;
  bool resuming = false;
  std::string resume_from;
  TrainProgress progress;  // a fresh run: epoch 1, step 0
  std::map<std::string, std::string> saved_corpora;  // resuming: the corpus fingerprints the run was started on
  std::string init_from;  // --init-from: the checkpoint whose model this run starts from
  std::unique_ptr<Translator> init_model;  // ... loaded (load_data takes it)
  bool translates = true;  // false for a language model (--arch lm): no translation to score
  bool carries_state = false;  // the model's training carries state from batch to batch (hard attention)
  nn::Settings schedule_settings;  // the schedule's options given (--min-lr ...); the rest default
  std::string saved_epochs;  // resuming: the --epochs the run was started with
};

// With --resume, a run takes its flags from the checkpoint. Only those that leave the numbers
// alone may be given again: how long to go on, threads, where to write, anomaly checks.
const std::set<std::string> kResumeFlags{"resume", "epochs", "minutes", "threads", "out", "loss-log", "detect-anomaly"};

std::vector<std::string> resume_words(const Args& now, const TrainProgress& saved) {
  const std::vector<FlagSpec>& flags = now.flags();
  std::vector<std::string> words;
  for (const FlagSpec& f : flags) {
    if (!now.given(f.name) || f.name == "resume") continue;
    check(kResumeFlags.count(f.name) > 0, "seqgrad train: --", f.name, " cannot change when resuming; --resume "
          "continues a run with its own settings (only --epochs, --minutes, --threads, --out, --loss-log and "
          "--detect-anomaly can be given again)");
    words.push_back("--" + f.name + (f.is_switch ? "" : "=" + now.text(f.name)));
  }
  for (const auto& [name, value] : saved.flags) {
    if (now.given(name)) continue;
    const std::string& wanted = name;  // (a lambda cannot capture a structured binding in C++17)
    const auto f = std::find_if(flags.begin(), flags.end(), [&](const FlagSpec& x) { return x.name == wanted; });
    check_state(f != flags.end() && name != "resume", "seqgrad train: --resume: the checkpoint names an unknown flag '",
                name, "'");
    words.push_back("--" + name + (f->is_switch ? "" : "=" + value));
  }
  return words;
}

// The rates a schedule (with its options) gives over the first 1,000 steps of a run of
// `total_steps` steps, at a learning rate of `lr`; empty when it has none (the rate as given).
// What a schedule reads is asked of the schedule itself: one file per schedule, with no flag to
// say so.
std::vector<real> schedule_rates(const std::string& name, const nn::Settings& options, real lr, int64_t total_steps) {
  Variable p(zeros({1}), /*requires_grad=*/true);
  nn::SGD opt({p}, nn::SGDOptions(lr));  // any optimizer: the schedule only sets its rate
  nn::ScheduleContext run;
  run.warmup_steps = 100;
  run.total_steps = total_steps;
  run.options = options;
  const std::unique_ptr<nn::LRScheduler> schedule = nn::make_schedule(name, opt, run);
  std::vector<real> rates;
  for (int64_t step = 0; schedule && step < 1000; ++step) rates.push_back(schedule->lr_at(step));
  return rates;
}
// Does the schedule's rate depend on the one it is given (noam's does not)? On the run's length
// (cosine's does)?
bool schedule_uses_lr(const std::string& name, const nn::Settings& options) {
  const std::vector<real> rates = schedule_rates(name, options, real(1e-3), 1000);
  return rates.empty() || rates != schedule_rates(name, options, real(2e-3), 1000);
}
bool schedule_uses_length(const std::string& name, const nn::Settings& options) {
  return schedule_rates(name, options, real(1e-3), 1000) != schedule_rates(name, options, real(1e-3), 2000);
}

// The flags in effect: those given, or with --resume the run's saved flags and those given again.
void read_flags(Settings& s, const Args& given) {
  Args& a = s.args;
  a = given;
  s.resuming = a.given("resume");
  s.resume_from = a.text("resume");
  TrainProgress& progress = s.progress;
  if (s.resuming) {
    progress = read_progress(s.resume_from);
    const auto e = progress.flags.find("epochs");
    s.saved_epochs = e != progress.flags.end() ? e->second : train_flags().text("epochs");
    const std::vector<std::string> effective = resume_words(a, progress);
    a = train_flags();
    a.parse(effective);
  }
  check(a.given("task") != a.given("train"), "seqgrad train: give exactly one of --task NAME or --train FILE");
  check(a.given("out"), "seqgrad train: --out MODEL.safetensors is required");
  progress.flags.clear();
  for (const FlagSpec& f : a.flags())
    if (a.given(f.name)) progress.flags[f.name] = a.text(f.name);
  // The corpus files are fingerprinted as they are read (load_data), once: a pipe can be read once.
  s.saved_corpora = progress.corpora;
  progress.corpora.clear();
}

// --init-from: the model is the checkpoint's, whole; a flag that would shape another one is refused.
void configure_model_from_checkpoint(Settings& s) {
  const Args& a = s.args;
  s.init_from = a.text("init-from");
  std::vector<std::string> shaping{"arch", "model", "src-tokens", "tgt-tokens", "min-freq", "max-decode"};
  for (const nn::Option& o : model_flags()) shaping.push_back(o.flag_name());
  for (const FlagSpec& f : component_flags(data::tokenizers())) shaping.push_back(f.name);
  for (const std::string& flag : shaping)
    check(!a.given(flag), "seqgrad train: --", flag, " cannot be given with --init-from, which takes the model (its "
          "kind, options, vocabularies and weights) from '", s.init_from, "'");
  // (Resuming such a run, the model is the resume file's, and the --init-from file may be gone.)
  s.init_model = Translator::load(s.resuming ? s.resume_from : s.init_from);  // checked as translate checks it
  s.config = s.init_model->config;
  s.translates = s.init_model->model().reads_source();
  s.carries_state = !s.init_model->model().training_state().is_null();
}

// The model: its kind, found by name, says which options it takes; each is read from its flag
// (or defaulted) and checked, and a model flag given to a kind that does not take it is refused.
void configure_model(Settings& s) {
  const Args& a = s.args;
  ModelConfig& c = s.config;
  check(!a.given("model") || !a.given("arch"), "seqgrad train: give --arch alone (--model is its old name)");
  c.model = a.choice(a.given("model") ? "model" : "arch", nn::model_names());
  std::vector<nn::Option> taken;
  try {
    c.options = nn::resolve_options(nn::model_kind(c.model), [&](const nn::Option& o) { return flag_value(a, o); },
                                    [](const nn::Option& o) { return "--" + o.flag_name(); }, &taken);
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).rfind("seqgrad train:", 0) == 0) throw;
    throw std::invalid_argument(cat("seqgrad train: ", e.what()));
  }
  std::vector<std::string> flags;
  for (const nn::Option& o : model_flags()) flags.push_back(o.flag_name());
  refuse_options_not_taken(a, flags, taken, cat("--arch ", c.model, " as configured"));
  c.max_len = a.integer("max-decode", 1, kMaxDecode);
  // A task says how its text splits (the date task's by character); a corpus splits on spaces.
  const std::string tokens = a.given("task") ? data::tasks().get(a.choice("task", data::tasks().names())).tokens : "space";
  c.src_tokens = a.given("src-tokens") ? a.choice("src-tokens", data::tokenizers().names()) : tokens;
  c.tgt_tokens = a.given("tgt-tokens") ? a.choice("tgt-tokens", data::tokenizers().names()) : tokens;
  // Options that each pass their own check may still make no model together (--attention dot
  // with --bidirectional: queries of --hidden, keys of 2 x --hidden). Built once now, on a
  // vocabulary of the special tokens and one word, so that the flags are refused before any data is read.
  try {
    const data::Vocab tiny = data::Vocab::from_tokens({"<pad>", "<bos>", "<eos>", "<unk>", "a"});
    Translator trial(c, tiny, tiny);
    s.translates = trial.model().reads_source();
    s.carries_state = !trial.model().training_state().is_null();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(cat("seqgrad train: these flags make no model: ", e.what()));
  }
}

// Each side's tokenizer options: the values given for those its tokenizer takes. A tokenizer's
// flag that neither side's tokenizer takes is refused.
void configure_tokenizers(Settings& s) {
  const Args& a = s.args;
  const auto& tokenizers = data::tokenizers();
  s.src_token_settings = given_settings(a, tokenizers.get(s.config.src_tokens).options);
  s.tgt_token_settings = given_settings(a, tokenizers.get(s.config.tgt_tokens).options);
  for (const FlagSpec& f : component_flags(tokenizers)) {
    std::vector<std::string> takers;  // the tokenizers that take --f.name
    for (const std::string& name : tokenizers.names())
      for (const nn::Option& o : tokenizers.get(name).options)
        if (o.flag_name() == f.name) takers.push_back(name);
    const bool taken = std::find(takers.begin(), takers.end(), s.config.src_tokens) != takers.end() ||
                       std::find(takers.begin(), takers.end(), s.config.tgt_tokens) != takers.end();
    check(!a.given(f.name) || taken, "seqgrad train: --", f.name, " is for ", nn::join_names(takers), " sides; give "
          "--src-tokens ", takers.front(), " or --tgt-tokens ", takers.front(), " too");
  }
}

// The optimizer, the schedule and the rest of how the model is trained.
void configure_training(Settings& s) {
  const Args& a = s.args;
  s.epochs = a.integer("epochs", 1, kMaxEpochs);
  s.batch = a.integer("batch", 1, 65536);
  s.batch_tokens = a.given("batch-tokens") ? a.integer("batch-tokens", 1, 1 << 24) : 0;
  s.batch_cap = a.given("batch") ? s.batch : 0;
  check(!s.resuming || s.progress.epoch <= s.epochs, "seqgrad train: '", s.resume_from, "' stopped in epoch ",
        s.progress.epoch, "; --epochs ", s.epochs, " leaves nothing to train (give --epochs ", s.progress.epoch, " or more)");
  s.minutes = a.given("minutes") ? a.number("minutes", 0.001, 1e6) : 0;
  s.lr = static_cast<real>(a.number("lr", 1e-7, 10));
  s.optimizer = a.choice("optimizer", nn::optimizers().names());
  s.optimizer_settings = component_settings(a, nn::optimizers(), "optimizer", s.optimizer);
  s.schedule = a.choice("schedule", nn::schedules().names());
  s.schedule_settings = component_settings(a, nn::schedules(), "schedule", s.schedule);
  s.clip = static_cast<real>(a.number("clip", 0, 1e6));
  // A schedule that sets the rate by a formula of its own (noam's d_model^-0.5 ...) ignores --lr.
  check(!a.given("lr") || schedule_uses_lr(s.schedule, s.schedule_settings), "seqgrad train: --lr does not apply to "
        "--schedule ", s.schedule, ", which sets the rate by its own formula; give another --schedule (warmup, cosine) "
        "for a peak rate of your choosing");
  // A schedule planned over the run's length (cosine's) would bend if --epochs changed on resume.
  check(!s.resuming || a.text("epochs") == s.saved_epochs || !schedule_uses_length(s.schedule, s.schedule_settings),
        "seqgrad train: --epochs cannot change when resuming a --schedule ", s.schedule, " run: its learning rate "
        "is planned over the length of the run, the ", s.saved_epochs, " epochs it was started with");
  s.warmup = a.given("warmup") ? a.integer("warmup", 1, kMaxWarmupSteps) : 0;
  s.accumulate = a.integer("accumulate", 1, 1 << 20);
  s.valid_every = a.integer("valid-every", 0, kMaxStepsPerEpoch);
  s.best_by = a.choice("best-by", {"loss", "bleu", "exact"});
  check(s.translates || s.best_by == "loss", "seqgrad train: --best-by ", s.best_by, " scores translations, and --arch ",
        s.config.model, " translates nothing (a language model reads no source); give --best-by loss");
  s.patience = a.integer("patience", 0, 1000000);
  s.keep_last = a.integer("keep-last", 0, 1000000);
  s.smoothing = static_cast<real>(a.number("label-smoothing", 0, 0.99));
  s.seed = static_cast<uint64_t>(a.integer("seed", 0, INT64_MAX));
  s.threads = a.integer("threads", 0, 256);
  s.replicas = a.integer("replicas", 1, 256);
  // REINFORCE's running baseline is one number that every batch updates in turn (b <- 0.9 b + 0.1
  // mean loss): shards running at once would update it in whichever order they finish.
  // A model whose training carries state from batch to batch says so (EncoderDecoder::training_state).
  check(s.replicas == 1 || !s.carries_state, "seqgrad train: --replicas ", s.replicas, " cannot train --arch ",
        s.config.model, " as configured: its training carries state from one batch to the next (hard attention's "
        "REINFORCE baseline is a running mean that each batch updates in turn), which shards running at once cannot "
        "share; give --replicas 1");
  s.precision = precision_flag(a);
  s.min_freq = a.integer("min-freq", 1, 1000000);
}

// Every file the run will write is checked now, not after an epoch of training; and none of them
// may be a file the run reads, or another of them.
void check_outputs(const Settings& s) {
  const Args& a = s.args;
  io::check_writable(s.out_path, "seqgrad train: --out");
  io::check_writable(svg_path_for(s.out_path), "seqgrad train: the loss plot");
  io::check_writable(resume_path_for(s.out_path), "seqgrad train: the resume file");
  if (s.keep_last > 0) io::check_writable(epoch_path_for(s.out_path, 1), "seqgrad train: --keep-last");
  std::vector<io::NamedPath> inputs, outputs{{"--out", s.out_path},
                                             {"the loss plot", svg_path_for(s.out_path)},
                                             {"the resume file", resume_path_for(s.out_path)}};
  for (const char* flag : {"train", "valid"})
    if (a.given(flag)) inputs.push_back({cat("--", flag), a.text(flag)});
  if (s.resuming) inputs.push_back({"--resume", s.resume_from});
  if (a.given("init-from")) inputs.push_back({"--init-from", s.init_from});
  if (a.given("loss-log")) outputs.push_back({"--loss-log", a.text("loss-log")});
  // (A run may write the file it resumes from, or the checkpoint it started from: each is read
  // whole before anything is written, and written whole, atomically.)
  io::check_no_overlap(inputs, outputs, "seqgrad train", {{"the resume file", "--resume"}, {"--out", "--init-from"}});
}

// Checks every flag, and every file the run will write, before anything is trained.
Settings configure(const Args& given) {
  Settings s;
  read_flags(s, given);
  const Args& a = s.args;
  if (a.given("init-from")) configure_model_from_checkpoint(s);
  else configure_model(s);
  configure_tokenizers(s);
  if (a.given("max-len")) a.integer("max-len", 1, a.given("task") ? 1000 : 1000000);  // checked before any data is read
  if (!a.given("task")) check_task_options_unused(a, "--train reads its pairs");
  configure_training(s);
  s.out_path = a.text("out");
  check_outputs(s);
  return s;
}

// ================================================================================================
// Data: the sentence pairs, the vocabularies and the model (new, or the resumed one)

struct Data {
  std::unique_ptr<Translator> translator;
  data::EncodedPairs train, valid;
  std::vector<int64_t> lengths;         // of the training sources, for batching
  std::vector<int64_t> tgt_lengths;     // of the training targets, for --batch-tokens
  std::vector<data::Pair> probe_pairs;  // up to 500 validation pairs, translated after each epoch
};

// Reads the corpora once each (a pipe or a FIFO can be read only once), fingerprinting them as
// they are read: a resumed run must read the ones it was started on (a corpus replaced by one of
// new words used to train on 100% <unk> and overwrite the model).
std::vector<data::Pair> read_corpus(Settings& s, const char* flag) {
  const std::string path = s.args.text(flag);
  data::Digest digest;
  std::vector<data::Pair> pairs = data::read_tsv_file(path, &digest);
  s.progress.corpora[flag] = digest.text();
  const auto then = s.saved_corpora.find(flag);
  check_state(then == s.saved_corpora.end() || then->second == digest.text(), "seqgrad train: --resume: the --", flag,
              " file '", path, "' has changed since '", s.resume_from, "' was saved (then ",
              then == s.saved_corpora.end() ? "" : then->second, ", now ", digest.text(),
              "; bytes and FNV-1a hash); resume with the corpus the run was started on");
  return pairs;
}

Data load_data(Settings& s, std::ostream& out) {
  const Args& a = s.args;
  const ModelConfig& c = s.config;
  Data d;
  std::vector<data::Pair> train_pairs =
      a.given("task") ? task_pairs(a, a.integer("n", 10, 10000000), s.seed) : read_corpus(s, "train");
  std::vector<data::Pair> valid_pairs;
  if (a.given("valid")) {
    valid_pairs = read_corpus(s, "valid");
  } else {
    const size_t held = std::max<size_t>(1, train_pairs.size() / 10);
    check(train_pairs.size() >= 2, "seqgrad train: need at least 2 sentence pairs to hold one out for validation");
    valid_pairs.assign(train_pairs.end() - static_cast<std::ptrdiff_t>(held), train_pairs.end());
    train_pairs.resize(train_pairs.size() - held);
  }
  std::unique_ptr<Translator>& model = d.translator;
  if (s.resuming) {
    model = Translator::load(s.resume_from);  // the same vocabularies the data would give, and the weights
    const std::string differs = first_difference(c, model->config, "its saved flags", "its model");
    check_state(differs.empty(), "seqgrad train: '", s.resume_from, "': the saved flags contradict the model (", differs, ")");
    model->module().train();
  } else if (!s.init_from.empty()) {
    model = std::move(s.init_model);  // its vocabularies encode the new data: words it never saw are <unk>
    model->module().train();
  } else {
    // A side's tokenizer may first learn from the training sentences (bpe: its merges, each
    // side its own); the vocabulary is made of the tokens it then cuts.
    std::shared_ptr<data::Tokenizer> src_cut = data::make_tokenizer(c.src_tokens, s.src_token_settings),
                                     tgt_cut = data::make_tokenizer(c.tgt_tokens, s.tgt_token_settings);
    for (const bool source : {true, false}) {
      data::Tokenizer& cut = source ? *src_cut : *tgt_cut;
      if (!cut.learns()) continue;
      std::vector<std::string_view> side;  // the sentences in place, not copied
      for (const data::Pair& p : train_pairs) side.push_back(source ? p.source : p.target);
      cut.learn(side, source ? "source" : "target", out);
    }
    // Counted one sentence at a time: the whole corpus as token strings would be several
    // times the size of the ids it becomes.
    std::map<std::string, int64_t> src_counts, tgt_counts;
    for (const data::Pair& p : train_pairs) {
      for (const std::string& token : src_cut->encode(p.source)) ++src_counts[token];
      for (const std::string& token : tgt_cut->encode(p.target)) ++tgt_counts[token];
    }
    model = std::make_unique<Translator>(c, data::Vocab::from_counts(src_counts, s.min_freq),
                                         data::Vocab::from_counts(tgt_counts, s.min_freq), src_cut, tgt_cut);
  }
  Translator& t = *model;
  data::EncodedPairs& train = d.train;
  train = t.encode_pairs(train_pairs);
  data::EncodedPairs& valid = d.valid;
  valid = t.encode_pairs(valid_pairs);
  // --max-len N on a corpus (OpenNMT's src_seq_length, fairseq's skipped long pairs): training
  // pairs with a side longer than N tokens are dropped, not cut, and counted.
  if (a.given("max-len") && a.given("train")) {
    const int64_t longest = a.integer("max-len", 1, 1000000);
    const size_t before = train.size();
    size_t kept = 0;
    for (size_t i = 0; i < before; ++i) {
      // (A language model reads no source: its target alone counts.)
      if ((s.translates && static_cast<int64_t>(train.src[i].size()) > longest) ||
          static_cast<int64_t>(train.tgt[i].size()) > longest)
        continue;
      train.src[kept] = std::move(train.src[i]);
      train.tgt[kept] = std::move(train.tgt[i]);
      train_pairs[kept] = std::move(train_pairs[i]);
      ++kept;
    }
    train.src.resize(kept);
    train.tgt.resize(kept);
    train_pairs.resize(kept);
    out << "note: --max-len " << longest << " dropped " << before - kept << " of " << before
        << " training pairs, those with a side longer than " << longest << " tokens\n";
    check(kept > 0, "seqgrad train: --max-len ", longest, " drops every training pair; give a larger --max-len");
  }
  // Sentences longer than the model handles (--max-decode) are cut, in validation too: a
  // Transformer has positions, and the location score weights, for no more. Said, with how many.
  const auto count_cut = [&](const std::vector<data::Pair>& pairs, const data::EncodedPairs& encoded) {
    int64_t cut = 0;
    for (size_t i = 0; i < pairs.size(); ++i)
      cut += (s.translates && t.source_is_cut(pairs[i].source)) || static_cast<int64_t>(encoded.tgt[i].size()) > c.max_len;
    return cut;
  };
  const int64_t train_cut = count_cut(train_pairs, train), valid_cut = count_cut(valid_pairs, valid);
  if (train_cut + valid_cut > 0)
    out << "note: " << train_cut << " of " << train_pairs.size() << " training and " << valid_cut << " of "
        << valid_pairs.size() << " validation pairs have a side longer than --max-decode " << c.max_len
        << " tokens; its first " << c.max_len << " are kept (a larger --max-decode keeps more)\n";
  for (data::EncodedPairs* pairs : {&train, &valid})
    for (auto* side : {&pairs->src, &pairs->tgt})
      for (auto& ids : *side)
        if (static_cast<int64_t>(ids.size()) > c.max_len) ids.resize(c.max_len);
  std::vector<int64_t>& lengths = d.lengths;
  for (const auto& ids : train.src) lengths.push_back(std::max<int64_t>(1, static_cast<int64_t>(ids.size())));
  for (const auto& ids : train.tgt) d.tgt_lengths.push_back(static_cast<int64_t>(ids.size()));
  for (auto& ids : train.src)
    if (ids.empty()) ids.push_back(data::Vocab::kUnk);
  out << train.size() << " training pairs, " << valid.size() << " validation pairs; vocabularies " << t.src_vocab.size()
      << " / " << t.tgt_vocab.size() << "; " << c.model << " with " << t.module().num_parameters() << " parameters"
      << (s.init_from.empty() || s.resuming ? "" : ", from '" + s.init_from + "'") << "\n";
  if (!s.init_from.empty() && !s.resuming) {  // new data meets a fixed vocabulary: how much of it is <unk>
    int64_t tokens = 0, unknown = 0;
    for (const auto* side : {&train.src, &train.tgt})
      for (const auto& ids : *side)
        for (const int64_t id : ids) tokens += 1, unknown += id == data::Vocab::kUnk;
    out << "note: " << std::fixed << std::setprecision(1) << 100.0 * static_cast<double>(unknown) / std::max<int64_t>(tokens, 1)
        << "% of the training tokens are not in the model's vocabularies (read as <unk>)\n" << std::defaultfloat;
  }

  // A language model translates nothing: its validation is the loss (and perplexity) alone.
  if (s.translates)
    d.probe_pairs.assign(valid_pairs.begin(), valid_pairs.begin() + std::min<std::ptrdiff_t>(500, valid_pairs.size()));
  if (s.translates && valid_pairs.size() > d.probe_pairs.size())
    out << "note: each epoch's exact_match and edits_per_token are over the first " << d.probe_pairs.size() << " of the "
        << valid_pairs.size() << " validation pairs (valid_loss over all; seqgrad eval scores them all)\n";
  // --batch-tokens must hold the largest pair: checked here, before the run opens any output.
  int64_t largest = 0;  // positions of the largest pair: its longer side, with the target's <bos>
  for (size_t k = 0; k < d.lengths.size(); ++k) largest = std::max({largest, d.lengths[k], d.tgt_lengths[k] + 1});
  check(s.batch_tokens == 0 || s.batch_tokens >= largest, "seqgrad train: --batch-tokens ", s.batch_tokens, " is smaller "
        "than the longest training pair, which takes ", largest, " positions (its longer side, source or target + 1); "
        "give at least ", largest);
  return d;
}

// ================================================================================================
// The training loop, in stages. A TrainingRun holds what a run needs besides the model (the
// optimizer, the schedule, its clock, the Ctrl-C handler) and run() is the loop, which reads as
// the stages it calls:
//   step       one optimizer step: the gradients of --accumulate batches, clipped and applied,
//              and the --loss-log line
//   validate   the loss over the validation pairs, and how well the first 500 translate
//   consider   whether a validation beats the best so far (--best-by): then --out is saved
//   end_epoch  the epoch's line, the loss curve's points, --keep-last
// It stops at the end of --epochs, at --minutes, when --patience runs out, or on a signal.

// --optimizer and --schedule, found by name (nn/optim/optim.h, nn/optim/schedule.h). A schedule may be
// none (constant). The Noam schedule's d_model is the model's width (EncoderDecoder::width).
std::unique_ptr<nn::LRScheduler> make_schedule(const Settings& s, const Translator& t, nn::Optimizer& opt,
                                               int64_t warmup_steps, int64_t total_steps) {
  nn::ScheduleContext run;
  run.warmup_steps = warmup_steps;
  run.total_steps = total_steps;
  run.d_model = t.model().width();
  run.options = s.schedule_settings;
  return nn::make_schedule(s.schedule, opt, run);
}

// Where a resume file goes when it cannot go beside --out: the temporary folder ($TMPDIR, or
// /tmp), under a name of this process ("m.12345.resume.safetensors" for m.safetensors).
std::string fallback_resume_path(const std::string& out_path) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string stem = std::filesystem::path(out_path).stem().string();
  return cat(tmp && *tmp ? tmp : "/tmp", "/", stem, ".", getpid(), ".resume.safetensors");
}

// The target tokens of a batch: for the progress bar's tokens per second, and the shards' weights.
int64_t target_tokens(const data::Batch& b) {
  int64_t tokens = 0;
  for (int64_t n : b.tgt_lengths) tokens += n;
  return tokens;
}

class TrainingRun {
 public:
  // Builds the optimizer and the schedule (and, resuming, reads their state back).
  TrainingRun(Settings& s, Data& d, io::LogFile& loss_log, std::ostream& out);
  // Trains from where `s.progress` stands to the end of --epochs (or --minutes), saving the
  // best checkpoint. Returns 0, or 128 + the signal that stopped it (after saving a resume file).
  int run();
  bool out_of_time() const { return out_of_time_; }

 private:
  // Where an epoch stands: its number (1, 2, ...), its batches, how many are done, their losses' sum.
  struct Epoch {
    int64_t number;
    std::vector<std::vector<size_t>> batches;
    int64_t step;
    double total;
    int64_t size() const { return static_cast<int64_t>(batches.size()); }
    bool done() const { return step >= size(); }
  };
  struct Validation {
    double loss;
    Scores scores;
  };

  std::vector<std::vector<size_t>> epoch_batches(int64_t epoch) const;
  void resume();
  // The stages.
  void step(Epoch& e, viz::ProgressBar& bar);
  void log_step(const Epoch& e, int64_t group, double group_loss);
  bool validate_within(const Epoch& e, viz::ProgressBar& bar);
  Validation validate();
  bool consider(const Validation& v, int64_t epoch, int64_t step, double total);
  void end_epoch(const Epoch& e);
  void report(const Epoch& e, const Validation& v);
  void keep_last(int64_t epoch);
  void say_why_stopped();
  // What the stages share.
  std::pair<real, int64_t> train_batch(const std::vector<size_t>& rows, int64_t group, int64_t number);
  std::pair<real, int64_t> train_on_shards(const std::vector<size_t>& rows, real scale, int64_t number);
  std::string save_resume_file_at(const std::string& path, int64_t epoch, int64_t step, double total);
  std::string save_resume_file(int64_t epoch, int64_t step, double total);
  void save_best(int64_t epoch, int64_t step, double total);
  int stop_here(const Epoch& e, viz::ProgressBar& bar);
  void stop_if_diverged(real l, int64_t epoch, int64_t step) const;
  bool out_of_patience() const { return s.patience > 0 && progress.bad_validations >= s.patience; }
  double elapsed_minutes() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() / 60;
  }

  Settings& s;
  Data& d;
  Translator& t;
  TrainProgress& progress;
  io::LogFile& loss_log;
  std::ostream& out;
  const std::vector<Variable> parameters;
  int64_t batches_per_epoch = 0;
  std::unique_ptr<nn::Optimizer> optimizer;
  std::unique_ptr<nn::LRScheduler> schedule;
  std::chrono::steady_clock::time_point start_;
  // Ctrl-C, SIGTERM or SIGHUP: finish the step, save what --resume needs, and stop with the
  // shell's code for that signal (130, 143, 129).
  std::unique_ptr<InterruptHandler> interrupt;
  bool out_of_time_ = false;    // --minutes ran out
  bool stopped_early = false;   // --patience ran out
  std::string time_out_resume;  // where a run out of --minutes is saved to go on from
};

// By default Adam with the Transformer paper's betas, and a learning rate that ramps up
// linearly over the first 100 steps (or the first 10% of a short run) so the first large
// gradients do no damage.
TrainingRun::TrainingRun(Settings& settings, Data& data, io::LogFile& log, std::ostream& o)
    : s(settings), d(data), t(*data.translator), progress(settings.progress), loss_log(log), out(o),
      parameters(t.module().parameters()) {
  const auto first_batches = epoch_batches(1);
  batches_per_epoch = static_cast<int64_t>(first_batches.size());
  out << "batches: " << batches_per_epoch << " per epoch, " << std::fixed << std::setprecision(1)
      << 100 * data::padding_share(first_batches, d.lengths, d.tgt_lengths) << "% of their positions padding\n"
      << std::defaultfloat;
  optimizer = nn::make_optimizer(s.optimizer, parameters, s.lr, s.optimizer_settings);
  // With --accumulate N, an optimizer step takes N batches (the epoch's last step what is left).
  const int64_t steps_per_epoch = (batches_per_epoch + s.accumulate - 1) / s.accumulate;
  if (!s.resuming)
    progress.warmup_steps = s.warmup > 0 ? s.warmup : std::max<int64_t>(1, std::min<int64_t>(100, s.epochs * steps_per_epoch / 10));
  schedule = make_schedule(s, t, *optimizer, progress.warmup_steps, s.epochs * steps_per_epoch);
  if (s.resuming) resume();
  start_ = std::chrono::steady_clock::now();
  interrupt = std::make_unique<InterruptHandler>();
}

// One epoch's batches: --batch pairs bucketed by source length, or --batch-tokens. Either way
// every epoch has as many (data/batch.h), which the schedule and --resume count on.
std::vector<std::vector<size_t>> TrainingRun::epoch_batches(int64_t epoch) const {
  const uint64_t seed = s.seed + static_cast<uint64_t>(epoch);
  return s.batch_tokens == 0 ? data::make_batches(d.lengths, s.batch, seed)
                             : data::make_token_batches(d.lengths, d.tgt_lengths, s.batch_tokens, s.batch_cap, seed);
}

// The optimizer's buffers and the random generator, from the resume file. Where the file says
// the run stopped must fit this run's data (the same data, rebuilt from the saved flags): a step
// past the epoch's batches, or more optimizer steps than the batches before it, means the file
// was edited or belongs to another run.
void TrainingRun::resume() {
  nn::Optimizer& opt = *optimizer;
  resume_optimizer_and_rng(s.resume_from, opt, t);
  check_state(progress.step <= batches_per_epoch, "seqgrad train: '", s.resume_from, "': the training state's 'step' (",
              progress.step, ") is past the ", batches_per_epoch, " batches of an epoch");
  // (The optimizer saves its step as a float32: past 2^24 steps it is rounded, the bound too.)
  const int64_t batches_before = (progress.epoch - 1) * batches_per_epoch + progress.step;
  check_state(opt.steps_taken() <= static_cast<int64_t>(static_cast<float>(batches_before)), "seqgrad train: '",
              s.resume_from, "': the optimizer has taken ", opt.steps_taken(), " steps, but the run had trained only ",
              batches_before, " batches");
  if (schedule) schedule->set_step(opt.steps_taken());
  out << "resuming at epoch " << progress.epoch << ", step " << progress.step << " of " << batches_per_epoch << "\n";
}

// ------------------------------------------------------------------------------------------------
// The loop

int TrainingRun::run() {
  for (int64_t epoch = progress.epoch; epoch <= s.epochs && !out_of_time_ && !stopped_early; ++epoch) {
    viz::ProgressBar bar(batches_per_epoch, "epoch " + std::to_string(epoch), out);
    const bool continued = epoch == progress.epoch;  // a resumed epoch starts where it stopped
    Epoch e{epoch, epoch_batches(epoch), continued ? progress.step : 0, continued ? progress.epoch_loss : 0};
    while (!e.done()) {
      if (interrupt->requested()) return stop_here(e, bar);
      step(e, bar);
      if (validate_within(e, bar)) break;  // --patience ran out
      if (s.minutes > 0 && elapsed_minutes() >= s.minutes) {
        out_of_time_ = true;
        break;
      }
    }
    if (interrupt->requested()) return stop_here(e, bar);
    bar.finish();
    if (stopped_early) break;
    end_epoch(e);
  }
  say_why_stopped();
  return 0;
}

// ------------------------------------------------------------------------------------------------
// Stage 1: a step

void TrainingRun::step(Epoch& e, viz::ProgressBar& bar) {
  nn::Optimizer& opt = *optimizer;
  // [docs:train_step]
  // One optimizer step: the gradients of the next --accumulate batches, summed (each loss
  // divided by their number, so the step is that of their mean), then clipped and applied.
  const int64_t group = std::min(s.accumulate, e.size() - e.step);
  opt.zero_grad();
  double group_loss = 0;
  for (int64_t k = 0; k < group; ++k) {
    const std::vector<size_t>& rows = e.batches[static_cast<size_t>(e.step)];
    const auto [l, tokens] = train_batch(rows, group, (e.number - 1) * batches_per_epoch + e.step);
    e.total += l;
    group_loss += l;
    bar.update(++e.step, {{"loss", l}}, tokens);
    stop_if_diverged(l, e.number, e.step);
  }
  if (s.clip > 0) nn::clip_grad_norm(parameters, s.clip);
  opt.step();
  if (schedule) schedule->step();
  // [docs:end]
  log_step(e, group, group_loss);
}

// One batch's forward and backward: its loss, whose gradient divided by `group` (the batches in
// the step) is added to the parameters' .grad, and its target tokens. `number` counts batches
// from the run's start (the shards' random streams are drawn from it).
std::pair<real, int64_t> TrainingRun::train_batch(const std::vector<size_t>& rows, int64_t group, int64_t number) {
  if (s.replicas > 1) return train_on_shards(rows, real(1) / static_cast<real>(group), number);
  const data::Batch b = d.train.batch(rows);
  Variable loss = t.loss(b, s.smoothing);
  if (group > 1) (loss * (real(1) / static_cast<real>(group))).backward();
  else loss.backward();
  return {loss.item(), target_tokens(b)};
}

// --replicas R > 1: one batch (its pairs' indices) cut into R fixed shards (nn/optim/data_parallel.h),
// each run forward and backward on its own thread. Returns the batch's loss, whose gradient
// times `scale` is added to the parameters' .grad, and its target tokens. Shard k's loss, a mean
// over its own target tokens, is weighted by its share of the batch's tokens, so that the
// weighted sum is the batch's loss and its gradient the batch's gradient. Its random draws come
// from a stream of the run's seed and the batch's number in the run.
std::pair<real, int64_t> TrainingRun::train_on_shards(const std::vector<size_t>& rows, real scale, int64_t number) {
  const int64_t n = static_cast<int64_t>(rows.size()), shards = std::min(s.replicas, n);
  std::vector<data::Batch> parts;
  std::vector<int64_t> tokens;
  int64_t total = 0;
  for (int64_t k = 0; k < shards; ++k) {
    const auto [begin, end] = nn::shard_range(n, shards, k);
    parts.push_back(d.train.batch(std::vector<size_t>(rows.begin() + begin, rows.begin() + end)));
    tokens.push_back(target_tokens(parts.back()));
    total += tokens.back();
  }
  auto share = [&](int64_t k) { return static_cast<real>(tokens[static_cast<size_t>(k)]) / static_cast<real>(total); };
  std::vector<real> losses(static_cast<size_t>(shards));  // each shard's own mean
  nn::data_parallel_backward(parameters, shards, nn::shard_seed(s.seed, static_cast<uint64_t>(number)), [&](int64_t k) {
    const Variable loss = t.loss(parts[static_cast<size_t>(k)], s.smoothing);
    losses[static_cast<size_t>(k)] = loss.item();
    return loss * (share(k) * scale);
  });
  real loss = 0;  // the batch's: sum_k share_k loss_k
  for (int64_t k = 0; k < shards; ++k) loss += share(k) * losses[static_cast<size_t>(k)];
  return {loss, total};
}

// A loss that is not a number will not become one again: stop, and say where and why, before a
// NaN model is validated or saved (the last checkpoint saved stays as it was).
void TrainingRun::stop_if_diverged(real l, int64_t epoch, int64_t step) const {
  if (std::isfinite(l)) return;
  std::error_code ec;
  const std::string kept = std::filesystem::exists(s.out_path, ec) ? cat("the last checkpoint, '", s.out_path, "', is kept")
                                                                   : std::string("no checkpoint was saved");
  check_state(false, "seqgrad train: the loss became ", std::isnan(l) ? "NaN" : l > 0 ? "inf" : "-inf", " at step ",
              step, " of epoch ", epoch, ": the run diverged, and ", kept, ". Try --clip 1, a lower --lr (this run: ",
              s.lr, "), or --detect-anomaly to find the op that first made a NaN or an infinity");
}

// --loss-log: a line per optimizer step (epoch, step, the mean loss of its batches). Hours of
// training are not lost to a full log disk: the run is saved, then the error says so.
void TrainingRun::log_step(const Epoch& e, int64_t group, double group_loss) {
  if (!loss_log.is_open()) return;
  std::ostringstream line;
  line << std::setprecision(std::numeric_limits<real>::max_digits10) << e.number << ' ' << optimizer->steps_taken() << ' '
       << (group > 1 ? group_loss / static_cast<double>(group) : group_loss) << '\n';
  if (loss_log.write(line.str())) return;
  const std::string reason = errno ? std::strerror(errno) : "write error";
  const std::string path = save_resume_file(e.number, e.step, e.total);
  check_state(false, "seqgrad train: cannot write --loss-log '", s.args.text("loss-log"), "': ", reason, "; saved ", path,
              " (continue with: seqgrad train --resume ", path, " --loss-log ANOTHER_FILE)");
}

// ------------------------------------------------------------------------------------------------
// Stage 2: validation, and the best checkpoint

// --valid-every N: a validation every N optimizer steps within an epoch (the epoch's last step
// validates in end_epoch). Returns true when --patience has run out.
bool TrainingRun::validate_within(const Epoch& e, viz::ProgressBar& bar) {
  const int64_t steps = optimizer->steps_taken();
  if (s.valid_every == 0 || steps % s.valid_every != 0 || e.done()) return false;
  const Validation v = validate();
  char line[160];
  if (s.translates)
    std::snprintf(line, sizeof line, "step %lld: valid_loss=%.4f exact_match=%.3f bleu=%.2f",
                  static_cast<long long>(steps), v.loss, v.scores.exact, v.scores.bleu);
  else
    std::snprintf(line, sizeof line, "step %lld: valid_loss=%.4f valid_ppl=%.2f", static_cast<long long>(steps), v.loss,
                  std::exp(v.loss));
  bar.print(line);
  if (consider(v, e.number, e.step, e.total)) bar.print("saved " + s.out_path);
  stopped_early = out_of_patience();
  return stopped_early;
}

// The loss over every validation pair, and how well the first 500 translate.
TrainingRun::Validation TrainingRun::validate() {
  const double vloss = mean_loss(t, d.valid);
  const Scores scores = s.translates ? score(t, d.probe_pairs, 1) : Scores{};
  t.module().train();
  return Validation{vloss, scores};
}

// Does it beat the best so far by --best-by? If so it is the new best and the checkpoint is
// saved (a run that cannot save stops with save_best's error, its resume file at `epoch`,
// `step`) and the answer is true; if not, one more validation counts against --patience.
bool TrainingRun::consider(const Validation& v, int64_t epoch, int64_t step, double total) {
  const double value = s.best_by == "loss" ? v.loss : s.best_by == "bleu" ? v.scores.bleu : v.scores.exact;
  const bool better = std::isnan(progress.best_score) ||
                      (s.best_by == "loss" ? value < progress.best_score : value > progress.best_score);
  if (!better) {
    ++progress.bad_validations;
    return false;
  }
  progress.best_score = value;
  progress.bad_validations = 0;
  save_best(epoch, step, total);
  return true;
}

// The checkpoint at --out. If it cannot be written after hours of training (the disk filled,
// the folder's permissions changed: everything was checked before the run, but not everything
// stays so), the run is not lost: it is saved as a resume file (at `epoch`, `step`), beside
// --out or else in the temporary folder, with the model in it too (translate and eval read a
// resume file). Then the error says where it went.
void TrainingRun::save_best(int64_t epoch, int64_t step, double total) {
  try {
    t.save(s.out_path);
    return;
  } catch (const std::exception& e) {
    std::string kept;
    for (const std::string& path : {resume_path_for(s.out_path), fallback_resume_path(s.out_path)}) {
      try {
        kept = save_resume_file_at(path, epoch, step, total);
        break;
      } catch (const std::exception&) {
        // (the next place, or the error below)
      }
    }
    if (kept.empty())
      throw std::runtime_error(cat("seqgrad train: cannot save '", s.out_path, "': ", e.what(), "; nor the run's "
                                   "resume file, beside it or in ", fallback_resume_path(s.out_path)));
    throw std::runtime_error(cat("seqgrad train: cannot save '", s.out_path, "': ", e.what(), "; the run at epoch ",
                                 epoch, ", step ", step, " is saved in '", kept, "' (the model too: translate and eval "
                                 "read it); continue with: seqgrad train --resume ", kept, " --out ANOTHER_FILE"));
  }
}

// ------------------------------------------------------------------------------------------------
// Stage 3: the end of an epoch

void TrainingRun::end_epoch(const Epoch& e) {
  // Out of time in the middle of an epoch: the run is saved where it stands, before the
  // validation below, so that --resume goes on from this step exactly (a run out of time at
  // an epoch's end is saved after its bookkeeping, below).
  const bool stopped_mid_epoch = out_of_time_ && !e.done();
  if (stopped_mid_epoch) time_out_resume = save_resume_file(e.number, e.step, e.total);
  const Validation v = validate();
  report(e, v);
  if (consider(v, e.number + 1, 0, 0)) out << "saved " << s.out_path << "\n";
  if (out_of_patience()) stopped_early = true;
  keep_last(e.number);
  progress.epoch = e.number + 1;
  progress.step = 0;
  progress.epoch_loss = 0;
  if (out_of_time_ && !stopped_mid_epoch && e.number < s.epochs) time_out_resume = save_resume_file(e.number + 1, 0, 0);
}

// The epoch's line, and its points on the loss curve (finish() draws them).
void TrainingRun::report(const Epoch& e, const Validation& v) {
  const double train_loss = e.total / static_cast<double>(std::max<int64_t>(e.step, 1));
  out << "epoch " << e.number << ": train_loss=" << std::fixed << std::setprecision(4) << train_loss
      << " valid_loss=" << v.loss;
  if (s.translates)
    out << " exact_match=" << std::setprecision(3) << v.scores.exact << " edits_per_token=" << v.scores.edits_per_token;
  else  // a language model: perplexity, exp(loss), the number of tokens it is as unsure as choosing among
    out << " valid_ppl=" << std::setprecision(2) << std::exp(v.loss);
  out << (out_of_time_ ? " (time budget reached)" : "") << "\n" << std::defaultfloat;
  progress.epochs.push_back(static_cast<double>(e.number));
  progress.train_loss.push_back(train_loss);
  progress.valid_loss.push_back(v.loss);
  progress.exact_match.push_back(v.scores.exact);
  progress.best_valid = std::min(progress.best_valid, v.loss);
}

// --keep-last K: this epoch's model too, and the file K epochs older goes.
void TrainingRun::keep_last(int64_t epoch) {
  if (s.keep_last == 0) return;
  t.save(epoch_path_for(s.out_path, epoch));
  out << "saved " << epoch_path_for(s.out_path, epoch) << "\n";
  if (epoch > s.keep_last && std::remove(epoch_path_for(s.out_path, epoch - s.keep_last).c_str()) == 0)
    out << "removed " << epoch_path_for(s.out_path, epoch - s.keep_last) << "\n";
}

void TrainingRun::say_why_stopped() {
  if (stopped_early)
    out << "stopping early: the best " << s.best_by << " (" << progress.best_score << ") has not been beaten in "
        << s.patience << " validations (--patience " << s.patience << ")\n";
  if (!time_out_resume.empty())
    out << "out of time; saved " << time_out_resume << "\ncontinue with: seqgrad train --resume " << time_out_resume
        << " [--minutes M]\n";
}

// ------------------------------------------------------------------------------------------------
// Stopping on a signal: the resume file

// Where the run stands (epoch, step, loss so far), saved as a resume file at `path`. It is
// saved before anything is printed: a terminal that has gone (SIGHUP) or a `| tee` killed by
// the same Ctrl-C must not stop the save.
std::string TrainingRun::save_resume_file_at(const std::string& path, int64_t epoch, int64_t step, double total) {
  progress.epoch = epoch;
  progress.step = step;
  progress.epoch_loss = total;
  save_resume_checkpoint(path, t, *optimizer, progress);
  return path;
}

std::string TrainingRun::save_resume_file(int64_t epoch, int64_t step, double total) {
  return save_resume_file_at(resume_path_for(s.out_path), epoch, step, total);
}

int TrainingRun::stop_here(const Epoch& e, viz::ProgressBar& bar) {
  const std::string path = save_resume_file(e.number, e.step, e.total);
  bar.finish();
  out << "interrupted by " << interrupt->name() << " after step " << e.step << " of epoch " << e.number << "; saved "
      << path << "\ncontinue with: seqgrad train --resume " << path << "\n";
  return 128 + interrupt->signal();
}

// ================================================================================================
// Saving what is left: the loss plot; the resume file of a finished run goes

void finish(const Settings& s, bool out_of_time, std::ostream& out) {
  const TrainProgress& progress = s.progress;
  // Two panels, each on its own axis: a loss near 0 on a log scale above, the exact match on
  // [0, 1] below (on one axis, a loss of 0.01 was a flat line under an exact match of 1).
  viz::LinePlot losses("Training: loss per epoch", "epoch", "cross-entropy (nats per token)");
  losses.add_series("train loss", progress.epochs, progress.train_loss)
      .add_series("valid loss", progress.epochs, progress.valid_loss)
      .set_log_y(true)
      .set_size(720, 340);
  viz::LinePlot match("Validation: exact match per epoch", "epoch", "fraction of sentences");
  match.add_series("valid exact match", progress.epochs, progress.exact_match).set_size(720, 300);
  io::write_file_atomic(svg_path_for(s.out_path), viz::stack_vertically({losses.to_svg(), match.to_svg()}),
                        "seqgrad train: the loss plot");
  out << "wrote " << svg_path_for(s.out_path) << "\n";
  // The run is finished: its resume file would only train it again (and repeat loss-log lines).
  // (A run stopped by --minutes is not finished: it can still be resumed from the same file.)
  if (s.resuming && !out_of_time && s.resume_from == resume_path_for(s.out_path) && std::remove(s.resume_from.c_str()) == 0)
    out << "removed " << s.resume_from << " (the run is finished)\n";
}

}  // namespace

std::string svg_path_for(const std::string& checkpoint) { return io::sibling_path(checkpoint, ".training.svg"); }
std::string epoch_path_for(const std::string& checkpoint, int64_t epoch) {
  return io::sibling_path(checkpoint, ".epoch" + std::to_string(epoch) + ".safetensors");
}

int cmd_train(const std::vector<std::string>& words, std::ostream& out) {
  Args given = train_flags();
  given.parse(words);
  if (given.help_requested()) return out << given.help(), 0;
  check(given.positional().empty(), "seqgrad train: unexpected argument '",
        given.positional().empty() ? "" : given.positional()[0], "'");
  if (given.given("model"))
    out << "note: seqgrad train's --model is now --arch (the architecture); --model names a checkpoint in translate, "
           "eval and attention, and in train it is taken until the next release\n";
  Settings s = configure(given);
  if (s.threads > 0) set_num_threads(static_cast<int>(s.threads));
  const MatmulPrecisionScope precision(s.precision);  // this thread's products (the pool's threads are told per product)
  const DetectAnomalyGuard anomaly(s.args.on("detect-anomaly"));
  manual_seed(s.seed);
  Data d = load_data(s, out);
  // Opened (and truncated) only now, when every flag and every input has been checked.
  io::LogFile loss_log;
  if (s.args.given("loss-log")) loss_log.open(s.args.text("loss-log"), s.resuming, "seqgrad train: cannot write --loss-log");
  TrainingRun run(s, d, loss_log, out);
  if (const int code = run.run()) return code;
  finish(s, run.out_of_time(), out);
  return 0;
}

}  // namespace seqgrad::cli
