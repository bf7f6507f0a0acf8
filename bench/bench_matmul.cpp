// bench/bench_matmul.cpp - GFLOP/s of seqgrad's gemm, the naive reference and (when installed)
// OpenBLAS, side by side, against the machine's peak.
//
//   build/bench_matmul                         every case (about a minute)
//   build/bench_matmul --n 1024 --threads 2    one square case (without --threads: 1 and 2)
//   build/bench_matmul --m 64 --k 128 --n 512 --threads 1
//   build/bench_matmul --tiny                   the tiny products of attention (a few seconds)
//   build/bench_matmul --n 1024 --threads 1 --precision bf16   bfloat16 products (tensor/matmul.h)
//   build/bench_matmul --n 1024 --blas-core Haswell   OpenBLAS on a core of your choice
//
// It times gemm(), the kernel every matmul() ends in, on (M, K) @ (K, N) without transposes.
// Output, one line per measurement:
//   matmul n=512 threads=1 gflops=61.3
//   openblas n=512 threads=1 gflops=60.2 core=Cooperlake core_preset=Haswell
//   matmul_naive n=512 threads=1 gflops=1.1
// then a summary: each case as a fraction of OpenBLAS and of peak, and the 1 -> 2 thread
// speed-ups. OpenBLAS is loaded at run time with dlopen, so the build never links to it; if
// libopenblas is not installed its lines are simply missing. OpenBLAS runs the strongest core
// this CPU's flags allow that computes a product correctly (choose_core, below), unless the
// environment's OPENBLAS_CORETYPE is as strong and correct too; a line says when the
// environment's core was replaced, and each OpenBLAS line records the core it ran (core=) and
// the environment's (core_preset=, "unset" if none). --blas-core NAME, or SEQGRAD_BLAS_CORE=NAME,
// forces a core without the check, to measure that one on purpose.
// seqgrad's side runs the kernel gemm picks for this CPU; SEQGRAD_KERNEL=avx2 (or generic)
// measures another. With --precision bf16 it runs gemm at MatmulPrecision::BFloat16, on the
// kernel bf16_kernel() names (SEQGRAD_BF16_KERNEL=portable, avx512_fma or avx512_bf16 measures
// another), and prints the same lines; OpenBLAS stays float32 (its sgemm), and the peak is that
// of the kernel's instruction: vdpbf16ps for avx512_bf16 (twice the float32 FMA's
// multiply-adds), the float32 FMA for the others.
//
// Timing: a sample is one untimed call, then enough back-to-back calls to take >= 20 ms; a
// figure is the median of 11 samples (--samples). The machine may be shared and its clock
// wanders with load, so for each shape the samples are taken in turns: 1 thread (ours and
// OpenBLAS, the first of the two alternating), then 2 threads, then again. The two libraries,
// and the two thread counts of a speed-up, see the same conditions. Between turns there is a
// pause long enough for the other library's idle worker threads to stop spinning (OpenBLAS's
// spin for about 0.12 s after a call, seqgrad's 0.2 ms): a spinning thread would otherwise
// steal the second core from the one being measured.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>  // strcasecmp
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tensor/matmul.h"
#include "tensor/random.h"
#include "tensor/thread_pool.h"

using namespace seqgrad;
using Clock = std::chrono::steady_clock;

