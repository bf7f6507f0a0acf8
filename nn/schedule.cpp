// nn/schedule.cpp - the schedules' formulas (see schedule.h).
#include "nn/schedule.h"

#include <algorithm>
#include <cmath>

#include "tensor/check.h"

namespace seqgrad::nn {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer), base_lr_(optimizer.lr()) {}

void LRScheduler::apply() { optimizer_.set_lr(lr_at(step_)); }

void LRScheduler::step() {
  ++step_;
  apply();
}

void LRScheduler::set_step(int64_t step) {
  check(step >= 0, "LRScheduler::set_step: expected a step >= 0, got ", step);
  step_ = step;
  apply();
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, real gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  check(step_size > 0, "StepLR: expected a positive step_size, got ", step_size);
  apply();
}

real StepLR::lr_at(int64_t step) const {
  return base_lr_ * static_cast<real>(std::pow(static_cast<double>(gamma_), static_cast<double>(step / step_size_)));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, real eta_min)
    : LRScheduler(optimizer), t_max_(t_max), eta_min_(eta_min) {
  check(t_max > 0, "CosineAnnealingLR: expected a positive t_max, got ", t_max);
  apply();
}

real CosineAnnealingLR::lr_at(int64_t step) const {
  if (step >= t_max_) return eta_min_;
  const double cosine = std::cos(M_PI * static_cast<double>(step) / static_cast<double>(t_max_));
  return static_cast<real>(eta_min_ + (base_lr_ - eta_min_) * (1 + cosine) / 2);
}

LinearWarmupLR::LinearWarmupLR(Optimizer& optimizer, int64_t warmup_steps) : LRScheduler(optimizer), warmup_(warmup_steps) {
  check(warmup_steps > 0, "LinearWarmupLR: expected a positive number of warm-up steps, got ", warmup_steps);
  apply();
}

real LinearWarmupLR::lr_at(int64_t step) const {
  return base_lr_ * std::min(real(1), static_cast<real>(step + 1) / static_cast<real>(warmup_));
}

NoamLR::NoamLR(Optimizer& optimizer, int64_t d_model, int64_t warmup_steps, real factor)
    : LRScheduler(optimizer), d_model_(d_model), warmup_(warmup_steps), factor_(factor) {
  check(d_model > 0, "NoamLR: expected a positive d_model, got ", d_model);
  check(warmup_steps > 0, "NoamLR: expected a positive number of warm-up steps, got ", warmup_steps);
  apply();
}

real NoamLR::lr_at(int64_t step) const {
  const double s = static_cast<double>(step + 1);
  const double rate = std::min(1 / std::sqrt(s), s * std::pow(static_cast<double>(warmup_), -1.5));
  return static_cast<real>(factor_ / std::sqrt(static_cast<double>(d_model_)) * rate);
}

}  // namespace seqgrad::nn
