// tensor/batchnorm.cpp - batch normalisation's statistics, forward and backward (see batchnorm.h).
// The shapes are checked by the op (autograd/ops_nn.cpp batch_norm) before these run.
#include "tensor/batchnorm.h"

#include <cmath>
#include <vector>

#include "tensor/elementwise.h"
#include "tensor/reduce.h"
#include "tensor/thread_pool.h"

namespace seqgrad {

namespace {

// x (N, C, ...) as N C planes of L values; plane p = n C + c belongs to channel c = p % C.
struct Planes {
  int64_t N, C, L;
  explicit Planes(const Tensor& x)
      : N(x.size(0)), C(x.size(1)), L(x.size(0) * x.size(1) > 0 ? x.numel() / (x.size(0) * x.size(1)) : 0) {}
  int64_t count() const { return N * L; }  // M, the values of one channel
};

// For each channel c, the sum of term(p, l) over its planes p and positions l < L, in double:
// every plane's sum first (lane_sum, planes in parallel), then a channel's N planes in order of
// n. The order of the additions depends on the shape alone, never on the thread count.
template <class Term>
std::vector<double> channel_sums(const Planes& s, Term term) {
  std::vector<double> planes(static_cast<size_t>(s.N * s.C));
  parallel_for(0, s.N * s.C, row_grain(s.L), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) planes[p] = lane_sum(s.L, [&](int64_t l) { return term(p, l); });
  });
  std::vector<double> sums(static_cast<size_t>(s.C), 0.0);
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t c = 0; c < s.C; ++c) sums[c] += planes[n * s.C + c];
  return sums;
}

}  // namespace

BatchNormStats batch_norm_stats(const Tensor& x) {
  const Planes s(x);
  const double M = static_cast<double>(s.count());
  const real* px = x.data();
  std::vector<double> mu = channel_sums(s, [&](int64_t p, int64_t l) { return static_cast<double>(px[p * s.L + l]); });
  for (double& m : mu) m /= M;
  const std::vector<double> ss = channel_sums(s, [&](int64_t p, int64_t l) {
    const double d = px[p * s.L + l] - mu[p % s.C];
    return d * d;
  });
  BatchNormStats st{Tensor::empty({s.C}), Tensor::empty({s.C})};
  for (int64_t c = 0; c < s.C; ++c) {
    st.mean.data()[c] = static_cast<real>(mu[c]);
    st.var.data()[c] = static_cast<real>(ss[c] / M);  // biased: divide by M
  }
  return st;
}

BatchNormForward batch_norm_forward(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                    const Tensor& bias) {
  const Planes s(x);
  BatchNormForward f{Tensor::empty(x.shape()), Tensor::empty(x.shape())};
  const real *px = x.data(), *pm = mean.data(), *pr = rstd.data();
  const real* pw = weight.defined() ? weight.data() : nullptr;
  const real* pb = bias.defined() ? bias.data() : nullptr;
  real *py = f.y.data(), *ph = f.x_hat.data();
  parallel_for(0, s.N * s.C, row_grain(s.L), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c = p % s.C;
      const real m = pm[c], r = pr[c], w = pw ? pw[c] : 1, b = pb ? pb[c] : 0;
      const real* xp = px + p * s.L;
      real *hp = ph + p * s.L, *yp = py + p * s.L;
      for (int64_t l = 0; l < s.L; ++l) {
        hp[l] = (xp[l] - m) * r;  // x_hat
        yp[l] = hp[l] * w + b;
      }
    }
  });
  return f;
}

// [docs:batch_norm_backward]
BatchNormBackward batch_norm_backward(const Tensor& dy, const Tensor& x_hat, const Tensor& rstd, const Tensor& weight,
                                      bool batch_stats) {
  // y = w x_hat + b, x_hat = (x - mu) r, r = (var + eps)^(-1/2), over one channel's M values x_i.
  // dbias = sum dy,  dweight = sum dy x_hat, and the gradient reaching x_hat is g = w dy.
  // With fixed statistics (eval), mu and r are constants: dx = r g.
  // With the batch's statistics, x reaches the loss three ways: directly, through mu and
  // through var = mean((x - mu)^2):
  //   dvar = sum_j g_j (x_j - mu) (-1/2) r^3                = -(r^2 / 2) sum_j g_j x_hat_j
  //   dmu  = -r sum_j g_j + dvar (-2 / M) sum_j (x_j - mu)  = -r sum_j g_j     (the last sum is 0)
  //   dx_i = r g_i + dvar 2 (x_i - mu) / M + dmu / M
  //        = r (g_i - mean(g) - x_hat_i mean(g x_hat))
  // and with g = w dy, mean(g) = w sum(dy) / M and mean(g x_hat) = w sum(dy x_hat) / M: the two
  // sums that are also dbias and dweight. One pass for the sums, one for dx.
  const Planes s(x_hat);
  const double M = static_cast<double>(s.count());
  const real *pd = dy.data(), *ph = x_hat.data(), *pr = rstd.data();
  const real* pw = weight.defined() ? weight.data() : nullptr;
  const std::vector<double> sdy = channel_sums(s, [&](int64_t p, int64_t l) { return static_cast<double>(pd[p * s.L + l]); });
  const std::vector<double> sdyh = channel_sums(s, [&](int64_t p, int64_t l) {
    return static_cast<double>(pd[p * s.L + l]) * ph[p * s.L + l];
  });
  BatchNormBackward b{Tensor::empty(dy.shape()), Tensor::empty({s.C}), Tensor::empty({s.C})};
  for (int64_t c = 0; c < s.C; ++c) {
    b.dbias.data()[c] = static_cast<real>(sdy[c]);
    b.dweight.data()[c] = static_cast<real>(sdyh[c]);
  }
  real* pdx = b.dx.data();
  parallel_for(0, s.N * s.C, row_grain(s.L), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c = p % s.C;
      const real k = (pw ? pw[c] : 1) * pr[c];  // w r
      const real mdy = batch_stats ? static_cast<real>(sdy[c] / M) : 0;
      const real mdyh = batch_stats ? static_cast<real>(sdyh[c] / M) : 0;
      const real *dp = pd + p * s.L, *hp = ph + p * s.L;
      real* dxp = pdx + p * s.L;
      for (int64_t l = 0; l < s.L; ++l) dxp[l] = k * (dp[l] - mdy - hp[l] * mdyh);
    }
  });
  return b;
}
// [docs:end]

}  // namespace seqgrad
