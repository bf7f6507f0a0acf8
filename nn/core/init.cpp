// nn/core/init.cpp - the initialisers' formulas (see init.h).
#include "nn/core/init.h"

#include <cmath>

#include "tensor/check.h"
#include "tensor/random.h"

namespace seqgrad::nn::init {

Fans fans(const Shape& shape) {
  check(shape.size() >= 2, "init: fan_in and fan_out need a tensor of at least 2 dimensions, got shape ", shape);
  int64_t receptive = 1;
  for (size_t i = 2; i < shape.size(); ++i) receptive *= shape[i];
  return Fans{shape[1] * receptive, shape[0] * receptive};
}

real calculate_gain(Nonlinearity nonlinearity, real param) {
  switch (nonlinearity) {
    case Nonlinearity::Linear:
    case Nonlinearity::Sigmoid: return 1;
    case Nonlinearity::Tanh: return real(5.0 / 3.0);
    case Nonlinearity::Relu: return std::sqrt(real(2));
    case Nonlinearity::LeakyRelu: return std::sqrt(2 / (1 + param * param));
  }
  return 1;
}

void uniform_(Tensor& t, real low, real high) {
  Generator& g = default_generator();
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<real>(low + (high - low) * g.uniform());
}

void normal_(Tensor& t, real mean, real std) {
  Generator& g = default_generator();
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<real>(mean + std * g.normal());
}

void constant_(Tensor& t, real value) { t.fill_(value); }
void zeros_(Tensor& t) { t.fill_(0); }
void ones_(Tensor& t) { t.fill_(1); }

void xavier_uniform_(Tensor& t, real gain) {
  const Fans f = fans(t.shape());
  const real a = gain * std::sqrt(real(6) / static_cast<real>(f.fan_in + f.fan_out));
  uniform_(t, -a, a);
}

void xavier_normal_(Tensor& t, real gain) {
  const Fans f = fans(t.shape());
  normal_(t, 0, gain * std::sqrt(real(2) / static_cast<real>(f.fan_in + f.fan_out)));
}

namespace {
real kaiming_std(const Tensor& t, real a, FanMode mode, Nonlinearity nonlinearity) {
  const Fans f = fans(t.shape());
  const int64_t fan = mode == FanMode::FanIn ? f.fan_in : f.fan_out;
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<real>(fan));
}
}  // namespace

void kaiming_uniform_(Tensor& t, real a, FanMode mode, Nonlinearity nonlinearity) {
  const real bound = std::sqrt(real(3)) * kaiming_std(t, a, mode, nonlinearity);  // U(-b, b) has std b / sqrt(3)
  uniform_(t, -bound, bound);
}

void kaiming_normal_(Tensor& t, real a, FanMode mode, Nonlinearity nonlinearity) {
  normal_(t, 0, kaiming_std(t, a, mode, nonlinearity));
}

}  // namespace seqgrad::nn::init
