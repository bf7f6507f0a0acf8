// tests/nn/test_batchnorm.cpp - BatchNorm2d: PyTorch's numbers in training (output, gradients,
// running statistics after two steps) and in eval from committed fixtures, the fused op against
// its composed definition, names, buffers and checkpoints, train/eval, the same numbers on 1
// and 2 threads, errors, and "it learns": a small CNN (Conv2d, BatchNorm2d, ReLU, MaxPool2d,
// Linear) reads digits. Fixtures: tests/fixtures/make_pool_fixtures.py (run once with PyTorch).
#include <map>

#include "data/images.h"
#include "io/safetensors.h"
#include "nn/vision/batchnorm.h"
#include "nn/core/checkpoint.h"
#include "nn/vision/conv.h"
#include "nn/core/linear.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "nn/vision/pool.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

TEST_CASE("BatchNorm2d matches PyTorch: training (output, gradients, running statistics) and eval") {
  std::map<std::string, Tensor> f;
  for (auto& [name, t] : io::read_safetensors("tests/fixtures/pool_bn_torch.safetensors").tensors) f[name] = t;
  nn::BatchNorm2d bn(nn::BatchNorm2dOptions(3));
  bn.weight.value().copy_(f.at("bn.weight"));
  bn.bias.value().copy_(f.at("bn.bias"));
  // One step forward and backward of loss = sum(out * probe), compared with PyTorch's.
  auto step = [&](const std::string& prefix) {
    CAPTURE(prefix);
    bn.zero_grad();
    const Variable x(f.at(prefix + ".x"), /*requires_grad=*/true);
    const Variable out = bn.forward(x);
    CHECK(allclose(out.value(), f.at(prefix + ".out"), 1e-5));
    sum(out * Variable(f.at(prefix + ".probe"))).backward();
    CHECK(allclose(x.grad(), f.at(prefix + ".dx"), 1e-5));
    CHECK(allclose(bn.weight.grad(), f.at(prefix + ".dweight"), 1e-5));
    CHECK(allclose(bn.bias.grad(), f.at(prefix + ".dbias"), 1e-5));
  };
  // Training: step 1 with a backward, step 2 forward only, then the running statistics.
  step("bn.train");
  CHECK(allclose(bn.forward(Variable(f.at("bn.train2.x"))).value(), f.at("bn.train2.out"), 1e-5));
  CHECK(allclose(bn.running_mean, f.at("bn.running_mean"), 1e-6));
  CHECK(allclose(bn.running_var, f.at("bn.running_var"), 1e-6));  // updated with the unbiased variance
  CHECK(bn.num_batches_tracked.item() == f.at("bn.num_batches_tracked").item());
  // Eval: the running statistics, forward and backward.
  bn.eval();
  step("bn.eval");
  CHECK(bn.num_batches_tracked.item() == 2);  // eval batches are not counted
}

TEST_CASE("the fused batch_norm equals its composed definition, values and gradients") {
  manual_seed(1);
  const Tensor x = randn({4, 3, 5, 6}) * 3 + 1, w = randn({3}), b = randn({3}), probe = randn({4, 3, 5, 6});
  auto run = [&](bool fused) {
    const Variable xv(x, true), wv(w, true), bv(b, true);
    const Variable y = fused ? batch_norm(xv, Tensor(), Tensor(), wv, bv, true, real(0.1), real(1e-5))
                             : nn::batch_norm_composed(xv, wv, bv, real(1e-5));
    sum(y * Variable(probe)).backward();
    return std::vector<Tensor>{y.value(), xv.grad(), wv.grad(), bv.grad()};
  };
  const std::vector<Tensor> fused = run(true), composed = run(false);
  for (size_t i = 0; i < fused.size(); ++i) {
    CAPTURE(i);
    CHECK(allclose(fused[i], composed[i], 1e-4, 1e-4));
  }
}