namespace {

MatmulPrecision g_precision = MatmulPrecision::Float32;  // --precision

// ================================================================================================
// OpenBLAS, found at run time, on the strongest core that computes correctly here
//
// OpenBLAS carries kernels for many cores and picks one when the library loads: from
// OPENBLAS_CORETYPE if that is set, else from the CPU's model number. Both can hand it less than
// the CPU runs. A release older than the CPU may not know its model (Debian's 0.3.21 takes a
// Sapphire Rapids Xeon for a Prescott and runs SSE3 kernels there, a third of its speed), and an
// environment may preset a weaker core (an image that sets OPENBLAS_CORETYPE=Haswell hands an
// AVX-512 machine AVX2 kernels). Either way every figure beside it would flatter seqgrad. So the
// core is chosen here (choose_core): the strongest this CPU's flags allow that, loaded in a child
// process, computes a product correctly; an environment's core is kept only if it is as strong
// and computes correctly too.

// cblas_sgemm(order, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) with the
// CBLAS enum values RowMajor = 101, NoTrans = 111, Trans = 112.
using CblasGemm = void (*)(int, int, int, int, int, int, real, const real*, int, const real*, int,
                           real, real*, int);
using SetThreads = void (*)(int);

struct OpenBlas {
  CblasGemm gemm = nullptr;
  SetThreads set_threads = nullptr;
  std::string core;    // the kernel set OpenBLAS reports running ("Cooperlake", "Haswell", ...)
  std::string preset;  // OPENBLAS_CORETYPE as the environment gave it, "unset" if it did not
  std::string how;     // how the core came to be chosen, for the header
  explicit operator bool() const { return gemm && set_threads; }
};

// The library and its three functions; an OpenBlas that is false if it is not installed.
OpenBlas open_openblas() {
  for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
    void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) continue;
    OpenBlas lib;
    lib.gemm = reinterpret_cast<CblasGemm>(dlsym(handle, sizeof(real) == 4 ? "cblas_sgemm" : "cblas_dgemm"));
    lib.set_threads = reinterpret_cast<SetThreads>(dlsym(handle, "openblas_set_num_threads"));
    using CoreName = char* (*)();
    const auto core_name = reinterpret_cast<CoreName>(dlsym(handle, "openblas_get_corename"));
    lib.core = core_name ? core_name() : "unknown";
    if (lib) return lib;
  }
  return OpenBlas{};
}

bool same_name(const std::string& a, const std::string& b) { return strcasecmp(a.c_str(), b.c_str()) == 0; }

// How strong an OpenBLAS x86-64 core is: the widest instructions its kernels use, 4 for AVX-512
// with BF16 (Cooperlake: SkylakeX's sgemm plus bfloat16 kernels), 3 AVX-512, 2 AVX2 with FMA,
// 1 AVX, 0 SSE; -1 for a name not in this list (a newer release's, or a typo).
int core_rank(const std::string& name) {
  static const std::pair<const char*, int> ranks[] = {
      {"Cooperlake", 4},  {"SkylakeX", 3},  {"Haswell", 2},    {"Zen", 2},         {"Sandybridge", 1},
      {"Bulldozer", 1},   {"Piledriver", 1}, {"Steamroller", 1}, {"Excavator", 1},  {"Prescott", 0},
      {"Core2", 0},       {"Penryn", 0},    {"Dunnington", 0}, {"Nehalem", 0},     {"Atom", 0},
      {"Opteron", 0},     {"Opteron_SSE3", 0}, {"Barcelona", 0}, {"Nano", 0},      {"Bobcat", 0}};
  for (const auto& [core, rank] : ranks)
    if (same_name(name, core)) return rank;
  return -1;
}

const char* rank_name(int rank) {
  static const char* const names[] = {"SSE", "AVX", "AVX2", "AVX-512", "AVX-512 with BF16"};
  return rank >= 0 && rank <= 4 ? names[rank] : "unknown";
}

// The cores this CPU's flags allow, strongest first. Prescott (SSE3) is never offered: where
// nothing else fits, OpenBLAS's own choice stands.
std::vector<std::string> openblas_cores_for_this_cpu() {
  std::vector<std::string> cores;
#if defined(__x86_64__) || defined(__i386__)
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  if (avx512 && __builtin_cpu_supports("avx512bf16")) cores.push_back("Cooperlake");
  if (avx512) cores.push_back("SkylakeX");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) cores.push_back("Haswell");
  if (__builtin_cpu_supports("avx")) cores.push_back("Sandybridge");
#endif
  return cores;
}

// The check a core must pass: (N, N) @ (N, N) on random values in [-1, 1], every entry within
// kProbeTolerance x the largest entry of a double-precision product of the same inputs. A correct
// single-precision sum of 300 terms is off by about 1e-6 of that; wrong kernels are off by far
// more. 300 is no multiple of any kernel's block, so the edge code runs too.
constexpr int kProbeN = 300;
constexpr double kProbeTolerance = 1e-4;

struct CoreProbe {
  bool installed = false;  // the child found libopenblas
  std::string core;        // the core OpenBLAS reported there
  double error = -1;       // the product's largest error over its largest entry (-1: none computed)
  std::string failure;     // why the core was not fit to use, empty when it was

  bool ok() const { return failure.empty(); }
};

