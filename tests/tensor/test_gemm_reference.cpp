// tests/tensor/test_gemm_reference.cpp - the blocked reference kernel (tensor/gemm_reference.h)
// against the fast gemm (tensor/gemm_blocked.h), and against the plain triple loop.
//
// Claims: (1) on every kernel path that fuses its multiply-adds, gemm gives exactly the bits of
// gemm_blocked_reference, on every shape class its blocking can trip over (1 x N, M x 1, K = 1
// and K = 0, sizes one past a tile, a panel or a K block, several K blocks, C swept in column
// chunks), in all four transpose combinations, with a bias, accumulating and with an addend, on
// 1 and 2 threads. Bitwise, not to a tolerance, because both sum each element in one order:
// one fused multiply-add per term, k in order, cut into the same K blocks (the header says why).
// Where a path does not fuse (the generic copy in a build whose target has no FMA) the two
// differ by the rounding of each product, and the test asks for that bound instead. (2) The
// reference computes the product at all: it agrees with gemm_reference (tensor/matmul.cpp),
// which sums in double, to a tolerance, so that the fast kernel and the reference cannot be
// wrong the same way.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tensor/gemm_reference.h"
#include "tensor/matmul.h"
#include "tensor/random.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::ThreadCount;
using seqgrad::testing::UseKernel;

namespace {

std::vector<real> random_values(int64_t n, uint64_t seed) {  // uniform in [-1, 1)
  Generator gen(seed);
  std::vector<real> v(static_cast<size_t>(n));
  for (real& x : v) x = static_cast<real>(2 * gen.uniform() - 1);
  return v;
}

struct Dims {
  int64_t M, N, K;
};

// What is added to the product: nothing, C's old values, or an addend.
enum class Base { none, accumulate, addend };

struct Outputs {
  std::vector<real> fast, ref, scale;  // scale: |bias| + |base| + sum_k |a b|, per element
};

// gemm and gemm_blocked_reference on the same random operands. C starts out as random values
// (added to when accumulating; overwritten, and so checked to be written, otherwise).
// The scale, which only the tolerance needs, is computed when `scaled`.
Outputs run_both(const Dims& d, bool trans_a, bool trans_b, bool with_bias, Base base, bool scaled) {
  const int64_t M = d.M, N = d.N, K = d.K;
  const std::vector<real> A = random_values(M * K, 11 + M), B = random_values(K * N, 12 + N);
  const std::vector<real> bias = random_values(N, 13 + K), addend = random_values(M * N, 14);
  Outputs out{random_values(M * N, 15), {}, std::vector<real>(static_cast<size_t>(M * N))};
  out.ref = out.fast;
  const real* b = with_bias ? bias.data() : nullptr;
  const real* add = base == Base::addend ? addend.data() : nullptr;
  for (int64_t i = 0; i < (scaled ? M : 0); ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = (b ? std::abs(b[j]) : 0) + (base == Base::accumulate ? std::abs(out.fast[i * N + j]) : 0) +
                 (add ? std::abs(add[i * N + j]) : 0);
      for (int64_t k = 0; k < K; ++k)
        s += std::abs((trans_a ? A[k * M + i] : A[i * K + k]) * (trans_b ? B[j * K + k] : B[k * N + j]));
      out.scale[i * N + j] = static_cast<real>(s);
    }
  const bool acc = base == Base::accumulate;
  gemm(M, N, K, A.data(), trans_a, B.data(), trans_b, out.fast.data(), b, acc, add);
  gemm_blocked_reference(M, N, K, A.data(), trans_a, B.data(), trans_b, out.ref.data(), b, acc, add);
  return out;
}

// Elements that differ: in any bit when `bitwise`, else by more than the rounding of each of the
// K products (and of the sums they join) can explain, (K + 2) eps of the terms' magnitudes.
int64_t differences(const Outputs& o, int64_t K, bool bitwise) {
  int64_t bad = 0;
  const double eps = std::numeric_limits<real>::epsilon();
  for (size_t i = 0; i < o.ref.size(); ++i) {
    const bool same = bitwise ? std::memcmp(&o.fast[i], &o.ref[i], sizeof(real)) == 0
                              : std::abs(double(o.fast[i]) - o.ref[i]) <= (K + 2) * eps * o.scale[i];
    bad += same ? 0 : 1;
  }
  return bad;
}

// Every blocking edge: the tiny products (M N K <= 2^14), 1 to 3 rows of q K^T (dot products),
// B read in place (small M), packed panels, one past a tile (6 x 16, 8 x 32), a panel and a row
// block (144), K = 0, 1, one K block, one past it (two blocks of 129), three blocks of 171.
// (Small enough for the reference, compiled unoptimised as every test is, to stay quick.)
const std::vector<Dims> kShapes = {
    {1, 1, 1},   {1, 77, 3},   {77, 1, 3},   {1, 300, 70},   {300, 1, 70},   {3, 5, 0},     {7, 9, 1},
    {2, 40, 33}, {3, 70, 300}, {20, 20, 32}, {7, 17, 257},   {9, 33, 256},   {25, 100, 90}, {65, 70, 513},
    {145, 33, 300}, {150, 97, 40}, {70, 90, 170}, {64, 48, 512}};

// The ways a product can be asked for: with a bias or not; overwriting C, adding to it, or
// adding to an addend. (Each path adds the bias and what the product is added to in one place
// whatever the transposes, so three of the six ways cover them.)
struct Flags {
  bool bias;
  Base base;
};
const Flags kFlags[] = {{false, Base::none}, {true, Base::accumulate}, {true, Base::addend}};

// On more than one thread, only the products big enough to be shared out (kParallelMacs).
void check_shapes(const std::vector<Dims>& shapes, bool bitwise) {
  for (const Dims& d : shapes)
    for (int t = 0; t < 4; ++t)
      for (const Flags& f : kFlags) {
        const bool trans_a = t & 1, trans_b = t & 2;
        CAPTURE(d.M);
        CAPTURE(d.N);
        CAPTURE(d.K);
        CAPTURE(t);
        CAPTURE(f.bias);
        CAPTURE(static_cast<int>(f.base));
        CHECK(differences(run_both(d, trans_a, trans_b, f.bias, f.base, !bitwise), d.K, bitwise) == 0);
      }
}

}  // namespace

