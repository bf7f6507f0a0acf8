// examples/seqgrad/resume.cpp - the resumable checkpoint, and Ctrl-C as a request to stop.
#include "examples/seqgrad/resume.h"

#include <cmath>
#include <filesystem>

#include "nn/checkpoint.h"
#include "nn/json.h"
#include "tensor/check.h"
#include "tensor/random.h"

namespace seqgrad::cli {

namespace {

constexpr const char* kStateKey = "seqgrad.train_state";
constexpr const char* kOptimizerPrefix = "optimizer.";

nn::Json numbers(const std::vector<double>& values) {
  nn::Json list = nn::Json::array();
  for (double v : values) list.push_back(v);
  return list;
}

std::vector<double> numbers_from(const nn::Json& list) {
  std::vector<double> values;
  for (const nn::Json& v : list.as_array()) values.push_back(v.as_double());
  return values;
}

// The state entry of a resumable checkpoint, or a message saying the file is not one.
nn::Json read_state(const std::string& path) {
  const std::map<std::string, std::string> meta = nn::read_metadata(path);
  const auto found = meta.find(kStateKey);
  check_state(found != meta.end(), "seqgrad train: '", path, "' has no training state to resume (no ", kStateKey,
              " in its metadata); --resume takes the .resume.safetensors file an interrupted run saved");
  return nn::parse_json(found->second);
}

}  // namespace

std::string resume_path_for(const std::string& checkpoint) {
  const std::filesystem::path p(checkpoint);
  return (p.parent_path() / (p.stem().string() + ".resume.safetensors")).string();
}

// ================================================================================================
// Writing and reading

void save_resume_checkpoint(const std::string& path, const Translator& t, nn::Optimizer& opt,
                            const TrainProgress& progress) {
  nn::NamedTensors tensors;
  for (const auto& [name, p] : t.module().named_parameters()) tensors.emplace_back(name, p.value());
  for (const auto& [name, b] : t.module().named_buffers()) tensors.emplace_back(name, b);
  for (const auto& [name, s] : opt.state_dict()) tensors.emplace_back(kOptimizerPrefix + name, s);

  nn::Json flags = nn::Json::object();
  for (const auto& [name, value] : progress.flags) flags.set(name, value);
  nn::Json state = nn::Json::object();
  state.set("flags", flags).set("epoch", progress.epoch).set("step", progress.step);
  state.set("epoch_loss", progress.epoch_loss).set("warmup_steps", progress.warmup_steps);
  // JSON has no infinity: no validation yet is written as null.
  state.set("best_valid", std::isfinite(progress.best_valid) ? nn::Json(progress.best_valid) : nn::Json());
  state.set("epochs", numbers(progress.epochs)).set("train_loss", numbers(progress.train_loss));
  state.set("valid_loss", numbers(progress.valid_loss)).set("exact_match", numbers(progress.exact_match));
  state.set("rng", default_generator().state());

  std::map<std::string, std::string> meta = t.metadata();
  meta[kStateKey] = state.dump();
  nn::write_safetensors(path, tensors, meta);
}

TrainProgress read_progress(const std::string& path) {
  const nn::Json state = read_state(path);
  auto get = [&](const char* key) -> const nn::Json& {
    const nn::Json* v = state.find(key);
    check_state(v != nullptr, "seqgrad train: '", path, "': the training state has no '", key, "'");
    return *v;
  };
  TrainProgress p;
  for (const auto& [name, value] : get("flags").as_object()) p.flags[name] = value.as_string();
  p.epoch = get("epoch").as_int64();
  p.step = get("step").as_int64();
  p.epoch_loss = get("epoch_loss").as_double();
  p.warmup_steps = get("warmup_steps").as_int64();
  if (!get("best_valid").is_null()) p.best_valid = get("best_valid").as_double();
  p.epochs = numbers_from(get("epochs"));
  p.train_loss = numbers_from(get("train_loss"));
  p.valid_loss = numbers_from(get("valid_loss"));
  p.exact_match = numbers_from(get("exact_match"));
  get("rng").as_string();  // checked now, used by resume_optimizer_and_rng
  return p;
}

void resume_optimizer_and_rng(const std::string& path, nn::Optimizer& opt) {
  nn::NamedTensors state;
  for (const auto& [name, t] : nn::read_safetensors(path).tensors)
    if (name.rfind(kOptimizerPrefix, 0) == 0) state.emplace_back(name.substr(std::string(kOptimizerPrefix).size()), t);
  opt.load_state_dict(state);
  default_generator().set_state(read_state(path).find("rng")->as_string());
}

// ================================================================================================
// Ctrl-C

namespace {
// A signal handler may only set a flag of this type (C++17 [support.signal]).
volatile std::sig_atomic_t interrupted = 0;
extern "C" void on_interrupt(int) { interrupted = 1; }
}  // namespace

InterruptHandler::InterruptHandler() {
  interrupted = 0;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // the first Ctrl-C asks; a second one ends the process at once
  sigaction(SIGINT, &action, &previous_);
}

InterruptHandler::~InterruptHandler() { sigaction(SIGINT, &previous_, nullptr); }

bool InterruptHandler::requested() const { return interrupted != 0; }

}  // namespace seqgrad::cli
