// exercises/04_rmsprop/exercise.cpp - your solution goes here.
#include "exercise.h"

using namespace seqgrad;

RMSprop::RMSprop(std::vector<Variable> params, real lr, real alpha_, real eps_)
    : nn::Optimizer(std::move(params), lr), alpha(alpha_), eps(eps_) {
  check(alpha_ >= 0 && alpha_ < 1, "RMSprop: expected alpha in [0, 1), got ", alpha_);
}

void RMSprop::step() {
  ++steps_;
  // TODO(exercise 04): for every parameter i with a gradient, update slot(square_avg_, i) and
  // the parameter's values (params_[i].value().data()) as the formulas in exercise.h say.
}
