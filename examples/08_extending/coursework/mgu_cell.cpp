// examples/08_extending/coursework/mgu_cell.cpp - a new recurrent cell in one file, registered
// by name so that the sequence models and `seqgrad train` can use it.
//
// The minimal gated unit (Zhou et al., 2016): the GRU with one gate doing both jobs.
//   f  = sigmoid(x_f + h W_hf^T + b_hf)        the forget gate
//   n  = tanh(x_n + (f * h) W_hn^T + b_hn)     the candidate, from the part of h the gate keeps
//   h' = (1 - f) * h + f * n
// x_f, x_n are the two parts of x W_ih^T + b_ih (the layer computes them for all steps at once).
// Two gates of H each: weight_ih (2H, C), weight_hh (2H, H), as PyTorch would lay them out.
//   x (B, C), h (B, H) -> h' (B, H)
// Build the tool with it, and train the models it makes, "mgu" and "mgu-attn":
//   make seqgrad EXTRA=examples/08_extending/coursework/mgu_cell.cpp
//   build/seqgrad train --task reverse --arch mgu-attn --out m.safetensors
#include "seqgrad.h"

using namespace seqgrad;

// [docs:mgu_cell]
class MGUCell : public nn::RecurrentCell {
 public:
  MGUCell(int64_t input_size, int64_t hidden_size) : nn::RecurrentCell("MGUCell", nn::CellOptions(input_size, hidden_size), kGates) {}

  // One step from gx = x W_ih^T + b_ih (B, 2H).
  static nn::RNNState step(const Variable& gx, const nn::RNNState& s, const Variable& w_hh, const Variable& b_hh) {
    const std::vector<Variable> x2 = chunk(gx, 2, 1), w2 = chunk(w_hh, 2, 0), b2 = chunk(b_hh, 2, 0);  // f, n parts
    const Variable f = sigmoid(x2[0] + linear(s.h, w2[0], b2[0]));      // (B, H)
    const Variable n = tanh(x2[1] + linear(f * s.h, w2[1], b2[1]));     // (B, H)
    return {s.h + f * (n - s.h), Variable()};                           // (1 - f) h + f n
  }
  nn::RNNState forward(const Variable& x, const nn::RNNState& state) override {
    const nn::RNNState s = start_state(x, state);
    return step(linear(x, weight_ih, bias_ih), s, weight_hh, bias_hh);
  }
  static constexpr int64_t kGates = 2;
};

// The layer: the cell's step unrolled over time, in layers and directions (nn/recurrent/rnn.h).
class MGU : public nn::RecurrentLayer {
 public:
  explicit MGU(const nn::RNNOptions& options) : nn::RecurrentLayer("MGU", options, MGUCell::kGates) {}

 protected:
  nn::RNNState cell_step(const Variable& gx, const nn::RNNState& s, const Weights& w) const override {
    return MGUCell::step(gx, s, w["weight_hh"], w["bias_hh"]);
  }
};

// The one line that makes "mgu" a cell, and so "mgu" and "mgu-attn" models.
SEQGRAD_REGISTER_CELL(MGUCell, MGU, "mgu", "the minimal gated unit: one forget gate (a coursework example)")
// [docs:end]