// Runs the check with OPENBLAS_CORETYPE=name in a child process: OpenBLAS reads the variable
// once, when the library loads, so a process can only ever try one core (and a core whose
// instructions the CPU lacks dies of SIGILL there, not here). Call it before this process loads
// OpenBLAS or starts a thread. The core OpenBLAS then reports must be the one asked for: a name it
// does not accept is no error there, it falls back to a core of its own choosing from the CPU's
// flags. (0.3.21 is one such: its search of the names stops one short of "Cooperlake", so it
// reaches Cooperlake only by that fallback, on a CPU with AVX512_BF16; fixed in 0.3.22.)
CoreProbe probe_core(const std::string& name) {
  CoreProbe probe;
  int fds[2];
  if (pipe(fds) != 0) {
    probe.failure = std::string("pipe() failed: ") + std::strerror(errno);
    return probe;
  }
  std::fflush(stdout);  // or the child's copy of the buffer could be written twice
  const pid_t pid = fork();
  if (pid < 0) {
    probe.failure = std::string("fork() failed: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return probe;
  }
  if (pid == 0) {
    close(fds[0]);
    setenv("OPENBLAS_CORETYPE", name.c_str(), 1);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    const OpenBlas lib = open_openblas();
    if (!lib) _exit(3);
    lib.set_threads(1);
    const int n = kProbeN;
    Generator gen(7);
    std::vector<real> A(static_cast<size_t>(n) * n), B(A.size()), C(A.size());
    for (real& x : A) x = static_cast<real>(2 * gen.uniform() - 1);
    for (real& x : B) x = static_cast<real>(2 * gen.uniform() - 1);
    lib.gemm(101, 111, 111, n, n, n, 1, A.data(), n, B.data(), n, 0, C.data(), n);
    double worst = 0, largest = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double sum = 0;
        for (int p = 0; p < n; ++p) sum += static_cast<double>(A[i * n + p]) * B[p * n + j];
        // (std::max would pass a NaN over, so a non-finite entry counts as an infinite error.)
        const double error = std::isfinite(C[i * n + j]) ? std::abs(sum - C[i * n + j]) : HUGE_VAL;
        worst = std::max(worst, error);
        largest = std::max(largest, std::abs(sum));
      }
    dprintf(fds[1], "%s %.6g\n", lib.core.c_str(), worst / largest);
    _exit(0);  // not exit(): the parent's atexit handlers and buffers are not the child's to run
  }
  close(fds[1]);
  std::string report;
  char buf[256];
  for (ssize_t got; (got = read(fds[0], buf, sizeof buf)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    report.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  probe.installed = !(WIFEXITED(status) && WEXITSTATUS(status) == 3);
  char core[64] = "";
  if (WIFSIGNALED(status)) {
    probe.failure = std::string("died of signal ") + std::to_string(WTERMSIG(status)) + " (" +
                    strsignal(WTERMSIG(status)) + ")";
  } else if (!probe.installed) {
    probe.failure = "libopenblas not found";
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
             std::sscanf(report.c_str(), "%63s %lf", core, &probe.error) != 2) {
    probe.failure = "the check's child failed (report '" + report + "')";
  } else {
    probe.core = core;
    char why[160];
    if (!same_name(probe.core, name)) {
      std::snprintf(why, sizeof why, "OpenBLAS ran its %s core instead", core);
      probe.failure = why;
    } else if (!(probe.error <= kProbeTolerance)) {
      std::snprintf(why, sizeof why, "its product was off by %.3g of its largest entry, more than %g", probe.error,
                    kProbeTolerance);
      probe.failure = why;
    }
  }
  return probe;
}

// What the run sets OPENBLAS_CORETYPE to, and why.
struct CoreChoice {
  std::string set_to;  // the core to load; empty: leave OPENBLAS_CORETYPE as the environment has it
  std::string best;    // the strongest candidate that passed the check; empty if none did (or unchecked)
  std::string how;     // one line for the header
  std::string notice;  // a line for under the header: the environment's core replaced, or none checked
  bool installed = true;
};

// forced: a core named with --blas-core or SEQGRAD_BLAS_CORE, taken as it is, unchecked: a
// measurement of a given core on purpose (a weaker one, or one these ranks do not know).
CoreChoice choose_core(const std::string& forced) {
  CoreChoice choice;
  const char* env = std::getenv("OPENBLAS_CORETYPE");
  const std::string preset = env ? env : "";
  if (!forced.empty()) {
    choice.set_to = forced;
    choice.how = "OPENBLAS_CORETYPE=" + forced + " forced by --blas-core or SEQGRAD_BLAS_CORE, unchecked";
    return choice;
  }
  std::string rejected;  // stronger candidates that failed the check, and why
  for (const std::string& core : openblas_cores_for_this_cpu()) {
    const CoreProbe probe = probe_core(core);
    if (!probe.installed) {
      choice.installed = false;
      return choice;
    }
    if (probe.ok()) {
      choice.best = core;
      break;
    }
    rejected += (rejected.empty() ? "" : "; ") + core + ": " + probe.failure;
  }
  if (!rejected.empty()) rejected = " (failed the check: " + rejected + ")";
  char check[160];
  std::snprintf(check, sizeof check, "a %d x %d product to within %g x the largest entry of a double-precision reference", kProbeN, kProbeN,
                kProbeTolerance);
  if (choice.best.empty()) {
    choice.how = preset.empty() ? std::string("OpenBLAS's own choice") : "OPENBLAS_CORETYPE=" + preset +
                                                                             " from the environment";
    if (!rejected.empty())
      choice.notice = std::string("WARNING: no OpenBLAS core this CPU's flags allow computed ") + check + rejected +
                      "; OpenBLAS runs " + choice.how + ", unchecked";
    return choice;
  }
  const std::string best_is = "the strongest core this CPU's flags allow (" +
                              std::string(rank_name(core_rank(choice.best))) + ") that computed " + check;
  if (preset.empty()) {
    choice.set_to = choice.best;
    choice.how = "OPENBLAS_CORETYPE=" + choice.best + " set here, " + best_is + rejected;
    return choice;
  }
  if (same_name(preset, choice.best)) {
    choice.how = "OPENBLAS_CORETYPE=" + preset + " from the environment, " + best_is;
    return choice;
  }
  const int preset_rank = core_rank(preset), best_rank = core_rank(choice.best);
  std::string why;
  if (preset_rank < 0) {
    why = "a core these benchmarks do not know";
  } else if (preset_rank < best_rank) {
    why = std::string("its kernels use ") + rank_name(preset_rank) + ", " + choice.best + "'s " +
          rank_name(best_rank);
  } else {  // as strong or stronger by name: kept if it computes correctly here
    const CoreProbe probe = probe_core(preset);
    if (probe.ok()) {
      choice.how = "OPENBLAS_CORETYPE=" + preset + " from the environment, kept: as strong as " + choice.best +
                   ", and it computed " + check;
      return choice;
    }
    why = "it failed the check: " + probe.failure;
  }
  choice.set_to = choice.best;
  choice.how = "OPENBLAS_CORETYPE=" + choice.best + " set here in place of the environment's " + preset + ", " +
               best_is;
  choice.notice = "NOTE: OpenBLAS core: the environment sets OPENBLAS_CORETYPE=" + preset + "; using " + choice.best +
                  " instead: " + why + ". " + choice.best + " computed " + check +
                  ". Both are recorded (core=, core_preset=); --blas-core NAME or SEQGRAD_BLAS_CORE=NAME "
                  "forces a core.";
  return choice;
}

// Loads OpenBLAS on the chosen core; the core it reports is printed beside every figure.
OpenBlas load_openblas(const CoreChoice& choice) {
  const char* env = std::getenv("OPENBLAS_CORETYPE");
  const std::string preset = env && *env ? env : "unset";
  if (!choice.set_to.empty()) setenv("OPENBLAS_CORETYPE", choice.set_to.c_str(), 1);
  OpenBlas lib = open_openblas();
  lib.preset = preset;
  lib.how = choice.how;
  return lib;
}

// ================================================================================================
// The machine's peak

// Clock rate in GHz, measured: a chain of dependent integer adds retires one add per cycle.
double measure_ghz() {
  double best = 0;
  for (int trial = 0; trial < 5; ++trial) {
    uint64_t x = 0;
    const int64_t n = 20000000;
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < n; ++i) {
      // Eight adds per iteration, each waiting for the last; the empty asm stops the compiler
      // from folding them into one.
      for (int j = 0; j < 8; ++j) {
        x += static_cast<uint64_t>(i);
        __asm__ volatile("" : "+r"(x));
      }
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, 8.0 * n / s / 1e9);
  }
  return best;
}

// The nominal clock the kernel reports, in GHz (0 if unknown).
double cpuinfo_ghz() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("cpu MHz", 0) == 0) return std::atof(line.c_str() + line.find(':') + 1) / 1000;
  return 0;
}

