// examples/08_extending/coursework/step_schedule.cpp - a new learning-rate schedule in one file,
// with options of its own, registered by name so that `seqgrad train --schedule step` uses it.
//
// Step decay: the rate as given, multiplied by gamma every step_size steps (PyTorch's StepLR),
//   lr(step) = lr gamma^floor(step / step_size)
// The library's StepLR (nn/optim/schedule.h) computes it; this file only gives it a name and its
// two options, which the tool turns into --step-size and --gamma, keeps in the resume file, and
// refuses with another schedule.
//   make seqgrad EXTRA=examples/08_extending/coursework/step_schedule.cpp
//   build/seqgrad train --task reverse --schedule step --step-size 200 --gamma 0.5 --out m.safetensors
#include <memory>

#include "seqgrad.h"

using namespace seqgrad;

// [docs:step_schedule]
SEQGRAD_REGISTER_SCHEDULE("step", "the learning rate times --gamma every --step-size steps (PyTorch's StepLR)",
                          [](nn::Optimizer& o, const nn::ScheduleContext& run) -> std::unique_ptr<nn::LRScheduler> {
                            return std::make_unique<nn::StepLR>(o, run.options.integer("step_size"),
                                                                static_cast<real>(run.options.number("gamma")));
                          },
                          {nn::integer_option("step_size", 1000, 1, 1 << 30, "step: optimizer steps between decays"),
                           nn::number_option("gamma", 0.1, 0, 1, "step: the factor each decay multiplies the rate by")})
// [docs:end]
