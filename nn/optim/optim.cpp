// nn/optim/optim.cpp - the update rules, each written out beside its formula.
#include "nn/optim/optim.h"

#include <cmath>

#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/reduce.h"
#include "tensor/thread_pool.h"

namespace seqgrad::nn {

// ================================================================================================
// Optimizer: parameters, zero_grad, and named state

Optimizer::Optimizer(std::vector<Variable> params, real lr) : params_(std::move(params)), lr_(lr) {
  check(lr >= 0, "Optimizer: expected a non-negative learning rate, got ", lr);
  for (size_t i = 0; i < params_.size(); ++i)
    check(params_[i].defined() && params_[i].requires_grad(), "Optimizer: parameter ", i,
          " does not require grad, so it can never be updated");
}

void Optimizer::zero_grad() {
  for (Variable& p : params_) p.zero_grad();
}

Tensor& Optimizer::slot(std::vector<Tensor>& buffers, size_t i) {
  if (buffers.size() < params_.size()) buffers.resize(params_.size());
  if (!buffers[i].defined()) buffers[i] = zeros(params_[i].shape());
  return buffers[i];
}

NamedTensors Optimizer::state_dict() {
  NamedTensors out{{"step", scalar(static_cast<real>(steps_))}};
  for (auto& [name, buffers] : slots())
    for (size_t i = 0; i < buffers->size(); ++i)
      if ((*buffers)[i].defined()) out.emplace_back(name + "." + std::to_string(i), (*buffers)[i].clone());
  return out;
}

void Optimizer::load_state_dict(const NamedTensors& state) {
  auto all = slots();
  for (auto& [name, buffers] : all) buffers->assign(params_.size(), Tensor());
  bool has_step = false;
  for (const auto& [key, value] : state) {
    if (key == "step") {
      // Saved as a float32 scalar: a whole number (exact up to 2^24 steps, rounded beyond).
      const double step = value.numel() == 1 ? static_cast<double>(value.data()[0]) : -1;
      check(value.numel() == 1 && std::isfinite(step) && step >= 0 && step <= 0x1p53 && step == std::floor(step),
            "Optimizer: state entry 'step' expected a whole number from 0 to 2^53, got ",
            value.numel() == 1 ? cat(step) : cat("a tensor of shape ", value.shape()));
      steps_ = static_cast<int64_t>(step);
      has_step = true;
      continue;
    }
    const size_t dot = key.rfind('.');
    bool known = false;
    for (auto& [name, buffers] : all) {
      if (dot == std::string::npos || key.compare(0, dot, name) != 0 || dot != name.size()) continue;
      const std::string index = key.substr(dot + 1);
      check(!index.empty() && index.size() <= 9 && index.find_first_not_of("0123456789") == std::string::npos,
            "Optimizer: unexpected state entry '", key, "'");
      const size_t i = std::stoul(index);
      check(i < params_.size(), "Optimizer: state entry '", key, "' names parameter ", i, " but there are ",
            params_.size(), " parameters");
      check(value.shape() == params_[i].shape(), "Optimizer: state entry '", key, "' expected shape ",
            params_[i].shape(), ", got ", value.shape());
      (*buffers)[i] = value.clone();
      known = true;
    }
    check(known, "Optimizer: unexpected state entry '", key, "'");
  }
  check(has_step, "Optimizer: the state has no 'step' entry");
  // A parameter has every buffer of the optimizer or none (none: it never had a gradient).
  for (size_t i = 0; i < params_.size(); ++i)
    for (auto& [name, buffers] : all)
      for (auto& [other, other_buffers] : all)
        check((*buffers)[i].defined() || !(*other_buffers)[i].defined(), "Optimizer: the state has '", other, ".", i,
              "' but no '", name, ".", i, "'");
}

// ================================================================================================
// SGD

SGD::SGD(std::vector<Variable> params, const SGDOptions& o) : Optimizer(std::move(params), o.lr), opt_(o) {
  check(o.momentum >= 0, "SGD: expected momentum >= 0, got ", o.momentum);
  check(o.weight_decay >= 0, "SGD: expected weight_decay >= 0, got ", o.weight_decay);
  check(!o.nesterov || (o.momentum > 0 && o.dampening == 0), "SGD: Nesterov momentum needs momentum > 0 and dampening 0");
}

void SGD::step() {
  // g = grad + weight_decay * p
  // with momentum:  buf = g (first step),  buf = momentum * buf + (1 - dampening) * g (later)
  //                 g = nesterov ? g + momentum * buf : buf
  // p = p - lr * g
  ++steps_;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].grad().defined()) continue;
    real* p = params_[i].value().data();
    const real* grad = params_[i].grad().data();
    // A parameter's buffer starts as its first gradient (PyTorch's rule), not as zeros.
    const bool fresh = i >= momentum_.size() || !momentum_[i].defined();
    real* buf = opt_.momentum > 0 ? slot(momentum_, i).data() : nullptr;
    for (int64_t k = 0; k < params_[i].numel(); ++k) {
      real g = grad[k] + opt_.weight_decay * p[k];
      if (buf) {
        buf[k] = fresh ? g : opt_.momentum * buf[k] + (1 - opt_.dampening) * g;
        g = opt_.nesterov ? g + opt_.momentum * buf[k] : buf[k];
      }
      p[k] -= lr_ * g;
    }
  }
}

