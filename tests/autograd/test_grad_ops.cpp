// tests/autograd/test_grad_ops.cpp - a gradcheck for every differentiable op.
//
// This file is compiled twice: against the float32 library (build/test_seqgrad) and against
// the float64 one (build/test_grad64), where the tolerances are tight enough that a backward
// off by 1% fails (the last test case proves that). Inputs include broadcasting in both
// directions, size-1 axes and non-square shapes.
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::positive;
using seqgrad::testing::randn_away_from_zero;
using Vars = std::vector<Variable>;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("grad float64");
#else
TEST_SUITE_BEGIN("grad float32");
#endif

// ================================================================================================
// Arithmetic, with broadcasting both ways

// [docs:broadcast_grad]
TEST_CASE("grad: add, sub, mul, div with broadcasting") {
  manual_seed(1);
  const Tensor a = randn({2, 3, 4}), row = randn({4}), col = randn({3, 1}), one = randn({1, 1, 1});
  for (const Tensor& b : {randn({2, 3, 4}), row, col, one}) {
    CAPTURE(to_string(b.shape()));
    CHECK_GRAD([](const Vars& v) { return v[0] + v[1]; }, {a, b});
    CHECK_GRAD([](const Vars& v) { return v[1] + v[0]; }, {a, b});  // broadcast on the left
    CHECK_GRAD([](const Vars& v) { return v[0] - v[1]; }, {a, b});
    CHECK_GRAD([](const Vars& v) { return v[1] - v[0]; }, {a, b});
    CHECK_GRAD([](const Vars& v) { return v[0] * v[1]; }, {a, b});
    CHECK_GRAD([](const Vars& v) { return v[1] * v[0]; }, {a, b});
    CHECK_GRAD([](const Vars& v) { return v[0] / v[1]; }, {a, positive(b.shape())});
    CHECK_GRAD([](const Vars& v) { return v[1] / v[0]; }, {positive(a.shape()), b});
  }
}
// [docs:end]

TEST_CASE("grad: both operands broadcast ((3, 1) with (1, 4))") {
  manual_seed(2);
  CHECK_GRAD([](const Vars& v) { return v[0] * v[1] + v[0]; }, {randn({3, 1}), randn({1, 4})});
}

TEST_CASE("grad: scalar arithmetic and neg") {
  manual_seed(3);
  const Tensor x = randn({3, 2});
  CHECK_GRAD([](const Vars& v) { return v[0] + real(2); }, {x});
  CHECK_GRAD([](const Vars& v) { return real(2) - v[0]; }, {x});
  CHECK_GRAD([](const Vars& v) { return v[0] * real(-3); }, {x});
  CHECK_GRAD([](const Vars& v) { return v[0] / real(4); }, {x});
  CHECK_GRAD([](const Vars& v) { return real(2) / v[0]; }, {positive({3, 2})});
  CHECK_GRAD([](const Vars& v) { return -v[0]; }, {x});
}

// ================================================================================================
// Elementwise functions

// [docs:elementwise]
TEST_CASE("grad: elementwise functions") {
  manual_seed(4);
  const Tensor x = randn_away_from_zero({3, 5});
  CHECK_GRAD([](const Vars& v) { return exp(v[0]); }, {x});
  CHECK_GRAD([](const Vars& v) { return log(v[0]); }, {positive({3, 5})});
  CHECK_GRAD([](const Vars& v) { return sqrt(v[0]); }, {positive({3, 5})});
  CHECK_GRAD([](const Vars& v) { return pow(v[0], real(3)); }, {x});
  CHECK_GRAD([](const Vars& v) { return pow(v[0], real(-1.5)); }, {positive({3, 5})});
  CHECK_GRAD([](const Vars& v) { return abs(v[0]); }, {x});
  CHECK_GRAD([](const Vars& v) { return tanh(v[0]); }, {x});
  CHECK_GRAD([](const Vars& v) { return sigmoid(v[0]); }, {x});
  CHECK_GRAD([](const Vars& v) { return relu(v[0]); }, {x});
  CHECK_GRAD([](const Vars& v) { return gelu(v[0]); }, {x});
}
// [docs:end]

