// tests/nn/test_pool.cpp - MaxPool2d and AvgPool2d: PyTorch's numbers forward and backward
// (plain, strided and padded, ties) from committed fixtures, direct loops over every window,
// where a max's gradient goes, shapes and the printed form, the same numbers on 1 and 2
// threads, and errors. The fixture file comes from tests/fixtures/make_pool_fixtures.py (run
// once with PyTorch; the test needs no Python). "It learns" is in test_batchnorm.cpp (a CNN).
#include <cmath>
#include <limits>
#include <map>

#include "io/safetensors.h"
#include "nn/vision/pool.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;

namespace {

std::map<std::string, Tensor> fixtures() {
  std::map<std::string, Tensor> f;
  for (auto& [name, t] : io::read_safetensors("tests/fixtures/pool_bn_torch.safetensors").tensors) f[name] = t;
  return f;
}

// out[n, c, oh, ow] = max (or mean over kH kW) of x[n, c, oh s - p + i, ow s - p + j] over the
// window, written straight from the definition: padded cells are -inf for max and 0 for mean.
Tensor direct_pool(const Tensor& x, const Pool2dOptions& o, bool is_max) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t Ho = (H + 2 * o.padding_h - o.kernel_h) / o.stride_h + 1;
  const int64_t Wo = (W + 2 * o.padding_w - o.kernel_w) / o.stride_w + 1;
  Tensor out = zeros({N, C, Ho, Wo});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < Ho; ++y)
        for (int64_t xo = 0; xo < Wo; ++xo) {
          double acc = is_max ? -std::numeric_limits<double>::infinity() : 0;
          for (int64_t i = 0; i < o.kernel_h; ++i)
            for (int64_t j = 0; j < o.kernel_w; ++j) {
              const int64_t yy = y * o.stride_h - o.padding_h + i, xx = xo * o.stride_w - o.padding_w + j;
              const bool inside = yy >= 0 && yy < H && xx >= 0 && xx < W;
              const double v = inside ? x.at({n, c, yy, xx}) : (is_max ? -std::numeric_limits<double>::infinity() : 0);
              acc = is_max ? std::max(acc, v) : acc + v;
            }
          out.at({n, c, y, xo}) = static_cast<real>(is_max ? acc : acc / (o.kernel_h * o.kernel_w));
        }
  return out;
}

}  // namespace

TEST_CASE("MaxPool2d and AvgPool2d match PyTorch forward and backward: plain, strided and padded, ties") {
  const std::map<std::string, Tensor> f = fixtures();
  struct Case {
    const char* name;
    bool is_max;
    Pool2dOptions options;
  };
  const Pool2dOptions padded = Pool2dOptions(3, 2).with_stride(2, 1).with_padding(1, 1);
  for (const Case& c : {Case{"max_plain", true, Pool2dOptions(2)}, Case{"max_padded", true, padded},
                        Case{"max_ties", true, Pool2dOptions(3).with_stride(2).with_padding(1)},
                        Case{"avg_plain", false, Pool2dOptions(2)}, Case{"avg_padded", false, padded}}) {
    CAPTURE(c.name);
    const std::string prefix = c.name;
    nn::MaxPool2d max_layer(c.options);
    nn::AvgPool2d avg_layer(c.options);
    nn::Module& layer = c.is_max ? static_cast<nn::Module&>(max_layer) : avg_layer;
    const Variable x(f.at(prefix + ".x"), /*requires_grad=*/true);
    const Variable out = layer.forward(x);
    CHECK(allclose(out.value(), f.at(prefix + ".out"), 1e-6));
    sum(out * Variable(f.at(prefix + ".probe"))).backward();
    CHECK(allclose(x.grad(), f.at(prefix + ".dx"), 1e-6));  // ties: the same (first) winners as PyTorch
  }
}

TEST_CASE("max_pool2d and avg_pool2d equal the direct loops over every window") {
  manual_seed(3);
  const Tensor x = randn({2, 3, 9, 7});
  for (int64_t k : {1, 2, 3})
    for (int64_t s : {1, 2, 3})
      for (int64_t p = 0; p <= k / 2; ++p) {
        CAPTURE(k);
        CAPTURE(s);
        CAPTURE(p);
        const Pool2dOptions o = Pool2dOptions(k, k + 1).with_stride(s, 1).with_padding(p, (k + 1) / 2);
        CHECK(allclose(max_pool2d(Variable(x), o).value(), direct_pool(x, o, true), 0));
        CHECK(allclose(avg_pool2d(Variable(x), o).value(), direct_pool(x, o, false), 1e-6));
      }
}

