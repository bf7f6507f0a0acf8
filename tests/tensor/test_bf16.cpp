// tests/tensor/test_bf16.cpp - bfloat16: rounding float32 to it, and matrix products at
// MatmulPrecision::BFloat16 (tensor/bf16.h, tensor/matmul.h, docs/matmul.md section 9).
//
// Claims: (1) bf16_from_float rounds to nearest, ties to even, at every edge of the 16 dropped
// bits, in every exponent (subnormals, zeros, infinities, NaNs, the largest values), checked
// against a reference that compares distances instead of adding to the bit pattern; widening is
// exact. (2) At BFloat16 the portable kernel gives exactly the float32 kernel's product of the
// rounded inputs, and the avx512_bf16 kernel (vdpbf16ps) the float64 product of the rounded
// inputs within a bound derived from the instruction's roundings, and exactly an emulation of
// Intel's pseudo-code; on every shape class, on every kernel this CPU runs, on 1 to 3 threads.
// (3) The setting belongs to the calling thread and reaches the threads that compute a product
// for it; PackedRight and autograd's matmul and linear follow it, forward and backward. (4) At
// Float32 (the default) nothing changes: the same bits as before bfloat16 existed.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "autograd/ops.h"
#include "seqgrad.h"
#include "tensor/bf16.h"
#include "tensor/matmul.h"
#include "tensor/random.h"
#include "tensor/thread_pool.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::ThreadCount;
using seqgrad::testing::UseKernel;

namespace {

uint32_t bits_of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
float float_of(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// ================================================================================================
// The reference rounding: of the two bfloat16s around x (x's top half, and the next one away from
// zero), the nearer by their distances to x in long double; at equal distances the one whose
// last bit is 0. Past the largest finite bfloat16 the next one up is 2^128, which is infinity.
// (NaNs are checked apart, by their properties.)
uint16_t reference_bf16(float x) {
  const uint32_t u = bits_of(x);
  if (std::isinf(x)) return static_cast<uint16_t>(u >> 16);
  const uint32_t down = u & 0xFFFF0000u, up = down + 0x10000u;
  const long double ax = std::fabs(static_cast<long double>(x));
  const long double vd = std::fabs(static_cast<long double>(float_of(down)));
  const long double vu = (up & 0x7FFFFFFFu) == 0x7F800000u ? std::ldexp(1.0L, 128)
                                                              : std::fabs(static_cast<long double>(float_of(up)));
  if (ax - vd < vu - ax) return static_cast<uint16_t>(down >> 16);
  if (vu - ax < ax - vd) return static_cast<uint16_t>(up >> 16);
  return static_cast<uint16_t>(((down >> 16) & 1u) ? up >> 16 : down >> 16);
}

// The low halves tried under every top half: exact, just above 0, just below, at and just
// above halfway, a quarter and three quarters, all ones; and two random ones per top half.
const uint32_t kLowHalves[] = {0x0000, 0x0001, 0x0002, 0x4000, 0x7FFE, 0x7FFF,
                               0x8000, 0x8001, 0x8002, 0xC000, 0xFFFE, 0xFFFF};

// ================================================================================================
// Products

// n values uniform in [-1, 1) from a fixed seed.
std::vector<real> random_values(int64_t n, uint64_t seed) {
  Generator gen(seed);
  std::vector<real> v(static_cast<size_t>(n));
  for (real& x : v) x = static_cast<real>(2 * gen.uniform() - 1);
  return v;
}

// (The array form: the rounding test checks it against the single-value form.)
std::vector<real> rounded(std::vector<real> v) {
  round_to_bf16(v.data(), v.data(), static_cast<int64_t>(v.size()));
  return v;
}

bool same_bits(const std::vector<real>& a, const std::vector<real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(real)) == 0;
}

struct Dims {
  int64_t M, N, K;
};

// Every shape class the kernels handle: a single element; sizes short of, at and past the
// register tiles (6 x 16, 8 x 32) and the K blocks (256 values in float32, 1024 = 512 pairs in
// the bfloat16 kernel); K odd (a last pair with one value); tiny products, B read in place (up to
// 64 rows), packed; products large enough to be split between threads.
const std::vector<Dims> kShapes = {{1, 1, 1},     {1, 1, 2},     {3, 5, 7},       {8, 32, 2},      {9, 33, 3},
                                   {20, 20, 32},  {7, 70, 31},   {33, 70, 513},   {64, 512, 128},  {150, 97, 300},
                                   {17, 40, 1100}, {130, 200, 90}, {1, 129, 513}, {41, 64, 1024}};

// The operands of one product and its variant: t bit 0 trans_a, 1 trans_b, 2 a bias, 3 C += the
// product (accumulate), 4 C = an addend + the product.
struct Product {
  Dims d;
  int t;
  std::vector<real> A, B, bias, C0, D;
  Product(const Dims& dims, int variant, uint64_t seed = 0)
      : d(dims), t(variant), A(random_values(d.M * d.K, 11 + d.M + seed)), B(random_values(d.K * d.N, 12 + d.N + seed)),
        bias(random_values(d.N, 13)), C0(random_values(d.M * d.N, 14)), D(random_values(d.M * d.N, 15)) {}
  bool trans_a() const { return t & 1; }
  bool trans_b() const { return t & 2; }
  const real* bias_or_null() const { return t & 4 ? bias.data() : nullptr; }
  bool accumulate() const { return t & 8; }
  const real* addend() const { return t & 16 ? D.data() : nullptr; }
  // C after gemm_at(precision) of these operands (or of `a` and `b` in their place).
  std::vector<real> run(MatmulPrecision precision, const std::vector<real>* a = nullptr,
                        const std::vector<real>* b = nullptr) const {
    std::vector<real> C = C0;
    gemm_at(precision, d.M, d.N, d.K, (a ? *a : A).data(), trans_a(), (b ? *b : B).data(), trans_b(), C.data(),
            bias_or_null(), accumulate(), addend());
    return C;
  }
  double a(int64_t i, int64_t k) const { return trans_a() ? A[k * d.M + i] : A[i * d.K + k]; }
  double b(int64_t k, int64_t j) const { return trans_b() ? B[j * d.K + k] : B[k * d.N + j]; }
  // op(A) and op(B) rounded to bfloat16, row-major (M, K) and (K, N).
  std::vector<real> op_a_rounded() const {
    const std::vector<real> ra = rounded(A);
    if (!trans_a()) return ra;
    std::vector<real> r(ra.size());
    for (int64_t k = 0; k < d.K; ++k)
      for (int64_t i = 0; i < d.M; ++i) r[i * d.K + k] = ra[k * d.M + i];
    return r;
  }
  std::vector<real> op_b_rounded() const {
    const std::vector<real> rb = rounded(B);
    if (!trans_b()) return rb;
    std::vector<real> r(rb.size());
    for (int64_t j = 0; j < d.N; ++j)
      for (int64_t k = 0; k < d.K; ++k) r[k * d.N + j] = rb[j * d.K + k];
    return r;
  }
  // What C[i][j] is added to: the addend, C's old value, or nothing.
  double base(int64_t i, int64_t j) const {
    return t & 16 ? D[i * d.N + j] : accumulate() ? C0[i * d.N + j] : 0.0;
  }
};

// How many elements of `C` (the avx512_bf16 kernel's product) are farther from the float64
// product of the bfloat16-rounded inputs than the bound.
//
// The bound. Each product of two bfloat16s is exact in float32 (8 x 8 significant bits). The
// kernel adds them to a float32 sum with vdpbf16ps: two rounded additions per pair of k, so 2P
// for the P = ceil(K / 2) pairs; then each K block's sum is added to C (or to the addend, or to
// C's old value): one more rounding per block and one for what it is added to. With n rounded
// additions and unit roundoff u = 2^-24, the classic bound for a sum computed in any order is
//     |computed - exact| <= n u / (1 - n u) * S,    S = |base| + |bias| + sum over k of |a_k b_k|
// (every partial sum is at most S). The float64 reference is off by at most K 2^-53 S more. No
// subnormal appears here (values near 1 in size; sums of products of 8-bit values are
// multiples of far more than 2^-126), so the flushes to zero add nothing (see the emulation).
int64_t outside_bound(const Product& p, const std::vector<real>& C) {
  const int64_t M = p.d.M, N = p.d.N, K = p.d.K;
  const int64_t pairs = (K + 1) / 2, blocks = (pairs + 511) / 512;  // K blocks of up to 512 pairs
  const double n = static_cast<double>(2 * pairs + blocks + 1), u = std::ldexp(1.0, -24);
  const double gamma = n * u / (1 - n * u) + K * std::ldexp(1.0, -53);
  const std::vector<real> ra = p.op_a_rounded(), rb = p.op_b_rounded();
  int64_t far = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      const double bias = p.bias_or_null() ? p.bias[j] : 0.0;
      double exact = p.base(i, j) + bias, S = std::fabs(p.base(i, j)) + std::fabs(bias);
      const real* ai = ra.data() + i * K;
      const real* bj = rb.data() + j;
      for (int64_t k = 0; k < K; ++k) {
        const double term = static_cast<double>(ai[k]) * bj[k * N];
        exact += term;
        S += std::fabs(term);
      }
      far += !(std::fabs(C[i * N + j] - exact) <= gamma * S);
    }
  return far;
}