// Floating-point operations one core can start per cycle in the widest vector unit this CPU
// has: 2 FMA pipes x lanes x 2 (an FMA is a multiply and an add). (A core that splits 512-bit
// work into two 256-bit halves, as Zen 4 does, peaks at half the AVX-512 figure.)
int flops_per_cycle() {
  const int lanes_256 = 32 / static_cast<int>(sizeof(real));
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx512f")) return 2 * 2 * 2 * lanes_256;
  if (__builtin_cpu_supports("fma")) return 2 * 2 * lanes_256;
  if (__builtin_cpu_supports("avx")) return 2 * lanes_256;  // one multiply and one add pipe, no fusion
#endif
  return lanes_256;  // SSE: 128-bit multiply and add
}

// The kernels gemm can run here, narrowest first: "generic, avx2, avx512".
std::string kernel_list() {
  std::string list;
  for (const std::string& k : gemm_kernels()) list += (list.empty() ? "" : ", ") + k;
  return list;
}

// ================================================================================================
// Timing

// Seconds per call of fn: the median over samples of (time of a batch of calls / calls).
struct Sampler {
  std::function<void()> fn;
  double flops;
  std::vector<double> samples;

  void warm_up() {
    fn();
  }
  // One untimed call first: after a pause the core may have clocked down, and the library
  // that happened to go first would pay for bringing it back up.
  void take_samples(int count) {
    const double target = 0.02;  // seconds per sample
    for (int s = 0; s < count; ++s) {
      fn();
      int64_t calls = 0;
      const auto t0 = Clock::now();
      double elapsed = 0;
      do {
        fn();
        ++calls;
        elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
      } while (elapsed < target);
      samples.push_back(elapsed / static_cast<double>(calls));
    }
  }
  double gflops() {
    std::vector<double> s = samples;
    std::sort(s.begin(), s.end());
    return flops / s[s.size() / 2] / 1e9;
  }
};