// ================================================================================================
// Adam / AdamW

Adam::Adam(std::vector<Variable> params, const AdamOptions& o) : Adam(std::move(params), o, false) {}

Adam::Adam(std::vector<Variable> params, const AdamOptions& o, bool decoupled)
    : Optimizer(std::move(params), o.lr), opt_(o), decoupled_(decoupled) {
  check(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1, "Adam: expected betas in [0, 1), got (", o.beta1,
        ", ", o.beta2, ")");
  check(o.eps >= 0, "Adam: expected eps >= 0, got ", o.eps);
  check(o.weight_decay >= 0, "Adam: expected weight_decay >= 0, got ", o.weight_decay);
}

// [docs:adam]
void Adam::step() {
  // t = t + 1
  // AdamW: p = p - lr * weight_decay * p           Adam: g = grad + weight_decay * p
  // m = beta1 m + (1 - beta1) g                    (first moment, the mean of g)
  // v = beta2 v + (1 - beta2) g^2                  (second moment, the mean of g^2)
  // m_hat = m / (1 - beta1^t),  v_hat = v / (1 - beta2^t)     (undo the bias of starting at 0)
  // p = p - lr * m_hat / (sqrt(v_hat) + eps)
  ++steps_;
  const double t = static_cast<double>(steps_);
  const real bias1 = static_cast<real>(1 - std::pow(static_cast<double>(opt_.beta1), t));
  const real bias2 = static_cast<real>(1 - std::pow(static_cast<double>(opt_.beta2), t));
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].grad().defined()) continue;
    real* p = params_[i].value().data();
    const real* grad = params_[i].grad().data();
    real* m = slot(exp_avg_, i).data();
    real* v = slot(exp_avg_sq_, i).data();
    // Each element on its own: large tensors are shared between threads. The settings are
    // copied to locals so that the compiler knows the stores to p, m and v cannot change them,
    // and can then run the loop on vectors.
    const real lr = lr_, wd = opt_.weight_decay, beta1 = opt_.beta1, beta2 = opt_.beta2, eps = opt_.eps;
    const real p_decay = decoupled_ ? lr * wd : 0, g_decay = decoupled_ ? 0 : wd;
    parallel_for(0, params_[i].numel(), kElementwiseGrain, [=](int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) {
        const real g = grad[k] + g_decay * p[k];  // Adam: weight decay joins the gradient
        const real pk = p[k] - p_decay * p[k];    // AdamW: it shrinks the weight directly
        m[k] = beta1 * m[k] + (1 - beta1) * g;
        v[k] = beta2 * v[k] + (1 - beta2) * g * g;
        p[k] = pk - lr * (m[k] / bias1) / (std::sqrt(v[k] / bias2) + eps);
      }
    });
  }
}
// [docs:end]

