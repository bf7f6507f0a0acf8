// tests/fuzz/fuzz_args.cpp - libFuzzer target: any command line for the seqgrad tool.
//
// The input is split into words at line breaks. Two things must hold for every input:
//  - cli::run with the first word as the command and --help right after it parses the rest
//    with that command's real flags and returns 0 (help) or 2 (one line on stderr), never
//    anything else. (--help makes the command stop after parsing: nothing is trained or written.)
//  - Args, the parser itself, given a table with every kind of flag, either rejects the words
//    with std::invalid_argument or yields values that each checked conversion accepts or
//    rejects the same way.
// Run by `make fuzz`; seeds in tests/fuzz/corpus/args/.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "examples/common/args.h"
#include "examples/seqgrad/commands.h"

using namespace seqgrad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      words.push_back(word);
      word.clear();
    } else {
      word += static_cast<char>(data[i]);
    }
  }
  words.push_back(word);

  // 1. The tool's own commands and flags.
  std::vector<std::string> line = words;
  line.insert(line.begin() + 1, "--help");
  std::ostringstream out, err;
  std::istringstream in;
  const int code = cli::run(line, out, err, in);
  if (code != 0 && code != 2) std::abort();
  if (code == 2 && (err.str().rfind("error: ", 0) != 0 || err.str().find('\n') != err.str().size() - 1)) std::abort();

  // 2. The parser and its conversions.
  cli::Args a("fuzz", "fuzz [flags]",
              {{"count", "3", "a whole number"}, {"rate", "0.5", "a number"}, {"mode", "fast", "a choice"},
               {"name", "", "text"}, {"verbose", "false", "a switch", true}});
  try {
    a.parse(words);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  a.help();
  for (const char* flag : {"count", "rate", "mode", "name", "verbose"}) {
    a.given(flag);
    a.text(flag);
  }
  a.on("verbose");
  try {
    const int64_t n = a.integer("count", -1000, 1000);
    if (n < -1000 || n > 1000) std::abort();
  } catch (const std::invalid_argument&) {
  }
  try {
    const double x = a.number("rate", -1, 1e6);
    if (!(x >= -1 && x <= 1e6)) std::abort();
  } catch (const std::invalid_argument&) {
  }
  try {
    const std::string m = a.choice("mode", {"fast", "slow"});
    if (m != "fast" && m != "slow") std::abort();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