// ================================================================================================
// Reductions

TEST_CASE("grad: sum and mean over all, one axis, several axes, keepdim") {
  manual_seed(5);
  const Tensor x = randn({2, 3, 4});
  CHECK_GRAD([](const Vars& v) { return sum(v[0]); }, {x});
  CHECK_GRAD([](const Vars& v) { return mean(v[0]); }, {x});
  for (bool keep : {false, true}) {
    CAPTURE(keep);
    for (int64_t axis : {0, 1, 2, -1}) {
      CAPTURE(axis);
      CHECK_GRAD([axis, keep](const Vars& v) { return sum(v[0], axis, keep); }, {x});
      CHECK_GRAD([axis, keep](const Vars& v) { return mean(v[0], axis, keep); }, {x});
    }
    CHECK_GRAD([keep](const Vars& v) { return sum(v[0], std::vector<int64_t>{0, 2}, keep); }, {x});
    CHECK_GRAD([keep](const Vars& v) { return mean(v[0], std::vector<int64_t>{-1, 0}, keep); }, {x});
  }
}

TEST_CASE("grad: max over an axis") {
  manual_seed(6);
  // Distinct values, well separated, so the argmax does not flip under the perturbation.
  const Tensor x = permute(arange(24).reshape({4, 3, 2}), {2, 0, 1}) * real(0.37);  // (2, 4, 3)
  for (int64_t axis : {0, 1, 2}) {
    CAPTURE(axis);
    CHECK_GRAD([axis](const Vars& v) { return max(v[0], axis); }, {x});
    CHECK_GRAD([axis](const Vars& v) { return max(v[0], axis, /*keepdim=*/true); }, {x});
  }
}

// ================================================================================================
// Shapes and indexing

TEST_CASE("grad: reshape, transpose, permute, squeeze, unsqueeze") {
  manual_seed(7);
  const Tensor x = randn({2, 3, 4});
  CHECK_GRAD([](const Vars& v) { return reshape(v[0], {4, -1}); }, {x});
  CHECK_GRAD([](const Vars& v) { return transpose(v[0], 0, 2); }, {x});
  CHECK_GRAD([](const Vars& v) { return transpose(v[0], -1, -2); }, {x});
  CHECK_GRAD([](const Vars& v) { return permute(v[0], {1, 2, 0}); }, {x});
  CHECK_GRAD([](const Vars& v) { return squeeze(unsqueeze(v[0], 1), 1) * unsqueeze(v[0], 0); }, {x});
}

TEST_CASE("grad: slice, narrow, concat, stack, split, chunk") {
  manual_seed(8);
  const Tensor x = randn({3, 5, 2}), y = randn({3, 2, 2});
  CHECK_GRAD([](const Vars& v) { return slice(v[0], 1, 1, 4); }, {x});
  CHECK_GRAD([](const Vars& v) { return slice(v[0], -2, -3, -1); }, {x});
  CHECK_GRAD([](const Vars& v) { return narrow(v[0], 0, 1, 2); }, {x});
  // Overlapping slices of one input, and the input used whole as well: the first gradient to
  // arrive makes the buffer, the others add to it
  CHECK_GRAD([](const Vars& v) { return slice(v[0], 1, 0, 3) * slice(v[0], 1, 2, 5); }, {x});
  CHECK_GRAD([](const Vars& v) { return sum(slice(v[0], 1, 1, 2)) * v[0] + slice(v[0], 1, 3, 4); }, {x});
  CHECK_GRAD([](const Vars& v) { return concat({v[0], v[1], v[0]}, 1); }, {x, y});
  CHECK_GRAD([](const Vars& v) { return stack({v[0], v[0] * v[0]}, 1); }, {y});
  CHECK_GRAD([](const Vars& v) { return stack({v[0], v[1]}, -1); }, {y, randn({3, 2, 2})});
  CHECK_GRAD([](const Vars& v) {
    std::vector<Variable> parts = split(v[0], {2, 3}, 1);
    return concat({parts[1], parts[0] * parts[0]}, 1);
  }, {x});
  CHECK_GRAD([](const Vars& v) {
    std::vector<Variable> parts = chunk(v[0], 3, 1);  // sizes 2, 2, 1
    return parts[0] * parts[1] + sum(parts[2]);
  }, {x});
  CHECK_GRAD([](const Vars& v) { return split(v[0], 2, 1)[2]; }, {x});  // unused pieces get no gradient
}

