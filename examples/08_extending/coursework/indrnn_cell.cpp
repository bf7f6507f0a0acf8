// examples/08_extending/coursework/indrnn_cell.cpp - a recurrent cell in one file, with
// parameters of its own shapes and an option of its own, registered by name so that the
// sequence models and `seqgrad train` can use it.
//
// The independently recurrent neural network (IndRNN; Li et al., 2018): each unit keeps its own
// state, and its recurrence is a product with one number per unit, not a matrix:
//   h' = relu(x W_ih^T + b_ih + u * h)          W_ih (H, C), b_ih (H), u (H)
// Units talk to each other only through the next layer's W_ih. Over T steps, unit n's gradient
// through time is multiplied by u_n (where it is active) T times: Li et al. keep |u_n| bounded
// so that it neither explodes nor vanishes. Here --indrnn-clip C bounds |u| to C in every step
// (u itself may stray; the step uses clip(u, -C, C), whose gradient is 0 where it clips).
// The cell declares exactly these three parameters per layer and direction, so a layer holds
// weight_ih_l0 (H, C), weight_hh_l0 (H) (u, a vector) and bias_ih_l0 (H): no (H, H) matrix,
// and no second bias (b_hh would only add to b_ih).
//   x (B, C), h (B, H) -> h' (B, H)
// Build the tool with it, and train the models it makes, "indrnn" and "indrnn-attn":
//   make seqgrad EXTRA=examples/08_extending/coursework/indrnn_cell.cpp
//   build/seqgrad train --task reverse --arch indrnn-attn --indrnn-clip 1 --out m.safetensors
// Its tests: tests/examples/coursework_indrnn.cpp (tests/examples/coursework.sh builds and runs them).
#include "seqgrad.h"

using namespace seqgrad;

// [docs:indrnn_cell]
// What one layer and direction holds (C: its input width), given the cell's settings. u starts
// in U(0, min(1, clip)): every unit begins by keeping part of its state, inside the bound.
nn::CellParameters indrnn_parameters(const nn::Settings& settings) {
  const real start = static_cast<real>(std::min(1.0, settings.number("indrnn_clip")));
  return [start](int64_t input_size, int64_t hidden_size, bool bias) {
    auto keep_some = [start](Tensor& u) { nn::init::uniform_(u, 0, start); };
    std::vector<nn::CellParameter> p{{"weight_ih", {hidden_size, input_size}, nullptr},  // W_ih, PyTorch's init
                                     {"weight_hh", {hidden_size}, keep_some}};            // u: one per unit
    if (bias) p.push_back({"bias_ih", {hidden_size}, nullptr});                          // b_ih
    return p;
  };
}

class IndRNNCell : public nn::RecurrentCell {
 public:
  explicit IndRNNCell(const nn::CellOptions& o)
      : nn::RecurrentCell("IndRNNCell", o, indrnn_parameters(o.settings)), clip(o.settings.number("indrnn_clip")) {}

  // One step from gx = x W_ih^T + b_ih (B, H): h' = relu(gx + clip(u) * h).
  static nn::RNNState step(const Variable& gx, const nn::RNNState& s, const nn::CellWeights& w, double clip) {
    const Variable& u = w["weight_hh"];                                        // (H)
    const real C = static_cast<real>(clip);
    const Tensor clipped = minimum(maximum(u.value(), scalar(-C)), scalar(C));  // clip(u, -C, C)
    const Variable u_c = where(ne(clipped, u.value()), Variable(clipped), u);  // gradient to u where unclipped
    return {relu(gx + u_c * s.h), Variable()};                                 // (B, H); u_c broadcasts over B
  }
  nn::RNNState forward(const Variable& x, const nn::RNNState& state) override {
    const nn::RNNState s = start_state(x, state);
    return step(linear(x, weight_ih, bias_ih), s, weights, clip);
  }
  std::string extra_repr() const override { return RecurrentCell::extra_repr() + cat(", clip=", clip); }

  double clip;
};

// The layer: the same step unrolled over time, in layers and directions (nn/recurrent/rnn.h).
class IndRNN : public nn::RecurrentLayer {
 public:
  explicit IndRNN(const nn::RNNOptions& o)
      : nn::RecurrentLayer("IndRNN", o, indrnn_parameters(o.settings)), clip(o.settings.number("indrnn_clip")) {}
  std::string extra_repr() const override { return RecurrentLayer::extra_repr() + cat(", clip=", clip); }

  double clip;

 protected:
  nn::RNNState cell_step(const Variable& gx, const nn::RNNState& s, const Weights& w) const override {
    return IndRNNCell::step(gx, s, w, clip);
  }
};

// The one line that makes "indrnn" a cell, and so "indrnn" and "indrnn-attn" models, with its
// own option: --indrnn-clip on the tool's command line, "indrnn_clip" in a checkpoint.
SEQGRAD_REGISTER_CELL(IndRNNCell, IndRNN, "indrnn", "the independently recurrent network: h' = relu(x W_ih^T + b_ih "
                      "+ u * h), u a vector (a coursework example)",
                      nn::number_option("indrnn_clip", 1, 0.01, 100, "indrnn: |u|, the recurrent weight of each "
                                        "unit, is clipped to this bound in every step (Li et al., 2018)"))
// [docs:end]
