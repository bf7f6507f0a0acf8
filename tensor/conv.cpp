// tensor/conv.cpp - the geometry of a convolution, and im2col / col2im (see conv.h).
#include "tensor/conv.h"

#include "tensor/check.h"
#include "tensor/thread_pool.h"

namespace seqgrad {

Conv2dGeometry conv2d_geometry(const Shape& x, const Shape& w, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                               int64_t dh, int64_t dw, int64_t groups, const char* op) {
  check(x.size() == 4, op, ": expected input of shape (N, C_in, H, W), got ", x);
  check(w.size() == 4, op, ": expected weight of shape (C_out, C_in / groups, kH, kW), got ", w);
  check(sh >= 1 && sw >= 1, op, ": expected stride >= 1, got (", sh, ", ", sw, ")");
  check(ph >= 0 && pw >= 0, op, ": expected padding >= 0, got (", ph, ", ", pw, ")");
  check(dh >= 1 && dw >= 1, op, ": expected dilation >= 1, got (", dh, ", ", dw, ")");
  check(groups >= 1 && x[1] % groups == 0 && w[0] % groups == 0, op, ": expected groups (", groups,
        ") to divide the input channels (", x[1], ") and the output channels (", w[0], ")");
  Conv2dGeometry g;
  g.N = x[0], g.C_in = x[1], g.H = x[2], g.W = x[3];
  g.C_out = w[0], g.kH = w[2], g.kW = w[3];
  g.stride_h = sh, g.stride_w = sw, g.pad_h = ph, g.pad_w = pw, g.dil_h = dh, g.dil_w = dw, g.groups = groups;
  check(w[1] == g.group_in(), op, ": expected weight of shape (", g.C_out, ", ", g.group_in(), ", kH, kW) for ", g.C_in,
        " input channels in ", groups, " group(s), got ", w);
  const int64_t span_h = dh * (g.kH - 1) + 1, span_w = dw * (g.kW - 1) + 1;  // what one window covers
  check(g.kH >= 1 && g.kW >= 1 && span_h <= g.H + 2 * ph && span_w <= g.W + 2 * pw, op, ": a ", g.kH, "x", g.kW,
        " kernel with dilation (", dh, ", ", dw, ") spans ", span_h, "x", span_w, ", more than the padded input ",
        g.H + 2 * ph, "x", g.W + 2 * pw);
  g.H_out = (g.H + 2 * ph - span_h) / sh + 1;
  g.W_out = (g.W + 2 * pw - span_w) / sw + 1;
  return g;
}

// [docs:im2col]
Tensor im2col(const Tensor& x, const Conv2dGeometry& g) {
  const int64_t Cg = g.group_in(), K = g.K(), L = g.L();
  Tensor cols = Tensor::empty({g.N, g.groups, K, L});
  const real* px = x.data();
  real* pc = cols.data();
  // One task per (image, input channel): it fills that channel's kH kW rows of the columns.
  parallel_for(0, g.N * g.C_in, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / g.C_in, c = t % g.C_in;
      const real* image = px + (n * g.C_in + c) * g.H * g.W;
      // (n, group, row (c', i, j), ...) with c' = c - group * Cg: the group's block of the channel
      real* rows = pc + ((n * g.groups + c / Cg) * K + (c % Cg) * g.kH * g.kW) * L;
      for (int64_t i = 0; i < g.kH; ++i)
        for (int64_t j = 0; j < g.kW; ++j) {
          real* row = rows + (i * g.kW + j) * L;
          for (int64_t oh = 0; oh < g.H_out; ++oh) {
            const int64_t y = oh * g.stride_h - g.pad_h + i * g.dil_h;
            for (int64_t ow = 0; ow < g.W_out; ++ow) {
              const int64_t xw = ow * g.stride_w - g.pad_w + j * g.dil_w;
              row[oh * g.W_out + ow] = (y >= 0 && y < g.H && xw >= 0 && xw < g.W) ? image[y * g.W + xw] : real(0);
            }
          }
        }
    }
  });
  return cols;
}

Tensor col2im(const Tensor& cols, const Conv2dGeometry& g) {
  const int64_t Cg = g.group_in(), K = g.K(), L = g.L();
  Tensor x = zeros({g.N, g.C_in, g.H, g.W});
  const real* pc = cols.data();
  real* px = x.data();
  // One task per (image, input channel): the pixels it adds to are its own, so no two threads
  // touch the same number, and the order of the additions is the same on any number of threads.
  parallel_for(0, g.N * g.C_in, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / g.C_in, c = t % g.C_in;
      real* image = px + (n * g.C_in + c) * g.H * g.W;
      const real* rows = pc + ((n * g.groups + c / Cg) * K + (c % Cg) * g.kH * g.kW) * L;
      for (int64_t i = 0; i < g.kH; ++i)
        for (int64_t j = 0; j < g.kW; ++j) {
          const real* row = rows + (i * g.kW + j) * L;
          for (int64_t oh = 0; oh < g.H_out; ++oh) {
            const int64_t y = oh * g.stride_h - g.pad_h + i * g.dil_h;
            if (y < 0 || y >= g.H) continue;
            for (int64_t ow = 0; ow < g.W_out; ++ow) {
              const int64_t xw = ow * g.stride_w - g.pad_w + j * g.dil_w;
              if (xw >= 0 && xw < g.W) image[y * g.W + xw] += row[oh * g.W_out + ow];
            }
          }
        }
    }
  });
  return x;
}
// [docs:end]

}  // namespace seqgrad
