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
//
// At MatmulPrecision::BFloat16 (tensor/matmul.h) a product goes to one of three bfloat16 kernels
// instead, chosen the same way (bf16_kernel()): avx512_bf16 or avx512_fma (tensor/gemm_avx512_bf16.cpp:
// the same sums by vdpbf16ps or by float32 FMAs, when the float32 path is avx512; of the two, the
// one that runs faster on this CPU), or portable, here: op(A) and op(B) rounded to bfloat16 into
// copies, then the float32 kernel. The precision is the calling
// thread's, read once per product here and passed down; the workers never read their own.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "tensor/bf16.h"
#include "tensor/check.h"
#include "tensor/kernel_path.h"
#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

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

// The vdpbf16ps kernel and its FMA twin (tensor/gemm_avx512_bf16.cpp); float32 only. Packed op(B)
// is in 32-bit words, each a pair of bfloat16s, or for the FMA twin (`fma`) in twice as many floats.
#if (defined(__x86_64__) || defined(__i386__)) && !defined(SEQGRAD_DOUBLE)
#define SEQGRAD_HAVE_AVX512_BF16 1
namespace bfloat_avx512 {
void gemm(int64_t M, int64_t N, int64_t K, const float* A, bool trans_a, const float* B, bool trans_b, float* C,
          const float* bias, bool accumulate, const float* addend, const uint32_t* packed_b, bool fma);
int64_t packed_b_size(int64_t K, int64_t N, bool fma);
void pack_b(int64_t K, int64_t N, const float* B, bool trans_b, uint32_t* out, bool fma);
void dot_chains(int64_t rounds);
void fma_chains(int64_t rounds);
}  // namespace bfloat_avx512
#endif

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

// ================================================================================================
// The precision, and the bfloat16 kernels