// vdpbf16ps on one lane, as Intel's pseudo-code defines it: the pair's high halves first, then
// the low ones, each a fused multiply-add rounded to nearest even, with subnormals treated as
// zero coming in and flushed to zero going out.
float flushed(float x) { return std::fabs(x) < std::numeric_limits<float>::min() ? std::copysign(0.0f, x) : x; }
float dot_pair(float acc, float a_lo, float a_hi, float b_lo, float b_hi) {
  acc = flushed(std::fma(flushed(a_hi), flushed(b_hi), flushed(acc)));
  return flushed(std::fma(flushed(a_lo), flushed(b_lo), acc));
}

// The avx512_bf16 kernel's C emulated, for K <= 1024 (one K block): each element's sum starts
// from the bias (or 0) and takes the pairs (k, k + 1) = (0, 1), (2, 3), ... in order; an odd K's
// last pair has 0 for its second value. Then C = base + sum, one float32 addition (none
// without a base).
std::vector<real> emulated(const Product& p) {
  const int64_t M = p.d.M, N = p.d.N, K = p.d.K;
  REQUIRE(K <= 1024);
  std::vector<real> C(static_cast<size_t>(M * N));
  const std::vector<real> ra = p.op_a_rounded(), rb = p.op_b_rounded();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = p.bias_or_null() ? p.bias[j] : 0.0f;
      const real* ai = ra.data() + i * K;
      const real* bj = rb.data() + j;
      for (int64_t k = 0; k < K; k += 2)
        acc = dot_pair(acc, ai[k], k + 1 < K ? ai[k + 1] : 0.0f, bj[k * N], k + 1 < K ? bj[(k + 1) * N] : 0.0f);
      const bool has_base = p.accumulate() || p.addend();
      C[i * N + j] = has_base ? static_cast<float>(p.base(i, j)) + acc : acc;
    }
  return C;
}

// Runs a block with a bfloat16 kernel, then goes back to the default (or SEQGRAD_BF16_KERNEL's).
struct UseBf16Kernel {
  explicit UseBf16Kernel(const std::string& name) { set_bf16_kernel(name); }
  ~UseBf16Kernel() {
    const char* env = std::getenv("SEQGRAD_BF16_KERNEL");
    try {
      set_bf16_kernel(env && *env ? env : "auto");
    } catch (const std::invalid_argument&) {  // a name this build refuses: the tests that use it fail
      set_bf16_kernel("auto");
    }
  }
  UseBf16Kernel(const UseBf16Kernel&) = delete;
  UseBf16Kernel& operator=(const UseBf16Kernel&) = delete;
};

// The kernels that sum as vdpbf16ps does (avx512_bf16, and avx512_fma by FMAs) this CPU runs.
std::vector<std::string> dot_kernels() {
  std::vector<std::string> out;
  for (const std::string& k : bf16_kernels())
    if (k == "avx512_bf16" || k == "avx512_fma") out.push_back(k);
  return out;
}

bool has_kernel(const char* name) {
  for (const std::string& k : bf16_kernels())
    if (k == name) return true;
  return false;
}

Tensor tensor_of(const std::vector<real>& v, const Shape& shape) { return from_vector(v, shape); }

}  // namespace

// ================================================================================================
// Rounding

