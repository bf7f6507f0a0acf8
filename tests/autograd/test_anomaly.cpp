// tests/autograd/test_anomaly.cpp - anomaly mode: the first NaN/Inf in a forward value or a
// gradient throws, naming the op, the shapes, the element and where the op sits in the graph.
#include <cmath>
#include <thread>

#include "tests/test_util.h"

using namespace seqgrad;

TEST_CASE("anomaly mode is off by default: a NaN passes silently") {
  CHECK_FALSE(anomaly_enabled());
  Variable x(from_vector({1, -1}), true);
  Variable y = sum(log(x));
  CHECK(std::isnan(y.item()));
  y.backward();  // no throw
}

TEST_CASE("detect_anomaly: a forward op that makes NaN or Inf names itself and its inputs") {
  DetectAnomalyGuard anomaly;
  Variable x(from_vector({1, -1, 2}), true);
  x.set_name("x");
  CHECK_THROWS_WITH_AS(log(x),
                       "detect_anomaly: forward of 'log' produced NaN at [1] in its output, shape [3]; its inputs: "
                       "leaf 'x' [3]",
                       std::runtime_error);
  Variable w(from_vector({0.5, 1, 2, 3}, {2, 2}), true);
  Variable t = tanh(w);
  CHECK_THROWS_WITH_AS(t / Variable(from_vector({1, 0}, {2, 1})),
                       "detect_anomaly: forward of 'div' produced Inf at [1, 0] in its output, shape [2, 2]; its "
                       "inputs: tanh [2, 2] <- (leaf [2, 2]), leaf [2, 1]",
                       std::runtime_error);
  // Also without recording (inference under NoGradGuard), and for -Inf.
  NoGradGuard no_grad;
  CHECK_THROWS_WITH_AS(log(Variable(zeros({2}))),
                       "detect_anomaly: forward of 'log' produced -Inf at [0] in its output, shape [2]; its inputs: "
                       "leaf [2]",
                       std::runtime_error);
}

TEST_CASE("detect_anomaly: the -inf of a mask is meant and passes; a NaN made from it is not") {
  DetectAnomalyGuard anomaly;
  Variable scores(from_vector({1, 2, 3, 4}, {2, 2}), true);
  const Tensor mask = from_vector({0, 1, 0, 0}, {2, 2});
  Variable masked = masked_fill(scores, mask, -INFINITY);  // the infinity is asked for
  CHECK_THROWS_WITH_AS(masked - masked,
                       "detect_anomaly: forward of 'sub' produced NaN at [0, 1] in its output, shape [2, 2]; its "
                       "inputs: masked_fill [2, 2] <- (leaf [2, 2]), masked_fill [2, 2] <- (leaf [2, 2])",
                       std::runtime_error);
  Variable shifted = masked + Variable(scalar(1));  // carried along
  Variable weights = softmax(shifted, -1);          // finite again
  sum(weights * Variable(from_vector({1, 2}))).backward();
  CHECK(std::isfinite(scores.grad().data()[0]));
}

TEST_CASE("detect_anomaly: a backward that makes NaN or Inf names the op and its path from the output") {
  DetectAnomalyGuard anomaly;
  Variable x(from_vector({0, 1, 4}), true);  // sqrt(0) = 0 is fine; its slope 1 / (2 sqrt(0)) is not
  x.set_name("x");
  Variable loss = sum(sqrt(x) * Variable(full({3}, 2)));
  CHECK_THROWS_WITH_AS(loss.backward(),
                       "detect_anomaly: backward of 'sqrt' produced Inf at [0] in the gradient for input 0, shape [3]; "
                       "its inputs: leaf 'x' [3]; path from the output: sum [] <- mul [3] <- sqrt [3]",
                       std::runtime_error);

  // A long chain keeps the first and last four links of the path.
  Variable y = sqrt(x);
  for (int i = 0; i < 20; ++i) y = tanh(y);
  CHECK_THROWS_WITH_AS(mean(y).backward(),
                       "detect_anomaly: backward of 'sqrt' produced Inf at [0] in the gradient for input 0, shape [3]; "
                       "its inputs: leaf 'x' [3]; path from the output: mean [] <- tanh [3] <- tanh [3] <- tanh [3] "
                       "<- ... (14 more) <- tanh [3] <- tanh [3] <- tanh [3] <- sqrt [3]",
                       std::runtime_error);
}

TEST_CASE("DetectAnomalyGuard restores the previous mode, and the mode is per thread") {
  {
    DetectAnomalyGuard on;
    CHECK(anomaly_enabled());
    {
      DetectAnomalyGuard off(false);
      CHECK_FALSE(anomaly_enabled());
      CHECK(std::isnan(log(Variable(from_vector({-1}))).item()));
    }
    CHECK(anomaly_enabled());
    bool other_thread = true;
    std::thread([&] { other_thread = anomaly_enabled(); }).join();
    CHECK_FALSE(other_thread);
  }
  CHECK_FALSE(anomaly_enabled());
}

TEST_CASE("detect_anomaly: a finite model trains exactly as without it") {
  auto train = [](bool detect) {
    DetectAnomalyGuard anomaly(detect);
    manual_seed(3);
    Variable w(randn({4, 3}), true), x(randn({5, 4}));
    std::vector<real> losses;
    for (int step = 0; step < 5; ++step) {
      Variable loss = mean(pow(tanh(matmul(x, w)) - real(0.5), 2));
      w.zero_grad();
      loss.backward();
      w.value().add_(w.grad(), real(-0.1));
      losses.push_back(loss.item());
    }
    return losses;
  };
  CHECK(train(true) == train(false));
}
