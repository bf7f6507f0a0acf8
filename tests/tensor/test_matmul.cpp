// tests/tensor/test_matmul.cpp - the fast gemm against the reference triple loop.
//
// Three claims: (1) gemm computes the same products as gemm_reference on every kind of shape
// the blocking can trip over (1x1, primes, sizes one past a tile or a cache block, K = 1, empty
// dimensions) and for all four transpose combinations; (2) matmul's batching and broadcasting
// line batch entries up correctly; (3) the result is bit-identical on 1, 2 and 3 threads.
// Pinned error messages for bad shapes close the file.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tensor/elementwise.h"
#include "tensor/matmul.h"
#include "tensor/random.h"
#include "tensor/thread_pool.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::UseKernel;
using seqgrad::testing::ThreadCount;

namespace {

// n values uniform in [-1, 1) from a fixed seed.
std::vector<real> random_values(int64_t n, uint64_t seed) {
  Generator gen(seed);
  std::vector<real> v(static_cast<size_t>(n));
  for (real& x : v) x = static_cast<real>(2 * gen.uniform() - 1);
  return v;
}

// The reference accumulates in double, the kernel in `real` and in another order. With inputs
// in [-1, 1) the rounding error of a K-term sum grows like sqrt(K) eps |terms|, so the tolerance
// is a few eps times sqrt(K) times the result's scale. A wrong index gives errors of order 1.
double tolerance(int64_t K, double ref) {
  const double eps = std::numeric_limits<real>::epsilon();
  return 16 * eps * std::sqrt(static_cast<double>(K) + 1) * (1 + std::abs(ref));
}

// Runs gemm and gemm_reference on random operands; counts elements outside the tolerance.
// C starts out as NaN so an element the kernel forgets to write is caught too.
// With_bias: both add a bias row (each sum starts from bias[j]).
int64_t gemm_mismatches(int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b, bool with_bias = false) {
  const std::vector<real> A = random_values(M * K, 1 + M), B = random_values(K * N, 2 + N);
  const std::vector<real> bias = random_values(N, 5 + K);
  const real* b = with_bias ? bias.data() : nullptr;
  std::vector<real> C(static_cast<size_t>(M * N), std::numeric_limits<real>::quiet_NaN());
  std::vector<real> R(static_cast<size_t>(M * N));
  gemm(M, N, K, A.data(), trans_a, B.data(), trans_b, C.data(), b);
  gemm_reference(M, N, K, A.data(), trans_a, B.data(), trans_b, R.data(), b);
  int64_t bad = 0;
  for (int64_t i = 0; i < M * N; ++i)
    if (!(std::abs(C[i] - R[i]) <= tolerance(K, R[i]))) ++bad;
  return bad;
}

// gemm's output on `threads` threads, for the determinism tests.
std::vector<real> gemm_on(int threads, int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b) {
  ThreadCount tc(threads);
  const std::vector<real> A = random_values(M * K, 3), B = random_values(K * N, 4);
  std::vector<real> C(static_cast<size_t>(M * N));
  gemm(M, N, K, A.data(), trans_a, B.data(), trans_b, C.data());
  return C;
}

bool bit_identical(const std::vector<real>& x, const std::vector<real>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(real)) == 0;
}

bool tensors_close(const Tensor& fast, const Tensor& ref, int64_t K) {
  if (fast.shape() != ref.shape()) return false;
  for (int64_t i = 0; i < ref.numel(); ++i)
    if (!(std::abs(fast.data()[i] - ref.data()[i]) <= tolerance(K, ref.data()[i]))) return false;
  return true;
}

Tensor random_tensor(const Shape& shape, uint64_t seed) {
  const std::vector<real> v = random_values(numel(shape), seed);
  Tensor t = Tensor::empty(shape);
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(real));
  return t;
}

struct Dims {
  int64_t M, N, K;
};

// gemm against gemm_reference on each shape, in all four transpose combinations.
void check_all_transposes(const std::vector<Dims>& shapes, bool with_bias = false) {
  for (const Dims& d : shapes)
    for (int t = 0; t < 4; ++t) {
      const bool trans_a = t & 1, trans_b = t & 2;
      CAPTURE(d.M);
      CAPTURE(d.N);
      CAPTURE(d.K);
      CAPTURE(trans_a);
      CAPTURE(trans_b);
      CHECK(gemm_mismatches(d.M, d.N, d.K, trans_a, trans_b, with_bias) == 0);
    }
}

// gemm on 1, 2 and 3 threads gives the same bits on each shape, in all four transpose
// combinations.
void check_thread_counts_agree(const std::vector<Dims>& shapes) {
  for (const Dims& d : shapes)
    for (int t = 0; t < 4; ++t) {
      CAPTURE(d.M);
      CAPTURE(d.N);
      CAPTURE(d.K);
      CAPTURE(t);
      const std::vector<real> one = gemm_on(1, d.M, d.N, d.K, t & 1, t & 2);
      CHECK(bit_identical(one, gemm_on(2, d.M, d.N, d.K, t & 1, t & 2)));
      CHECK(bit_identical(one, gemm_on(3, d.M, d.N, d.K, t & 1, t & 2)));
    }
}

}  // namespace

// ================================================================================================
// gemm against gemm_reference