TEST_CASE("gemm_blocked_reference: the fast gemm's bits on every kernel path, shape, transpose and flag") {
  const std::vector<std::string> fused = seqgrad::testing::fused_kernel_paths();
  for (const std::string& path : gemm_kernels()) {
    UseKernel use(path);
    const bool bitwise = std::find(fused.begin(), fused.end(), path) != fused.end();
    CAPTURE(path);
    CAPTURE(bitwise);
    for (int threads : {1, 2}) {
      ThreadCount tc(threads);
      CAPTURE(threads);
      std::vector<Dims> shapes;
      for (const Dims& d : kShapes)
        if (threads == 1 || d.M * d.N * d.K >= kParallelMacs) shapes.push_back(d);
      check_shapes(shapes, bitwise);
    }
    // A wide C with several K blocks, swept in column chunks (one row block of 144 rows by 1000
    // columns, over 2 x 2^16 reals, on one thread), from a transposed A, which the task then
    // packs once for every K block: once, a slow shape for the reference.
    ThreadCount one(1);
    CHECK(differences(run_both({144, 1000, 300}, true, false, true, Base::accumulate, !bitwise), 300, bitwise) == 0);
  }
}

TEST_CASE("gemm_blocked_reference: agrees with the triple loop that sums in double") {
  // A wrong index or a lost block would be off by terms of order 1; different rounding is off by
  // a few eps times the terms. The bound grows with K, as the rounding of a K-term sum does.
  for (const Dims& d : kShapes)
    for (int t = 0; t < 4; ++t) {
      const bool trans_a = t & 1, trans_b = t & 2;
      const std::vector<real> A = random_values(d.M * d.K, 21), B = random_values(d.K * d.N, 22);
      const std::vector<real> bias = random_values(d.N, 23), addend = random_values(d.M * d.N, 24);
      std::vector<real> R(static_cast<size_t>(d.M * d.N)), D(R.size());
      gemm_blocked_reference(d.M, d.N, d.K, A.data(), trans_a, B.data(), trans_b, R.data(), bias.data(), false,
                             addend.data());
      gemm_reference(d.M, d.N, d.K, A.data(), trans_a, B.data(), trans_b, D.data(), bias.data(), false,
                     addend.data());
      const double eps = std::numeric_limits<real>::epsilon();
      int64_t bad = 0;
      for (size_t i = 0; i < R.size(); ++i)
        if (!(std::abs(double(R[i]) - D[i]) <= 4 * eps * (d.K + 2) * (2 + std::abs(double(D[i]))))) ++bad;
      CAPTURE(d.M);
      CAPTURE(d.N);
      CAPTURE(d.K);
      CAPTURE(t);
      CHECK(bad == 0);
    }
}