TEST_CASE("grad: index_select, embedding (repeated ids), gather, scatter_add (repeated places)") {
  manual_seed(9);
  const Tensor w = randn({5, 3});
  const Tensor idx = from_vector({4, 0, 4, 2});
  CHECK_GRAD([idx](const Vars& v) { return index_select(v[0], 0, idx); }, {w});
  CHECK_GRAD([idx](const Vars& v) { return index_select(v[0], 1, from_vector({2, 2, 0})); }, {w});
  const Tensor ids = from_vector({1, 3, 1, 0, 4, 1}, {2, 3});
  CHECK_GRAD([ids](const Vars& v) { return embedding(v[0], ids); }, {w});
  const Tensor g = from_vector({0, 2, 1, 1, 4, 3, 0, 0}, {2, 4});
  CHECK_GRAD([g](const Vars& v) { return gather(v[0], 1, g); }, {randn({2, 5})});
  // The same index spreads (2, 4) values over (2, 5); places 0 and 4 of row 1 receive two each.
  CHECK_GRAD([g](const Vars& v) { return scatter_add({2, 5}, 1, g, v[0]); }, {randn({2, 4})});
  CHECK_GRAD([](const Vars& v) { return scatter_add({4, 3}, 0, from_vector({3, 0, 3}, {1, 3}), v[0]); }, {randn({1, 3})});
  CHECK_THROWS_WITH_AS(scatter_add({2, 5}, 1, g, Variable(randn({2, 3}))),
                       "scatter_add: expected an index of src's shape [2, 3], got [2, 4]", std::invalid_argument);
}

TEST_CASE("grad: masked_fill and where, with broadcast masks") {
  manual_seed(10);
  const Tensor x = randn({2, 3, 4});
  const Tensor mask = from_vector({1, 0, 0, 1}, {4});  // broadcasts over (2, 3, 4)
  CHECK_GRAD([mask](const Vars& v) { return masked_fill(v[0], mask, real(-5)); }, {x});
  const Tensor cond = from_vector({1, 0, 1}, {3, 1});
  CHECK_GRAD([cond](const Vars& v) { return where(cond, v[0], v[1]); }, {x, randn({4})});
}

// ================================================================================================
// Neural-network primitives

TEST_CASE("grad: matmul 2-D, every transpose combination, non-square") {
  manual_seed(11);
  const int64_t M = 3, K = 4, N = 5;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      CAPTURE(ta);
      CAPTURE(tb);
      const Tensor a = ta ? randn({K, M}) : randn({M, K});
      const Tensor b = tb ? randn({N, K}) : randn({K, N});
      CHECK_GRAD([ta, tb](const Vars& v) { return matmul(v[0], v[1], ta, tb); }, {a, b});
    }
}

