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
// On an idle machine all the numbers are the same. Bigger ones mean a slowed core; unequal
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

// The widest vectors the build allows: 8 floats with AVX (as gemm's kernel uses), else 4.
#if defined(__AVX__)
constexpr int kVectorBytes = 32;
#else
constexpr int kVectorBytes = 16;
#endif
constexpr int kLanes = kVectorBytes / static_cast<int>(sizeof(float));
typedef float vec __attribute__((vector_size(kVectorBytes)));

constexpr long kRounds = 100'000'000;  // about 0.3 s of an idle core (AVX2)
constexpr int kChains = 12;            // independent running values: enough to keep the vector units busy

// kRounds x kChains vector multiply-adds; returns the elapsed milliseconds. The 12 running
// values, the scale and the step take 14 vector registers, so on x86-64 (16 of them) the loop
// never touches memory. The scale is read from a volatile, so the compiler cannot know it is 1,
// and the result is written to one, so the loop cannot be dropped.
double probe() {
  const auto t0 = std::chrono::steady_clock::now();
  volatile float one = 1.0f;
  vec acc[kChains], scale, step;
  for (int i = 0; i < kLanes; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c][i] = 0.01f * static_cast<float>(c);  // 12 different chains
    scale[i] = one;
    step[i] = 1e-7f;
  }
  for (long r = 0; r < kRounds; ++r)
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * scale + step;
  float total = 0;
  for (int c = 0; c < kChains; ++c) total += acc[c][0];
  volatile float sink = total;
  (void)sink;
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