TEST_CASE("gemm: matches the reference on odd shapes, all transpose combinations") {
  // Sizes around the register tile (6 x 16 floats), the K block (256) and the M block, primes,
  // single rows and columns, and K = 1.
  const std::vector<Dims> shapes = {
      {1, 1, 1},     {1, 1, 7},     {2, 3, 5},     {5, 1, 3},     {1, 9, 4},    {7, 13, 17},
      {6, 16, 8},    {12, 32, 1},   {13, 33, 2},   {5, 15, 31},   {7, 17, 33},  {1, 37, 19},
      {31, 1, 29},   {97, 101, 103}, {64, 128, 64}, {6, 16, 257}, {11, 19, 513}, {150, 40, 30},
      {301, 7, 11},  {3, 700, 5},   {40, 300, 600}, {173, 211, 127}, {2, 4100, 3}};
  check_all_transposes(shapes);
}

TEST_CASE("gemm: a bias row is added on every path (tiny, dot products, B in place, packed, K = 0)") {
  // Tiny products (at most 2^14 multiply-adds) in their row groups of 4, 2 and 1 and with a
  // ragged last vector; tiny_dots (B transposed, under 4 rows); B read in place (M <= 6) and
  // packed; N a whole number of panels and not; K over two blocks; an empty sum.
  const std::vector<Dims> shapes = {{1, 1, 1},   {3, 20, 32},  {7, 13, 17},   {20, 32, 20},  {2, 9, 5},
                                    {6, 40, 300}, {64, 128, 64}, {97, 101, 103}, {150, 40, 600}, {5, 7, 0}};
  check_all_transposes(shapes, /*with_bias=*/true);
  ThreadCount two(2);
  CHECK(gemm_mismatches(300, 200, 100, false, true, true) == 0);
  CHECK(gemm_mismatches(64, 512, 128, false, true, true) == 0);  // short C: column blocks
}

namespace {

// gemm with accumulate on C0: C0 + op(A) op(B) (+ bias). Counts elements that differ from C0
// plus the product computed on its own, by gemm (bit for bit when K fits one K block of 256,
// where accumulating changes no rounding) or, for longer K, by the reference within tolerance.
// Also checks gemm_reference's own accumulate against C0 plus its product, and that an addend
// C0 (C = addend + product, C's old values unread) gives the accumulated result to the bit, in
// both.
int64_t accumulate_mismatches(int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b, bool with_bias) {
  const std::vector<real> A = random_values(M * K, 7 + M), B = random_values(K * N, 8 + N);
  const std::vector<real> bias = random_values(N, 9 + K), C0 = random_values(M * N, 10 + K);
  const real* b = with_bias ? bias.data() : nullptr;
  std::vector<real> C = C0, P(static_cast<size_t>(M * N)), R = C0, RP(static_cast<size_t>(M * N));
  std::vector<real> D(static_cast<size_t>(M * N), real(1e9)), RD = D;  // overwritten, never read
  gemm(M, N, K, A.data(), trans_a, B.data(), trans_b, C.data(), b, /*accumulate=*/true);
  gemm(M, N, K, A.data(), trans_a, B.data(), trans_b, P.data(), b);
  gemm(M, N, K, A.data(), trans_a, B.data(), trans_b, D.data(), b, /*accumulate=*/false, /*addend=*/C0.data());
  gemm_reference(M, N, K, A.data(), trans_a, B.data(), trans_b, R.data(), b, /*accumulate=*/true);
  gemm_reference(M, N, K, A.data(), trans_a, B.data(), trans_b, RP.data(), b);
  gemm_reference(M, N, K, A.data(), trans_a, B.data(), trans_b, RD.data(), b, false, C0.data());
  int64_t bad = 0;
  for (int64_t i = 0; i < M * N; ++i) {
    const real expect = C0[i] + P[i];
    if (K <= 256 ? C[i] != expect : !(std::abs(C[i] - R[i]) <= tolerance(K, R[i]))) ++bad;
    if (R[i] != C0[i] + RP[i]) ++bad;
    if (D[i] != C[i] || RD[i] != R[i]) ++bad;
  }
  return bad;
}

}  // namespace

TEST_CASE("gemm: accumulate adds the product to C, addend to a given matrix, on every path (tiny, dot products, B in place, packed)") {
  // The same paths as the bias test above, with and without a bias, then split over threads:
  // along M, and a short C cut into column blocks (the weight gradients of an RNN step).
  const std::vector<Dims> shapes = {{1, 1, 1},    {3, 20, 32},   {7, 13, 17},    {20, 32, 20},
                                    {2, 9, 5},    {6, 40, 300},  {64, 128, 64},  {97, 101, 103},
                                    {150, 40, 600}, {5, 7, 0},   {1, 20, 128},   {20, 128, 1},
                                    {50, 200, 130}, {64, 100, 300}, {65, 130, 70}};
  for (const Dims& d : shapes)
    for (int t = 0; t < 8; ++t) {
      const bool trans_a = t & 1, trans_b = t & 2, with_bias = t & 4;
      CAPTURE(d.M);
      CAPTURE(d.N);
      CAPTURE(d.K);
      CAPTURE(t);
      CHECK(accumulate_mismatches(d.M, d.N, d.K, trans_a, trans_b, with_bias) == 0);
    }
  ThreadCount two(2);
  for (int t = 0; t < 4; ++t) {
    CAPTURE(t);
    CHECK(accumulate_mismatches(300, 200, 100, t & 1, t & 2, false) == 0);
    CHECK(accumulate_mismatches(512, 128, 64, t & 1, t & 2, false) == 0);
    CHECK(accumulate_mismatches(64, 512, 128, t & 1, t & 2, false) == 0);
    CHECK(accumulate_mismatches(128, 128, 1280, t & 1, t & 2, false) == 0);
    CHECK(accumulate_mismatches(200, 300, 700, t & 1, t & 2, true) == 0);
  }
}

