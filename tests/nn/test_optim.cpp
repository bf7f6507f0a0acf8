// tests/nn/test_optim.cpp - each optimizer against steps computed by hand, state save/restore,
// gradient clipping, and the learning-rate schedules' values at known steps.
#include <cmath>
#include <cstdio>

#include "io/safetensors.h"
#include "nn/core/linear.h"
#include "nn/optim/optim.h"
#include "nn/optim/schedule.h"
#include "tests/test_util.h"

using namespace seqgrad;

namespace {
// One scalar parameter p = 1; each step sets its gradient to the next value of `grads`.
std::vector<double> run(nn::Optimizer& opt, Variable& p, const std::vector<real>& grads) {
  std::vector<double> values;
  for (real g : grads) {
    p.set_grad(scalar(g));
    opt.step();
    values.push_back(p.item());
  }
  return values;
}
}  // namespace

TEST_CASE("SGD: plain, momentum with weight decay, Nesterov") {
  {
    Variable p(scalar(1), true);
    nn::SGD opt({p}, nn::SGDOptions(real(0.1)));
    CHECK(run(opt, p, {0.5})[0] == doctest::Approx(0.95));
  }
  {
    // step 1: g = 0.5 + 0.1 * 1 = 0.6, buf = 0.6, p = 1 - 0.06 = 0.94
    // step 2: g = 0.5 + 0.1 * 0.94 = 0.594, buf = 0.9 * 0.6 + 0.594 = 1.134, p = 0.94 - 0.1134
    Variable p(scalar(1), true);
    nn::SGD opt({p}, nn::SGDOptions(real(0.1)).with_momentum(real(0.9)).with_weight_decay(real(0.1)));
    const std::vector<double> v = run(opt, p, {0.5, 0.5});
    CHECK(v[0] == doctest::Approx(0.94));
    CHECK(v[1] == doctest::Approx(0.8266));
  }
  {
    // step 1: buf = 0.5, g = 0.5 + 0.9 * 0.5 = 0.95, p = 0.905
    // step 2: buf = 0.45 + 0.5 = 0.95, g = 0.5 + 0.855 = 1.355, p = 0.7695
    Variable p(scalar(1), true);
    nn::SGD opt({p}, nn::SGDOptions(real(0.1)).with_momentum(real(0.9)).with_nesterov(true));
    const std::vector<double> v = run(opt, p, {0.5, 0.5});
    CHECK(v[0] == doctest::Approx(0.905));
    CHECK(v[1] == doctest::Approx(0.7695));
  }
}

TEST_CASE("Adam and AdamW against hand-computed steps") {
  // Adam, lr 0.1, gradients 0.5 then -1 (python: m = b1 m + (1-b1) g, ..., bias-corrected)
  Variable p(scalar(1), true);
  nn::Adam adam({p}, nn::AdamOptions(real(0.1)));
  std::vector<double> v = run(adam, p, {0.5, -1});
  CHECK(v[0] == doctest::Approx(0.900000002));
  CHECK(v[1] == doctest::Approx(0.9366103542405654));
  // AdamW with weight_decay 0.1: p first shrinks by lr * wd * p, then the Adam step.
  Variable q(scalar(1), true);
  nn::AdamW adamw({q}, nn::AdamOptions(real(0.1)).with_weight_decay(real(0.1)));
  v = run(adamw, q, {0.5, -1});
  CHECK(v[0] == doctest::Approx(0.890000002));
  CHECK(v[1] == doctest::Approx(0.9177103542205653));
}

TEST_CASE("parameters without a gradient are left alone") {
  Variable a(scalar(1), true), b(scalar(1), true);
  nn::Adam opt({a, b}, nn::AdamOptions(real(0.1)));
  a.set_grad(scalar(1));
  opt.step();
  CHECK(a.item() < 1);
  CHECK(b.item() == 1);
}

