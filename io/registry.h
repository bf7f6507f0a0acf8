// io/registry.h - components found by name, and the options they take: the machinery under
// every registry (nn/core/registry.h lists the model's: scores, cells, encodings, model kinds,
// optimizers, schedules; data/tasks.h the toy tasks).
//
// A registry maps a name ("general", "lstm", "adam", "reverse") to an entry that can build the
// component. A component joins its registry from its own file, with one line at namespace scope:
//   SEQGRAD_REGISTER_SCORE(LowRankScore, "lowrank", "q^T U V^T k, a rank-r bilinear form", {rank_option});
// The line runs before main() (a static object's initialiser), so whatever is linked in is
// there by the time anything asks for it. That is why the Makefile links libseqgrad.a whole
// (--whole-archive): a linker takes only the objects of an archive that something names, and
// nothing names a component that is found by name alone. A student's file given to
// `make seqgrad EXTRA=file.cpp` is linked as it is, and registers itself the same way.
// Everything that lists choices (the tool's --help, its errors, a checkpoint's check) asks the
// registry, so a new name needs no list, enum or parse function edited anywhere else.
//
// A component may take options of its own (a low-rank score's rank): it declares each as an
// Option, which the tool turns into a flag (--rank) and the checkpoint's configuration keeps
// ("rank": 16); the component reads its value from the Settings it is built with. This is
// configuration read from flags and files, which is why it lives in io/: below nn/ and data/,
// both of which keep registries.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/json.h"
#include "tensor/check.h"

namespace seqgrad {

// ================================================================================================
// Options a component takes, and their values

// One option: its key in a checkpoint's configuration ("window_size"), the tool's flag for it
// (--window), what it does, its default and the values it may take.
struct Option {
  enum class Type { Integer, Number, Switch, Choice };
  std::string key;            // the configuration's key: "rank"
  std::string flag;           // the tool's flag, without dashes: "rank" (the key, '_' as '-', if empty)
  Type type = Type::Integer;
  std::string default_value;  // as the flag would be written: "16", "0.1", "false", "general"
  std::string help;
  double lo = 0, hi = 0;      // Integer and Number: the range, ends included
  // Choice: the names allowed (often a registry's: [] { return scores().names(); }).
  std::function<std::vector<std::string>()> choices;
  // Switch: the flag turns the option off (--no-residual sets "residual" to false).
  bool flag_turns_off = false;
  // Choice: the names are those of a registry (scores, positional encodings), which a file of
  // one's own can add to; a checkpoint naming one this program lacks says how to build it in.
  bool from_registry = false;
  // Every checkpoint has written this option since the first format: a configuration without
  // it is damaged, not old (an option added later takes its default when a file has none).
  bool in_every_checkpoint = false;

  std::string flag_name() const;
  // The default as a configuration value: 16, 0.1, false, "general".
  io::Json default_json() const;
  // Whether `value` is one this option may take; if not, `why` says what it must be.
  bool accepts(const io::Json& value, std::string& why) const;
};

// Shorthands for declaring options.
Option integer_option(std::string key, int64_t default_value, int64_t lo, int64_t hi, std::string help);
Option number_option(std::string key, double default_value, double lo, double hi, std::string help);
Option switch_option(std::string key, bool default_value, std::string help);
Option choice_option(std::string key, std::string default_value, std::function<std::vector<std::string>()> choices,
                     std::string help);
// `o`, marked as an option every checkpoint holds (Option::in_every_checkpoint).
Option in_every_checkpoint(Option o);

// The values of the options a component was built with: a JSON object, key -> value, checked
// against the options' declarations before a component sees it.
class Settings {
 public:
  Settings() = default;
  explicit Settings(io::Json values);
  Settings& set(const std::string& key, io::Json value);
  bool has(const std::string& key) const { return values_.find(key) != nullptr; }
  int64_t integer(const std::string& key) const;
  double number(const std::string& key) const;
  bool on(const std::string& key) const;
  std::string text(const std::string& key) const;
  const io::Json& json() const { return values_; }

