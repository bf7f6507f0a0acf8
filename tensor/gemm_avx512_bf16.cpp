// tensor/gemm_avx512_bf16.cpp - the bfloat16 matrix product on AVX512_BF16's vdpbf16ps: C = op(A)
// op(B) with op(A) and op(B) rounded to bfloat16 as they are packed, the products summed in
// float32, C float32. It is what gemm() runs at MatmulPrecision::BFloat16 on a CPU with
// AVX512_BF16 (Cooper Lake, Sapphire Rapids and later Xeons, Zen 4 and Zen 5): tensor/gemm.cpp
// calls it only there, the Makefile compiles this file with -mavx512bf16 and kin whatever the
// build's target, and elsewhere (and in the float64 build) the file is empty.
//
// The instruction. vdpbf16ps acc, a, b (_mm512_dpbf16_ps) sees each 32-bit lane of a and b as a
// pair of bfloat16s, the low half first, and adds their dot product to the float32 in the same
// lane of acc: 16 lanes, 32 multiply-adds per instruction, twice as many as a float32 FMA. As
// Intel's pseudo-code puts it, for lane i,
//     acc[i] = acc[i] + a[2i+1] b[2i+1]     the high halves first, rounded to float32
//     acc[i] = acc[i] + a[2i]   b[2i]       then the low halves, rounded again
// where each step is a fused multiply-add rounded to nearest even (a product of two bfloat16s
// has at most 16 significant bits, so it is exact in float32; the add rounds), and subnormals
// count as zero, coming in (a, b and acc) and going out (after each step). MXCSR is not read.
// So the sums are not those of the float32 kernel on the same rounded inputs: two roundings per
// instruction in another order, and the flushes. tests/tensor/test_bf16.cpp checks this kernel
// against the float64 product of the rounded inputs within a bound derived from that (and
// against an emulation of the pseudo-code, bit for bit); docs/matmul.md, section 9.
//
// The same sums without the instruction (the avx512_fma kernel). Each step of the pseudo-code is a
// float32 FMA of exact operands (a bfloat16 is the top half of a float32: a shift makes one), so
// two FMAs per pair, the high halves' first, with MXCSR set to count subnormals as zero coming in
// (DAZ) and to flush them going out (FTZ), give the very same bits (tested; where a result is
// NaN, both give NaN, but not always the same NaN: the sign and payload that come out depend on
// which operand of the FMA instruction carried the NaN in, which the compiler chooses). The instruction is
// not as fast everywhere: on the Zen 5 of docs/matmul.md one vdpbf16ps (32 multiply-adds) issues
// as often as one FMA (16), but on the Xeon of section 9 four FMAs issue in the time of one
// vdpbf16ps, and its bfloat16 products ran at half the float32 kernel's speed. The default kernel
// is whichever runs more multiply-adds a second on this CPU, timed once (dot_chains and
// fma_chains below, timed by tensor/gemm.cpp);
// avx512_fma also runs on AVX-512 CPUs without AVX512_BF16. It reads both operands expanded
// into floats: each panel's row of NR words as NR high values, then NR low values, and each
// sliver's pair as its MR high values, then its MR low values, so that its loop is the float32
// kernel's (a row's value is one broadcast from memory). The halves are split once, as the
// operands are packed (pack_columns<true> and pack_rows<true> write the floats straight away; a
// panel of B stored (N, K) is made in words first and expanded: expand_pairs), not at every
// sliver that reads a panel: a mask and a shift per panel vector, 4 integer operations beside
// every 32 FMAs on the same ports, held the first version of this kernel to 0.9 of float32's speed.
//
// The layout follows from the instruction: k goes in pairs. A K block of 2 kcp values of k is
// kcp pairs (at most 512); a packed B panel holds, for each pair p, NR 32-bit words, word j = (op(B)(2p, j),
// op(B)(2p + 1, j)) as bfloat16s, low half first; a packed A sliver, for each pair, MR such
// words (k-major: the MR rows' pairs side by side). At each pair the micro-kernel loads NV
// vectors of the panel's row and, for each row of the sliver, broadcasts its word from memory
// and does NV vdpbf16ps: the float32 kernel's loop with pairs in place of single values. An odd
// K gets a last pair whose second value is 0 in both operands (a product of +0).
//
// The rest is tensor/gemm_blocked.h's design in small: B packed whole (by all threads when it
// is big), C cut into tasks of whole slivers by whole panels that threads take in turn, each
// task packing its A block for each K block and running the kernel over its panels, each
// sliver fetching a slice of the next panel as it goes (as the AVX-512 float32 copy does). The value
// of C[i][j] depends on K alone (the K blocks, then the chain of pairs in each, from the bias
// or 0, stored or added to C, or to the addend, as in the float32 kernel), never on M, N, the
// threads or which thread computes it: the same bits on any number of threads, and a row
// computed alone has the bits it has among others.
#if (defined(__x86_64__) || defined(__i386__)) && !defined(SEQGRAD_DOUBLE)
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>

#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

