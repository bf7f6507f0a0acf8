// exercises/11_pe_shift/check.cpp - make -C exercises check EX=11
#include <doctest/doctest.h>

#include "exercise.h"
#include "nn/transformer/positional.h"

using namespace seqgrad;

namespace {
// row p of the table as a column vector (C, 1)
Tensor column(const Tensor& table, int64_t p) {
  const int64_t C = table.size(1);
  return slice(table, 0, p, p + 1).reshape({C, 1});
}
}  // namespace

TEST_CASE("11: M_k PE(p) = PE(p + k) for every p, with one matrix per k") {
  const int64_t C = 16;
  const Tensor table = nn::sinusoidal_table(120, C);
  for (int64_t k : {0, 1, 3, 17, 50}) {
    const Tensor M = shift_matrix(k, C);
    REQUIRE(M.shape() == Shape{C, C});
    for (int64_t p : {0, 1, 7, 30, 69}) {
      CAPTURE(k);
      CAPTURE(p);
      CHECK(max(abs(matmul(M, column(table, p)) - column(table, p + k))).item() < 1e-4);
    }
  }
}

TEST_CASE("11: M_0 is the identity, M_j M_k = M_(j+k), and M_k is a rotation (M^T M = I)") {
  const int64_t C = 8;
  const Tensor I = matmul(shift_matrix(0, C), shift_matrix(0, C));  // I I = I
  Tensor eye = zeros({C, C});
  for (int64_t i = 0; i < C; ++i) eye.at({i, i}) = 1;
  CHECK(max(abs(shift_matrix(0, C) - eye)).item() < 1e-6);
  CHECK(max(abs(I - eye)).item() < 1e-6);
  CHECK(max(abs(matmul(shift_matrix(3, C), shift_matrix(4, C)) - shift_matrix(7, C))).item() < 1e-5);
  const Tensor M = shift_matrix(5, C);
  CHECK(max(abs(matmul(M, M, /*trans_a=*/true) - eye)).item() < 1e-5);
}
