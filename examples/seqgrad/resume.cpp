// examples/seqgrad/resume.cpp - the resumable checkpoint, and Ctrl-C as a request to stop.
#include "examples/seqgrad/resume.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "io/atomic_file.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "tensor/check.h"
#include "tensor/random.h"

namespace seqgrad::cli {

namespace {

io::Json numbers(const std::vector<double>& values) {
  io::Json list = io::Json::array();
  for (double v : values) list.push_back(v);
  return list;
}

// The state entry of a resumable checkpoint's metadata, or a message saying the file is not one.
const std::string& state_text(const std::map<std::string, std::string>& meta, const std::string& path) {
  const auto found = meta.find(kTrainStateKey);
  check_state(found != meta.end(), "seqgrad train: '", path, "' has no training state to resume (no ", kTrainStateKey,
              " in its metadata); --resume takes the .resume.safetensors file an interrupted run saved");
  return found->second;
}

io::Json parse_state(const std::string& text, const std::string& path) {
  try {
    return io::parse_json(text);
  } catch (const std::exception& e) {
    throw std::runtime_error(cat("seqgrad train: '", path, "': the training state is not valid JSON (", e.what(), ")"));
  }
}

// Reads the fields of the training state, each checked against the range a real run can write,
// so that an edited or damaged file is refused with the file and the field named (a step of -1
// once indexed the batch list; an optimizer step of 1e18 replayed the warm-up for ever).
class StateReader {
 public:
  StateReader(const std::string& path, const io::Json& state) : path_(path), state_(state) {}

  const io::Json& get(const char* key) const {
    const io::Json* v = state_.find(key);
    check_state(v != nullptr, "seqgrad train: '", path_, "': the training state has no '", key, "'");
    return *v;
  }
  // A whole number in [lo, hi].
  int64_t integer(const char* key, int64_t lo, int64_t hi) const {
    const io::Json& v = get(key);
    check_state(v.is_number() && v.is_integer() && v.as_int64() >= lo && v.as_int64() <= hi, "seqgrad train: '", path_,
                "': the training state's '", key, "' must be a whole number from ", lo, " to ", hi, ", got ", v.dump());
    return v.as_int64();
  }
  // A finite number >= 0 (losses and scores).
  double number(const char* key) const { return checked_number(get(key), key); }
  double checked_number(const io::Json& v, const char* key) const {
    check_state(v.is_number() && std::isfinite(v.as_double()) && v.as_double() >= 0, "seqgrad train: '", path_,
                "': the training state's '", key, "' must be a finite number >= 0, got ", v.dump());
    return v.as_double();
  }
  // A list of `n` finite numbers >= 0: one per finished epoch.
  std::vector<double> numbers(const char* key, int64_t n) const {
    const io::Json& list = get(key);
    check_state(list.is_array() && static_cast<int64_t>(list.as_array().size()) == n, "seqgrad train: '", path_,
                "': the training state's '", key, "' must list ", n, " numbers, one per finished epoch");
    std::vector<double> values;
    for (const io::Json& v : list.as_array()) values.push_back(checked_number(v, key));
    return values;
  }
  const std::string& text(const char* key) const {
    const io::Json& v = get(key);
    check_state(v.is_string(), "seqgrad train: '", path_, "': the training state's '", key, "' must be a string");
    return v.as_string();
  }

