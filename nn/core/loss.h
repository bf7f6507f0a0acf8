// nn/core/loss.h - loss functions: cross-entropy, negative log-likelihood, mean squared error.
//
// cross_entropy is the fused autograd op (autograd/ops.h): log-softmax + NLL in one kernel,
// with ignore_index and label smoothing. nll_loss takes log-probabilities instead of logits
// and is composed from gather and masking, so you can see the two agree. Padding positions
// (targets == ignore_index) contribute nothing to the loss *or* to the count it is averaged
// over. Class axis last: logits (..., V) with targets (...).
#pragma once

#include "autograd/ops.h"
#include "nn/core/linear.h"

namespace seqgrad::nn {

using seqgrad::cross_entropy;
using seqgrad::CrossEntropyOptions;
using seqgrad::Reduction;

// -log_probs[..., target], reduced; log_probs (..., V), targets (...).
Variable nll_loss(const Variable& log_probs, const Tensor& targets, int64_t ignore_index = -100,
                  Reduction reduction = Reduction::Mean);

// A sequence model's training loss, cross_entropy(projection(features), targets), with the
// projection to the vocabulary run only at the rows whose target counts. features (B, T, F),
// targets (B, T): a padded position's row of V logits would cost the model's largest product
// and then be ignored by the loss. The same loss and gradients as the plain form (they differ
// by the order of the sums); with Reduction::None, which keeps every position, it is the plain form.
Variable projected_cross_entropy(const Variable& features, Linear& projection, const Tensor& targets,
                                 const CrossEntropyOptions& options);

// (input - target)^2, reduced. The shapes must match exactly (no silent broadcasting).
Variable mse_loss(const Variable& input, const Variable& target, Reduction reduction = Reduction::Mean);

}  // namespace seqgrad::nn