TEST_CASE("optimizer state round-trips: a restored Adam continues exactly") {
  manual_seed(1);
  nn::Linear model(3, 2);
  nn::Adam opt(model.parameters(), nn::AdamOptions(real(0.01)));
  const Tensor x = randn({4, 3});
  auto train_step = [&](nn::Optimizer& o) {
    o.zero_grad();
    sum(pow(model.forward(Variable(x)), 2)).backward();
    o.step();
  };
  for (int i = 0; i < 3; ++i) train_step(opt);
  const nn::NamedTensors state = opt.state_dict();
  CHECK(state.size() == 1 + 2 * 2);  // step, exp_avg.0/1, exp_avg_sq.0/1
  const std::vector<Tensor> saved_params{model.weight.value().clone(), model.bias.value().clone()};

  train_step(opt);
  const std::vector<real> expected = model.weight.value().to_vector();

  model.weight.value().copy_(saved_params[0]);
  model.bias.value().copy_(saved_params[1]);
  nn::Adam restored(model.parameters(), nn::AdamOptions(real(0.01)));
  restored.load_state_dict(state);
  CHECK(restored.steps_taken() == 3);
  train_step(restored);
  CHECK(model.weight.value().to_vector() == expected);

  CHECK_THROWS_WITH_AS(restored.load_state_dict({{"step", scalar(1)}, {"exp_avg.7", zeros({1})}}),
                       "Optimizer: state entry 'exp_avg.7' names parameter 7 but there are 2 parameters",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(restored.load_state_dict({{"step", scalar(1)}, {"velocity.0", zeros({2, 3})}}),
                       "Optimizer: unexpected state entry 'velocity.0'", std::invalid_argument);
}

TEST_CASE("clip_grad_norm scales all gradients together") {
  Variable a(zeros({1}), true), b(zeros({1}), true);
  a.set_grad(from_vector({3}));
  b.set_grad(from_vector({4}));
  CHECK(nn::clip_grad_norm({a, b}, 1) == doctest::Approx(5));
  CHECK(a.grad().item() == doctest::Approx(0.6).epsilon(1e-5));
  CHECK(b.grad().item() == doctest::Approx(0.8).epsilon(1e-5));
  CHECK(nn::clip_grad_norm({a, b}, 10) == doctest::Approx(1).epsilon(1e-5));  // below the limit: unchanged
  CHECK(a.grad().item() == doctest::Approx(0.6).epsilon(1e-5));
}

TEST_CASE("learning-rate schedules at known steps") {
  Variable p(scalar(1), true);
  nn::SGD opt({p}, nn::SGDOptions(1));
  auto values = [](const nn::LRScheduler& s, int n) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(s.lr_at(i));
    return v;
  };
  {
    nn::StepLR s(opt, 3, real(0.5));
    const std::vector<double> v = values(s, 7);
    CHECK(v == std::vector<double>{1, 1, 1, 0.5, 0.5, 0.5, 0.25});
  }
  {
    nn::CosineAnnealingLR s(opt, 4);
    const std::vector<double> v = values(s, 6);
    CHECK(v[0] == doctest::Approx(1));
    CHECK(v[1] == doctest::Approx(0.8535533905932737));
    CHECK(v[2] == doctest::Approx(0.5));
    CHECK(v[3] == doctest::Approx(0.14644660940672627));
    CHECK(v[4] == 0);
    CHECK(v[5] == 0);
  }
  {
    // A ramp of 2 steps, then CosineAnnealingLR's half cosine over the other 4.
    nn::WarmupCosineLR s(opt, 2, 6);
    const std::vector<double> v = values(s, 8);
    CHECK(v[0] == doctest::Approx(0.5));
    CHECK(v[1] == doctest::Approx(1));
    CHECK(v[2] == doctest::Approx(1));
    CHECK(v[3] == doctest::Approx(0.8535533905932737));
    CHECK(v[4] == doctest::Approx(0.5));
    CHECK(v[5] == doctest::Approx(0.14644660940672627));
    CHECK(v[6] == 0);
    CHECK(v[7] == 0);
    // No warm-up: CosineAnnealingLR to the bit; a ramp longer than the run: the ramp, then eta_min.
    // (A schedule takes its base rate from the optimizer and then sets it: reset it for each.)
    opt.set_lr(1);
    nn::WarmupCosineLR none(opt, 0, 5, real(0.1));
    opt.set_lr(1);
    nn::CosineAnnealingLR cosine(opt, 5, real(0.1));
    CHECK(values(none, 7) == values(cosine, 7));
    opt.set_lr(1);
    CHECK(values(nn::WarmupCosineLR(opt, 4, 2), 3) == std::vector<double>{0.25, 0.5, 0});
    opt.set_lr(1);
  }
  {
    nn::LinearWarmupLR s(opt, 4);
    CHECK(values(s, 6) == std::vector<double>{0.25, 0.5, 0.75, 1, 1, 1});
    // Resuming jumps to a step: the rate of that step at once, for any count.
    nn::LinearWarmupLR jumped(opt, 4);
    jumped.set_step(2);
    CHECK(jumped.current_step() == 2);
    CHECK(opt.lr() == jumped.lr_at(2));
    CHECK(jumped.lr_at(2) == real(0.75) * jumped.base_lr());
    jumped.set_step(int64_t(1) << 60);  // a replay loop would never end
    CHECK(opt.lr() == jumped.base_lr());
    CHECK_THROWS_WITH_AS(jumped.set_step(-1), "LRScheduler::set_step: expected a step >= 0, got -1", std::invalid_argument);
  }
  {
    nn::NoamLR s(opt, 512, 4000);
    CHECK(s.lr_at(0) == doctest::Approx(1.746928107421711e-07));
    CHECK(s.lr_at(3999) == doctest::Approx(0.0006987712429686843));  // the peak, at s = warmup
    CHECK(s.lr_at(3998) < s.lr_at(3999));
    CHECK(s.lr_at(4000) < s.lr_at(3999));
    // step() moves the optimizer's learning rate along the schedule
    CHECK(opt.lr() == doctest::Approx(s.lr_at(0)));
    s.step();
    CHECK(opt.lr() == doctest::Approx(s.lr_at(1)));
  }
}