TEST_CASE("gemm: a row of C has the same bits however many rows and columns are computed with it") {
  // What makes decoding a batch of sentences give exactly what decoding each alone gives: the
  // first rows and columns of a product, computed alone (tiny kernels, a single row, the dot
  // products of B transposed) and inside products of up to 300 rows (4-row tiles, the packed
  // path, threads), are the same to the bit. K over one and several K blocks, with and without
  // a bias, every transpose, and accumulating onto C.
  for (const int64_t K : {1, 7, 20, 64, 128, 300, 700}) {
    for (int t = 0; t < 16; ++t) {
      const bool trans_a = t & 1, trans_b = t & 2, with_bias = t & 4, accumulate = t & 8;
      CAPTURE(K);
      CAPTURE(t);
      const int64_t M = 300, N = 150;
      const std::vector<real> A = random_values(M * K, 41 + K), B = random_values(K * N, 42 + K);
      const std::vector<real> bias = random_values(N, 43), C0 = random_values(M * N, 44);
      // Rows [0, m) and columns [0, n) of op(A) op(B): op(A) and op(B) cut out and stored as
      // gemm reads them (a transposed A is (K, m), a transposed B is (n, K)).
      auto corner = [&](int64_t m, int64_t n) {
        std::vector<real> a(static_cast<size_t>(m * K)), b(static_cast<size_t>(K * n));
        for (int64_t i = 0; i < m; ++i)
          for (int64_t k = 0; k < K; ++k) (trans_a ? a[k * m + i] : a[i * K + k]) = trans_a ? A[k * M + i] : A[i * K + k];
        for (int64_t k = 0; k < K; ++k)
          for (int64_t j = 0; j < n; ++j) (trans_b ? b[j * K + k] : b[k * n + j]) = trans_b ? B[j * K + k] : B[k * N + j];
        std::vector<real> c(static_cast<size_t>(m * n));
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) c[i * n + j] = C0[i * N + j];
        gemm(m, n, K, a.data(), trans_a, b.data(), trans_b, c.data(), with_bias ? bias.data() : nullptr, accumulate);
        return c;
      };
      const std::vector<real> alone = corner(1, 20);  // one row of 20 columns: a decoder step's shape
      for (const int threads : {1, 2})
        for (const int64_t m : {1, 2, 3, 4, 5, 7, 64, 300}) {  // tiny alone, tiles of 2 and 4, packed
          ThreadCount count(threads);
          CAPTURE(m);
          CAPTURE(threads);
          const int64_t n = m == 1 ? 20 : N;
          const std::vector<real> c = corner(m, n);
          CHECK(bit_identical(std::vector<real>(c.begin(), c.begin() + 20), alone));
        }
    }
  }
}

