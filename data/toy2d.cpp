// data/toy2d.cpp - the spiral and moons generators (see toy2d.h).
#include "data/toy2d.h"

#include <cmath>

#include "tensor/check.h"
#include "tensor/random.h"

namespace seqgrad::data {

Points2D make_spirals(int64_t n, int64_t classes, real noise, uint64_t seed, real turns) {
  check(n > 0 && classes > 0, "make_spirals: expected positive n_per_class and classes, got ", n, " and ", classes);
  check(noise >= 0, "make_spirals: expected noise >= 0, got ", noise);
  Generator g(seed);
  Points2D p{Tensor::empty({n * classes, 2}), Tensor::empty({n * classes})};
  for (int64_t k = 0; k < classes; ++k)
    for (int64_t i = 0; i < n; ++i) {
      const double t = turns * 2 * M_PI * static_cast<double>(i) / static_cast<double>(n);  // position along the arm
      const double r = 0.1 + t / (2 * M_PI);                                          // radius grows with t
      const double angle = t + 2 * M_PI * static_cast<double>(k) / static_cast<double>(classes);
      const int64_t row = k * n + i;
      p.x.at({row, 0}) = static_cast<real>(r * std::cos(angle) + noise * g.normal());
      p.x.at({row, 1}) = static_cast<real>(r * std::sin(angle) + noise * g.normal());
      p.labels.data()[row] = static_cast<real>(k);
    }
  return p;
}

Points2D make_moons(int64_t n, real noise, uint64_t seed) {
  check(n > 0, "make_moons: expected a positive n_per_class, got ", n);
  check(noise >= 0, "make_moons: expected noise >= 0, got ", noise);
  Generator g(seed);
  Points2D p{Tensor::empty({2 * n, 2}), Tensor::empty({2 * n})};
  for (int64_t i = 0; i < n; ++i) {
    const double t = M_PI * static_cast<double>(i) / static_cast<double>(n > 1 ? n - 1 : 1);
    // upper moon: (cos t, sin t); lower moon: (1 - cos t, 0.5 - sin t)
    p.x.at({i, 0}) = static_cast<real>(std::cos(t) + noise * g.normal());
    p.x.at({i, 1}) = static_cast<real>(std::sin(t) + noise * g.normal());
    p.labels.data()[i] = 0;
    p.x.at({n + i, 0}) = static_cast<real>(1 - std::cos(t) + noise * g.normal());
    p.x.at({n + i, 1}) = static_cast<real>(0.5 - std::sin(t) + noise * g.normal());
    p.labels.data()[n + i] = 1;
  }
  return p;
}

}  // namespace seqgrad::data
