// tensor/random.h - the seeded random number generator behind every random tensor.
//
// All randomness in seqgrad (randn/rand, weight initialisers, dropout masks, toy data) draws
// from one default Generator, so manual_seed(s) makes a whole run reproducible. The uniform
// and normal transforms are written here rather than taken from <random>'s distributions,
// whose outputs differ between standard libraries: the same seed gives the same numbers with
// GCC and Clang, on Linux and macOS.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace seqgrad {

class Generator {
 public:
  explicit Generator(uint64_t seed = 5489) { manual_seed(seed); }

  void manual_seed(uint64_t seed) {
    engine_.seed(seed);
    has_spare_normal_ = false;
  }
  uint64_t next_u64() { return engine_(); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  // Standard normal N(0, 1) by the Box-Muller transform.
  double normal();
  // Uniform integer in [0, n).
  uint64_t randint(uint64_t n);

  // The whole state as text, and back (as torch.get_rng_state / set_rng_state): what a
  // resumable training checkpoint stores, so dropout masks continue where they stopped.
  // set_state throws std::runtime_error for text that state() did not write.
  std::string state() const;
  void set_state(const std::string& state);

 private:
  std::mt19937_64 engine_;
  bool has_spare_normal_ = false;
  double spare_normal_ = 0;
};

// The process-wide generator. Copy it to save its state, assign to restore it:
//   Generator saved = default_generator(); ...; default_generator() = saved;
// While a GeneratorScope lives on a thread, that thread gets the scope's generator instead.
Generator& default_generator();
void manual_seed(uint64_t seed);

// While it lives, default_generator() on this thread is `g`: everything random the thread draws
// (dropout masks, sampled attention) comes from `g`, and the process-wide generator is not
// advanced. For work split over threads whose random draws must not depend on which thread
// runs first: each part draws from its own stream (nn/optim/data_parallel.h). Scopes nest.
class GeneratorScope {
 public:
  explicit GeneratorScope(Generator& g);
  ~GeneratorScope();
  GeneratorScope(const GeneratorScope&) = delete;
  GeneratorScope& operator=(const GeneratorScope&) = delete;

 private:
  Generator* previous_;
};

}  // namespace seqgrad
