// nn/recurrent/gru.cpp - the GRU cell: its equations, and one step of a module.
#include "nn/recurrent/gru.h"

#include "tensor/check.h"

namespace seqgrad::nn {

GRUCell::GRUCell(const GRUCellOptions& o) : RecurrentCell("GRUCell", o, kGates) {}

GRUCell::GRUCell(int64_t input_size, int64_t hidden_size, bool bias)
    : GRUCell(GRUCellOptions(input_size, hidden_size).with_bias(bias)) {}

// [docs:gru_cell]
RNNState GRUCell::step(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh) {
  Variable gh = linear(s.h, w_hh, b_hh);  // h W_hh^T + b_hh  (B, 3H)
  std::vector<Variable> x3 = chunk(gx, 3, 1), h3 = chunk(gh, 3, 1);  // r, z, n parts
  Variable r = sigmoid(x3[0] + h3[0]);  // reset gate: how much of h feeds the candidate
  Variable z = sigmoid(x3[1] + h3[1]);  // update gate: how much of h to keep
  Variable n = tanh(x3[2] + r * h3[2]);  // candidate (r multiplies h W_hn^T + b_hn, as PyTorch)
  return {n + z * (s.h - n), Variable()};  // = (1 - z) n + z h
}

RNNState GRUCell::forward(const Variable& x, const RNNState& state) {
  const RNNState s = start_state(x, state);  // checks x first (arguments' order of evaluation is unspecified)
  return step(linear(x, weight_ih, bias_ih), s, weight_hh, bias_hh);
}
// [docs:end]

SEQGRAD_REGISTER_CELL(GRUCell, GRU, "gru", "the gated recurrent unit: update and reset gates, no separate cell")

}  // namespace seqgrad::nn
