// nn/core/loss.cpp - nll_loss, the projected cross-entropy of sequence models, and mse_loss,
// composed from autograd ops.
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

// [docs:projected_cross_entropy]
Variable projected_cross_entropy(const Variable& features, Linear& projection, const Tensor& targets,
                                 const CrossEntropyOptions& options) {
  check(features.dim() == 3, "projected_cross_entropy: expected features of shape (B, T, F), got ", features.shape());
  check(targets.shape() == Shape{features.size(0), features.size(1)}, "projected_cross_entropy: expected targets of shape (",
        features.size(0), ", ", features.size(1), ") for features of shape ", features.shape(), ", got ", targets.shape());
  if (options.reduction == Reduction::None)  // every position's loss, padding too
    return cross_entropy(projection.forward(features), targets, options);
  const int64_t BT = targets.numel(), F = features.size(2);
  // The rows (b, t) whose target counts, in order: row b * T + t of features (B T, F).
  const std::vector<real> all = targets.to_vector();
  std::vector<real> rows, kept;
  for (int64_t i = 0; i < BT; ++i)
    if (static_cast<int64_t>(all[i]) != options.ignore_index) {
      rows.push_back(static_cast<real>(i));
      kept.push_back(all[i]);
    }
  if (rows.empty() || static_cast<int64_t>(rows.size()) == BT)  // no padding (or nothing counts): every row
    return cross_entropy(projection.forward(features), targets, options);
  const int64_t N = static_cast<int64_t>(rows.size());
  const Variable picked = index_select(reshape(features, {BT, F}), 0, from_vector(rows, {N}));  // (N, F)
  return cross_entropy(projection.forward(picked), from_vector(kept, {N}), options);          // (N, V) -> loss
}
// [docs:end]

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
