// nn/rnn.h - recurrent networks: RNN, LSTM and GRU cells and multi-layer sequence layers.
//
// A recurrent layer reads a sequence one step at a time, carrying a state: h (and for the LSTM
// a cell c). Each step is a composition of autograd ops (rnn.cpp, *_cell_step), so backward
// through time comes from the engine. Names, gate order and shapes follow PyTorch exactly
// (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, "_reverse" for the backward direction;
// LSTM gates i, f, g, o; GRU gates r, z, n), so a PyTorch model's weights load unchanged.
// Input is batch-first (B, T, C). Padded batches take per-sequence lengths: each sequence's
// final state is the one at its own last token, and outputs at padded steps are zero.
// Read next: seq2seq.h.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/module.h"

namespace seqgrad::nn {

// h (and c for the LSTM). One step: (B, H). A layer's final state: (num_layers * D, B, H),
// with D = 2 for bidirectional layers, index = layer * D + direction (PyTorch's layout).
struct RNNState {
  Variable h;
  Variable c;  // LSTM only
};

enum class RNNNonlinearity { Tanh, Relu };

// ================================================================================================
// One step of each cell. gx = x W_ih^T + b_ih (B, G*H) is the input's contribution, computed
// by the caller (a layer computes it for all T steps with one matmul); w_hh is (G*H, H).

// h' = act(gx + h W_hh^T + b_hh)                                                     G = 1
RNNState rnn_cell_step(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh,
                       RNNNonlinearity nonlinearity);
// [i f g o] = gx + h W_hh^T + b_hh;  c' = sig(f) c + sig(i) tanh(g);  h' = sig(o) tanh(c')   G = 4
RNNState lstm_cell_step(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh);
// The same, composed from sigmoid, tanh, mul and add: the definition lstm_cell_step's fused op
// (autograd/ops.h lstm_cell) is tested against.
RNNState lstm_cell_step_composed(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh);
// r = sig(x_r + h_r), z = sig(x_z + h_z), n = tanh(x_n + r h_n), h' = (1 - z) n + z h     G = 3
RNNState gru_cell_step(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh);

enum class CellType { RNN, LSTM, GRU };

// ================================================================================================
// Cells: one time step as a Module (weight_ih, weight_hh, bias_ih, bias_hh), for code that
// drives the loop itself, like a decoder.

class RecurrentCell : public Module {
 public:
  std::string name() const override;
  std::string extra_repr() const override;
  // x (B, C), state (B, H) each (undefined = zeros) -> the next state
  RNNState forward(const Variable& x, const RNNState& state);

  CellType cell_type;
  int64_t input_size, hidden_size;
  RNNNonlinearity nonlinearity;
  Variable weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  RecurrentCell(CellType type, int64_t input_size, int64_t hidden_size, bool bias, RNNNonlinearity nonlinearity);
};

class RNNCell : public RecurrentCell {
 public:
  RNNCell(int64_t input_size, int64_t hidden_size, bool bias = true, RNNNonlinearity nonlinearity = RNNNonlinearity::Tanh)
      : RecurrentCell(CellType::RNN, input_size, hidden_size, bias, nonlinearity) {}
};
class LSTMCell : public RecurrentCell {
 public:
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true)
      : RecurrentCell(CellType::LSTM, input_size, hidden_size, bias, RNNNonlinearity::Tanh) {}
};
class GRUCell : public RecurrentCell {
 public:
  GRUCell(int64_t input_size, int64_t hidden_size, bool bias = true)
      : RecurrentCell(CellType::GRU, input_size, hidden_size, bias, RNNNonlinearity::Tanh) {}
};

// ================================================================================================
// Sequence layers

struct RNNOptions {
  RNNOptions(int64_t input_size, int64_t hidden_size) : input_size(input_size), hidden_size(hidden_size) {}
  int64_t input_size, hidden_size, num_layers = 1;
  bool bias = true;
  real dropout = 0;  // between layers, in training only
  bool bidirectional = false;
  RNNNonlinearity nonlinearity = RNNNonlinearity::Tanh;  // RNN only

  RNNOptions& with_num_layers(int64_t v) { num_layers = v; return *this; }
  RNNOptions& with_bias(bool v) { bias = v; return *this; }
  RNNOptions& with_dropout(real v) { dropout = v; return *this; }
  RNNOptions& with_bidirectional(bool v) { bidirectional = v; return *this; }
  RNNOptions& with_nonlinearity(RNNNonlinearity v) { nonlinearity = v; return *this; }
};

struct RNNResult {
  Variable output;  // (B, T, D*H): the top layer's h at every step (both directions side by side)
  RNNState state;   // (L*D, B, H): every layer's final state
};

class RecurrentLayer : public Module {
 public:
  std::string name() const override;
  std::string extra_repr() const override;
  // x (B, T, C); initial state (L*D, B, H) or undefined for zeros; lengths: one per sequence,
  // 1..T, or empty when every sequence is T long.
  RNNResult forward(const Variable& x, const RNNState& initial, const std::vector<int64_t>& lengths = {});
  Variable forward(const Variable& x) override { return forward(x, RNNState{}).output; }

  CellType cell_type;
  RNNOptions options;
  int64_t num_directions() const { return options.bidirectional ? 2 : 1; }
  // The parameters of one layer and direction, by PyTorch's names.
  struct Weights {
    Variable w_ih, w_hh, b_ih, b_hh;
  };
  // (Handles: assigning a member replaces the Variable the layer uses, as tests do for gradcheck.)
  Weights& weights(int64_t layer, int64_t direction) { return weights_.at(layer * num_directions() + direction); }
  const Weights& weights(int64_t layer, int64_t direction) const {
    return weights_.at(layer * num_directions() + direction);
  }

 protected:
  RecurrentLayer(CellType type, const RNNOptions& options);

 private:
  std::vector<Weights> weights_;
};

class RNN : public RecurrentLayer {
 public:
  explicit RNN(const RNNOptions& options) : RecurrentLayer(CellType::RNN, options) {}
};
class LSTM : public RecurrentLayer {
 public:
  explicit LSTM(const RNNOptions& options) : RecurrentLayer(CellType::LSTM, options) {}
};
class GRU : public RecurrentLayer {
 public:
  explicit GRU(const RNNOptions& options) : RecurrentLayer(CellType::GRU, options) {}
};

// Gates per cell type: 1 (RNN), 4 (LSTM), 3 (GRU).
int64_t gate_count(CellType type);

}  // namespace seqgrad::nn
