// nn/recurrent/gru.h - the GRU: its cell (one step, as its equations) and its layer (the cell over time).
//
//   r = sigmoid(x_r + h_r)        reset gate: how much of h feeds the candidate
//   z = sigmoid(x_z + h_z)        update gate: how much of h to keep
//   n = tanh(x_n + r * h_n)       the candidate
//   h' = (1 - z) * n + z * h
//
// x_r is the r part of x W_ih^T + b_ih, h_r that of h W_hh^T + b_hh (gate order r, z, n, as
// PyTorch; r multiplies h W_hn^T + b_hn, bias included, as PyTorch does).
// Read first: rnn.h, lstm.h. Read next: seq2seq.h.
#pragma once

#include "nn/recurrent/rnn.h"

namespace seqgrad::nn {

class GRUCell : public RecurrentCell {
 public:
  explicit GRUCell(const GRUCellOptions& options);
  GRUCell(int64_t input_size, int64_t hidden_size, bool bias = true);
  // x (B, C), state h (B, H) (undefined = zeros) -> h'
  RNNState forward(const Variable& x, const RNNState& state) override;

  // One step from gx = x W_ih^T + b_ih (B, 3H); a layer computes gx for all T at once.
  static RNNState step(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh);
  static constexpr int64_t kGates = 3;
};

class GRU : public RecurrentLayer {
 public:
  explicit GRU(const RNNOptions& options) : RecurrentLayer("GRU", options, GRUCell::kGates) {}

 protected:
  RNNState cell_step(const Variable& gx, const RNNState& s, const Weights& w) const override {
    return GRUCell::step(gx, s, w["weight_hh"], w.optional("bias_hh"));
  }
};

}  // namespace seqgrad::nn
