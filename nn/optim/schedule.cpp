// nn/optim/schedule.cpp - the schedules' formulas (see schedule.h).
#include "nn/optim/schedule.h"

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

namespace {

// eta_min + (base_lr - eta_min) (1 + cos(pi t / span)) / 2: the half cosine from base_lr at
// t = 0 down to eta_min at t = span, shared by the two cosine schedules.
real half_cosine(real base_lr, real eta_min, int64_t t, int64_t span) {
  const double cosine = std::cos(M_PI * static_cast<double>(t) / static_cast<double>(span));
  return static_cast<real>(eta_min + (base_lr - eta_min) * (1 + cosine) / 2);
}

}  // namespace

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, real eta_min)
    : LRScheduler(optimizer), t_max_(t_max), eta_min_(eta_min) {
  check(t_max > 0, "CosineAnnealingLR: expected a positive t_max, got ", t_max);
  apply();
}

real CosineAnnealingLR::lr_at(int64_t step) const {
  if (step >= t_max_) return eta_min_;
  return half_cosine(base_lr_, eta_min_, step, t_max_);
}

WarmupCosineLR::WarmupCosineLR(Optimizer& optimizer, int64_t warmup_steps, int64_t t_max, real eta_min)
    : LRScheduler(optimizer), warmup_(warmup_steps), t_max_(t_max), eta_min_(eta_min) {
  check(warmup_steps >= 0, "WarmupCosineLR: expected warm-up steps >= 0, got ", warmup_steps);
  check(t_max > 0, "WarmupCosineLR: expected a positive t_max, got ", t_max);
  apply();
}

real WarmupCosineLR::lr_at(int64_t step) const {
  if (step < warmup_ && step < t_max_) return base_lr_ * static_cast<real>(step + 1) / static_cast<real>(warmup_);
  if (step >= t_max_) return eta_min_;
  return half_cosine(base_lr_, eta_min_, step - warmup_, t_max_ - warmup_);  // over the steps after the ramp
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

// ================================================================================================
// The registry

SEQGRAD_REGISTER_SCHEDULE("warmup", "a linear ramp over the warm-up steps, then the learning rate as given",
                          [](Optimizer& o, const ScheduleContext& r) -> std::unique_ptr<LRScheduler> {
                            return std::make_unique<LinearWarmupLR>(o, r.warmup_steps);
                          })
SEQGRAD_REGISTER_SCHEDULE("noam", "the Transformer paper's: factor d_model^-0.5 min(step^-0.5, step warmup^-1.5), "
                          "d_model the model's width; ignores the learning rate",
                          [](Optimizer& o, const ScheduleContext& r) -> std::unique_ptr<LRScheduler> {
                            return std::make_unique<NoamLR>(o, r.d_model, r.warmup_steps,
                                                            static_cast<real>(r.options.number("noam_factor")));
                          },
                          {number_option("noam_factor", 1, 1e-6, 1e6, "noam: the factor its rate is multiplied by (the paper's: 1)")})
SEQGRAD_REGISTER_SCHEDULE("cosine", "from the learning rate down to --min-lr over the run, along a half cosine",
                          [](Optimizer& o, const ScheduleContext& r) -> std::unique_ptr<LRScheduler> {
                            return std::make_unique<CosineAnnealingLR>(o, std::max<int64_t>(1, r.total_steps),
                                                                       static_cast<real>(r.options.number("min_lr")));
                          },
                          {number_option("min_lr", 0, 0, 10, "cosine: the rate it ends at (PyTorch's eta_min)")})
SEQGRAD_REGISTER_SCHEDULE("constant", "the learning rate as given, every step",
                          [](Optimizer&, const ScheduleContext&) -> std::unique_ptr<LRScheduler> { return nullptr; })

Registry<ScheduleEntry>& schedules() {
  static Registry<ScheduleEntry> registry("schedule");
  return registry;
}

std::unique_ptr<LRScheduler> make_schedule(const std::string& name, Optimizer& optimizer, const ScheduleContext& run) {
  const ScheduleEntry& entry = schedules().get(name);
  ScheduleContext complete = run;
  complete.options = complete_settings(entry.options, run.options, "make_schedule: the schedule " + name);
  return entry.make(optimizer, complete);
}

}  // namespace seqgrad::nn