TEST_CASE("matmul_into: writes or adds the product into a given tensor, batched and broadcast") {
  const Tensor a = random_tensor({2, 1, 4, 6}, 31), b = random_tensor({3, 6, 5}, 32);
  const Tensor product = matmul(a, b);  // (2, 3, 4, 5)
  Tensor out = random_tensor({2, 3, 4, 5}, 33);
  const std::vector<real> before = out.to_vector();
  matmul_into(out, a, b, false, false, /*accumulate=*/true);
  for (int64_t i = 0; i < out.numel(); ++i) CHECK(out.data()[i] == before[i] + product.data()[i]);
  matmul_into(out, a, b, false, false, /*accumulate=*/false);
  CHECK(bit_identical(out.to_vector(), product.to_vector()));
  // The transposed operands of a backward: dW = dY^T X.
  const Tensor dY = random_tensor({60, 40}, 34), X = random_tensor({60, 24}, 35);
  Tensor dW = zeros({40, 24});
  matmul_into(dW, dY, X, /*trans_a=*/true, false, /*accumulate=*/true);
  CHECK(bit_identical(dW.to_vector(), matmul(dY, X, true, false).to_vector()));

  Tensor wrong = zeros({2, 3, 5, 4}), undefined;
  CHECK_THROWS_WITH_AS(matmul_into(wrong, a, b, false, false, false),
                       "matmul_into: expected out of shape [2, 3, 4, 5], got [2, 3, 5, 4]", std::invalid_argument);
  Tensor square = random_tensor({4, 4}, 36), alias = square.reshape({4, 4});
  CHECK_THROWS_WITH_AS(matmul_into(alias, square, square, false, false, true),
                       "matmul_into: expected out to share no memory with the operands, got out sharing a's or b's",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(matmul_into(undefined, a, b, false, false, false),
                       "matmul_into: expected a defined out tensor, got an undefined one", std::invalid_argument);
}

TEST_CASE("linear: x W^T + b equals matmul then add, for any number of batch axes") {
  const Tensor w = random_tensor({5, 7}, 21), b = random_tensor({5}, 22);
  for (const Shape& xs : {Shape{7}, Shape{3, 7}, Shape{2, 4, 7}, Shape{0, 7}}) {
    CAPTURE(xs);
    const Tensor x = random_tensor(xs, 23);
    Shape ys = xs;
    ys.back() = 5;
    const Tensor x2 = x.reshape({-1, 7});
    const Tensor composed = (matmul_reference(x2, w, false, true) + b).reshape(ys);
    CHECK(tensors_close(linear(x, w, b), composed, 7));
    CHECK(tensors_close(linear(x, w, Tensor()), matmul_reference(x2, w, false, true).reshape(ys), 7));
  }
  // No inputs at all: every output is its bias.
  const Tensor empty_in = linear(Tensor::empty({2, 0}), Tensor::empty({5, 0}), b);
  CHECK(empty_in.shape() == Shape{2, 5});
  CHECK(empty_in.data()[7] == b.data()[2]);
  CHECK_THROWS_WITH_AS(linear(Tensor::empty({2, 6}), w, b),
                       "linear: expected x (..., in) and weight (out, in) with the same in, got [2, 6] and [5, 7]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(linear(Tensor::empty({2, 7}), w, Tensor::empty({7})),
                       "linear: expected bias of shape [5], got [7]", std::invalid_argument);
}

TEST_CASE("gemm: RNN and attention sizes and both ways of reading B match the reference") {
  // Up to 24 rows on the AVX2 path (4 slivers of 6) and 64 on the AVX-512 one (8 of 8) B is read
  // in place (only a ragged last panel is packed) unless its rows are a multiple of 4 KB long;
  // otherwise all of B is packed. Cover both sides of each rule, for either path (CI runs the
  // suite under each kernel: make test-kernels). A short
  // C is cut into 4 column blocks per thread when A is small ((64, 512, 128)), 2 when it is not
  // ((128, 128, 1280), a Transformer's weight gradient), so two threads. A stored (M, K) is read
  // in place unless its rows are a multiple of 4 KB long ((20, 1024, 30), (50, 2048, 20)).
  ThreadCount two(2);
  const std::vector<Dims> shapes = {{64, 512, 128}, {64, 128, 512}, {32, 32, 64}, {256, 256, 256},
                                    {257, 255, 300}, {24, 40, 20},  {25, 40, 20},  {20, 1024, 30},
                                    {20, 1000, 30},  {6, 1024, 9},  {300, 50, 600}, {400, 17, 9},
                                    {128, 128, 1280}, {50, 2048, 20}, {64, 100, 300}, {65, 100, 300},
                                    {50, 200, 130}};
  check_all_transposes(shapes);
}

TEST_CASE("gemm: empty dimensions") {
  // K = 0: every output is an empty sum, 0, even where C held garbage.
  std::vector<real> C(12, real(7));
  gemm(3, 4, 0, nullptr, false, nullptr, false, C.data());
  for (real c : C) CHECK(c == 0);
  // M = 0 or N = 0: nothing to write, nothing read.
  std::vector<real> A(5, 1), B(5, 1);
  gemm(0, 5, 1, A.data(), false, B.data(), false, nullptr);
  gemm(5, 0, 1, A.data(), false, B.data(), false, nullptr);
  gemm(0, 0, 0, nullptr, true, nullptr, true, nullptr);

  CHECK(matmul(zeros({3, 0}), zeros({0, 4})).shape() == Shape{3, 4});
  CHECK(matmul(zeros({3, 0}), zeros({0, 4})).to_vector() == std::vector<real>(12, 0));
  CHECK(matmul(zeros({0, 5}), zeros({5, 4})).shape() == Shape{0, 4});
  CHECK(matmul(zeros({2, 5}), zeros({5, 0})).shape() == Shape{2, 0});
  CHECK(matmul(zeros({0, 2, 5}), zeros({5, 3})).shape() == Shape{0, 2, 3});
}

TEST_CASE("gemm: exact on small integers") {
  // Integer-valued inputs make every partial sum exact, so any summation order gives the same
  // answer: a check of the arithmetic with no tolerance at all.
  //   [1 2 3]   [1 0]   [ 4  8]
  //   [4 5 6] @ [0 1] = [10 17]
  //             [1 2]
  const std::vector<real> A = {1, 2, 3, 4, 5, 6}, B = {1, 0, 0, 1, 1, 2};
  std::vector<real> C(4);
  gemm(2, 2, 3, A.data(), false, B.data(), false, C.data());
  CHECK(C == std::vector<real>{4, 8, 10, 17});
  // The same operands stored transposed: A^T is (3, 2), B^T is (2, 3).
  const std::vector<real> At = {1, 4, 2, 5, 3, 6}, Bt = {1, 0, 1, 0, 1, 2};
  gemm(2, 2, 3, At.data(), true, Bt.data(), true, C.data());
  CHECK(C == std::vector<real>{4, 8, 10, 17});
}

// ================================================================================================
// Determinism: the same bits for any thread count

TEST_CASE("gemm: bit-identical results on 1, 2 and 3 threads") {
  // Shapes big enough to be split over threads, split along M (M > N) and along N, with edges.
  const std::vector<Dims> shapes = {{200, 300, 170}, {513, 77, 300}, {64, 512, 128},
                                    {97, 1000, 600}, {1000, 40, 257}, {128, 128, 1280},
                                    {64, 96, 128}};  // (64, 96, 128): 6 panels, fewer than 4 per thread
  check_thread_counts_agree(shapes);
}

// ================================================================================================
// Kernel paths: each copy of the blocked kernel the CPU can run (tensor/gemm.cpp)

namespace {

// Shapes around both register tiles (6 x 16 and 8 x 32 floats), the K block and the A block,
// each path of gemm (tiny, dot products, B in place, packed, transposed A slivers, the 4 KiB
// aliasing rule) and a short C cut into column blocks.
const std::vector<Dims> kPathShapes = {
    {1, 1, 1},     {7, 13, 17},   {3, 20, 32},   {8, 32, 9},     {9, 33, 257},  {16, 64, 40},
    {17, 65, 300}, {25, 40, 20},  {64, 512, 128}, {97, 101, 103}, {150, 40, 600}, {145, 200, 60},
    {20, 1024, 30}, {128, 128, 1280}, {300, 7, 11}, {50, 200, 130}, {64, 100, 300}, {65, 130, 70}};

// op(A) op(B) on the current path, with and without a bias and accumulating onto C0.
std::vector<real> product_bits(const Dims& d, int t) {
  const bool trans_a = t & 1, trans_b = t & 2, with_bias = t & 4, accumulate = t & 8;
  const std::vector<real> A = random_values(d.M * d.K, 51 + d.M), B = random_values(d.K * d.N, 52 + d.N);
  const std::vector<real> bias = random_values(d.N, 53);
  std::vector<real> C = random_values(d.M * d.N, 54);
  gemm(d.M, d.N, d.K, A.data(), trans_a, B.data(), trans_b, C.data(), with_bias ? bias.data() : nullptr, accumulate);
  return C;
}

}  // namespace

TEST_CASE("gemm kernels: every path this CPU runs matches the reference and keeps its bits on 1, 2 and 3 threads") {
  const std::vector<std::string> paths = gemm_kernels();
  REQUIRE(!paths.empty());
  CHECK(paths.front() == "generic");  // every CPU runs the portable copy
  for (const std::string& path : paths) {
    UseKernel use(path);
    CAPTURE(path);
    CHECK(std::string(gemm_kernel()) == path);
    check_all_transposes(kPathShapes);
    check_all_transposes({{6, 40, 300}, {33, 70, 520}}, /*with_bias=*/true);
    check_thread_counts_agree({{200, 300, 170}, {64, 512, 128}, {1000, 40, 257}, {128, 128, 1280}});
  }
}

TEST_CASE("gemm kernels: the AVX2 and AVX-512 paths give the same bits") {
  // Every copy blocks K alike and fuses each multiply-add, so a wider tile changes which
  // instruction computes an element, never its chain of roundings (tensor/gemm_blocked.h,
  // "Determinism"). That is what keeps checkpoints, losses and the docs' printed runs the same
  // on every machine. (The generic copy fuses too where the build's target has FMA.)
  const std::vector<std::string> fused = seqgrad::testing::fused_kernel_paths();
  if (fused.size() < 2) {
    MESSAGE("this CPU runs only ", fused.size(), " fused kernel path(s); nothing to compare");
    return;
  }
  for (const Dims& d : kPathShapes)
    for (int t = 0; t < 16; ++t) {
      CAPTURE(d.M);
      CAPTURE(d.N);
      CAPTURE(d.K);
      CAPTURE(t);
      std::vector<std::vector<real>> results;
      for (const std::string& path : fused) {
        UseKernel use(path);
        results.push_back(product_bits(d, t));
      }
      for (size_t i = 1; i < results.size(); ++i) {
        CAPTURE(fused[i]);
        CHECK(bit_identical(results[0], results[i]));
      }
    }
}

namespace {

// Random operands of an (M, N, K) product: A, B, a bias row, C's old values and an addend.
struct Operands {
  int64_t M, N, K;
  std::vector<real> A, B, bias, C0, D;
  Operands(int64_t m, int64_t n, int64_t k)
      : M(m), N(n), K(k), A(random_values(m * k, 61)), B(random_values(k * n, 62)), bias(random_values(n, 63)),
        C0(random_values(m * n, 64)), D(random_values(m * n, 65)) {}
};

// gemm of o, and the same product computed `piece` columns at a time (each piece alone, too
// narrow to be cut into column chunks): the number of rows of C whose bits differ between the
// two. Variant t: bit 0 trans_a, 1 trans_b, 2 a bias, 3 accumulating onto C0, 4 an addend D
// (C = D + product). `whole`, if given, receives the whole C.
int64_t rows_differing_from_pieces(const Operands& o, int64_t piece, int t, std::vector<real>* whole = nullptr) {
  const bool trans_a = t & 1, trans_b = t & 2, with_bias = t & 4, accumulate = t & 8, with_addend = t & 16;
  const int64_t M = o.M, N = o.N, K = o.K;
  std::vector<real> C = o.C0;
  gemm(M, N, K, o.A.data(), trans_a, o.B.data(), trans_b, C.data(), with_bias ? o.bias.data() : nullptr, accumulate,
       with_addend ? o.D.data() : nullptr);
  int64_t differ = 0;
  for (int64_t j0 = 0; j0 < N; j0 += piece) {  // columns [j0, j0 + n) alone
    const int64_t n = std::min(piece, N - j0);
    std::vector<real> b(static_cast<size_t>(K * n)), c(static_cast<size_t>(M * n)), d(static_cast<size_t>(M * n));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < n; ++j)
        (trans_b ? b[j * K + k] : b[k * n + j]) = trans_b ? o.B[(j0 + j) * K + k] : o.B[k * N + j0 + j];
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < n; ++j) {
        c[i * n + j] = o.C0[i * N + j0 + j];
        d[i * n + j] = o.D[i * N + j0 + j];
      }
    gemm(M, n, K, o.A.data(), trans_a, b.data(), trans_b, c.data(), with_bias ? o.bias.data() + j0 : nullptr, accumulate,
         with_addend ? d.data() : nullptr);
    for (int64_t i = 0; i < M; ++i) differ += std::memcmp(&c[i * n], &C[i * N + j0], n * sizeof(real)) != 0;
  }
  if (whole) *whole = C;
  return differ;
}

}  // namespace