namespace seqgrad {
namespace bfloat_avx512 {
namespace {

// The register tile is MR x NR = 8 x 32: 16 accumulators (the instruction's latency, 6 cycles,
// times its rate, 2 a cycle, asks for at least 12) and 2 registers for the panel's row; the
// broadcasts come from memory. Twelve rows (24 accumulators) ran 3 to 10% slower. A K block is
// up to KCP = 512 pairs (1024 values of k): a panel is 512 x 32 words, 64 KB, more than a 48 KB
// L1, so each sliver streams it from L2, and an A block of MC = 144 rows is 288 KB, in L2 too.
// Against 256 pairs (a 32 KB panel in L1, as in the float32 copy) n = 1024 ran 3 to 5% faster
// on one thread (one K block instead of two: C written once, A packed once per row block);
// n = 512 and 2048 ran alike; 384 pairs fell between.
constexpr int64_t MR = 8;
constexpr int64_t NV = 2;
constexpr int64_t NR = 16 * NV;
constexpr int64_t KCP = 512;
constexpr int64_t MC = 144 / MR * MR;
// avx512_fma's panels are floats, twice the words' bytes: a K block of 512 pairs is a 128 KB
// panel, and read from L2 by every sliver it ran at 0.75 of float32's speed on the Xeon at
// n = 1024. So that kernel runs each panel KSUB pairs at a time (32 KB, in L1, as the float32
// panels), every sliver of the block before the next KSUB pairs: each sliver's sums are stored
// between the parts and picked up again, which changes no bit (a float read back is the float
// written; the chain goes on where it stopped).
constexpr int64_t KSUB = 128;
static_assert(MR <= 16, "a sliver's words for one pair fit one 512-bit vector");
constexpr int64_t kLineWords = 16;  // 32-bit words in a cache line
constexpr bool kPrefetchNextPanel = true;

// Below this many words of packed B (128 KB), one thread packs it: handing it out would cost more.
constexpr int64_t kParallelPackWords = 1 << 15;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
// The balanced split of `total` into pieces of at most `most`.
int64_t block_size(int64_t total, int64_t most) { return ceil_div(total, ceil_div(total, most)); }

// f(0, 1), ... f(n - 1, n) over the thread pool, through its plain-function form (no
// std::function is built in a file compiled for wider instruction sets: thread_pool.h).
template <class F>
void on_threads(int64_t n, F& f) {
  parallel_for(0, n, 1, [](void* ctx, int64_t b, int64_t e) { (*static_cast<F*>(ctx))(b, e); }, &f);
}

// 64-byte aligned scratch that each thread keeps between calls (as in gemm_blocked.h). A copy of
// that one, not shared with it: this file is compiled with AVX-512 flags, and an inline function
// shared with files compiled without them could leave its AVX-512 body to the whole program
// (tests/check_kernel_symbols.sh), so each instruction set's file keeps its own.
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { release(); }
  template <class T>
  T* get(int64_t n) {
    const int64_t bytes = n * static_cast<int64_t>(sizeof(T));
    if (bytes > capacity_) {
      release();
      data_ = ::operator new(static_cast<size_t>(bytes), kAlign);
      capacity_ = bytes;
    }
    return static_cast<T*>(data_);
  }

