// nn/rnn.cpp - the three cell steps, the cells, and the layer that unrolls them over time.
#include "nn/rnn.h"

#include <cmath>

#include "nn/init.h"
#include "tensor/check.h"
#include "tensor/elementwise.h"

namespace seqgrad::nn {

int64_t gate_count(CellType type) {
  switch (type) {
    case CellType::RNN: return 1;
    case CellType::LSTM: return 4;
    case CellType::GRU: return 3;
  }
  return 1;
}

namespace {

const char* type_name(CellType type) {
  switch (type) {
    case CellType::RNN: return "RNN";
    case CellType::LSTM: return "LSTM";
    case CellType::GRU: return "GRU";
  }
  return "RNN";
}

// gx + h W_hh^T (+ b_hh): the hidden state's contribution added to the input's.  (B, G*H)
// One op (autograd/ops.h): the matrix kernel's tasks copy their blocks of gx into the gates
// and add h W_hh^T + b_hh on top, shared out between the threads, so there is no separate
// (B, G*H) addition; for H <= 256 the result is the same to the bit as gx + linear(h, w_hh, b_hh).
Variable add_hidden(const Variable& gx, const Variable& h, const Variable& w_hh, const Variable& b_hh) {
  return linear(h, w_hh, b_hh, /*residual=*/gx);
}

// U(-1/sqrt(H), 1/sqrt(H)) for every weight and bias, as PyTorch's recurrent layers.
Tensor uniform_init(const Shape& shape, int64_t hidden) {
  Tensor t = Tensor::empty(shape);
  const real bound = 1 / std::sqrt(static_cast<real>(hidden));
  init::uniform_(t, -bound, bound);
  return t;
}

}  // namespace

// ================================================================================================
// Cell steps

// [docs:cells]
RNNState rnn_cell_step(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh,
                       RNNNonlinearity nonlinearity) {
  Variable pre = add_hidden(gx, s.h, w_hh, b_hh);  // (B, H)
  return {nonlinearity == RNNNonlinearity::Tanh ? tanh(pre) : relu(pre), Variable()};
}

RNNState lstm_cell_step_composed(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh) {
  // One (B, 4H) product for all four gates, then cut it into i, f, g, o (PyTorch's order).
  std::vector<Variable> gates = chunk(add_hidden(gx, s.h, w_hh, b_hh), 4, 1);  // 4 x (B, H)
  Variable i = sigmoid(gates[0]);  // input gate: how much of the candidate to write
  Variable f = sigmoid(gates[1]);  // forget gate: how much of the old cell to keep
  Variable g = tanh(gates[2]);     // candidate cell content
  Variable o = sigmoid(gates[3]);  // output gate: how much of the cell to show
  Variable c = f * s.c + i * g;    // (B, H)
  return {o * tanh(c), c};
}

// The same step with the gate arithmetic fused into one op (tensor/fused.cpp): one graph node
// instead of eleven. It returns [h' | c'] side by side; two slices take them apart.
RNNState lstm_cell_step(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh) {
  const int64_t H = w_hh.size(1);
  const Variable hc = lstm_cell(add_hidden(gx, s.h, w_hh, b_hh), s.c);  // (B, 2H)
  return {slice(hc, 1, 0, H), slice(hc, 1, H, 2 * H)};
}

RNNState gru_cell_step(const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh) {
  Variable gh = linear(s.h, w_hh, b_hh);  // h W_hh^T + b_hh  (B, 3H)
  std::vector<Variable> x3 = chunk(gx, 3, 1), h3 = chunk(gh, 3, 1);  // r, z, n parts
  Variable r = sigmoid(x3[0] + h3[0]);  // reset gate: how much of h feeds the candidate
  Variable z = sigmoid(x3[1] + h3[1]);  // update gate: how much of h to keep
  Variable n = tanh(x3[2] + r * h3[2]);  // candidate (r multiplies h W_hn^T + b_hn, as PyTorch)
  return {n + z * (s.h - n), Variable()};  // = (1 - z) n + z h
}
// [docs:end]

namespace {

RNNState cell_step(CellType type, const Variable& gx, const RNNState& s, const Variable& w_hh, const Variable& b_hh,
                   RNNNonlinearity nonlinearity) {
  switch (type) {
    case CellType::RNN: return rnn_cell_step(gx, s, w_hh, b_hh, nonlinearity);
    case CellType::LSTM: return lstm_cell_step(gx, s, w_hh, b_hh);
    case CellType::GRU: return gru_cell_step(gx, s, w_hh, b_hh);
  }
  return s;
}

}  // namespace

// ================================================================================================
// Cells

RecurrentCell::RecurrentCell(CellType type, int64_t in, int64_t hidden, bool bias, RNNNonlinearity nl)
    : cell_type(type), input_size(in), hidden_size(hidden), nonlinearity(nl) {
  check(in > 0 && hidden > 0, name(), ": expected positive input_size and hidden_size, got ", in, " and ", hidden);
  const int64_t G = gate_count(type) * hidden;
  weight_ih = register_parameter("weight_ih", uniform_init({G, in}, hidden));
  weight_hh = register_parameter("weight_hh", uniform_init({G, hidden}, hidden));
  if (bias) {
    bias_ih = register_parameter("bias_ih", uniform_init({G}, hidden));
    bias_hh = register_parameter("bias_hh", uniform_init({G}, hidden));
  }
}

std::string RecurrentCell::name() const { return std::string(type_name(cell_type)) + "Cell"; }

std::string RecurrentCell::extra_repr() const {
  std::string s = cat(input_size, ", ", hidden_size);
  if (!bias_ih.defined()) s += ", bias=false";
  if (cell_type == CellType::RNN && nonlinearity == RNNNonlinearity::Relu) s += ", nonlinearity=relu";
  return s;
}

RNNState RecurrentCell::forward(const Variable& x, const RNNState& state) {
  check(x.dim() == 2 && x.size(1) == input_size, name(), ": expected input of shape (B, ", input_size, "), got ",
        x.shape());
  const int64_t B = x.size(0);
  RNNState s = state;
  if (!s.h.defined()) s.h = Variable(zeros({B, hidden_size}));
  if (cell_type == CellType::LSTM && !s.c.defined()) s.c = Variable(zeros({B, hidden_size}));
  check(s.h.shape() == Shape{B, hidden_size}, name(), ": expected a hidden state of shape [", B, ", ", hidden_size,
        "], got ", s.h.shape());
  if (cell_type == CellType::LSTM)
    check(s.c.shape() == Shape{B, hidden_size}, name(), ": expected a cell state of shape [", B, ", ", hidden_size,
          "], got ", s.c.shape());
  const Variable gx = linear(x, weight_ih, bias_ih);  // x W_ih^T + b_ih  (B, G*H)
  return cell_step(cell_type, gx, s, weight_hh, bias_hh, nonlinearity);
}

// ================================================================================================
// Sequence layers

RecurrentLayer::RecurrentLayer(CellType type, const RNNOptions& o) : cell_type(type), options(o) {
  check(o.input_size > 0 && o.hidden_size > 0, name(), ": expected positive input_size and hidden_size, got ",
        o.input_size, " and ", o.hidden_size);
  check(o.num_layers >= 1, name(), ": expected num_layers >= 1, got ", o.num_layers);
  check(o.dropout >= 0 && o.dropout <= 1, name(), ": expected a dropout probability in [0, 1], got ", o.dropout);
  const int64_t H = o.hidden_size, G = gate_count(type) * H, D = num_directions();
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

std::string RecurrentLayer::name() const { return type_name(cell_type); }

std::string RecurrentLayer::extra_repr() const {
  std::string s = cat(options.input_size, ", ", options.hidden_size);
  if (options.num_layers != 1) s += cat(", num_layers=", options.num_layers);
  if (!options.bias) s += ", bias=false";
  if (options.dropout > 0) s += cat(", dropout=", options.dropout);
  if (options.bidirectional) s += ", bidirectional=true";
  if (cell_type == CellType::RNN && options.nonlinearity == RNNNonlinearity::Relu) s += ", nonlinearity=relu";
  return s;
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
                 cell_type == CellType::LSTM ? initial_of(initial.c, layer * D + d) : Variable()};
      std::vector<Variable> outputs(T);
      for (int64_t step = 0; step < T; ++step) {
        const int64_t t = d == 0 ? step : T - 1 - step;  // the reverse direction reads backwards
        Variable gx_t = reshape(slice(gx, 1, t, t + 1), {B, G});
        RNNState next = cell_step(cell_type, gx_t, s, w.w_hh, w.b_hh, options.nonlinearity);
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

}  // namespace seqgrad::nn