TEST_CASE("gemm: a wide C with several K blocks, swept in column chunks, has the bits of its columns computed alone") {
  // A task whose block of C is over 512 KB goes through its panels in column chunks of at most
  // 256 KB, every K block for one chunk before the next, with its A rows packed once for all
  // K blocks up to 4 MB of them (tensor/gemm_blocked.h, kCBlockReals, kWholeAReals). Each piece
  // of the whole product must be the same bits as those columns computed alone: a chunk that
  // skipped a K block, took another K block's A rows, skipped panels or started from the wrong
  // C (bias, addend, accumulate) would differ. On every path, with its own tile sizes:
  //   (100, 1400, 520), 1 thread: rows of about 100 by 1400 columns, 3 K blocks, chunked; every
  //     variant, and the whole against the reference too;
  //   (100, 5200, 700), 2 threads: each thread's column tasks chunked, their B panels packed by
  //     the task, A shared between tasks when transposed, read in place when not;
  //   (144, 960, 7300), 1 thread, A transposed: 144 rows by 7300 are more than 4 MB of packed A,
  //     so A is packed again for each chunk.
  const Operands wide(100, 1400, 520), split(100, 5200, 700), deep(144, 960, 7300);
  const int64_t M = wide.M, N = wide.N, K = wide.K;
  std::vector<std::vector<real>> refs(8);  // op(A) op(B) (+ bias), by the first three bits of t
  for (int t = 0; t < 8; ++t) {
    refs[t].resize(static_cast<size_t>(M * N));
    gemm_reference(M, N, K, wide.A.data(), t & 1, wide.B.data(), t & 2, refs[t].data(), t & 4 ? wide.bias.data() : nullptr);
  }
  for (const std::string& path : gemm_kernels()) {
    UseKernel use(path);
    CAPTURE(path);
    {
      ThreadCount one(1);
      for (int t = 0; t < 20; ++t) {  // 16 to 19: the addend, every transpose
        CAPTURE(t);
        std::vector<real> C;
        CHECK(rows_differing_from_pieces(wide, 200, t, &C) == 0);
        int64_t far = 0;
        for (int64_t i = 0; i < M * N; ++i) {
          const double ref = refs[t & 7][i] + (t & 16 ? wide.D[i] : t & 8 ? wide.C0[i] : 0);
          far += !(std::abs(C[i] - ref) <= tolerance(K, ref));
        }
        CHECK(far == 0);
      }
      CHECK(rows_differing_from_pieces(deep, 480, /*trans_a*/ 1) == 0);
    }
    ThreadCount two(2);
    for (const int t : {0, 1, 9}) {
      CAPTURE(t);
      CHECK(rows_differing_from_pieces(split, 1040, t) == 0);
    }
  }
}

