// exercises/solutions/07_peephole_lstm/exercise.cpp - reference solution of exercise 07.
#include "exercise.h"

using namespace seqgrad;

nn::RNNState peephole_lstm_step(const Variable& x, const nn::RNNState& state, const PeepholeWeights& w) {
  // All four pre-activations in one (B, 4H) product each for x and h, then cut into i, f, g, o.
  const Variable a = matmul(x, w.w_ih, false, /*trans_b=*/true) + w.b_ih +
                     matmul(state.h, w.w_hh, false, /*trans_b=*/true) + w.b_hh;  // (B, 4H)
  const std::vector<Variable> gates = chunk(a, 4, 1);                           // 4 x (B, H)
  const Variable& c = state.c;                                                  // the old cell (B, H)
  const Variable i = sigmoid(gates[0] + w.p_i * c);  // the input and forget gates see the old cell
  const Variable f = sigmoid(gates[1] + w.p_f * c);
  const Variable g = tanh(gates[2]);
  const Variable c_next = f * c + i * g;                   // (B, H)
  const Variable o = sigmoid(gates[3] + w.p_o * c_next);  // the output gate sees the new one
  return {o * tanh(c_next), c_next};
}