 private:
  static constexpr std::align_val_t kAlign{64};
  void release() {
    ::operator delete(data_, kAlign);
    data_ = nullptr;
    capacity_ = 0;
  }
  void* data_ = nullptr;
  int64_t capacity_ = 0;
};

thread_local Scratch tls_b;     // the packed op(B) (small_gemm: op(B)'s pairs in words, when trans_b)
thread_local Scratch tls_bw;    // a panel of op(B) packed in words, before expand_pairs (avx512_fma)
thread_local Scratch tls_a;     // a task's packed A block
thread_local Scratch tls_af;    // the same as floats, for avx512_fma (small_gemm: a row of op(A))
thread_local Scratch tls_bias;  // the bias, zero-padded to whole panels
thread_local Scratch tls_sums;  // avx512_fma's sums before C is written (run_fma_block, small_gemm)

// ================================================================================================
// Rounding and pairing

// 16 floats rounded to bfloat16, to nearest, ties to even (tensor/bf16.h, bf16_from_float, in
// vector form): each result in the top half of its 32-bit lane; the low half is not cleared.
// (vcvtne2ps2bf16 would do it in one instruction, but counts a subnormal input as 0, where
// bf16_from_float keeps it: vdpbf16ps flushes it later all the same, but then rounding matches
// the portable path everywhere.)
// (Shifts and adds are written on a vector type of 16 unsigned words: GCC 12's shift
// intrinsics warn of an uninitialised value of their own.)
typedef uint32_t words __attribute__((vector_size(64)));
inline __m512i rounded(__m512 x) {
  const words u = reinterpret_cast<words>(x);
  const words r = u + 0x7FFFu + ((u >> 16) & 1u);
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_mask_or_epi32(reinterpret_cast<__m512i>(r), nan, reinterpret_cast<__m512i>(u),
                              _mm512_set1_epi32(0x00400000));  // a NaN: quiet
}

// 16 values rounded to bfloat16, as floats (the low half cleared): avx512_fma's operands.
inline __m512 bf16_floats(__m512 x) {
  return reinterpret_cast<__m512>(reinterpret_cast<words>(rounded(x)) & 0xFFFF0000u);
}

// Word j = (lo[j], hi[j]) as bfloat16s, low half first: the pairs of two rows of 16 values.
inline __m512i pairs_of_rows(__m512 lo, __m512 hi) {
  const __m512i low = reinterpret_cast<__m512i>(reinterpret_cast<words>(rounded(lo)) >> 16);
  return _mm512_mask_blend_epi16(0xAAAAAAAAu, low, rounded(hi));
}

// 32 consecutive values x[0 .. 32) of one row as 16 pairs: word q = (x[2q], x[2q + 1]).
inline __m512i pairs_along(__m512 first, __m512 second) {
  // The top half of each 32-bit lane of the two rounded vectors, in order: 16-bit word 2w + 1
  // of the 64 words of (first, second), for w = 0 .. 31.
  alignas(64) static const uint16_t kOddWords[32] = {1,  3,  5,  7,  9,  11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31,
                                                     33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63};
  return _mm512_permutex2var_epi16(rounded(first), _mm512_load_si512(kOddWords), rounded(second));
}

// The first n of 16 lanes.
inline __mmask16 first_lanes(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : static_cast<__mmask16>((1u << n) - 1);
}

// Transposes 16 vectors of 16 words: afterwards r[c] word l is what r[l] word c was. Within each
// 128-bit quarter, pairs of rows are interleaved by words, then by pairs of words; then the
// quarters are moved into place in two rounds. (Index i < 16 picks word i of the first vector,
// 16 + i word i of the second. GCC 12's unpack and shuffle intrinsics warn of an uninitialised
// value of their own; these compile to the same instructions.)
inline void transpose16(__m512i r[16]) {
  words t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    const words a = reinterpret_cast<words>(r[i]), b = reinterpret_cast<words>(r[i + 1]);
    t[i] = __builtin_shufflevector(a, b, 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29);
    t[i + 1] = __builtin_shufflevector(a, b, 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
  }
  for (int i = 0; i < 16; i += 4)  // u[i + c], quarter L: rows i .. i + 3 at column 4L + c
    for (int h = 0; h < 2; ++h) {
      u[i + 2 * h] =
          __builtin_shufflevector(t[i + h], t[i + h + 2], 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
      u[i + 2 * h + 1] =
          __builtin_shufflevector(t[i + h], t[i + h + 2], 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
    }
  for (int c = 0; c < 4; ++c) {  // quarters: x0 = (u[c] 0, 1, u[4 + c] 0, 1), x1 = (... 2, 3 ...), y likewise
    const words x0 = __builtin_shufflevector(u[c], u[4 + c], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    const words x1 = __builtin_shufflevector(u[c], u[4 + c], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    const words y0 = __builtin_shufflevector(u[8 + c], u[12 + c], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    const words y1 =
        __builtin_shufflevector(u[8 + c], u[12 + c], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    r[c] = reinterpret_cast<__m512i>(
        __builtin_shufflevector(x0, y0, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27));
    r[4 + c] = reinterpret_cast<__m512i>(
        __builtin_shufflevector(x0, y0, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31));
    r[8 + c] = reinterpret_cast<__m512i>(
        __builtin_shufflevector(x1, y1, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27));
    r[12 + c] = reinterpret_cast<__m512i>(
        __builtin_shufflevector(x1, y1, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31));
  }
}

// ================================================================================================
// Packing
//
// Both operands are packed from op(X) (rows, K), the rows being those of op(A) or the columns of
// op(B): element (r, k) is at x[r * rs + k * ks], with ks == 1 (a row is contiguous along k) or
// rs == 1 (a column is). For pairs p of a K block and rows r, the packed word
// out[p * ld + r] = (op(X)(r, 2p), op(X)(r, 2p + 1)) as bfloat16s, zero past `rows` and past K.
// A B panel has ld = NR, an A sliver ld = MR.

// Transposes 8 vectors of 16 words, w[l] word p = row l's pair p, into o[h] = the words of pairs
// 2h and 2h + 1 of the 8 rows, in that order: the 128 words of a k-major A sliver for 16 pairs,
// contiguous. Three rounds of shuffles, pairing rows by words, then by 2 and by 4 words.
inline void transpose8x16(const __m512i w[8], __m512i o[8]) {
  words s[8], x[4], y[4];
  for (int i = 0; i < 8; i += 2) {  // s[i]: pairs 0 .. 7 of rows i, i + 1 interleaved; s[i + 1]: pairs 8 .. 15
    const words a = reinterpret_cast<words>(w[i]), b = reinterpret_cast<words>(w[i + 1]);
    s[i] = __builtin_shufflevector(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    s[i + 1] = __builtin_shufflevector(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  }
  for (int g = 0; g < 2; ++g)  // rows 4g .. 4g + 3; x: pairs h*8 + 0 .. 3, y: pairs h*8 + 4 .. 7
    for (int h = 0; h < 2; ++h) {
      const words a = s[4 * g + h], b = s[4 * g + 2 + h];
      x[2 * g + h] = __builtin_shufflevector(a, b, 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
      y[2 * g + h] = __builtin_shufflevector(a, b, 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
    }
  for (int h = 0; h < 2; ++h) {  // rows 0 .. 3 (x[h], y[h]) beside rows 4 .. 7 (x[2 + h], y[2 + h])
    o[4 * h] = reinterpret_cast<__m512i>(
        __builtin_shufflevector(x[h], x[2 + h], 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23));
    o[4 * h + 1] = reinterpret_cast<__m512i>(
        __builtin_shufflevector(x[h], x[2 + h], 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
    o[4 * h + 2] = reinterpret_cast<__m512i>(
        __builtin_shufflevector(y[h], y[2 + h], 0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23));
    o[4 * h + 3] = reinterpret_cast<__m512i>(
        __builtin_shufflevector(y[h], y[2 + h], 8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31));
  }
}

// Pairs [p0, p0 + np) of rows [r0, r0 + R) (R <= 16), when op(X)'s columns are contiguous
// (rs == 1): each pair is two loads along r, paired lane by lane. With Floats (avx512_fma's
// layout) the pair goes out as floats instead, 2 ld apart: its R high values (k = 2p + 1), then,
// ld further on, its R low values, each the float32 that the rounded bfloat16 is.
template <bool Floats>
void pack_columns(const float* x, int64_t ks, int64_t rows, int64_t K, int64_t r0, int64_t R, int64_t p0, int64_t np,
                  uint32_t* out, int64_t ld) {
  const __mmask16 store = first_lanes(R), live = first_lanes(std::min(R, rows - r0));
  for (int64_t p = 0; p < np; ++p) {
    const int64_t k = 2 * (p0 + p);
    const __m512 lo = _mm512_maskz_loadu_ps(live, x + k * ks + r0);
    const __m512 hi = k + 1 < K ? _mm512_maskz_loadu_ps(live, x + (k + 1) * ks + r0) : _mm512_setzero_ps();
    if constexpr (Floats) {
      _mm512_mask_storeu_epi32(out + 2 * p * ld, store, reinterpret_cast<__m512i>(bf16_floats(hi)));
      _mm512_mask_storeu_epi32(out + 2 * p * ld + ld, store, reinterpret_cast<__m512i>(bf16_floats(lo)));
    } else {
      _mm512_mask_storeu_epi32(out + p * ld, store, pairs_of_rows(lo, hi));
    }
  }
}

// The same when op(X)'s rows are contiguous (ks == 1): 16 pairs (32 values) of each row become
// a vector of words, and a transpose turns them into words of 16 pairs for the rows. R == 8 (an
// A sliver) takes the 8 x 16 transpose, anything else the 16 x 16 one. The R rows are R streams
// through memory, often 4 KB or more apart, and the hardware's prefetchers did not keep up with
// them: at n = 1024 on one thread, packing op(A) cost 8% of the product, and reading A without
// converting it cost as much. So each row is fetched kAhead values ahead, which won most of it
// back (the Zen 5 of docs/matmul.md, section 9).
// With Floats (avx512_fma's A slivers only: R == 8, ld == 8) each pair goes out as 16 floats, its
// 8 rows' high values, then their low values, as pack_columns<true> writes them.
constexpr int64_t kAhead = 128;
template <bool Floats = false>
void pack_rows(const float* x, int64_t rs, int64_t rows, int64_t K, int64_t r0, int64_t R, int64_t p0, int64_t np,
               uint32_t* out, int64_t ld) {
  const __mmask16 store = first_lanes(R);
  for (int64_t q = 0; q < np; q += 16) {
    const int64_t k = 2 * (p0 + q), n = std::min<int64_t>(16, np - q);
    const __mmask16 m0 = first_lanes(K - k), m1 = first_lanes(K - k - 16);
    __m512i w[16];
    for (int64_t l = 0; l < (R == 8 ? 8 : 16); ++l) {
      if (l < R && r0 + l < rows) {
        const float* row = x + (r0 + l) * rs + k;
        _mm_prefetch(reinterpret_cast<const char*>(row + kAhead), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(row + kAhead + 16), _MM_HINT_T0);
        w[l] = pairs_along(_mm512_maskz_loadu_ps(m0, row), _mm512_maskz_loadu_ps(m1, row + 16));
      } else {
        w[l] = _mm512_setzero_si512();
      }
    }
    if (R == 8 && ld == 8) {  // pairs q + 2h, q + 2h + 1 at out + (q + 2h) * 8: 16 words in a row
      __m512i o[8];
      transpose8x16(w, o);
      for (int64_t h = 0; 2 * h < n; ++h) {
        if constexpr (Floats) {  // o[h]'s halves: pair q + 2h's highs and lows, then pair q + 2h + 1's
          const words x = reinterpret_cast<words>(o[h]), hi = x & 0xFFFF0000u, lo = x << 16;
          _mm512_storeu_si512(out + (q + 2 * h) * 16, reinterpret_cast<__m512i>(__builtin_shufflevector(
                                                           hi, lo, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23)));
          if (2 * h + 1 < n)
            _mm512_storeu_si512(out + (q + 2 * h + 1) * 16,
                                reinterpret_cast<__m512i>(__builtin_shufflevector(
                                    hi, lo, 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31)));
        } else {
          _mm512_mask_storeu_epi32(out + (q + 2 * h) * 8, 2 * h + 1 < n ? __mmask16(0xFFFF) : __mmask16(0x00FF), o[h]);
        }
      }
      continue;
    }
    transpose16(w);
    for (int64_t p = 0; p < n; ++p) _mm512_mask_storeu_epi32(out + (q + p) * ld, store, w[p]);
  }
}

// Packed op(B): K blocks of kcp_max pairs one after another (the last may be shorter), each
// with its panels in order, panel q of a block of kcp pairs at q * NR * kcp. For avx512_fma
// (`floats`) every word is two floats (expand_pairs), so everything is twice as far.
struct PackedB {
  uint32_t* words;
  int64_t padded_n;  // N rounded up to NR
  int64_t kcp_max;
  bool floats;
  uint32_t* panel(int64_t p0, int64_t kcp, int64_t q) const {
    return words + (p0 * padded_n + q * NR * kcp) * (floats ? 2 : 1);
  }
};

// Pairs of a panel, `rows` rows of NR words, as floats for avx512_fma: each row's NR high halves,
// then its NR low halves, each the float32 that bfloat16 is (the low half of the float zero).
void expand_pairs(const uint32_t* in, int64_t rows, float* out) {
  for (int64_t p = 0; p < rows; ++p, in += NR, out += 2 * NR)
    for (int64_t v = 0; v < NV; ++v) {
      const words w = reinterpret_cast<words>(_mm512_load_si512(in + 16 * v));
      _mm512_store_si512(out + 16 * v, reinterpret_cast<__m512i>(w & 0xFFFF0000u));
      _mm512_store_si512(out + NR + 16 * v, reinterpret_cast<__m512i>(w << 16));
    }
}

// Panels [q0, q1) of op(B), in every K block. op(B) is (K, N): B stored (K, N), or (N, K) when
// trans_b. Stored (K, N), each pair of rows of B is read once across all the panels, so B is
// read in order (a panel at a time, each row would be a new stretch of memory N floats on).
void pack_b_panels(const float* B, bool trans_b, int64_t K, int64_t N, const PackedB& to, int64_t q0, int64_t q1) {
  const int64_t P = ceil_div(K, 2);
  if (trans_b && to.floats) {  // avx512_fma: each panel in words first (this thread's scratch), then expanded
    uint32_t* w = tls_bw.get<uint32_t>(to.kcp_max * NR);
    for (int64_t p0 = 0; p0 < P; p0 += to.kcp_max) {
      const int64_t kcp = std::min(to.kcp_max, P - p0);
      for (int64_t q = q0; q < q1; ++q) {
        for (int64_t v = 0; v < NV; ++v) pack_rows(B, K, N, K, q * NR + v * 16, 16, p0, kcp, w + v * 16, NR);
        expand_pairs(w, kcp, reinterpret_cast<float*>(to.panel(p0, kcp, q)));
      }
    }
    return;
  }
  for (int64_t p0 = 0; p0 < P; p0 += to.kcp_max) {
    const int64_t kcp = std::min(to.kcp_max, P - p0);
    if (trans_b) {  // op(B)^T's rows are B's: contiguous along k
      for (int64_t q = q0; q < q1; ++q)
        for (int64_t v = 0; v < NV; ++v)
          pack_rows(B, K, N, K, q * NR + v * 16, 16, p0, kcp, to.panel(p0, kcp, q) + v * 16, NR);
      continue;
    }
    for (int64_t p = 0; p < kcp; ++p) {
      const int64_t k = 2 * (p0 + p);
      for (int64_t q = q0; q < q1; ++q) {
        if (k + 2 < K)  // the next pair's rows, here
          for (int64_t r = k + 2; r < std::min(k + 4, K); ++r)
            _mm_prefetch(reinterpret_cast<const char*>(B + r * N + q * NR), _MM_HINT_T0);
        for (int64_t v = 0; v < NV; ++v) {
          if (to.floats)
            pack_columns<true>(B, N, N, K, q * NR + v * 16, 16, p0 + p, 1, to.panel(p0, kcp, q) + 2 * p * NR + v * 16, NR);
          else
            pack_columns<false>(B, N, N, K, q * NR + v * 16, 16, p0 + p, 1, to.panel(p0, kcp, q) + p * NR + v * 16, NR);
        }
      }
    }
  }
}

// A block: rows [i0, i0 + mc) of op(A) (A stored (M, K), or (K, M) when trans_a), pairs
// [p0, p0 + kcp), as slivers of MR rows one after another, each k-major (kcp x MR words).
void pack_a_block(const float* A, bool trans_a, int64_t M, int64_t K, int64_t i0, int64_t mc, int64_t p0, int64_t kcp,
                  uint32_t* out) {
  if (!trans_a) {
    for (int64_t ir = 0; ir < mc; ir += MR) pack_rows(A, K, M, K, i0 + ir, MR, p0, kcp, out + ir * kcp, MR);
    return;
  }
  // A stored (K, M): a pair of k is two rows of A, read along the block's mc values, each sliver's
  // MR at a time, before the next pair.
  for (int64_t p = 0; p < kcp; ++p)
    for (int64_t ir = 0; ir < mc; ir += MR)
      pack_columns<false>(A, M, M, K, i0 + ir, MR, p0 + p, 1, out + ir * kcp + p * MR, MR);
}

// The same block for avx512_fma, as floats: for each sliver, each pair's MR high values, then
// its MR low values (2 kcp MR floats a sliver).
void pack_a_block_floats(const float* A, bool trans_a, int64_t M, int64_t K, int64_t i0, int64_t mc, int64_t p0,
                         int64_t kcp, float* out) {
  uint32_t* words = reinterpret_cast<uint32_t*>(out);
  if (!trans_a) {
    for (int64_t ir = 0; ir < mc; ir += MR) pack_rows<true>(A, K, M, K, i0 + ir, MR, p0, kcp, words + 2 * ir * kcp, MR);
    return;
  }
  for (int64_t p = 0; p < kcp; ++p)
    for (int64_t ir = 0; ir < mc; ir += MR)
      pack_columns<true>(A, M, M, K, i0 + ir, MR, p0 + p, 1, words + 2 * (ir * kcp + p * MR), MR);
}

// MXCSR for avx512_fma's sums: round to nearest even, every exception masked, subnormals read as
// zero (DAZ, bit 6) and results flushed to zero (FTZ, bit 15): vdpbf16ps's arithmetic, which
// reads no MXCSR.
constexpr unsigned kDotCsr = 0x1F80u | 0x8000u | 0x0040u;

// ================================================================================================
// The micro-kernel: an MR x NR tile of C from a sliver (kcp pairs of MR words) and a panel
// (kcp pairs of NR words). The sums start from the bias (NR values) or 0; then C = sums, or
// C = from + sums when `from` is given (C itself in later K blocks; the addend, or C when gemm
// accumulates, in the first). Only the top-left m x n corner is written.
// `pf`: pf_lines cache lines (of the next panel) to fetch meanwhile, one before every 8 pairs
// (any more than kcp / 8 first, at once), so that the next panel is in L1 when its turn comes
// and the fetches never queue up in front of the kernel's own loads.
// With Fma (avx512_fma) the sliver is `af` and the panel `bf`, both as floats
// (pack_a_block_floats, pack_b_panels), and `a` and `b` are unused; its sums may start from `resume` instead of the
// bias (a K block in parts, KSUB) and end in `partial` (Rows x NR, rows NR apart) instead of C:
// they are made under kDotCsr, which the caller sets once for many tiles, so the kernel may store
// C = sums (from null) but C = from + sums must be added under the caller's own MXCSR
// (finish_tile).
// Rows: how many of the sliver's MR rows are summed (at least m; see micro_kernel_rows).
template <bool Fma, int64_t Rows>
void micro_kernel(int64_t kcp, const uint32_t* __restrict a, const float* __restrict af,
                  const uint32_t* __restrict b, const float* __restrict bf, const float* bias, float* c,
                  const float* from, int64_t ldc, int64_t m, int64_t n, const uint32_t* pf, int64_t pf_lines,
                  const float* resume = nullptr, float* partial = nullptr) {
  __m512 acc[Rows][NV];
#pragma GCC unroll 4
  for (int64_t v = 0; v < NV; ++v) {
    const __m512 start = bias ? _mm512_loadu_ps(bias + 16 * v) : _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int64_t i = 0; i < Rows; ++i) acc[i][v] = resume ? _mm512_load_ps(resume + i * NR + 16 * v) : start;
  }
  for (int64_t i = 0; i < m && !partial; ++i) {  // needed after the loop
    __builtin_prefetch(c + i * ldc, 1);
    __builtin_prefetch(c + i * ldc + NR - 1, 1);
  }
  // [docs:bf16_micro_kernel]
  auto step = [&]() {  // acc += the sliver's pair words times the panel's, one pair
    __m512bh bv[NV];
#pragma GCC unroll 4
    for (int64_t v = 0; v < NV; ++v) bv[v] = (__m512bh)_mm512_load_si512(b + v * 16);
#pragma GCC unroll 16
    for (int64_t i = 0; i < Rows; ++i) {
      const __m512bh x = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[i]));
#pragma GCC unroll 4
      for (int64_t v = 0; v < NV; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], bv[v], x);
    }
    a += MR;
    b += NR;
  };
  // [docs:end]
  // The same pair on float32 FMAs: the panel row's high halves and low halves as floats from
  // `bf`, each sliver row's from `af`; the high halves first.
  // [docs:bf16_fma_step]
  auto fma_step = [&]() {
    __m512 hi[NV], lo[NV];
#pragma GCC unroll 4
    for (int64_t v = 0; v < NV; ++v) {
      hi[v] = _mm512_load_ps(bf + v * 16);
      lo[v] = _mm512_load_ps(bf + NR + v * 16);
    }
#pragma GCC unroll 16
    for (int64_t i = 0; i < Rows; ++i) {
      const __m512 xh = _mm512_set1_ps(af[i]), xl = _mm512_set1_ps(af[MR + i]);
#pragma GCC unroll 4
      for (int64_t v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(xh, hi[v], acc[i][v]);
#pragma GCC unroll 4
      for (int64_t v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(xl, lo[v], acc[i][v]);
    }
    af += 2 * MR;
    bf += 2 * NR;
  };
  // [docs:end]
  // The sums under kDotCsr (set by the caller, run_fma_block), and only they: the accumulators
  // pass through empty asm statements before the first FMA and after the last, so that no FMA
  // moves across the caller's setting or restoring of MXCSR.
  auto pin = [&]() {
#pragma GCC unroll 16
    for (int64_t i = 0; i < Rows; ++i)
#pragma GCC unroll 4
      for (int64_t v = 0; v < NV; ++v) __asm__ volatile("" : "+v"(acc[i][v]));
  };
  if constexpr (Fma) pin();
  auto one = [&]() {
    if constexpr (Fma) fma_step();
    else step();
  };
  for (int64_t extra = pf_lines - kcp / 8; extra > 0; --extra, --pf_lines, pf += kLineWords)
    _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T0);
  int64_t p = 0;
  for (; p + 8 <= kcp; p += 8) {
    if (pf_lines > 0) {
      _mm_prefetch(reinterpret_cast<const char*>(pf), _MM_HINT_T0);
      pf += kLineWords;
      --pf_lines;
    }
#pragma GCC unroll 8
    for (int64_t pp = 0; pp < 8; ++pp) one();
  }
  for (; p < kcp; ++p) one();
  if constexpr (Fma) pin();
  if (partial) {  // the sums so far: to go on from, or for the caller to add to C (finish_tile)
#pragma GCC unroll 16
    for (int64_t i = 0; i < Rows; ++i)
#pragma GCC unroll 4
      for (int64_t v = 0; v < NV; ++v) _mm512_store_ps(partial + i * NR + 16 * v, acc[i][v]);
    return;
  }
  if (m == Rows && n == NR) {
#pragma GCC unroll 16
    for (int64_t i = 0; i < Rows; ++i)
#pragma GCC unroll 4
      for (int64_t v = 0; v < NV; ++v) {
        const __m512 s = from ? _mm512_add_ps(_mm512_loadu_ps(from + i * ldc + 16 * v), acc[i][v]) : acc[i][v];
        _mm512_storeu_ps(c + i * ldc + 16 * v, s);
      }
    return;
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t v = 0; v < NV; ++v) {
      const __mmask16 keep = first_lanes(n - 16 * v);
      if (!keep) continue;
      __m512 s = acc[i][v];
      if (from) s = _mm512_add_ps(_mm512_maskz_loadu_ps(keep, from + i * ldc + 16 * v), s);
      _mm512_mask_storeu_ps(c + i * ldc + 16 * v, keep, s);
    }
}

// Which lines of the next panel sliver s fetches while it runs (micro_kernel's `pf`,
// `pf_lines`): the `lines` lines from `next` (none when null) cut into equal slices, one for each
// of the block's `slivers`.
struct Fetch {
  const uint32_t* from;
  int64_t lines;
};
Fetch fetch_share(const uint32_t* next, int64_t lines, int64_t slivers, int64_t s) {
  if (!next) return {nullptr, 0};
  const int64_t slice = ceil_div(lines, slivers);
  return {next + s * slice * kLineWords, std::max<int64_t>(0, std::min(slice, lines - s * slice))};
}

// avx512_fma's C from a tile of sums (`tile`, rows NR apart): C = from + sums, or C = sums, in
// the m x n corner, as micro_kernel writes it for avx512_bf16.
void finish_tile(const float* tile, float* c, const float* from, int64_t ldc, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t v = 0; v < NV; ++v) {
      const __mmask16 keep = first_lanes(n - 16 * v);
      if (!keep) continue;
      __m512 s = _mm512_load_ps(tile + i * NR + 16 * v);
      if (from) s = _mm512_add_ps(_mm512_maskz_loadu_ps(keep, from + i * ldc + 16 * v), s);
      _mm512_mask_storeu_ps(c + i * ldc + 16 * v, keep, s);
    }
}

// The micro-kernel with as few rows of sums as the sliver's m rows need: 1, 2, 4 or MR. A
// sliver of a product of one row (attention's per-sentence products: a query against its
// sentence) would otherwise cost MR rows' FMAs for one row's results. Each row's sums are its
// own, so the bits do not depend on how many are computed beside it.
template <bool Fma, class... Args>
void micro_kernel_rows(int64_t m, Args... args) {
  if (m <= 1)
    micro_kernel<Fma, 1>(args...);
  else if (m <= 2)
    micro_kernel<Fma, 2>(args...);
  else if (m <= 4)
    micro_kernel<Fma, 4>(args...);
  else
    micro_kernel<Fma, MR>(args...);
}

// ================================================================================================
// Small products, without packing
//
// A product of one or two rows (attention's per-sentence products: a query against its
// sentence's keys, its weights against the values), or of one or two pairs of k (their
// gradients with respect to the keys and values), is mostly packing on the blocked path: panels
// padded to NR columns and expanded, a sliver padded to MR rows, for a few hundred
// multiply-adds. So such a product makes each row's sums straight away, 16 columns at a time:
// for each pair, op(B)'s two values in those columns, rounded, and the two FMAs of avx512_fma,
// the high halves first, under kDotCsr. With one K block (P <= KCP) these are the chains both
// kernels compute, from the bias or 0, and C = from + sums as there: the same bits (the tests
// compare rows alone with the same rows among many). op(B) stored (K, N) is read in place and
// rounded again for each row of C, which costs little when there are one or two rows or one or
// two pairs; stored (N, K) (trans_b), its pairs are first packed in words, 16 columns at a time
// (pack_rows). MXCSR is set once for a chunk of rows whose sums fit kSmallSums floats, then C =
// from + sums is written for them.
constexpr int64_t kSmallRows = 2, kSmallPairs = 2;
constexpr int64_t kSmallSums = 1 << 14;

// x rounded to bfloat16, as a float: tensor/bf16.h's round_to_bf16 (and the vector `rounded`),
// written out here for the reason Scratch is: an inline function shared with files compiled
// without AVX-512 could leave its AVX-512 copy to the whole program.
inline float bf16_float(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const uint32_t r = ((u & 0x7FFFFFFFu) > 0x7F800000u ? (u | 0x00400000u) : u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  float f;
  std::memcpy(&f, &r, sizeof f);
  return f;
}

// C = from + op(A) op(B) (+ bias), from = the addend, C itself (accumulate) or nothing; P <= KCP.
void small_gemm(int64_t M, int64_t N, int64_t K, const float* A, bool trans_a, const float* B, bool trans_b, float* C,
                const float* bias, const float* from_base) {
  const int64_t P = ceil_div(K, 2), groups = ceil_div(N, 16);
  uint32_t* packed = nullptr;  // trans_b: group g's pair p at packed + (g * P + p) * 16
  if (trans_b) {
    packed = tls_b.get<uint32_t>(groups * P * 16);
    for (int64_t g = 0; g < groups; ++g) pack_rows(B, K, N, K, g * 16, 16, 0, P, packed + g * P * 16, 16);
  }
  float* pairs = tls_af.get<float>(2 * P);  // row i of op(A): pair p's high value, then its low value
  const int64_t chunk = std::max<int64_t>(1, kSmallSums / (groups * 16));  // rows per setting of MXCSR
  float* sums = tls_sums.get<float>(std::min(M, chunk) * groups * 16);
  for (int64_t i0 = 0; i0 < M; i0 += chunk) {
    const int64_t i1 = std::min(M, i0 + chunk);
    const unsigned saved_csr = _mm_getcsr();
    _mm_setcsr(kDotCsr);
    for (int64_t i = i0; i < i1; ++i) {
      for (int64_t p = 0; p < P; ++p) {
        const int64_t k = 2 * p;
        const float lo = trans_a ? A[k * M + i] : A[i * K + k];
        const float hi = k + 1 < K ? (trans_a ? A[(k + 1) * M + i] : A[i * K + k + 1]) : 0.0f;
        pairs[2 * p] = bf16_float(hi);
        pairs[2 * p + 1] = bf16_float(lo);
      }
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t j0 = 16 * g;
        const __mmask16 live = first_lanes(N - j0);
        __m512 acc = bias ? _mm512_maskz_loadu_ps(live, bias + j0) : _mm512_setzero_ps();
        __asm__ volatile("" : "+v"(acc));  // no FMA before MXCSR is set (as micro_kernel's pin)
        for (int64_t p = 0; p < P; ++p) {
          __m512 hi, lo;
          if (trans_b) {
            const words w = reinterpret_cast<words>(_mm512_load_si512(packed + (g * P + p) * 16));
            hi = reinterpret_cast<__m512>(w & 0xFFFF0000u);
            lo = reinterpret_cast<__m512>(w << 16);
          } else {
            const int64_t k = 2 * p;
            lo = bf16_floats(_mm512_maskz_loadu_ps(live, B + k * N + j0));
            hi = k + 1 < K ? bf16_floats(_mm512_maskz_loadu_ps(live, B + (k + 1) * N + j0)) : _mm512_setzero_ps();
          }
          acc = _mm512_fmadd_ps(_mm512_set1_ps(pairs[2 * p]), hi, acc);
          acc = _mm512_fmadd_ps(_mm512_set1_ps(pairs[2 * p + 1]), lo, acc);
        }
        __asm__ volatile("" : "+v"(acc));  // every FMA done before MXCSR is restored
        _mm512_store_ps(sums + ((i - i0) * groups + g) * 16, acc);
      }
    }
    _mm_setcsr(saved_csr);
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t j0 = 16 * g;
        const __mmask16 live = first_lanes(N - j0);
        __m512 s = _mm512_load_ps(sums + ((i - i0) * groups + g) * 16);
        if (from_base) s = _mm512_add_ps(_mm512_maskz_loadu_ps(live, from_base + i * N + j0), s);
        _mm512_mask_storeu_ps(C + i * N + j0, live, s);
      }
  }
}

}  // namespace

// ================================================================================================
// Entry points (declared in tensor/gemm.cpp)

// 32-bit elements of packed op(B): words (one pair of bfloat16s each), or for avx512_fma (`fma`)
// twice as many floats.
int64_t packed_b_size(int64_t K, int64_t N, bool fma) { return ceil_div(K, 2) * ceil_div(N, NR) * NR * (fma ? 2 : 1); }

// op(B) packed once for many products (PackedRight), in the layout gemm packs it into.
void pack_b(int64_t K, int64_t N, const float* B, bool trans_b, uint32_t* out, bool fma) {
  const int64_t n_panels = ceil_div(N, NR);
  const PackedB to{out, n_panels * NR, block_size(ceil_div(K, 2), KCP), fma};
  auto pack = [&](int64_t q0, int64_t q1) { pack_b_panels(B, trans_b, K, N, to, q0, q1); };
  if (packed_b_size(K, N, false) > kParallelPackWords && !in_parallel_region() && get_num_threads() > 1)
    on_threads(n_panels, pack);
  else
    pack(0, n_panels);
}

// C (+)= op(A) op(B) (+ bias), or C = addend + ..., as tensor/matmul.h's gemm, the inputs rounded
// to bfloat16. `packed_b`, if not null, is op(B) packed by pack_b. With fma, the sums are made by
// float32 FMAs (the avx512_fma kernel), else by vdpbf16ps (avx512_bf16): the same bits.
void gemm(int64_t M, int64_t N, int64_t K, const float* A, bool trans_a, const float* B, bool trans_b, float* C,
          const float* bias, bool accumulate, const float* addend, const uint32_t* packed_b, bool fma) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {  // an empty sum: 0 or the bias, added to the addend or to C when asked
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const float base = addend ? addend[i * N + j] : accumulate ? C[i * N + j] : 0.0f;
        C[i * N + j] = (addend || accumulate) ? (bias ? base + bias[j] : base) : (bias ? bias[j] : 0.0f);
      }
    return;
  }
  const int64_t P = ceil_div(K, 2);                  // pairs of k
  const int64_t kcp_max = block_size(P, KCP);        // depends on K only: determinism
  const int64_t n_panels = ceil_div(N, NR), padded_n = n_panels * NR;
  const int64_t macs = M * N * K;
  const bool parallel = macs >= kParallelMacs && !in_parallel_region() && get_num_threads() > 1;
  const int64_t threads = parallel ? get_num_threads() : 1;
  const float* first_from = addend ? addend : accumulate ? C : nullptr;  // what the first K block adds to
  if (!packed_b && !parallel && P <= KCP && (M <= kSmallRows || P <= kSmallPairs))
    return small_gemm(M, N, K, A, trans_a, B, trans_b, C, bias, first_from);

  // The bias, zero-padded so that the kernel reads whole vectors of it at every panel.
  const float* padded_bias = nullptr;
  if (bias) {
    float* pb = tls_bias.get<float>(padded_n);
    std::copy(bias, bias + N, pb);
    std::fill(pb + N, pb + padded_n, 0.0f);
    padded_bias = pb;
  }

  // 1. op(B), packed (by all threads when there is much of it), unless it came packed.
  PackedB bp{const_cast<uint32_t*>(packed_b), padded_n, kcp_max, fma};
  if (!packed_b) {
    bp.words = tls_b.get<uint32_t>(P * padded_n * (fma ? 2 : 1));
    auto pack = [&](int64_t q0, int64_t q1) { pack_b_panels(B, trans_b, K, N, bp, q0, q1); };
    if (parallel && n_panels > 1 && P * padded_n > kParallelPackWords)
      on_threads(n_panels, pack);  // (one run of panels per thread)
    else
      pack(0, n_panels);
  }

  // 2. Tasks: row blocks of whole slivers (at most MC rows) by column blocks of whole panels,
  //    about 4 per thread, so that a thread slowed down by something else takes fewer.
  const int64_t slivers = ceil_div(M, MR);
  const int64_t want = threads == 1 ? 1 : 4 * threads;
  int64_t row_tasks = std::min(slivers, std::max(ceil_div(M, MC), want));
  if (threads > 1) row_tasks = std::min(slivers, round_up(row_tasks, threads));
  const int64_t col_tasks = std::min(n_panels, ceil_div(want, row_tasks));
  const int64_t panels_per_task = ceil_div(n_panels, col_tasks);
  const int64_t n_tasks = row_tasks * ceil_div(n_panels, panels_per_task);
  const int64_t mb = ceil_div(slivers, row_tasks) * MR;  // the biggest row block
  auto row_start = [&](int64_t r) { return std::min(M, r * slivers / row_tasks * MR); };

  // 3. Each task: for each K block, pack its rows of op(A) into slivers, then every sliver times
  //    every panel of the task.
  // avx512_fma's part of a task for one K block (its A block expanded in `af`): panel by panel,
  // KSUB pairs at a time, every sliver of the block, each sliver's sums kept in `sums` between
  // parts; the next part's panel lines are fetched meanwhile, a slice per sliver. MXCSR is set
  // for the sums once per panel, not once per tile (setting it costs some 20 to 40 cycles, and
  // waits for the FMAs in flight): the last part stores C = sums straight away, but C = from +
  // sums waits for MXCSR to be restored (finish_tile).
  auto run_fma_block = [&](int64_t i0, int64_t mc, int64_t q0, int64_t q1, int64_t p0, int64_t kcp, const float* af) {
    float* sums = tls_sums.get<float>(MC * NR);
    const int64_t slivers_here = ceil_div(mc, MR);
    const bool adds = p0 > 0 || first_from;  // C = from + sums, not C = sums
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t j0 = q * NR, n = std::min(NR, N - j0);
      const float* panel = reinterpret_cast<const float*>(bp.panel(p0, kcp, q));
      const float* bias_q = padded_bias && p0 == 0 ? padded_bias + j0 : nullptr;  // the first K block only
      const unsigned saved_csr = _mm_getcsr();
      _mm_setcsr(kDotCsr);
      for (int64_t s0 = 0; s0 < kcp; s0 += KSUB) {
        const int64_t ks = std::min(KSUB, kcp - s0);
        const bool first = s0 == 0, last = s0 + ks == kcp;
        const uint32_t* next = !last                     ? bp.panel(p0, kcp, q) + 2 * NR * (s0 + ks)
                               : kPrefetchNextPanel && q + 1 < q1 ? bp.panel(p0, kcp, q + 1)
                                                                  : nullptr;
        const int64_t lines = (last ? std::min(KSUB, kcp) : std::min(KSUB, kcp - s0 - ks)) * 2 * NR / kLineWords;
        for (int64_t s = 0, ir = 0; ir < mc; ++s, ir += MR) {
          const Fetch f = fetch_share(next, lines, slivers_here, s);
          float* tile = sums + ir * NR;
          const int64_t m = std::min(MR, mc - ir);
          micro_kernel_rows<true>(m, ks, nullptr, af + 2 * (ir * kcp + MR * s0), nullptr, panel + 2 * NR * s0,
                                  first ? bias_q : nullptr, C + (i0 + ir) * N + j0, nullptr, N, m, n, f.from, f.lines,
                                  first ? nullptr : tile, last && !adds ? nullptr : tile);
        }
      }
      _mm_setcsr(saved_csr);  // (its exception flags too: the sums raise none, as vdpbf16ps raises none)
      if (!adds) continue;
      for (int64_t ir = 0; ir < mc; ir += MR) {
        float* c = C + (i0 + ir) * N + j0;
        const float* from = p0 > 0 ? c : first_from ? first_from + (i0 + ir) * N + j0 : nullptr;
        finish_tile(sums + ir * NR, c, from, N, std::min(MR, mc - ir), n);
      }
    }
  };

  std::atomic<int64_t> next_task{0};
  auto run = [&](int64_t, int64_t) {
    uint32_t* a_block = fma ? nullptr : tls_a.get<uint32_t>(mb * kcp_max);
    float* a_floats = fma ? tls_af.get<float>(2 * mb * kcp_max) : nullptr;
    for (int64_t t; (t = next_task.fetch_add(1, std::memory_order_relaxed)) < n_tasks;) {
      const int64_t i0 = row_start(t % row_tasks), mc = row_start(t % row_tasks + 1) - i0;
      const int64_t q0 = (t / row_tasks) * panels_per_task, q1 = std::min(n_panels, q0 + panels_per_task);
      for (int64_t p0 = 0; p0 < P; p0 += kcp_max) {
        const int64_t kcp = std::min(kcp_max, P - p0);
        if (fma) {
          pack_a_block_floats(A, trans_a, M, K, i0, mc, p0, kcp, a_floats);
          run_fma_block(i0, mc, q0, q1, p0, kcp, a_floats);
          continue;
        }
        pack_a_block(A, trans_a, M, K, i0, mc, p0, kcp, a_block);
        for (int64_t q = q0; q < q1; ++q) {
          const int64_t j0 = q * NR, n = std::min(NR, N - j0);
          const uint32_t* panel = bp.panel(p0, kcp, q);
          const float* bias_q = padded_bias && p0 == 0 ? padded_bias + j0 : nullptr;  // the first K block only
          // The next panel is fetched while this one is in use, a slice of its lines per sliver.
          const uint32_t* next_panel = kPrefetchNextPanel && q + 1 < q1 ? bp.panel(p0, kcp, q + 1) : nullptr;
          const int64_t lines = kcp * NR / kLineWords;
          for (int64_t s = 0, ir = 0; ir < mc; ++s, ir += MR) {
            float* c = C + (i0 + ir) * N + j0;
            const float* from = p0 > 0 ? c : first_from ? first_from + (i0 + ir) * N + j0 : nullptr;
            const Fetch f = fetch_share(next_panel, lines, ceil_div(mc, MR), s);
            const int64_t m = std::min(MR, mc - ir);
            micro_kernel_rows<false>(m, kcp, a_block + ir * kcp, nullptr, panel, nullptr, bias_q, c, from, N, m, n, f.from,
                                     f.lines);
          }
        }
      }
    }
  };
  if (parallel && n_tasks > 1)
    on_threads(std::min(threads, n_tasks), run);
  else
    run(0, 1);
}

// What tensor/gemm.cpp times to choose between the twins (dot_is_faster there): `rounds` rounds
// of one instruction on each of 16 independent chains (the micro-kernel keeps 16 sums in
// flight), vdpbf16ps (32 multiply-adds each) or the float32 FMA (16). (The clock is read
// there: a template of <chrono> instantiated in this file would be compiled for AVX-512 and
// could be the copy the whole program uses, tests/check_kernel_symbols.sh.)
namespace {
template <class Op>
void run_chains(int64_t rounds, Op op) {
  constexpr int kChains = 16;
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  for (int64_t r = 0; r < rounds; ++r)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = op(acc[c]);
  for (int c = 0; c < kChains; ++c) __asm__ volatile("" : "+v"(acc[c]));  // the chains' results are used
}
}  // namespace

void dot_chains(int64_t rounds) {
  const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3F803F80), y = (__m512bh)_mm512_setzero_si512();
  run_chains(rounds, [&](__m512 a) { return _mm512_dpbf16_ps(a, x, y); });
}

void fma_chains(int64_t rounds) {
  const __m512 x = _mm512_set1_ps(1.0f), y = _mm512_set1_ps(0.0f);
  run_chains(rounds, [&](__m512 a) { return _mm512_fmadd_ps(x, y, a); });
}

}  // namespace bfloat_avx512
}  // namespace seqgrad
#endif
