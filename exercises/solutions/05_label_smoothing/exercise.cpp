// exercises/solutions/05_label_smoothing/exercise.cpp - reference solution of exercise 05.
#include "exercise.h"

using namespace seqgrad;

Variable smoothed_cross_entropy(const Variable& logits, const Tensor& targets, real eps, int64_t ignore_index) {
  check(logits.dim() == 2 && targets.dim() == 1 && targets.size(0) == logits.size(0),
        "smoothed_cross_entropy: expected logits (N, V) and targets (N), got ", logits.shape(), " and ",
        targets.shape());
  const int64_t N = logits.size(0), V = logits.size(1);
  // The target distribution q (N, V), all zeros on ignored rows, and how many rows count.
  Tensor q = zeros({N, V});
  int64_t counted = 0;
  for (int64_t n = 0; n < N; ++n) {
    const int64_t t = static_cast<int64_t>(targets.data()[n]);
    if (t == ignore_index) continue;
    check(t >= 0 && t < V, "smoothed_cross_entropy: expected targets in [0, ", V, "), got ", t);
    ++counted;
    for (int64_t v = 0; v < V; ++v) q.at({n, v}) = eps / static_cast<real>(V);
    q.at({n, t}) += 1 - eps;
  }
  const Variable per_row = -sum(Variable(q) * log_softmax(logits, -1), -1);  // (N), 0 on ignored rows
  // The mean over the rows that count; with none, the sum of zeros (still a graph, never 0/0).
  return sum(per_row) / static_cast<real>(std::max<int64_t>(counted, 1));
}
// The smallest loss for eps = 0.1, V = 4: q = (0.925, 0.025, 0.025, 0.025) on the right class.
// Cross-entropy -sum q log p is smallest at p = q (Gibbs' inequality), where it equals the
// entropy of q: -(0.925 ln 0.925 + 3 * 0.025 ln 0.025) = 0.349 nats. The logits that give
// p = q differ by ln(0.925 / 0.025) = ln 37 = 3.61 between the right class and the others.
