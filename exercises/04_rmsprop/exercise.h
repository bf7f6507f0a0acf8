// exercises/04_rmsprop - a new optimizer (chapter 4).
//
// RMSprop (Hinton's lecture notes; PyTorch's torch.optim.RMSprop without momentum or
// centering) divides each step by a running root-mean-square of the gradient:
//   v = alpha * v + (1 - alpha) * g^2          (v starts at 0; one buffer per parameter)
//   p = p - lr * g / (sqrt(v) + eps)
// Parameters without a gradient (grad() undefined) are skipped. Read nn/optim/optim.cpp: SGD and
// Adam show the loop, and slot(buffers, i) gives parameter i's buffer, created as zeros.
#pragma once

#include <vector>

#include "seqgrad.h"

class RMSprop : public seqgrad::nn::Optimizer {
 public:
  RMSprop(std::vector<seqgrad::Variable> params, seqgrad::real lr = seqgrad::real(0.01),
          seqgrad::real alpha = seqgrad::real(0.99), seqgrad::real eps = seqgrad::real(1e-8));
  void step() override;

  seqgrad::real alpha, eps;

 private:
  // Saved with the optimizer's state_dict() as "square_avg.0", "square_avg.1", ...
  std::vector<std::pair<std::string, std::vector<seqgrad::Tensor>*>> slots() override {
    return {{"square_avg", &square_avg_}};
  }
  std::vector<seqgrad::Tensor> square_avg_;
};
