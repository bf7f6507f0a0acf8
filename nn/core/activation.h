// nn/core/activation.h - activation functions as modules, for use inside a Sequential.
//
// Each is a thin wrapper over the autograd op of the same name (autograd/ops.h), where the
// formula and its derivative live. They have no parameters.
#pragma once

#include "nn/core/module.h"

namespace seqgrad::nn {

class ReLU : public Module {
 public:
  std::string name() const override { return "ReLU"; }
  Variable forward(const Variable& x) override { return relu(x); }
};

class Tanh : public Module {
 public:
  std::string name() const override { return "Tanh"; }
  Variable forward(const Variable& x) override { return tanh(x); }
};

class Sigmoid : public Module {
 public:
  std::string name() const override { return "Sigmoid"; }
  Variable forward(const Variable& x) override { return sigmoid(x); }
};

class GELU : public Module {
 public:
  std::string name() const override { return "GELU"; }
  Variable forward(const Variable& x) override { return gelu(x); }
};

}  // namespace seqgrad::nn
