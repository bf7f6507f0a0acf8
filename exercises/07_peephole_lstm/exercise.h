// exercises/07_peephole_lstm - an LSTM whose gates can see the cell (chapter 5).
//
// In the standard LSTM (nn::LSTMCell::equations) the gates look at x and h only. Gers and
// Schmidhuber's peephole connections let them look at the cell as well, through one weight
// vector per gate (elementwise, shape (H)). With PyTorch's gate order i, f, g, o:
//   [a_i a_f a_g a_o] = x W_ih^T + b_ih + h W_hh^T + b_hh          4 x (B, H)
//   i  = sigmoid(a_i + p_i * c)          f = sigmoid(a_f + p_f * c)      (c = the OLD cell)
//   g  = tanh(a_g)
//   c' = f * c + i * g
//   o  = sigmoid(a_o + p_o * c')                                          (the NEW cell)
//   h' = o * tanh(c')
// Compose it from autograd ops. With p_i = p_f = p_o = 0 it must equal the standard LSTM.
#pragma once

#include "seqgrad.h"

struct PeepholeWeights {
  seqgrad::Variable w_ih, w_hh, b_ih, b_hh;  // (4H, C), (4H, H), (4H), (4H)
  seqgrad::Variable p_i, p_f, p_o;           // (H) each
};

// x (B, C), state h and c (B, H) each -> the next h and c.
seqgrad::nn::RNNState peephole_lstm_step(const seqgrad::Variable& x, const seqgrad::nn::RNNState& state,
                                         const PeepholeWeights& w);