TEST_CASE("gemm kernels: an unknown kernel, or one this CPU cannot run, is refused") {
  const std::string before = gemm_kernel();
  CHECK_THROWS_WITH_AS(set_gemm_kernel("sse9"),
                       "set_gemm_kernel: unknown kernel; expected one of generic, avx2, avx512, got 'sse9'",
                       std::invalid_argument);
  const std::vector<std::string> paths = gemm_kernels();
  std::string runnable;
  for (const std::string& p : paths) runnable += (runnable.empty() ? "" : ", ") + p;
  for (const char* name : {"generic", "avx2", "avx512"})
    if (std::find(paths.begin(), paths.end(), name) == paths.end())
      CHECK_THROWS_WITH_AS(set_gemm_kernel(name),
                           ("set_gemm_kernel: this CPU cannot run the " + std::string(name) +
                            " kernel; expected one of " + runnable + ", got '" + name + "'").c_str(),
                           std::invalid_argument);
  CHECK(std::string(gemm_kernel()) == before);  // a refused choice changes nothing
  // Without SEQGRAD_KERNEL, the first product picked the widest path this CPU runs.
  const char* env = std::getenv("SEQGRAD_KERNEL");
  CHECK(before == (env && *env ? std::string(env) : paths.back()));
}

TEST_CASE("matmul: batched products are bit-identical on 1, 2 and 3 threads") {
  // Many small matrices take the parallel-over-the-batch path; a few big ones the other.
  const Tensor q = random_tensor({8, 4, 33, 16}, 5), k = random_tensor({8, 4, 33, 16}, 6);
  const Tensor x = random_tensor({3, 200, 150}, 7), w = random_tensor({150, 170}, 8);
  std::vector<std::vector<real>> scores, proj;
  for (int threads : {1, 2, 3}) {
    ThreadCount tc(threads);
    scores.push_back(matmul(q, k, false, /*trans_b=*/true).to_vector());  // (8, 4, 33, 33)
    proj.push_back(matmul(x, w).to_vector());                             // (3, 200, 170)
  }
  CHECK(bit_identical(scores[0], scores[1]));
  CHECK(bit_identical(scores[0], scores[2]));
  CHECK(bit_identical(proj[0], proj[1]));
  CHECK(bit_identical(proj[0], proj[2]));
}

