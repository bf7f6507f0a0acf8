// nn/recurrent/rnn.cpp - what every cell and layer shares, the plain RNN cell, and the loop over time.
#include "nn/recurrent/rnn.h"

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

}  // namespace

Variable add_hidden(const Variable& gx, const Variable& h, const Variable& w_hh, const Variable& b_hh) {
  return linear(h, w_hh, b_hh, /*residual=*/gx);
}

// ================================================================================================
// What every cell shares

RecurrentCell::RecurrentCell(const char* name, const CellOptions& o, int64_t gates)
    : input_size(o.input_size), hidden_size(o.hidden_size), name_(name) {
  check(input_size > 0 && hidden_size > 0, name_, ": expected positive input_size and hidden_size, got ", input_size,
        " and ", hidden_size);
  const int64_t G = gates * hidden_size;
  weight_ih = register_parameter("weight_ih", uniform_init({G, input_size}, hidden_size));
  weight_hh = register_parameter("weight_hh", uniform_init({G, hidden_size}, hidden_size));
  if (o.bias) {
    bias_ih = register_parameter("bias_ih", uniform_init({G}, hidden_size));
    bias_hh = register_parameter("bias_hh", uniform_init({G}, hidden_size));
  }
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

RecurrentLayer::RecurrentLayer(const char* name, const RNNOptions& o, int64_t gates) : options(o), name_(name) {
  check(o.input_size > 0 && o.hidden_size > 0, name_, ": expected positive input_size and hidden_size, got ",
        o.input_size, " and ", o.hidden_size);
  check(o.num_layers >= 1, name_, ": expected num_layers >= 1, got ", o.num_layers);
  check(o.dropout >= 0 && o.dropout <= 1, name_, ": expected a dropout probability in [0, 1], got ", o.dropout);
  const int64_t H = o.hidden_size, G = gates * H, D = num_directions();
  for (int64_t layer = 0; layer < o.num_layers; ++layer)
    for (int64_t d = 0; d < D; ++d) {
      const std::string suffix = "_l" + std::to_string(layer) + (d == 1 ? "_reverse" : "");
      const int64_t in = layer == 0 ? o.input_size : H * D;  // upper layers read both directions
      Weights w;
      w.w_ih = register_parameter("weight_ih" + suffix, uniform_init({G, in}, H));
      w.w_hh = register_parameter("weight_hh" + suffix, uniform_init({G, H}, H));
      if (o.bias) {
        w.b_ih = register_parameter("bias_ih" + suffix, uniform_init({G}, H));
        w.b_hh = register_parameter("bias_hh" + suffix, uniform_init({G}, H));
      }
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
      // The input's contribution for all T steps at once: one (B*T, C) x (C, G*H) product.
      Variable gx = linear(input, w.w_ih, w.b_ih);  // x W_ih^T + b_ih  (B, T, G*H)
      const int64_t G = gx.size(2);
      RNNState s{initial_of(initial.h, layer * D + d),
                 has_cell_state() ? initial_of(initial.c, layer * D + d) : Variable()};
      std::vector<Variable> outputs(T);
      const ReusePackedWeights reuse({w.w_hh});  // h W_hh^T at every step: W_hh packed once (autograd/ops.h)
      for (int64_t step = 0; step < T; ++step) {
        const int64_t t = d == 0 ? step : T - 1 - step;  // the reverse direction reads backwards
        Variable gx_t = reshape(slice(gx, 1, t, t + 1), {B, G});
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
  return cells().get(cell).make_layer(options);
}

std::shared_ptr<RecurrentCell> make_recurrent_cell(const std::string& cell, int64_t input_size, int64_t hidden_size) {
  return cells().get(cell).make_cell(input_size, hidden_size);
}

}  // namespace seqgrad::nn