void pause_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

struct Case {
  int64_t M, K, N;
  int threads;
  // "n=512" for square cases, "m=64 k=128 n=512" otherwise.
  std::string shape() const {
    char buf[96];
    if (M == N && K == N)
      std::snprintf(buf, sizeof buf, "n=%lld", static_cast<long long>(N));
    else
      std::snprintf(buf, sizeof buf, "m=%lld k=%lld n=%lld", static_cast<long long>(M),
                    static_cast<long long>(K), static_cast<long long>(N));
    return buf;
  }
  std::string name() const { return shape() + " threads=" + std::to_string(threads); }
};

struct Result {
  Case c;
  double ours = 0, openblas = 0;
};

std::vector<real> random_values(int64_t n, uint64_t seed) {
  Generator gen(seed);
  std::vector<real> v(static_cast<size_t>(n));
  for (real& x : v) x = static_cast<real>(2 * gen.uniform() - 1);
  return v;
}

// One shape on each thread count. The samples of the two libraries and of the thread counts
// are interleaved (for each sample: 1 thread ours, OpenBLAS, 2 threads ours, OpenBLAS, ...), so
// that a speed-up compares figures taken under the same conditions.
std::vector<Result> run_shape(int64_t M, int64_t K, int64_t N, const std::vector<int>& thread_counts,
                              const OpenBlas& blas, int samples) {
  const std::vector<real> A = random_values(M * K, 1), B = random_values(K * N, 2);
  std::vector<real> C(static_cast<size_t>(M * N));
  const double flops = 2.0 * M * N * K;
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  auto ours_fn = [&] { gemm_at(g_precision, M, N, K, A.data(), false, B.data(), false, C.data()); };
  auto theirs_fn = [&] { blas.gemm(101, 111, 111, m, n, k, 1, A.data(), k, B.data(), n, 0, C.data(), n); };
  std::vector<Sampler> ours, theirs;
  for (size_t t = 0; t < thread_counts.size(); ++t) {
    ours.push_back({ours_fn, flops, {}});
    theirs.push_back({theirs_fn, flops, {}});
  }
  auto use_threads = [&](int t) {
    set_num_threads(t);
    parallel_for(0, t, 1, [](int64_t, int64_t) {});  // start the workers outside the timing
    if (blas) blas.set_threads(t);
  };
  for (size_t t = 0; t < thread_counts.size(); ++t) {
    use_threads(thread_counts[t]);
    ours[t].warm_up();
    if (blas) theirs[t].warm_up();
    pause_ms(200);
  }
  for (int i = 0; i < samples; ++i)
    for (size_t t = 0; t < thread_counts.size(); ++t) {
      use_threads(thread_counts[t]);
      // Which library goes first alternates, so neither always follows the other.
      for (int turn = 0; turn < 2; ++turn) {
        if ((turn == 0) == (i % 2 == 0)) {
          ours[t].take_samples(1);
          pause_ms(5);  // our workers stop spinning after 0.2 ms
        } else if (blas) {
          theirs[t].take_samples(1);
          pause_ms(thread_counts[t] > 1 ? 200 : 5);  // OpenBLAS's workers spin for about 0.12 s
        }
      }
    }
  if (blas) {
    // Both must compute the same product: compare them once, relative to the largest entry
    // (bfloat16 inputs carry 8 significant bits, so there only to about 1%).
    ours_fn();
    const std::vector<real> mine = C;
    theirs_fn();
    double worst = 0, scale = 1e-30;
    for (size_t i = 0; i < C.size(); ++i) {
      worst = std::max(worst, std::abs(static_cast<double>(mine[i]) - C[i]));
      scale = std::max(scale, std::abs(static_cast<double>(C[i])));
    }
    if (worst > (g_precision == MatmulPrecision::BFloat16 ? 1e-2 : 1e-4) * scale)
      std::printf("# WARNING: matmul and openblas differ by %.3g (largest entry %.3g)\n", worst, scale);
  }
  std::vector<Result> results;
  for (size_t t = 0; t < thread_counts.size(); ++t) {
    const Result r{Case{M, K, N, thread_counts[t]}, ours[t].gflops(), blas ? theirs[t].gflops() : 0};
    std::printf("matmul %s gflops=%.1f\n", r.c.name().c_str(), r.ours);
    if (blas)
      std::printf("openblas %s gflops=%.1f core=%s core_preset=%s\n", r.c.name().c_str(), r.openblas,
                  blas.core.c_str(), blas.preset.c_str());
    results.push_back(r);
  }
  std::fflush(stdout);
  return results;
}

