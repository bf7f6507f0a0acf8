// tests/nn/test_learns_mlp.cpp - "it learns": an MLP built from nn layers and trained with
// Adam separates two spirals that no linear model can.
#include "data/toy2d.h"
#include "nn/core/activation.h"
#include "nn/core/linear.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "tests/test_util.h"

using namespace seqgrad;

namespace {
real accuracy(nn::Module& model, const data::Points2D& d) {
  NoGradGuard no_grad;
  return mean(eq(argmax(model.forward(Variable(d.x)).value(), -1), d.labels)).item();
}

real train(nn::Module& model, const data::Points2D& d, int steps) {
  nn::Adam opt(model.parameters(), nn::AdamOptions(real(0.02)));
  for (int step = 0; step < steps; ++step) {
    opt.zero_grad();
    nn::cross_entropy(model.forward(Variable(d.x)), d.labels).backward();
    opt.step();
  }
  return accuracy(model, d);
}
}  // namespace

// [docs:learns]
TEST_CASE("an MLP learns two spirals; a linear model cannot") {
  manual_seed(0);
  const data::Points2D d = data::make_spirals(100, 2, real(0.02), 3);
  nn::Sequential mlp({std::make_shared<nn::Linear>(2, 32), std::make_shared<nn::Tanh>(),
                      std::make_shared<nn::Linear>(32, 32), std::make_shared<nn::Tanh>(),
                      std::make_shared<nn::Linear>(32, 2)});
  nn::Sequential linear({std::make_shared<nn::Linear>(2, 2)});
  const real before = accuracy(mlp, d);
  const real mlp_acc = train(mlp, d, 600);
  const real linear_acc = train(linear, d, 600);
  INFO("accuracy before " << before << ", MLP " << mlp_acc << ", linear " << linear_acc);
  CHECK(mlp_acc >= real(0.97));
  CHECK(linear_acc < real(0.8));
}
// [docs:end]
