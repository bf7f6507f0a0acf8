// tensor/gemm.cpp - gemm(), the entry point of every matrix product: it runs one of the copies of
// the blocked kernel (tensor/gemm_blocked.h), the widest this CPU can run. This file also
// chooses that path for the other kernels compiled per instruction set (tensor/kernel_path.h).
//
// A binary built for one machine may run on another: `make PORTABLE=1` targets every x86-64,
// and a student's laptop may have AVX-512, AVX2 or neither. So the kernel is compiled three
// times, each copy for one instruction set (gemm_generic.cpp, gemm_avx2.cpp, gemm_avx512.cpp),
// and the choice is made here, once, from what the CPU reports:
//   avx512   AVX-512 F/VL/BW/DQ, with the operating system saving the 512-bit registers
//   avx2     AVX2 and FMA
//   generic  anything else
// SEQGRAD_KERNEL=generic|avx2|avx512 in the environment, or set_gemm_kernel(), picks another
// (to compare the paths, as the tests and docs/matmul.md do); one the CPU cannot run is refused.
// The AVX2 and AVX-512 copies give the same bits (tensor/gemm_blocked.h, "Determinism").
#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "tensor/check.h"
#include "tensor/kernel_path.h"
#include "tensor/matmul.h"

namespace seqgrad {

// The copies, each in its own namespace (see tensor/gemm_blocked.h).
#define SEQGRAD_GEMM_DECLARE(ns)                                                                      \
  namespace ns {                                                                                   \
  void gemm(int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B, bool trans_b, \
            real* C, const real* bias, bool accumulate, const real* addend, const real* packed_b);  \
  int64_t packed_b_size(int64_t K, int64_t N);                                                     \
  void pack_b(int64_t K, int64_t N, const real* B, bool trans_b, real* out);                       \
  extern const GemmBlocking blocking;                                                              \
  }
SEQGRAD_GEMM_DECLARE(gemm_generic)
SEQGRAD_GEMM_DECLARE(gemm_avx2)
SEQGRAD_GEMM_DECLARE(gemm_avx512)
#undef SEQGRAD_GEMM_DECLARE

namespace {

using GemmFn = void (*)(int64_t, int64_t, int64_t, const real*, bool, const real*, bool, real*, const real*,
                        bool, const real*, const real*);

struct Kernel {
  KernelPath path;
  const char* name;
  GemmFn fn;
  bool (*supported)();
  int64_t (*packed_b_size)(int64_t K, int64_t N);
  void (*pack_b)(int64_t K, int64_t N, const real* B, bool trans_b, real* out);
  const GemmBlocking* blocking;
};

#if defined(__x86_64__) || defined(__i386__)
// __builtin_cpu_supports asks CPUID, and for AVX and AVX-512 also whether the operating system
// saves those registers (XGETBV): a CPU that has AVX-512 under a kernel that does not is "no".
bool has_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
bool has_avx512() {
  return has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
}
#endif
bool always() { return true; }

// Widest first: the default is the first the CPU supports.
const std::vector<Kernel>& kernels() {
  static const std::vector<Kernel> list = {
#if defined(__x86_64__) || defined(__i386__)
      {KernelPath::avx512, "avx512", gemm_avx512::gemm, has_avx512, gemm_avx512::packed_b_size, gemm_avx512::pack_b,
       &gemm_avx512::blocking},
      {KernelPath::avx2, "avx2", gemm_avx2::gemm, has_avx2, gemm_avx2::packed_b_size, gemm_avx2::pack_b,
       &gemm_avx2::blocking},
#endif
      {KernelPath::generic, "generic", gemm_generic::gemm, always, gemm_generic::packed_b_size, gemm_generic::pack_b,
       &gemm_generic::blocking},
  };
  return list;
}

// The names of the kernels, narrowest first; only those this CPU can run if `runnable`.
std::vector<std::string> kernel_list(bool runnable) {
  std::vector<std::string> names;
  for (const Kernel& k : kernels())
    if (!runnable || k.supported()) names.insert(names.begin(), k.name);
  return names;
}
// The same joined for a message: "generic, avx2, avx512".
std::string kernel_names(bool runnable) {
  std::string names;
  for (const std::string& name : kernel_list(runnable)) names += (names.empty() ? "" : ", ") + name;
  return names;
}

// The kernel called `name`; an unknown name, or one this CPU cannot run, is refused.
const Kernel& find_kernel(const std::string& name, const char* who) {
  for (const Kernel& k : kernels()) {
    if (name != k.name) continue;
    check(k.supported(), who, ": this CPU cannot run the ", name, " kernel; expected one of ",
          kernel_names(true), ", got '", name, "'");
    return k;
  }
  check(false, who, ": unknown kernel; expected one of ", kernel_names(false), ", got '", name, "'");
  return kernels().back();  // (not reached: check threw)
}

// The kernel gemm runs: SEQGRAD_KERNEL's if it is set, else the widest this CPU can run.
const Kernel& default_kernel() {
  const char* env = std::getenv("SEQGRAD_KERNEL");
  if (env && *env) return find_kernel(env, "SEQGRAD_KERNEL");
  for (const Kernel& k : kernels())
    if (k.supported()) return k;
  return kernels().back();
}

// Chosen at the first product (or by set_gemm_kernel); read by every gemm call.
std::atomic<const Kernel*> g_kernel{nullptr};

const Kernel& current_kernel() {
  const Kernel* k = g_kernel.load(std::memory_order_acquire);
  if (!k) {
    k = &default_kernel();  // (two threads may both get here: they choose the same)
    g_kernel.store(k, std::memory_order_release);
  }
  return *k;
}

}  // namespace

KernelPath kernel_path() { return current_kernel().path; }

const char* gemm_kernel() { return current_kernel().name; }

void set_gemm_kernel(const std::string& name) { g_kernel.store(&find_kernel(name, "set_gemm_kernel")); }

std::vector<std::string> gemm_kernels() { return kernel_list(/*runnable=*/true); }

GemmBlocking gemm_blocking(const std::string& name) {
  const Kernel* found = nullptr;
  for (const Kernel& k : kernels())
    if (name == k.name) found = &k;
  check(found != nullptr, "gemm_blocking: expected one of ", kernel_names(/*runnable=*/false), ", got '", name, "'");
  return *found->blocking;
}

void gemm(int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B, bool trans_b, real* C,
          const real* bias, bool accumulate, const real* addend) {
  current_kernel().fn(M, N, K, A, trans_a, B, trans_b, C, bias, accumulate, addend, nullptr);
}

// [docs:packed_right]
PackedRight::PackedRight(const Tensor& b, bool trans_b) : source_(b), trans_b_(trans_b) {
  check(b.dim() == 2, "PackedRight: expected a matrix, got shape ", b.shape());
  const Kernel& k = current_kernel();
  path_ = k.path;
  K_ = trans_b ? b.size(1) : b.size(0);
  N_ = trans_b ? b.size(0) : b.size(1);
  packed_ = Tensor::empty({k.packed_b_size(K_, N_)});  // 64-byte aligned, as gemm's own buffers
  k.pack_b(K_, N_, b.data(), trans_b, packed_.data());
}

void gemm(int64_t M, const real* A, bool trans_a, const PackedRight& b, real* C, const real* bias, bool accumulate,
          const real* addend) {
  const Kernel& k = current_kernel();
  // Packed for another kernel (switched since): that one's layout; pack as usual instead.
  const real* packed = k.path == b.path_ ? b.packed_.data() : nullptr;
  k.fn(M, b.N_, b.K_, A, trans_a, b.source_.data(), b.trans_b_, C, bias, accumulate, addend, packed);
}
// [docs:end]

}  // namespace seqgrad
