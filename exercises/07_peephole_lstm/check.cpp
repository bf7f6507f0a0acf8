// exercises/07_peephole_lstm/check.cpp - make -C exercises check EX=07
#include <doctest/doctest.h>

#include "exercise.h"

using namespace seqgrad;

namespace {
PeepholeWeights from_cell(const nn::LSTMCell& cell, const Tensor& pi, const Tensor& pf, const Tensor& po) {
  return {cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh, Variable(pi), Variable(pf), Variable(po)};
}
real sig(real v) { return 1 / (1 + std::exp(-v)); }
}  // namespace

TEST_CASE("07: without peepholes it is the standard LSTM") {
  manual_seed(7);
  nn::LSTMCell cell(3, 4);
  const Variable x(randn({2, 3}));
  const nn::RNNState s{Variable(randn({2, 4})), Variable(randn({2, 4}))};
  const nn::RNNState mine = peephole_lstm_step(x, s, from_cell(cell, zeros({4}), zeros({4}), zeros({4})));
  const nn::RNNState ref = cell.forward(x, s);
  REQUIRE(mine.h.shape() == Shape{2, 4});
  REQUIRE(mine.c.shape() == Shape{2, 4});
  CHECK(max(abs(mine.h.value() - ref.h.value())).item() < 1e-5);
  CHECK(max(abs(mine.c.value() - ref.c.value())).item() < 1e-5);
}

TEST_CASE("07: the peepholes, by hand, with H = C = 1") {
  // One unit, all weights chosen so each gate's pre-activation is easy to follow.
  const Variable x(from_vector({1}, {1, 1})), h(from_vector({0.5f}, {1, 1})), c(from_vector({2}, {1, 1}));
  PeepholeWeights w;
  w.w_ih = Variable(from_vector({0.1f, 0.2f, 0.3f, 0.4f}, {4, 1}));
  w.w_hh = Variable(from_vector({-0.2f, 0.2f, 0.4f, -0.4f}, {4, 1}));
  w.b_ih = Variable(zeros({4}));
  w.b_hh = Variable(zeros({4}));
  w.p_i = Variable(from_vector({0.5f}));
  w.p_f = Variable(from_vector({-1}));
  w.p_o = Variable(from_vector({0.25f}));
  const nn::RNNState out = peephole_lstm_step(x, {h, c}, w);
  const real a_i = 0.1f - 0.1f, a_f = 0.2f + 0.1f, a_g = 0.3f + 0.2f, a_o = 0.4f - 0.2f;
  const real i = sig(a_i + 0.5f * 2), f = sig(a_f - 1 * 2), g = std::tanh(a_g);
  const real c2 = f * 2 + i * g;
  const real o = sig(a_o + 0.25f * c2);
  REQUIRE(out.c.shape() == Shape{1, 1});
  CHECK(out.c.value().item() == doctest::Approx(c2).epsilon(1e-5));
  CHECK(out.h.value().item() == doctest::Approx(o * std::tanh(c2)).epsilon(1e-5));
}

TEST_CASE("07: gradcheck with respect to the peepholes, the state and the input") {
  manual_seed(8);
  nn::LSTMCell cell(2, 3);
  const GradcheckResult r = gradcheck(
      [&cell](const std::vector<Variable>& v) {
        PeepholeWeights w{cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh, v[3], v[4], v[5]};
        const nn::RNNState s = peephole_lstm_step(v[0], {v[1], v[2]}, w);
        return s.h + s.c * real(0.5);
      },
      {randn({2, 2}), randn({2, 3}), randn({2, 3}), randn({3}), randn({3}), randn({3})});
  CHECK_MESSAGE(r.ok, r.message);
}
