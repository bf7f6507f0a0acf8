// nn/core/loss.cpp - nll_loss and mse_loss, composed from autograd ops.
#include "nn/core/loss.h"

#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/reduce.h"

namespace seqgrad::nn {

Variable nll_loss(const Variable& log_probs, const Tensor& targets, int64_t ignore_index, Reduction reduction) {
  check(log_probs.dim() >= 1, "nll_loss: expected log-probabilities of shape (..., V), got ", log_probs.shape());
  const Shape lead(log_probs.shape().begin(), log_probs.shape().end() - 1);
  check(targets.shape() == lead, "nll_loss: expected targets of shape ", lead, " for log-probabilities of shape ",
        log_probs.shape(), " (class axis last), got ", targets.shape());
  // keep = 1 for real targets, 0 for ignored ones; ignored targets gather class 0 (any valid
  // class would do: its value is multiplied by 0).
  const Tensor keep = ne(targets, scalar(static_cast<real>(ignore_index)));          // (...)
  const Tensor safe = where(keep, targets, scalar(0));                                 // (...)
  Shape index_shape = lead;
  index_shape.push_back(1);
  Variable picked = reshape(gather(log_probs, -1, safe.reshape(index_shape)), lead);  // (...)
  Variable losses = -(picked * Variable(keep));
  switch (reduction) {
    case Reduction::None: return losses;
    case Reduction::Sum: return sum(losses);
    case Reduction::Mean: {
      const real count = sum(keep).item();
      return count > 0 ? sum(losses) / count : sum(losses) * real(0);
    }
  }
  return losses;
}

Variable mse_loss(const Variable& input, const Variable& target, Reduction reduction) {
  check(input.shape() == target.shape(), "mse_loss: expected input and target of the same shape, got ",
        input.shape(), " and ", target.shape());
  Variable diff = input - target;
  Variable sq = diff * diff;
  switch (reduction) {
    case Reduction::None: return sq;
    case Reduction::Sum: return sum(sq);
    case Reduction::Mean: return mean(sq);
  }
  return sq;
}

}  // namespace seqgrad::nn