 private:
  const io::Json& get(const std::string& key) const;
  io::Json values_ = io::Json::object();
};

// The complete settings of a component that takes `options`: each option's value from `given`
// (its default where `given` has none), checked against its declaration. A key in `given` that
// no option has is an error too. `who` names the component in the messages: "the optimizer
// sgd's momentum must be a number from 0 to 1, got 2".
Settings complete_settings(const std::vector<Option>& options, const Settings& given, const std::string& who);
// `settings` with each of `options` it lacks set to its default, and the other keys kept: a
// score, a cell or an encoding reads its own options from the settings of the model it is in.
Settings with_defaults(const std::vector<Option>& options, Settings settings);

// ================================================================================================
// The registry

// "a, b or c" (or "a, b and c"), for messages and help.
std::string join_names(const std::vector<std::string>& names, const char* last = " or ");

// What went wrong while the registering lines ran, before main(): a name registered twice, say
// (SEQGRAD_REGISTER below). An exception there could not be caught and would abort the program,
// so each problem is written here instead, one line each, and the seqgrad tool refuses to start
// with them (exit 2). Empty when all went well.
std::vector<std::string>& registration_problems();

// "a" or "an", for "a recurrent cell", "an attention score".
const char* article(const std::string& noun);

// Entry: a struct with at least `std::string name, help;`.
template <class Entry>
class Registry {
 public:
  // what: the kind of thing, for messages ("attention score", "recurrent cell").
  explicit Registry(std::string what) : what_(std::move(what)) {}

  // Adds an entry; a name can be registered once. `file` is where the registering line is
  // (SEQGRAD_REGISTER passes __FILE__), for the message a second registration gets. Returns
  // true (for the registering line).
  bool add(Entry entry, const std::string& file = "") {
    check(!entry.name.empty(), "Registry: ", article(what_), " ", what_, " needs a name");
    if (const auto there = files_.find(entry.name); there != files_.end()) {
      auto in = [](const std::string& f) { return f.empty() ? std::string("(a file not named)") : f; };
      check(false, "Registry: ", article(what_), " ", what_, " named '", entry.name, "' is registered twice, in ",
            in(there->second), " and in ", in(file), "; rename one of them");
    }
    std::string key = entry.name;
    files_[key] = file;
    entries_.emplace(std::move(key), std::move(entry));
    return true;
  }
  // add() for a registering line, which runs before main(): a problem goes to
  // registration_problems() instead of becoming an exception nothing could catch.
  bool add_at_startup(Entry entry, const char* file) noexcept {
    try {
      add(std::move(entry), file);
    } catch (const std::exception& e) {
      try {
        registration_problems().push_back(e.what());
      } catch (...) {
      }
    }
    return true;
  }
  // The entry named `name`, or an error that lists every name there is.
  const Entry& get(const std::string& name) const {
    const auto it = entries_.find(name);
    if (it == entries_.end())
      throw std::invalid_argument(cat("expected ", std::string("aeiou").find(what_[0]) == std::string::npos ? "a " : "an ",
                                      what_, " named ", join_names(names()), ", got '", name, "'"));
    return it->second;
  }
  const Entry* find(const std::string& name) const {
    const auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  bool contains(const std::string& name) const { return entries_.count(name) > 0; }
  // Every name, in alphabetical order (whatever order the files were linked in).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, entry] : entries_) out.push_back(name);
    return out;
  }
  const std::string& what() const { return what_; }

 private:
  std::string what_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::string> files_;  // name -> the file that registered it ("" if not said)
};

// The options of the component a choice names (a score, a cell, an encoding), for a component
// that takes one: with `chosen`, those of the entry its value of `key` names (none while that is
// not chosen yet); with nullptr, those of every entry, once each by key (a program's flag list).
template <class Entry>
std::vector<Option> chosen_options(const Registry<Entry>& registry, const std::string& key, const Settings* chosen) {
  if (chosen) return chosen->has(key) ? registry.get(chosen->text(key)).options : std::vector<Option>{};
  std::vector<Option> all;
  for (const std::string& name : registry.names())
    for (const Option& o : registry.get(name).options)
      if (std::none_of(all.begin(), all.end(), [&](const Option& a) { return a.key == o.key; })) all.push_back(o);
  return all;
}

// One registering line at namespace scope: a static bool whose initialiser adds the entry.
#define SEQGRAD_REGISTRY_CONCAT2(a, b) a##b
#define SEQGRAD_REGISTRY_CONCAT(a, b) SEQGRAD_REGISTRY_CONCAT2(a, b)
#define SEQGRAD_REGISTER(registry, ...)                                                            \
  namespace {                                                                                      \
  [[maybe_unused]] const bool SEQGRAD_REGISTRY_CONCAT(seqgrad_registered_, __LINE__) =                            \
      (registry).add_at_startup(__VA_ARGS__, __FILE__);                                           \
  }

}  // namespace seqgrad
