// exercises/06_gru_cell - the GRU of the original paper, from the plain RNN cell (chapter 5).
//
// The RNN cell is one line:      h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)      (B, H)
// The GRU adds two gates. nn::GRUCell (chapter 5 prints its step) follows PyTorch and cuDNN,
// which apply the reset gate AFTER the product with h. Cho et al. (2014) apply it BEFORE:
// the candidate sees the reset state r * h. Write that original form. With PyTorch's gate
// order r, z, n, the rows of w_ih (3H, C), w_hh (3H, H), b_ih (3H) and b_hh (3H) are the
// three gates stacked:
//   r  = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)           reset gate
//   z  = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)           update gate
//   n  = tanh(x W_in^T + b_in + (r * h) W_hn^T + b_hn)        candidate: r multiplies h only
//   h' = (1 - z) * n + z * h                                   (nn::GRUCell has r * (h W_hn^T + b_hn))
// x (B, C), h (B, H) -> h' (B, H). Compose it from autograd ops (matmul with trans_b, chunk or
// slice, sigmoid, tanh, arithmetic); do not call nn::GRUCell.
#pragma once

#include "seqgrad.h"

seqgrad::Variable gru_step(const seqgrad::Variable& x, const seqgrad::Variable& h, const seqgrad::Variable& w_ih,
                           const seqgrad::Variable& w_hh, const seqgrad::Variable& b_ih, const seqgrad::Variable& b_hh);
