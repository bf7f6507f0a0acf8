// tensor/gemm_blocked.h - the fast matrix multiply behind matmul(): C = op(A) op(B), cache-blocked,
// packed and multi-threaded in the GotoBLAS/BLIS manner. Written once, compiled once per
// instruction set: tensor/gemm.cpp picks one of those copies at run time.
//
// What it is: one portable C++ kernel that reaches the speed of a tuned BLAS on large float
// matrices. The work is cut into blocks that fit the caches, the operands are copied ("packed")
// into the order the innermost loop reads them, and that loop keeps a tile of C (6 x 16 with
// 256-bit vectors, 8 x 32 with 512-bit ones) in vector registers. What it is not: a BLAS. There
// is no alpha, no beta but 0 and 1 (C = or C +=, or C = addend + for a separate addend matrix),
// no leading dimensions, no hand-written assembly: vectors are GCC/Clang vector extensions,
// which the compiler turns into AVX2 or AVX-512 instructions here and into pairs of SSE or NEON
// instructions (or scalar code) elsewhere.
//
// How it is compiled: this file is not a header to include anywhere else. Each of
// tensor/gemm_generic.cpp, gemm_avx2.cpp and gemm_avx512.cpp defines the settings below and
// includes it, and the Makefile compiles each with its own instruction-set flags (-mavx2 -mfma,
// -mavx512f ...), so one binary holds a copy of gemm for each, in its own namespace:
//   SEQGRAD_GEMM_NAMESPACE     gemm_generic, gemm_avx2 or gemm_avx512
//   SEQGRAD_GEMM_KERNEL_BYTES  the micro-kernel's vector width in bytes: 32 or 64
//   SEQGRAD_GEMM_MR            rows of the register tile
//   SEQGRAD_GEMM_A_KMAJOR      1 to pack A slivers k-major (kAKMajor below); 0 if not defined
//   SEQGRAD_GEMM_B_IN_PLACE_SLIVERS  up to how many slivers of A read B in place (read_b_in_place);
//                              4 if not defined
//   SEQGRAD_GEMM_OWN_B_BYTES   up to how many bytes of packed B each thread packs for itself
//                              (kOwnBReals); 256 KB if not defined
//   SEQGRAD_GEMM_PREFETCH_IN_KERNEL  1 to fetch the next B panel from inside the micro-kernel's
//                              loop (kPrefetchInKernel); 0 if not defined
// Everything else (packing, the tiny products, the driver) is the same code in every copy.
// Read first: gemm_reference() in matmul.cpp, the definition this file must agree with, and
// gemm_blocked_reference() in tensor/gemm_reference.h, the same blocking in plain loops, whose
// bits this file gives. The chapter docs/matmul.md explains the design and shows the
// measurements behind each constant (section 10).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#if defined(__FMA__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

#if !defined(SEQGRAD_GEMM_NAMESPACE) || !defined(SEQGRAD_GEMM_KERNEL_BYTES) || !defined(SEQGRAD_GEMM_MR)
#error "tensor/gemm_blocked.h is compiled through gemm_generic.cpp, gemm_avx2.cpp or gemm_avx512.cpp"
#endif

