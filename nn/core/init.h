// nn/core/init.h - weight initialisers, with PyTorch's formulas and defaults.
//
// Each fills a tensor in place from the default generator (tensor/random.h), so a seeded run
// is reproducible. fan_in / fan_out follow PyTorch: for a weight of shape (out, in, ...) fan_in
// = in * receptive field and fan_out = out * receptive field. Why the scales: Xavier keeps the
// variance of activations and gradients equal across a tanh layer; Kaiming does it for ReLU.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace seqgrad::nn::init {

enum class Nonlinearity { Linear, Sigmoid, Tanh, Relu, LeakyRelu };
enum class FanMode { FanIn, FanOut };

struct Fans {
  int64_t fan_in, fan_out;
};
Fans fans(const Shape& shape);  // needs at least 2 dimensions

// The gain PyTorch's calculate_gain gives: 1, 1, 5/3, sqrt(2), sqrt(2 / (1 + slope^2)).
real calculate_gain(Nonlinearity nonlinearity, real param = 0);

void uniform_(Tensor& t, real low = 0, real high = 1);  // U(low, high)
void normal_(Tensor& t, real mean = 0, real std = 1);   // N(mean, std^2)
void constant_(Tensor& t, real value);
void zeros_(Tensor& t);
void ones_(Tensor& t);
// U(-a, a) with a = gain sqrt(6 / (fan_in + fan_out))
void xavier_uniform_(Tensor& t, real gain = 1);
// N(0, std^2) with std = gain sqrt(2 / (fan_in + fan_out))
void xavier_normal_(Tensor& t, real gain = 1);
// U(-b, b) with b = gain sqrt(3 / fan), gain = calculate_gain(nonlinearity, a)
void kaiming_uniform_(Tensor& t, real a = 0, FanMode mode = FanMode::FanIn,
                      Nonlinearity nonlinearity = Nonlinearity::LeakyRelu);
// N(0, std^2) with std = gain / sqrt(fan)
void kaiming_normal_(Tensor& t, real a = 0, FanMode mode = FanMode::FanIn,
                     Nonlinearity nonlinearity = Nonlinearity::LeakyRelu);

}  // namespace seqgrad::nn::init
