// nn/recurrent/rnn.h - recurrent networks: the state, what every cell and layer shares, and the plain RNN.
//
// A recurrent layer reads a sequence one step at a time, carrying a state: h (and for the LSTM
// a cell c). Each cell is a class of its own with its step written as its equations: RNNCell
// here, LSTMCell in lstm.h, GRUCell in gru.h. A layer (RNN, LSTM, GRU) unrolls its cell's step
// over time, layer after layer, in one or both directions; backward through time comes from
// the autograd engine. Names, gate order and shapes follow PyTorch exactly (weight_ih_l0,
// weight_hh_l0, bias_ih_l0, bias_hh_l0, "_reverse" for the backward direction; LSTM gates
// i, f, g, o; GRU gates r, z, n), so a PyTorch model's weights load unchanged.
// Those three have PyTorch's four parameters. Any other cell declares its own (CellParameter
// below: names, shapes, how each starts), so a cell whose recurrence is a vector (IndRNN) or a
// product of two matrices (the multiplicative LSTM) holds exactly what its equations use.
// Input is batch-first (B, T, C). Padded batches take per-sequence lengths: each sequence's
// final state is the one at its own last token, and outputs at padded steps are zero.
// Read next: lstm.h, gru.h, then seq2seq.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "nn/core/module.h"
#include "nn/core/registry.h"
#include "tensor/shape.h"

namespace seqgrad::nn {

// h (and c for the LSTM). One step: (B, H). A layer's final state: (num_layers * D, B, H),
// with D = 2 for bidirectional layers, index = layer * D + direction (PyTorch's layout).
struct RNNState {
  Variable h;
  Variable c;  // LSTM only
};

enum class RNNNonlinearity { Tanh, Relu };

// gx + h W_hh^T + b_hh: the hidden state's contribution added to the input's, gx = x W_ih^T
// + b_ih (B, G*H). One op (autograd/ops.h linear with a residual): the matrix kernel's tasks
// copy their blocks of gx into the result and add h W_hh^T + b_hh on top, so there is no
// separate (B, G*H) addition; for H <= 256 it equals gx + linear(h, w_hh, b_hh) to the bit.
Variable add_hidden(const Variable& gx, const Variable& h, const Variable& w_hh, const Variable& b_hh);

// ================================================================================================
// A cell's parameters

// One parameter a cell declares, for one layer and direction: its name (a layer adds "_l0",
// "_l1_reverse", ...), its shape, and how it starts. init fills the new tensor; empty means
// U(-1/sqrt(H), 1/sqrt(H)), PyTorch's for every recurrent weight.
struct CellParameter {
  std::string name;
  Shape shape;
  std::function<void(Tensor& value)> init;
};

// What a cell declares for one layer and direction, given that layer's input width C (the
// layer's input for layer 0, D*H above it), H, and whether it has biases. Two names are the
// same for every cell: weight_ih (K, C) and, with biases, bias_ih (K) project the input, and a
// layer computes x W_ih^T + b_ih for all T steps at once, one (B*T, C) x (C, K) product, which
// the step receives as gx (B, K). Everything else (the recurrence) is the cell's own.
using CellParameters = std::function<std::vector<CellParameter>(int64_t input_size, int64_t hidden_size, bool bias)>;

// PyTorch's four for a cell of G gates, in PyTorch's order: weight_ih (G*H, C), weight_hh
// (G*H, H), bias_ih and bias_hh (G*H) (the biases only with bias = true). rnn, lstm and gru.
std::vector<CellParameter> pytorch_parameters(int64_t gates, int64_t input_size, int64_t hidden_size, bool bias);

// The parameters of one cell, or of one layer and direction, by the names the cell declared
// (without the layer's suffix): w["weight_hh"]. A handle each: assigning w["u"] = v replaces
// the Variable the step uses, as the gradient checks do.
class CellWeights {
 public:
  void add(std::string name, Variable value);
  // The parameter declared as `name`; an error listing the declared names if there is none.
  Variable& operator[](const std::string& name);
  const Variable& operator[](const std::string& name) const;
  // The same, or an undefined Variable if the cell did not declare it (a bias, with bias = false).
  Variable optional(const std::string& name) const;
  bool has(const std::string& name) const;
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<Variable>& values() const { return values_; }

 private:
  std::vector<std::string> names_;
  std::vector<Variable> values_;
};

// ================================================================================================
// Cells: one time step as a Module, for code that drives the loop itself, like a decoder.

// A cell's settings, as libtorch's RNNCellOptions / LSTMCellOptions / GRUCellOptions, and the
// values of the options a registered cell declares (CellEntry below), checked before it sees them.
struct CellOptions {
  CellOptions(int64_t input_size, int64_t hidden_size) : input_size(input_size), hidden_size(hidden_size) {}
  int64_t input_size, hidden_size;
  bool bias = true;
  Settings settings;

