// tests/nn/test_conv.cpp - Conv2d: PyTorch's numbers forward and backward (stride, padding,
// dilation, groups) from committed fixtures, a direct six-loop convolution, names and shapes,
// errors, the same numbers on 1 and 2 threads, and "it learns". The fixture file comes from
// tests/fixtures/make_conv_fixtures.py (run once with PyTorch; the test needs no Python).
#include <map>

#include "io/safetensors.h"
#include "nn/vision/conv.h"
#include "nn/core/linear.h"
#include "nn/optim/optim.h"
#include "nn/core/loss.h"
#include "tensor/thread_pool.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

namespace {

// out[n, o, y, x] = b[o] + sum over the group's channels c and the kernel (i, j) of
//   w[o, c, i, j] * in[n, g * Cg + c, y * s - p + i * d, x * s - p + j * d]
Tensor direct_conv(const Tensor& in, const Tensor& w, const Tensor& b, int64_t s, int64_t p, int64_t d, int64_t groups) {
  const int64_t N = in.size(0), C = in.size(1), H = in.size(2), W = in.size(3), O = w.size(0), Cg = w.size(1),
                kH = w.size(2), kW = w.size(3);
  const int64_t Ho = (H + 2 * p - d * (kH - 1) - 1) / s + 1, Wo = (W + 2 * p - d * (kW - 1) - 1) / s + 1;
  Tensor out = zeros({N, O, Ho, Wo});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t y = 0; y < Ho; ++y)
        for (int64_t x = 0; x < Wo; ++x) {
          double acc = b.defined() ? b.data()[o] : 0;
          const int64_t g = o / (O / groups);
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < kH; ++i)
              for (int64_t j = 0; j < kW; ++j) {
                const int64_t yy = y * s - p + i * d, xx = x * s - p + j * d;
                if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                acc += w.at({o, c, i, j}) * in.at({n, g * Cg + c, yy, xx});
              }
          out.at({n, o, y, x}) = static_cast<real>(acc);
        }
  (void)C;
  return out;
}

}  // namespace

TEST_CASE("Conv2d matches PyTorch forward and backward: plain, strided and padded, dilated and grouped") {
  std::map<std::string, Tensor> f;
  for (auto& [name, t] : io::read_safetensors("tests/fixtures/conv_torch.safetensors").tensors) f[name] = t;
  struct Case {
    const char* name;
    nn::Conv2dOptions options;
  };
  for (const Case& c : {Case{"plain", nn::Conv2dOptions(3, 4, 3)},
                        Case{"strided", nn::Conv2dOptions(3, 4, 3).with_kernel_size(3, 2).with_stride(2, 1).with_padding(1, 0)},
                        Case{"grouped", nn::Conv2dOptions(4, 6, 3).with_dilation(2).with_padding(2).with_groups(2).with_bias(false)}}) {
    CAPTURE(c.name);
    const std::string prefix = c.name;
    nn::Conv2d conv(c.options);
    for (auto& [key, p] : conv.named_parameters()) {
      const std::string& name = key;  // (C++17 lambdas, as in REQUIRE_MESSAGE, cannot capture a binding)
      REQUIRE_MESSAGE(f.count(prefix + "." + name), "missing " << prefix << "." << name);
      REQUIRE(f.at(prefix + "." + name).shape() == p.shape());
      p.value().copy_(f.at(prefix + "." + name));
    }
    const Variable x(f.at(prefix + ".x"), /*requires_grad=*/true);
    const Variable out = conv.forward(x);
    CHECK(allclose(out.value(), f.at(prefix + ".out"), 1e-5));
    sum(out * Variable(f.at(prefix + ".probe"))).backward();
    CHECK(allclose(x.grad(), f.at(prefix + ".dx"), 1e-5));
    CHECK(allclose(conv.weight.grad(), f.at(prefix + ".dweight"), 1e-5));
    if (conv.bias.defined()) CHECK(allclose(conv.bias.grad(), f.at(prefix + ".dbias"), 1e-5));
  }
}

TEST_CASE("conv2d equals the direct six-loop convolution") {
  manual_seed(3);
  const Tensor x = randn({2, 4, 9, 7});
  for (int64_t groups : {1, 2, 4})
    for (int64_t s : {1, 2})
      for (int64_t p : {0, 1})
        for (int64_t d : {1, 2}) {
          CAPTURE(groups);
          CAPTURE(s);
          CAPTURE(p);
          CAPTURE(d);
          const Tensor w = randn({8, 4 / groups, 3, 2}), b = randn({8});
          Conv2dArgs a;
          a.stride_h = a.stride_w = s, a.pad_h = a.pad_w = p, a.dil_h = a.dil_w = d, a.groups = groups;
          const Tensor got = conv2d(Variable(x), Variable(w), Variable(b), a).value();
          CHECK(allclose(got, direct_conv(x, w, b, s, p, d, groups), 1e-4));
        }
}

