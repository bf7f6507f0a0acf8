// tests/data/test_toy2d.cpp - the 2-D toy sets: shapes, labels, determinism.
#include "data/toy2d.h"
#include "tests/test_util.h"

using namespace seqgrad;

TEST_CASE("spirals and moons: shapes, labels, same seed same points") {
  const data::Points2D s = data::make_spirals(50, 3, real(0.05), 7);
  CHECK(s.x.shape() == Shape{150, 2});
  CHECK(s.labels.shape() == Shape{150});
  CHECK(s.labels.data()[0] == 0);
  CHECK(s.labels.data()[149] == 2);
  CHECK(data::make_spirals(50, 3, real(0.05), 7).x.to_vector() == s.x.to_vector());
  CHECK(data::make_spirals(50, 3, real(0.05), 8).x.to_vector() != s.x.to_vector());
  const data::Points2D m = data::make_moons(40, real(0.1), 1);
  CHECK(m.x.shape() == Shape{80, 2});
  CHECK(sum(m.labels).item() == 40);
  CHECK_THROWS_WITH_AS(data::make_moons(0, 0, 1), "make_moons: expected a positive n_per_class, got 0", std::invalid_argument);
}
