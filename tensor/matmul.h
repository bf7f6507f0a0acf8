// tensor/matmul.h - matrix multiplication: the naive reference and the entry point for the
// fast kernel, for 2-D and batched operands, with transpose flags.
//
// Shapes: op(a) is (..., M, K) and op(b) is (..., K, N), where op transposes the last two axes
// when its flag is set; leading batch axes broadcast (numpy rules), so (B, T, C) @ (C, H) works.
// The flags let backward compute A^T dC and dC B^T without materialising a transposed copy.
// gemm() is the kernel every matmul goes through; gemm_reference() is the textbook triple
// loop kept beside it as the readable definition and the test oracle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/kernel_path.h"
#include "tensor/tensor.h"

namespace seqgrad {

// Below this many multiply-adds (about 8 microseconds of an AVX2 core, 4 of an AVX-512 one) a
// product runs on one thread: handing work to another would cost more than it saves. gemm uses
// it for one product, batched matmul for each entry of a batch.
constexpr int64_t kParallelMacs = 1 << 18;

// C = op(A) op(B) (+ bias) for contiguous row-major matrices; C (M, N) is overwritten.
//   A is stored (M, K), or (K, M) when trans_a;  B is stored (K, N), or (N, K) when trans_b.
//   bias, if given, is N values added to every row of C: each sum starts from bias[j] instead
//   of 0 (Linear's x W^T + b in one pass over C).
//   accumulate: C += op(A) op(B) (+ bias) instead (BLAS's beta = 1). Backward uses it to add a
//   weight's gradient straight into the gradient already there (Node::add_grad_into): no
//   temporary, no second pass. For K <= 256 (one K block) the result is exactly C plus the
//   product computed on its own; for longer K, C joins the sum at the first block and the
//   rounding may differ.
//   addend: C = addend + op(A) op(B) (+ bias), addend an (M, N) matrix that must not overlap C;
//   C's old values are not read (accumulate or not). The same as copying addend into C and
//   accumulating, to the bit, but the copy is shared between the threads like the rest (an
//   RNN's x W_ih^T + h W_hh^T + b without a separate addition).
void gemm(int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B,
          bool trans_b, real* C, const real* bias = nullptr, bool accumulate = false,
          const real* addend = nullptr);

// ================================================================================================
// The precision of matrix products
//
// MatmulPrecision::Float32, the default: every product as described above, float32 throughout.
// MatmulPrecision::BFloat16: op(A) and op(B) are rounded to bfloat16 (tensor/bf16.h: 8
//   significant bits, to nearest, ties to even) as the kernel takes them in; the products are
//   summed in float32 and C is float32. Nothing else changes precision: the bias, the addend, C's
//   old values and every other op stay float32. autograd's matmul and linear compute both
//   backward products (dA = dC op(B)^T, dB = op(A)^T dC) through these same functions, so a
//   training step run inside the setting trains with bfloat16 products, forward and backward. On
//   a CPU with AVX512_BF16 they are about twice as fast as float32 ones (docs/matmul.md, section
//   9); elsewhere they are a little slower (the inputs are rounded first, then multiplied in
//   float32).
// The setting belongs to the calling thread, as PyTorch's autocast does, and a scope sets it for
// a block and puts back what was there before:
//     { BFloat16Scope bf16;  Variable loss = model.forward(x);  loss.backward(); }
// Each product reads it once, on the thread that asks for the product, and passes it down to
// every thread that computes a part: a product split over the thread pool, or a batched matmul
// spread over it, is computed entirely at the caller's precision. (Code that starts a product
// from inside a parallel_for chunk of its own gets the precision of the thread running that
// chunk: open the scope inside the chunk.)
enum class MatmulPrecision { Float32, BFloat16 };
MatmulPrecision matmul_precision();                     // the calling thread's setting
void set_matmul_precision(MatmulPrecision precision);  // for the calling thread, until changed
// Sets the calling thread's precision for the scope's lifetime, then restores the one before.
class MatmulPrecisionScope {
 public:
  explicit MatmulPrecisionScope(MatmulPrecision precision);
  ~MatmulPrecisionScope();
  MatmulPrecisionScope(const MatmulPrecisionScope&) = delete;
  MatmulPrecisionScope& operator=(const MatmulPrecisionScope&) = delete;

