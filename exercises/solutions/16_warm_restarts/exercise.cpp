// exercises/solutions/16_warm_restarts/exercise.cpp - reference solution of exercise 16.
#include "exercise.h"

#include <cmath>

using namespace seqgrad;

CosineWarmRestartsLR::CosineWarmRestartsLR(nn::Optimizer& optimizer, int64_t t_0, int64_t t_mult, real eta_min)
    : nn::LRScheduler(optimizer), t_0_(t_0), t_mult_(t_mult), eta_min_(eta_min) {
  check(t_0 >= 1, "CosineWarmRestartsLR: expected t_0 >= 1, got ", t_0);
  check(t_mult >= 1, "CosineWarmRestartsLR: expected t_mult >= 1, got ", t_mult);
  apply();  // the learning rate of step 0
}

real CosineWarmRestartsLR::lr_at(int64_t step) const {
  // Walk the cycles: skip each whole one that ends at or before `step`. With t_mult >= 2 the
  // cycles grow geometrically, so this takes O(log step) rounds; with t_mult = 1 every cycle
  // has the same length and a remainder finds the place at once.
  int64_t t_cur = step, t_i = t_0_;
  if (t_mult_ == 1) {
    t_cur = step % t_0_;
  } else {
    while (t_cur >= t_i) {
      t_cur -= t_i;
      t_i *= t_mult_;
    }
  }
  const double cosine = std::cos(M_PI * static_cast<double>(t_cur) / static_cast<double>(t_i));
  return static_cast<real>(eta_min_ + (base_lr_ - eta_min_) * (1 + cosine) / 2);
}