// ================================================================================================
// matmul: batching and broadcasting

TEST_CASE("matmul: 2-D and batched products match the reference") {
  const Tensor a = random_tensor({7, 5}, 9), b = random_tensor({5, 11}, 10);
  CHECK(tensors_close(matmul(a, b), matmul_reference(a, b), 5));
  // (B, T, C) @ (C, H) -> (B, T, H): the weight broadcasts over the batch.
  const Tensor x = random_tensor({3, 10, 24}, 11), w = random_tensor({24, 17}, 12);
  const Tensor y = matmul(x, w);
  CHECK(y.shape() == Shape{3, 10, 17});
  CHECK(tensors_close(y, matmul_reference(x, w), 24));
  // (1, M, K) @ (B, K, N) -> (B, M, N): the left operand broadcasts.
  const Tensor p = random_tensor({1, 6, 9}, 13), r = random_tensor({4, 9, 20}, 14);
  CHECK(matmul(p, r).shape() == Shape{4, 6, 20});
  CHECK(tensors_close(matmul(p, r), matmul_reference(p, r), 9));
  // (2, 1, M, K) @ (3, K, N) -> (2, 3, M, N): both broadcast.
  const Tensor s = random_tensor({2, 1, 5, 8}, 15), u = random_tensor({3, 8, 7}, 16);
  CHECK(matmul(s, u).shape() == Shape{2, 3, 5, 7});
  CHECK(tensors_close(matmul(s, u), matmul_reference(s, u), 8));
}

TEST_CASE("matmul: transpose flags with batches") {
  // op(a) = a^T per batch entry: a (B, K, M), b (B, N, K) -> (B, M, N).
  const Tensor a = random_tensor({4, 19, 13}, 17), b = random_tensor({4, 23, 19}, 18);
  const Tensor y = matmul(a, b, /*trans_a=*/true, /*trans_b=*/true);
  CHECK(y.shape() == Shape{4, 13, 23});
  CHECK(tensors_close(y, matmul_reference(a, b, true, true), 19));
  // Backward's shapes: dW = X^T dY with X (B*T, C) and dY (B*T, H); dX = dY W^T.
  const Tensor X = random_tensor({60, 24}, 19), dY = random_tensor({60, 40}, 20), W = random_tensor({24, 40}, 21);
  CHECK(tensors_close(matmul(X, dY, true, false), matmul_reference(X, dY, true, false), 60));
  CHECK(tensors_close(matmul(dY, W, false, true), matmul_reference(dY, W, false, true), 40));
}

TEST_CASE("matmul: each batch entry is the 2-D product of the matching slices") {
  // Checks the batching against gemm_reference on hand-cut slices, independently of the
  // batching code matmul and matmul_reference share. a (2, 1, M, K), b (3, K, N).
  const int64_t M = 4, K = 6, N = 5;
  const Tensor a = random_tensor({2, 1, M, K}, 22), b = random_tensor({3, K, N}, 23);
  const Tensor y = matmul(a, b);  // (2, 3, M, N)
  std::vector<real> expect(M * N);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      gemm_reference(M, N, K, a.data() + i * M * K, false, b.data() + j * K * N, false, expect.data());
      for (int64_t e = 0; e < M * N; ++e) {
        const real got = y.data()[(i * 3 + j) * M * N + e];
        CHECK(std::abs(got - expect[e]) <= tolerance(K, expect[e]));
      }
    }
}

// ================================================================================================
// Errors

