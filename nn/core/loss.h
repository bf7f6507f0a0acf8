// nn/core/loss.h - loss functions: cross-entropy, negative log-likelihood, mean squared error.
//
// cross_entropy is the fused autograd op (autograd/ops.h): log-softmax + NLL in one kernel,
// with ignore_index and label smoothing. nll_loss takes log-probabilities instead of logits
// and is composed from gather and masking, so you can see the two agree. Padding positions
// (targets == ignore_index) contribute nothing to the loss *or* to the count it is averaged
// over. Class axis last: logits (..., V) with targets (...).
#pragma once

#include "autograd/ops.h"

namespace seqgrad::nn {

using seqgrad::cross_entropy;
using seqgrad::CrossEntropyOptions;
using seqgrad::Reduction;

// -log_probs[..., target], reduced; log_probs (..., V), targets (...).
Variable nll_loss(const Variable& log_probs, const Tensor& targets, int64_t ignore_index = -100,
                  Reduction reduction = Reduction::Mean);

// (input - target)^2, reduced. The shapes must match exactly (no silent broadcasting).
Variable mse_loss(const Variable& input, const Variable& target, Reduction reduction = Reduction::Mean);

}  // namespace seqgrad::nn
