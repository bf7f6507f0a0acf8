// examples/seqgrad/resume.h - stopping `seqgrad train` cleanly, and continuing it exactly.
//
// Ctrl-C (or SIGTERM, SIGHUP) does not kill a training run: an InterruptHandler turns the
// signal into a flag, the loop finishes the step it is in, and save_resume_checkpoint writes
// everything the run needs to go on: the weights (under the model's own names, so the file also
// translates), the optimizer's buffers ("optimizer.exp_avg.0", ...), and in the metadata where
// it stopped, the losses so far, the random generator's state and the flags it was started
// with. `seqgrad train --resume FILE` reads it back, and the loss curve continues bit for bit as
// if the run had never stopped (tests/examples/test_cli_reliability.cpp). What this is not: a
// periodic snapshot; a killed (SIGKILL) or crashed run keeps only its best checkpoint.
#pragma once

#include <signal.h>  // POSIX: sigaction

#include <csignal>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "examples/seqgrad/translator.h"
#include "nn/optim/optim.h"

namespace seqgrad::cli {

// The largest values a real run can save, so that a resume file claiming more is refused: the
// range of --epochs, more batches than any corpus gives, and the longest learning-rate warm-up
// seqgrad train starts (the range of --warmup).
constexpr int64_t kMaxEpochs = 100000;
constexpr int64_t kMaxStepsPerEpoch = int64_t(1) << 40;
constexpr int64_t kMaxWarmupSteps = 10000000;

// Where a run stands between two steps.
struct TrainProgress {
  std::map<std::string, std::string> flags;  // the flags the run was given, by name (no dashes)
  int64_t epoch = 1;                         // the epoch in progress
  int64_t step = 0;                          // batches of it already trained
  double epoch_loss = 0;                     // the sum of their losses
  double best_valid = std::numeric_limits<double>::infinity();  // the least of valid_loss
  // The best validation so far by --best-by (loss: the least; bleu, exact: the greatest), counting
  // the validations of --valid-every too, and how many validations since have not beaten it
  // (--patience). NaN: no validation yet. (Files saved before these existed chose by loss alone.)
  double best_score = std::numeric_limits<double>::quiet_NaN();
  int64_t bad_validations = 0;
  int64_t warmup_steps = 1;                  // the learning-rate warm-up the run started with
  std::vector<double> epochs, train_loss, valid_loss, exact_match;  // the curves, one per epoch
  // The corpus files the run read, by flag ("train", "valid"): "BYTES FNV1A64-HEX" of each, so a
  // resumed run can refuse a file that changed since (empty in files saved before this existed).
  std::map<std::string, std::string> corpora;
};

// "runs/m.safetensors" -> "runs/m.resume.safetensors"
std::string resume_path_for(const std::string& checkpoint);

// Writes (atomically, like every checkpoint) the model, the optimizer's state, the progress and
// the default generator's state.
void save_resume_checkpoint(const std::string& path, const Translator& t, nn::Optimizer& opt,
                            const TrainProgress& progress);

// Reads the progress of a resumable checkpoint; std::runtime_error if `path` is not one, or if
// any field is outside what a run can save (naming the file and the field).
TrainProgress read_progress(const std::string& path);
// The same from the state's JSON text (the metadata entry "seqgrad.train_state"); `path` names
// the file in messages. (tests/fuzz/fuzz_resume.cpp feeds it any bytes.)
TrainProgress parse_progress(const std::string& text, const std::string& path);

// Loads the optimizer's state from a resumable checkpoint, and restores the default generator
// (and, with hard attention, the model's sampler and REINFORCE baseline).
void resume_optimizer_and_rng(const std::string& path, nn::Optimizer& opt, Translator& t);

// While it lives, SIGINT (Ctrl-C), SIGTERM and SIGHUP (a closed terminal) set a flag instead of
// ending the process, so training can stop between two steps and save a resume file; a second
// signal ends it as usual. A signal the process inherited as ignored stays ignored (a run under
// `nohup` goes on when the terminal closes). SIGPIPE is ignored meanwhile. The previous
// handlers come back when it is destroyed.
class InterruptHandler {
 public:
  InterruptHandler();
  ~InterruptHandler();
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;
  bool requested() const;
  int signal() const;        // the signal that asked (SIGINT, SIGTERM, SIGHUP), or 0
  const char* name() const;  // "Ctrl-C (SIGINT)", "SIGTERM", "SIGHUP"

 private:
  struct sigaction previous_[3], previous_pipe_;  // SIGINT, SIGTERM, SIGHUP; SIGPIPE
};

}  // namespace seqgrad::cli