TEST_CASE("BatchNorm2d: names, buffers, the printed form, checkpoints, options") {
  nn::BatchNorm2d bn(nn::BatchNorm2dOptions(4));
  CHECK(bn.to_string() == "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)");
  const auto params = bn.named_parameters();
  REQUIRE(params.size() == 2);
  CHECK(params[0].first == "weight");
  CHECK(params[1].first == "bias");
  CHECK(params[0].second.value().to_vector() == std::vector<real>(4, 1));
  CHECK(params[1].second.value().to_vector() == std::vector<real>(4, 0));
  const auto buffers = bn.named_buffers();
  REQUIRE(buffers.size() == 3);
  CHECK(buffers[0].first == "running_mean");
  CHECK(buffers[1].first == "running_var");
  CHECK(buffers[2].first == "num_batches_tracked");
  CHECK(bn.running_var.to_vector() == std::vector<real>(4, 1));
  CHECK(bn.num_batches_tracked.shape() == Shape{});  // 0-d, as PyTorch's
  CHECK(bn.forward(Variable(randn({2, 4, 3, 3}))).shape() == Shape{2, 4, 3, 3});

  // The running statistics and the count travel in checkpoints.
  testing::TempDir dir;
  nn::save(bn, dir.file("bn.safetensors"));
  nn::BatchNorm2d fresh(nn::BatchNorm2dOptions(4));
  nn::load(fresh, dir.file("bn.safetensors"));
  CHECK(fresh.running_mean.to_vector() == bn.running_mean.to_vector());
  CHECK(fresh.running_var.to_vector() == bn.running_var.to_vector());
  CHECK(fresh.num_batches_tracked.item() == 1);

  // Without affine: no parameters. Without running statistics: no buffers, and the batch's
  // statistics in eval too.
  nn::BatchNorm2d plain(nn::BatchNorm2dOptions(2).with_affine(false).with_track_running_stats(false).with_momentum(real(0.5)));
  CHECK(plain.named_parameters().empty());
  CHECK(plain.named_buffers().empty());
  CHECK(plain.to_string() == "BatchNorm2d(2, eps=1e-05, momentum=0.5, affine=false, track_running_stats=false)");
  plain.eval();
  const Variable y = plain.forward(Variable(randn({3, 2, 2, 2}) * 5 + 2));
  CHECK(std::abs(mean(y.value()).item()) < 1e-5);  // normalised with its own mean
}

TEST_CASE("BatchNorm2d in eval: running statistics, so an image's output does not depend on its batch") {
  manual_seed(2);
  nn::BatchNorm2d bn(nn::BatchNorm2dOptions(3).with_momentum(real(0.5)));
  for (int step = 0; step < 3; ++step) bn.forward(Variable(randn({8, 3, 4, 4}) * 2 + 3));
  CHECK(bn.num_batches_tracked.item() == 3);
  bn.eval();
  const std::vector<real> mean_before = bn.running_mean.to_vector();
  const Tensor batch = randn({4, 3, 4, 4});
  const Tensor alone = bn.forward(Variable(slice(batch, 0, 0, 1))).value();
  const Tensor together = bn.forward(Variable(batch)).value();
  CHECK(allclose(alone, slice(together, 0, 0, 1), 1e-6));
  CHECK(bn.running_mean.to_vector() == mean_before);  // eval leaves the statistics alone
  CHECK(bn.num_batches_tracked.item() == 3);
  // y = (x - running_mean) / sqrt(running_var + eps) with weight 1 and bias 0:
  const real expected = (batch.at({1, 2, 3, 0}) - bn.running_mean.data()[2]) / std::sqrt(bn.running_var.data()[2] + real(1e-5));
  CHECK(together.at({1, 2, 3, 0}) == doctest::Approx(expected).epsilon(1e-5));
}

TEST_CASE("BatchNorm2d: the same numbers on 1 and 2 threads") {
  manual_seed(3);
  const Tensor x = randn({6, 5, 17, 19}), probe = randn({6, 5, 17, 19});
  auto run = [&](int threads) {
    testing::ThreadCount count(threads);
    nn::BatchNorm2d bn(nn::BatchNorm2dOptions(5));
    const Variable xv(x, /*requires_grad=*/true);
    const Variable y = bn.forward(xv);
    sum(y * Variable(probe)).backward();
    std::vector<real> all = y.value().to_vector();
    for (const Tensor& t : {xv.grad(), bn.weight.grad(), bn.bias.grad(), bn.running_mean, bn.running_var})
      for (real v : t.to_vector()) all.push_back(v);
    return all;
  };
  CHECK(run(1) == run(2));  // bit for bit
}

