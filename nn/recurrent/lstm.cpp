// nn/recurrent/lstm.cpp - the LSTM cell: its equations, the same step fused, and one step of a module.
#include "nn/recurrent/lstm.h"

#include "tensor/check.h"

namespace seqgrad::nn {

LSTMCell::LSTMCell(const LSTMCellOptions& o) : RecurrentCell("LSTMCell", o, kGates) {}

LSTMCell::LSTMCell(int64_t input_size, int64_t hidden_size, bool bias)
    : LSTMCell(LSTMCellOptions(input_size, hidden_size).with_bias(bias)) {}

// [docs:lstm_cell]
RNNState LSTMCell::equations(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh) {
  // One (B, 4H) product for all four gates, then cut it into i, f, g, o (PyTorch's order).
  std::vector<Variable> gates = chunk(add_hidden(gx, s.h, w_hh, b_hh), 4, 1);  // 4 x (B, H)
  Variable i = sigmoid(gates[0]);  // input gate: how much of the candidate to write
  Variable f = sigmoid(gates[1]);  // forget gate: how much of the old cell to keep
  Variable g = tanh(gates[2]);     // candidate cell content
  Variable o = sigmoid(gates[3]);  // output gate: how much of the cell to show
  Variable c = f * s.c + i * g;    // (B, H)
  return {o * tanh(c), c};
}

// The same step with the gate arithmetic fused into one op (autograd/ops_nn.cpp lstm_cell, its
// kernel in tensor/fused.cpp): one graph node instead of eleven, one pass over the gates
// forward and one backward. It returns [h' | c'] side by side; two slices take them apart.
RNNState LSTMCell::step(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh) {
  const int64_t H = w_hh.size(1);
  const Variable hc = lstm_cell(add_hidden(gx, s.h, w_hh, b_hh), s.c);  // (B, 2H)
  return {slice(hc, 1, 0, H), slice(hc, 1, H, 2 * H)};
}

RNNState LSTMCell::forward(const Variable& x, const RNNState& state) {
  const RNNState s = start_state(x, state);  // checks x first (arguments' order of evaluation is unspecified)
  return step(linear(x, weight_ih, bias_ih), s, weight_hh, bias_hh);
}
// [docs:end]

SEQGRAD_REGISTER_CELL(LSTMCell, LSTM, "lstm", "long short-term memory: a cell c kept by forget and input gates")

}  // namespace seqgrad::nn