namespace {

thread_local MatmulPrecision t_precision = MatmulPrecision::Float32;  // each thread's own setting

struct Bf16Kernel {
  int id;  // kPortable, kAvx512Fma or kAvx512Bf16: what a PackedRight records
  const char* name;
  bool (*supported)();
};
constexpr int kPortable = 0, kAvx512Bf16 = 1, kAvx512Fma = 2;
// The kernels of tensor/gemm_avx512_bf16.cpp: op(B) packed in pairs of bfloat16s (as 32-bit words for
// avx512_bf16, as floats for avx512_fma).
bool packs_pairs(int id) { return id == kAvx512Bf16 || id == kAvx512Fma; }

#ifdef SEQGRAD_HAVE_AVX512_BF16
bool has_avx512_bf16() { return has_avx512() && __builtin_cpu_supports("avx512bf16"); }
// Of the two twins, is vdpbf16ps the faster here, per multiply-add? Each instruction is timed on
// its 16 chains, 4,096 rounds, three times, alternating, the best time of each kept: about 0.1
// ms, once. The answer is clear on the CPUs measured (Zen 5: vdpbf16ps twice as fast per
// multiply-add; the Xeon: half as fast), and it cannot change a result: the two kernels give
// the same bits.
bool dot_is_faster() {
  static const bool faster = [] {
    auto seconds = [](void (*chains)(int64_t)) {
      const auto t0 = std::chrono::steady_clock::now();
      chains(4096);
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    double dot = 1e30, fma = 1e30;
    for (int round = 0; round < 3; ++round) {
      dot = std::min(dot, seconds(bfloat_avx512::dot_chains));
      fma = std::min(fma, seconds(bfloat_avx512::fma_chains));
    }
    return dot / 32 < fma / 16;  // seconds per multiply-add: 32 per vdpbf16ps, 16 per FMA
  }();
  return faster;
}
#endif

// Widest first, like kernels().
const std::vector<Bf16Kernel>& bf16_kernel_list() {
  static const std::vector<Bf16Kernel> list = {
#ifdef SEQGRAD_HAVE_AVX512_BF16
      {kAvx512Bf16, "avx512_bf16", has_avx512_bf16},
      {kAvx512Fma, "avx512_fma", has_avx512},
#endif
      {kPortable, "portable", always},
  };
  return list;
}

std::string bf16_kernel_names(bool runnable) {
  std::string names;
  for (const Bf16Kernel& k : bf16_kernel_list())
    if (!runnable || k.supported()) names = k.name + (names.empty() ? "" : ", " + names);
  return names;
}

// The bf16 kernel called `name`; an unknown name, or one this CPU cannot run, is refused.
const Bf16Kernel& find_bf16_kernel(const std::string& name, const char* who) {
  for (const Bf16Kernel& k : bf16_kernel_list()) {
    if (name != k.name) continue;
    check(k.supported(), who, ": this CPU cannot run the ", name, " kernel; expected one of auto, ",
          bf16_kernel_names(true), ", got '", name, "'");
    return k;
  }
  check(false, who, ": unknown kernel; expected one of auto, ", bf16_kernel_names(false), ", got '", name, "'");
  return bf16_kernel_list().back();  // (not reached: check threw)
}

// The bf16 kernel named by set_bf16_kernel or SEQGRAD_BF16_KERNEL: an index into the list, or
// kAuto (the widest the float32 path allows), or kUnread before SEQGRAD_BF16_KERNEL was read.
constexpr int kAuto = -1, kUnread = -2;
std::atomic<int> g_bf16_named{kUnread};

int bf16_named() {
  int named = g_bf16_named.load(std::memory_order_acquire);
  if (named == kUnread) {
    const char* env = std::getenv("SEQGRAD_BF16_KERNEL");
    named = kAuto;
    if (env && *env && std::string(env) != "auto") {
      const Bf16Kernel& k = find_bf16_kernel(env, "SEQGRAD_BF16_KERNEL");
      named = static_cast<int>(&k - bf16_kernel_list().data());
    }
    g_bf16_named.store(named, std::memory_order_release);
  }
  return named;
}

// The kernel for bfloat16 products next to the float32 kernel k: the one named, or else, with
// the avx512 path, avx512_bf16 on a CPU that has AVX512_BF16 and runs it faster than FMAs,
// avx512_fma otherwise; else portable.
const Bf16Kernel& current_bf16_kernel(const Kernel& k) {
  const int named = bf16_named();
  if (named >= 0) return bf16_kernel_list()[static_cast<size_t>(named)];
  for (const Bf16Kernel& b : bf16_kernel_list()) {
    if (!b.supported() || (b.id != kPortable && k.path != KernelPath::avx512)) continue;
#ifdef SEQGRAD_HAVE_AVX512_BF16
    if (b.id == kAvx512Bf16 && !dot_is_faster()) continue;
#endif
    return b;
  }
  return bf16_kernel_list().back();
}

// Thread-local buffers for the portable kernel's rounded copies of A and B.
struct RoundedCopy {
  std::vector<real> values;
  // x[0 .. n) rounded to bfloat16 (by the threads together when there are many).
  const real* of(const real* x, int64_t n) {
    if (static_cast<int64_t>(values.size()) < n) values.resize(static_cast<size_t>(n));
    real* out = values.data();
    constexpr int64_t kGrain = 1 << 16;
    if (n > kGrain && !in_parallel_region() && get_num_threads() > 1)
      parallel_for(0, n, kGrain, [x, out](int64_t i0, int64_t i1) { round_to_bf16(x + i0, out + i0, i1 - i0); });
    else
      round_to_bf16(x, out, n);
    return out;
  }
};
thread_local RoundedCopy tls_rounded_a, tls_rounded_b;

// A bfloat16 product on kernel `bk` beside the float32 kernel k. `packed`, if not null, is op(B)
// packed for bk (a PackedRight's); for the portable kernel B is then already rounded too.
void gemm_bf16(const Kernel& k, const Bf16Kernel& bk, int64_t M, int64_t N, int64_t K, const real* A, bool trans_a,
               const real* B, bool trans_b, real* C, const real* bias, bool accumulate, const real* addend,
               const real* packed) {
#ifdef SEQGRAD_HAVE_AVX512_BF16
  if (packs_pairs(bk.id))
    return bfloat_avx512::gemm(M, N, K, A, trans_a, B, trans_b, C, bias, accumulate, addend,
                               reinterpret_cast<const uint32_t*>(packed), bk.id == kAvx512Fma);
#else
  (void)bk;
#endif
  // Portable: the float32 product of the rounded inputs, by the float32 kernel. (With nothing to
  // compute, or nothing to sum, there is nothing to round.)
  if (M <= 0 || N <= 0 || K <= 0) return k.fn(M, N, K, A, trans_a, B, trans_b, C, bias, accumulate, addend, packed);
  const real* a = tls_rounded_a.of(A, M * K);
  const real* b = packed ? B : tls_rounded_b.of(B, K * N);
  k.fn(M, N, K, a, trans_a, b, trans_b, C, bias, accumulate, addend, packed);
}

}  // namespace

MatmulPrecision matmul_precision() { return t_precision; }

void set_matmul_precision(MatmulPrecision precision) { t_precision = precision; }

MatmulPrecisionScope::MatmulPrecisionScope(MatmulPrecision precision) : saved_(t_precision) {
  t_precision = precision;
}

MatmulPrecisionScope::~MatmulPrecisionScope() { t_precision = saved_; }

const char* bf16_kernel() { return current_bf16_kernel(current_kernel()).name; }

void set_bf16_kernel(const std::string& name) {
  if (name == "auto") {
    g_bf16_named.store(kAuto, std::memory_order_release);
    return;
  }
  const Bf16Kernel& k = find_bf16_kernel(name, "set_bf16_kernel");
  g_bf16_named.store(static_cast<int>(&k - bf16_kernel_list().data()), std::memory_order_release);
}

std::vector<std::string> bf16_kernels() {
  std::vector<std::string> names;
  for (const Bf16Kernel& k : bf16_kernel_list())
    if (k.supported()) names.insert(names.begin(), k.name);
  return names;
}

void gemm_at(MatmulPrecision precision, int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B,
             bool trans_b, real* C, const real* bias, bool accumulate, const real* addend) {
  const Kernel& k = current_kernel();
  if (precision == MatmulPrecision::Float32)
    return k.fn(M, N, K, A, trans_a, B, trans_b, C, bias, accumulate, addend, nullptr);
  gemm_bf16(k, current_bf16_kernel(k), M, N, K, A, trans_a, B, trans_b, C, bias, accumulate, addend, nullptr);
}

void gemm(int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B, bool trans_b, real* C,
          const real* bias, bool accumulate, const real* addend) {
  gemm_at(matmul_precision(), M, N, K, A, trans_a, B, trans_b, C, bias, accumulate, addend);
}

// PackedRight's bfloat16 side (below), a friend of the class.
struct PackedRightAccess {
  static void pack_bf16(PackedRight& pr, const Kernel& k);
  static void gemm_bf16(const Kernel& k, int64_t M, const real* A, bool trans_a, const PackedRight& pr, real* C,
                        const real* bias, bool accumulate, const real* addend);
};

// [docs:packed_right]
PackedRight::PackedRight(const Tensor& b, bool trans_b) : source_(b), trans_b_(trans_b) {
  check(b.dim() == 2, "PackedRight: expected a matrix, got shape ", b.shape());
  const Kernel& k = current_kernel();
  path_ = k.path;
  K_ = trans_b ? b.size(1) : b.size(0);
  N_ = trans_b ? b.size(0) : b.size(1);
  precision_ = matmul_precision();
  if (precision_ == MatmulPrecision::BFloat16) {
    PackedRightAccess::pack_bf16(*this, k);
    return;
  }
  packed_ = Tensor::empty({k.packed_b_size(K_, N_)});  // 64-byte aligned, as gemm's own buffers
  k.pack_b(K_, N_, b.data(), trans_b, packed_.data());
}

void gemm(int64_t M, const real* A, bool trans_a, const PackedRight& b, real* C, const real* bias, bool accumulate,
          const real* addend) {
  const Kernel& k = current_kernel();
  if (matmul_precision() == MatmulPrecision::BFloat16)
    return PackedRightAccess::gemm_bf16(k, M, A, trans_a, b, C, bias, accumulate, addend);
  // Packed for another kernel (switched since), or for bfloat16 products: pack as usual instead.
  const real* packed = k.path == b.path_ && b.precision_ == MatmulPrecision::Float32 ? b.packed_.data() : nullptr;
  k.fn(M, b.N_, b.K_, A, trans_a, b.source_.data(), b.trans_b_, C, bias, accumulate, addend, packed);
}
// [docs:end]

// Packed for the bfloat16 kernel of the moment: in its layout, or, for the portable kernel, in
// the float32 layout of the rounded matrix, which is kept too (the tiny products read B as it is).
void PackedRightAccess::pack_bf16(PackedRight& pr, const Kernel& k) {
  const Bf16Kernel& bk = current_bf16_kernel(k);
  pr.bf16_kernel_ = bk.id;
#ifdef SEQGRAD_HAVE_AVX512_BF16
  if (packs_pairs(bk.id)) {
    const bool fma = bk.id == kAvx512Fma;
    pr.packed_ = Tensor::empty({bfloat_avx512::packed_b_size(pr.K_, pr.N_, fma)});  // 32-bit words or floats
    bfloat_avx512::pack_b(pr.K_, pr.N_, pr.source_.data(), pr.trans_b_, reinterpret_cast<uint32_t*>(pr.packed_.data()),
                          fma);
    return;
  }
#endif
  pr.rounded_ = Tensor::empty(pr.source_.shape());
  round_to_bf16(pr.source_.data(), pr.rounded_.data(), pr.source_.numel());
  pr.packed_ = Tensor::empty({k.packed_b_size(pr.K_, pr.N_)});
  k.pack_b(pr.K_, pr.N_, pr.rounded_.data(), pr.trans_b_, pr.packed_.data());
}

// A bfloat16 product with a pack: with its packed copy when that was packed for the kernel now
// in use, else from the matrix, packed as gemm packs it.
void PackedRightAccess::gemm_bf16(const Kernel& k, int64_t M, const real* A, bool trans_a, const PackedRight& pr,
                                  real* C, const real* bias, bool accumulate, const real* addend) {
  const Bf16Kernel& bk = current_bf16_kernel(k);
  const bool usable = pr.precision_ == MatmulPrecision::BFloat16 && pr.bf16_kernel_ == bk.id &&
                      (packs_pairs(bk.id) || pr.path_ == k.path);
  const real* b = usable && bk.id == kPortable ? pr.rounded_.data() : pr.source_.data();
  seqgrad::gemm_bf16(k, bk, M, pr.N_, pr.K_, A, trans_a, b, pr.trans_b_, C, bias, accumulate, addend,
                     usable ? pr.packed_.data() : nullptr);
}

}  // namespace seqgrad
