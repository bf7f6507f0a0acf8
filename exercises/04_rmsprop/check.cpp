// exercises/04_rmsprop/check.cpp - make -C exercises check EX=04
#include <doctest/doctest.h>

#include <cmath>

#include "exercise.h"

using namespace seqgrad;

TEST_CASE("04: two steps computed by hand") {
  Variable p(from_vector({1, -2}), true);
  RMSprop opt({p}, /*lr=*/real(0.1), /*alpha=*/real(0.9), /*eps=*/0);
  p.set_grad(from_vector({2, -1}));
  opt.step();
  // v = 0.1 g^2 = (0.4, 0.1);  p -= 0.1 g / sqrt(v)
  CHECK(p.value().at({0}) == doctest::Approx(1 - 0.1 * 2 / std::sqrt(0.4)));
  CHECK(p.value().at({1}) == doctest::Approx(-2 + 0.1 * 1 / std::sqrt(0.1)));
  p.set_grad(from_vector({1, 1}));
  opt.step();
  // v = 0.9 v + 0.1 g^2 = (0.46, 0.19)
  CHECK(p.value().at({0}) == doctest::Approx(1 - 0.2 / std::sqrt(0.4) - 0.1 / std::sqrt(0.46)));
  CHECK(p.value().at({1}) == doctest::Approx(-2 + 0.1 / std::sqrt(0.1) - 0.1 / std::sqrt(0.19)));
  CHECK(opt.steps_taken() == 2);
}

TEST_CASE("04: parameters without a gradient are left alone") {
  Variable a(from_vector({1}), true), b(from_vector({5}), true);
  RMSprop opt({a, b}, real(0.1));
  a.set_grad(from_vector({1}));
  opt.step();
  CHECK(a.value().at({0}) < 1);
  CHECK(b.value().at({0}) == 5);
}

TEST_CASE("04: the state holds square_avg, so training can resume") {
  Variable p(from_vector({1, 2}), true);
  RMSprop opt({p}, real(0.1), real(0.5), 0);
  p.set_grad(from_vector({2, 4}));
  opt.step();
  const nn::NamedTensors state = opt.state_dict();
  bool found = false;
  for (const auto& [name, t] : state)
    if (name == "square_avg.0") {
      found = true;
      CHECK(t.at({0}) == doctest::Approx(2));  // 0.5 * 2^2
      CHECK(t.at({1}) == doctest::Approx(8));
    }
  CHECK(found);
}

TEST_CASE("04: it minimises a badly scaled quadratic") {
  // f(x, y) = 100 x^2 + y^2: plain SGD needs a tiny step for x; RMSprop scales each axis.
  Variable p(from_vector({1, 1}), true);
  RMSprop opt({p}, real(0.01));
  for (int i = 0; i < 300; ++i) {
    Variable f = sum(p * p * Variable(from_vector({100, 1})));
    opt.zero_grad();
    f.backward();
    opt.step();
  }
  CHECK(std::abs(p.value().at({0})) < 0.05);
  CHECK(std::abs(p.value().at({1})) < 0.05);
}