TEST_CASE("bf16: rounding to nearest, ties to even, at every edge of the dropped half, in every exponent") {
  // Every top half (all exponents, both signs: zeros, subnormals, normals up to the largest,
  // infinities and NaNs) under each low half of kLowHalves and two random ones.
  Generator gen(7);
  int64_t wrong = 0, nan_wrong = 0, tried = 0;
  for (uint32_t top = 0; top < 0x10000u; ++top) {
    const uint32_t r1 = static_cast<uint32_t>(gen.next_u64() & 0xFFFF), r2 = static_cast<uint32_t>(gen.next_u64() & 0xFFFF);
    for (int l = 0; l < 14; ++l) {
      const uint32_t low = l < 12 ? kLowHalves[l] : l == 12 ? r1 : r2;
      const float x = float_of((top << 16) | low);
      const uint16_t got = bf16_from_float(x);
      ++tried;
      if (std::isnan(x)) {  // a quiet NaN, with the sign and the top payload bits kept
        const bool ok = (got & 0x7F80) == 0x7F80 && (got & 0x0040) && (got & 0x8000) == (top & 0x8000) &&
                        (got & 0x003F) == (top & 0x003F);
        nan_wrong += !ok;
        continue;
      }
      wrong += got != reference_bf16(x);
    }
  }
  CHECK(tried == 65536 * 14);
  CHECK(wrong == 0);
  CHECK(nan_wrong == 0);

  // The edges by name (float32 bits -> bfloat16 bits).
  struct Case {
    uint32_t in;
    uint16_t out;
    const char* what;
  };
  const Case cases[] = {
      {0x3F800000, 0x3F80, "1 is exact"},
      {0x3F807FFF, 0x3F80, "just below halfway: down"},
      {0x3F808000, 0x3F80, "halfway, kept bit even (0): down"},
      {0x3F808001, 0x3F81, "just above halfway: up"},
      {0x3F818000, 0x3F82, "halfway, kept bit odd (1): up, to even"},
      {0x3F80FFFF, 0x3F81, "dropped half all ones: up"},
      {0x3FFF8000, 0x4000, "halfway below 2, odd: up, into the next exponent"},
      {0xBF808000, 0xBF80, "negative halfway, even: toward zero"},
      {0xBF818000, 0xBF82, "negative halfway, odd: away from zero, to even"},
      {0x00000000, 0x0000, "+0"},
      {0x80000000, 0x8000, "-0"},
      {0x00008000, 0x0000, "halfway between 0 and the smallest subnormal: to 0 (even)"},
      {0x00008001, 0x0001, "just above it: the smallest subnormal, 2^-133"},
      {0x00018000, 0x0002, "halfway between subnormals 1 and 2: to 2 (even)"},
      {0x007FFFFF, 0x0080, "the largest float32 subnormal: up to the smallest normal, 2^-126"},
      {0x807FFFFF, 0x8080, "its negative"},
      {0x7F7F7FFF, 0x7F7F, "below halfway past the largest finite bfloat16: stays finite"},
      {0x7F7F8000, 0x7F80, "halfway past the largest finite (odd): infinity"},
      {0x7F7FFFFF, 0x7F80, "the largest float32: infinity"},
      {0xFF7FFFFF, 0xFF80, "the most negative float32: -infinity"},
      {0x7F800000, 0x7F80, "+infinity"},
      {0xFF800000, 0xFF80, "-infinity"},
      {0x7FC00000, 0x7FC0, "the quiet NaN"},
      {0x7F800001, 0x7FC0, "a NaN whose payload is all in the dropped half: still a NaN, quiet"},
      {0xFF810000, 0xFFC1, "a signalling NaN: made quiet, sign and payload kept"},
      {0x7FFFFFFF, 0x7FFF, "a NaN with every bit set: no carry into the sign"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(bf16_from_float(float_of(c.in)) == c.out);
  }
}

TEST_CASE("bf16: widening to float32 is exact, and every bfloat16 comes back as itself") {
  int64_t wrong = 0;
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const float x = bf16_to_float(static_cast<uint16_t>(b));
    wrong += bits_of(x) != b << 16;
    if (!std::isnan(x)) wrong += bf16_from_float(x) != b;
    wrong += bits_of(round_to_bf16(x)) != (std::isnan(x) ? (b | 0x40u) << 16 : b << 16);
  }
  CHECK(wrong == 0);
}

TEST_CASE("bf16: a double rounds once, straight to bfloat16, and arrays round as single values do") {
  // On every float: the same as rounding the float (a float is a double exactly).
  int64_t wrong = 0;
  std::vector<real> xs;
  for (uint32_t top = 0; top < 0x10000u; top += 3)
    for (const uint32_t low : kLowHalves) xs.push_back(float_of((top << 16) | low));
  for (const real x : xs) {
    const double d = round_to_bf16(static_cast<double>(x));
    const float f = round_to_bf16(x);
    wrong += std::isnan(f) ? !std::isnan(d) || std::signbit(d) != std::signbit(f)
                           : bits_of(static_cast<float>(d)) != bits_of(f);
  }
  CHECK(wrong == 0);
  // Where going through float would round twice and go wrong: just above halfway by less than
  // float32 can hold rounds up; the float (exactly halfway) would round to even, down.
  CHECK(round_to_bf16(1 + 0x1p-8 + 0x1p-30) == 1 + 0x1p-7);
  CHECK(round_to_bf16(1 + 0x1p-8 - 0x1p-40) == 1.0);
  CHECK(round_to_bf16(1 + 0x1p-8) == 1.0);                     // halfway, even: down
  CHECK(round_to_bf16(0x1p-134) == 0.0);                       // halfway to the smallest subnormal: 0
  CHECK(round_to_bf16(0x1p-134 + 0x1p-170) == 0x1p-133);       // a little more: up
  CHECK(round_to_bf16(3 * 0x1p-134) == 0x1p-132);              // halfway between subnormals 1 and 2: even
  CHECK(round_to_bf16(-0x1p-140) == 0.0);
  CHECK(std::signbit(round_to_bf16(-0x1p-140)));               // -0
  CHECK(round_to_bf16(0x1.FEp127) == 0x1.FEp127);              // the largest finite
  CHECK(std::isinf(round_to_bf16(0x1.FFp127)));                // halfway past it: infinity
  CHECK(round_to_bf16(0x1.FEFFFFFFp127) == 0x1.FEp127);        // below halfway: stays
  CHECK(std::isinf(round_to_bf16(1e300)));
  CHECK(std::isnan(round_to_bf16(std::numeric_limits<double>::quiet_NaN())));
  // The array form, in place and not, equals the single-value form bit for bit.
  std::vector<real> out(xs.size());
  round_to_bf16(xs.data(), out.data(), static_cast<int64_t>(xs.size()));
  int64_t differ = 0;
  for (size_t i = 0; i < xs.size(); ++i) differ += bits_of(out[i]) != bits_of(round_to_bf16(xs[i]));
  round_to_bf16(xs.data(), xs.data(), static_cast<int64_t>(xs.size()));
  CHECK(differ == 0);
  CHECK(same_bits(xs, out));
}

// ================================================================================================
// The precision setting

TEST_CASE("matmul precision: Float32 by default, per thread, set for a scope and restored after") {
  CHECK(matmul_precision() == MatmulPrecision::Float32);
  {
    BFloat16Scope bf16;
    CHECK(matmul_precision() == MatmulPrecision::BFloat16);
    {
      MatmulPrecisionScope f32(MatmulPrecision::Float32);
      CHECK(matmul_precision() == MatmulPrecision::Float32);
    }
    CHECK(matmul_precision() == MatmulPrecision::BFloat16);
    // Another thread has its own setting: Float32 until it sets one, which stays its own.
    MatmulPrecision seen = MatmulPrecision::BFloat16;
    std::thread other([&seen] {
      seen = matmul_precision();
      set_matmul_precision(MatmulPrecision::BFloat16);
    });
    other.join();
    CHECK(seen == MatmulPrecision::Float32);
    set_matmul_precision(MatmulPrecision::Float32);  // inside the scope: the scope still restores its own
  }
  CHECK(matmul_precision() == MatmulPrecision::Float32);
}