TEST_CASE("batch norm errors say what was expected and what was found") {
  nn::BatchNorm2d bn(nn::BatchNorm2dOptions(3));
  CHECK_THROWS_WITH_AS(bn.forward(Variable(zeros({1, 3, 1, 1}))),
                       "batch_norm: expected more than 1 value per channel when training, got input of shape [1, 3, 1, 1]",
                       std::invalid_argument);
  CHECK(bn.num_batches_tracked.item() == 0);  // a failed batch is not counted
  CHECK_THROWS_WITH_AS(bn.forward(Variable(zeros({2, 3, 4}))), "BatchNorm2d: expected input of shape (N, 3, H, W), got [2, 3, 4]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(bn.forward(Variable(zeros({2, 4, 2, 2}))),
                       "BatchNorm2d: expected input of shape (N, 3, H, W), got [2, 4, 2, 2]", std::invalid_argument);
  bn.eval();
  CHECK(bn.forward(Variable(zeros({1, 3, 1, 1}))).shape() == Shape{1, 3, 1, 1});  // fine with running statistics
  const Variable x(zeros({2, 3, 2, 2}));
  CHECK_THROWS_WITH_AS(batch_norm(x, Tensor(), Tensor(), Variable(zeros({2})), Variable(), true, real(0.1), real(1e-5)),
                       "batch_norm: expected weight of shape [3], got [2]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(batch_norm(x, Tensor(), Tensor(), Variable(), Variable(zeros({3, 1})), true, real(0.1), real(1e-5)),
                       "batch_norm: expected bias of shape [3], got [3, 1]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(batch_norm(x, zeros({4}), ones({4}), Variable(), Variable(), true, real(0.1), real(1e-5)),
                       "batch_norm: expected running_mean of shape [3], got [4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(batch_norm(x, zeros({3}), ones({2}), Variable(), Variable(), true, real(0.1), real(1e-5)),
                       "batch_norm: expected running_var of shape [3], got [2]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(batch_norm(x, zeros({3}), Tensor(), Variable(), Variable(), true, real(0.1), real(1e-5)),
                       "batch_norm: expected running_mean and running_var both defined or both undefined",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(batch_norm(x, Tensor(), Tensor(), Variable(), Variable(), false, real(0.1), real(1e-5)),
                       "batch_norm: expected running_mean and running_var outside training, got none",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(batch_norm(Variable(zeros({4})), Tensor(), Tensor(), Variable(), Variable(), true, real(0.1), real(1e-5)),
                       "batch_norm: expected input of shape (N, C, ...), got [4]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::BatchNorm2d(nn::BatchNorm2dOptions(0)), "BatchNorm2d: expected a positive num_features, got 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::BatchNorm2d(nn::BatchNorm2dOptions(2).with_eps(0)), "BatchNorm2d: expected a positive eps, got 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::BatchNorm2d(nn::BatchNorm2dOptions(2).with_momentum(real(1.5))),
                       "BatchNorm2d: expected a momentum in [0, 1], got 1.5", std::invalid_argument);
}

// One digit in an 8x8 noisy image, 10 classes: Conv2d -> BatchNorm2d -> ReLU -> MaxPool2d ->
// Linear, trained in train() mode and scored in eval() mode (the running statistics).
TEST_CASE("it learns: a small CNN with batch norm and max pooling reads digits") {
  manual_seed(7);
  auto digits = [](int64_t n, uint64_t seed, Tensor& x, Tensor& y) {
    const data::DigitImages d = data::make_digit_images(
        data::DigitImageOptions().with_n(n).with_size(8, 8).with_digits(1, 1).with_noise(real(0.1)).with_seed(seed));
    x = d.images.reshape({n, 1, 8, 8});
    y = Tensor::empty({n});
    for (int64_t i = 0; i < n; ++i) y.data()[i] = static_cast<real>(d.texts[i][0] - '0');
  };
  Tensor train_x, train_y, test_x, test_y;
  digits(2000, 1, train_x, train_y);
  digits(500, 2, test_x, test_y);

  // [docs:tiny_cnn]
  nn::Conv2d conv(nn::Conv2dOptions(1, 16, 3).with_padding(1));
  nn::BatchNorm2d bn(nn::BatchNorm2dOptions(16));
  nn::MaxPool2d pool(2);
  nn::Linear head(16 * 4 * 4, 10);
  auto forward = [&](const Tensor& x) {
    const Variable h = pool.forward(relu(bn.forward(conv.forward(Variable(x)))));  // (B, 16, 4, 4)
    return head.forward(reshape(h, {x.size(0), -1}));                              // (B, 10)
  };
  // [docs:end]
  std::vector<Variable> params = conv.parameters();
  for (const nn::Module* m : {static_cast<nn::Module*>(&bn), static_cast<nn::Module*>(&head)})
    for (const Variable& p : m->parameters()) params.push_back(p);
  nn::Adam opt(params, nn::AdamOptions(real(0.01)));
  for (int step = 0; step < 300; ++step) {
    const int64_t at = (step % 62) * 32;  // 62 batches of 32
    const Tensor x = slice(train_x, 0, at, at + 32), y = slice(train_y, 0, at, at + 32);
    opt.zero_grad();
    nn::cross_entropy(forward(x), y).backward();
    opt.step();
  }
  bn.eval();
  NoGradGuard no_grad;
  const double accuracy = mean(eq(argmax(forward(test_x).value(), -1), test_y)).item();
  MESSAGE("test accuracy ", accuracy);
  CHECK(accuracy > 0.9);
}