TEST_CASE("max_pool2d: the gradient goes to the first largest cell of each window; a NaN wins") {
  // A 4x4 plane of equal values, 2x2 windows: each window's gradient lands on its top-left cell.
  const Variable x(full({1, 1, 4, 4}, 7), /*requires_grad=*/true);
  sum(max_pool2d(x, 2)).backward();
  CHECK(x.grad().to_vector() == std::vector<real>{1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0});
  // Overlapping windows (stride 1) that share their winner add up on it.
  const Variable y(from_vector({0, 0, 0, 0, 9, 0, 0, 0, 0}, {1, 1, 3, 3}), /*requires_grad=*/true);
  sum(max_pool2d(y, Pool2dOptions(2).with_stride(1))).backward();
  CHECK(y.grad().at({0, 0, 1, 1}) == 4);
  // NaN propagates, as in PyTorch.
  const Tensor z = from_vector({1, std::numeric_limits<real>::quiet_NaN(), 3, 4}, {1, 1, 2, 2});
  CHECK(std::isnan(max_pool2d(Variable(z), 2).item()));
}

TEST_CASE("MaxPool2d and AvgPool2d: shapes, the printed form, and the same numbers on 1 and 2 threads") {
  nn::MaxPool2d max_pool(2);
  nn::AvgPool2d avg_pool(nn::AvgPool2dOptions(3, 2).with_stride(2, 1).with_padding(1, 0));
  CHECK(max_pool.to_string() == "MaxPool2d(kernel_size=(2, 2), stride=(2, 2))");
  CHECK(avg_pool.to_string() == "AvgPool2d(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0))");
  CHECK(max_pool.parameters().empty());
  manual_seed(4);
  const Tensor x = randn({3, 5, 33, 31}), probe_max = randn({3, 5, 16, 15}), probe_avg = randn({3, 5, 17, 30});
  CHECK(max_pool.forward(Variable(x)).shape() == Shape{3, 5, 16, 15});  // odd sizes round down
  CHECK(avg_pool.forward(Variable(x)).shape() == Shape{3, 5, 17, 30});
  auto run = [&](int threads) {
    testing::ThreadCount count(threads);
    const Variable xv(x, /*requires_grad=*/true);
    const Variable a = max_pool.forward(xv), b = avg_pool.forward(xv);
    sum(a * Variable(probe_max) + mean(b * Variable(probe_avg))).backward();
    std::vector<real> all = a.value().to_vector();
    for (const Tensor& t : {b.value(), xv.grad()})
      for (real v : t.to_vector()) all.push_back(v);
    return all;
  };
  CHECK(run(1) == run(2));  // bit for bit
}

TEST_CASE("pooling errors say what was expected and what was found") {
  const Variable x(zeros({1, 2, 5, 5}));
  CHECK_THROWS_WITH_AS(max_pool2d(Variable(zeros({2, 5, 5})), 2),
                       "max_pool2d: expected input of shape (N, C, H, W), got [2, 5, 5]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::AvgPool2d(2).forward(Variable(zeros({5, 5}))),
                       "avg_pool2d: expected input of shape (N, C, H, W), got [5, 5]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(max_pool2d(x, Pool2dOptions(0, 2)), "max_pool2d: expected kernel size >= 1, got (0, 2)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(max_pool2d(x, Pool2dOptions(2).with_stride(0)), "max_pool2d: expected stride >= 1, got (0, 0)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(avg_pool2d(x, Pool2dOptions(2).with_padding(-1, 0)),
                       "avg_pool2d: expected padding >= 0, got (-1, 0)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(max_pool2d(x, Pool2dOptions(3).with_padding(2)),
                       "max_pool2d: expected padding at most half the kernel size, got padding (2, 2) for a 3x3 kernel",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::MaxPool2d(nn::MaxPool2dOptions(6, 2)).forward(x),
                       "max_pool2d: a 6x2 kernel is larger than the padded input 5x5", std::invalid_argument);
  CHECK_THROWS_WITH_AS(avg_pool2d(x, Pool2dOptions(1, 8).with_padding(0, 1)),
                       "avg_pool2d: a 1x8 kernel is larger than the padded input 5x7", std::invalid_argument);
}
