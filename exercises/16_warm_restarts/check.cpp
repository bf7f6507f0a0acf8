// exercises/16_warm_restarts/check.cpp - make -C exercises check EX=16
#include <doctest/doctest.h>

#include <cmath>

#include "exercise.h"

using namespace seqgrad;

namespace {
// lr of a cycle of length T, T_cur steps in, base 1 and eta_min 0.1
double by_hand(double t_cur, double T) { return 0.1 + 0.9 * (1 + std::cos(M_PI * t_cur / T)) / 2; }
}  // namespace

TEST_CASE("16: t_0 = 4, t_mult = 2: cycles of 4, 8, 16 steps, back to base_lr at each restart") {
  Variable p(zeros({1}), true);
  nn::SGD opt({p}, nn::SGDOptions(1));
  CosineWarmRestartsLR sched(opt, 4, 2, real(0.1));
  CHECK(opt.lr() == doctest::Approx(1));  // step 0, set by the constructor
  const struct {
    int64_t step;
    double t_cur, T;
  } expected[] = {{0, 0, 4}, {1, 1, 4}, {2, 2, 4}, {3, 3, 4},   {4, 0, 8},   {6, 2, 8},
                  {8, 4, 8}, {11, 7, 8}, {12, 0, 16}, {20, 8, 16}, {27, 15, 16}, {28, 0, 32}};
  for (const auto& e : expected) {
    CAPTURE(e.step);
    CHECK(sched.lr_at(e.step) == doctest::Approx(by_hand(e.t_cur, e.T)).epsilon(1e-5));
  }
  // step() moves the optimizer's learning rate along.
  for (int s = 0; s < 6; ++s) sched.step();
  CHECK(opt.lr() == doctest::Approx(by_hand(2, 8)).epsilon(1e-5));
}

TEST_CASE("16: t_mult = 1 repeats nn::CosineAnnealingLR's first half-cosine") {
  Variable p(zeros({1}), true);
  nn::SGD opt_a({p}, nn::SGDOptions(real(0.5))), opt_b({p}, nn::SGDOptions(real(0.5)));
  CosineWarmRestartsLR restarts(opt_a, 10, 1, real(0.01));
  nn::CosineAnnealingLR once(opt_b, 10, real(0.01));
  for (int64_t s = 0; s < 10; ++s) {
    CAPTURE(s);
    CHECK(restarts.lr_at(s) == doctest::Approx(once.lr_at(s)).epsilon(1e-5));
    CHECK(restarts.lr_at(s + 30) == doctest::Approx(once.lr_at(s)).epsilon(1e-5));
  }
}

TEST_CASE("16: exact far into a run, and resumable with set_step; bad settings are refused") {
  Variable p(zeros({1}), true);
  nn::SGD opt({p}, nn::SGDOptions(1));
  CosineWarmRestartsLR sched(opt, 3, 3, real(0.1));
  // Cycles 3, 9, 27, ..., 3^13: they start at (3^k - 3) / 2; 3^13 = 1594323 starts the 13th.
  const int64_t start = (1594323 - 3) / 2;
  CHECK(sched.lr_at(start) == doctest::Approx(1));
  CHECK(sched.lr_at(start - 1) == doctest::Approx(by_hand(531440, 531441)).epsilon(1e-5));
  CHECK(sched.lr_at(start + 1594323 / 2) == doctest::Approx(by_hand(797161, 1594323)).epsilon(1e-5));
  sched.set_step(start + 5);
  CHECK(opt.lr() == doctest::Approx(by_hand(5, 1594323)).epsilon(1e-5));
  CHECK_THROWS_AS(CosineWarmRestartsLR(opt, 0), std::invalid_argument);
  CHECK_THROWS_AS(CosineWarmRestartsLR(opt, 4, 0), std::invalid_argument);
}