TEST_CASE("Conv2d: names, shapes, the printed form, and the same numbers on 1 and 2 threads") {
  manual_seed(4);
  nn::Conv2d conv(nn::Conv2dOptions(3, 8, 3).with_stride(2).with_padding(1));
  CHECK(conv.named_parameters()[0].first == "weight");
  CHECK(conv.weight.shape() == Shape{8, 3, 3, 3});
  CHECK(conv.bias.shape() == Shape{8});
  CHECK(conv.to_string() == "Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))");
  const real bound = 1 / std::sqrt(real(27));  // PyTorch's initialisation: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
  CHECK(max(abs(conv.weight.value())).item() <= bound);
  const Tensor x = randn({2, 3, 11, 10}), probe = randn({2, 8, 6, 5});
  auto run = [&](int threads) {
    set_num_threads(threads);
    conv.zero_grad();
    const Variable xv(x, /*requires_grad=*/true);
    const Variable out = conv.forward(xv);
    CHECK(out.shape() == Shape{2, 8, 6, 5});
    sum(out * Variable(probe)).backward();
    std::vector<real> all = out.value().to_vector();
    for (const Tensor& t : {xv.grad(), conv.weight.grad(), conv.bias.grad()})
      for (real v : t.to_vector()) all.push_back(v);
    return all;
  };
  const int before = get_num_threads();
  const std::vector<real> one = run(1), two = run(2);
  set_num_threads(before);
  CHECK(one == two);  // bit for bit
}

TEST_CASE("conv2d errors say what was expected and what was found") {
  nn::Conv2d conv(nn::Conv2dOptions(3, 4, 3));
  CHECK_THROWS_WITH_AS(conv.forward(Variable(zeros({3, 8, 8}))), "conv2d: expected input of shape (N, C_in, H, W), got [3, 8, 8]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(conv.forward(Variable(zeros({1, 2, 8, 8}))),
                       "conv2d: expected weight of shape (4, 2, kH, kW) for 2 input channels in 1 group(s), got [4, 3, 3, 3]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(conv.forward(Variable(zeros({1, 3, 2, 8}))),
                       "conv2d: a 3x3 kernel with dilation (1, 1) spans 3x3, more than the padded input 2x8",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).with_groups(2)),
                       "Conv2d: expected groups (2) to divide in_channels (3) and out_channels (4)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(conv2d(Variable(zeros({1, 3, 8, 8})), conv.weight, Variable(zeros({5}))),
                       "conv2d: expected a bias of shape [4], got [5]", std::invalid_argument);
  Conv2dArgs a;
  a.stride_h = 0;
  CHECK_THROWS_WITH_AS(conv2d(Variable(zeros({1, 3, 8, 8})), conv.weight, conv.bias, a),
                       "conv2d: expected stride >= 1, got (0, 1)", std::invalid_argument);
  a = Conv2dArgs();
  a.pad_w = -1;
  CHECK_THROWS_WITH_AS(conv2d(Variable(zeros({1, 3, 8, 8})), conv.weight, conv.bias, a),
                       "conv2d: expected padding >= 0, got (0, -1)", std::invalid_argument);
  a = Conv2dArgs();
  a.dil_h = 0;
  CHECK_THROWS_WITH_AS(conv2d(Variable(zeros({1, 3, 8, 8})), conv.weight, conv.bias, a),
                       "conv2d: expected dilation >= 1, got (0, 1)", std::invalid_argument);
  a = Conv2dArgs();
  a.groups = 2;
  CHECK_THROWS_WITH_AS(conv2d(Variable(zeros({1, 3, 8, 8})), conv.weight, conv.bias, a),
                       "conv2d: expected groups (2) to divide the input channels (3) and the output channels (4)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(conv2d(Variable(zeros({1, 3, 8, 8})), Variable(zeros({4, 3, 3})), conv.bias),
                       "conv2d: expected weight of shape (C_out, C_in / groups, kH, kW), got [4, 3, 3]",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::Conv2d(nn::Conv2dOptions(3, 0, 3)),
                       "Conv2d: expected positive channels and kernel size, got in_channels 3, out_channels 0, kernel (3, 3)",
                       std::invalid_argument);
}

// Vertical or horizontal bars in 8x8 noise: one 3x3 convolution, a ReLU, the mean over the
// image, and a Linear tell them apart.
TEST_CASE("it learns: a convolution tells vertical bars from horizontal ones") {
  manual_seed(6);
  auto batch = [](int64_t n, Tensor& x, Tensor& y) {
    x = randn({n, 1, 8, 8}) * real(0.3);
    y = Tensor::empty({n});
    for (int64_t k = 0; k < n; ++k) {
      const bool vertical = default_generator().uniform() < 0.5;
      const int64_t at = 1 + static_cast<int64_t>(default_generator().randint(6));
      for (int64_t i = 0; i < 8; ++i) {
        if (vertical) x.at({k, 0, i, at}) += 1;
        else x.at({k, 0, at, i}) += 1;
      }
      y.data()[k] = vertical ? 1 : 0;
    }
  };
  nn::Conv2d conv(nn::Conv2dOptions(1, 4, 3).with_padding(1));
  nn::Linear head(4, 2);
  std::vector<Variable> params = conv.parameters();
  for (const Variable& p : head.parameters()) params.push_back(p);
  nn::Adam opt(params, nn::AdamOptions(real(0.03)));
  for (int step = 0; step < 150; ++step) {
    Tensor x, y;
    batch(32, x, y);
    const Variable features = mean(relu(conv.forward(Variable(x))), {2, 3});  // (32, 4)
    opt.zero_grad();
    nn::cross_entropy(head.forward(features), y).backward();
    opt.step();
  }
  Tensor x, y;
  batch(500, x, y);
  NoGradGuard no_grad;
  const double accuracy = mean(eq(argmax(head.forward(mean(relu(conv.forward(Variable(x))), {2, 3})).value(), -1), y)).item();
  MESSAGE("test accuracy ", accuracy);
  CHECK(accuracy > 0.95);
}