TEST_CASE("bf16 kernels: avx512_bf16 or avx512_fma where the float32 path is avx512, else portable; bad names refused") {
  const std::vector<std::string> kernels = bf16_kernels();
  REQUIRE(!kernels.empty());
  CHECK(kernels.front() == "portable");
  for (const std::string& path : gemm_kernels()) {
    UseKernel use(path);
    UseBf16Kernel automatic("auto");
    CAPTURE(path);
    const std::string chosen = bf16_kernel();
    if (path == "avx512")  // (of the two, the one faster here: the same bits either way)
      CHECK((chosen == "avx512_fma" || (chosen == "avx512_bf16" && has_kernel("avx512_bf16"))));
    else
      CHECK(chosen == "portable");
    for (const std::string& k : kernels) {
      UseBf16Kernel named(k);
      CHECK(std::string(bf16_kernel()) == k);
    }
  }
#if defined(__x86_64__) || defined(__i386__)
  const char* known = "auto, portable, avx512_fma, avx512_bf16";  // every kernel this build has, runnable here or not
#else
  const char* known = "auto, portable";
#endif
  CHECK_THROWS_WITH_AS(set_bf16_kernel("amx"),
                       ("set_bf16_kernel: unknown kernel; expected one of " + std::string(known) + ", got 'amx'").c_str(),
                       std::invalid_argument);
  if (!has_kernel("avx512_bf16")) {
    std::string runnable;
    for (const std::string& k : kernels) runnable += ", " + k;
    CHECK_THROWS_WITH_AS(set_bf16_kernel("avx512_bf16"),
                         ("set_bf16_kernel: this CPU cannot run the avx512_bf16 kernel; expected one of auto" + runnable +
                          ", got 'avx512_bf16'").c_str(),
                         std::invalid_argument);
  }
}

// ================================================================================================
// Float32: unchanged

TEST_CASE("matmul precision Float32: the bits of before, by the reference's tolerance and by pinned hashes") {
  // FNV-1a hashes (over 32-bit words) of C over the 16 variants (transposes, bias, accumulate) of each shape, taken
  // from the build before bfloat16 existed, on the paths that fuse multiply-adds (AVX2, AVX-512,
  // and generic where the target has FMA: they give the same bits). A product computed at
  // Float32 by default, inside a Float32 scope within a BFloat16 one, and after BFloat16
  // products have run and left their buffers behind, must still give them.
  struct Pinned {
    int64_t M, N, K;
    uint64_t hash;
  };
  const Pinned pinned[] = {{3, 5, 7, 0x177200aee50a8a76ull},      {20, 20, 32, 0xb3f383fe0492fb18ull},
                           {33, 70, 130, 0x69147dc9f108d039ull},  {64, 512, 128, 0x1fb3d146f6c74088ull},
                           {150, 97, 300, 0x2ec17b7115ae0d8dull}, {200, 300, 170, 0x7bfce025cbcd3f9full},
                           {1, 129, 513, 0x3f5d8527d3c21ffbull}};
  struct Operands {
    std::vector<real> A, B, bias, C0;
  };
  std::vector<Operands> operands;
  for (const Pinned& d : pinned)
    operands.push_back({random_values(d.M * d.K, 11 + d.M), random_values(d.K * d.N, 12 + d.N), random_values(d.N, 13),
                        random_values(d.M * d.N, 14)});
  auto hash_of = [&](size_t which) {
    const Pinned& d = pinned[which];
    const Operands& o = operands[which];
    uint64_t h = 1469598103934665603ull;
    std::vector<real> C(o.C0.size());
    std::vector<uint32_t> words(C.size());
    for (int t = 0; t < 16; ++t) {
      C = o.C0;
      gemm(d.M, d.N, d.K, o.A.data(), t & 1, o.B.data(), t & 2, C.data(), t & 4 ? o.bias.data() : nullptr, t & 8);
      std::memcpy(words.data(), C.data(), C.size() * sizeof(real));
      const uint32_t* w = words.data();
      for (size_t i = 0, n = words.size(); i < n; ++i) h = (h ^ w[i]) * 1099511628211ull;
    }
    return h;
  };
  for (const std::string& path : seqgrad::testing::fused_kernel_paths()) {
    UseKernel use(path);
    CAPTURE(path);
    for (size_t i = 0; i < std::size(pinned); ++i) {
      CAPTURE(pinned[i].M);
      CAPTURE(pinned[i].N);
      CAPTURE(pinned[i].K);
      CHECK(hash_of(i) == pinned[i].hash);
      BFloat16Scope bf16;
      MatmulPrecisionScope f32(MatmulPrecision::Float32);
      CHECK(hash_of(i) == pinned[i].hash);
    }
    {
      BFloat16Scope bf16;  // leave bfloat16 buffers behind, on this path
      for (const Dims& d : {Dims{150, 97, 300}, Dims{64, 512, 128}}) (void)Product(d, 7).run(MatmulPrecision::BFloat16);
    }
    for (size_t i = 0; i < std::size(pinned); ++i) CHECK(hash_of(i) == pinned[i].hash);
  }
  // And on every path, Float32 products match the reference triple loop as test_matmul's do.
  for (const std::string& path : gemm_kernels()) {
    UseKernel use(path);
    for (const Dims& d : {Dims{33, 70, 513}, Dims{150, 97, 300}}) {
      const Product p(d, 6);
      const std::vector<real> C = p.run(MatmulPrecision::Float32);
      std::vector<real> R(static_cast<size_t>(d.M * d.N));
      gemm_reference(d.M, d.N, d.K, p.A.data(), p.trans_a(), p.B.data(), p.trans_b(), R.data(), p.bias.data());
      int64_t far = 0;
      for (size_t i = 0; i < R.size(); ++i)
        far += !(std::abs(C[i] - R[i]) <=
                 16 * std::numeric_limits<real>::epsilon() * std::sqrt(d.K + 1.0) * (1 + std::abs(R[i])));
      CAPTURE(path);
      CHECK(far == 0);
    }
  }
}

// ================================================================================================
// BFloat16 products

TEST_CASE("bf16 portable: exactly the float32 kernel's product of the rounded inputs, on every float32 path") {
  UseBf16Kernel portable("portable");
  for (const std::string& path : gemm_kernels()) {
    UseKernel use(path);
    for (const Dims& d : kShapes)
      for (const int t : {0, 1, 2, 3, 4, 12, 21, 31}) {
        CAPTURE(path);
        CAPTURE(d.M);
        CAPTURE(d.N);
        CAPTURE(d.K);
        CAPTURE(t);
        if (d.M * d.N * d.K > (1 << 20) && t != 0 && t != 31) continue;  // (random operands take time here)
        const Product p(d, t);
        const std::vector<real> ra = rounded(p.A), rb = rounded(p.B);
        CHECK(same_bits(p.run(MatmulPrecision::BFloat16), p.run(MatmulPrecision::Float32, &ra, &rb)));
      }
  }
}

