// nn/optim/schedule.h - learning-rate schedules: step decay, cosine (with or without a linear
// warm-up), linear warm-up, and the Transformer paper's warm-up / inverse-square-root schedule.
//
// A scheduler wraps an optimizer. Its constructor sets the learning rate for step 0, and each
// step() (call it after optimizer.step()) moves to the next step and sets lr_at(step). Steps
// count from 0. lr_at is a pure function, so the schedule can be printed or plotted.
//   NoamLR sched(opt, /*d_model=*/128, /*warmup=*/4000);  ...  opt.step(); sched.step();
#pragma once

#include <cstdint>
#include <string>
#include <memory>
#include <functional>

#include "nn/optim/optim.h"
#include "nn/core/registry.h"

namespace seqgrad::nn {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  virtual real lr_at(int64_t step) const = 0;
  void step();  // advance one step and set the optimizer's learning rate
  void set_step(int64_t step);  // jump to `step` (resuming a run): as that many step() calls
  int64_t current_step() const { return step_; }
  real base_lr() const { return base_lr_; }

 protected:
  void apply();  // sets the optimizer's lr to lr_at(current_step()); subclasses call it once built
  Optimizer& optimizer_;
  real base_lr_;
  int64_t step_ = 0;
};

// base_lr * gamma^floor(step / step_size)
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, real gamma = real(0.1));
  real lr_at(int64_t step) const override;

 private:
  int64_t step_size_;
  real gamma_;
};

// eta_min + (base_lr - eta_min) (1 + cos(pi step / t_max)) / 2, then eta_min after t_max
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, real eta_min = 0);
  real lr_at(int64_t step) const override;

 private:
  int64_t t_max_;
  real eta_min_;
};

// A straight ramp, then the half cosine down to eta_min over the remaining steps:
//   base_lr (step + 1) / warmup                                          step < warmup
//   eta_min + (base_lr - eta_min) (1 + cos(pi (step - warmup) / (t_max - warmup))) / 2   up to t_max
//   eta_min                                                              after t_max
// With warmup = 0 it is CosineAnnealingLR. The ramp keeps Adam's first steps small: each of
// them moves every weight by about the learning rate whatever its gradient, and at full rate
// that can switch off a freshly initialised ReLU layer for good (docs/14-beyond-translation.md).
class WarmupCosineLR : public LRScheduler {
 public:
  WarmupCosineLR(Optimizer& optimizer, int64_t warmup_steps, int64_t t_max, real eta_min = 0);
  real lr_at(int64_t step) const override;

 private:
  int64_t warmup_, t_max_;
  real eta_min_;
};

// base_lr * min(1, (step + 1) / warmup_steps): a straight ramp, then constant
class LinearWarmupLR : public LRScheduler {
 public:
  LinearWarmupLR(Optimizer& optimizer, int64_t warmup_steps);
  real lr_at(int64_t step) const override;

 private:
  int64_t warmup_;
};

// "Attention Is All You Need", section 5.3, with s = step + 1 (the paper counts from 1):
//   lr = factor * d_model^-0.5 * min(s^-0.5, s * warmup^-1.5)
// It rises linearly for `warmup` steps, peaks at s = warmup, then decays as 1/sqrt(s).
// The optimizer's own learning rate is ignored (set it to anything, e.g. 1).
class NoamLR : public LRScheduler {
 public:
  NoamLR(Optimizer& optimizer, int64_t d_model, int64_t warmup_steps, real factor = 1);
  real lr_at(int64_t step) const override;

 private:
  int64_t d_model_, warmup_;
  real factor_;
};

// ================================================================================================
// The registry of schedules by name (nn/core/registry.h): "warmup", "noam", "cosine", "constant", and
// whatever else registers. Each is built for a run from what a schedule may need to know of it,
// and from the values of the options it declares (cosine's min_lr: the tool's --min-lr):
//   SEQGRAD_REGISTER_SCHEDULE("step", "the rate times gamma every N steps",
//       [](Optimizer& o, const ScheduleContext& run) -> std::unique_ptr<LRScheduler> {
//         return std::make_unique<StepLR>(o, run.options.integer("step_size"), run.options.number("gamma")); },
//       {integer_option("step_size", 1000, 1, 1 << 30, "step: steps between decays"),
//        number_option("gamma", 0.1, 0, 1, "step: the factor of each decay")});

struct ScheduleContext {
  int64_t warmup_steps = 1;  // the warm-up's length, in steps
  int64_t total_steps = 1;   // the run's length, in steps
  int64_t d_model = 64;      // the model's width (the Noam schedule scales by d_model^-0.5)
  Settings options;          // values of the schedule's options; make_schedule fills in the defaults
};
struct ScheduleEntry {
  std::string name, help;
  // nullptr: the learning rate stays as the optimizer has it.
  std::function<std::unique_ptr<LRScheduler>(Optimizer& optimizer, const ScheduleContext& run)> make;
  std::vector<Option> options = {};
};
Registry<ScheduleEntry>& schedules();
// run.options may hold values for some of the schedule's options; the others take their
// defaults. A value out of its option's range, or a key the schedule does not take, is an error.
std::unique_ptr<LRScheduler> make_schedule(const std::string& name, Optimizer& optimizer, const ScheduleContext& run);
#define SEQGRAD_REGISTER_SCHEDULE(...) SEQGRAD_REGISTER(::seqgrad::nn::schedules(), ::seqgrad::nn::ScheduleEntry{__VA_ARGS__})

}  // namespace seqgrad::nn