namespace seqgrad {
namespace SEQGRAD_GEMM_NAMESPACE {
namespace {

// ================================================================================================
// The shape of the computation
//
// Shapes in this file: op(A) is (M, K), op(B) is (K, N), C is (M, N), all row-major.
//
//   pack op(B) into panels of NR columns                 (K, N) -> K/KC x N/NR panels (KC, NR)
//   for each task         ic: a block of rows of C       tasks are shared out between threads
//     for each K block    pc: KC deep                    A[ic, pc] (packed if trans_a)  (MC, KC), L2
//       for each panel    jr: NR columns of C            B[pc, jr], packed              (KC, NR), L1
//         for each sliver ir: MR rows of the block       A[ir, pc]                      (MR, KC)
//           micro_kernel: C[ir, jr] (MR, NR) (+)= sliver (MR, KC) @ panel (KC, NR)
//
// Why each block has its size. With 256-bit vectors (AVX2: 16 vector registers of 8 floats):
//   * micro-kernel: the MR x NR = 6 x 16 tile of C lives in 12 vector registers for a whole K
//     block; 2 more hold a row of the panel and 1 a broadcast element of the sliver. Each step
//     loads 2 vectors and 6 scalars for 12 FMAs, so the FMA units, not memory, set the pace.
//   * KC = 256: a packed panel, KC x NR floats = 16 KB, stays in L1 (32 to 48 KB) while the
//     kernel runs down every sliver of the A block.
//   * MC = 144: a packed A block, MC x KC floats = 144 KB, stays in L2 (512 KB or more) while
//     the kernel sweeps it once per panel.
// With 512-bit vectors (AVX-512: 32 registers of 16 floats) a step's FMAs do twice the work, so
// the tile doubles: MR x NR = 8 x 32, 16 accumulators (two FMA pipes of 4 cycles' latency need
// at least 8 independent ones), 2 registers for the panel's row, 1 for the broadcast. A step
// loads 2 vectors and 8 scalars for 16 FMAs, 1.25 loads a cycle, under the two a core can do.
// The 8 scalars come from one place where A is packed: this copy packs A slivers k-major
// (kAKMajor below).
// The panel, 256 x 32 floats = 32 KB, fits the 48 KB L1 of the cores that have AVX-512 (Ice
// Lake and later); the sliver streams past it from L2. KC stays 256 on purpose: see below.
//
// Packing copies each block into exactly the order the kernel reads it, from 64-byte aligned
// buffers; the transpose flags only change the strides the packing reads with. A stored
// (M, K) is already in an order the kernel reads (a sliver is MR rows of A, K apart) and is read
// in place; only a transposed A, or one whose rows alias (step 3 of gemm), is packed. Edges (M
// not a multiple of MR, N not of NR) are zero-padded when packing, computed by the same kernel,
// and only the valid part of the tile is written back. Small matrices skip packing B (see read_b_in_place) and small products skip the
// threads (kParallelMacs, tensor/matmul.h).
//
// Threads: op(B) is packed once, by all threads together, into one buffer they all read; a B
// of at most kOwnBReals each thread packs into its own buffer instead; and for C of at most MC
// rows each task packs the panels it reads. The work is then a list of tasks, each a block of
// C (rows x whole panels) that one thread computes entirely. The tasks are dealt out in runs,
// one per thread; a thread works through its own run first and then helps with the others'.
//
// Determinism: C[i][j] is, for each K block in order, the kernel's in-order FMA chain over that
// block, stored (first block), or added to C's old value (later blocks; every block when gemm
// accumulates) or to the addend's (first block, when gemm was given one). The K blocking depends on K alone and each
// element is computed by exactly one task, so the bits are the same whatever the thread count
// or which thread runs which task. The order depends on K alone, not on M or N, and the tiny
// products (gemm_tiny) keep it too: a row of C has the same bits however many rows and columns
// are computed with it, which is what makes decoding a batch of sentences give exactly what
// decoding each alone gives. Nor does it depend on the vector width or the tile: every copy
// of this file blocks K by the same KC, so the AVX2 and AVX-512 kernels give the same bits
// (both fuse each multiply-add; the generic copy does too where its target has FMA).

// Packing and the tiny products work in 256-bit vectors in every copy (on narrower machines
// the compiler splits them); only the micro-kernel uses the copy's own width (kvec).
constexpr int kVectorBytes = 32;
typedef real vec __attribute__((vector_size(kVectorBytes)));
constexpr int64_t VL = kVectorBytes / sizeof(real);  // lanes: 8 floats or 4 doubles
typedef real kvec __attribute__((vector_size(SEQGRAD_GEMM_KERNEL_BYTES)));
constexpr int64_t KVL = SEQGRAD_GEMM_KERNEL_BYTES / sizeof(real);  // the micro-kernel's lanes
constexpr int64_t MR = SEQGRAD_GEMM_MR;              // rows of the register tile
constexpr int64_t NV = 2;                            // vectors in a row of the register tile
constexpr int64_t NR = NV * KVL;                     // columns of the register tile
constexpr int64_t KC = 256;                          // depth of a K block (the same in every copy)
#ifndef SEQGRAD_GEMM_A_KMAJOR
#define SEQGRAD_GEMM_A_KMAJOR 0
#endif
// How a packed sliver of A is laid out: row by row (MR rows of kc), which a stored (M, K) A
// already is, so it can be read in place; or column by column ("k-major", kc columns of MR),
// so that step k of the kernel reads its MR elements from one place, one cache line, one
// pointer. The AVX-512 copy packs A k-major wherever it packs A (a transposed A, or rows a
// multiple of 4 KiB apart); a stored (M, K) A is still read in place, row by row.
constexpr bool kAKMajor = SEQGRAD_GEMM_A_KMAJOR;
#ifndef SEQGRAD_GEMM_PREFETCH_IN_KERNEL
#define SEQGRAD_GEMM_PREFETCH_IN_KERNEL 0
#endif
// Where the next B panel is fetched from (macro_kernel): while one panel is in use, each sliver
// of the block fetches a slice of the next. Issued all at once before the micro-kernel, the
// slice's fetches (about 30 lines of the AVX-512 copy's 32 KB panel at n = 2048) queue behind
// each other and hold up the loop; spread through the kernel's loop, one line every 8 steps,
// they do not. The 256-bit copy keeps fetching all at once: its slices are a third as long
// (about 11 lines), and spreading them gained nothing where that was tried (docs/matmul.md,
// sections 8 and 10).
constexpr bool kPrefetchInKernel = SEQGRAD_GEMM_PREFETCH_IN_KERNEL;
constexpr int64_t MC = 144 / MR * MR;                // rows of an A block (a multiple of MR)
static_assert(NR % VL == 0, "a panel's rows are whole 256-bit vectors");
}  // namespace
// The constants above, for gemm_blocking() (tensor/matmul.h). Data, not code: tensor/gemm.cpp
// reads it for any copy, also one whose instructions this CPU lacks.
extern const GemmBlocking blocking;
const GemmBlocking blocking = {MR, NR, KC, MC, 8 * SEQGRAD_GEMM_KERNEL_BYTES};
namespace {
constexpr int64_t kLine = 64 / sizeof(real);         // reals per cache line

// (Without AVX, GCC notes that passing 32-byte vectors by value changed ABI in GCC 4.6; these
// helpers are internal to this file and inlined, so no ABI is crossed.)
#pragma GCC diagnostic ignored "-Wpsabi"
// acc + x * b, rounded once (a fused multiply-add) where the machine has one. Every kernel
// below adds its products through this, so that they all round alike: left to itself the
// compiler fuses `acc += x * b` in some loops and not in others, and a row of C would then get
// other bits from the single-row kernel than from the tiles. V is vec or kvec.
template <class V>
inline V madd(V acc, V x, V b) {
  constexpr bool f32 = sizeof(real) == 4;
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64 && f32)
    return reinterpret_cast<V>(_mm512_fmadd_ps(reinterpret_cast<__m512>(x), reinterpret_cast<__m512>(b),
                                               reinterpret_cast<__m512>(acc)));
  if constexpr (sizeof(V) == 64 && !f32)
    return reinterpret_cast<V>(_mm512_fmadd_pd(reinterpret_cast<__m512d>(x), reinterpret_cast<__m512d>(b),
                                               reinterpret_cast<__m512d>(acc)));
#endif
#if defined(__FMA__)
  if constexpr (sizeof(V) == 32 && f32)
    return reinterpret_cast<V>(_mm256_fmadd_ps(reinterpret_cast<__m256>(x), reinterpret_cast<__m256>(b),
                                               reinterpret_cast<__m256>(acc)));
  if constexpr (sizeof(V) == 32 && !f32)
    return reinterpret_cast<V>(_mm256_fmadd_pd(reinterpret_cast<__m256d>(x), reinterpret_cast<__m256d>(b),
                                               reinterpret_cast<__m256d>(acc)));
#endif
  (void)f32;
  return acc + x * b;  // the portable form: one rounding for the product, one for the sum
}
// x in every lane: x - 0 is x for every x, -0 included, so this is one broadcast. (`vec{} + x`
// is not: 0 + -0 is +0, so the compiler must add before it broadcasts, an extra instruction in
// the innermost loop.)
template <class V>
inline V splat(real x) { return x - V{}; }
template <class V>
inline V madd(V acc, real x, V b) { return madd(acc, splat<V>(x), b); }

// Memory seen as vectors: *as_vec(p) loads or stores VL reals at p, *as_kvec(p) KVL; p need
// not be aligned.
typedef real vec_u __attribute__((vector_size(kVectorBytes), aligned(alignof(real)), may_alias));
typedef real kvec_u __attribute__((vector_size(SEQGRAD_GEMM_KERNEL_BYTES), aligned(alignof(real)), may_alias));
inline vec_u* as_vec(real* p) { return reinterpret_cast<vec_u*>(p); }
inline const vec_u* as_vec(const real* p) { return reinterpret_cast<const vec_u*>(p); }
inline kvec_u* as_kvec(real* p) { return reinterpret_cast<kvec_u*>(p); }
inline const kvec_u* as_kvec(const real* p) { return reinterpret_cast<const kvec_u*>(p); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// op(X) without copying: element (r, c) of op(X) is at p + r * rs + c * cs. For A stored
// (M, K) that is rs = K, cs = 1; stored (K, M) (trans_a) it is rs = 1, cs = M.
struct Operand {
  const real* p;
  int64_t rs, cs;
  const real* at(int64_t r, int64_t c) const { return p + r * rs + c * cs; }
};

// ================================================================================================
// Packing: copy a block of an operand into the order the micro-kernel reads it
//
// Both packed shapes are small row-major matrices, zero-padded past the edges of the operand:
//   an A sliver: MR rows of op(A), kc deep     out[r * kc + k] = op(A)(i0 + r, k0 + k)   (MR, kc)
//   a B panel:   kc rows of op(B), NR wide     out[k * NR + c] = op(B)(k0 + k, j0 + c)   (kc, NR)
// So at step k the kernel reads one contiguous row of the panel and one element from each row
// of the sliver. If the operand is stored the same way round (no transpose flag), every packed
// row is a contiguous run of the source and packing is a memcpy per row. If it is stored
// transposed, packing is a transpose: the flags change nothing but the strides read here.

#ifndef SEQGRAD_DOUBLE
// Transposes 8 vectors of 8 floats in registers: afterwards v[l][j] is what v[j][l] was. Three
// rounds of shuffles, each pairing vectors and interleaving ever larger pieces: single floats,
// pairs, then halves. (Index i < 8 picks lane i of the first vector, 8 + i lane i of the second.)
inline void transpose8x8(vec v[8]) {
  vec t[8], u[8];
  for (int j = 0; j < 8; j += 2) {  // interleave single floats of v[j] and v[j + 1]
    t[j] = __builtin_shufflevector(v[j], v[j + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[j + 1] = __builtin_shufflevector(v[j], v[j + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int j = 0; j < 8; j += 4)  // interleave pairs
    for (int k = 0; k < 2; ++k) {
      u[j + 2 * k] = __builtin_shufflevector(t[j + k], t[j + k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[j + 2 * k + 1] = __builtin_shufflevector(t[j + k], t[j + k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int l = 0; l < 4; ++l) {  // join halves: rows l and l + 4
    v[l] = __builtin_shufflevector(u[l], u[l + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    v[l + 4] = __builtin_shufflevector(u[l], u[l + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}
#endif

// dst[0 : n) = src[0 : n) for the few reals of a partial row: whole vectors, then pieces of
// VL / 2, VL / 4, ..., 1. (std::copy or std::fill here compiles to a string instruction whose
// start-up costs more than writing a row of a panel.)
inline void copy_short(real* dst, const real* src, int64_t n) {
  for (; n >= VL; n -= VL, dst += VL, src += VL) *as_vec(dst) = *as_vec(src);
  for (int64_t w = VL / 2; w > 0; w /= 2)
    if (n & w) {
      std::memcpy(dst, src, w * sizeof(real));
      dst += w;
      src += w;
    }
}

// p[0 : n) = 0, for the reals that pad a packed row: whole vectors, then copy_short's pieces.
inline void zero_fill(real* p, int64_t n) {
  for (; n >= VL; n -= VL, p += VL) *as_vec(p) = vec{};
  static constexpr real zeros[VL] = {};
  copy_short(p, zeros, n);  // n < VL now
}

// out (R, C) row-major = x(r, c) = src[r * rs + c * cs] for r < rows, c < cols, zero elsewhere.
// Either cs == 1 (the rows of x are contiguous) or rs == 1 (its columns are). Never inlined: it
// is long and called from many places, and inlined into gemm's tiny path it made the short
// products that go through it slower (docs/matmul.md, section 10).
// [docs:pack_block]
[[gnu::noinline]]
void pack_block(int64_t rows, int64_t cols, int64_t R, int64_t C, const real* src, int64_t rs,
                int64_t cs, real* out) {
  if (cs == 1) {  // same way round: copy row by row
    for (int64_t r = 0; r < R; ++r) {
      real* o = out + r * C;
      int64_t copied = 0;
      if (r < rows) {
        __builtin_prefetch(src + (r + 8) * rs);  // rows of B are one cache line: fetch ahead
        if (cols == NR)  // a full row of a B panel: a fixed size, so two inline vector moves
          std::memcpy(o, src + r * rs, NR * sizeof(real));
        else
          std::memcpy(o, src + r * rs, cols * sizeof(real));
        copied = cols;
      }
      zero_fill(o + copied, C - copied);
    }
    return;
  }
  // Transposed: a column of x is contiguous. Load VL values down a column as one vector and
  // scatter its lanes across VL rows of out; or, 8 columns at a time, transpose an 8 x 8 block
  // in registers and store whole rows (transpose8x8 below).
  int64_t r = 0;
  for (; r + VL <= rows; r += VL) {
    int64_t c = 0;
#ifndef SEQGRAD_DOUBLE
    for (; c + VL <= cols; c += VL) {
      vec v[VL];  // v[j] = x(r .. r + 7, c + j): 8 columns, each 8 rows deep
      for (int64_t j = 0; j < VL; ++j) {
        __builtin_prefetch(src + (c + j) * cs + r + 4 * 64 / sizeof(real));  // 4 cache lines ahead
        v[j] = *as_vec(src + (c + j) * cs + r);
      }
      transpose8x8(v);  // now v[l] = x(r + l, c .. c + 7)
      for (int64_t l = 0; l < VL; ++l) *as_vec(out + (r + l) * C + c) = v[l];
    }
#endif
    for (; c < cols; ++c) {
      __builtin_prefetch(src + c * cs + r + 4 * 64 / sizeof(real));  // 4 cache lines ahead
      const vec v = *as_vec(src + c * cs + r);
#pragma GCC unroll 16
      for (int64_t l = 0; l < VL; ++l) out[(r + l) * C + c] = v[l];
    }
    for (int64_t l = 0; l < VL; ++l) zero_fill(out + (r + l) * C + cols, C - cols);
  }
  if (R - r == MR && rows - r == MR && cols == C) {  // a full A sliver: a fixed count, no edges
    for (int64_t c = 0; c < C; ++c) {
      const real* s = src + c * cs + r;
#pragma GCC unroll 6
      for (int64_t rr = 0; rr < MR; ++rr) out[(r + rr) * C + c] = s[rr];
    }
    return;
  }
  for (int64_t c = 0; c < C; ++c)  // the last rows < VL (all of them for an A sliver)
    for (int64_t rr = r; rr < R; ++rr) out[rr * C + c] = rr < rows && c < cols ? src[rr + c * cs] : 0;
}
// [docs:end]

// A block: rows [i0, i0 + mc), columns [k0, k0 + kc) of op(A) -> ceil(mc / MR) slivers, one
// after another.
// A transposed operand (a.rs == 1: each column of op(A) is contiguous, as in the weight
// gradient dY^T X) goes 8 columns at a time through transpose8x8 whenever 8 rows can be read,
// the sliver's MR (6 or 8) and any more that are still inside op(A)'s M rows: 8 vector loads and
// MR vector stores instead of 8 MR single floats each way.
// A sliver k-major: out[k * MR + r] = op(A)(i0 + r, k0 + k), rows past `rows` zero. From a
// stored (M, K) A (a.cs == 1) 8 rows are read as vectors along k and turned round 8 x 8 in
// registers (transpose8x8); from a transposed one (a.rs == 1) column k of the sliver is
// already MR contiguous reals.
[[maybe_unused]] void pack_a_sliver_kmajor(int64_t rows, int64_t kc, const Operand& a, int64_t i, int64_t k0, real* o) {
  const real* src = a.at(i, k0);
  int64_t k = 0;
  if (rows == MR && a.rs == 1) {
    for (; k < kc; ++k) copy_short(o + k * MR, src + k * a.cs, MR);
    return;
  }
#ifndef SEQGRAD_DOUBLE
  if (rows == MR && MR == VL && a.cs == 1)
    for (; k + VL <= kc; k += VL) {
      vec v[VL];  // v[r] = row r, columns k .. k + 7
      for (int64_t r = 0; r < VL; ++r) v[r] = *as_vec(src + r * a.rs + k);
      transpose8x8(v);  // now v[j] = column k + j, rows 0 .. 7
      for (int64_t j = 0; j < VL; ++j) *as_vec(o + (k + j) * MR) = v[j];
    }
#endif
  for (; k < kc; ++k)
    for (int64_t r = 0; r < MR; ++r) o[k * MR + r] = r < rows ? src[r * a.rs + k * a.cs] : 0;
}

void pack_a(int64_t mc, int64_t kc, const Operand& a, int64_t i0, int64_t k0, [[maybe_unused]] int64_t M,
            real* out) {
  if constexpr (kAKMajor) {
    for (int64_t ir = 0; ir < mc; ir += MR) pack_a_sliver_kmajor(std::min(MR, mc - ir), kc, a, i0 + ir, k0, out + ir * kc);
    return;
  }
  for (int64_t ir = 0; ir < mc; ir += MR) {
    real* o = out + ir * kc;
    const int64_t rows = std::min(MR, mc - ir);
#ifndef SEQGRAD_DOUBLE
    static_assert(MR <= VL, "a float sliver is at most one 8 x 8 transpose tall");
    if (a.rs == 1 && rows == MR && i0 + ir + VL <= M) {
      const real* src = a.at(i0 + ir, k0);  // column k of the sliver starts at src + k * a.cs
      int64_t k = 0;
      for (; k + VL <= kc; k += VL) {
        vec v[VL];  // v[j] = rows 0..7 of column k + j
        for (int64_t j = 0; j < VL; ++j) v[j] = *as_vec(src + (k + j) * a.cs);
        transpose8x8(v);  // now v[l] = row l, columns k .. k + 7
        for (int64_t l = 0; l < MR; ++l) *as_vec(o + l * kc + k) = v[l];
      }
      for (; k < kc; ++k)
        for (int64_t l = 0; l < MR; ++l) o[l * kc + k] = src[k * a.cs + l];
      continue;
    }
#endif
    pack_block(rows, kc, MR, kc, a.at(i0 + ir, k0), a.rs, a.cs, o);
  }
}

// One B panel: rows [k0, k0 + kc), columns [j0, j0 + NR) of op(B), clipped at column N.
void pack_b_panel(int64_t N, int64_t kc, const Operand& b, int64_t k0, int64_t j0, real* out) {
  pack_block(kc, std::min(NR, N - j0), kc, NR, b.at(k0, j0), b.rs, b.cs, out);
}

// ================================================================================================
// The micro-kernel: an MR x NR tile of C (6 x 16 or 8 x 32) from a sliver of A and a panel of B
//
//   acc (MR, NR) = sum over k < kc of  a[i * lda + k] * b[k * ldb + j]     (a k-major: a[k * MR + i])
//   C[i][j] = acc[i][j]   (first K block)   or   C[i][j] = from[i][j] + acc[i][j]   (`from` not null)
// in three parts: fetch_c_tile starts bringing the tile of C into cache, the loop over k sums the
// tile in registers, store_tile writes it out.

// Start fetching the C tile (and the tile it is added to, `from`, when that is not C) into
// cache; it is needed only after the kernel's loop. Rows past m, which may lie past the end of
// C, fetch row m - 1 again; a full tile, the usual case, is written out on its own, so that its
// addresses take no minimum. (Force-inlined, as store_tile below: the micro-kernel is one
// function to the compiler, its tile in registers throughout.)
[[gnu::always_inline]] inline void fetch_c_tile(const real* c, const real* from, int64_t ldc, int64_t m) {
  const real* other = from && from != c ? from : nullptr;
  auto fetch_row = [&](int64_t r) {
    __builtin_prefetch(c + r * ldc, 1);
    __builtin_prefetch(c + r * ldc + NR - 1, 1);
    if (other) {
      __builtin_prefetch(other + r * ldc);
      __builtin_prefetch(other + r * ldc + NR - 1);
    }
  };
  if (m == MR)
#pragma GCC unroll 8
    for (int64_t i = 0; i < MR; ++i) fetch_row(i);
  else
    for (int64_t i = 0; i < MR; ++i) fetch_row(std::min(i, m - 1));
}

// The tile's top-left m x n corner written to C: acc, or from + acc. A full tile goes out in
// whole vectors; an edge tile through a buffer, element by element.
[[gnu::always_inline]] inline void store_tile(const kvec (&acc)[MR][NV], real* c, const real* from, int64_t ldc,
                                              int64_t m, int64_t n) {
  if (m == MR && n == NR) {
#pragma GCC unroll 8
    for (int64_t i = 0; i < MR; ++i) {
      real* ci = c + i * ldc;
#pragma GCC unroll 4
      for (int64_t v = 0; v < NV; ++v) {
        if (from)
          *as_kvec(ci + v * KVL) = *as_kvec(from + i * ldc + v * KVL) + acc[i][v];
        else
          *as_kvec(ci + v * KVL) = acc[i][v];
      }
    }
  } else {
    alignas(64) real tile[MR][NR];
#pragma GCC unroll 8
    for (int64_t i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int64_t v = 0; v < NV; ++v) *as_kvec(tile[i] + v * KVL) = acc[i][v];
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = from ? from[i * ldc + j] + tile[i][j] : tile[i][j];
  }
}

// `from` is C itself in later K blocks; in the first it is the addend's tile when gemm was given
// an addend (C = addend + acc, written in one pass, without first copying the addend into C),
// else C when gemm accumulates (C += acc), else null. Both have C's row stride.
//
// `pf`, if not null, is the start of pf_lines cache lines (of the next B panel) to bring into
// cache while the kernel runs (kPrefetchInKernel): one line before every 8 steps of k; if there
// are more lines than groups of 8 steps, the ones over are fetched first, all at once.
// `bias`, if not null, is where the sums start: NR values added to every row of the tile.
// `a` is a sliver: MR rows lda apart, from the packed block (lda = kc) or from A itself
// (lda = K); or, packed k-major (kKMajorA), kc columns of MR (lda unused). `b` is a packed
// panel (ldb = NR) or, on the small-matrix path, NR columns of B read in place (ldb = N).
// Only the top-left m x n corner of the tile is written: that is how the edges of C are
// handled. For the same reason rows past m, which may lie past the end of A, are never read:
// the kernel reads row m - 1 again in their place.
// It is always inlined into macro_kernel, so that the loops over panels and slivers and the
// kernel compile as one function, whatever the size of the functions around them.
template <bool kPackedB, bool kKMajorA>
[[gnu::always_inline]] inline void micro_kernel(int64_t kc, const real* __restrict a, int64_t lda, const real* __restrict b, int64_t ldb,
                  const real* bias, real* c, const real* from, int64_t ldc, int64_t m, int64_t n,
                  const real* pf, int64_t pf_lines) {
  const int64_t b_step = kPackedB ? NR : ldb;
  // The sums start from 0, or from the bias row (NR values, zero-padded) in the first K block.
  kvec start[NV];
#pragma GCC unroll 4
  for (int64_t v = 0; v < NV; ++v) start[v] = bias ? *as_kvec(bias + v * KVL) : kvec{};
  kvec acc[MR][NV];
#pragma GCC unroll 8
  for (int64_t i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int64_t v = 0; v < NV; ++v) acc[i][v] = start[v];
  fetch_c_tile(c, from, ldc, m);
  // [docs:micro_kernel_loop]
  const real* a_row[MR];  // the sliver's rows; past row m, repeats of its last (never stored)
  if (m == MR)  // (the usual full tile, written out: no minimum to take for its row pointers)
#pragma GCC unroll 8
    for (int64_t i = 0; i < MR; ++i) a_row[i] = a + i * lda;
  else
    for (int64_t i = 0; i < MR; ++i) a_row[i] = a + std::min(i, m - 1) * lda;
  auto step = [&](int64_t k) {  // acc += column k of the sliver times row k of the panel
    kvec bk[NV];  // row k of the panel
#pragma GCC unroll 4
    for (int64_t v = 0; v < NV; ++v) bk[v] = *as_kvec(b + v * KVL);
#pragma GCC unroll 8
    for (int64_t i = 0; i < MR; ++i) {  // times column k of the sliver, one element at a time
      const real x = kKMajorA ? a[k * MR + i] : a_row[i][k];
#pragma GCC unroll 4
      for (int64_t v = 0; v < NV; ++v) acc[i][v] = madd(acc[i][v], x, bk[v]);  // acc += a * b
    }
    b += b_step;
  };
  int64_t k = 0;
  if (kPrefetchInKernel && pf_lines > 0) {  // 8 steps at a time, a line of pf before each 8
    const real* pf_end = pf + pf_lines * kLine;
    for (int64_t extra = pf_lines - kc / 8; extra > 0; --extra, pf += kLine) __builtin_prefetch(pf);  // lines past one per 8 steps
    for (; k + 8 <= kc; k += 8) {
      if (pf < pf_end) {
        __builtin_prefetch(pf);
        pf += kLine;
      }
#pragma GCC unroll 8
      for (int64_t kk = 0; kk < 8; ++kk) step(k + kk);
    }
  }
#pragma GCC unroll 4
  for (; k < kc; ++k) step(k);
  // [docs:end]
  store_tile(acc, c, from, ldc, m, n);
}

// ================================================================================================
// Buffers: 64-byte aligned scratch that each thread keeps between calls

class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { release(); }
  // At least n reals; the contents are not kept when it grows. (Aligned operator new throws
  // std::bad_alloc itself, from the C++ library: no exception is built in this file.)
  real* get(int64_t n) {
    if (n > capacity_) {
      release();
      data_ = static_cast<real*>(::operator new(static_cast<size_t>(n) * sizeof(real), kAlign));
      capacity_ = n;
    }
    return data_;
  }

 private:
  static constexpr std::align_val_t kAlign{64};
  void release() {
    ::operator delete(data_, kAlign);
    data_ = nullptr;
    capacity_ = 0;
  }

  real* data_ = nullptr;
  int64_t capacity_ = 0;
};

thread_local Scratch tls_a_block;   // a task's packed A block (or all its K blocks: kWholeAReals), per thread
thread_local Scratch tls_b_panels;  // the whole packed op(B): the calling thread's, or each thread's own copy
thread_local Scratch tls_a_shared;  // the whole packed op(A), when tasks share it (see gemm)
thread_local Scratch tls_bias;      // the bias, zero-padded to whole panels

// The bias copied and zero-padded to `padded` values, so that the kernels can read whole
// vectors of it at every panel, the last one too; null if there is no bias.
const real* padded_bias(const real* bias, int64_t N, int64_t padded) {
  if (!bias) return nullptr;
  real* out = tls_bias.get(padded);
  std::copy(bias, bias + N, out);
  std::fill(out + N, out + padded, real(0));
  return out;
}

// ================================================================================================
// The macro-kernel: one packed A block times a range of B panels

// op(B) as the micro-kernel reads it: panel q (columns [q * NR, q * NR + NR)) of the K block
// that starts at row k0, from the packed copy or, on the small-matrix path, in place.
struct BPanels {
  real* packed;      // the packed copy: K blocks one after another, each with its panels in order
  int64_t padded_n;  // N rounded up to NR: the packed width of a K block
  Operand b;         // op(B) itself
  int64_t N;
  const real* bias;  // null, or N values added to every row of C, zero-padded to padded_n
  bool in_place;     // full panels are read from B (rows N apart); only a ragged last one is packed

  bool is_packed(int64_t q) const { return !in_place || (q + 1) * NR > N; }
  // The packed panel, kc x NR reals. With in_place only the last panel is packed.
  real* packed_panel(int64_t k0, int64_t kc, int64_t q) const {
    return in_place ? packed + k0 * NR : packed + k0 * padded_n + q * NR * kc;
  }
};

// C[i0 : i0 + mc, panels q0 .. q1) (+)= A block (mc, kc) @ B[k0 : k0 + kc, same panels], where
// row r of the A block is at a_block + r * lda: the packed copy (lda = kc) or A itself (lda = K).
// `a_packed`: the block is the packed copy, whose slivers are k-major in a kAKMajor copy.
// The first K block overwrites C, or adds to the (M, N) matrix `first_from` when that is given
// (gemm's addend if it has one, else C itself when gemm accumulates); later blocks add to C.
void macro_kernel(int64_t mc, int64_t kc, int64_t k0, const real* a_block, int64_t lda, bool a_packed,
                  const BPanels& bp, int64_t q0, int64_t q1, real* C, const real* first_from, int64_t i0) {
  const bool kmajor = kAKMajor && a_packed;
  const int64_t N = bp.N, slivers = ceil_div(mc, MR);
  for (int64_t q = q0; q < q1; ++q) {
    const int64_t j0 = q * NR, n = std::min(NR, N - j0);
    const bool packed = bp.is_packed(q);
    const real* panel = packed ? bp.packed_panel(k0, kc, q) : bp.b.at(k0, j0);
    const real* bias = bp.bias && k0 == 0 ? bp.bias + j0 : nullptr;  // only the first K block
    // While this panel is in use, bring the next one into cache, a slice per sliver, so the
    // first sliver of the next panel does not wait for memory.
    const real* next = q + 1 < q1 && bp.is_packed(q + 1) ? bp.packed_panel(k0, kc, q + 1) : nullptr;
    const int64_t slice = next ? round_up(ceil_div(kc * NR, slivers), kLine) : 0;
    for (int64_t s = 0; s < slivers; ++s) {
      const int64_t l0 = s * slice, l1 = std::min(l0 + slice, kc * NR);  // this sliver's slice of it
      const real* pf = nullptr;
      int64_t pf_lines = 0;
      if (next && l0 < l1 && kPrefetchInKernel) {  // spread through the kernel's loop
        pf = next + l0;
        pf_lines = ceil_div(l1 - l0, kLine);
      } else if (next) {  // all at once, here
        for (int64_t l = l0; l < l1; l += kLine) __builtin_prefetch(next + l);
      }
      const int64_t ir = s * MR, m = std::min(MR, mc - ir);
      real* c = C + (i0 + ir) * N + j0;  // the (MR, NR) tile at row i0 + ir, column j0
      const real* a = a_block + ir * lda;  // the sliver (a packed one starts ir * kc in, either layout)
      const real* from = k0 > 0 ? c : first_from ? first_from + (i0 + ir) * N + j0 : nullptr;
      if (packed && kmajor)
        micro_kernel<true, true>(kc, a, lda, panel, NR, bias, c, from, N, m, n, pf, pf_lines);
      else if (packed)
        micro_kernel<true, false>(kc, a, lda, panel, NR, bias, c, from, N, m, n, pf, pf_lines);
      else if (kmajor)
        micro_kernel<false, true>(kc, a, lda, panel, bp.b.rs, bias, c, from, N, m, n, pf, pf_lines);
      else
        micro_kernel<false, false>(kc, a, lda, panel, bp.b.rs, bias, c, from, N, m, n, pf, pf_lines);
    }
  }
}

// ================================================================================================
// Two helpers of the driver

// f(0, 1), f(1, 2), ... f(n - 1, n) spread over the threads, through the thread pool's plain
// function form of parallel_for: this file builds no std::function (see thread_pool.h).
template <class F>
void on_threads(int64_t n, F& f) {
  parallel_for(0, n, 1, [](void* ctx, int64_t b, int64_t e) { (*static_cast<F*>(ctx))(b, e); }, &f);
}

// The balanced split of `total` into pieces of at most `most`, rounded up to `multiple`.
int64_t block_size(int64_t total, int64_t most, int64_t multiple) {
  return round_up(ceil_div(total, ceil_div(total, most)), multiple);
}

// ================================================================================================
// Tiny products

// Below this many multiply-adds (about a microsecond of work) packing and blocking cost more
// than they save. An attention head's products, (20, 32) @ (32, 20) and the like, and a
// decoder's step over its source, (1, H) @ (H, S), go through the small kernel below instead.
constexpr int64_t kTinyMacs = 1 << 14;

thread_local Scratch tls_tiny_b;  // op(B) or its ragged last columns, for gemm_tiny

// Every tiny kernel sums each element of C in the order the packed path does (see
// "Determinism" above): one chain over k, from the bias (or 0), adding a[k] b[k] for k = 0, 1,
// ... in turn. Splitting a sum into partial sums would be faster for a single row, but would
// give a row other bits than the same row computed among many, and decoding a batch of
// sentences must give exactly what decoding each alone gives. So a single row finds its
// parallel work across columns instead: several vectors of C, each its own chain.

// C[i0 : i0 + R, 0 : n) (+)= op(A)[i0 : i0 + R, :] @ b (+ bias), where b is K rows ldb apart whose
// first V * VL columns may be read (zero past n if n < V * VL), and so may V * VL of bias. The
// R x V vectors of C stay in registers for the whole sum over k, like the micro-kernel's tile,
// but op(A) is read where it is (one element at a time, broadcast) instead of from a packed
// sliver.
template <int R, int V>
void tiny_tile(int64_t K, const Operand& a, int64_t i0, const real* b, int64_t ldb, const real* bias, real* c,
               int64_t ldc, int64_t n, bool accumulate) {
  // (Every loop over r or v is unrolled, so that the compiler keeps acc in registers.)
  vec acc[R][V];
  const real* a_row[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) a_row[r] = a.at(i0 + r, 0);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) acc[r][v] = bias ? *as_vec(bias + v * VL) : vec{};
  for (int64_t k = 0; k < K; ++k) {
    const real* bk = b + k * ldb;  // row k of b
    vec bv[V];
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) bv[v] = *as_vec(bk + v * VL);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const real x = a_row[r][k * a.cs];
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) acc[r][v] = madd(acc[r][v], x, bv[v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    real* cr = c + r * ldc;
    if (n == V * VL) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        if (accumulate)
          *as_vec(cr + v * VL) += acc[r][v];
        else
          *as_vec(cr + v * VL) = acc[r][v];
      }
    } else {
      alignas(64) real row[V * VL];
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) *as_vec(row + v * VL) = acc[r][v];
      if (accumulate)
        for (int64_t j = 0; j < n; ++j) cr[j] += row[j];
      else
        copy_short(cr, row, n);
    }
  }
}

// Rows [i0, i0 + R) of C, columns [0, n): tiles of V vectors, then single vectors for the rest.
template <int R, int V>
void tiny_rows(int64_t K, const Operand& a, int64_t i0, const real* b, int64_t ldb, const real* bias,
               int64_t n, real* c, int64_t ldc, bool accumulate) {
  auto at = [bias](int64_t j) { return bias ? bias + j : nullptr; };
  int64_t j = 0;
  for (; j + V * VL <= n; j += V * VL)
    tiny_tile<R, V>(K, a, i0, b + j, ldb, at(j), c + j, ldc, V * VL, accumulate);
  for (; j < n; j += VL)
    tiny_tile<R, 1>(K, a, i0, b + j, ldb, at(j), c + j, ldc, std::min(VL, n - j), accumulate);
}

// Row i0 of C alone: 8 vectors (64 columns) at a time, 8 independent chains, and what is left
// as one tile of 1 to 8 vectors.
void tiny_row(int64_t K, const Operand& a, int64_t i0, const real* b, int64_t ldb, const real* bias, int64_t n,
              real* c, bool accumulate) {
  auto at = [bias](int64_t j) { return bias ? bias + j : nullptr; };
  int64_t j = 0;
  for (; j + 8 * VL <= n; j += 8 * VL) tiny_tile<1, 8>(K, a, i0, b + j, ldb, at(j), c + j, 0, 8 * VL, accumulate);
  const int64_t rest = n - j;
  switch (ceil_div(rest, VL)) {  // (a fixed count in each case keeps the sums in registers)
    case 0: break;
    case 1: tiny_tile<1, 1>(K, a, i0, b + j, ldb, at(j), c + j, 0, rest, accumulate); break;
    case 2: tiny_tile<1, 2>(K, a, i0, b + j, ldb, at(j), c + j, 0, rest, accumulate); break;
    case 3: tiny_tile<1, 3>(K, a, i0, b + j, ldb, at(j), c + j, 0, rest, accumulate); break;
    case 4: tiny_tile<1, 4>(K, a, i0, b + j, ldb, at(j), c + j, 0, rest, accumulate); break;
    case 5: tiny_tile<1, 5>(K, a, i0, b + j, ldb, at(j), c + j, 0, rest, accumulate); break;
    case 6: tiny_tile<1, 6>(K, a, i0, b + j, ldb, at(j), c + j, 0, rest, accumulate); break;
    case 7: tiny_tile<1, 7>(K, a, i0, b + j, ldb, at(j), c + j, 0, rest, accumulate); break;
    default: tiny_tile<1, 8>(K, a, i0, b + j, ldb, at(j), c + j, 0, rest, accumulate); break;
  }
}

// C[:, 0 : n) (+)= op(A) @ b: rows four at a time (2 vectors wide: 8 sums), then the last one to
// three rows two at a time (4 vectors wide) and one at a time (tiny_row).
void tiny_columns(int64_t M, int64_t K, const Operand& a, const real* b, int64_t ldb, const real* bias,
                  int64_t n, real* c, int64_t ldc, bool accumulate) {
  int64_t i = 0;
  for (; i + 4 <= M; i += 4) tiny_rows<4, 2>(K, a, i, b, ldb, bias, n, c + i * ldc, ldc, accumulate);
  if (i + 2 <= M) {
    tiny_rows<2, 4>(K, a, i, b, ldb, bias, n, c + i * ldc, ldc, accumulate);
    i += 2;
  }
  if (i < M) tiny_row(K, a, i, b, ldb, bias, n, c + i * ldc, accumulate);
}

#ifndef SEQGRAD_DOUBLE
// Columns [j0, j0 + 8G) of one row of C = a @ B^T (+ bias), clipped at N, for B stored (N, K):
// each element a dot product of two contiguous rows, row j of B and a. To sum it in the chain
// order, 8 rows of B at a time are read as an 8 x 8 block and turned round in registers
// (transpose8x8): then vector kk holds B[j .. j + 7][k + kk], and the chain of those 8 columns
// adds a[k + kk] times it, kk = 0 .. 7 in turn. The G groups of 8 columns are G independent
// chains. Rows of B past N are never read: the last row is read again in their place (those
// columns are not written). ldb: the distance between rows of B (K, or more for a K block).
template <int G>
void dot_columns(int64_t K, const real* a, const real* B, int64_t ldb, int64_t N, int64_t j0, const real* bias,
                 real* c, bool accumulate) {
  const real* rows[G][VL];
  vec acc[G];
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
    for (int64_t l = 0; l < VL; ++l) rows[g][l] = B + std::min(j0 + g * VL + l, N - 1) * ldb;
    acc[g] = bias ? *as_vec(bias + j0 + g * VL) : vec{};
  }
  int64_t k = 0;
  for (; k + VL <= K; k += VL) {
    vec v[G][VL];  // v[g][l] = B[j0 + 8g + l][k .. k + 7]
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g) {
#pragma GCC unroll 8
      for (int64_t l = 0; l < VL; ++l) v[g][l] = *as_vec(rows[g][l] + k);
      transpose8x8(v[g]);  // now v[g][kk] = B[j0 + 8g .. j0 + 8g + 7][k + kk]
    }
    // The G chains step side by side, so that each FMA's latency is hidden by the others'.
#pragma GCC unroll 8
    for (int64_t kk = 0; kk < VL; ++kk) {
      const real x = a[k + kk];
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) acc[g] = madd(acc[g], x, v[g][kk]);
    }
  }
  for (; k < K; ++k)  // the last K % 8 terms, a column of B at a time
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g) {
      vec v = {};  // (every lane is set below; zeroed so no compiler sees it read unset)
#pragma GCC unroll 8
      for (int64_t l = 0; l < VL; ++l) v[l] = rows[g][l][k];
      acc[g] = madd(acc[g], a[k], v);
    }
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
    const int64_t j = j0 + g * VL, n = std::min(VL, N - j);
    alignas(64) real out[VL];
    *as_vec(out) = acc[g];
    for (int64_t l = 0; l < n; ++l) c[j + l] = accumulate ? c[j + l] + out[l] : out[l];
  }
}

// C (+)= A B^T for 1 to 3 rows of A (A not transposed, B stored (N, K)): each row by
// dot_columns, 32 columns at a time, with no copy of B. lda, ldb: row strides of A and B.
void tiny_dots(int64_t M, int64_t N, int64_t K, const real* A, int64_t lda, const real* B, int64_t ldb,
               const real* bias, real* C, bool accumulate) {
  for (int64_t i = 0; i < M; ++i) {
    const real* ai = A + i * lda;
    real* ci = C + i * N;
    for (int64_t j0 = 0; j0 < N; j0 += 4 * VL) {
      switch (std::min<int64_t>(4, ceil_div(N - j0, VL))) {
        case 1: dot_columns<1>(K, ai, B, ldb, N, j0, bias, ci, accumulate); break;
        case 2: dot_columns<2>(K, ai, B, ldb, N, j0, bias, ci, accumulate); break;
        case 3: dot_columns<3>(K, ai, B, ldb, N, j0, bias, ci, accumulate); break;
        default: dot_columns<4>(K, ai, B, ldb, N, j0, bias, ci, accumulate); break;
      }
    }
  }
}
#endif

// C (+)= op(A) op(B) for small products ((+)= : added to C when gemm accumulates). The kernel
// reads whole vectors of rows of op(B), so
//   op(B) not transposed: its first N - N % VL columns are read in place; the last N % VL are
//   copied, zero-padded to one vector, into a scratch buffer (K x VL).
//   op(B) transposed: it is copied into the scratch buffer the right way round, each row
//   zero-padded to a whole number of vectors (K x round_up(N, VL)); at most K x N + K x VL
//   reals, and one pass over B against M passes of arithmetic. Except for 1 to 3 rows of a
//   stored (M, K) A, such as one decoder step's q K^T: there tiny_dots reads B where it is.
// Like the packed path, the sum over k runs in K blocks of kc_max: the first starts from the
// bias, each later one is added to C.
void gemm_tiny(int64_t M, int64_t N, int64_t K, int64_t kc_max, const Operand& a, const real* B, bool trans_b,
               const real* bias, real* C, bool accumulate) {
  for (int64_t k0 = 0; k0 < K; k0 += kc_max) {
    const int64_t kc = std::min(kc_max, K - k0);
    const Operand ak{a.at(0, k0), a.rs, a.cs};      // op(A)[:, k0 : k0 + kc)
    const real* bias_k = k0 == 0 ? bias : nullptr;  // the first block starts from the bias
    const bool add = accumulate || k0 > 0;          // later blocks add to C
    if (trans_b) {
#ifndef SEQGRAD_DOUBLE
      if (M < 4 && a.cs == 1) {
        tiny_dots(M, N, kc, ak.p, a.rs, B + k0, K, bias_k, C, add);
        continue;
      }
#endif
      const int64_t ldb = round_up(N, VL);
      real* bt = tls_tiny_b.get(kc * ldb);
      pack_block(kc, N, kc, ldb, B + k0, 1, K, bt);  // op(B)(k, j) = B[j * K + k0 + k]
      tiny_columns(M, kc, ak, bt, ldb, bias_k, N, C, N, add);
      continue;
    }
    const real* bk = B + k0 * N;  // rows k0 .. of op(B)
    const int64_t full = N - N % VL;
    if (full > 0) tiny_columns(M, kc, ak, bk, N, bias_k, full, C, N, add);
    if (full < N) {
      real* tail = tls_tiny_b.get(kc * VL);
      pack_block(kc, N - full, kc, VL, bk + full, N, 1, tail);
      tiny_columns(M, kc, ak, tail, VL, bias_k ? bias_k + full : nullptr, N - full, C + full, N, add);
    }
  }
}

// A short C's tasks (step 1) each read all of op(A); up to this many reals (256 KB of floats,
// half of a core's L2 here) it stays in the core's cache from one task to the next. The RNN
// step's products, (64, 128) to (64, 512), are under it; a Transformer's weight gradient
// dY^T X, (128, 1280), is over.
constexpr int64_t kShortAReals = 1 << 16;

// Step 2 below packs on all threads only past this many reals of B panels and shared A slivers
// (128 KB of floats): less is a few microseconds of copying, about what handing it out and
// waiting for the other threads costs. (A B that small, packed whole for a product split over
// threads, each thread packs for itself, kOwnBReals: what step 2 packs at that size is shared
// A slivers, and the ragged last panel of a B read in place.)
constexpr int64_t kParallelPackReals = 1 << 15;

// Up to this many bytes of packed op(B), each thread taking part packs a copy of its own, into
// its own buffer, where otherwise the threads pack one copy together and all read it. A shared
// copy costs a core more than its half of the packing: the panels the other core packed come
// from that core's cache, and the next product's packing, into the same buffer, takes each line
// back. Its own copy the core packs and reads in its own cache, and holds only there, from one
// product to the next. Past half a core's L2 the second copy's packing costs more than that:
// hence 1 MB in the AVX-512 copy (2 MB of L2), and half of a 512 KB L2 in the 256-bit copy
// (docs/matmul.md, sections 6 and 10).
#ifndef SEQGRAD_GEMM_OWN_B_BYTES
#define SEQGRAD_GEMM_OWN_B_BYTES (1 << 18)
#endif
constexpr int64_t kOwnBReals = SEQGRAD_GEMM_OWN_B_BYTES / sizeof(real);

// A task's block of C is revisited by every K block, and should stay in the core's L2 from one
// K block to the next while the B panels stream past it. A block of more than twice this many
// reals (512 KB of floats) is swept in column chunks of at most this many (256 KB), every K
// block for one chunk before the next (step 3). At n = 2048 on one thread a row block of C is
// 144 x 2048 floats (the AVX-512 copy), 1.2 MB, which the 2 MB of B panels of each K block
// would push out of L2 every time. Blocks just over 256 KB stay in L2 anyway, and cutting them
// only costs: hence the margin of twice (docs/matmul.md, section 10).
constexpr int64_t kCBlockReals = 1 << 16;
// A chunked task keeps its packed A rows for every K block (mb x K reals) only up to this many
// (4 MB of floats; 144 x 2048 is 295 K): the buffer stays with the thread (Scratch), and a
// product with a very long K would otherwise leave tens of MB behind. Past it, A is packed
// again for each chunk, as for each K block.
constexpr int64_t kWholeAReals = 1 << 20;

// Small matrices read B in place instead of packing it. Packing B is one pass over K x N
// values, which pays for itself only when each panel is then used by enough slivers of A; up
// to kInPlaceSlivers slivers reading B directly is faster: 4 (M <= 24) in the 256-bit copy,
// for cores with a 32 KB L1 and a 512 KB L2; 8 (M <= 64) in the AVX-512 copy, for cores with a
// 48 KB L1 and a 2 MB L2 (an RNN step's (64, 128) @ (128, 512) is then read in place). Except
// when a row of B is a multiple of 4 KB: then the rows of a panel all map to the same few cache
// sets, evict each other, and only the single-sliver case (M <= MR) still wins. Transposed B is
// always packed. (The measurements: docs/matmul.md, sections 5 and 10.)
#ifndef SEQGRAD_GEMM_B_IN_PLACE_SLIVERS
#define SEQGRAD_GEMM_B_IN_PLACE_SLIVERS 4
#endif
constexpr int64_t kInPlaceSlivers = SEQGRAD_GEMM_B_IN_PLACE_SLIVERS;
bool read_b_in_place(int64_t M, int64_t N, bool trans_b) {
  if (trans_b) return false;
  if (M <= MR) return true;
  const bool aliased_rows = (N * static_cast<int64_t>(sizeof(real))) % 4096 == 0;
  return M <= kInPlaceSlivers * MR && !aliased_rows;
}

// ================================================================================================
// The driver: plan, pack, run
//
// gemm() below does a product in three stages, each a few named functions:
//   plan   plan_gemm: every decision, from the shapes, the flags and the thread count alone,
//          into a GemmPlan (what it decided, and why, is written beside each field)
//   pack   pack_shared: the B panels and A slivers that tasks share, packed before any task runs
//          (step 2 of the comments below; step 1 is cutting C into tasks, part of the plan)
//   run    run_tasks: the tasks shared out between the threads, each a block of C through the
//          macro-kernel (step 3)
// Nothing after the plan decides anything: the stages only do what the plan says. Tiny products
// (kTinyMacs) and empty sums (K = 0) never get a plan: gemm hands them to gemm_tiny, or fills C.

// What gemm was asked: C (M, N) (+)= op(A) (M, K) op(B) (K, N) (+ bias).
struct Product {
  int64_t M, N, K;
  const real* A;         // A as stored (read in place when the plan says so)
  Operand a, b;          // op(A) and op(B) as strides into A and B
  real* C;
  const real* bias;      // N values added to every row, or null
  const real* first_from;  // what the first K block adds to: the addend, or C when accumulating, or null
  const real* packed_b;  // op(B) packed by pack_b beforehand, or null
};

// Everything gemm decides about one product before it computes anything. Every field depends on
// the shapes, the flags and the threads available alone (the pool's size, or 1 inside a parallel
// region), never on which thread runs what: the bits of C depend on none of it but kc_max (see
// "Determinism" above).
struct GemmPlan {
  // The K blocks and the panels.
  int64_t kc_max;    // the depth of a K block: K cut into equal blocks of at most KC. Depends on K
                     // alone, so that the order of every sum does (determinism)
  int64_t n_panels;  // panels of NR columns across N, the last one maybe ragged
  // The threads (plan_threads).
  bool parallel;     // shared out between threads: enough work to pay for handing it out
  int64_t threads;   // threads taking part: the pool's size if parallel, else 1
  // Step 1, the tasks: C cut into row blocks of whole slivers by column blocks of whole panels.
  bool tasks_pack_b;         // a short C (at most MC rows) cut into column blocks only, each task
                             // packing its own B panels, in the cache of the core that reads them
  int64_t slivers;           // MR-row slivers of C
  int64_t row_tasks;         // row blocks; row block r is slivers [r S / R, (r + 1) S / R)
  int64_t mb;                // rows of the biggest row block (its packed A block's height)
  int64_t col_tasks;         // column blocks asked for
  int64_t panels_per_task;   // panels in a column block
  int64_t n_tasks;           // row blocks x column blocks
  // Step 2, packing: where op(B) and op(A) are read from, and what is packed before the tasks.
  bool b_in_place;       // full panels read from B itself (read_b_in_place: a small M)
  int64_t first_packed;  // the first panel to pack: n_panels if B came packed, past the full
                         // panels if B is read in place (only a ragged last one is packed), else 0
  bool b_per_thread;     // a small B: each thread packs its own copy at its first task (kOwnBReals)
  int64_t b_items;       // panels packed in step 2, by the threads together
  bool a_in_place;       // A's rows read where they are: a stored (M, K) A, unless its rows are a
                         // multiple of 4 KiB apart (they would then all fall in one set of the L1)
  bool share_a;          // op(A) packed once in step 2 and shared: several column blocks would
                         // otherwise each pack the same A block
  int64_t padded_m;      // M rounded up to MR: the width of a K block of the shared A
  int64_t a_items;       // A slivers packed in step 2
  // Step 3, running a task.
  bool chunked;       // a big block of C (over 2 kCBlockReals) with several K blocks is swept in
                      // column chunks, every K block for one chunk before the next, so that the
                      // chunk stays in L2 while the panels stream past
  int64_t chunk;      // panels per column chunk (all of the task's when not chunked)
  bool a_whole;       // a chunked task packs its A rows once for every K block (up to kWholeAReals)
                      // instead of once per chunk
  int64_t a_stride;   // from one K block's packed A rows to the next, whole cache lines
  bool shared_out;    // the tasks run on several threads
  int64_t parts;      // runs of consecutive tasks, one per thread taking part

  // The first row of row block r (r = row_tasks: M).
  int64_t row_start(int64_t r, int64_t M) const { return std::min(M, r * slivers / row_tasks * MR); }
};

// Whether the product is shared out between threads. When it is big enough to pay for the
// handing out (kParallelMacs); and, when C has too few panels to give each thread two of its own
// (so that the threads would split it by rows and all read all of B), when it is four times that:
// split by rows, a small product runs slower on two threads than on one (docs/matmul.md,
// section 10).
void plan_threads(GemmPlan& p, int64_t M, int64_t N, int64_t K) {
  const int64_t macs = M * N * K;
  p.parallel = macs >= kParallelMacs && (p.n_panels >= 2 * get_num_threads() || macs >= 4 * kParallelMacs) &&
               !in_parallel_region() && get_num_threads() > 1;
  p.threads = p.parallel ? get_num_threads() : 1;
}

// Step 1: cut C into tasks. One thread gets blocks of at most MC rows spanning all of N. T
// threads get about 4T tasks, smaller row blocks first, then column blocks if M is short, so that
// a thread slowed down by something else on the machine simply takes fewer of them. The S slivers
// are shared out evenly (no row block is more than one sliver bigger than another), and R is a
// multiple of T, so each thread gets as many.
// A short C (at most MC rows: the products of an RNN step with batch 64) is cut into column
// blocks only, and each task packs its own B panels (step 3), so that a panel is packed by the
// core that then reads it, and is already in that core's cache. Every such task reads all of
// op(A): up to 4T blocks (at most one per panel) when A stays in a core's L2 (kShortAReals), else
// 2T, since each extra task would read A once more from further away.
void plan_tasks(GemmPlan& p, int64_t M, int64_t K) {
  const int64_t want_tasks = p.threads == 1 ? 1 : 4 * p.threads;
  p.slivers = ceil_div(M, MR);
  p.tasks_pack_b = p.threads > 1 && M <= MC && p.n_panels >= 2 * p.threads;
  p.row_tasks = ceil_div(M, MC);  // the fewest blocks of at most MC rows
  if (!p.tasks_pack_b) {
    if (p.row_tasks < want_tasks) p.row_tasks = std::min(want_tasks, std::max<int64_t>(1, p.slivers / 4));
    p.row_tasks = std::min(p.slivers, round_up(p.row_tasks, p.threads));
  }
  p.mb = ceil_div(p.slivers, p.row_tasks) * MR;
  p.col_tasks = p.tasks_pack_b ? std::min(p.n_panels, (M * K <= kShortAReals ? 4 : 2) * p.threads)
                               : std::min(ceil_div(want_tasks, p.row_tasks), ceil_div(p.n_panels, 4));
  p.panels_per_task = ceil_div(p.n_panels, p.col_tasks);
  p.n_tasks = p.row_tasks * ceil_div(p.n_panels, p.panels_per_task);
}

// Step 2's choices: where each operand is read from, and what is packed before the tasks run.
// op(B) is packed by all threads together into one buffer they all read, unless it came packed,
// or is read in place (a small M: only the ragged last panel is packed), or the tasks pack their
// own panels (a short C), or it is small enough for each thread to pack a copy of its own
// (kOwnBReals). op(A) is read in place when it is stored (M, K) (copying its rows would gain
// nothing: they are the rows of a packed block already, K apart instead of kc), unless its rows
// are a multiple of 4 KiB apart: then a sliver's MR rows all fall in the same set of the 8-way
// L1 cache, where they and the B panel's lines evict each other. Otherwise each task packs its
// own A blocks; but when C is also cut into column blocks, several tasks would pack the same A
// block, so A is packed here instead, once, and shared.
void plan_packing(GemmPlan& p, const Product& x, bool trans_a, bool trans_b) {
  p.b_in_place = !x.packed_b && read_b_in_place(x.M, x.N, trans_b);
  p.first_packed = x.packed_b ? p.n_panels : p.b_in_place ? x.N / NR : 0;
  p.b_per_thread = p.parallel && p.n_tasks > 1 && !p.tasks_pack_b && p.first_packed == 0 &&
                   x.K * (p.n_panels * NR) <= kOwnBReals;
  p.b_items = p.tasks_pack_b || p.b_per_thread ? 0 : p.n_panels - p.first_packed;
  p.a_in_place = !trans_a && (x.K * static_cast<int64_t>(sizeof(real))) % 4096 != 0;
  p.share_a = p.col_tasks > 1 && !p.a_in_place;
  p.padded_m = round_up(x.M, MR);
  p.a_items = p.share_a ? ceil_div(x.M, MR) : 0;
}

// Step 3's choices: how a task sweeps its block of C, and how the tasks are shared out. A task's
// block of C is revisited by every K block; one over twice kCBlockReals, with more than one K
// block, would be pushed out of L2 by the panels streaming past before the next K block came back
// to it, so it goes through its panels in column chunks (kCBlockReals), every K block for one
// chunk before the next, and packs its A rows once for every K block (kWholeAReals).
void plan_sweep(GemmPlan& p, int64_t K) {
  const int64_t chunk_most = std::max<int64_t>(1, kCBlockReals / (p.mb * NR));
  p.chunked = K > p.kc_max && p.mb * p.panels_per_task * NR > 2 * kCBlockReals;
  p.chunk = p.chunked ? block_size(p.panels_per_task, chunk_most, 1) : p.panels_per_task;
  p.a_whole = p.chunked && !p.share_a && !p.a_in_place && p.mb * K <= kWholeAReals;
  p.a_stride = round_up(p.mb * p.kc_max, kLine);
  p.shared_out = p.parallel && p.n_tasks > 1;
  p.parts = p.shared_out ? std::min(p.threads, p.n_tasks) : 1;
}

GemmPlan plan_gemm(const Product& x, bool trans_a, bool trans_b) {
  GemmPlan p{};
  p.kc_max = block_size(x.K, KC, 1);
  p.n_panels = ceil_div(x.N, NR);
  plan_threads(p, x.M, x.N, x.K);
  plan_tasks(p, x.M, x.K);
  plan_packing(p, x, trans_a, trans_b);
  plan_sweep(p, x.K);
  return p;
}

// Panel q of op(B), in every K block, into the packed copy `to`.
void pack_b_all_k(const GemmPlan& p, const Product& x, const BPanels& to, int64_t q) {
  for (int64_t k0 = 0; k0 < x.K; k0 += p.kc_max) {
    const int64_t kc = std::min(p.kc_max, x.K - k0);
    pack_b_panel(x.N, kc, x.b, k0, q * NR, to.packed_panel(k0, kc, q));
  }
}

// Where the tasks read op(B): the packed copy it came as, or the buffer that step 2 (or, for a
// short C, each task) packs it into; none when each thread packs its own (b_per_thread).
BPanels b_panels(const GemmPlan& p, const Product& x) {
  BPanels bp{nullptr, p.n_panels * NR, x.b, x.N, padded_bias(x.bias, x.N, p.n_panels * NR), p.b_in_place};
  if (x.packed_b) bp.packed = const_cast<real*>(x.packed_b);  // (only read)
  else if (p.first_packed < p.n_panels && !p.b_per_thread)
    bp.packed = tls_b_panels.get(x.K * (bp.in_place ? NR : bp.padded_n));
  return bp;
}

// Step 2: pack what the tasks share, every K block of it: the B panels from first_packed on
// (b_items), then the slivers of a shared A (a_items), into a_shared laid out like B, K blocks
// of slivers. The items are taken one at a time from a shared counter; when there is little to
// pack (kParallelPackReals), the calling thread packs it alone.
void pack_shared(const GemmPlan& p, const Product& x, const BPanels& bp, real* a_shared) {
  const int64_t items = p.b_items + p.a_items;  // B panels, then A slivers
  std::atomic<int64_t> next_item{0};
  auto pack = [&](int64_t, int64_t) {
    for (int64_t i; (i = next_item.fetch_add(1)) < items;) {
      if (i < p.b_items) {
        pack_b_all_k(p, x, bp, p.first_packed + i);
        continue;
      }
      const int64_t ir = (i - p.b_items) * MR;
      for (int64_t k0 = 0; k0 < x.K; k0 += p.kc_max) {
        const int64_t kc = std::min(p.kc_max, x.K - k0);
        pack_a(std::min(MR, x.M - ir), kc, x.a, ir, k0, x.M, a_shared + k0 * p.padded_m + ir * kc);
      }
    }
  };
  const int64_t pack_reals = (p.b_items * NR + p.a_items * MR) * x.K;  // about what step 2 copies
  if (p.parallel && items > 1 && pack_reals > kParallelPackReals)
    on_threads(std::min(p.threads, items), pack);
  else if (items > 0)
    pack(0, 1);
}

// [docs:tasks]
// Step 3 hands the tasks out in runs of consecutive tasks, one run per thread taking part (run
// r: tasks [r n / P, (r + 1) n / P)). Each thread takes the tasks of its own run in turn, then,
// when that is done, the tasks left in the others', so that a thread slowed down by something
// else on the machine still ends up taking fewer. A thread usually gets the same run at every
// call (the caller nearly always takes the pool's first chunk, and a worker the next), so the
// panels of a weight multiplied at every step of a sequence (PackedRight) mostly stay in the
// cache of the core that read them the step before; one shared counter would hand the tasks out
// in a different order each time.
struct TaskRuns {
  TaskRuns(int64_t n, int64_t p, bool shared) : n_tasks(n), parts(p), shared_out(shared) {
    for (int64_t r = 0; r < parts; ++r) std::atomic_init(&taken[r], int64_t{0});  // (only the runs in use)
  }
  int64_t n_tasks, parts;
  bool shared_out;
  std::atomic<int64_t> taken[kMaxThreads];  // tasks taken so far from each run
  int64_t start(int64_t r) const { return r * n_tasks / parts; }  // run r: [start(r), start(r + 1))
};

// One thread's way through the runs, starting at its own. One thread alone simply counts (no
// locked add per task, which a product of one microsecond notices).
struct TaskCursor {
  TaskRuns& runs;
  int64_t run, runs_left, counted = -1;
  int64_t next() {  // the next task, or -1 when all are taken
    if (!runs.shared_out) return ++counted < runs.n_tasks ? counted : -1;
    for (; runs_left > 0; run = (run + 1) % runs.parts, --runs_left) {
      const int64_t t = runs.start(run) + runs.taken[run].fetch_add(1);
      if (t < runs.start(run + 1)) return t;
    }
    return -1;
  }
};

// The A block (mc, kc) of rows i0.., K block k0, as macro_kernel reads it, and its row stride:
// A itself (lda = K), or a packed copy (lda = kc): the shared one, the task's for every K block,
// or the task's buffer a_own, packed here.
const real* a_block(const GemmPlan& p, const Product& x, const real* a_shared, real* a_own, int64_t i0,
                    int64_t mc, int64_t k0, int64_t kc, int64_t& lda) {
  lda = kc;
  if (p.a_in_place) {
    lda = x.K;
    return x.A + i0 * x.K + k0;
  }
  if (p.share_a) return a_shared + k0 * p.padded_m + i0 * kc;
  if (p.a_whole) return a_own + k0 / p.kc_max * p.a_stride;
  pack_a(mc, kc, x.a, i0, k0, x.M, a_own);
  return a_own;
}

// Task t: rows [i0, i0 + mc) of C by panels [q0, q1). First what the task packs itself: its own
// B panels (a short C), this thread's copy of all of op(B) at its first task (b_per_thread), its
// A rows for every K block (a_whole). Then, for each column chunk (mostly one, all of its
// panels), for each K block, its A block through the macro-kernel.
void run_task(const GemmPlan& p, const Product& x, const BPanels& bp, BPanels& panels, const real* a_shared,
              real* a_own, int64_t t) {
  const int64_t i0 = p.row_start(t % p.row_tasks, x.M), mc = p.row_start(t % p.row_tasks + 1, x.M) - i0;
  const int64_t q0 = (t / p.row_tasks) * p.panels_per_task;
  const int64_t q1 = std::min(p.n_panels, q0 + p.panels_per_task);
  if (p.tasks_pack_b)  // its own panels: no other task reads or writes them
    for (int64_t q = std::max(q0, p.first_packed); q < q1; ++q) pack_b_all_k(p, x, bp, q);
  if (p.b_per_thread && !panels.packed) {  // this thread's own copy of all of op(B)
    panels.packed = tls_b_panels.get(x.K * bp.padded_n);
    for (int64_t q = 0; q < p.n_panels; ++q) pack_b_all_k(p, x, panels, q);
  }
  if (p.a_whole)  // K block k0 of the rows at a_own + (k0 / kc_max) a_stride
    for (int64_t k0 = 0; k0 < x.K; k0 += p.kc_max)
      pack_a(mc, std::min(p.kc_max, x.K - k0), x.a, i0, k0, x.M, a_own + k0 / p.kc_max * p.a_stride);
  for (int64_t qa = q0; qa < q1; qa += p.chunk) {  // one column chunk
    const int64_t qb = std::min(q1, qa + p.chunk);
    for (int64_t k0 = 0; k0 < x.K; k0 += p.kc_max) {
      const int64_t kc = std::min(p.kc_max, x.K - k0);
      int64_t lda = 0;
      const real* a = a_block(p, x, a_shared, a_own, i0, mc, k0, kc, lda);  // in L2
      macro_kernel(mc, kc, k0, a, lda, !p.a_in_place, panels, qa, qb, x.C, x.first_from, i0);  // C[i0 : i0 + mc, qa .. qb)
    }
  }
}

// Step 3: every task run, on the threads taking part, each thread with its own A buffer and its
// own view of op(B) (the shared copy, or its own, packed at its first task).
void run_tasks(const GemmPlan& p, const Product& x, const BPanels& bp, const real* a_shared) {
  TaskRuns runs(p.n_tasks, p.parts, p.shared_out);
  auto run_part = [&](int64_t part, int64_t) {
    real* a_own = p.share_a || p.a_in_place
                      ? nullptr
                      : tls_a_block.get(p.a_whole ? ceil_div(x.K, p.kc_max) * p.a_stride : p.mb * p.kc_max);
    TaskCursor cursor{runs, part, p.parts};
    BPanels panels = bp;
    for (int64_t t; (t = cursor.next()) >= 0;) run_task(p, x, bp, panels, a_shared, a_own, t);
  };
  if (p.shared_out)
    on_threads(p.parts, run_part);
  else
    run_part(0, 1);
}
// [docs:end]

// The empty sum (K = 0): C = bias (or 0), or, when the product is added to C, C += bias.
void empty_product(int64_t M, int64_t N, const real* bias, real* C, bool add_to_c) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      if (!add_to_c)
        C[i * N + j] = bias ? bias[j] : 0;
      else if (bias)
        C[i * N + j] += bias[j];
    }
}

}  // namespace

// op(B) packed once, for many products with the same right operand (a recurrent weight at every
// step: tensor/matmul.h, PackedRight): every K block's panels, as step 2 of gemm lays them out.
int64_t packed_b_size(int64_t K, int64_t N) { return K * ceil_div(N, NR) * NR; }

// The panels are shared out between the threads in equal runs (parallel_for), unless there is
// little to pack (as in gemm's own step 2): a recurrent weight is packed at the start of every
// sequence, and the other thread would otherwise wait for it.
void pack_b(int64_t K, int64_t N, const real* B, bool trans_b, real* out) {
  const Operand b{B, trans_b ? 1 : N, trans_b ? K : 1};  // op(B): (K, N)
  const int64_t kc_max = block_size(K, KC, 1), n_panels = ceil_div(N, NR);
  const BPanels bp{out, n_panels * NR, b, N, nullptr, false};
  auto pack_panels = [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q)
      for (int64_t k0 = 0; k0 < K; k0 += kc_max) {
        const int64_t kc = std::min(kc_max, K - k0);
        pack_b_panel(N, kc, b, k0, q * NR, bp.packed_panel(k0, kc, q));
      }
  };
  if (n_panels * NR * K > kParallelPackReals && !in_parallel_region() && get_num_threads() > 1)
    on_threads(n_panels, pack_panels);
  else
    pack_panels(0, n_panels);
}

// C (+)= op(A) op(B) (+ bias): plan, pack, run (above). `packed_b`, if not null, is op(B) already
// packed by pack_b: no step packs B then. B is still needed: the tiny products read it as it is.
// With an addend, C's old values are not read. The blocked path adds the addend as it stores the
// first K block (micro_kernel's `from`); the small paths first copy it into C and then
// accumulate on top, which gives the same bits (each sum is addend + product, added once).
void gemm(int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B, bool trans_b,
          real* C, const real* bias, bool accumulate, const real* addend, const real* packed_b) {
  if (M <= 0 || N <= 0) return;
  const bool add_to_c = accumulate || addend;  // the product is added to what C holds
  const bool tiny = M * N * K <= kTinyMacs;
  if (addend && (K <= 0 || tiny))
    for (int64_t i = 0; i < M; ++i) std::copy(addend + i * N, addend + (i + 1) * N, C + i * N);
  if (K <= 0) return empty_product(M, N, bias, C, add_to_c);  // an empty sum: 0, or the bias
  const Operand a{A, trans_a ? 1 : K, trans_a ? M : 1};  // op(A): (M, K)
  if (tiny) {
    const int64_t kc_max = block_size(K, KC, 1);  // as the plan's: depends on K only
    return gemm_tiny(M, N, K, kc_max, a, B, trans_b, padded_bias(bias, N, round_up(N, VL)), C, add_to_c);
  }
  const Operand b{B, trans_b ? 1 : N, trans_b ? K : 1};  // op(B): (K, N)
  const real* first_from = addend ? addend : accumulate ? C : nullptr;
  const Product x{M, N, K, A, a, b, C, bias, first_from, packed_b};
  const GemmPlan p = plan_gemm(x, trans_a, trans_b);
  const BPanels bp = b_panels(p, x);
  real* a_shared = p.share_a ? tls_a_shared.get(K * p.padded_m) : nullptr;  // like B: K blocks of slivers
  pack_shared(p, x, bp, a_shared);
  run_tasks(p, x, bp, a_shared);
}

}  // namespace SEQGRAD_GEMM_NAMESPACE
}  // namespace seqgrad