  CellOptions& with_bias(bool v) { bias = v; return *this; }
  CellOptions& with_settings(Settings v) { settings = std::move(v); return *this; }
};
using LSTMCellOptions = CellOptions;
using GRUCellOptions = CellOptions;
// (A type of its own, not a CellOptions: an LSTMCell or GRUCell given one would drop the
// nonlinearity without a word.)
struct RNNCellOptions {
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size(input_size), hidden_size(hidden_size) {}
  int64_t input_size, hidden_size;
  bool bias = true;
  RNNNonlinearity nonlinearity = RNNNonlinearity::Tanh;

  RNNCellOptions& with_bias(bool v) { bias = v; return *this; }
  RNNCellOptions& with_nonlinearity(RNNNonlinearity v) { nonlinearity = v; return *this; }
};

// What every cell has: the parameters it declared, and the checks on a step's input.
class RecurrentCell : public Module {
 public:
  std::string name() const override { return name_; }
  std::string extra_repr() const override;
  // x (B, C), state (B, H) each (undefined = zeros) -> the next state
  virtual RNNState forward(const Variable& x, const RNNState& state) = 0;
  // Whether the state has a cell c besides h (the LSTM's).
  virtual bool has_cell_state() const { return false; }

  int64_t input_size, hidden_size;
  // Every parameter, by the name the cell declared: what a cell's own step reads.
  CellWeights weights;
  // libtorch's members: the parameters declared under these names, undefined where a cell has
  // none (weight_ih and bias_ih every cell has; all four, rnn, lstm and gru, whose forward reads
  // these members: assigning one replaces the Variable it uses).
  Variable weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  // PyTorch's four parameters, G = gates.
  RecurrentCell(const char* name, const CellOptions& options, int64_t gates);
  // The parameters `declare` lists for input_size, hidden_size and options.bias.
  RecurrentCell(const char* name, const CellOptions& options, const CellParameters& declare);
  // The state a step starts from: undefined parts as zeros, every part checked to be (B, H).
  RNNState start_state(const Variable& x, const RNNState& state) const;

 private:
  const char* name_;
};

// The Elman RNN: h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act = tanh or relu.   G = 1
class RNNCell : public RecurrentCell {
 public:
  explicit RNNCell(const RNNCellOptions& options);
  RNNCell(int64_t input_size, int64_t hidden_size, bool bias = true,
          RNNNonlinearity nonlinearity = RNNNonlinearity::Tanh);
  std::string extra_repr() const override;
  RNNState forward(const Variable& x, const RNNState& state) override;

  // One step from gx = x W_ih^T + b_ih (B, H); the layer computes gx for all T at once.
  static RNNState step(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh,
                       RNNNonlinearity nonlinearity);
  static constexpr int64_t kGates = 1;

  RNNNonlinearity nonlinearity;
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
  Settings settings;  // the values of a registered cell's own options (CellEntry below)

  RNNOptions& with_num_layers(int64_t v) { num_layers = v; return *this; }
  RNNOptions& with_bias(bool v) { bias = v; return *this; }
  RNNOptions& with_dropout(real v) { dropout = v; return *this; }
  RNNOptions& with_bidirectional(bool v) { bidirectional = v; return *this; }
  RNNOptions& with_nonlinearity(RNNNonlinearity v) { nonlinearity = v; return *this; }
  RNNOptions& with_settings(Settings v) { settings = std::move(v); return *this; }
};

struct RNNResult {
  Variable output;  // (B, T, D*H): the top layer's h at every step (both directions side by side)
  RNNState state;   // (L*D, B, H): every layer's final state
};

// What every layer shares: the parameters of each layer and direction, as its cell declares
// them, and the loop over time that calls the cell's step. RNN, LSTM and GRU each say only
// which step that is.
class RecurrentLayer : public Module {
 public:
  std::string name() const override { return name_; }
  std::string extra_repr() const override;
  // x (B, T, C); initial state (L*D, B, H) or undefined for zeros; lengths: one per sequence,
  // 1..T, or empty when every sequence is T long.
  RNNResult forward(const Variable& x, const RNNState& initial, const std::vector<int64_t>& lengths = {});
  Variable forward(const Variable& x) override { return forward(x, RNNState{}).output; }
  // Whether the state has a cell c besides h (the LSTM's).
  virtual bool has_cell_state() const { return false; }

