// examples/seqgrad/args.h - the command-line flag parser of the seqgrad tool.
//
// Each subcommand declares its flags (name, default, help); Args parses "--name value",
// "--name=value" and bare switches, collects the rest as positional arguments, and converts
// values on request with range checks. Every mistake is one std::invalid_argument whose message
// starts with the command and names the flag: "seqgrad train: --epochs expects a whole number
// from 1 to 100000, got 'ten'". What this is not: getopt (no short flags, no bundling).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seqgrad::cli {

struct FlagSpec {
  std::string name;           // without the dashes: "epochs"
  std::string default_value;  // "" for none; switches are "false"
  std::string help;
  bool is_switch = false;     // takes no value: present = true
};

class Args {
 public:
  Args(std::string command, std::string usage, std::vector<FlagSpec> flags);
  // The words after the subcommand: {"--epochs", "3", "--out", "m.safetensors"}.
  void parse(const std::vector<std::string>& words);

  bool help_requested() const { return help_; }
  std::string help() const;  // usage and every flag with its default

  bool given(const std::string& name) const;  // on the command line, not defaulted
  std::string text(const std::string& name) const;
  int64_t integer(const std::string& name, int64_t lo, int64_t hi) const;
  double number(const std::string& name, double lo, double hi) const;
  bool on(const std::string& name) const;  // a switch
  // text(name) must be one of `choices`.
  std::string choice(const std::string& name, const std::vector<std::string>& choices) const;
  const std::vector<std::string>& positional() const { return positional_; }
  const std::vector<FlagSpec>& flags() const { return flags_; }
  const std::string& command() const { return command_; }

 private:
  const FlagSpec& spec(const std::string& name) const;
  std::string command_, usage_;
  std::vector<FlagSpec> flags_;
  std::vector<std::pair<std::string, std::string>> values_;  // given on the command line
  std::vector<std::string> positional_;
  bool help_ = false;
};

}  // namespace seqgrad::cli
