// tests/nn/test_fused.cpp - each fused op gives what its composed definition gives: the same
// values and the same gradients, up to rounding; and its errors name what was expected.
#include "nn/attention/attention.h"
#include "nn/core/layernorm.h"
#include "nn/transformer/multihead_attention.h"
#include "nn/core/linear.h"
#include "nn/recurrent/lstm.h"
#include "tests/test_util.h"

using namespace seqgrad;
using seqgrad::testing::allclose;
using seqgrad::testing::ThreadCount;

namespace {

// Runs f on fresh leaves made from `values`, backpropagates sum(out * probe), and returns the
// output followed by the gradient of every input.
std::vector<Tensor> value_and_grads(const std::function<Variable(const std::vector<Variable>&)>& f,
                                    const std::vector<Tensor>& values, const Tensor& probe) {
  std::vector<Variable> leaves;
  for (const Tensor& t : values) leaves.emplace_back(t.clone(), true);
  Variable out = f(leaves);
  sum(out * Variable(probe)).backward();
  std::vector<Tensor> r{out.value()};
  for (const Variable& v : leaves) r.push_back(v.grad());
  return r;
}

void check_same(const std::vector<Tensor>& fused, const std::vector<Tensor>& composed, double tol) {
  REQUIRE(fused.size() == composed.size());
  for (size_t i = 0; i < fused.size(); ++i) {
    CAPTURE(i);  // 0 = the output, then the gradient of each input
    CHECK(allclose(fused[i], composed[i], tol, tol));
  }
}

}  // namespace

TEST_CASE("fused layer_norm equals layer_norm_composed: values and gradients, affine or not") {
  manual_seed(5);
  for (real scale : {real(1), real(100)}) {  // large offsets too: the two-pass variance stays exact
    CAPTURE(scale);
    const Tensor x = randn({4, 7, 32}) * scale + scale, w = randn({32}), b = randn({32}), probe = randn({4, 7, 32});
    auto fused = [](const std::vector<Variable>& v) { return layer_norm(v[0], v[1], v[2], real(1e-5)); };
    auto composed = [](const std::vector<Variable>& v) { return nn::layer_norm_composed(v[0], v[1], v[2], real(1e-5)); };
    check_same(value_and_grads(fused, {x, w, b}, probe), value_and_grads(composed, {x, w, b}, probe), 1e-4);
    auto fused_plain = [](const std::vector<Variable>& v) { return layer_norm(v[0], Variable(), Variable(), real(1e-5)); };
    auto composed_plain = [](const std::vector<Variable>& v) {
      return nn::layer_norm_composed(v[0], Variable(), Variable(), real(1e-5));
    };
    check_same(value_and_grads(fused_plain, {x}, probe), value_and_grads(composed_plain, {x}, probe), 1e-4);
  }
}

TEST_CASE("nn::LayerNorm runs the fused op and matches the composed definition") {
  manual_seed(6);
  nn::LayerNorm norm(16);
  norm.weight.value() = randn({16});
  norm.bias.value() = randn({16});
  const Tensor x = randn({3, 16});
  Variable y = norm.forward(Variable(x));
  CHECK(y.op() == "layer_norm");
  CHECK(allclose(y.value(), nn::layer_norm_composed(Variable(x), norm.weight, norm.bias, norm.eps).value()));
}

TEST_CASE("fused LSTMCell::step equals LSTMCell::equations: h, c and every gradient") {
  manual_seed(7);
  const int64_t B = 5, C = 6, H = 9;
  const Tensor x = randn({B, C}), h = randn({B, H}), c = randn({B, H}) * real(2);
  const Tensor w_ih = randn({4 * H, C}), w_hh = randn({4 * H, H}), b_hh = randn({4 * H});
  const Tensor probe = randn({B, 2 * H});
  auto step = [&](bool fused) {
    return [fused](const std::vector<Variable>& v) {
      const Variable gx = matmul(v[0], v[3], false, true);
      const nn::RNNState s{v[1], v[2]};
      const nn::RNNState next =
          fused ? nn::LSTMCell::step(gx, s, v[4], v[5]) : nn::LSTMCell::equations(gx, s, v[4], v[5]);
      return concat({next.h, next.c}, 1);
    };
  };
  check_same(value_and_grads(step(true), {x, h, c, w_ih, w_hh, b_hh}, probe),
             value_and_grads(step(false), {x, h, c, w_ih, w_hh, b_hh}, probe), 1e-5);
}

