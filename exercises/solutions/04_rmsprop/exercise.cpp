// exercises/solutions/04_rmsprop/exercise.cpp - reference solution of exercise 04.
#include "exercise.h"

#include <cmath>

using namespace seqgrad;

RMSprop::RMSprop(std::vector<Variable> params, real lr, real alpha_, real eps_)
    : nn::Optimizer(std::move(params), lr), alpha(alpha_), eps(eps_) {
  check(alpha_ >= 0 && alpha_ < 1, "RMSprop: expected alpha in [0, 1), got ", alpha_);
}

void RMSprop::step() {
  ++steps_;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].grad().defined()) continue;  // not used in this step's loss
    real* p = params_[i].value().data();
    const real* g = params_[i].grad().data();
    real* v = slot(square_avg_, i).data();  // zeros on the first step
    for (int64_t k = 0; k < params_[i].numel(); ++k) {
      v[k] = alpha * v[k] + (1 - alpha) * g[k] * g[k];  // v = alpha v + (1 - alpha) g^2
      p[k] -= lr_ * g[k] / (std::sqrt(v[k]) + eps);     // p = p - lr g / (sqrt(v) + eps)
    }
  }
}