  RNNOptions options;
  int64_t num_directions() const { return options.bidirectional ? 2 : 1; }
  // The parameters of one layer and direction, by the names the cell declared (weights(0,
  // 1)["weight_hh"] is weight_hh_l0_reverse). Handles: assigning one replaces the Variable the
  // layer uses, as tests do for gradcheck.
  using Weights = CellWeights;
  Weights& weights(int64_t layer, int64_t direction) { return weights_.at(layer * num_directions() + direction); }
  const Weights& weights(int64_t layer, int64_t direction) const {
    return weights_.at(layer * num_directions() + direction);
  }

 protected:
  // PyTorch's four parameters per layer and direction, G = gates.
  RecurrentLayer(const char* name, const RNNOptions& options, int64_t gates);
  // The parameters `declare` lists, per layer and direction.
  RecurrentLayer(const char* name, const RNNOptions& options, const CellParameters& declare);
  // One step of the layer's cell: gx (B, K) is x_t W_ih^T + b_ih, w the weights in use.
  virtual RNNState cell_step(const Variable& gx, const RNNState& s, const Weights& w) const = 0;

 private:
  const char* name_;
  std::vector<Weights> weights_;
};

class RNN : public RecurrentLayer {
 public:
  explicit RNN(const RNNOptions& options) : RecurrentLayer("RNN", options, RNNCell::kGates) {}
  std::string extra_repr() const override;

 protected:
  RNNState cell_step(const Variable& gx, const RNNState& s, const Weights& w) const override {
    return RNNCell::step(gx, s, w["weight_hh"], w.optional("bias_hh"), options.nonlinearity);
  }
};

// ================================================================================================
// The registry of cells: "rnn", "lstm", "gru", and whatever else registers (nn/core/registry.h). A
// cell comes with its layer, so a model can use it either way: a decoder steps the cell, an
// encoder runs the layer over the whole sequence. A cell may declare options of its own, as a
// score does: the cell and its layer read their values from CellOptions::settings and
// RNNOptions::settings; a model kind offers them with cell_options (nn/decoding/model_kind.h).

struct CellEntry {
  std::string name, help;
  std::function<std::shared_ptr<RecurrentCell>(const CellOptions& options)> make_cell;
  std::function<std::shared_ptr<RecurrentLayer>(const RNNOptions& options)> make_layer;
  std::vector<Option> options;  // the cell's own options
};
Registry<CellEntry>& cells();

// The layer or cell registered as `cell`: "rnn" (RNN, RNNCell), "lstm" (LSTM, LSTMCell), "gru"
// (GRU, GRUCell), ...; the cell's own options missing from the settings take their defaults.
std::shared_ptr<RecurrentLayer> make_recurrent_layer(const std::string& cell, const RNNOptions& options);
std::shared_ptr<RecurrentCell> make_recurrent_cell(const std::string& cell, const CellOptions& options);
std::shared_ptr<RecurrentCell> make_recurrent_cell(const std::string& cell, int64_t input_size, int64_t hidden_size);

// How the registering line builds a cell: from its CellOptions if it takes one (an LSTMCell,
// or a cell with options of its own), else from (input_size, hidden_size).
template <class Cell>
std::shared_ptr<RecurrentCell> build_registered_cell(const CellOptions& o) {
  if constexpr (std::is_constructible_v<Cell, const CellOptions&>) return std::make_shared<Cell>(o);
  else return std::make_shared<Cell>(o.input_size, o.hidden_size);
}

// One line in a cell's own file registers it with its layer and any options it declares:
//   SEQGRAD_REGISTER_CELL(GRUCell, GRU, "gru", "the gated recurrent unit (Cho et al., 2014)");
//   SEQGRAD_REGISTER_CELL(IndRNNCell, IndRNN, "indrnn", "...", nn::number_option("indrnn_clip", ...));
// Cell is built from a CellOptions (or from input_size and hidden_size), Layer from an RNNOptions.
#define SEQGRAD_REGISTER_CELL(Cell, Layer, name, help, ...)                                                    \
  SEQGRAD_REGISTER(::seqgrad::nn::cells(),                                                                      \
                   ::seqgrad::nn::CellEntry{                                                                    \
                       name, help, &::seqgrad::nn::build_registered_cell<Cell>,                                \
                       [](const ::seqgrad::nn::RNNOptions& o) -> std::shared_ptr<::seqgrad::nn::RecurrentLayer> { \
                         return std::make_shared<Layer>(o);                                                     \
                       },                                                                                       \
                       std::vector<::seqgrad::nn::Option>{__VA_ARGS__}})

}  // namespace seqgrad::nn