TEST_CASE("grad: linear (x W^T + b in one node), with and without bias, batch axes and residual") {
  manual_seed(13);
  CHECK_GRAD([](const Vars& v) { return linear(v[0], v[1], v[2]); }, {randn({3, 4}), randn({5, 4}), randn({5})});
  CHECK_GRAD([](const Vars& v) { return linear(v[0], v[1], v[2]); }, {randn({2, 3, 4}), randn({5, 4}), randn({5})});
  CHECK_GRAD([](const Vars& v) { return linear(v[0], v[1], Variable()); }, {randn({2, 3, 4}), randn({2, 4})});
  CHECK_GRAD([](const Vars& v) { return linear(v[0], v[1], v[2]); }, {randn({4}), randn({3, 4}), randn({3})});
  // With a residual (residual + x W^T + b), with and without the bias.
  CHECK_GRAD([](const Vars& v) { return linear(v[0], v[1], v[2], v[3]); },
             {randn({2, 3, 4}), randn({5, 4}), randn({5}), randn({2, 3, 5})});
  CHECK_GRAD([](const Vars& v) { return linear(v[0], v[1], Variable(), v[2]); }, {randn({3, 4}), randn({5, 4}), randn({3, 5})});
}

TEST_CASE("grad: batched matmul with broadcast batch axes") {
  manual_seed(12);
  CHECK_GRAD([](const Vars& v) { return matmul(v[0], v[1]); }, {randn({2, 3, 4}), randn({2, 4, 2})});
  CHECK_GRAD([](const Vars& v) { return matmul(v[0], v[1]); }, {randn({2, 3, 4}), randn({4, 2})});  // folded path
  CHECK_GRAD([](const Vars& v) { return matmul(v[0], v[1]); }, {randn({1, 3, 4}), randn({2, 4, 2})});
  CHECK_GRAD([](const Vars& v) { return matmul(v[0], v[1], false, true); }, {randn({2, 1, 3, 4}), randn({3, 2, 4})});
  CHECK_GRAD([](const Vars& v) { return matmul(v[0], v[1], true, false); }, {randn({2, 4, 3}), randn({4, 2})});
}

TEST_CASE("grad: operands used several times, each use's gradient added into the last (add_grad_into)") {
  manual_seed(14);
  // A recurrent weight: W and b at two steps and in a plain matmul; x feeds a linear and a matmul.
  CHECK_GRAD(
      [](const Vars& v) {
        const Variable h = tanh(linear(v[0], v[1], v[2]));                   // (3, 4)
        return linear(h, v[1], v[2]) + matmul(v[0], v[1], false, true) + h;  // W used three times
      },
      {randn({3, 4}), randn({4, 4}), randn({4})});
  // Attention over a memory (B, S, H) used for the scores and for the context, at two steps.
  CHECK_GRAD(
      [](const Vars& v) {
        Variable out = v[1];  // the query (B, 1, H)
        for (int step = 0; step < 2; ++step) {
          const Variable weights = softmax(matmul(out, v[0], false, true), -1);  // (B, 1, S)
          out = tanh(matmul(weights, v[0]) + out);                              // (B, 1, H)
        }
        return out;
      },
      {randn({2, 5, 3}), randn({2, 1, 3})});
}

TEST_CASE("grad: softmax and log_softmax on every axis") {
  manual_seed(13);
  const Tensor x = randn({2, 3, 4});
  for (int64_t axis : {0, 1, 2}) {
    CAPTURE(axis);
    CHECK_GRAD([axis](const Vars& v) { return softmax(v[0], axis); }, {x});
    CHECK_GRAD([axis](const Vars& v) { return log_softmax(v[0], axis); }, {x});
  }
}

TEST_CASE("grad: scaled_masked_softmax, with broadcast masks and a fully masked row") {
  manual_seed(14);
  const Tensor x = randn({2, 3, 4, 5});
  // Key padding (B, 1, 1, S): batch 1 masks its last two keys; causal (T, S) on a 4 x 5 grid;
  // and one mask with the whole of row (0, 0, 2) masked.
  const Tensor padding = from_vector({0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, {2, 1, 1, 5});
  Tensor causal = zeros({4, 5});
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t s = t + 2; s < 5; ++s) causal.data()[t * 5 + s] = 1;
  Tensor full_row = zeros({2, 3, 4, 5});
  for (int64_t s = 0; s < 5; ++s) full_row.data()[2 * 5 + s] = 1;
  for (const Tensor& mask : {Tensor(), padding, causal, full_row})
    for (real scale : {real(0.5), real(-2)}) {
      CAPTURE(mask.shape());
      CAPTURE(scale);
      CHECK_GRAD([mask, scale](const Vars& v) { return scaled_masked_softmax(v[0], mask, scale); }, {x});
    }
}

