// nn/core/dropout.h - Dropout: zero activations at random while training, identity in eval().
//
// With probability p each element is zeroed and the survivors are scaled by 1/(1-p) (inverted
// dropout), so nothing needs rescaling at test time. The mask comes from the default generator.
#pragma once

#include "nn/core/module.h"
#include "tensor/check.h"

namespace seqgrad::nn {

class Dropout : public Module {
 public:
  explicit Dropout(real p = real(0.5)) : p(p) {
    check(p >= 0 && p <= 1, "Dropout: expected a probability p in [0, 1], got ", p);
  }
  std::string name() const override { return "Dropout"; }
  std::string extra_repr() const override { return cat("p=", p); }
  Variable forward(const Variable& x) override { return dropout(x, p, is_training()); }

  real p;
};

}  // namespace seqgrad::nn
