// tensor/pool.cpp - the geometry of a pooling, and max / average pooling forward and backward
// (see pool.h). All four kernels walk the same windows with for_each_window.
#include "tensor/pool.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor/check.h"
#include "tensor/elementwise.h"
#include "tensor/thread_pool.h"

namespace seqgrad {

Pool2dGeometry pool2d_geometry(const Shape& x, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                               const char* op) {
  check(x.size() == 4, op, ": expected input of shape (N, C, H, W), got ", x);
  check(kh >= 1 && kw >= 1, op, ": expected kernel size >= 1, got (", kh, ", ", kw, ")");
  check(sh >= 1 && sw >= 1, op, ": expected stride >= 1, got (", sh, ", ", sw, ")");
  check(ph >= 0 && pw >= 0, op, ": expected padding >= 0, got (", ph, ", ", pw, ")");
  // PyTorch's rule: a window must always hold at least one real cell, so a max is never -inf.
  check(ph <= kh / 2 && pw <= kw / 2, op, ": expected padding at most half the kernel size, got padding (", ph, ", ",
        pw, ") for a ", kh, "x", kw, " kernel");
  Pool2dGeometry g;
  g.N = x[0], g.C = x[1], g.H = x[2], g.W = x[3];
  g.kH = kh, g.kW = kw, g.stride_h = sh, g.stride_w = sw, g.pad_h = ph, g.pad_w = pw;
  check(kh <= g.H + 2 * ph && kw <= g.W + 2 * pw, op, ": a ", kh, "x", kw, " kernel is larger than the padded input ",
        g.H + 2 * ph, "x", g.W + 2 * pw);
  g.H_out = (g.H + 2 * ph - kh) / sh + 1;
  g.W_out = (g.W + 2 * pw - kw) / sw + 1;
  return g;
}

namespace {

// The window of output (oh, ow) clipped to the image: rows [y0, y1), columns [x0, x1). The
// cells cut off are padding; with padding <= kernel / 2 at least one cell is left.
struct Window {
  int64_t y0, y1, x0, x1;
};

// Calls fn(plane, o, window) for every output o (a flat index into (N, C, H_out, W_out)) of
// every (image, channel) plane. One task owns whole planes: each output, and in backward each
// cell of dx, is written by one thread in a fixed order, so every thread count gives the same
// bits.
template <class Fn>
void for_each_window(const Pool2dGeometry& g, Fn fn) {
  const int64_t L = g.H_out * g.W_out;
  parallel_for(0, g.N * g.C, row_grain(g.H * g.W), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      for (int64_t oh = 0; oh < g.H_out; ++oh) {
        const int64_t top = oh * g.stride_h - g.pad_h;
        for (int64_t ow = 0; ow < g.W_out; ++ow) {
          const int64_t left = ow * g.stride_w - g.pad_w;
          const Window w{std::max<int64_t>(top, 0), std::min(top + g.kH, g.H), std::max<int64_t>(left, 0),
                         std::min(left + g.kW, g.W)};
          fn(p, p * L + oh * g.W_out + ow, w);
        }
      }
  });
}

}  // namespace

// ================================================================================================
// Max pooling

// [docs:max_pool2d]
MaxPool2dForward max_pool2d_forward(const Tensor& x, const Pool2dGeometry& g) {
  MaxPool2dForward f{Tensor::empty({g.N, g.C, g.H_out, g.W_out}), std::vector<int64_t>(g.N * g.C * g.H_out * g.W_out)};
  const real* px = x.data();
  real* py = f.y.data();
  int64_t* pa = f.argmax.data();
  for_each_window(g, [&](int64_t p, int64_t o, const Window& w) {
    const real* plane = px + p * g.H * g.W;
    real best = -std::numeric_limits<real>::infinity();  // padded cells are -inf: they never win
    int64_t at = w.y0 * g.W + w.x0;
    for (int64_t y = w.y0; y < w.y1; ++y)
      for (int64_t xx = w.x0; xx < w.x1; ++xx) {
        const real v = plane[y * g.W + xx];
        if (v > best || std::isnan(v)) {  // strictly larger: the first max wins ties
          best = v;
          at = y * g.W + xx;
        }
      }
    py[o] = best;
    pa[o] = at;
  });
  return f;
}

Tensor max_pool2d_backward(const Tensor& dy, const std::vector<int64_t>& argmax, const Pool2dGeometry& g) {
  // out = x[argmax]  =>  dx[argmax] += dout; the other cells of the window get nothing. A cell
  // that wins several overlapping windows gets the sum.
  Tensor dx = zeros({g.N, g.C, g.H, g.W});
  const real* pd = dy.data();
  real* pdx = dx.data();
  for_each_window(g, [&](int64_t p, int64_t o, const Window&) { pdx[p * g.H * g.W + argmax[o]] += pd[o]; });
  return dx;
}
// [docs:end]

// ================================================================================================
// Average pooling

// [docs:avg_pool2d]
Tensor avg_pool2d_forward(const Tensor& x, const Pool2dGeometry& g) {
  Tensor y = Tensor::empty({g.N, g.C, g.H_out, g.W_out});
  const real* px = x.data();
  real* py = y.data();
  const double area = static_cast<double>(g.kH * g.kW);  // padded cells count (as zeros)
  for_each_window(g, [&](int64_t p, int64_t o, const Window& w) {
    const real* plane = px + p * g.H * g.W;
    double s = 0;
    for (int64_t yy = w.y0; yy < w.y1; ++yy)
      for (int64_t xx = w.x0; xx < w.x1; ++xx) s += plane[yy * g.W + xx];
    py[o] = static_cast<real>(s / area);
  });
  return y;
}

Tensor avg_pool2d_backward(const Tensor& dy, const Pool2dGeometry& g) {
  // out = sum of the window / (kH kW)  =>  every cell of the window gets dout / (kH kW); cells
  // in several windows get the sum, padded cells' shares go nowhere.
  Tensor dx = zeros({g.N, g.C, g.H, g.W});
  const real* pd = dy.data();
  real* pdx = dx.data();
  const real area = static_cast<real>(g.kH * g.kW);
  for_each_window(g, [&](int64_t p, int64_t o, const Window& w) {
    real* plane = pdx + p * g.H * g.W;
    const real share = pd[o] / area;
    for (int64_t yy = w.y0; yy < w.y1; ++yy)
      for (int64_t xx = w.x0; xx < w.x1; ++xx) plane[yy * g.W + xx] += share;
  });
  return dx;
}
// [docs:end]

}  // namespace seqgrad