AdamW::AdamW(std::vector<Variable> params, AdamOptions options) : Adam(std::move(params), options, true) {}

// ================================================================================================
// Gradient clipping

real clip_grad_norm(const std::vector<Variable>& params, real max_norm) {
  check(max_norm > 0, "clip_grad_norm: expected a positive max_norm, got ", max_norm);
  double total = 0;  // sum of squares over every gradient element, in lanes (tensor/reduce.h)
  for (const Variable& p : params) {
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    const real* d = g.data();
    total += lane_sum(g.numel(), [d](int64_t k) { return static_cast<double>(d[k]) * d[k]; });
  }
  const real norm = static_cast<real>(std::sqrt(total));
  if (norm > max_norm) {
    const real scale = max_norm / (norm + real(1e-6));
    for (Variable p : params)
      if (p.grad().defined()) p.set_grad(p.grad() * scale);  // a new tensor: the old one may be shared
  }
  return norm;
}

// ================================================================================================
// The registry

namespace {

// Adam with the Transformer paper's betas and eps (Vaswani et al., 2017, section 5.3).
AdamOptions transformer_adam(real lr) { return AdamOptions(lr).with_betas(real(0.9), real(0.98)).with_eps(real(1e-9)); }

}  // namespace

// Every optimizer here takes a weight decay, as every torch.optim one does; the defaults are
// PyTorch's (0, and AdamW's 0.01).
namespace {

Option weight_decay_option(double default_value) {
  return number_option("weight_decay", default_value, 0, 10,
                           "weight decay lambda: adam and sgd add lambda p to each gradient (L2; default 0), adamw "
                           "shrinks each weight by lr lambda p every step (decoupled; default 0.01)");
}

}  // namespace

SEQGRAD_REGISTER_OPTIMIZER("adam", "Adam (betas 0.9, 0.98, eps 1e-9: the Transformer paper's)",
                           [](std::vector<Variable> p, real lr, const Settings& s) -> std::unique_ptr<Optimizer> {
                             return std::make_unique<Adam>(
                                 std::move(p), transformer_adam(lr).with_weight_decay(static_cast<real>(s.number("weight_decay"))));
                           },
                           {weight_decay_option(0)})
SEQGRAD_REGISTER_OPTIMIZER("adamw", "AdamW (the same, with decoupled weight decay, 0.01 unless --weight-decay says)",
                           [](std::vector<Variable> p, real lr, const Settings& s) -> std::unique_ptr<Optimizer> {
                             return std::make_unique<AdamW>(
                                 std::move(p), transformer_adam(lr).with_weight_decay(static_cast<real>(s.number("weight_decay"))));
                           },
                           {weight_decay_option(0.01)})
SEQGRAD_REGISTER_OPTIMIZER("sgd", "SGD with momentum (--momentum, 0.9 unless given)",
                           [](std::vector<Variable> p, real lr, const Settings& s) -> std::unique_ptr<Optimizer> {
                             return std::make_unique<SGD>(std::move(p), SGDOptions(lr)
                                                                            .with_momentum(static_cast<real>(s.number("momentum")))
                                                                            .with_weight_decay(static_cast<real>(s.number("weight_decay"))));
                           },
                           {number_option("momentum", 0.9, 0, 0.999, "sgd: momentum (0: plain SGD)"), weight_decay_option(0)})

Registry<OptimizerEntry>& optimizers() {
  static Registry<OptimizerEntry> registry("optimizer");
  return registry;
}

std::unique_ptr<Optimizer> make_optimizer(const std::string& name, std::vector<Variable> params, real lr,
                                          const Settings& settings) {
  const OptimizerEntry& entry = optimizers().get(name);
  const Settings complete = complete_settings(entry.options, settings, "make_optimizer: the optimizer " + name);
  return entry.make(std::move(params), lr, complete);
}

}  // namespace seqgrad::nn
