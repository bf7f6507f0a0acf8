// tests/test_util.h - small helpers shared by the tests.
#pragma once

#include <doctest/doctest.h>

#include <sys/wait.h>  // POSIX: waitpid
#include <unistd.h>    // POSIX: getpid (TempDir names), fork, pipe

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "seqgrad.h"

namespace seqgrad::testing {

// True in a build instrumented by AddressSanitizer or ThreadSanitizer (make sanitize, make tsan),
// where code runs 5 to 20 times slower: a long test may then check fewer cases of the same
// code. (GCC says it is sanitizing with macros, clang with __has_feature.)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// True when a and b have the same shape and every |a - b| <= atol + rtol |b|.
inline bool allclose(const Tensor& a, const Tensor& b, double atol = 1e-5, double rtol = 1e-5) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data()[i], y = b.data()[i];
    if (!(std::abs(x - y) <= atol + rtol * std::abs(y))) return false;
  }
  return true;
}

// Random values with |x| >= 0.1: away from the kinks of relu/abs/max, where finite differences
// straddle a corner and are meaningless.
inline Tensor randn_away_from_zero(const Shape& shape) {
  return map(randn(shape), [](real v) { return v >= 0 ? v + real(0.1) : v - real(0.1); });
}

// Sets the pool's thread count for a scope, then puts back the one before (even if a check
// throws):  { ThreadCount two(2); ... }
struct ThreadCount {
  explicit ThreadCount(int n) : saved(get_num_threads()) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(saved); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;
  int saved;
};

// Runs a block on one of gemm's kernel paths (tensor/gemm.cpp), restoring the path before:
//   for (const std::string& k : gemm_kernels()) { UseKernel path(k); ... }
struct UseKernel {
  explicit UseKernel(const std::string& name) : saved(gemm_kernel()) { set_gemm_kernel(name); }
  ~UseKernel() { set_gemm_kernel(saved); }
  UseKernel(const UseKernel&) = delete;
  UseKernel& operator=(const UseKernel&) = delete;
  std::string saved;
};

// The kernel paths this CPU runs that fuse each multiply-add: AVX2 and AVX-512, and the generic
// copy where the build's target has FMA. These must all give the same bits.
inline std::vector<std::string> fused_kernel_paths() {
  std::vector<std::string> fused;
  for (const std::string& p : gemm_kernels())
#if defined(__FMA__)
    fused.push_back(p);
#else
    if (p != "generic") fused.push_back(p);
#endif
  return fused;
}

// A whole file's bytes ("" if it cannot be read), and writing them (checked).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

// A fresh directory of its own (named by process and count), removed with everything in it at
// the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("seqgrad-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
  size_t count_entries() const {
    using It = std::filesystem::directory_iterator;
    return static_cast<size_t>(std::distance(It(path), It()));
  }
};

// Positive values in [0.5, 2): for log, sqrt, pow and division.
inline Tensor positive(const Shape& shape) {
  return map(rand(shape), [](real v) { return real(0.5) + real(1.5) * v; });
}

// Runs `body` in a child process (fork) and returns the text it returned: for what must not
// happen to the test process itself (a file-size limit, another user id). The child exits
// without running destructors or atexit handlers.
inline std::string in_child_process(const std::function<std::string()>& body) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(fds[0]);
    std::string report;
    try {
      report = body();
    } catch (const std::exception& e) {
      report = std::string("uncaught: ") + e.what();
    }
    [[maybe_unused]] const ssize_t written = write(fds[1], report.data(), report.size());
    _exit(0);
  }
  close(fds[1]);
  std::string report;
  char buffer[512];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) report.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return report;
}

// The registered attention scores that can be built to score queries of query_size against keys
// of key_size (a student's too, when linked in), in the registry's order: what a refusal of a
// score that does not fit offers instead. The library's own that fit any sizes are checked to
// be among them.
inline std::vector<std::string> scores_that_fit(int64_t query_size, int64_t key_size) {
  std::vector<std::string> fit;
  for (const std::string& name : nn::scores().names()) try {
      nn::make_score(name, query_size, key_size, 0, 1);
      fit.push_back(name);
    } catch (const std::invalid_argument&) {
    }
  for (const char* own : {"additive", "concat", "general", "location", "mlp"})
    CHECK(std::find(fit.begin(), fit.end(), own) != fit.end());
  return fit;
}

}  // namespace seqgrad::testing

// CHECK_GRAD(fn, {inputs...}): gradcheck with the worst element reported on failure.
#define CHECK_GRAD(fn, ...)                                                    \
  do {                                                                         \
    const ::seqgrad::GradcheckResult r_ = ::seqgrad::gradcheck(fn, __VA_ARGS__); \
    CHECK_MESSAGE(r_.ok, r_.message);                                          \
  } while (0)