TEST_CASE("bf16 avx512_bf16 and avx512_fma: within the derived bound of the float64 product of the rounded inputs") {
  if (dot_kernels().empty()) MESSAGE("this CPU has no AVX-512; the avx512_bf16 and avx512_fma kernels are not tested here");
  for (const std::string& kernel : dot_kernels()) {
    CAPTURE(kernel);
    UseBf16Kernel dot(kernel);
    int64_t differ_from_portable = 0;
    for (const Dims& d : kShapes)
      for (const int t : {0, 1, 2, 3, 4, 12, 21, 31}) {
        if (d.M * d.N * d.K > (1 << 20) && t != 0 && t != 31) continue;  // (the float64 reference takes time)
        CAPTURE(d.M);
        CAPTURE(d.N);
        CAPTURE(d.K);
        CAPTURE(t);
        const Product p(d, t);
        const std::vector<real> C = p.run(MatmulPrecision::BFloat16);
        CHECK(outside_bound(p, C) == 0);
        const std::vector<real> ra = rounded(p.A), rb = rounded(p.B);
        differ_from_portable += !same_bits(C, p.run(MatmulPrecision::Float32, &ra, &rb));
      }
    // Not the portable kernel under another name: its other roundings show somewhere.
    CHECK(differ_from_portable > 0);
  }
}

TEST_CASE("bf16 avx512_bf16 and avx512_fma: exactly Intel's pseudo-code of vdpbf16ps, flushes of subnormals included") {
  if (dot_kernels().empty()) MESSAGE("this CPU has no AVX-512; the avx512_bf16 and avx512_fma kernels are not tested here");
  for (const std::string& kernel : dot_kernels()) {
    CAPTURE(kernel);
    UseBf16Kernel dot(kernel);
    std::vector<Dims> shapes = {{29, 70, 301}, {9, 64, 512}};  // several slivers and panels, K up to one block
    for (const Dims& d : kShapes)
      if (d.K <= 1024 && d.M * d.N * d.K <= (1 << 20)) shapes.push_back(d);  // (the emulation takes time)
    for (const Dims& d : shapes) {
      for (const int t : {0, 3, 5, 10, 22}) {
        CAPTURE(d.M);
        CAPTURE(d.N);
        CAPTURE(d.K);
        CAPTURE(t);
        const Product p(d, t);
        CHECK(same_bits(p.run(MatmulPrecision::BFloat16), emulated(p)));
      }
    }
    // Where the instruction departs from IEEE arithmetic, with the portable kernel beside it:
    // (1) the high halves go first: 1 + 2^-24 + (2^-24 + 2^-31): the first add is a tie and stays
    //     1; the second rounds up: 1 + 2^-23 (the other order would give 1 + 2^-22);
    // (2) a product below 2^-126 (2^-70 2^-60 = 2^-130) is flushed to 0 as it is added;
    // (3) a subnormal bfloat16 input (2^-130) counts as 0, though its product (2^-110) is normal.
    struct Tiny {
      std::vector<real> a, b;
      real acc, dot, portable;
    };
    const Tiny tiny[] = {
        {{0x1.02p-24f, 0x1p-24f}, {1, 1}, 1, 1 + 0x1p-23f, 1 + 0x1p-22f},
        {{0x1p-70f, 0}, {0x1p-60f, 0}, 0, 0, 0x1p-130f},
        {{0x1p-130f, 0}, {0x1p20f, 0}, 0, 0, 0x1p-110f},
    };
    for (const bool dot_kernel : {true, false}) {
      UseBf16Kernel use(dot_kernel ? kernel : "portable");
      for (const Tiny& c : tiny) {
        real out = 0;
        const real bias = c.acc;
        gemm_at(MatmulPrecision::BFloat16, 1, 1, 2, c.a.data(), false, c.b.data(), false, &out, &bias);
        CAPTURE(dot_kernel);
        CHECK(out == (dot_kernel ? c.dot : c.portable));
        if (dot_kernel) CHECK(out == dot_pair(c.acc, c.a[0], c.a[1], c.b[0], c.b[1]));
      }
    }
  }
}

TEST_CASE("bf16 avx512_fma: the same bits as avx512_bf16, near the subnormals too, on 1 and 2 threads") {
  if (!has_kernel("avx512_bf16") || !has_kernel("avx512_fma")) {
    MESSAGE("this CPU has no AVX512_BF16; avx512_fma is checked against the emulation above only");
    return;
  }
  // Operands scaled so that the products fall near 2^-126, where both kernels flush: at 2^-64
  // each, products of values near 1 are about 2^-128 (subnormal, so flushed), sums of them
  // straddle 2^-126.
  int64_t flushed_to_zero = 0;
  for (const float scale : {1.0f, 0x1p-62f, 0x1p-63f, 0x1p-64f})
    for (const Dims& d : {Dims{1, 1, 1}, Dims{7, 70, 31}, Dims{29, 70, 301}, Dims{9, 64, 512}, Dims{33, 70, 513},
                          Dims{150, 97, 1100}, Dims{2, 33, 40}, Dims{3, 20, 300}, Dims{12, 40, 129}, Dims{10, 40, 300}})
      for (const int t : {0, 3, 5, 10, 22, 31})
        for (const int threads : {1, 2}) {
          CAPTURE(scale);
          CAPTURE(d.M);
          CAPTURE(d.N);
          CAPTURE(d.K);
          CAPTURE(t);
          CAPTURE(threads);
          Product p(d, t);
          for (std::vector<real>* v : {&p.A, &p.B, &p.bias, &p.C0, &p.D})
            for (real& x : *v) x *= scale;
          ThreadCount c(threads);
          std::vector<real> dot, fma;
          {
            UseBf16Kernel k("avx512_bf16");
            dot = p.run(MatmulPrecision::BFloat16);
          }
          {
            UseBf16Kernel k("avx512_fma");
            fma = p.run(MatmulPrecision::BFloat16);
          }
          CHECK(same_bits(dot, fma));
          if (d.K <= 1024 && d.M * d.N * d.K <= (1 << 20)) CHECK(same_bits(fma, emulated(p)));
          const std::vector<real> plain = p.run(MatmulPrecision::Float32);  // no flushes
          for (size_t i = 0; i < fma.size(); ++i) flushed_to_zero += fma[i] == 0 && plain[i] != 0;
        }
  CHECK(flushed_to_zero > 0);  // the flushes were reached
}

