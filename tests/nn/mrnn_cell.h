// tests/nn/mrnn_cell.h - a cell for the tests of declared parameters (test_cell_params.cpp,
// test_grad_cell_params.cpp): its parameters are none of PyTorch's four but weight_ih.
// Not registered: it is built by class, so the registry's names stay the library's.
#pragma once

#include "seqgrad.h"

namespace seqgrad::testing {

// A multiplicative RNN (after Krause et al.'s mLSTM, without its gates): the input chooses,
// through m, which hidden-to-hidden transition applies at each step.
//   [a | b] = x W_ih^T + b_ih                       (B, 2H): the input's two parts
//   m  = b * (h W_mh^T)                              (B, H)
//   h' = tanh(a + m W_hm^T)                          (B, H)
// weight_ih (2H, C), bias_ih (2H), weight_mh (H, H), weight_hm (H, H): no other parameter.
inline std::vector<nn::CellParameter> mrnn_parameters(int64_t input_size, int64_t hidden_size, bool bias) {
  std::vector<nn::CellParameter> p{{"weight_ih", {2 * hidden_size, input_size}, nullptr},
                                   {"weight_mh", {hidden_size, hidden_size}, nullptr},
                                   {"weight_hm", {hidden_size, hidden_size}, nullptr}};
  if (bias) p.push_back({"bias_ih", {2 * hidden_size}, [](Tensor& b) { b.fill_(0); }});  // an init of its own
  return p;
}

inline nn::RNNState mrnn_step(const Variable& gx, const nn::RNNState& s, const nn::CellWeights& w) {
  const std::vector<Variable> ab = chunk(gx, 2, 1);                            // a, b (B, H) each
  const Variable m = ab[1] * linear(s.h, w["weight_mh"], Variable());           // (B, H)
  return {tanh(ab[0] + linear(m, w["weight_hm"], Variable())), Variable()};     // (B, H)
}

class MRNNCell : public nn::RecurrentCell {
 public:
  explicit MRNNCell(const nn::CellOptions& o) : nn::RecurrentCell("MRNNCell", o, mrnn_parameters) {}
  nn::RNNState forward(const Variable& x, const nn::RNNState& state) override {
    const nn::RNNState s = start_state(x, state);
    return mrnn_step(linear(x, weight_ih, bias_ih), s, weights);
  }
};

class MRNN : public nn::RecurrentLayer {
 public:
  explicit MRNN(const nn::RNNOptions& o) : nn::RecurrentLayer("MRNN", o, mrnn_parameters) {}

 protected:
  nn::RNNState cell_step(const Variable& gx, const nn::RNNState& s, const Weights& w) const override {
    return mrnn_step(gx, s, w);
  }
};

}  // namespace seqgrad::testing
