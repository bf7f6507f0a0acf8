// tensor/matmul.cpp - batching and shape checks around the gemm kernels.
#include "tensor/matmul.h"

#include <vector>

#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/thread_pool.h"

namespace seqgrad {

// ================================================================================================
// The reference kernel: one dot product per output element.

// [docs:gemm_reference]
void gemm_reference(int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B,
                    bool trans_b, real* C, const real* bias, bool accumulate, const real* addend) {
  const real* base = addend ? addend : accumulate ? C : nullptr;  // what the product is added to
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = bias ? bias[j] : 0;
      for (int64_t k = 0; k < K; ++k) {
        const real a = trans_a ? A[k * M + i] : A[i * K + k];
        const real b = trans_b ? B[j * K + k] : B[k * N + j];
        acc += static_cast<double>(a) * b;
      }
      C[i * N + j] = base ? base[i * N + j] + static_cast<real>(acc) : static_cast<real>(acc);
    }
}
// [docs:end]

// ================================================================================================
// Batching: broadcast the leading axes, then one gemm per batch entry.

namespace {

using GemmFn = void (*)(MatmulPrecision, int64_t, int64_t, int64_t, const real*, bool, const real*, bool, real*,
                        const real*, bool, const real*);

// gemm_reference in gemm_at's form: the definition, at float32 whatever it is asked.
void reference(MatmulPrecision, int64_t M, int64_t N, int64_t K, const real* A, bool trans_a, const real* B,
               bool trans_b, real* C, const real* bias, bool accumulate, const real* addend) {
  gemm_reference(M, N, K, A, trans_a, B, trans_b, C, bias, accumulate, addend);
}

// op(a) @ op(b) into `out` (allocated here when undefined), overwriting it or adding to it.
// The calling thread's precision is read here, once, and handed to every entry's gemm, on
// whichever thread computes it.
Tensor batched_matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b, GemmFn kernel,
                      Tensor out = Tensor(), bool accumulate = false) {
  const MatmulPrecision precision = matmul_precision();
  check(a.dim() >= 2 && b.dim() >= 2, "matmul: expected operands with at least 2 dimensions, got ",
        a.shape(), " and ", b.shape());
  const int64_t M = trans_a ? a.size(-1) : a.size(-2), K = trans_a ? a.size(-2) : a.size(-1);
  const int64_t Kb = trans_b ? b.size(-1) : b.size(-2), N = trans_b ? b.size(-2) : b.size(-1);
  check(K == Kb, "matmul: inner sizes differ; expected op(a) (..., M, K) and op(b) (..., K, N), got ",
        a.shape(), trans_a ? " (transposed)" : "", " and ", b.shape(), trans_b ? " (transposed)" : "",
        ", K = ", K, " vs ", Kb, K == (trans_b ? b.size(-2) : b.size(-1)) ? " (did you forget to transpose b?)" : "");
  const Shape batch_a(a.shape().begin(), a.shape().end() - 2);
  const Shape batch_b(b.shape().begin(), b.shape().end() - 2);
  Shape shape = broadcast_shapes(batch_a, batch_b, "matmul");
  const int64_t batch = numel(shape);
  const std::vector<int64_t> sa = broadcast_strides(batch_a, shape), sb = broadcast_strides(batch_b, shape);
  shape.push_back(M);
  shape.push_back(N);
  if (out.defined()) {
    check(out.shape() == shape, "matmul_into: expected out of shape ", shape, ", got ", out.shape());
    check(!out.shares_storage(a) && !out.shares_storage(b),
          "matmul_into: expected out to share no memory with the operands, got out sharing a's or b's");
  } else {
    out = Tensor::empty(shape);
  }
  if (out.numel() == 0) return out;
  // Offset, in matrices, of batch entry `i` in each operand.
  auto matrix_index = [&](int64_t i, const std::vector<int64_t>& st) {
    int64_t off = 0;
    for (int64_t d = static_cast<int64_t>(st.size()) - 1; d >= 0; --d) {
      off += (i % shape[d]) * st[d];
      i /= shape[d];
    }
    return off;
  };
  auto run = [&](int64_t i) {
    kernel(precision, M, N, K, a.data() + matrix_index(i, sa) * M * K, trans_a, b.data() + matrix_index(i, sb) * K * N,
           trans_b, out.data() + i * M * N, nullptr, accumulate, nullptr);
  };
  // Small matrices, or many of them (four per thread or more): one batch entry per task, each
  // computed by one thread. A few large ones: let gemm split each matrix between the threads.
  // (Either way each entry is one gemm call, so the bits do not depend on the choice.)
  if (batch > 1 && (M * N * K < kParallelMacs || batch >= 4 * get_num_threads())) {
    parallel_for(0, batch, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) run(i);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) run(i);
  }
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b) {
  return batched_matmul(a, b, trans_a, trans_b, gemm_at);
}

Tensor matmul_reference(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b) {
  return batched_matmul(a, b, trans_a, trans_b, reference);
}

void matmul_into(Tensor& out, const Tensor& a, const Tensor& b, bool trans_a, bool trans_b, bool accumulate) {
  check(out.defined(), "matmul_into: expected a defined out tensor, got an undefined one");
  batched_matmul(a, b, trans_a, trans_b, gemm_at, out, accumulate);
}

// [docs:linear]
namespace {

// The output of x (..., in) W^T + b (+ residual), W (out, in), checked, and the rows of x.
Tensor linear_output(const Tensor& x, int64_t in, int64_t out, const Tensor& b, const Tensor& residual,
                     const Shape& w_shape, int64_t& rows) {
  check(x.dim() >= 1 && x.size(-1) == in, "linear: expected x (..., in) and weight (out, in) with the same in, got ",
        x.shape(), " and ", w_shape);
  check(!b.defined() || b.shape() == Shape{out}, "linear: expected bias of shape ", Shape{out}, ", got ", b.shape());
  Shape shape = x.shape();
  shape.back() = out;
  check(!residual.defined() || residual.shape() == shape, "linear: expected a residual of the output's shape ",
        shape, ", got ", residual.shape());
  // Every row of x (all axes but the last, folded) is a row of one (R, in) @ (in, out) product.
  rows = numel(Shape(x.shape().begin(), x.shape().end() - 1));
  return Tensor::empty(shape);
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& residual) {
  check(w.dim() == 2, "linear: expected x (..., in) and weight (out, in) with the same in, got ", x.shape(), " and ",
        w.shape());
  int64_t rows = 0;
  Tensor y = linear_output(x, w.size(1), w.size(0), b, residual, w.shape(), rows);
  gemm(rows, w.size(0), w.size(1), x.data(), false, w.data(), /*trans_b=*/true, y.data(), b.defined() ? b.data() : nullptr,
       /*accumulate=*/false, residual.defined() ? residual.data() : nullptr);
  return y;
}

Tensor linear(const Tensor& x, const PackedRight& wt, const Tensor& b, const Tensor& residual) {
  int64_t rows = 0;
  Tensor y = linear_output(x, wt.K(), wt.N(), b, residual, Shape{wt.N(), wt.K()}, rows);
  gemm(rows, x.data(), false, wt, y.data(), b.defined() ? b.data() : nullptr, /*accumulate=*/false,
       residual.defined() ? residual.data() : nullptr);
  return y;
}
// [docs:end]

}  // namespace seqgrad
