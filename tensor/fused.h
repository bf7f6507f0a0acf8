// tensor/fused.h - fused kernels: whole layers computed in one pass, forward and backward.
//
// The layers of nn/ can be written as chains of small ops (nn/core/layernorm.cpp and nn/recurrent/rnn.cpp keep
// those composed versions as the readable definitions). Each small op reads and writes the
// whole tensor, allocates its result and records a graph node; a layer norm composed from
// mean, sub, mul, sqrt and div does that ten times forward and more backward. A fused kernel
// does the same arithmetic in one or two passes over the data, keeping each row in cache, and
// autograd (ops.h: layer_norm, lstm_cell) records a single node with the matching backward
// kernel below. Tests check each fused op against its composed version.
// Read first: nn/core/layernorm.cpp and LSTMCell::equations in nn/recurrent/lstm.cpp.
#pragma once

#include "tensor/tensor.h"

namespace seqgrad {

// ------------------------------------------------------------------------------------------------
// Layer normalisation over the last axis, for x (..., C) seen as N rows of C:
//   mu = mean(x_n),  var = mean((x_n - mu)^2),  rstd = 1 / sqrt(var + eps),  x_hat = (x - mu) rstd
//   y = x_hat * weight + bias                          (weight, bias (C); undefined = 1 and 0)
struct LayerNormForward {
  Tensor y;      // (..., C)
  Tensor x_hat;  // (..., C), saved for the backward
  Tensor rstd;   // (N)
};
LayerNormForward layer_norm_forward(const Tensor& x, const Tensor& weight, const Tensor& bias, real eps);

// With g = dy * weight (the gradient reaching x_hat), per row:
//   dx = rstd (g - mean(g) - x_hat mean(g x_hat))
//   dweight = sum over rows of dy x_hat,  dbias = sum over rows of dy
struct LayerNormBackward {
  Tensor dx, dweight, dbias;  // dweight/dbias undefined when weight is
};
LayerNormBackward layer_norm_backward(const Tensor& dy, const Tensor& x_hat, const Tensor& rstd,
                                      const Tensor& weight);

// ------------------------------------------------------------------------------------------------
// One LSTM step after the matmuls: gates (B, 4H) = x W_ih^T + b_ih + h W_hh^T + b_hh in
// PyTorch's order [i f g o], and the previous cell c (B, H):
//   i = sig(gates_i), f = sig(gates_f), g = tanh(gates_g), o = sig(gates_o)
//   c' = f c + i g,  h' = o tanh(c')
// The result is h' and c' side by side, (B, 2H) = [h' | c'], so that one graph node holds both.
struct LSTMCellForward {
  Tensor hc;   // (B, 2H): [h' | c']
  Tensor act;  // (B, 4H): [i f g o] after their nonlinearities, saved for the backward
};
LSTMCellForward lstm_cell_forward(const Tensor& gates, const Tensor& c);

// From dhc = [dh' | dc'] (B, 2H), with t = tanh(c'):
//   dc = dc' + dh' o (1 - t^2)                 (the cell gets gradient directly and through h')
//   do = dh' t,  di = dc g,  df = dc c,  dg = dc i,  dc_prev = dc f
//   dgates = [di i(1-i), df f(1-f), dg (1-g^2), do o(1-o)]    (the nonlinearities' derivatives)
struct LSTMCellBackward {
  Tensor dgates;  // (B, 4H)
  Tensor dc;      // (B, H): the gradient of the previous cell
};
LSTMCellBackward lstm_cell_backward(const Tensor& dhc, const Tensor& act, const Tensor& hc, const Tensor& c);

}  // namespace seqgrad
