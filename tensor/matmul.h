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

#include "tensor/tensor.h"

namespace seqgrad {

// C = op(A) op(B) (+ bias) for contiguous row-major matrices; C (M, N) is overwritten.
//   A is stored (M, K), or (K, M) when trans_a;  B is stored (K, N), or (N, K) when trans_b.
//   bias, if given, is N values added to every row of C: each sum starts from bias[j] instead
//   of 0 (Linear's x W^T + b in one pass over C).
void gemm(int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B,
          bool trans_b, real* C, const real* bias = nullptr);
// The same contract, computed as C[i][j] = bias[j] + sum_k A[i][k] B[k][j] in the plainest way.
void gemm_reference(int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B,
                    bool trans_b, real* C, const real* bias = nullptr);

// (..., M, K) @ (..., K, N) -> (broadcast batch..., M, N)
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);
// The same through gemm_reference (for tests and benchmarks).
Tensor matmul_reference(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);

// y = x W^T + b, the product of a Linear layer: x (..., in), weight (out, in), bias (out) or an
// undefined tensor for none -> (..., out). The bias is added by gemm as it writes y, instead of
// in a second pass over y (matmul, then a broadcasting add), and the result equals that
// composition up to rounding.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

}  // namespace seqgrad