TEST_CASE("fused ops name the shapes they expected") {
  CHECK_THROWS_WITH_AS(lstm_cell(Variable(zeros({3, 5})), Variable(zeros({3, 1}))),
                       "lstm_cell: expected gates of shape (B, 4H), got [3, 5]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(lstm_cell(Variable(zeros({3, 8})), Variable(zeros({2, 2}))),
                       "lstm_cell: expected a cell state of shape [3, 2], got [2, 2]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(layer_norm(Variable(zeros({2, 4})), Variable(zeros({3})), Variable(), real(1e-5)),
                       "layer_norm: expected weight of shape [4], got [3]", std::invalid_argument);
  CHECK_THROWS_WITH_AS(layer_norm(Variable(zeros({2, 4})), Variable(), Variable(zeros({4, 1})), real(1e-5)),
                       "layer_norm: expected bias of shape [4], got [4, 1]", std::invalid_argument);
}

TEST_CASE("linear equals matmul then add: values and gradients; nn::Linear runs it") {
  manual_seed(8);
  const Tensor x = randn({4, 7, 32}), w = randn({24, 32}), b = randn({24}), probe = randn({4, 7, 24});
  auto fused = [](const std::vector<Variable>& v) { return linear(v[0], v[1], v[2]); };
  auto composed = [](const std::vector<Variable>& v) { return matmul(v[0], v[1], false, true) + v[2]; };
  check_same(value_and_grads(fused, {x, w, b}, probe), value_and_grads(composed, {x, w, b}, probe), 1e-4);
  nn::Linear layer(32, 24);
  CHECK(layer.forward(Variable(x)).op() == "linear");
}

TEST_CASE("linear with a residual equals residual + linear: values and gradients, bit for bit; RNN gates use it") {
  manual_seed(10);
  // An LSTM step's shapes, (B, H) @ (4H, H)^T, and a batched one; in <= 256, so no rounding moves.
  for (const Shape& xs : {Shape{64, 128}, Shape{3, 5, 16}}) {
    CAPTURE(xs);
    const int64_t in = xs.back(), out = 4 * in;
    Shape ys = xs;
    ys.back() = out;
    const Tensor x = randn(xs), w = randn({out, in}), b = randn({out}), r = randn(ys), probe = randn(ys);
    auto fused = [](const std::vector<Variable>& v) { return linear(v[0], v[1], v[2], v[3]); };
    auto composed = [](const std::vector<Variable>& v) { return v[3] + linear(v[0], v[1], v[2]); };
    for (int t : {1, 2}) {
      CAPTURE(t);
      ThreadCount threads(t);
      check_same(value_and_grads(fused, {x, w, b, r}, probe), value_and_grads(composed, {x, w, b, r}, probe), 0);
    }
  }
  // Without a bias too; and the message for a residual of the wrong shape.
  const Tensor x = randn({3, 4}), w = randn({5, 4}), r = randn({3, 5});
  CHECK(linear(x, w, Tensor(), r).to_vector() == (r + linear(x, w, Tensor())).to_vector());
  CHECK_THROWS_WITH_AS(linear(x, w, Tensor(), zeros({5, 3})),
                       "linear: expected a residual of the output's shape [3, 5], got [5, 3]", std::invalid_argument);
  // An LSTM cell's step is one linear node on top of the input's contribution, itself one
  // linear node (x W_ih^T + b_ih, no separate bias add): inputs h, W_hh, b_hh, gx.
  nn::LSTMCell cell(4, 6);
  const nn::RNNState s = cell.forward(Variable(randn({2, 4})), nn::RNNState{});
  const Edge gates = s.h.node()->inputs[0].node()->inputs[0];  // the graph keeps Edges, not values
  CHECK(gates.op() == "linear");
  REQUIRE(gates.node()->inputs.size() == 4);
  CHECK(gates.node()->inputs[3].op() == "linear");
}