// Products below gemm's tiny threshold, as the two standard training workloads make them
// (bench_train.cpp), with their transposes: one Transformer attention head (T = S = 20, 32 wide)
// forward and backward, and one decoder step of the LSTM's attention over 20 source states.
// One thread; OpenBLAS beside it when present. Prints
//   tiny m=20 k=32 n=20 ta=0 tb=1 matmul_gflops=.. openblas_gflops=..
void run_tiny(const OpenBlas& blas, int samples) {
  struct Tiny {
    int64_t M, K, N;
    bool ta, tb;
  };
  const Tiny cases[] = {{20, 32, 20, false, true},   // scores Q K^T
                        {20, 20, 32, false, false},  // context P V, and dS K
                        {20, 20, 32, true, false},   // P^T dO, and dS^T Q
                        {1, 128, 20, false, true},   // q K^T for one decoder step
                        {1, 20, 128, false, false},  // p V for one decoder step
                        {20, 1, 128, true, false}};  // p^T dc: an outer product
  set_num_threads(1);
  if (blas) blas.set_threads(1);
  for (const Tiny& t : cases) {
    const std::vector<real> A = random_values(t.M * t.K, 1), B = random_values(t.K * t.N, 2);
    std::vector<real> C(static_cast<size_t>(t.M * t.N));
    const int m = static_cast<int>(t.M), n = static_cast<int>(t.N), k = static_cast<int>(t.K);
    const double flops = 2.0 * t.M * t.N * t.K;
    Sampler ours{[&] { gemm_at(g_precision, t.M, t.N, t.K, A.data(), t.ta, B.data(), t.tb, C.data()); }, flops, {}};
    Sampler theirs{[&] {
                     blas.gemm(101, t.ta ? 112 : 111, t.tb ? 112 : 111, m, n, k, 1, A.data(), t.ta ? m : k,
                               B.data(), t.tb ? k : n, 0, C.data(), n);
                   },
                   flops, {}};
    for (int i = 0; i < samples; ++i) {
      ours.take_samples(1);
      if (blas) theirs.take_samples(1);
    }
    std::printf("tiny m=%lld k=%lld n=%lld ta=%d tb=%d matmul_gflops=%.1f", static_cast<long long>(t.M),
                static_cast<long long>(t.K), static_cast<long long>(t.N), t.ta, t.tb, ours.gflops());
    if (blas)
      std::printf(" openblas_gflops=%.1f openblas_core=%s openblas_core_preset=%s", theirs.gflops(), blas.core.c_str(),
                  blas.preset.c_str());
    std::printf("\n");
  }
}

