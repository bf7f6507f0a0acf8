// exercises/solutions/13_depthwise_conv/exercise.cpp - reference solution of exercise 13.
#include "exercise.h"

using namespace seqgrad;

namespace {

struct Geometry {
  int64_t N, C, H, W, kH, kW, stride, padding, H_out, W_out;
};

// Calls f(x_index, w_index, y_index) for every product weight[w] * x[x] that adds into y[y]:
// every output position, every tap of its filter that lands inside the image. The forward and
// all three gradients are this one loop with a different body.
template <class F>
void for_each_tap(const Geometry& g, F f) {
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c)
      for (int64_t oh = 0; oh < g.H_out; ++oh)
        for (int64_t ow = 0; ow < g.W_out; ++ow) {
          const int64_t y_index = ((n * g.C + c) * g.H_out + oh) * g.W_out + ow;
          for (int64_t i = 0; i < g.kH; ++i) {
            const int64_t ih = oh * g.stride - g.padding + i;
            if (ih < 0 || ih >= g.H) continue;  // in the zero padding: adds nothing
            for (int64_t j = 0; j < g.kW; ++j) {
              const int64_t iw = ow * g.stride - g.padding + j;
              if (iw < 0 || iw >= g.W) continue;
              f(((n * g.C + c) * g.H + ih) * g.W + iw, (c * g.kH + i) * g.kW + j, y_index);
            }
          }
        }
}

}  // namespace

Variable depthwise_conv2d(const Variable& x, const Variable& weight, const Variable& bias, int64_t stride,
                          int64_t padding) {
  check(x.dim() == 4, "depthwise_conv2d: expected x (N, C, H, W), got ", x.shape());
  const int64_t C = x.size(1);
  check(weight.dim() == 4 && weight.size(0) == C && weight.size(1) == 1,
        "depthwise_conv2d: expected a weight (", C, ", 1, kH, kW) for ", C, " channels, got ", weight.shape());
  if (bias.defined())
    check(bias.shape() == Shape{C}, "depthwise_conv2d: expected a bias (", C, "), got ", bias.shape());
  check(stride >= 1 && padding >= 0, "depthwise_conv2d: expected stride >= 1 and padding >= 0, got ", stride,
        " and ", padding);
  Geometry g{x.size(0), C, x.size(2), x.size(3), weight.size(2), weight.size(3), stride, padding, 0, 0};
  check(g.kH <= g.H + 2 * padding && g.kW <= g.W + 2 * padding, "depthwise_conv2d: a ", g.kH, "x", g.kW,
        " kernel does not fit the padded image of x ", x.shape());
  g.H_out = (g.H + 2 * padding - g.kH) / stride + 1;
  g.W_out = (g.W + 2 * padding - g.kW) / stride + 1;

  const Tensor xv = x.value(), wv = weight.value();
  Tensor y = zeros({g.N, C, g.H_out, g.W_out});
  const real *px = xv.data(), *pw = wv.data();
  real* py = y.data();
  for_each_tap(g, [&](int64_t xi, int64_t wi, int64_t yi) { py[yi] += pw[wi] * px[xi]; });
  if (bias.defined()) y = y + bias.value().reshape({C, 1, 1});  // (N, C, H_out, W_out) + (C, 1, 1)

  // Inputs must be defined Variables: the bias joins them only when there is one.
  std::vector<Variable> inputs{x, weight};
  if (bias.defined()) inputs.push_back(bias);
  const bool has_bias = bias.defined();
  return make_result("depthwise_conv2d", y, std::move(inputs), [xv, wv, g, has_bias](const Tensor& dy, Node& n) {
    // y[yi] += w[wi] * x[xi] for each tap  =>  dx[xi] += w[wi] dy[yi],  dw[wi] += x[xi] dy[yi]
    const real* pdy = dy.data();
    if (n.needs_grad(0)) {
      Tensor dx = zeros(xv.shape());  // (N, C, H, W): overlapping windows add up
      real* pdx = dx.data();
      const real* pw = wv.data();
      for_each_tap(g, [&](int64_t xi, int64_t wi, int64_t yi) { pdx[xi] += pw[wi] * pdy[yi]; });
      n.add_grad(0, dx);
    }
    if (n.needs_grad(1)) {
      Tensor dw = zeros(wv.shape());  // (C, 1, kH, kW): every position of every image adds
      real* pdw = dw.data();
      const real* px = xv.data();
      for_each_tap(g, [&](int64_t xi, int64_t wi, int64_t yi) { pdw[wi] += px[xi] * pdy[yi]; });
      n.add_grad(1, dw);
    }
    // y = ... + bias[c]  =>  dbias[c] = sum of dy over n, oh, ow
    if (has_bias && n.needs_grad(2)) n.add_grad(2, sum(dy, {0, 2, 3}));
  });
}
// The question: per output position, a full k x k convolution from C to C channels does
// k^2 C^2 multiplications; depthwise (k^2 C) then a 1x1 convolution (C^2) does k^2 C + C^2,
// a fraction 1 / C + 1 / k^2 of it: for k = 3 and C = 256, about 8.7 times fewer.