 private:
  MatmulPrecision saved_;
};
// BFloat16 products for a block: { BFloat16Scope bf16; ... }
class BFloat16Scope : public MatmulPrecisionScope {
 public:
  BFloat16Scope() : MatmulPrecisionScope(MatmulPrecision::BFloat16) {}
};

// gemm at the given precision, whatever the calling thread's setting (gemm() is gemm_at with
// matmul_precision()).
void gemm_at(MatmulPrecision precision, int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B,
             bool trans_b, real* C, const real* bias = nullptr, bool accumulate = false, const real* addend = nullptr);

// Which kernel computes the BFloat16 products (tensor/gemm.cpp):
//   avx512_bf16  the vdpbf16ps instruction of AVX512_BF16: bfloat16 pairs, a dot product of two
//                pairs added to float32 sums in one instruction, 32 multiply-adds per 512-bit
//                vector (tensor/gemm_avx512_bf16.cpp). Its sums are not exactly float32's: the
//                instruction rounds twice per pair and flushes subnormals to zero (section 9).
//   avx512_fma   the same sums, bit for bit, by two float32 FMAs per pair with subnormals
//                flushed (MXCSR's DAZ and FTZ): for an AVX-512 CPU without AVX512_BF16, or one
//                whose vdpbf16ps issues less than half as often as an FMA (the Xeon of section 9).
//   portable     any CPU: op(A) and op(B) rounded to bfloat16 into copies, then the float32
//                kernel of gemm_kernel(): exactly the float32 product of the rounded inputs,
//                summed in that kernel's order.
// By default, when gemm_kernel() is avx512, avx512_bf16 if the CPU has AVX512_BF16 and runs it
// faster per multiply-add than FMAs (timed once), else avx512_fma; with another float32 kernel,
// portable (so SEQGRAD_KERNEL=generic or avx2 selects portable too).
// SEQGRAD_BF16_KERNEL=portable|avx512_fma|avx512_bf16 in the environment, or
// set_bf16_kernel(), names one ("auto" goes back to the default); one the CPU cannot run is
// refused (std::invalid_argument). bf16_kernels() lists those this CPU can run, narrowest first.
// In the float64 build (the gradient checks) only portable exists, and sums in float64.
const char* bf16_kernel();
void set_bf16_kernel(const std::string& name);
std::vector<std::string> bf16_kernels();

// op(B) packed once for many products with the same right operand. gemm copies op(B) into the
// layout its kernel reads (panels of NR columns per K block) at every call; an RNN multiplies
// by the same W_hh at every time step, and its backward by the same W, so packing it once per
// sequence saves T - 1 copies of the whole matrix. The pack holds its own copy, taken when it
// is made: the matrix must not change while the pack is in use. Products with it give the
// same bits as gemm with the matrix itself (the same kernel reads the same numbers).
// It is packed for the calling thread's precision when it is made (for BFloat16, rounded, in
// the layout of bf16_kernel()); a product at the other precision, or after a switch of kernel,
// packs op(B) from the matrix as gemm does.
struct PackedRightAccess;
class PackedRight {
 public:
  PackedRight(const Tensor& b, bool trans_b);  // op(b): b (K, N), or b^T when trans_b
  int64_t K() const { return K_; }
  int64_t N() const { return N_; }

 private:
  friend void gemm(int64_t, const real*, bool, const PackedRight&, real*, const real*, bool, const real*);
  friend struct PackedRightAccess;  // its bfloat16 packing (tensor/gemm.cpp)
  Tensor source_;  // the matrix itself (tiny products, and another kernel path, read it)
  bool trans_b_;
  int64_t K_ = 0, N_ = 0;
  KernelPath path_;  // the kernel whose layout packed_ has
  Tensor packed_;    // op(b) in that layout
  MatmulPrecision precision_ = MatmulPrecision::Float32;  // what packed_ was packed for
  int bf16_kernel_ = 0;  // for BFloat16: which bf16 kernel's layout (tensor/gemm.cpp)
  Tensor rounded_;       // for the portable BFloat16 kernel: the matrix rounded to bfloat16
};
// C (+)= op(A) op(B) (+ bias), as gemm above, with op(B) packed beforehand: A (M, K).
void gemm(int64_t M, const real* A, bool trans_a, const PackedRight& b, real* C, const real* bias = nullptr,
          bool accumulate = false, const real* addend = nullptr);

// Which copy of gemm's kernel runs (tensor/gemm.cpp): "avx512", "avx2" or "generic". By default
// the widest this CPU can run, chosen at the first product; SEQGRAD_KERNEL in the environment
// names another. set_gemm_kernel() switches at run time (not while a product is running);
// an unknown name, or one the CPU cannot run, is refused (std::invalid_argument).
// gemm_kernels() lists those this CPU can run, narrowest first.
const char* gemm_kernel();
void set_gemm_kernel(const std::string& name);
std::vector<std::string> gemm_kernels();

// How a copy of the kernel cuts a product into blocks (tensor/gemm_blocked.h, "The shape of the
// computation"): the register tile of C is mr x nr, a K block is at most kc deep and a block
// of A at most mc rows; vector_bits is the micro-kernel's vector width. Read from the copy's
// own constants, so a drawing of the blocking (docs/figures/gemm-blocking.svg) cannot drift
// from the code. Any compiled copy may be asked, whatever this CPU runs: gemm_blocking("avx2")
// on any x86 build; an unknown name is refused (std::invalid_argument).
struct GemmBlocking {
  int64_t mr, nr, kc, mc, vector_bits;
};
GemmBlocking gemm_blocking(const std::string& kernel);

// The same contract, computed as C[i][j] = bias[j] + sum_k A[i][k] B[k][j] in the plainest way
// (with accumulate, that value is added to C[i][j]; with addend, to addend[i][j]).
void gemm_reference(int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B,
                    bool trans_b, real* C, const real* bias = nullptr, bool accumulate = false,
                    const real* addend = nullptr);

// (..., M, K) @ (..., K, N) -> (broadcast batch..., M, N)
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);
// The same product written into `out`, which must have the product's shape and share no memory
// with a or b: out = op(a) op(b), or out += op(a) op(b) when accumulate.
void matmul_into(Tensor& out, const Tensor& a, const Tensor& b, bool trans_a, bool trans_b, bool accumulate);
// The same through gemm_reference (for tests and benchmarks).
Tensor matmul_reference(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);

// y = x W^T + b, the product of a Linear layer: x (..., in), weight (out, in), bias (out) or an
// undefined tensor for none -> (..., out). The bias is added by gemm as it writes y, instead of
// in a second pass over y (matmul, then a broadcasting add), and the result equals that
// composition up to rounding.
// With `residual` (an undefined tensor for none), y = residual + x W^T + b, residual of y's
// shape, added by gemm too (its addend): for in <= 256 exactly residual + linear(x, W, b).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& residual = Tensor());
// The same with the weight packed beforehand: weight_t = PackedRight(weight, /*trans_b=*/true).
Tensor linear(const Tensor& x, const PackedRight& weight_t, const Tensor& bias, const Tensor& residual = Tensor());

}  // namespace seqgrad