void run_naive(int64_t n) {
  const std::vector<real> A = random_values(n * n, 1), B = random_values(n * n, 2);
  std::vector<real> C(static_cast<size_t>(n * n));
  Sampler naive{[&] { gemm_reference(n, n, n, A.data(), false, B.data(), false, C.data()); },
                2.0 * n * n * n, {}};
  naive.warm_up();
  naive.take_samples(3);
  std::printf("matmul_naive n=%lld threads=1 gflops=%.2f\n", static_cast<long long>(n), naive.gflops());
  std::fflush(stdout);
}

// ================================================================================================
// Command line

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "bench_matmul: %s (usage: bench_matmul [--n N] [--m M] [--k K] [--threads T] [--samples S] [--tiny] "
               "[--precision fp32|bf16] [--blas-core NAME])\n",
               message.c_str());
  std::exit(2);
}

int64_t parse_int(const std::string& flag, const char* value, int64_t lo, int64_t hi) {
  if (value == nullptr) usage_error(flag + " needs a value");
  char* end = nullptr;
  const long long v = std::strtoll(value, &end, 10);
  if (*value == '\0' || *end != '\0' || v < lo || v > hi)
    usage_error(flag + ": expected a whole number from " + std::to_string(lo) + " to " +
                std::to_string(hi) + ", got '" + value + "'");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 0, m = 0, k = 0, threads = 0, samples = 11;
  bool tiny = false;
  const char* forced_core = std::getenv("SEQGRAD_BLAS_CORE");  // --blas-core overrides it
  for (int i = 1; i < argc; i += 2) {  // every flag but --tiny takes a value
    const std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (flag == "--n") n = parse_int(flag, value, 1, 16384);
    else if (flag == "--m") m = parse_int(flag, value, 1, 16384);
    else if (flag == "--k") k = parse_int(flag, value, 1, 16384);
    else if (flag == "--threads") threads = parse_int(flag, value, 1, 256);
    else if (flag == "--samples") samples = parse_int(flag, value, 1, 1000);
    else if (flag == "--tiny") tiny = true, --i;  // takes no value
    else if (flag == "--precision") {
      const std::string v = value ? value : "";
      if (v != "fp32" && v != "bf16") usage_error("--precision: expected fp32 or bf16, got '" + v + "'");
      g_precision = v == "bf16" ? MatmulPrecision::BFloat16 : MatmulPrecision::Float32;
    }
    else if (flag == "--blas-core") {
      if (value == nullptr || *value == '\0') usage_error("--blas-core needs an OpenBLAS core name, e.g. SkylakeX");
      forced_core = value;
    }
    else usage_error("unknown flag '" + flag + "'");
  }
  if ((m || k) && !n) usage_error("--m and --k need --n");

  // Before anything else: the check forks, and this process must not have loaded OpenBLAS or
  // started its thread pool yet.
  const CoreChoice choice = choose_core(forced_core ? forced_core : "");
  const OpenBlas blas = choice.installed ? load_openblas(choice) : OpenBlas{};
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const double ghz_start = measure_ghz(), nominal = cpuinfo_ghz();
  const bool bf16 = g_precision == MatmulPrecision::BFloat16;
  const int fpc = flops_per_cycle() * (bf16 && std::string(bf16_kernel()) == "avx512_bf16" ? 2 : 1);
  std::printf("# %s, %u hardware threads, clock %.2f GHz measured (%.2f nominal), %d FLOP/cycle/core\n",
              kRealName, cores, ghz_start, nominal, fpc);
  std::printf("# seqgrad's gemm kernel: %s (of %s this CPU runs; SEQGRAD_KERNEL picks another)\n", gemm_kernel(),
              kernel_list().c_str());
  if (bf16) {
    std::string list;
    for (const std::string& k : bf16_kernels()) list += (list.empty() ? "" : ", ") + k;
    std::printf("# precision bf16: seqgrad's inputs rounded to bfloat16, sums in float32, on the %s kernel (of %s; "
                "SEQGRAD_BF16_KERNEL picks another); FLOP/cycle counts the kernel's instruction\n",
                bf16_kernel(), list.c_str());
  }
  if (blas) {
    std::printf("# openblas: loaded, core %s (%s)\n", blas.core.c_str(), blas.how.c_str());
    if (!choice.notice.empty()) std::printf("# %s\n", choice.notice.c_str());
    if (!choice.set_to.empty() && !same_name(blas.core, choice.set_to))
      std::printf("# WARNING: OPENBLAS_CORETYPE=%s was asked for, but OpenBLAS reports its %s core\n",
                  choice.set_to.c_str(), blas.core.c_str());
    if (!choice.best.empty() && core_rank(blas.core) < core_rank(choice.best))
      std::printf("# WARNING: OpenBLAS runs its %s kernels, not the %s kernels this CPU runs correctly: its figures "
                  "understate it\n", blas.core.c_str(), choice.best.c_str());
  } else {
    std::printf("# openblas: not found (install libopenblas-dev to compare)\n");
  }
  if (tiny) {
    run_tiny(blas, static_cast<int>(samples));
    return 0;
  }

  struct Shape3 {
    int64_t M, K, N;
  };
  std::vector<Shape3> shapes;
  const std::vector<int> thread_counts =
      threads ? std::vector<int>{static_cast<int>(threads)} : std::vector<int>{1, 2};
  if (n) {
    shapes.push_back({m ? m : n, k ? k : n, n});
  } else {
    for (int64_t s : {64, 128, 256, 512, 1024, 2048}) shapes.push_back({s, s, s});
    // Small products from the models: an LSTM step with batch 64 and hidden size 128,
    // (B, C) @ (C, 4H) = (64, 128) @ (128, 512), the matching (64, 512) @ (512, 128), and
    // attention with T = 32 and HS = 64, (T, HS) @ (HS, T), and a (128, 64) @ (64, 128).
    // And the Transformer's, on a batch of 128 sentences of 20 positions (2560 rows) and width
    // 128: the feed-forward layer in and out, (2560, 128) @ (128, 512) and (2560, 512) @ (512,
    // 128), and a projection, (2560, 128) @ (128, 128).
    for (const Shape3& s : {Shape3{64, 128, 512}, Shape3{64, 512, 128}, Shape3{32, 64, 32},
                            Shape3{128, 64, 128}, Shape3{2560, 128, 512}, Shape3{2560, 512, 128},
                            Shape3{2560, 128, 128}})
      shapes.push_back(s);
    for (int64_t s : {64, 128, 256, 512}) run_naive(s);
  }
  std::vector<Result> results;
  for (const Shape3& s : shapes)
    for (const Result& r : run_shape(s.M, s.K, s.N, thread_counts, blas, static_cast<int>(samples)))
      results.push_back(r);

  // The clock boosts and throttles with load, so it is measured again at the end and the
  // higher figure taken: the fractions of peak below are then, if anything, underestimates.
  const double ghz = std::max(ghz_start, measure_ghz());
  const double peak_per_thread = ghz * fpc;
  std::printf("# peak = cores x GHz x FLOP/cycle = %u x %.2f x %d = %.1f GFLOP/s (%.1f per thread)\n",
              cores, ghz, fpc, cores * peak_per_thread, peak_per_thread);
  std::printf("# summary: matmul as a fraction of OpenBLAS and of peak (threads x per-thread peak)\n");
  for (const Result& r : results) {
    std::printf("# %-32s matmul %6.1f GFLOP/s = %3.0f%% of peak", r.c.name().c_str(), r.ours,
                100 * r.ours / (peak_per_thread * r.c.threads));
    if (blas)
      std::printf(", openblas %6.1f = %3.0f%% of peak, matmul/openblas = %.2f", r.openblas,
                  100 * r.openblas / (peak_per_thread * r.c.threads), r.ours / r.openblas);
    std::printf("\n");
  }
  for (const Result& two : results) {
    if (two.c.threads != 2) continue;
    for (const Result& one : results) {
      if (one.c.threads != 1 || one.c.M != two.c.M || one.c.K != two.c.K || one.c.N != two.c.N) continue;
      std::printf("# speed-up 1 -> 2 threads, %-20s matmul %.2fx", one.c.shape().c_str(), two.ours / one.ours);
      if (blas) std::printf(", openblas %.2fx", two.openblas / one.openblas);
      std::printf("\n");
    }
  }
  return 0;
}
