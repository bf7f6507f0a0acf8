// nn/recurrent/lstm.h - the LSTM: its cell (one step, as its equations) and its layer (the cell over time).
//
//   [i f g o] = x W_ih^T + b_ih + h W_hh^T + b_hh      (B, 4H), PyTorch's gate order
//   i, f, o = sigmoid(.)   g = tanh(.)
//   c' = f * c + i * g     h' = o * tanh(c')
//
// The cell c is the LSTM's answer to the vanishing gradient: along it, dc'/dc = diag(f), no
// squashing and no matrix, so what the forget gate keeps travels many steps (docs chapter 5).
// Read first: rnn.h. Read next: gru.h.
#pragma once

#include "nn/recurrent/rnn.h"

namespace seqgrad::nn {

class LSTMCell : public RecurrentCell {
 public:
  explicit LSTMCell(const LSTMCellOptions& options);
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true);
  bool has_cell_state() const override { return true; }
  // x (B, C), state h and c (B, H) each (undefined = zeros) -> h', c'
  RNNState forward(const Variable& x, const RNNState& state) override;

  // One step from gx = x W_ih^T + b_ih (B, 4H); a layer computes gx for all T at once.
  // equations: the lines above, composed from autograd ops; the definition.
  static RNNState equations(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh);
  // step: the same, with the gate arithmetic in one fused op (autograd/ops_nn.cpp lstm_cell,
  // kernel tensor/fused.cpp); tested equal to equations, values and gradients
  // (tests/nn/test_fused.cpp). forward and the LSTM layer run this one.
  static RNNState step(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh);
  static constexpr int64_t kGates = 4;
};

class LSTM : public RecurrentLayer {
 public:
  explicit LSTM(const RNNOptions& options) : RecurrentLayer("LSTM", options, LSTMCell::kGates) {}
  bool has_cell_state() const override { return true; }

 protected:
  RNNState cell_step(const Variable& gx, const RNNState& s, const Weights& w) const override {
    return LSTMCell::step(gx, s, w["weight_hh"], w.optional("bias_hh"));
  }
};

}  // namespace seqgrad::nn
