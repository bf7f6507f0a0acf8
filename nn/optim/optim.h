// nn/optim/optim.h - optimizers: SGD (momentum, Nesterov, weight decay), Adam, AdamW; clip_grad_norm.
//
// An optimizer holds handles to the parameters, reads their .grad after backward(), and
// updates their values in place; parameters without a gradient are skipped. The update
// formulas are PyTorch's, written out in optim.cpp beside the code. state_dict() names every
// buffer ("step", "exp_avg.0", ...) so the state can be saved with a checkpoint and training
// resumed exactly. Read next: schedule.h.
//   Adam opt(model.parameters(), AdamOptions(1e-3).with_betas(0.9, 0.98).with_eps(1e-9));
//   opt.zero_grad(); loss.backward(); opt.step();
#pragma once

#include <cstdint>
#include <memory>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "nn/core/registry.h"

namespace seqgrad::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Optimizer {
 public:
  Optimizer(std::vector<Variable> params, real lr);
  virtual ~Optimizer() = default;

  virtual void step() = 0;
  void zero_grad();
  real lr() const { return lr_; }
  void set_lr(real lr) { lr_ = lr; }
  int64_t steps_taken() const { return steps_; }
  const std::vector<Variable>& params() const { return params_; }

  // Every state buffer by name, and back (missing or mis-shaped entries throw).
  NamedTensors state_dict();
  void load_state_dict(const NamedTensors& state);

 protected:
  // The per-parameter buffers of a subclass, by name ("momentum_buffer", "exp_avg", ...).
  virtual std::vector<std::pair<std::string, std::vector<Tensor>*>> slots() { return {}; }
  // A buffer for parameter i, created as zeros on first use.
  Tensor& slot(std::vector<Tensor>& buffers, size_t i);

  std::vector<Variable> params_;
  real lr_;
  int64_t steps_ = 0;
};

// ================================================================================================

struct SGDOptions {
  explicit SGDOptions(real lr = real(0.01)) : lr(lr) {}
  real lr, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
  SGDOptions& with_momentum(real v) { momentum = v; return *this; }
  SGDOptions& with_dampening(real v) { dampening = v; return *this; }
  SGDOptions& with_weight_decay(real v) { weight_decay = v; return *this; }
  SGDOptions& with_nesterov(bool v) { nesterov = v; return *this; }
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Variable> params, const SGDOptions& options);
  void step() override;

 private:
  std::vector<std::pair<std::string, std::vector<Tensor>*>> slots() override { return {{"momentum_buffer", &momentum_}}; }
  SGDOptions opt_;
  std::vector<Tensor> momentum_;
};

struct AdamOptions {
  explicit AdamOptions(real lr = real(1e-3)) : lr(lr) {}
  real lr, beta1 = real(0.9), beta2 = real(0.999), eps = real(1e-8), weight_decay = 0;
  AdamOptions& with_betas(real b1, real b2) { beta1 = b1; beta2 = b2; return *this; }
  AdamOptions& with_eps(real v) { eps = v; return *this; }
  AdamOptions& with_weight_decay(real v) { weight_decay = v; return *this; }
};

// Adam adds weight_decay * p to the gradient (L2); AdamW shrinks the weights directly
// ("decoupled" weight decay), and its default weight_decay is 0.01 as in PyTorch.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Variable> params, const AdamOptions& options = AdamOptions());
  void step() override;

 protected:
  Adam(std::vector<Variable> params, const AdamOptions& options, bool decoupled);

 private:
  std::vector<std::pair<std::string, std::vector<Tensor>*>> slots() override {
    return {{"exp_avg", &exp_avg_}, {"exp_avg_sq", &exp_avg_sq_}};
  }
  AdamOptions opt_;
  bool decoupled_;
  std::vector<Tensor> exp_avg_, exp_avg_sq_;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Variable> params, AdamOptions options = AdamOptions().with_weight_decay(real(0.01)));
};

// Scales all gradients together so their global L2 norm is at most max_norm; returns the norm
// before clipping (like torch.nn.utils.clip_grad_norm_).
real clip_grad_norm(const std::vector<Variable>& params, real max_norm);

// ================================================================================================
// The registry of optimizers by name (nn/core/registry.h), as a training program asks for them:
// "adam", "adamw", "sgd", and whatever else registers. Each is built from the parameters, the
// learning rate and the values of the options it declares (weight_decay, momentum: the tool's
// --weight-decay, --momentum), complete and checked by make_optimizer.
//   SEQGRAD_REGISTER_OPTIMIZER("lion", "Lion (Chen et al., 2023)",
//       [](std::vector<Variable> p, real lr, const Settings& s) -> std::unique_ptr<Optimizer> { ... },
//       {number_option("beta2", 0.99, 0, 0.9999, "Lion: the momentum's decay")});

struct OptimizerEntry {
  std::string name, help;
  std::function<std::unique_ptr<Optimizer>(std::vector<Variable> params, real lr, const Settings& settings)> make;
  std::vector<Option> options = {};
};
Registry<OptimizerEntry>& optimizers();
// `settings` holds values for some of the optimizer's options, by key; the others take their
// defaults. A value out of its option's range, or a key the optimizer does not take, is an error.
std::unique_ptr<Optimizer> make_optimizer(const std::string& name, std::vector<Variable> params, real lr,
                                          const Settings& settings = Settings());
#define SEQGRAD_REGISTER_OPTIMIZER(...) SEQGRAD_REGISTER(::seqgrad::nn::optimizers(), ::seqgrad::nn::OptimizerEntry{__VA_ARGS__})

}  // namespace seqgrad::nn
