// bench/bench_cores.cpp - how fast this machine's cores are right now, alone and together.
//
// On a virtual machine the host runs other machines' work on the same physical cores. Linux
// counts one kind of interference as "steal" (a core taken away for a while), but not another:
// a core that keeps running at a fraction of its speed because another machine's thread shares
// the physical core (simultaneous multithreading) or its clock. This program measures that
// directly. It times a fixed amount of arithmetic that never touches memory (vector
// multiply-adds on values held in registers), first on one thread, then on T threads at once,
// and prints the milliseconds each took:
//   cores: threads=2 alone_ms=<ms> together_ms=<thread 0 ms>,<thread 1 ms>
// On an idle machine all three numbers are the same. Bigger ones mean a slowed core; unequal
// "together" numbers mean the cores ran at different speeds, and a job split in equal halves
// then waits for the slower one (docs/performance.md, section 5).
//   make bench && build/bench_cores [--threads T]
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_flags.h"

namespace {

// 8 floats per vector, as gemm's kernel uses (the compiler splits it where vectors are shorter).
typedef float vec8 __attribute__((vector_size(32)));

constexpr long kRounds = 100'000'000;  // about 0.3 s of an idle core
constexpr int kChains = 12;            // independent running values: enough to fill the vector units

// kRounds x kChains vector multiply-adds on registers; returns the elapsed milliseconds.
double probe() {
  const auto t0 = std::chrono::steady_clock::now();
  vec8 acc[kChains] = {};
  vec8 scale, step;
  for (int i = 0; i < 8; ++i) {
    scale[i] = 1.0f;
    step[i] = 1e-7f;
  }
  for (long r = 0; r < kRounds; ++r) {
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * scale + step;
    __asm__ volatile("" : "+x"(scale));  // the compiler may not fold the loop away
  }
  float sink = 0;
  for (int c = 0; c < kChains; ++c) sink += acc[c][0];
  __asm__ volatile("" : : "x"(sink));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t threads = 2;
  try {
    threads = seqgrad::bench::parse_cores_flags(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cores: %s\nusage: bench_cores [--threads T]\n", e.what());
    return 2;
  }
  const double alone = probe();
  std::vector<double> together(threads);
  std::vector<std::thread> others;
  for (int64_t t = 1; t < threads; ++t) others.emplace_back([&together, t] { together[t] = probe(); });
  together[0] = probe();
  for (std::thread& t : others) t.join();
  std::printf("cores: threads=%lld alone_ms=%.0f together_ms=", static_cast<long long>(threads), alone);
  for (int64_t t = 0; t < threads; ++t) std::printf("%s%.0f", t ? "," : "", together[t]);
  std::printf("\n");
  return 0;
}
