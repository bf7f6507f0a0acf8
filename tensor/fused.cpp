// tensor/fused.cpp - fused kernels: layer norm and the LSTM cell, forward and backward.
// The formulas are in fused.h; each kernel works row by row, rows shared between threads.
#include "tensor/fused.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/isa_loop.h"
#include "tensor/reduce.h"
#include "tensor/thread_pool.h"
#include "tensor/vmath.h"

namespace seqgrad {
// ================================================================================================
// Layer norm

LayerNormForward layer_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, real eps) {
  check(x.dim() >= 1, "layer_norm: expected an input with at least one axis, got shape ", x.shape());
  const int64_t C = x.size(-1), N = C > 0 ? x.numel() / C : 0;
  check(!weight.defined() || weight.shape() == Shape{C}, "layer_norm: expected weight of shape [", C, "], got ",
        weight.defined() ? weight.shape() : Shape{});
  check(!bias.defined() || bias.shape() == Shape{C}, "layer_norm: expected bias of shape [", C, "], got ",
        bias.defined() ? bias.shape() : Shape{});
  LayerNormForward f{Tensor::empty(x.shape()), Tensor::empty(x.shape()), Tensor::empty({N})};
  const real* px = x.data();
  const real* pw = weight.defined() ? weight.data() : nullptr;
  const real* pb = bias.defined() ? bias.data() : nullptr;
  real *py = f.y.data(), *ph = f.x_hat.data(), *pr = f.rstd.data();
  parallel_for(0, N, row_grain(C), [&](int64_t n0, int64_t n1) {
    for_isa([&] {  // compiled per instruction set (tensor/isa_loop.h)
      for (int64_t n = n0; n < n1; ++n) {
        const real* xr = px + n * C;
        // Two passes in double: the mean, then the squared deviations from it.
        const double mu = lane_sum(C, [xr](int64_t c) { return static_cast<double>(xr[c]); }) / C;
        const double ss = lane_sum(C, [xr, mu](int64_t c) { return (xr[c] - mu) * (xr[c] - mu); });
        const real rstd = static_cast<real>(1 / std::sqrt(ss / C + eps));
        const real m = static_cast<real>(mu);
        pr[n] = rstd;
        real *hr = ph + n * C, *yr = py + n * C;
        for (int64_t c = 0; c < C; ++c) {
          hr[c] = (xr[c] - m) * rstd;
          yr[c] = pw ? hr[c] * pw[c] + (pb ? pb[c] : 0) : hr[c] + (pb ? pb[c] : 0);
        }
      }
    });
  });
  return f;
}

LayerNormBackward layer_norm_backward(const Tensor& dy, const Tensor& x_hat, const Tensor& rstd,
                                      const Tensor& weight) {
  const int64_t C = x_hat.size(-1), N = rstd.numel();
  LayerNormBackward b{Tensor::empty(x_hat.shape()), Tensor(), Tensor()};
  const real *pd = dy.data(), *ph = x_hat.data(), *pr = rstd.data();
  const real* pw = weight.defined() ? weight.data() : nullptr;
  real* px = b.dx.data();
  parallel_for(0, N, row_grain(C), [&](int64_t n0, int64_t n1) {
    for_isa([&] {  // compiled per instruction set (tensor/isa_loop.h)
      for (int64_t n = n0; n < n1; ++n) {
        const real *dr = pd + n * C, *hr = ph + n * C;
        // The sums of g and of g x_hat over the row, in double.
        auto g_at = [dr, pw](int64_t c) { return pw ? dr[c] * pw[c] : dr[c]; };
        const double sg = lane_sum(C, [&](int64_t c) { return static_cast<double>(g_at(c)); });
        const double sgh = lane_sum(C, [&](int64_t c) { return static_cast<double>(g_at(c)) * hr[c]; });
        const real mg = static_cast<real>(sg / C), mgh = static_cast<real>(sgh / C);
        real* xr = px + n * C;
        for (int64_t c = 0; c < C; ++c) {
          const real g = pw ? dr[c] * pw[c] : dr[c];
          xr[c] = pr[n] * (g - mg - hr[c] * mgh);
        }
      }
    });
  });
  if (pw) {
    // Sums over rows: the column sums of (N, C) matrices, in sum()'s fixed order.
    b.dweight = sum(mul(dy, x_hat).reshape({N, C}), 0);
    b.dbias = sum(dy.reshape({N, C}), 0);
  }
  return b;
}

// ================================================================================================
// LSTM cell

