// examples/08_extending/coursework/lion_optimizer.cpp - a new optimizer in one file, with options
// of its own, registered by name so that `seqgrad train --optimizer lion` uses it.
//
// Lion (Chen et al., 2023, "Symbolic Discovery of Optimization Algorithms") keeps one buffer, the
// momentum m, and moves every weight by the same amount, lr, in the direction of a sign:
//   c = beta1 m + (1 - beta1) g            a blend of the momentum and this step's gradient
//   p = p - lr (sign(c) + lambda p)        the step: +-lr per weight, and decoupled weight decay
//   m = beta2 m + (1 - beta2) g            the momentum, updated after the step, with its own decay
// A step of fixed size per weight is larger than Adam's on most weights: the paper uses a rate
// 3 to 10 times smaller than Adam's. Its two decays and the weight decay are options, which the
// tool turns into --lion-beta1, --lion-beta2 (and the shared --weight-decay), keeps in the resume
// file, and refuses with another optimizer.
//   make seqgrad EXTRA=examples/08_extending/coursework/lion_optimizer.cpp
//   build/seqgrad train --task reverse --optimizer lion --lr 3e-4 --lion-beta2 0.98 --out m.safetensors
#include <memory>

#include "seqgrad.h"

using namespace seqgrad;

// [docs:lion_optimizer]
class Lion : public nn::Optimizer {
 public:
  Lion(std::vector<Variable> params, real lr, real beta1, real beta2, real weight_decay)
      : nn::Optimizer(std::move(params), lr), beta1_(beta1), beta2_(beta2), weight_decay_(weight_decay) {}

  void step() override {
    ++steps_;
    for (size_t i = 0; i < params_.size(); ++i) {
      if (!params_[i].grad().defined()) continue;
      real* p = params_[i].value().data();
      const real* g = params_[i].grad().data();
      real* m = slot(exp_avg_, i).data();  // zeros on the first step
      for (int64_t k = 0; k < params_[i].numel(); ++k) {
        const real c = beta1_ * m[k] + (1 - beta1_) * g[k];
        const real sign = c > 0 ? real(1) : c < 0 ? real(-1) : real(0);
        p[k] -= lr_ * (sign + weight_decay_ * p[k]);
        m[k] = beta2_ * m[k] + (1 - beta2_) * g[k];
      }
    }
  }

 protected:
  // The momentum, saved in a resume file as "exp_avg.0", "exp_avg.1", ...
  std::vector<std::pair<std::string, std::vector<Tensor>*>> slots() override { return {{"exp_avg", &exp_avg_}}; }

 private:
  real beta1_, beta2_, weight_decay_;
  std::vector<Tensor> exp_avg_;
};

// The one line that makes "lion" an optimizer: its builder reads the values of its options.
SEQGRAD_REGISTER_OPTIMIZER("lion", "Lion (Chen et al., 2023): sign steps of the learning rate; use a rate 3-10x below Adam's",
                           [](std::vector<Variable> p, real lr, const nn::Settings& s) -> std::unique_ptr<nn::Optimizer> {
                             return std::make_unique<Lion>(std::move(p), lr, static_cast<real>(s.number("lion_beta1")),
                                                           static_cast<real>(s.number("lion_beta2")),
                                                           static_cast<real>(s.number("weight_decay")));
                           },
                           {nn::number_option("lion_beta1", 0.9, 0, 0.9999, "lion: how much of the momentum the step's direction takes"),
                            nn::number_option("lion_beta2", 0.99, 0, 0.9999, "lion: the momentum's decay"),
                            nn::number_option("weight_decay", 0, 0, 10, "weight decay lambda (lion: decoupled, lr lambda p per step)")})
// [docs:end]