TEST_CASE("ReusePackedWeights: a recurrence with its weights packed once has the bits of one without, values and gradients") {
  manual_seed(12);
  // h_{t+1} = tanh(gx_t + h_t W^T + b) for 6 steps, and a second weight used at every step;
  // the LSTM's (B, H) = (64, 128) with 4H outputs folded to H by a second product.
  const int64_t B = 64, H = 128, T = 6;
  const Tensor h0 = randn({B, H}), w = randn({4 * H, H}), v = randn({H, 4 * H}), b = randn({4 * H}),
               gx = randn({T, B, 4 * H}), probe = randn({B, H});
  auto recurrence = [&](bool reuse) {
    return [reuse, &gx](const std::vector<Variable>& p) {
      std::unique_ptr<ReusePackedWeights> scope;
      if (reuse) scope = std::make_unique<ReusePackedWeights>(std::vector<Variable>{p[1], p[2]});
      Variable h = p[0];
      for (int64_t t = 0; t < T; ++t)
        h = tanh(linear(tanh(linear(h, p[1], p[3], Variable(slice(gx, 0, t, t + 1).reshape({B, 4 * H})))), p[2], Variable()));
      return h;
    };
  };
  for (const std::string& path : gemm_kernels())
    for (int threads : {1, 2}) {
      CAPTURE(path);
      CAPTURE(threads);
      testing::UseKernel use(path);
      ThreadCount count(threads);
      check_same(value_and_grads(recurrence(true), {h0, w, v, b}, probe),
                 value_and_grads(recurrence(false), {h0, w, v, b}, probe), 0);
    }
  // A scope finds only its own weights, by storage, and only while it lives; scopes nest.
  const Variable a(randn({3, 4})), other(a.value().clone());
  CHECK_FALSE(ReusePackedWeights::find(a.value()));
  {
    const ReusePackedWeights outer({a});
    CHECK(ReusePackedWeights::find(a.value()));
    CHECK_FALSE(ReusePackedWeights::find(other.value()));  // equal numbers, another tensor
    {
      const ReusePackedWeights inner({other});
      CHECK(ReusePackedWeights::find(a.value()));
      CHECK(ReusePackedWeights::find(other.value()));
    }
    CHECK_FALSE(ReusePackedWeights::find(other.value()));
  }
  CHECK_FALSE(ReusePackedWeights::find(a.value()));
  // Inside a scope linear() multiplies by the pack: a weight changed after its first use (which
  // the scope's contract forbids) shows it, as the old product.
  const Variable x(randn({64, 300})), weight(randn({8, 300}));
  const ReusePackedWeights scope({weight});
  const std::vector<real> first = linear(x, weight, Variable()).value().to_vector();
  Tensor stored = weight.value();
  stored.fill_(0);
  CHECK(linear(x, weight, Variable()).value().to_vector() == first);
}

TEST_CASE("scaled_masked_softmax equals masked_softmax of the scaled scores: values and gradients, bit for bit") {
  manual_seed(9);
  const Tensor x = randn({3, 4, 6, 6}), probe = randn({3, 4, 6, 6});
  const real scale = 1 / std::sqrt(real(8));
  Tensor padding = zeros({3, 1, 1, 6});
  padding.data()[2 * 6 + 5] = 1;  // batch 2's last key
  Tensor both = maximum(padding, nn::causal_mask(6));
  for (int64_t s = 0; s < 6; ++s) both.data()[(1 * 6 + 3) * 6 + s] = 1;  // batch 1, query 3: nothing left
  for (const Tensor& mask : {Tensor(), nn::causal_mask(6), padding, both}) {
    CAPTURE(mask.shape());
    auto fused = [mask, scale](const std::vector<Variable>& v) { return scaled_masked_softmax(v[0], mask, scale); };
    auto composed = [mask, scale](const std::vector<Variable>& v) { return nn::masked_softmax(v[0] * scale, mask); };
    check_same(value_and_grads(fused, {x}, probe), value_and_grads(composed, {x}, probe), 0);
  }
}

TEST_CASE("scaled dot-product attention and multi-head attention run the fused softmax") {
  manual_seed(10);
  const Variable q(randn({2, 3, 4}), true), k(randn({2, 5, 4}), true), v(randn({2, 5, 4}), true);
  CHECK(nn::scaled_dot_product_attention(q, k, v).weights.op() == "scaled_masked_softmax");
  CHECK(nn::scaled_dot_product_attention(q, k, v, nn::padding_mask({5, 3}, 5).reshape({2, 1, 5})).weights.op() ==
        "scaled_masked_softmax");
  for (real p : {real(0), real(0.2)}) {  // without dropout and with it
    CAPTURE(p);
    nn::MultiHeadAttention mha(8, 2, p);
    const Variable x(randn({2, 5, 8}), true);
    CHECK(mha.forward(x, x, x, Tensor(), nn::causal_mask(5), /*need_weights=*/true).weights.op() ==
          "scaled_masked_softmax");
  }
}