TEST_CASE("bf16: every kernel gives the same bits on 1, 2 and 3 threads, and a row alone has its bits among others") {
  for (const std::string& kernel : bf16_kernels()) {
    UseBf16Kernel use(kernel);
    // (512, 512, 3): one or two pairs of k, made without packing on one thread, blocked on more.
    for (const Dims& d : {Dims{200, 300, 170}, Dims{64, 512, 128}, Dims{150, 97, 1100}, Dims{1000, 40, 257},
                          Dims{512, 512, 3}})
      for (const int t : {0, 23}) {
        CAPTURE(kernel);
        CAPTURE(d.M);
        CAPTURE(d.N);
        CAPTURE(d.K);
        CAPTURE(t);
        const Product p(d, t);
        std::vector<real> one, two, three;
        {
          ThreadCount c(1);
          one = p.run(MatmulPrecision::BFloat16);
        }
        {
          ThreadCount c(2);
          two = p.run(MatmulPrecision::BFloat16);
        }
        {
          ThreadCount c(3);
          three = p.run(MatmulPrecision::BFloat16);
        }
        CHECK(same_bits(one, two));
        CHECK(same_bits(one, three));
      }
    // Rows 0, 17 and 36 of a (37, 50, 700) product, each computed alone (A not transposed).
    const Product whole({37, 50, 700}, 4);
    const std::vector<real> C = whole.run(MatmulPrecision::BFloat16);
    for (const int64_t i : {0, 17, 36}) {
      std::vector<real> row(50);
      gemm_at(MatmulPrecision::BFloat16, 1, 50, 700, whole.A.data() + i * 700, false, whole.B.data(), false, row.data(),
              whole.bias.data());
      CAPTURE(kernel);
      CAPTURE(i);
      CHECK(std::memcmp(row.data(), C.data() + i * 50, 50 * sizeof(real)) == 0);
    }
  }
}

TEST_CASE("bf16: one or two rows alone, without packing or with a PackedRight, have their bits among many, in every variant") {
  // gemm_avx512_bf16.cpp makes a product of one or two rows straight from A and B (small_gemm)
  // and a PackedRight's with a sliver of one or two rows (micro_kernel_rows); both must give
  // each row the bits of the blocked kernels, which a product of 37 rows runs.
  for (const std::string& kernel : bf16_kernels()) {
    UseBf16Kernel use(kernel);
    for (const Dims& d : {Dims{37, 50, 700}, Dims{37, 70, 5}, Dims{37, 33, 64}})
      for (int t = 0; t < 32; ++t) {
        const Product whole(d, t);
        const std::vector<real> C = whole.run(MatmulPrecision::BFloat16);
        const Tensor B = tensor_of(whole.B, whole.trans_b() ? Shape{d.N, d.K} : Shape{d.K, d.N});
        std::unique_ptr<PackedRight> pack;
        {
          BFloat16Scope bf16;
          pack = std::make_unique<PackedRight>(B, whole.trans_b());
        }
        for (const int64_t i0 : {int64_t{0}, int64_t{17}, int64_t{35}})
          for (const int64_t m : {int64_t{1}, int64_t{2}}) {
            CAPTURE(kernel);
            CAPTURE(d.K);
            CAPTURE(t);
            CAPTURE(i0);
            CAPTURE(m);
            // Rows i0 .. i0 + m of op(A), stored as whole.A is (transposed or not), and of C0 and D.
            std::vector<real> a(static_cast<size_t>(m * d.K)), c0(static_cast<size_t>(m * d.N)), dd(c0.size());
            for (int64_t r = 0; r < m; ++r) {
              for (int64_t k = 0; k < d.K; ++k)
                a[static_cast<size_t>(whole.trans_a() ? k * m + r : r * d.K + k)] = static_cast<real>(whole.a(i0 + r, k));
              for (int64_t j = 0; j < d.N; ++j) {
                c0[static_cast<size_t>(r * d.N + j)] = whole.C0[static_cast<size_t>((i0 + r) * d.N + j)];
                dd[static_cast<size_t>(r * d.N + j)] = whole.D[static_cast<size_t>((i0 + r) * d.N + j)];
              }
            }
            const real* addend = whole.addend() ? dd.data() : nullptr;
            std::vector<real> alone = c0, packed = c0;
            gemm_at(MatmulPrecision::BFloat16, m, d.N, d.K, a.data(), whole.trans_a(), whole.B.data(), whole.trans_b(),
                    alone.data(), whole.bias_or_null(), whole.accumulate(), addend);
            {
              BFloat16Scope bf16;
              gemm(m, a.data(), whole.trans_a(), *pack, packed.data(), whole.bias_or_null(), whole.accumulate(), addend);
            }
            const size_t bytes = static_cast<size_t>(m * d.N) * sizeof(real);
            CHECK(std::memcmp(alone.data(), C.data() + i0 * d.N, bytes) == 0);
            CHECK(std::memcmp(packed.data(), C.data() + i0 * d.N, bytes) == 0);
          }
      }
  }
}

TEST_CASE("bf16: NaN and infinity in the inputs: every kernel and path gives NaN in the same places, the rest the same bits") {
  // Which NaN comes out of a sum with a NaN in it (its sign and payload) depends on which operand
  // of an FMA instruction carried it, which the compiler chooses: the kernels promise the same
  // bits for every other result, and NaN where any of them has NaN.
  auto same_but_nan = [](const std::vector<real>& x, const std::vector<real>& y) {
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i]) != std::isnan(y[i])) return false;
      if (!std::isnan(x[i]) && std::memcmp(&x[i], &y[i], sizeof(real)) != 0) return false;
    }
    return true;
  };
  const real inf = std::numeric_limits<real>::infinity(), nan = std::numeric_limits<real>::quiet_NaN();
  for (const Dims& d : {Dims{37, 50, 300}, Dims{1, 50, 300}, Dims{37, 50, 3}})
    for (const int t : {0, 3, 5, 10, 31}) {
      Product p(d, t);
      if (d.M > 1) {  // (a single row with a NaN in it would be NaN throughout)
        p.A[3] = nan;
        p.A[static_cast<size_t>(d.M * d.K / 2)] = inf;
      }
      p.B[7] = -inf;
      p.B[static_cast<size_t>(d.K * d.N - 1)] = nan;
      CAPTURE(d.M);
      CAPTURE(d.K);
      CAPTURE(t);
      std::vector<real> pair_kernels;  // the first of avx512_bf16 and avx512_fma to run: the other must agree
      for (const std::string& kernel : bf16_kernels()) {
        CAPTURE(kernel);
        UseBf16Kernel use(kernel);
        std::vector<real> one, two;
        {
          ThreadCount c(1);
          one = p.run(MatmulPrecision::BFloat16);
        }
        {
          ThreadCount c(2);
          two = p.run(MatmulPrecision::BFloat16);
        }
        int64_t nans = 0, infs = 0;
        for (real x : one) {
          nans += std::isnan(x);
          infs += std::isinf(x);
        }
        CHECK(nans > 0);
        CHECK(infs > 0);
        CHECK(same_but_nan(one, two));
        if (kernel == "portable") continue;  // (its sums are float32's, in float32's order)
        if (pair_kernels.empty()) pair_kernels = one;
        CHECK(same_but_nan(pair_kernels, one));
      }
    }
}

