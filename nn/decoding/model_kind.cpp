// nn/decoding/model_kind.cpp - finding a model kind by name, and resolving the options it takes.
#include "nn/decoding/model_kind.h"

#include <map>
#include <mutex>
#include <set>

#include "nn/attention/attention.h"
#include "nn/recurrent/rnn.h"

namespace seqgrad::nn {

namespace {

const std::string kCell = "{cell}";

// `pattern` with "{cell}" replaced by `cell`.
std::string expand(const std::string& pattern, const std::string& cell) {
  const size_t at = pattern.find(kCell);
  return at == std::string::npos ? pattern : pattern.substr(0, at) + cell + pattern.substr(at + kCell.size());
}

// The "{cell}" kind and the cell that `name` stands for ("lstm-attn": "{cell}-attn" and "lstm"),
// or null for a name no "{cell}" kind makes.
const ModelKind* per_cell_kind(const std::string& name, std::string* cell) {
  for (const std::string& kind : model_kinds().names())
    if (kind.find(kCell) != std::string::npos)
      for (const std::string& c : cells().names())
        if (expand(kind, c) == name) {
          if (cell) *cell = c;
          return &model_kinds().get(kind);
        }
  return nullptr;
}

}  // namespace

Registry<ModelKind>& model_kinds() {
  static Registry<ModelKind> registry("model kind");
  return registry;
}

std::string ModelContext::cell() const {
  std::string c;
  per_cell_kind(name, &c);
  return c;
}

std::vector<std::string> model_names() {
  std::set<std::string> names;
  for (const std::string& kind : model_kinds().names()) {
    if (kind.find(kCell) == std::string::npos) names.insert(kind);
    else
      for (const std::string& c : cells().names()) names.insert(expand(kind, c));
  }
  return {names.begin(), names.end()};
}

const ModelKind& model_kind(const std::string& name) {
  if (const ModelKind* k = model_kinds().find(name)) return *k;
  std::string cell;
  if (const ModelKind* k = per_cell_kind(name, &cell)) {
    // The "{cell}" kind once more, its options function told the cell ("cell" in `chosen`), so
    // that it can take the cell's own options (cell_options). Made once per name, and kept.
    static std::mutex mutex;
    static std::map<std::string, ModelKind> made;
    const std::lock_guard<std::mutex> lock(mutex);
    const auto there = made.find(name);
    if (there != made.end()) return there->second;
    ModelKind for_cell = *k;
    for_cell.options = [options = k->options, cell](const Settings* chosen) {
      if (!chosen) return options(nullptr);
      Settings with_cell = *chosen;
      with_cell.set("cell", cell);
      return options(&with_cell);
    };
    return made.emplace(name, std::move(for_cell)).first->second;
  }
  throw std::invalid_argument(cat("expected a model named ", join_names(model_names()), ", got '", name, "'"));
}

Settings resolve_options(const ModelKind& kind, const std::function<io::Json(const Option&)>& value,
                         const std::function<std::string(const Option&)>& name_of, std::vector<Option>* taken) {
  Settings settings;
  std::vector<Option> options;
  // Options may depend on the values of others (a score brings its own): ask again with the
  // values so far until nothing new comes (each round adds at least one, so this ends).
  for (;;) {
    bool added = false;
    for (const Option& o : kind.options(&settings)) {
      if (settings.has(o.key)) continue;
      io::Json v = value(o);
      if (v.is_null()) v = o.default_json();
      std::string why;
      check_state(o.accepts(v, why), name_of(o), " must be ", why, ", got ", v.dump());
      settings.set(o.key, v);
      options.push_back(o);
      added = true;
    }
    if (!added) break;
  }
  if (kind.check) kind.check(settings);
  if (taken) *taken = options;
  return settings;
}

// ================================================================================================
// Shared options

Option layers_option() {
  return in_every_checkpoint(
      integer_option("layers", 2, 1, 12, "encoder (and Transformer and gnmt decoder) layers; gnmt: 2 or more"));
}
Option hidden_option() { return in_every_checkpoint(integer_option("hidden", 128, 1, 4096, "hidden size of recurrent models")); }
Option dim_option() {
  return in_every_checkpoint(integer_option("dim", 64, 1, 4096, "embedding size; the Transformer's model width"));
}
Option dropout_option() { return in_every_checkpoint(number_option("dropout", 0.1, 0, 0.9, "dropout probability")); }
Option bidirectional_option() {
  return in_every_checkpoint(
      switch_option("bidirectional", false, "bidirectional encoder (recurrent models; gnmt's bottom layer always is)"));
}
Option attention_option() {
  Option o = choice_option("attention", "general", [] { return scores().names(); },
                           "score function of -attn and gnmt models: " + join_names(scores().names(), ", "));
  o.from_registry = true;
  return in_every_checkpoint(o);
}

std::vector<Option> score_options(const Settings* chosen) { return chosen_options(scores(), "attention", chosen); }

std::vector<Option> cell_options(const Settings* chosen) { return chosen_options(cells(), "cell", chosen); }

}  // namespace seqgrad::nn
