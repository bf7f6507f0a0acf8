// examples/common/args.h - the command-line flag parser of the seqgrad tool and the examples.
//
// Each program (a seqgrad subcommand, an example) declares its flags (name, default, help); Args
// parses "--name value", "--name=value" and bare switches, collects the rest as positional
// arguments, and converts values on request with range checks. Every mistake is one
// std::invalid_argument whose message starts with the program and names the flag: "seqgrad
// train: --epochs expects a whole number from 1 to 100000, got 'ten'". What this is not: getopt
// (no short flags, no bundling).
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
  // program: the name messages start with ("seqgrad train", "06_transformer").
  Args(std::string program, std::string usage, std::vector<FlagSpec> flags);
  // The same, parsing argv[1..argc) at once, for an example's main: --help prints the help to
  // standard output and exits with status 0, as Python's argparse does; a word that is not a
  // flag is an error (examples take no positional arguments).
  Args(std::string program, std::string usage, std::vector<FlagSpec> flags, int argc, char** argv);
  // The words after the subcommand: {"--epochs", "3", "--out", "m.safetensors"}.
  void parse(const std::vector<std::string>& words);

  bool help_requested() const { return help_; }
  std::string help() const;  // usage and every flag with its default

  bool given(const std::string& name) const;  // on the command line, not defaulted
  std::string text(const std::string& name) const;
  int64_t integer(const std::string& name, int64_t lo, int64_t hi) const;
  double number(const std::string& name, double lo, double hi) const;
  // A comma-separated list of distinct whole numbers, each in [lo, hi]: "--seeds 1,2,3".
  std::vector<int64_t> integers(const std::string& name, int64_t lo, int64_t hi) const;
  bool on(const std::string& name) const;  // a switch
  // text(name) must be one of `choices`.
  std::string choice(const std::string& name, const std::vector<std::string>& choices) const;
  // A comma-separated list of distinct items, each one of `choices`: "--trick none,reverse".
  std::vector<std::string> choice_list(const std::string& name, const std::vector<std::string>& choices) const;
  // A comma-separated list of distinct, non-empty items that the caller checks itself (names
  // with parameters, as "gnmt-4-plain"): "--models lstm-attn,gnmt-4".
  std::vector<std::string> items(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }
  const std::vector<FlagSpec>& flags() const { return flags_; }
  const std::string& program() const { return program_; }

 private:
  const FlagSpec& spec(const std::string& name) const;  // or an error naming the unknown flag
  const FlagSpec* find(const std::string& name) const;   // or null
  std::string did_you_mean(const std::string& name) const;  // "; did you mean '--epochs'?" or ""
  std::vector<std::string> split_list(const std::string& name) const;
  void check_distinct(const std::string& name, const std::vector<std::string>& items) const;
  std::string program_, usage_;
  std::vector<FlagSpec> flags_;
  std::vector<std::pair<std::string, std::string>> values_;  // given on the command line
  std::vector<std::string> positional_;
  bool help_ = false;
};

}  // namespace seqgrad::cli
