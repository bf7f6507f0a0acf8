// tensor/softmax.h - softmax, log-softmax and the fused cross-entropy, forward and backward.
//
// All are numerically stable: they subtract the row maximum before exponentiating, so inputs
// of magnitude 1000 give exact results, not inf/NaN. A row whose entries are all -inf (every
// position masked) has no distribution to normalise: softmax returns zeros there, and zero
// gradients, instead of the NaN that 0/0 would give. The *_backward kernels sit beside their
// forwards; autograd/ attaches them to the graph. Read next: matmul.h.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace seqgrad {

// ------------------------------------------------------------------------------------------------
// softmax: y_i = exp(x_i - m) / sum_j exp(x_j - m), m = max_j x_j, along `axis`.
Tensor softmax(const Tensor& x, int64_t axis);
// dx_i = scale * y_i (dy_i - sum_j dy_j y_j), where y = softmax(scale * x); scale is 1 for softmax
Tensor softmax_backward(const Tensor& y, const Tensor& dy, int64_t axis, real scale = 1);

// ------------------------------------------------------------------------------------------------
// Attention's weights in one kernel: along the last axis,
//   y = softmax(masked_fill(x * scale, mask, -inf))
// mask (broadcastable to x's shape, e.g. (T, S) or (B, 1, 1, S) under (B, H, T, S) scores; or
// undefined for no mask) is nonzero at the places that get weight 0. Equal to that composition
// bit for bit, without its two intermediate tensors. Backward: softmax_backward(y, dy, -1, scale);
// masked places have y = 0, so they get no gradient, as masked_fill gives none.
Tensor scaled_masked_softmax(const Tensor& x, const Tensor& mask, real scale);

// ------------------------------------------------------------------------------------------------
// log_softmax: y_i = x_i - m - log sum_j exp(x_j - m)   (-inf for every entry of an all -inf row)
Tensor log_softmax(const Tensor& x, int64_t axis);
// dx_i = dy_i - exp(y_i) sum_j dy_j
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy, int64_t axis);

// ------------------------------------------------------------------------------------------------
// Cross-entropy of logits (N, V) against class indices targets (N), one loss per row:
//   loss_n = -[(1 - eps) log p_n[t_n] + (eps / V) sum_v log p_n[v]],  p_n = softmax(logits_n)
// with label smoothing eps (0 = plain cross-entropy). Rows whose target equals ignore_index get
// loss 0 and no gradient. The forward saves lse_n = log sum_v exp(logits_n[v]) so the backward
// can rebuild p without storing the (N, V) probabilities (0 for an ignored row, which it skips).
struct CrossEntropyForward {
  Tensor loss;  // (N)
  Tensor lse;   // (N)
};
CrossEntropyForward cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                          int64_t ignore_index, real label_smoothing);
// dlogits_n = dloss_n * (p_n - q_n),  q_n = (1 - eps) onehot(t_n) + eps / V
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& lse,
                              const Tensor& dloss, int64_t ignore_index, real label_smoothing);

}  // namespace seqgrad
