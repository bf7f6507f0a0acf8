// tests/fuzz/fuzz_resume.cpp - libFuzzer target: any bytes, read as the training state of a
// resume file (the JSON that `seqgrad train --resume` trusts to say where a run stopped).
//
// Every input must end in a clean std::runtime_error naming the file, or in a progress that
// keeps every promise seqgrad train relies on: an epoch from 1 to kMaxEpochs, a step from 0,
// one entry per finished epoch in each curve (epochs numbered 1, 2, ...), finite losses >= 0,
// a warm-up from 1 to kMaxWarmupSteps. Run by `make fuzz`; seeds in tests/fuzz/corpus/resume/.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "examples/seqgrad/resume.h"

using namespace seqgrad;

namespace {

bool finite_non_negative(double v) { return std::isfinite(v) && v >= 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  cli::TrainProgress p;
  try {
    p = cli::parse_progress(text, "fuzz.resume.safetensors");
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).find("'fuzz.resume.safetensors'") == std::string::npos) std::abort();  // names the file
    return 0;
  }
  if (p.epoch < 1 || p.epoch > cli::kMaxEpochs || p.step < 0 || p.step > cli::kMaxStepsPerEpoch) std::abort();
  if (p.warmup_steps < 1 || p.warmup_steps > cli::kMaxWarmupSteps) std::abort();
  if (!finite_non_negative(p.epoch_loss) || !(std::isinf(p.best_valid) || finite_non_negative(p.best_valid))) std::abort();
  const size_t finished = static_cast<size_t>(p.epoch - 1);
  for (const auto* curve : {&p.epochs, &p.train_loss, &p.valid_loss, &p.exact_match}) {
    if (curve->size() != finished) std::abort();
    for (double v : *curve)
      if (!finite_non_negative(v)) std::abort();
  }
  for (size_t k = 0; k < finished; ++k)
    if (p.epochs[k] != static_cast<double>(k + 1)) std::abort();
  return 0;
}
