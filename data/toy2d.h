// data/toy2d.h - two-dimensional toy classification sets: spirals and moons.
//
// Points (N, 2) and integer labels (N) generated from a seed, for the first classifier a
// student trains (examples/02_mlp). Neither set is linearly separable, so a linear model
// fails and a hidden layer is needed. Deterministic: the same arguments give the same points
// on every machine. Depends on tensor/ only.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace seqgrad::data {

struct Points2D {
  Tensor x;       // (N, 2)
  Tensor labels;  // (N), class ids 0..classes-1
};

// `classes` interleaved spiral arms of n points each: arm k at angle t + 2 pi k / classes with
// radius t / (2 pi), t in [0, turns * 2 pi), plus Gaussian noise of std `noise`.
Points2D make_spirals(int64_t n_per_class, int64_t classes, real noise, uint64_t seed, real turns = real(1.0));

// Two interleaving half circles (scikit-learn's "moons"), n points each, Gaussian noise.
Points2D make_moons(int64_t n_per_class, real noise, uint64_t seed);

}  // namespace seqgrad::data
