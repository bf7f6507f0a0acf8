// exercises/16_warm_restarts/exercise.cpp - your solution goes here.
#include "exercise.h"

using namespace seqgrad;

CosineWarmRestartsLR::CosineWarmRestartsLR(nn::Optimizer& optimizer, int64_t t_0, int64_t t_mult, real eta_min)
    : nn::LRScheduler(optimizer), t_0_(t_0), t_mult_(t_mult), eta_min_(eta_min) {
  // TODO(exercise 16): check t_0 and t_mult, then set the learning rate of step 0 (see how
  // nn::CosineAnnealingLR's constructor in nn/optim/schedule.cpp ends).
}

real CosineWarmRestartsLR::lr_at(int64_t step) const {
  // TODO(exercise 16): find the cycle of `step` and how far into it it is, then the cosine.
  (void)step;
  return base_lr_;
}
