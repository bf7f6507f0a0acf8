// tests/nn/test_loss.cpp - losses agree with each other and with hand values; padding counts
// for nothing, neither in the sum nor in the mean.
#include "nn/core/loss.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

TEST_CASE("nll_loss(log_softmax(x)) equals cross_entropy(x)") {
  manual_seed(1);
  const Tensor x = randn({3, 4, 7});
  const Tensor t = from_vector({1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5}, {3, 4});
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    const Tensor a = nn::nll_loss(log_softmax(Variable(x), -1), t, -100, r).value();
    const Tensor b = nn::cross_entropy(Variable(x), t, CrossEntropyOptions().with_reduction(r)).value();
    CHECK(allclose(a, b, 1e-5, 1e-5));
  }
}

TEST_CASE("padding contributes nothing to the loss or to its mean") {
  manual_seed(2);
  // Batch of 2 sequences of length 4 over 5 classes; the second has 2 padding positions (id 0).
  const Tensor logits = randn({2, 4, 5});
  const Tensor padded = from_vector({3, 1, 4, 2, 2, 3, 0, 0}, {2, 4});
  const real padded_loss = nn::cross_entropy(Variable(logits), padded, CrossEntropyOptions().with_ignore_index(0)).item();
  // The same 6 real positions, without any padding at all.
  const Tensor real_logits = slice(logits.reshape({8, 5}), 0, 0, 6);  // rows 0-5 are the real positions
  const Tensor real_targets = from_vector({3, 1, 4, 2, 2, 3});
  const real unpadded_loss = nn::cross_entropy(Variable(real_logits), real_targets).item();
  CHECK(padded_loss == doctest::Approx(unpadded_loss).epsilon(1e-6));
  // Same for nll_loss, and for label smoothing.
  const real nll = nn::nll_loss(log_softmax(Variable(logits), -1), padded, 0).item();
  CHECK(nll == doctest::Approx(unpadded_loss).epsilon(1e-6));
  const CrossEntropyOptions smooth = CrossEntropyOptions().with_ignore_index(0).with_label_smoothing(real(0.1));
  CHECK(nn::cross_entropy(Variable(logits), padded, smooth).item() ==
        doctest::Approx(nn::cross_entropy(Variable(real_logits), real_targets, CrossEntropyOptions().with_label_smoothing(real(0.1))).item())
            .epsilon(1e-6));
  // Every target ignored: 0, not NaN.
  CHECK(nn::cross_entropy(Variable(logits), zeros({2, 4}), CrossEntropyOptions().with_ignore_index(0)).item() == 0);
}

TEST_CASE("mse_loss values and shape check") {
  const Variable a(from_vector({1, 2, 3})), b(from_vector({1, 0, 0}));
  CHECK(nn::mse_loss(a, b).item() == doctest::Approx(13.0 / 3));
  CHECK(nn::mse_loss(a, b, Reduction::Sum).item() == 13);
  CHECK(nn::mse_loss(a, b, Reduction::None).value().to_vector() == std::vector<real>{0, 4, 9});
  CHECK_THROWS_WITH_AS(nn::mse_loss(a, Variable(zeros({3, 1}))),
                       "mse_loss: expected input and target of the same shape, got [3] and [3, 1]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::cross_entropy(Variable(zeros({2, 3, 5})), zeros({2, 4})),
                       "cross_entropy: expected targets of shape [2, 3] for logits of shape [2, 3, 5] (class axis last), "
                       "got [2, 4]",
                       std::invalid_argument);
}