TEST_CASE("matmul: shape errors name the op and both shapes") {
  CHECK_THROWS_WITH_AS(matmul(zeros({3}), zeros({3, 4})),
                       "matmul: expected operands with at least 2 dimensions, got [3] and [3, 4]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(matmul(zeros({2, 3}), zeros({4, 5})),
                       "matmul: inner sizes differ; expected op(a) (..., M, K) and op(b) (..., K, N), "
                       "got [2, 3] and [4, 5], K = 3 vs 4",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(matmul(zeros({2, 3}), zeros({4, 3})),
                       "matmul: inner sizes differ; expected op(a) (..., M, K) and op(b) (..., K, N), "
                       "got [2, 3] and [4, 3], K = 3 vs 4 (did you forget to transpose b?)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(matmul(zeros({2, 3}), zeros({3, 5}), /*trans_a=*/true),
                       "matmul: inner sizes differ; expected op(a) (..., M, K) and op(b) (..., K, N), "
                       "got [2, 3] (transposed) and [3, 5], K = 2 vs 3",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(matmul(zeros({2, 3, 4}), zeros({3, 4, 5})),
                       "matmul: shapes [2] and [3] cannot be broadcast together; expected equal "
                       "sizes or 1 in each axis (from the right), got 2 and 3 in axis 0",
                       std::invalid_argument);
}

TEST_CASE("PackedRight: a product with op(B) packed beforehand has the bits of gemm with B, on every path and thread count") {
  // Tiny products (which read B as it is), B read in place (M <= MR), packed, K over one block,
  // the RNN step's (64, 512, 128), with a bias, accumulating and with an addend.
  const std::vector<Dims> shapes = {{3, 20, 32}, {5, 64, 300}, {6, 40, 300}, {64, 512, 128}, {97, 101, 600}, {64, 128, 512}};
  for (const std::string& path : gemm_kernels()) {
    UseKernel use(path);
    for (const int threads : {1, 2}) {
      ThreadCount count(threads);
      for (const Dims& d : shapes)
        for (int t = 0; t < 8; ++t) {
          const bool trans_a = t & 1, trans_b = t & 2, mode_add = t & 4;  // mode_add: accumulate and addend
          CAPTURE(path);
          CAPTURE(threads);
          CAPTURE(d.M);
          CAPTURE(d.N);
          CAPTURE(d.K);
          CAPTURE(t);
          const std::vector<real> a = random_values(d.M * d.K, 1), b = random_values(d.K * d.N, 2),
                                  bias = random_values(d.N, 3), addend = random_values(d.M * d.N, 4);
          const Tensor B = from_vector(b, trans_b ? Shape{d.N, d.K} : Shape{d.K, d.N});
          const PackedRight packed(B, trans_b);
          CHECK(packed.K() == d.K);
          CHECK(packed.N() == d.N);
          std::vector<real> plain(d.M * d.N, real(0.5)), with_pack(d.M * d.N, real(0.5));
          gemm(d.M, d.N, d.K, a.data(), trans_a, b.data(), trans_b, plain.data(), bias.data(), mode_add,
               mode_add && (t & 1) ? addend.data() : nullptr);
          gemm(d.M, a.data(), trans_a, packed, with_pack.data(), bias.data(), mode_add,
               mode_add && (t & 1) ? addend.data() : nullptr);
          CHECK(std::memcmp(plain.data(), with_pack.data(), plain.size() * sizeof(real)) == 0);
        }
    }
  }
  // Packed on one path and used on another (the kernel switched since): the product is still
  // right, through that path's own packing.
  const std::vector<std::string> paths = gemm_kernels();
  const std::vector<real> a = random_values(64 * 128, 5), b = random_values(128 * 512, 6);
  const Tensor B = from_vector(b, {512, 128});
  std::unique_ptr<PackedRight> packed;
  {
    UseKernel first(paths.back());
    packed = std::make_unique<PackedRight>(B, /*trans_b=*/true);
  }
  for (const std::string& path : paths) {
    UseKernel use(path);
    CAPTURE(path);
    std::vector<real> plain(64 * 512), with_pack(64 * 512);
    gemm(64, 512, 128, a.data(), false, b.data(), true, plain.data());
    gemm(64, a.data(), false, *packed, with_pack.data());
    CHECK(std::memcmp(plain.data(), with_pack.data(), plain.size() * sizeof(real)) == 0);
  }
  // The pack is what the product reads (beyond the tiny products): B changed after packing does
  // not change it.
  {
    Tensor changing = B.clone();
    const PackedRight before(changing, /*trans_b=*/true);
    changing.fill_(0);
    std::vector<real> plain(64 * 512), with_pack(64 * 512);
    gemm(64, 512, 128, a.data(), false, b.data(), true, plain.data());
    gemm(64, a.data(), false, before, with_pack.data());
    CHECK(std::memcmp(plain.data(), with_pack.data(), plain.size() * sizeof(real)) == 0);
  }
  CHECK_THROWS_WITH_AS(PackedRight(Tensor::empty({2, 3, 4}), false), "PackedRight: expected a matrix, got shape [2, 3, 4]",
                       std::invalid_argument);
}

TEST_CASE("gemm_blocking reads each copy's own tile and block sizes, and refuses an unknown name") {
  // The sizes gemm_blocked.h's comments explain: 6 x 16 tiles of 256-bit vectors, 8 x 32 of
  // 512-bit ones; K blocks of 256 in every copy; A blocks of 144 rows (a multiple of the tile's).
  const GemmBlocking generic = gemm_blocking("generic");
  CHECK(generic.mr == 6);
  CHECK(generic.nr == 2 * 256 / 8 / static_cast<int64_t>(sizeof(real)));  // two vectors wide
  CHECK(generic.kc == 256);
  CHECK(generic.mc == 144);
  CHECK(generic.vector_bits == 256);
#if defined(__x86_64__) || defined(__i386__)
  const GemmBlocking avx512 = gemm_blocking("avx512");
  CHECK(avx512.mr == 8);
  CHECK(avx512.nr == 2 * 512 / 8 / static_cast<int64_t>(sizeof(real)));
  CHECK(avx512.mc == 144);
  CHECK(avx512.vector_bits == 512);
  CHECK(gemm_blocking("avx2").nr == generic.nr);
#endif
  CHECK_THROWS_WITH_AS(gemm_blocking("avx1024"), doctest::Contains("gemm_blocking: expected one of generic"),
                       std::invalid_argument);
}