TEST_CASE("bf16: empty products, and K = 0 (the bias, added to C or the addend)") {
  for (const std::string& kernel : bf16_kernels()) {
    UseBf16Kernel use(kernel);
    CAPTURE(kernel);
    const real bias[3] = {1, 2, 3}, addend[6] = {10, 20, 30, 40, 50, 60};
    std::vector<real> C(6, real(0.5));
    gemm_at(MatmulPrecision::BFloat16, 2, 3, 0, nullptr, false, nullptr, false, C.data(), bias);
    CHECK(C == std::vector<real>{1, 2, 3, 1, 2, 3});
    gemm_at(MatmulPrecision::BFloat16, 2, 3, 0, nullptr, false, nullptr, false, C.data(), bias, /*accumulate=*/true);
    CHECK(C == std::vector<real>{2, 4, 6, 2, 4, 6});
    gemm_at(MatmulPrecision::BFloat16, 2, 3, 0, nullptr, false, nullptr, false, C.data(), bias, false, addend);
    CHECK(C == std::vector<real>{11, 22, 33, 41, 52, 63});
    gemm_at(MatmulPrecision::BFloat16, 2, 3, 0, nullptr, false, nullptr, false, C.data());
    CHECK(C == std::vector<real>(6, 0));
    gemm_at(MatmulPrecision::BFloat16, 0, 3, 5, nullptr, false, nullptr, false, C.data());  // nothing to write
    gemm_at(MatmulPrecision::BFloat16, 2, 0, 5, nullptr, false, nullptr, false, C.data());
    CHECK(C == std::vector<real>(6, 0));
  }
}

TEST_CASE("bf16: batched and broadcast matmul, matmul_into and linear take the caller's precision to every thread") {
  // Many small products spread over the pool's threads (one batch entry per task), and a few
  // large ones split inside gemm: each entry must be the 2-D BFloat16 product of its slices,
  // whichever thread computed it; a worker reading a precision of its own would give Float32.
  ThreadCount two(2);
  for (const std::string& kernel : bf16_kernels()) {
    UseBf16Kernel use(kernel);
    CAPTURE(kernel);
    const std::vector<real> qv = random_values(16 * 33 * 16, 5), kv = random_values(16 * 33 * 16, 6);
    const Tensor q = tensor_of(qv, {4, 4, 33, 16}), k = tensor_of(kv, {4, 4, 33, 16});
    const std::vector<real> xv = random_values(3 * 200 * 150, 7), wv = random_values(150 * 170, 8);
    const Tensor x = tensor_of(xv, {3, 200, 150}), w = tensor_of(wv, {150, 170});
    Tensor scores, proj, scores32, into = zeros({3, 200, 170});
    {
      BFloat16Scope bf16;
      scores = matmul(q, k, false, /*trans_b=*/true);
      proj = matmul(x, w);
      matmul_into(into, x, w, false, false, /*accumulate=*/false);
    }
    scores32 = matmul(q, k, false, true);
    int64_t entries_wrong = 0;
    for (int64_t e = 0; e < 16; ++e) {
      std::vector<real> one(33 * 33);
      gemm_at(MatmulPrecision::BFloat16, 33, 33, 16, qv.data() + e * 33 * 16, false, kv.data() + e * 33 * 16, true,
              one.data());
      entries_wrong += std::memcmp(one.data(), scores.data() + e * 33 * 33, one.size() * sizeof(real)) != 0;
    }
    CHECK(entries_wrong == 0);
    CHECK(std::memcmp(scores.data(), scores32.data(), scores.numel() * sizeof(real)) != 0);  // really bfloat16
    for (int64_t e = 0; e < 3; ++e) {
      std::vector<real> one(200 * 170);
      gemm_at(MatmulPrecision::BFloat16, 200, 170, 150, xv.data() + e * 200 * 150, false, wv.data(), false, one.data());
      CHECK(std::memcmp(one.data(), proj.data() + e * 200 * 170, one.size() * sizeof(real)) == 0);
      CHECK(std::memcmp(one.data(), into.data() + e * 200 * 170, one.size() * sizeof(real)) == 0);
    }
    // linear: x W^T + b through gemm with the bias, at the caller's precision.
    const std::vector<real> lw = random_values(170 * 150, 9), lb = random_values(170, 10);
    Tensor y;
    {
      BFloat16Scope bf16;
      y = linear(x, tensor_of(lw, {170, 150}), tensor_of(lb, {170}));
    }
    std::vector<real> want(3 * 200 * 170);
    gemm_at(MatmulPrecision::BFloat16, 600, 170, 150, xv.data(), false, lw.data(), true, want.data(), lb.data());
    CHECK(std::memcmp(want.data(), y.data(), want.size() * sizeof(real)) == 0);
  }
}

TEST_CASE("bf16 PackedRight: packed for bfloat16, the bits of gemm; packed for one precision or kernel, right at another") {
  const std::vector<Dims> shapes = {{3, 20, 32}, {6, 40, 300}, {64, 512, 128}, {97, 101, 600}};
  for (const std::string& kernel : bf16_kernels())
    for (const int threads : {1, 2}) {
      UseBf16Kernel use(kernel);
      ThreadCount count(threads);
      for (const Dims& d : shapes)
        for (const int t : {0, 7, 19}) {
          CAPTURE(kernel);
          CAPTURE(threads);
          CAPTURE(d.M);
          CAPTURE(d.N);
          CAPTURE(d.K);
          CAPTURE(t);
          const Product p(d, t);
          const Tensor B = tensor_of(p.B, p.trans_b() ? Shape{d.N, d.K} : Shape{d.K, d.N});
          auto with_pack = [&](const PackedRight& pack, MatmulPrecision precision) {
            MatmulPrecisionScope scope(precision);
            std::vector<real> C = p.C0;
            gemm(d.M, p.A.data(), p.trans_a(), pack, C.data(), p.bias_or_null(), p.accumulate(), p.addend());
            return C;
          };
          std::unique_ptr<PackedRight> bf16_pack, f32_pack;
          {
            BFloat16Scope bf16;
            bf16_pack = std::make_unique<PackedRight>(B, p.trans_b());
          }
          f32_pack = std::make_unique<PackedRight>(B, p.trans_b());
          const std::vector<real> want16 = p.run(MatmulPrecision::BFloat16), want32 = p.run(MatmulPrecision::Float32);
          CHECK(same_bits(with_pack(*bf16_pack, MatmulPrecision::BFloat16), want16));
          CHECK(same_bits(with_pack(*f32_pack, MatmulPrecision::BFloat16), want16));  // packed for float32
          CHECK(same_bits(with_pack(*bf16_pack, MatmulPrecision::Float32), want32));  // packed for bfloat16
          CHECK(same_bits(with_pack(*f32_pack, MatmulPrecision::Float32), want32));
          for (const std::string& other : bf16_kernels()) {  // packed for one bf16 kernel, used with another
            UseBf16Kernel switched(other);
            CAPTURE(other);
            CHECK(same_bits(with_pack(*bf16_pack, MatmulPrecision::BFloat16), p.run(MatmulPrecision::BFloat16)));
          }
        }
    }
}

