// exercises/06_gru_cell/check.cpp - make -C exercises check EX=06
#include <doctest/doctest.h>

#include <cmath>

#include "exercise.h"
#include "exercises/check_util.h"

using namespace seqgrad;
using exercises::max_diff;

namespace {
real sig(real v) { return 1 / (1 + std::exp(-v)); }
}  // namespace

TEST_CASE("06: an open reset gate (r = 1) makes both placements agree with nn::GRUCell") {
  manual_seed(6);
  nn::GRUCell cell(4, 3);
  // b_ir = +50: r = 1, and r * (h W^T + b) = (r * h) W^T + b.
  Tensor b = cell.bias_ih.value().clone();
  for (int64_t j = 0; j < 3; ++j) b.at({j}) = 50;
  cell.bias_ih.value().copy_(b);
  const Variable x(randn({2, 4})), h(randn({2, 3}));
  const Variable mine = gru_step(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh);
  REQUIRE(mine.shape() == Shape{2, 3});
  CHECK(max_diff(mine, cell.forward(x, nn::RNNState{h, Variable()}).h) < 1e-5);
}

TEST_CASE("06: a shut reset gate (r = 0) keeps b_hn in the candidate, unlike nn::GRUCell") {
  manual_seed(7);
  nn::GRUCell cell(4, 3);
  Tensor b = cell.bias_ih.value().clone();
  for (int64_t j = 0; j < 3; ++j) b.at({j}) = -50;  // r = 0: n = tanh(x W_in^T + b_in + b_hn)
  const Variable x(randn({2, 4})), h(randn({2, 3}));
  const Variable mine = gru_step(x, h, cell.weight_ih, cell.weight_hh, Variable(b), cell.bias_hh);
  // nn::GRUCell with r = 0 has n = tanh(x W_in^T + b_in): move b_hn into its b_in.
  for (int64_t j = 0; j < 3; ++j) b.at({6 + j}) += cell.bias_hh.value().at({6 + j});
  cell.bias_ih.value().copy_(b);
  CHECK(max_diff(mine, cell.forward(x, nn::RNNState{h, Variable()}).h) < 1e-5);
}

TEST_CASE("06: one step by hand, with H = C = 1 and r in between") {
  // Weights chosen so r = sigmoid(0.5), and b_hn != 0 tells the two placements apart.
  const Variable x(from_vector({1}, {1, 1})), h(from_vector({0.8f}, {1, 1}));
  const Variable w_ih(from_vector({0.5f, -0.3f, 0.7f}, {3, 1})), w_hh(from_vector({0, 0.4f, -1.2f}, {3, 1}));
  const Variable b_ih(from_vector({0, 0.1f, 0})), b_hh(from_vector({0, 0, 0.6f}));
  const real r = sig(0.5f), z = sig(-0.3f + 0.1f + 0.4f * 0.8f);
  const real n = std::tanh(0.7f + (r * 0.8f) * -1.2f + 0.6f);
  const Variable out = gru_step(x, h, w_ih, w_hh, b_ih, b_hh);
  REQUIRE(out.shape() == Shape{1, 1});
  CHECK(out.value().item() == doctest::Approx((1 - z) * n + z * 0.8f).epsilon(1e-5));
}

TEST_CASE("06: a closed update gate keeps the state; an open one replaces it") {
  manual_seed(8);
  nn::GRUCell cell(2, 2);
  const Variable x(randn({1, 2})), h(from_vector({0.5f, -0.5f}, {1, 2}));
  Tensor b = cell.bias_ih.value().clone();
  b.at({2}) = 50;  // b_iz = +50: z = 1, h' = h
  b.at({3}) = 50;
  const Variable keep = gru_step(x, h, cell.weight_ih, cell.weight_hh, Variable(b), cell.bias_hh);
  REQUIRE(keep.shape() == Shape{1, 2});
  CHECK(max_diff(keep, h) < 1e-4);
  b.at({2}) = -50;  // z = 0: h' = n, in (-1, 1)
  b.at({3}) = -50;
  const Variable replace = gru_step(x, h, cell.weight_ih, cell.weight_hh, Variable(b), cell.bias_hh);
  CHECK(max_diff(replace, h) > 1e-3);
  CHECK(max(abs(replace.value())).item() < 1);
}

TEST_CASE("06: gradcheck with respect to the input, the state and every weight") {
  manual_seed(9);
  const GradcheckResult r = gradcheck(
      [](const std::vector<Variable>& v) { return gru_step(v[0], v[1], v[2], v[3], v[4], v[5]); },
      {randn({2, 3}), randn({2, 4}), randn({12, 3}) * real(0.5), randn({12, 4}) * real(0.5), randn({12}), randn({12})});
  CHECK_MESSAGE(r.ok, r.message);
}
