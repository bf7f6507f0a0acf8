// tests/tensor/test_vmath.cpp - the vectorised exp, sigmoid and tanh against double-precision
// references: at most about one unit in the last place, and the right answer at the edges; and
// the same bits on every kernel path that fuses multiply-adds.
#include <cmath>
#include <cstring>
#include <limits>

#include "tensor/vmath.h"
#include "tests/test_util.h"

using namespace seqgrad;

namespace {

// The largest error of f over xs relative to ref, where the true value is a normal float
// (subnormals have fewer bits, so a relative bound means nothing there; they are checked below).
double worst_relative_error(void (*f)(const real*, real*, int64_t), double (*ref)(double),
                            const std::vector<real>& xs) {
  std::vector<real> ys(xs.size());
  f(xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
  double worst = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double r = ref(xs[i]);
    if (std::fabs(r) < std::numeric_limits<real>::min() || std::fabs(r) > std::numeric_limits<real>::max()) continue;
    worst = std::max(worst, std::fabs(ys[i] - r) / std::fabs(r));
  }
  return worst;
}

double ref_sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double ref_exp(double x) { return std::exp(x); }
double ref_tanh(double x) { return std::tanh(x); }

}  // namespace

TEST_CASE("vmath exp, sigmoid and tanh are within 2 units in the last place of the true values") {
  std::vector<real> xs;  // every 1/1024 from -90 to 90, plus tiny values; 184,321 + 61 values
  for (int64_t i = -90 * 1024; i <= 90 * 1024; ++i) xs.push_back(static_cast<real>(i) / 1024);
  for (int e = -60; e <= 0; ++e) xs.push_back(std::ldexp(real(1.5), e));
  const double ulp = std::numeric_limits<real>::epsilon();  // 2^-23 in float
  CHECK(worst_relative_error(vmath::exp, ref_exp, xs) <= 2 * ulp);
  CHECK(worst_relative_error(vmath::sigmoid, ref_sigmoid, xs) <= 2 * ulp);
  CHECK(worst_relative_error(vmath::tanh, ref_tanh, xs) <= 2 * ulp);
}

TEST_CASE("vmath at the edges: overflow, underflow, infinities, NaN, and a ragged tail") {
  const real inf = std::numeric_limits<real>::infinity(), nan = std::numeric_limits<real>::quiet_NaN();
  const std::vector<real> x{-1000, 1000, -inf, inf, nan, 0, real(-0.0), 3};  // then a tail of 3
  std::vector<real> y(x.size());
  const int64_t n = static_cast<int64_t>(x.size());
  vmath::exp(x.data(), y.data(), n);
  CHECK(y[0] == 0);
  CHECK(y[1] == inf);
  CHECK(y[2] == 0);
  CHECK(y[3] == inf);
  CHECK(std::isnan(y[4]));
  CHECK(y[5] == 1);
  // Subnormal results: e^-100 = 3.7e-44 is not flushed to 0.
  const real tiny_in[2] = {-100, -103};
  real tiny_out[2];
  vmath::exp(tiny_in, tiny_out, 2);
  CHECK(tiny_out[0] == doctest::Approx(std::exp(-100.0)).epsilon(0.01));
  CHECK(tiny_out[1] == doctest::Approx(std::exp(-103.0)).epsilon(0.3));  // 2 of 1.4e-45: coarse
  CHECK(tiny_out[1] > 0);
  vmath::sigmoid(x.data(), y.data(), n);
  CHECK(y[0] == 0);
  CHECK(y[1] == 1);
  CHECK(y[2] == 0);
  CHECK(y[3] == 1);
  CHECK(std::isnan(y[4]));
  CHECK(y[5] == real(0.5));
  vmath::tanh(x.data(), y.data(), n);
  CHECK(y[0] == -1);
  CHECK(y[1] == 1);
  CHECK(y[2] == -1);
  CHECK(y[3] == 1);
  CHECK(std::isnan(y[4]));
  CHECK(y[5] == 0);
  CHECK(std::signbit(y[6]));  // tanh(-0) = -0
  // Lengths that are not a multiple of 8 go through the padded tail; in place is allowed.
  std::vector<real> z{real(0.1), real(-0.2), real(0.3)};
  vmath::tanh(z.data(), z.data(), 3);
  CHECK(z[0] == doctest::Approx(std::tanh(0.1)).epsilon(1e-6));
  CHECK(z[1] == doctest::Approx(std::tanh(-0.2)).epsilon(1e-6));
  CHECK(z[2] == doctest::Approx(std::tanh(0.3)).epsilon(1e-6));
}

TEST_CASE("vmath: the AVX2 and AVX-512 paths give the same bits, ragged tails included") {
  // Each lane does the same operations in the same order whatever the vector width
  // (tensor/vmath_lanes.h), so a checkpoint trained on one machine is the same on another.
  // (The generic copy joins them where the build's target fuses multiply-adds, as the others do.)
  const std::vector<std::string> fused = seqgrad::testing::fused_kernel_paths();
  if (fused.size() < 2) {
    MESSAGE("this CPU runs only ", fused.size(), " fused kernel path(s); nothing to compare");
    return;
  }
  std::vector<real> xs;  // every 1/64 from -100 to 100, and a length that leaves a ragged tail
  for (int64_t i = -100 * 64; i <= 100 * 64; ++i) xs.push_back(static_cast<real>(i) / 64);
  xs.push_back(std::numeric_limits<real>::infinity());
  xs.push_back(-std::numeric_limits<real>::infinity());
  for (void (*f)(const real*, real*, int64_t) : {vmath::exp, vmath::sigmoid, vmath::tanh}) {
    std::vector<std::vector<real>> ys;
    for (const std::string& path : fused) {
      seqgrad::testing::UseKernel use(path);
      ys.emplace_back(xs.size());
      f(xs.data(), ys.back().data(), static_cast<int64_t>(xs.size()));
    }
    for (size_t i = 1; i < ys.size(); ++i) {
      CAPTURE(fused[i]);
      CHECK(std::memcmp(ys[0].data(), ys[i].data(), xs.size() * sizeof(real)) == 0);
    }
  }
}
