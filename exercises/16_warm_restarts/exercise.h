// exercises/16_warm_restarts - a learning-rate schedule: cosine annealing with warm restarts
// (chapter 4).
//
// nn::CosineAnnealingLR lowers the learning rate along half a cosine once. SGDR (Loshchilov and
// Hutter, 2017; PyTorch's CosineAnnealingWarmRestarts) does it again and again, each cycle
// t_mult times longer than the one before, jumping back to base_lr at every restart:
//   cycle 0 lasts T_0 = t_0 steps, cycle i lasts T_i = t_0 * t_mult^i steps
//   at step s, in cycle i, T_cur steps after its start:
//     lr = eta_min + (base_lr - eta_min) (1 + cos(pi T_cur / T_i)) / 2
// e.g. t_0 = 4, t_mult = 2: cycles are steps 0-3, 4-11, 12-27, ...; lr = base_lr at 0, 4, 12.
// base_lr is the optimizer's learning rate when the scheduler is built (LRScheduler keeps it).
// lr_at must be exact for any step (a run may resume at step 10^6: set_step), so find the cycle
// with whole numbers, not with a floating-point logarithm. t_0 < 1 or t_mult < 1 throws
// std::invalid_argument.
#pragma once

#include <cstdint>

#include "seqgrad.h"

class CosineWarmRestartsLR : public seqgrad::nn::LRScheduler {
 public:
  CosineWarmRestartsLR(seqgrad::nn::Optimizer& optimizer, int64_t t_0, int64_t t_mult = 1, seqgrad::real eta_min = 0);
  seqgrad::real lr_at(int64_t step) const override;

 private:
  int64_t t_0_, t_mult_;
  seqgrad::real eta_min_;
};
