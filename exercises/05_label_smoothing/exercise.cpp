// exercises/05_label_smoothing/exercise.cpp - your solution goes here.
#include "exercise.h"

using namespace seqgrad;

Variable smoothed_cross_entropy(const Variable& logits, const Tensor& targets, real eps, int64_t ignore_index) {
  // TODO(exercise 05):
  //   1. q (N, V): eps / V everywhere, plus (1 - eps) at [n, t_n]; all zeros for ignored rows.
  //   2. per-row loss = -sum(q * log_softmax(logits, -1), -1)            (N)
  //   3. the mean over the rows that count (0 if none does).
  (void)targets;
  (void)eps;
  (void)ignore_index;
  return sum(logits) * real(0);
}