LSTMCellForward lstm_cell_forward(const Tensor& gates, const Tensor& c) {
  check(gates.dim() == 2 && gates.size(1) % 4 == 0, "lstm_cell: expected gates of shape (B, 4H), got ",
        gates.shape());
  const int64_t B = gates.size(0), H = gates.size(1) / 4;
  check(c.shape() == Shape{B, H}, "lstm_cell: expected a cell state of shape [", B, ", ", H, "], got ", c.shape());
  LSTMCellForward f{Tensor::empty({B, 2 * H}), Tensor::empty({B, 4 * H})};
  const real *pg = gates.data(), *pc = c.data();
  real *phc = f.hc.data(), *pa = f.act.data();
  // An element of the cell costs about as much as a vmath tanh or sigmoid (an exp-based
  // function and a few products), so chunks hold kVmathElementCost times fewer elements: with
  // batch 64 and H = 128, 4 rows, so the cell is shared between up to 16 threads.
  parallel_for(0, B, row_grain(4 * H * kVmathElementCost), [&](int64_t b0, int64_t b1) {
    for_isa([&] {  // compiled per instruction set (tensor/isa_loop.h)
      for (int64_t b = b0; b < b1; ++b) {
        real* a = pa + b * 4 * H;  // this row's [i f g o], activated in place
        vmath::sigmoid(pg + b * 4 * H, a, 2 * H);                // i, f
        vmath::tanh(pg + b * 4 * H + 2 * H, a + 2 * H, H);       // g
        vmath::sigmoid(pg + b * 4 * H + 3 * H, a + 3 * H, H);    // o
        real *h_out = phc + b * 2 * H, *c_out = h_out + H;
        const real* c_prev = pc + b * H;
        for (int64_t j = 0; j < H; ++j) c_out[j] = a[H + j] * c_prev[j] + a[j] * a[2 * H + j];  // f c + i g
        vmath::tanh(c_out, h_out, H);
        for (int64_t j = 0; j < H; ++j) h_out[j] *= a[3 * H + j];  // o tanh(c')
      }
    });
  });
  return f;
}

namespace {

// One row of the cell's backward (the formulas in fused.h). The pointers are __restrict (no two
// arrays overlap): without that promise the compiler, unable to rule out that a write to dg
// changes a gate read later, keeps the loop scalar, and this row took a twentieth of the
// lstm_attn step.
SEQGRAD_INLINE_LOOP void lstm_cell_backward_row(int64_t H, const real* __restrict a, const real* __restrict dh,
                            const real* __restrict dc_out, const real* __restrict c_prev,
                            const real* __restrict t, real* __restrict dg, real* __restrict dc_prev) {
  for (int64_t j = 0; j < H; ++j) {
    const real i = a[j], f = a[H + j], cand = a[2 * H + j], o = a[3 * H + j];
    const real dc = dc_out[j] + dh[j] * o * (1 - t[j] * t[j]);
    dg[j] = dc * cand * i * (1 - i);
    dg[H + j] = dc * c_prev[j] * f * (1 - f);
    dg[2 * H + j] = dc * i * (1 - cand * cand);
    dg[3 * H + j] = dh[j] * t[j] * o * (1 - o);
    dc_prev[j] = dc * f;
  }
}

}  // namespace

LSTMCellBackward lstm_cell_backward(const Tensor& dhc, const Tensor& act, const Tensor& hc, const Tensor& c) {
  const int64_t B = act.size(0), H = act.size(1) / 4;
  LSTMCellBackward r{Tensor::empty({B, 4 * H}), Tensor::empty({B, H})};
  const real *pd = dhc.data(), *pa = act.data(), *phc = hc.data(), *pc = c.data();
  real *pdg = r.dgates.data(), *pdc = r.dc.data();
  parallel_for(0, B, row_grain(4 * H * kVmathElementCost), [&](int64_t b0, int64_t b1) {  // grain: as forward
    for_isa([&] {  // compiled per instruction set (tensor/isa_loop.h)
      std::vector<real> t(H);
      for (int64_t b = b0; b < b1; ++b) {
        const real* dh = pd + b * 2 * H;
        vmath::tanh(phc + b * 2 * H + H, t.data(), H);  // t = tanh(c')
        lstm_cell_backward_row(H, pa + b * 4 * H, dh, dh + H, pc + b * H, t.data(), pdg + b * 4 * H, pdc + b * H);
      }
    });
  });
  return r;
}

}  // namespace seqgrad
