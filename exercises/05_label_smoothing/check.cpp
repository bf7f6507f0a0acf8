// exercises/05_label_smoothing/check.cpp - make -C exercises check EX=05
#include <doctest/doctest.h>

#include "exercise.h"

using namespace seqgrad;

namespace {
// Value and gradient of both losses on the same logits.
void compare(const Tensor& logits, const Tensor& targets, real eps, int64_t ignore) {
  const Variable a(logits.clone(), true), b(logits.clone(), true);
  const Variable mine = smoothed_cross_entropy(a, targets, eps, ignore);
  const Variable ref = cross_entropy(b, targets, CrossEntropyOptions().with_label_smoothing(eps).with_ignore_index(ignore));
  REQUIRE(mine.numel() == 1);
  CHECK(mine.item() == doctest::Approx(ref.item()).epsilon(1e-4));
  mine.backward();
  ref.backward();
  REQUIRE(a.grad().defined());
  CHECK(max(abs(a.grad() - b.grad())).item() < 1e-5);
}
}  // namespace

TEST_CASE("05: equals the fused cross_entropy, with and without smoothing") {
  manual_seed(5);
  const Tensor logits = randn({6, 7}) * real(3);
  const Tensor targets = from_vector({0, 3, 6, 2, 2, 5});
  for (real eps : {real(0), real(0.1), real(0.5)}) {
    CAPTURE(eps);
    compare(logits, targets, eps, -100);
  }
}

TEST_CASE("05: ignored rows count neither in the loss nor in the mean") {
  manual_seed(6);
  const Tensor logits = randn({5, 4});
  compare(logits, from_vector({1, 0, 3, 0, 2}), real(0.1), /*ignore_index=*/0);
  // Every row ignored: loss 0 and zero gradient, never NaN.
  const Variable x(randn({2, 4}), true);
  const Variable loss = smoothed_cross_entropy(x, from_vector({0, 0}), real(0.1), 0);
  CHECK(loss.item() == 0);
}

TEST_CASE("05: smoothing keeps the loss above zero for a confident right answer") {
  const Variable x(from_vector({20, 0, 0, 0}, {1, 4}), true);
  CHECK(smoothed_cross_entropy(x, from_vector({0}), 0).item() < 1e-6);
  CHECK(smoothed_cross_entropy(x, from_vector({0}), real(0.1)).item() > 0.1);
}
