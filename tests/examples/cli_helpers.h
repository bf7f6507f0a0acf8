// tests/examples/cli_helpers.h - running the seqgrad tool in-process for the tests: its output,
// a signal at a chosen moment of it, and the files it leaves.
#pragma once

#include <csignal>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "examples/seqgrad/commands.h"

namespace seqgrad::testing {

// A string buffer that sends this process `signo` (SIGINT, as Ctrl-C would, unless told
// otherwise) the first time `trigger` (if not empty) appears in what is written to it: a
// signal at a chosen, repeatable moment.
class InterruptingBuffer : public std::stringbuf {
 public:
  explicit InterruptingBuffer(std::string trigger, int signo = SIGINT) : trigger_(std::move(trigger)), signo_(signo) {}

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const std::streamsize written = std::stringbuf::xsputn(s, n);
    maybe_interrupt();
    return written;
  }
  int_type overflow(int_type c) override {
    const int_type r = std::stringbuf::overflow(c);
    maybe_interrupt();
    return r;
  }

 private:
  void maybe_interrupt() {
    if (fired_ || trigger_.empty() || str().find(trigger_) == std::string::npos) return;
    fired_ = true;
    std::raise(signo_);
  }
  std::string trigger_;
  int signo_;
  bool fired_ = false;
};

struct Result {
  int code;
  std::string out, err;
};

// `seqgrad WORDS...`, reading `input` as its standard input.
inline Result run(const std::vector<std::string>& words, const std::string& input = "") {
  std::ostringstream out, err;
  std::istringstream in(input);
  const int code = cli::run(words, out, err, in);
  return {code, out.str(), err.str()};
}

// `seqgrad train WORDS...`, with `signo` raised when `interrupt_at` is printed.
inline Result train(std::vector<std::string> words, const std::string& interrupt_at = "", int signo = SIGINT) {
  words.insert(words.begin(), "train");
  InterruptingBuffer buffer(interrupt_at, signo);
  std::ostream out(&buffer);
  std::ostringstream err;
  const int code = cli::run(words, out, err);
  return {code, buffer.str(), err.str()};
}

// A small Transformer on the copy task: 23 steps an epoch, a fraction of a second each epoch.
inline std::vector<std::string> small_run(const std::string& out, const std::string& log, int64_t epochs = 3) {
  return {"--task", "copy",  "--n",     "400", "--min-len", "2",  "--max-len",  "5",          "--arch",
          "transformer",     "--dim",   "32",  "--ffn",     "64", "--heads",    "2",          "--layers",
          "1",      "--batch", "16",    "--epochs", std::to_string(epochs), "--seed", "3", "--out", out,
          "--loss-log", log};
}

}  // namespace seqgrad::testing