TEST_CASE("optimizer and schedule errors") {
  Variable frozen(scalar(1), false);
  CHECK_THROWS_WITH_AS(nn::SGD({frozen}, nn::SGDOptions()),
                       "Optimizer: parameter 0 does not require grad, so it can never be updated", std::invalid_argument);
  Variable p(scalar(1), true);
  CHECK_THROWS_WITH_AS(nn::Adam({p}, nn::AdamOptions().with_betas(real(0.9), real(1))),
                       "Adam: expected betas in [0, 1), got (0.9, 1)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::SGD({p}, nn::SGDOptions(-1)), "Optimizer: expected a non-negative learning rate, got -1",
                       std::invalid_argument);
  nn::SGD opt({p}, nn::SGDOptions());
  CHECK_THROWS_WITH_AS(nn::NoamLR(opt, 512, 0), "NoamLR: expected a positive number of warm-up steps, got 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::WarmupCosineLR(opt, -1, 10), "WarmupCosineLR: expected warm-up steps >= 0, got -1",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::WarmupCosineLR(opt, 10, 0), "WarmupCosineLR: expected a positive t_max, got 0",
                       std::invalid_argument);
}

TEST_CASE("optimizer state survives a round trip through a safetensors file") {
  manual_seed(2);
  nn::Linear model(2, 2);
  nn::SGD opt(model.parameters(), nn::SGDOptions(real(0.1)).with_momentum(real(0.9)));
  sum(model.forward(Variable(randn({3, 2})))).backward();
  opt.step();
  const std::string path = "build/test_optim_state.safetensors";
  io::write_safetensors(path, opt.state_dict());
  nn::SGD restored(model.parameters(), nn::SGDOptions(real(0.1)).with_momentum(real(0.9)));
  restored.load_state_dict(io::read_safetensors(path).tensors);
  const nn::NamedTensors a = opt.state_dict(), b = restored.state_dict();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].first == b[i].first);
    CHECK(a[i].second.to_vector() == b[i].second.to_vector());
  }
  std::remove(path.c_str());
}