 private:
  const std::string& path_;
  const io::Json& state_;
};

}  // namespace

std::string resume_path_for(const std::string& checkpoint) { return io::sibling_path(checkpoint, ".resume.safetensors"); }

// ================================================================================================
// Writing and reading

void save_resume_checkpoint(const std::string& path, const Translator& t, nn::Optimizer& opt,
                            const TrainProgress& progress) {
  nn::NamedTensors tensors;
  for (const auto& [name, p] : t.module().named_parameters()) tensors.emplace_back(name, p.value());
  for (const auto& [name, b] : t.module().named_buffers()) tensors.emplace_back(name, b);
  for (const auto& [name, s] : opt.state_dict()) tensors.emplace_back(kOptimizerPrefix + name, s);

  io::Json flags = io::Json::object();
  for (const auto& [name, value] : progress.flags) flags.set(name, value);
  io::Json state = io::Json::object();
  state.set("flags", flags).set("epoch", progress.epoch).set("step", progress.step);
  state.set("epoch_loss", progress.epoch_loss).set("warmup_steps", progress.warmup_steps);
  // JSON has no infinity: no validation yet is written as null.
  state.set("best_valid", std::isfinite(progress.best_valid) ? io::Json(progress.best_valid) : io::Json());
  state.set("best_score", std::isfinite(progress.best_score) ? io::Json(progress.best_score) : io::Json());
  state.set("bad_validations", progress.bad_validations);
  state.set("epochs", numbers(progress.epochs)).set("train_loss", numbers(progress.train_loss));
  state.set("valid_loss", numbers(progress.valid_loss)).set("exact_match", numbers(progress.exact_match));
  if (!progress.corpora.empty()) {
    io::Json corpora = io::Json::object();
    for (const auto& [flag, fingerprint] : progress.corpora) corpora.set(flag, fingerprint);
    state.set("corpora", corpora);
  }
  state.set("rng", default_generator().state());
  // What the model's training needs besides its tensors (hard attention: its sampler and its
  // REINFORCE baseline), under the model kind's own key.
  if (const io::Json model_state = t.model().training_state(); !model_state.is_null()) state.set("model_state", model_state);

  std::map<std::string, std::string> meta = t.metadata();
  meta[kTrainStateKey] = state.dump();
  io::write_safetensors(path, tensors, meta);
}

TrainProgress read_progress(const std::string& path) {
  return parse_progress(state_text(io::read_metadata(path), path), path);
}

TrainProgress parse_progress(const std::string& text, const std::string& path) {
  const io::Json state = parse_state(text, path);
  check_state(state.is_object(), "seqgrad train: '", path, "': the training state must be a JSON object");
  const StateReader r(path, state);
  TrainProgress p;
  const io::Json& flags = r.get("flags");
  check_state(flags.is_object(), "seqgrad train: '", path, "': the training state's 'flags' must be an object");
  for (const auto& [name, value] : flags.as_object()) {
    check_state(value.is_string(), "seqgrad train: '", path, "': the saved flag '", name, "' must be a string");
    p.flags[name] = value.as_string();
  }
  p.epoch = r.integer("epoch", 1, kMaxEpochs);
  p.step = r.integer("step", 0, kMaxStepsPerEpoch);  // at most the epoch's batches: checked by seqgrad train
  p.epoch_loss = r.number("epoch_loss");
  p.warmup_steps = r.integer("warmup_steps", 1, kMaxWarmupSteps);
  if (!r.get("best_valid").is_null()) p.best_valid = r.number("best_valid");
  // One entry per finished epoch: 1, 2, ..., epoch - 1.
  p.epochs = r.numbers("epochs", p.epoch - 1);
  for (size_t k = 0; k < p.epochs.size(); ++k)
    check_state(p.epochs[k] == static_cast<double>(k + 1), "seqgrad train: '", path,
                "': the training state's 'epochs' must be 1, 2, ..., ", p.epoch - 1);
  p.train_loss = r.numbers("train_loss", p.epoch - 1);
  p.valid_loss = r.numbers("valid_loss", p.epoch - 1);
  p.exact_match = r.numbers("exact_match", p.epoch - 1);
  // What the fields say of each other: no loss before the epoch's first step (a loss can be
  // exactly 0 after it, when a model is sure and right), and the best validation loss is the
  // least of those recorded (none: no validation yet).
  check_state(p.step > 0 || p.epoch_loss == 0, "seqgrad train: '", path, "': the training state's 'epoch_loss' (",
              p.epoch_loss, ") must be 0 at 'step' 0: it is the sum of the losses of the epoch's steps so far");
  const double least = p.valid_loss.empty() ? std::numeric_limits<double>::infinity()
                                            : *std::min_element(p.valid_loss.begin(), p.valid_loss.end());
  check_state(p.best_valid == least, "seqgrad train: '", path, "': the training state's 'best_valid' must be the least ",
              "of its 'valid_loss' (", std::isinf(least) ? "null" : cat(least), ")");
  // (Absent from files saved before --best-by and --patience: those chose by the loss alone.)
  if (const io::Json* best = state.find("best_score"); best && !best->is_null()) p.best_score = r.number("best_score");
  else if (std::isfinite(p.best_valid)) p.best_score = p.best_valid;
  if (state.find("bad_validations")) p.bad_validations = r.integer("bad_validations", 0, kMaxStepsPerEpoch);
  if (const io::Json* corpora = state.find("corpora")) {  // (absent from files saved before it existed)
    check_state(corpora->is_object(), "seqgrad train: '", path, "': the training state's 'corpora' must be an object");
    for (const auto& [flag, fingerprint] : corpora->as_object()) {
      check_state(fingerprint.is_string(), "seqgrad train: '", path, "': the training state's 'corpora' entry '",
                  bounded(flag), "' must be a string");
      p.corpora[flag] = fingerprint.as_string();
    }
  }
  r.text("rng");  // checked now, used by resume_optimizer_and_rng
  return p;
}

void resume_optimizer_and_rng(const std::string& path, nn::Optimizer& opt, Translator& t) {
  const io::SafetensorsFile file = io::read_safetensors(path);  // tensors and metadata, one read
  nn::NamedTensors state;
  for (const auto& [name, t] : file.tensors)
    if (name.rfind(kOptimizerPrefix, 0) == 0) state.emplace_back(name.substr(std::string(kOptimizerPrefix).size()), t);
  try {
    opt.load_state_dict(state);
    const io::Json state = parse_state(state_text(file.metadata, path), path);
    default_generator().set_state(state.find("rng")->as_string());
    // (Files saved before "model_state" existed kept hard attention's under "hard_attention".)
    const io::Json* model_state = state.find("model_state");
    if (model_state == nullptr) model_state = state.find("hard_attention");
    if (!t.model().training_state().is_null()) {
      check_state(model_state != nullptr, "the training state has no 'model_state', where this '", t.config.model,
                  "' model keeps what its training needs besides its weights (hard attention: the sampler and "
                  "the REINFORCE baseline)");
      t.model().set_training_state(*model_state);
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(cat("seqgrad train: '", path, "': ", e.what()));
  }
}

// ================================================================================================
// Ctrl-C, SIGTERM, SIGHUP

namespace {
// A signal handler may only set a flag of this type (C++17 [support.signal]).
volatile std::sig_atomic_t stop_signal = 0;
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
// Which of the three this process handles: a signal the parent left ignored (`nohup` ignores
// SIGHUP, a shell's background job SIGINT) stays ignored, as POSIX tools leave it, so closing
// the terminal does not stop a run started under nohup.
volatile std::sig_atomic_t handled[3] = {0, 0, 0};
// The first of the handled signals asks to stop; from then on any of them ends the process at
// once (their default action). sigaction is async-signal-safe: a handler may call it.
extern "C" void on_stop_signal(int signo) {
  if (stop_signal == 0) stop_signal = signo;
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  for (size_t k = 0; k < std::size(kStopSignals); ++k)
    if (handled[k]) sigaction(kStopSignals[k], &fallback, nullptr);
}
}  // namespace

InterruptHandler::InterruptHandler() {
  stop_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (size_t k = 0; k < std::size(kStopSignals); ++k) {
    sigaction(kStopSignals[k], nullptr, &previous_[k]);
    handled[k] = previous_[k].sa_handler != SIG_IGN;
    if (handled[k]) sigaction(kStopSignals[k], &action, nullptr);
  }
  // A progress line written to a reader that has gone (a `| tee` that the same Ctrl-C ended)
  // must not end the run before it saves: the write fails instead (and is reported at the end).
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &previous_pipe_);
}

InterruptHandler::~InterruptHandler() {
  for (size_t k = 0; k < std::size(kStopSignals); ++k) sigaction(kStopSignals[k], &previous_[k], nullptr);
  sigaction(SIGPIPE, &previous_pipe_, nullptr);
}

bool InterruptHandler::requested() const { return stop_signal != 0; }

int InterruptHandler::signal() const { return stop_signal; }

const char* InterruptHandler::name() const {
  switch (stop_signal) {
    case SIGINT: return "Ctrl-C (SIGINT)";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "no signal";
  }
}

}  // namespace seqgrad::cli