TEST_CASE("bf16 autograd: a small model's matmul and linear gradients, forward and backward in bfloat16, within the bound") {
  // loss = sum(linear(x, W, b) * R) + sum(matmul(a, V) * S): dL/dy = R and dL/dz = S exactly,
  // so every gradient of x, W, a and V is one bfloat16 product of known operands; each is
  // checked against the float64 product of the rounded operands with outside_bound's bound
  // (as a Product with that product's operands). b's gradient is a plain float32 sum of R.
  for (const std::string& kernel : bf16_kernels()) {
    UseBf16Kernel use(kernel);
    CAPTURE(kernel);
    const int64_t B = 6, I = 37, O = 5, T = 3, H = 19;
    const std::vector<real> xv = random_values(B * I, 21), wv = random_values(O * I, 22), bv = random_values(O, 23),
                            rv = random_values(B * O, 24), av = random_values(T * B * H, 25), vv = random_values(H * O, 26),
                            sv = random_values(T * B * O, 27);
    Variable x(tensor_of(xv, {B, I}), true), W(tensor_of(wv, {O, I}), true), b(tensor_of(bv, {O}), true);
    Variable a(tensor_of(av, {T, B, H}), true), V(tensor_of(vv, {H, O}), true);
    const Variable R(tensor_of(rv, {B, O})), S(tensor_of(sv, {T, B, O}));
    Tensor y_value;
    // [docs:bf16_scope]
    {
      BFloat16Scope bf16;  // this thread's products in bfloat16 until the block ends
      const Variable y = linear(x, W, b), z = matmul(a, V);  // (B, O) and (T, B, O): a's batch folded into rows
      y_value = y.value().clone();
      const Variable loss = sum(y * R) + sum(z * S);
      loss.backward();  // dx, dW, da and dV: bfloat16 products too
    }
    // [docs:end]
    // A Product (variant t) for a product whose operands are given, for outside_bound.
    auto product = [](int64_t M, int64_t N, int64_t K, int t, std::vector<real> A, std::vector<real> Bm) {
      Product p({M, N, K}, t);
      p.A = std::move(A);
      p.B = std::move(Bm);
      return p;
    };
    auto values = [](const Tensor& t) { return t.to_vector(); };
    Product fy = product(B, O, I, 2 | 4, xv, wv);  // y = x W^T + b
    fy.bias = bv;
    CHECK(outside_bound(fy, values(y_value)) == 0);
    CHECK(outside_bound(product(B, I, O, 0, rv, wv), values(x.grad())) == 0);       // dx = R W
    CHECK(outside_bound(product(O, I, B, 1, rv, xv), values(W.grad())) == 0);       // dW = R^T x
    CHECK(outside_bound(product(T * B, H, O, 2, sv, vv), values(a.grad())) == 0);   // da = S V^T
    CHECK(outside_bound(product(H, O, T * B, 1, av, sv), values(V.grad())) == 0);   // dV = a^T S
    std::vector<real> db(O, 0);
    for (int64_t i = 0; i < B; ++i)
      for (int64_t o = 0; o < O; ++o) db[o] += rv[i * O + o];
    for (int64_t o = 0; o < O; ++o) CHECK(b.grad().data()[o] == doctest::Approx(db[o]).epsilon(1e-5));
    // The same step at Float32 gives other values: the scope really changed the products.
    x.zero_grad();
    const Variable loss32 = sum(linear(x, W, b) * R);
    loss32.backward();
    int64_t same = 0;
    std::vector<real> dx16(static_cast<size_t>(B * I));
    {
      const Product p = product(B, I, O, 0, rv, wv);
      dx16 = p.run(MatmulPrecision::BFloat16);
    }
    for (int64_t i = 0; i < B * I; ++i) same += x.grad().data()[i] == dx16[i];
    CHECK(same < B * I);
  }
}

TEST_CASE("bf16 training: small versions of bench_train's two workloads track float32's loss on the reverse task") {
  // The same model, the same data, the same 60 Adam steps, once in float32 and once with every
  // product in bfloat16 (forward and backward, tensor/matmul.h): both learn, and the bfloat16
  // run's loss over the last ten steps is within 3% of float32's. (When written, the LSTM's ended
  // 0.3% and the Transformer's 0.9% from float32's.)
  const int64_t V = 12, B = 16, S = 6;
  auto batch = [&](int step) {  // reverse: the target is the source backwards
    Generator g(100 + static_cast<uint64_t>(step));
    Tensor src = zeros({B, S}), tgt_in = zeros({B, S}), tgt_out = zeros({B, S});
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t t = 0; t < S; ++t) src.data()[b * S + t] = static_cast<real>(4 + g.randint(V - 4));
      for (int64_t t = 0; t < S; ++t) tgt_out.data()[b * S + t] = src.data()[b * S + S - 1 - t];
      tgt_in.data()[b * S] = 1;  // <bos>, then the target shifted right
      for (int64_t t = 1; t < S; ++t) tgt_in.data()[b * S + t] = tgt_out.data()[b * S + t - 1];
    }
    return std::vector<Tensor>{src, tgt_in, tgt_out};
  };
  const std::vector<int64_t> lengths(static_cast<size_t>(B), S);
  auto run = [&](const std::string& kind, MatmulPrecision precision) {
    manual_seed(21);
    std::shared_ptr<nn::Module> keep;
    std::function<Variable(const std::vector<Tensor>&)> loss_of;
    if (kind == "lstm") {
      auto m = std::make_shared<nn::AttentionSeq2Seq>(
          nn::AttentionSeq2SeqOptions(V, V).with_cell("lstm").with_score("general").with_hidden_size(64).with_embed_dim(32));
      keep = m;
      loss_of = [m, &lengths](const std::vector<Tensor>& d) {
        return cross_entropy(m->forward(d[0], lengths, d[1]).logits, d[2]);
      };
    } else {
      auto m = std::make_shared<nn::Transformer>(
          nn::TransformerOptions(V, V).with_d_model(64).with_nhead(4).with_dim_feedforward(128).with_num_layers(2).with_dropout(0));
      keep = m;
      loss_of = [m, &lengths](const std::vector<Tensor>& d) { return cross_entropy(m->forward(d[0], lengths, d[1]), d[2]); };
    }
    nn::Adam opt(keep->parameters(), nn::AdamOptions(real(3e-3)));
    const MatmulPrecisionScope scope(precision);
    std::vector<double> losses;
    for (int step = 0; step < 60; ++step) {
      opt.zero_grad();
      const Variable loss = loss_of(batch(step));
      loss.backward();
      opt.step();
      losses.push_back(loss.item());
    }
    double last = 0;
    for (size_t i = losses.size() - 10; i < losses.size(); ++i) last += losses[i] / 10;
    return std::make_pair(losses.front(), last);
  };
  for (const std::string kind : {"lstm", "transformer"}) {
    CAPTURE(kind);
    const auto fp32 = run(kind, MatmulPrecision::Float32), bf16 = run(kind, MatmulPrecision::BFloat16);
    CHECK(fp32.second < 0.7 * fp32.first);  // it learns
    CHECK(bf16.second < 0.7 * bf16.first);
    CHECK(std::abs(bf16.second - fp32.second) < 0.03 * fp32.second);
    MESSAGE(kind, ": last ten steps' loss, float32 ", fp32.second, ", bfloat16 ", bf16.second);
  }
}
