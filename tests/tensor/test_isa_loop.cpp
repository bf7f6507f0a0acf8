// tests/tensor/test_isa_loop.cpp - the loops compiled once per instruction set (for_isa,
// tensor/isa_loop.h): relu, the softmaxes, layer norm, the column sums and the LSTM cell give
// the same bits on every kernel path that fuses multiply-adds, and within 1e-5 of those on the
// others; and the same bits on one thread and on two, on every path. And for_isa runs the copy
// of the path in use. (That each copy is compiled for its instruction set is checked on the
// built objects, by tests/check_isa_copies.sh in `make test`.)
#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/fused.h"
#include "tensor/isa_loop.h"
#include "tensor/reduce.h"
#include "tensor/softmax.h"
#include "tests/test_util.h"

using namespace seqgrad;

namespace {

// Every output of the ops whose loops go through for_isa, on inputs big enough to be shared
// between two threads, laid end to end.
std::vector<real> every_output() {
  manual_seed(41);
  std::vector<real> out;
  auto keep = [&out](const Tensor& t) {
    const std::vector<real> v = t.to_vector();
    out.insert(out.end(), v.begin(), v.end());
  };
  // relu, forward and backward (its mask is kept in bytes)
  const Variable x(randn({64, 20, 130}), /*requires_grad=*/true);
  const Variable y = relu(x);
  keep(y.value());
  sum(y * Variable(randn({64, 20, 130}))).backward();
  keep(x.grad());
  // softmax on the last axis and on another, its backward, and attention's scaled masked one
  const Tensor scores = randn({64, 4, 20, 20}), dscores = randn({64, 4, 20, 20});
  const Tensor p = softmax(scores, -1);
  keep(p);
  keep(softmax(scores, 2));
  keep(softmax_backward(p, dscores, -1, real(0.25)));
  keep(scaled_masked_softmax(scores, nn::causal_mask(20), real(0.25)));
  // layer norm, forward and backward
  const Tensor h = randn({1280, 128}), weight = randn({128}), bias = randn({128}), dh = randn({1280, 128});
  const LayerNormForward ln = layer_norm_forward(h, weight, bias, real(1e-5));
  keep(ln.y);
  const LayerNormBackward lb = layer_norm_backward(dh, ln.x_hat, ln.rstd, weight);
  keep(lb.dx);
  keep(lb.dweight);
  keep(lb.dbias);
  // sums along the last axis and along a middle one
  keep(sum(h, 1));
  keep(sum(randn({8, 300, 70}), 1));
  // the LSTM cell, forward and backward
  const Tensor gates = randn({64, 512}), c = randn({64, 128});
  const LSTMCellForward cell = lstm_cell_forward(gates, c);
  keep(cell.hc);
  const LSTMCellBackward cb = lstm_cell_backward(randn({64, 256}), cell.act, cell.hc, c);
  keep(cb.dgates);
  keep(cb.dc);
  return out;
}

bool same_bits(const std::vector<real>& a, const std::vector<real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(real)) == 0;
}

}  // namespace

TEST_CASE("for_isa: the same bits on one thread and two, and on every path that fuses multiply-adds") {
  std::vector<std::vector<real>> per_path;
  for (const std::string& path : gemm_kernels()) {
    CAPTURE(path);
    testing::UseKernel use(path);
    std::vector<real> one, two;
    {
      testing::ThreadCount count(1);
      one = every_output();
    }
    {
      testing::ThreadCount count(2);
      two = every_output();
    }
    CHECK(same_bits(one, two));
    per_path.push_back(one);
  }
  // Paths that fuse multiply-adds give the same bits. Another (the generic path of a build whose
  // target has no FMA, `make PORTABLE=1`, which rounds a * b + c twice) comes within 1e-5.
  const std::vector<std::string> paths = gemm_kernels(), fused = testing::fused_kernel_paths();
  auto fuses = [&fused](const std::string& p) { return std::find(fused.begin(), fused.end(), p) != fused.end(); };
  const size_t ref = fused.empty() ? 0 : static_cast<size_t>(std::find(paths.begin(), paths.end(), fused[0]) - paths.begin());
  for (size_t i = 0; i < paths.size(); ++i) {
    if (i == ref) continue;
    CAPTURE(paths[i]);
    if (fuses(paths[i])) {
      CHECK(same_bits(per_path[ref], per_path[i]));
      continue;
    }
    REQUIRE(per_path[i].size() == per_path[ref].size());
    double worst = 0;
    for (size_t k = 0; k < per_path[ref].size(); ++k) {
      const double a = per_path[ref][k], b = per_path[i][k];
      worst = std::max(worst, std::fabs(a - b) / (1 + std::fabs(a)));
    }
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("for_isa runs its function once, in the copy of the path in use") {
  for (const std::string& path : gemm_kernels()) {
    CAPTURE(path);
    testing::UseKernel use(path);
    const KernelPath want = path == "avx512" ? KernelPath::avx512 : path == "avx2" ? KernelPath::avx2 : KernelPath::generic;
    REQUIRE(kernel_path() == want);
    int calls = 0;
    std::vector<real> v(37);
    for_isa([&] {
      ++calls;
      for (size_t i = 0; i < v.size(); ++i) v[i] = real(i) * real(0.5) + 1;
    });
    CHECK(calls == 1);
    CHECK(isa_detail::last_copy == want);
    for (size_t i = 0; i < v.size(); ++i) CHECK(v[i] == real(i) * real(0.5) + 1);
  }
}