TEST_CASE("grad: cross_entropy with reductions, ignore_index, label smoothing") {
  manual_seed(14);
  const Tensor logits = randn({2, 3, 5});
  const Tensor targets = from_vector({4, 0, 2, 1, 0, 3}, {2, 3});
  const Tensor padded = from_vector({4, 0, 0, 1, 0, 0}, {2, 3});  // 0 = <pad>, ignored
  for (Reduction red : {Reduction::Mean, Reduction::Sum, Reduction::None})
    for (real eps : {real(0), real(0.1)}) {
      CAPTURE(static_cast<int>(red));
      CAPTURE(eps);
      CHECK_GRAD([&](const Vars& v) {
        return cross_entropy(v[0], targets, CrossEntropyOptions().with_reduction(red).with_label_smoothing(eps));
      }, {logits});
      CHECK_GRAD([&](const Vars& v) {
        return cross_entropy(v[0], padded,
                             CrossEntropyOptions().with_ignore_index(0).with_reduction(red).with_label_smoothing(eps));
      }, {logits});
    }
}

TEST_CASE("grad: dropout (the same mask in every evaluation)") {
  manual_seed(15);
  CHECK_GRAD([](const Vars& v) { return dropout(v[0], real(0.3), /*training=*/true); }, {randn({4, 6})});
  CHECK_GRAD([](const Vars& v) { return dropout(v[0], real(0.3), /*training=*/false); }, {randn({4, 6})});
}

TEST_CASE("grad: a composed expression (a tiny two-layer network)") {
  manual_seed(16);
  CHECK_GRAD([](const Vars& v) {
    Variable h = tanh(matmul(v[0], v[1]) + v[2]);  // (4, 3) @ (3, 5) + (5)
    return log_softmax(matmul(h, v[3]), -1);       // (4, 5) @ (5, 2)
  }, {randn({4, 3}), randn({3, 5}), randn({5}), randn({5, 2})});
}

// ================================================================================================
// gradcheck itself must be able to fail: a tanh whose backward is off by a small factor.

namespace {
Variable wrong_tanh(const Variable& x, real factor) {
  const Tensor y = tanh(x.value());
  return make_result("wrong_tanh", y, {x}, [y, factor](const Tensor& dout, Node& n) {
    n.add_grad(0, map2(y, dout, [factor](real yi, real g) { return factor * g * (1 - yi * yi); }));
  });
}

Variable wrong_mul(const Variable& a, const Variable& b) {
  const Tensor av = a.value(), bv = b.value();
  return make_result("wrong_mul", av * bv, {a, b}, [av, bv](const Tensor& dout, Node& n) {
    n.add_grad(0, dout * av);  // wrong: should be dout * b
    n.add_grad(1, dout * av);
  });
}
}  // namespace

TEST_CASE("gradcheck catches a deliberately wrong backward") {
  manual_seed(17);
  const Tensor x = randn({3, 4});
  // float64 catches a 1% error; float32's looser tolerances still catch 10%.
  const real off = sizeof(real) == 8 ? real(1.01) : real(1.10);
  CHECK_FALSE(gradcheck([off](const Vars& v) { return wrong_tanh(v[0], off); }, {x}).ok);
  CHECK(gradcheck([](const Vars& v) { return wrong_tanh(v[0], 1); }, {x}).ok);
  // A classic slip: mul's backward with the operands swapped (da = dout * a instead of b).
  CHECK_FALSE(gradcheck([](const Vars& v) { return wrong_mul(v[0], v[1]); }, {x, randn({3, 4})}).ok);
}

TEST_SUITE_END();
