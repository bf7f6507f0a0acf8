// exercises/05_label_smoothing - cross-entropy with label smoothing, composed (chapters 4 and 10).
//
// The fused nn::cross_entropy computes, per row n of logits (N, V) with target t_n,
//   loss_n = - sum_v q_n[v] log softmax(logits_n)[v],   q_n = (1 - eps) onehot(t_n) + eps / V
// and averages over the rows whose target is not ignore_index (rows with target ==
// ignore_index count neither in the sum nor in the mean; if every row is ignored the loss is 0).
// Compose the same thing from autograd ops (log_softmax, mul, sum, ...), so autograd gives the
// backward. Build q and the row mask as plain Tensors: targets are data, not Variables.
#pragma once

#include <cstdint>

#include "seqgrad.h"

// logits (N, V), targets (N) holding class ids -> a scalar.
seqgrad::Variable smoothed_cross_entropy(const seqgrad::Variable& logits, const seqgrad::Tensor& targets,
                                         seqgrad::real eps, int64_t ignore_index = -100);
