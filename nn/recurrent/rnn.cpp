// nn/recurrent/rnn.cpp - what every cell and layer shares, the plain RNN cell, and the loop over time.
#include "nn/recurrent/rnn.h"

#include <algorithm>
#include <cmath>

#include "nn/core/init.h"
#include "tensor/check.h"
#include "tensor/elementwise.h"

namespace seqgrad::nn {

namespace {

// U(-1/sqrt(H), 1/sqrt(H)) for every weight and bias, as PyTorch's recurrent layers.
Tensor uniform_init(const Shape& shape, int64_t hidden) {
  Tensor t = Tensor::empty(shape);
  const real bound = 1 / std::sqrt(static_cast<real>(hidden));
  init::uniform_(t, -bound, bound);
  return t;
}

// A declared parameter's first value: its own init, or PyTorch's uniform.
Tensor initial_value(const CellParameter& p, int64_t hidden) {
  if (!p.init) return uniform_init(p.shape, hidden);
  Tensor t = Tensor::empty(p.shape);
  p.init(t);
  return t;
}

// A cell's declaration, checked: names given once, and the input's projection there, weight_ih
// (K, C) with bias_ih (K) if any. `who` names the cell or layer in messages.
std::vector<CellParameter> checked(const char* who, std::vector<CellParameter> params, int64_t input_size) {
  const CellParameter* w_ih = nullptr;
  const CellParameter* b_ih = nullptr;
  for (size_t i = 0; i < params.size(); ++i) {
    check(!params[i].name.empty(), who, ": expected every declared parameter to have a name, got one without");
    for (size_t j = 0; j < i; ++j)
      check(params[j].name != params[i].name, who, ": expected each parameter declared once, got '", params[i].name,
            "' twice");
    if (params[i].name == "weight_ih") w_ih = &params[i];
    if (params[i].name == "bias_ih") b_ih = &params[i];
  }
  check(w_ih != nullptr, who, ": expected the declared parameters to include weight_ih (K, ", input_size,
        "), the input's projection, got none");
  check(w_ih->shape.size() == 2 && w_ih->shape[1] == input_size, who, ": expected weight_ih of shape (K, ", input_size,
        "), got ", w_ih->shape);
  if (b_ih)
    check(b_ih->shape == Shape{w_ih->shape[0]}, who, ": expected bias_ih of shape [", w_ih->shape[0],
          "] (one per row of weight_ih), got ", b_ih->shape);
  return params;
}

// The matrices a step multiplies by: every parameter with two axes but the input's projection
// (W_hh for rnn, lstm and gru). A layer packs each once for its whole loop over time.
std::vector<Variable> per_step_matrices(const CellWeights& w) {
  std::vector<Variable> out;
  for (size_t i = 0; i < w.names().size(); ++i)
    if (w.names()[i] != "weight_ih" && w.values()[i].dim() == 2) out.push_back(w.values()[i]);
  return out;
}

}  // namespace

Variable add_hidden(const Variable& gx, const Variable& h, const Variable& w_hh, const Variable& b_hh) {
  return linear(h, w_hh, b_hh, /*residual=*/gx);
}

// ================================================================================================
// A cell's parameters

std::vector<CellParameter> pytorch_parameters(int64_t gates, int64_t input_size, int64_t hidden_size, bool bias) {
  const int64_t G = gates * hidden_size;
  std::vector<CellParameter> p{{"weight_ih", {G, input_size}, nullptr}, {"weight_hh", {G, hidden_size}, nullptr}};
  if (bias) {
    p.push_back({"bias_ih", {G}, nullptr});
    p.push_back({"bias_hh", {G}, nullptr});
  }
  return p;
}

void CellWeights::add(std::string name, Variable value) {
  names_.push_back(std::move(name));
  values_.push_back(std::move(value));
}

bool CellWeights::has(const std::string& name) const {
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

const Variable& CellWeights::operator[](const std::string& name) const {
  const auto at = std::find(names_.begin(), names_.end(), name);
  check(at != names_.end(), "CellWeights: expected a parameter named ", join_names(names_), ", got '", name, "'");
  return values_[static_cast<size_t>(at - names_.begin())];
}

Variable& CellWeights::operator[](const std::string& name) {
  return const_cast<Variable&>(static_cast<const CellWeights&>(*this)[name]);
}

Variable CellWeights::optional(const std::string& name) const { return has(name) ? (*this)[name] : Variable(); }

// ================================================================================================
// What every cell shares

RecurrentCell::RecurrentCell(const char* name, const CellOptions& o, int64_t gates)
    : RecurrentCell(name, o, [gates](int64_t in, int64_t hidden, bool bias) {
        return pytorch_parameters(gates, in, hidden, bias);
      }) {}

RecurrentCell::RecurrentCell(const char* name, const CellOptions& o, const CellParameters& declare)
    : input_size(o.input_size), hidden_size(o.hidden_size), name_(name) {
  check(input_size > 0 && hidden_size > 0, name_, ": expected positive input_size and hidden_size, got ", input_size,
        " and ", hidden_size);
  for (const CellParameter& p : checked(name_, declare(input_size, hidden_size, o.bias), input_size))
    weights.add(p.name, register_parameter(p.name, initial_value(p, hidden_size)));
  weight_ih = weights.optional("weight_ih");
  weight_hh = weights.optional("weight_hh");
  bias_ih = weights.optional("bias_ih");
  bias_hh = weights.optional("bias_hh");
}

std::string RecurrentCell::extra_repr() const {
  return cat(input_size, ", ", hidden_size) + (bias_ih.defined() ? "" : ", bias=false");
}

RNNState RecurrentCell::start_state(const Variable& x, const RNNState& state) const {
  check(x.dim() == 2 && x.size(1) == input_size, name(), ": expected input of shape (B, ", input_size, "), got ",
        x.shape());
  const int64_t B = x.size(0);
  RNNState s = state;
  if (!s.h.defined()) s.h = Variable(zeros({B, hidden_size}));
  if (has_cell_state() && !s.c.defined()) s.c = Variable(zeros({B, hidden_size}));
  check(s.h.shape() == Shape{B, hidden_size}, name(), ": expected a hidden state of shape [", B, ", ", hidden_size,
        "], got ", s.h.shape());
  if (has_cell_state())
    check(s.c.shape() == Shape{B, hidden_size}, name(), ": expected a cell state of shape [", B, ", ", hidden_size,
          "], got ", s.c.shape());
  return s;
}

// ================================================================================================
// The plain RNN cell

RNNCell::RNNCell(const RNNCellOptions& o)
    : RecurrentCell("RNNCell", CellOptions(o.input_size, o.hidden_size).with_bias(o.bias), kGates),
      nonlinearity(o.nonlinearity) {}

RNNCell::RNNCell(int64_t input_size, int64_t hidden_size, bool bias, RNNNonlinearity nonlinearity)
    : RNNCell(RNNCellOptions(input_size, hidden_size).with_bias(bias).with_nonlinearity(nonlinearity)) {}

std::string RNNCell::extra_repr() const {
  return RecurrentCell::extra_repr() + (nonlinearity == RNNNonlinearity::Relu ? ", nonlinearity=relu" : "");
}

// [docs:rnn_cell]
// h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)    (B, H)
RNNState RNNCell::step(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh,
                       RNNNonlinearity nonlinearity) {
  Variable pre = add_hidden(gx, s.h, w_hh, b_hh);  // (B, H)
  return {nonlinearity == RNNNonlinearity::Tanh ? tanh(pre) : relu(pre), Variable()};
}

RNNState RNNCell::forward(const Variable& x, const RNNState& state) {
  const RNNState s = start_state(x, state);  // checks x first (arguments' order of evaluation is unspecified)
  return step(linear(x, weight_ih, bias_ih), s, weight_hh, bias_hh, nonlinearity);
}
// [docs:end]

// ================================================================================================
// What every layer shares

RecurrentLayer::RecurrentLayer(const char* name, const RNNOptions& o, int64_t gates)
    : RecurrentLayer(name, o, [gates](int64_t in, int64_t hidden, bool bias) {
        return pytorch_parameters(gates, in, hidden, bias);
      }) {}

RecurrentLayer::RecurrentLayer(const char* name, const RNNOptions& o, const CellParameters& declare)
    : options(o), name_(name) {
  check(o.input_size > 0 && o.hidden_size > 0, name_, ": expected positive input_size and hidden_size, got ",
        o.input_size, " and ", o.hidden_size);
  check(o.num_layers >= 1, name_, ": expected num_layers >= 1, got ", o.num_layers);
  check(o.dropout >= 0 && o.dropout <= 1, name_, ": expected a dropout probability in [0, 1], got ", o.dropout);
  const int64_t H = o.hidden_size, D = num_directions();
  for (int64_t layer = 0; layer < o.num_layers; ++layer)
    for (int64_t d = 0; d < D; ++d) {
      const std::string suffix = "_l" + std::to_string(layer) + (d == 1 ? "_reverse" : "");
      const int64_t in = layer == 0 ? o.input_size : H * D;  // upper layers read both directions
      Weights w;
      for (const CellParameter& p : checked(name_, declare(in, H, o.bias), in))
        w.add(p.name, register_parameter(p.name + suffix, initial_value(p, H)));  // weight_ih_l0, ...
      weights_.push_back(w);
    }
}

std::string RecurrentLayer::extra_repr() const {
  std::string s = cat(options.input_size, ", ", options.hidden_size);
  if (options.num_layers != 1) s += cat(", num_layers=", options.num_layers);
  if (!options.bias) s += ", bias=false";
  if (options.dropout > 0) s += cat(", dropout=", options.dropout);
  if (options.bidirectional) s += ", bidirectional=true";
  return s;
}

std::string RNN::extra_repr() const {
  return RecurrentLayer::extra_repr() + (options.nonlinearity == RNNNonlinearity::Relu ? ", nonlinearity=relu" : "");
}

RNNResult RecurrentLayer::forward(const Variable& x, const RNNState& initial, const std::vector<int64_t>& lengths) {
  const int64_t H = options.hidden_size, D = num_directions(), L = options.num_layers;
  check(x.dim() == 3 && x.size(2) == options.input_size, name(), ": expected input of shape (B, T, ",
        options.input_size, "), got ", x.shape(), x.dim() == 2 ? " (did you forget the batch axis?)" : "");
  const int64_t B = x.size(0), T = x.size(1);
  const Shape state_shape{L * D, B, H};
  // (check's message arguments are evaluated eagerly, so only touch a state that exists)
  if (initial.h.defined())
    check(initial.h.shape() == state_shape, name(), ": expected an initial h of shape ", state_shape, ", got ",
          initial.h.shape());
  if (initial.c.defined())
    check(initial.c.shape() == state_shape, name(), ": expected an initial c of shape ", state_shape, ", got ",
          initial.c.shape());
  check(lengths.empty() || static_cast<int64_t>(lengths.size()) == B, name(), ": expected ", B,
        " lengths (one per sequence), got ", lengths.size());
  for (int64_t len : lengths) check(len >= 1 && len <= T, name(), ": expected lengths in 1..", T, ", got ", len);

  // keep[t] (B, 1): 1 where step t is inside the sequence, 0 in its padding.
  std::vector<Tensor> keep;
  if (!lengths.empty())
    for (int64_t t = 0; t < T; ++t) {
      Tensor m = Tensor::empty({B, 1});
      for (int64_t b = 0; b < B; ++b) m.data()[b] = t < lengths[b] ? 1 : 0;
      keep.push_back(m);
    }
  // The initial state of one layer and direction: row k of (L*D, B, H), or zeros.
  auto initial_of = [&](const Variable& v, int64_t k) {
    return v.defined() ? reshape(slice(v, 0, k, k + 1), {B, H}) : Variable(zeros({B, H}));
  };

  // [docs:layer_loop]
  Variable input = x;  // (B, T, C) for layer 0, then (B, T, D*H)
  std::vector<Variable> final_h, final_c;
  for (int64_t layer = 0; layer < L; ++layer) {
    std::vector<Variable> direction_outputs;
    for (int64_t d = 0; d < D; ++d) {
      const Weights& w = weights(layer, d);
      // The input's contribution for all T steps at once: one (B*T, C) x (C, K) product.
      Variable gx = linear(input, w["weight_ih"], w.optional("bias_ih"));  // x W_ih^T + b_ih  (B, T, K)
      const int64_t K = gx.size(2);
      RNNState s{initial_of(initial.h, layer * D + d),
                 has_cell_state() ? initial_of(initial.c, layer * D + d) : Variable()};
      std::vector<Variable> outputs(T);
      const ReusePackedWeights reuse(per_step_matrices(w));  // W_hh, ...: packed once (autograd/ops.h)
      for (int64_t step = 0; step < T; ++step) {
        const int64_t t = d == 0 ? step : T - 1 - step;  // the reverse direction reads backwards
        Variable gx_t = reshape(slice(gx, 1, t, t + 1), {B, K});
        RNNState next = cell_step(gx_t, s, w);  // the cell's own step: RNNCell, LSTMCell or GRUCell
        if (!keep.empty()) {
          // Padded steps leave the state unchanged and output zeros, so the final state is the
          // one at each sequence's own last token (and the reverse pass starts there).
          next.h = where(keep[t], next.h, s.h);
          if (next.c.defined()) next.c = where(keep[t], next.c, s.c);
          outputs[t] = next.h * Variable(keep[t]);
        } else {
          outputs[t] = next.h;
        }
        s = next;
      }
      direction_outputs.push_back(stack(outputs, 1));  // (B, T, H)
      final_h.push_back(s.h);
      if (s.c.defined()) final_c.push_back(s.c);
    }
    input = D == 1 ? direction_outputs[0] : concat(direction_outputs, 2);  // (B, T, D*H)
    if (layer + 1 < L && options.dropout > 0) input = dropout(input, options.dropout, is_training());
  }
  // [docs:end]
  RNNResult result;
  result.output = input;
  result.state.h = stack(final_h, 0);  // (L*D, B, H)
  if (!final_c.empty()) result.state.c = stack(final_c, 0);
  return result;
}

// ================================================================================================
// The registry of cells

SEQGRAD_REGISTER_CELL(RNNCell, RNN, "rnn", "the Elman RNN: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)")

Registry<CellEntry>& cells() {
  static Registry<CellEntry> registry("recurrent cell");
  return registry;
}

std::shared_ptr<RecurrentLayer> make_recurrent_layer(const std::string& cell, const RNNOptions& options) {
  const CellEntry& entry = cells().get(cell);
  return entry.make_layer(RNNOptions(options).with_settings(with_defaults(entry.options, options.settings)));
}

std::shared_ptr<RecurrentCell> make_recurrent_cell(const std::string& cell, const CellOptions& options) {
  const CellEntry& entry = cells().get(cell);
  return entry.make_cell(CellOptions(options).with_settings(with_defaults(entry.options, options.settings)));
}

std::shared_ptr<RecurrentCell> make_recurrent_cell(const std::string& cell, int64_t input_size, int64_t hidden_size) {
  return make_recurrent_cell(cell, CellOptions(input_size, hidden_size));
}

}  // namespace seqgrad::nn
